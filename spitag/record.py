"""What one response, or one failed request, becomes: a PageItem.

Every requested URL yields exactly one item — pages, redirects, HTTP errors, non-HTML
bodies and failures alike — so the URL table and the JSON lines account for every
request. Nothing here raises on a broken page: the profile isolates each syntax.
"""

from __future__ import annotations

import logging
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, Callable

from scrapy.http import TextResponse

from spitag import meta
from spitag.digest import md5_hex, md5dia_hex
from spitag.encoding import decode_text
from spitag.extract import Profile, empty_profile
from spitag.items import PageItem
from spitag.profile_worker import ProfileJob
from spitag.recrawl import iso
from spitag.urls import try_normalize

if TYPE_CHECKING:
    from scrapy.http import Request, Response
    from twisted.python.failure import Failure

logger = logging.getLogger(__name__)

HTML_TYPES = ("text/html", "application/xhtml+xml")
VAGUE_TYPES = ("", "application/octet-stream", "text/plain")  # may be HTML: Scrapy sniffs the body
SITEMAP_TYPES = ("application/xml", "text/xml", "application/gzip", "application/x-gzip")


def worth_its_body(content_type: str, sitemaps: bool) -> bool:
    """Whether a download of this ``Content-Type`` (no parameters) may hold what the
    crawl reads: HTML, a type that may be HTML, or a sitemap when the crawl reads them.
    Any other body (an archive, an image, a PDF) is not downloaded: its headers say
    enough for its URL row."""
    return content_type in HTML_TYPES or content_type in VAGUE_TYPES or (sitemaps and content_type in SITEMAP_TYPES)


def now_iso() -> str:
    """UTC now, ISO 8601 with milliseconds and a Z."""
    return iso(datetime.now(timezone.utc))


def content_type_of(response: Response) -> str:
    return media_type(response.headers)


def media_type(headers: Any) -> str:
    """The ``Content-Type`` of ``headers`` without its parameters, lower case ("" if none)."""
    raw = headers.get(b"Content-Type") or b""
    return raw.decode("latin-1").split(";", 1)[0].strip().lower()


def is_html(response: Response, content_type: str) -> bool:
    if content_type in HTML_TYPES:
        return True
    # No or a vague type: Scrapy sniffed the body (HtmlResponse), trust that.
    return content_type in VAGUE_TYPES and (
        type(response).__name__ == "HtmlResponse"
    )


def base_item(request: Request, crawl: str, strategy: str = "") -> PageItem:
    """The fields every item carries, from the request (``spitag.meta``)."""
    return PageItem(
        crawl=crawl,
        **meta.page_fields(request, strategy),
        fetched_at=now_iso(),
        status=None,
        error=None,
        content_type=None,
        encoding=None,
        size=0,
        truncated=False,
        md5=None,
        md5dia=None,
        title=None,
        semantic=dict(empty_profile().counts),
        score=0.0,
        data={},
        outlinks=0,
        links=[],
        redirect_to=None,
        canonical=None,
        expires=None,
        revisit_interval=None,
        changed=None,
        etag=None,
        last_modified=None,
        robots=None,
    )


def robots_directives(response: Response, profile: Profile | None) -> set[str]:
    """noindex / nofollow / none… from ``<meta name="robots">`` and ``X-Robots-Tag``."""
    values = [v.decode("latin-1") for v in response.headers.getlist(b"X-Robots-Tag")]
    if profile is not None and profile.robots:
        values.append(profile.robots)
    directives: set[str] = set()
    for value in values:
        for token in value.lower().replace(";", ",").split(","):
            token = token.strip().rsplit(":", 1)[-1].strip()  # "googlebot: noindex" → noindex
            if token == "none":
                directives |= {"noindex", "nofollow"}
            elif token:
                directives.add(token)
    return directives


def response_item(
    response: Response,
    crawl: str,
    *,
    keep_data: bool,
    max_page_size: int,
    max_links: int,
    follow_nofollow: bool = False,
    normalize: Callable[[str], str | None] = try_normalize,
    extract_budget: float | None = None,
    profiled: Profile | None = None,
    strategy: str = "",
) -> tuple[PageItem, Profile | None]:
    """The item of a response of any status and type, and its profile if it is HTML.

    ``profiled``: the profile of ``profile_job(...)``, computed elsewhere (a worker
    process, ``spitag.offload``); without it an HTML page is profiled here.

    ``links`` are the page's outlinks, normalized, each once; without
    ``follow_nofollow`` links marked ``rel="nofollow"`` are left out, and a page whose
    robots directives say ``nofollow`` gives none. ``noindex`` keeps the URL row but
    not the page's body or extracted data.
    """
    item = base_item(response.request, crawl, strategy)
    body = response.body
    content_type = content_type_of(response)
    if response.meta.get(meta.HEADERS_ONLY):  # not HTML: its headers, no body, so no page
        length = response.headers.get(b"Content-Length")
        item.update(status=response.status, content_type=content_type or None,
                    size=int(length) if length and length.isdigit() else None)
        if 300 <= response.status < 400 and b"Location" in response.headers:
            item["redirect_to"] = normalize(response.urljoin(response.headers[b"Location"].decode("latin-1")))
        return item, None
    item.update(
        status=response.status,
        content_type=content_type or None,
        size=len(body),
        md5=md5_hex(body),
    )
    profile: Profile | None = None
    if isinstance(response, TextResponse):
        decoded, encoding = decode_text(response)
        item["encoding"] = encoding
        if is_html(response, content_type) and 200 <= response.status < 300:
            profile = profiled or ProfileJob(
                body, response.url, encoding, keep_data, max_page_size, extract_budget
            ).run()
            item["truncated"] = len(body) > max_page_size or "download_stopped" in response.flags
            text = profile.text
        else:
            text = decoded
        item["md5dia"] = profile.md5dia if profile is not None and profile.md5dia else md5dia_hex(text)
        item["body"] = decoded
    else:
        item["md5dia"] = item["md5"]  # binary: no text, so no accent-free copy either
        item["body"] = body
    if 300 <= response.status < 400 and b"Location" in response.headers:
        location = response.headers[b"Location"].decode("latin-1")
        item["redirect_to"] = normalize(response.urljoin(location))
    directives = robots_directives(response, profile)
    item["robots"] = sorted(directives & {"noindex", "nofollow"}) or None
    if profile is not None:
        if profile.normalized:  # by the ProfileJob
            normalize = _as_is
        links = _distinct_links(profile, normalize, follow_nofollow)
        item.update(
            title=profile.title,
            semantic=profile.counts,
            incomplete=profile.incomplete or None,
            data=profile.data if keep_data and "noindex" not in directives else {},
            outlinks=len(links),
            links=[] if "nofollow" in directives else links[:max_links],
            canonical=normalize(profile.canonical) if profile.canonical else None,
        )
        if profile.refresh and not item["redirect_to"]:
            item["redirect_to"] = normalize(profile.refresh)
    if "noindex" in directives:
        item["body"] = None
    return item, profile


def profile_job(
    response: Response,
    *,
    keep_data: bool,
    max_page_size: int,
    extract_budget: float | None = None,
    max_memory: int | None = None,
    drop_params: frozenset[str] | None = None,
) -> ProfileJob | None:
    """The profiling ``response_item`` would do for this response, or None when it
    profiles nothing (not a 2xx HTML page). ``drop_params``, ``max_memory``: see ProfileJob."""
    if not isinstance(response, TextResponse) or not 200 <= response.status < 300:
        return None
    if not is_html(response, content_type_of(response)):
        return None
    _, encoding = decode_text(response)
    body = response.body[:max_page_size]  # all profile_html reads: less to send
    return ProfileJob(body, response.url, encoding, keep_data, max_page_size, extract_budget, drop_params, max_memory)


def _as_is(url: str) -> str:
    return url


def _distinct_links(
    profile: Profile, normalize: Callable[[str], str | None], follow_nofollow: bool
) -> list[str]:
    """The page's http(s) links, normalized, each once, in document order."""
    seen: dict[str, None] = {}
    for href, rel in profile.links:
        if not follow_nofollow and "nofollow" in rel.split():
            continue
        url = normalize(href)
        if url is not None:
            seen.setdefault(url, None)
    if profile.refresh:
        url = normalize(profile.refresh)
        if url is not None:
            seen.setdefault(url, None)
    return list(seen)


def failure_item(request: Request, failure: Failure, crawl: str, strategy: str = "") -> PageItem:
    """The item of a request that got no usable response (after retries)."""
    item = base_item(request, crawl, strategy)
    item["error"] = failure_reason(failure)
    return item


def failure_reason(failure: Failure) -> str:
    """A short, stable reason: the exception's class and its first line."""
    exc: Any = failure.value
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"{type(exc).__name__}: {text}"[:500] if text else type(exc).__name__
