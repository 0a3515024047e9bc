"""URL normalization and the crawl's scope.

Normalization makes one spelling per page so that the frontier and the store never
hold a page twice: w3lib's ``canonicalize_url`` (percent-encoding, sorted query,
dot segments, fragments dropped, IDN to punycode) plus what it leaves out: scheme and
host lower-cased, default ports dropped, an empty path written ``/``.

Scope keeps a crawl where its seeds are. The registered domain comes from tldextract's
bundled public-suffix snapshot: it never downloads a list (no network at run time).
"""

from __future__ import annotations

import ipaddress
import re
from functools import lru_cache, partial
from typing import Any, Callable
from urllib.parse import urlsplit, urlunsplit

import tldextract
from w3lib.url import canonicalize_url

ALLOWED_SCHEMES = ("http", "https")
DEFAULT_PORTS = {"http": 80, "https": 443}
SCOPES = ("domain", "host", "any")

# suffix_list_urls=() and cache_dir=None: the bundled snapshot, no fetch, no cache files.
_extract = tldextract.TLDExtract(suffix_list_urls=(), cache_dir=None)


class BadURLError(ValueError):
    """The text is not an absolute http(s) URL SpiTag can crawl."""


# Query parameters that carry a session, not a page (``SPITAG_SESSION_PARAMS``).
SESSION_PARAMS = frozenset(
    {"jsessionid", "phpsessid", "aspsessionid", "sid", "sessionid", "session_id", "cfid", "cftoken", "zenid"}
)
_PATH_SESSION = re.compile(r";(?:jsessionid|phpsessid|sessionid|sid)=[^/?#]*", re.I)


_LABEL = r"[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?"
# A URL canonicalize_url leaves as it is: lower-case scheme and host (LDH labels, so
# IDNA has nothing to do), no query, no path parameters or dot segments, nothing to
# escape or unescape.
# Equality with the full path is tested on every link of the corpus (tests/test_urls.py).
_PLAIN_URL = re.compile(
    rf"(https?)://((?:{_LABEL}\.)*{_LABEL})(?::(\d{{1,5}}))?(/[A-Za-z0-9\-._~/!$'()*+,=:@]*)?\Z"
)


def normalize_url(url: str, drop_params: frozenset[str] = SESSION_PARAMS) -> str:
    """Return the one spelling SpiTag uses for ``url``; raise BadURLError if unusable.

    Session ids are removed — query parameters named in ``drop_params`` (matched
    case-insensitively) and ``;jsessionid=…``-style path parameters — so that one
    page is never queued twice under two spellings.
    """
    text = url.strip()
    plain = _PLAIN_URL.match(text)
    if plain:  # most links: already in the one spelling but for the port
        scheme, host, port, path = plain.groups()
        number = int(port) if port else None
        if (number is None or 0 < number < 65536) and (not path or "/." not in path):  # dot segments
            netloc = host if number in (None, DEFAULT_PORTS[scheme]) else f"{host}:{number}"
            return f"{scheme}://{netloc}{path or '/'}"
    try:
        parts = urlsplit(text)
        scheme = parts.scheme.lower()
        if scheme not in ALLOWED_SCHEMES:
            raise BadURLError(f"not an http(s) URL: {url!r}")
        host = (parts.hostname or "").rstrip(".")
        if not host:
            raise BadURLError(f"no host in URL: {url!r}")
        port = parts.port  # raises ValueError on a bad port
        if port == 0:
            raise BadURLError(f"port 0 in URL: {url!r}")
    except ValueError as exc:
        if isinstance(exc, BadURLError):
            raise
        raise BadURLError(f"unparsable URL {url!r}: {exc}") from None
    try:
        canonical = canonicalize_url(text)
    except (ValueError, UnicodeError) as exc:
        raise BadURLError(f"unparsable URL {url!r}: {exc}") from None
    parts = urlsplit(canonical)
    path, query = parts.path, parts.query
    if ";" in path:
        path = _PATH_SESSION.sub("", path)
    if query and drop_params:
        kept = [p for p in query.split("&") if p.split("=", 1)[0].lower() not in drop_params]
        query = "&".join(kept)
    host = (parts.hostname or "").rstrip(".").lower()
    if ":" in host:  # IPv6 literal
        host = f"[{host}]"
    netloc = host if port in (None, DEFAULT_PORTS[scheme]) else f"{host}:{port}"
    return urlunsplit((scheme, netloc, path or "/", query, ""))


def try_normalize(url: str, drop_params: frozenset[str] = SESSION_PARAMS) -> str | None:
    """normalize_url, or None for a URL not worth crawling (links on pages are untrusted)."""
    try:
        return normalize_url(url, drop_params)
    except BadURLError:
        return None


NORMALIZE_CACHE = 20_000  # normalized links remembered per process (about 5 MB at most)


@lru_cache(maxsize=4)
def cached_normalizer(drop_params: frozenset[str] = SESSION_PARAMS) -> Callable[[str], str | None]:
    """``try_normalize`` with these ``drop_params``, remembering its last answers: it
    is pure, and menus and footers repeat the same links on every page of a site."""
    return lru_cache(maxsize=NORMALIZE_CACHE)(partial(try_normalize, drop_params=drop_params))


_PLAIN_HOST = re.compile(r"https?://([a-z0-9.-]+)(?::\d+)?/")


def host_of(url: str) -> str:
    """Lower-case host name of a normalized URL (no port). Called for every link (scope,
    filters, frontier, scoring): the usual shape is read without urlsplit."""
    plain = _PLAIN_HOST.match(url)
    if plain:
        return plain.group(1)
    return (urlsplit(url).hostname or "").lower()


@lru_cache(maxsize=65536)
def split_host(host: str) -> tuple[str, str, str]:
    """(subdomain, domain label, public suffix) of a host name, from the bundled public
    suffix list (``blog.bbc.co.uk`` → ``("blog", "bbc", "co.uk")``); an IP address is
    ``("", ip, "")``."""
    host = host.strip("[]").lower()
    try:
        ipaddress.ip_address(host)
        return "", host, ""
    except ValueError:
        pass
    parts = _extract(host)
    return parts.subdomain, parts.domain, parts.suffix


@lru_cache(maxsize=65536)
def registered_domain(host: str) -> str:
    """The domain a registrant owns (``www.bbc.co.uk`` → ``bbc.co.uk``); an IP stays itself."""
    _, domain, suffix = split_host(host)
    host = host.strip("[]").lower()
    if domain and suffix:
        return f"{domain}.{suffix}"
    if domain == host:  # an IP address, or a single label ("localhost")
        return host
    labels = host.split(".")
    if not suffix and len(labels) >= 2:
        # A top-level name the public-suffix list does not know (.test, .internal):
        # treat it like a TLD, so www.site.test and news.site.test share site.test.
        return ".".join(labels[-2:])
    return host  # a bare suffix or a single label ("localhost"): the host itself


class Scope:
    """Which URLs a crawl may follow, from its seeds and ``SPITAG_SCOPE``.

    * ``domain`` (default): the registered domains of the seeds, subdomains included;
    * ``host``: exactly the seeds' host names;
    * ``any``: every http(s) URL.
    """

    def __init__(self, mode: str, seeds: list[str]) -> None:
        if mode not in SCOPES:
            raise ValueError(f"SPITAG_SCOPE must be one of {', '.join(SCOPES)}, not {mode!r}")
        self.mode = mode
        self.hosts = frozenset(host_of(u) for u in seeds)
        self.domains = frozenset(registered_domain(h) for h in self.hosts)

    def add_seed(self, url: str) -> None:
        """Widen the scope to a seed injected later."""
        host = host_of(url)
        self.hosts = self.hosts | {host}
        self.domains = self.domains | {registered_domain(host)}

    def allows(self, url: str) -> bool:
        """True when a normalized URL is inside the crawl's scope."""
        if self.mode == "any":
            return True
        host = host_of(url)
        if self.mode == "host":
            return host in self.hosts
        return host in self.hosts or registered_domain(host) in self.domains



_CREDENTIALS = re.compile(r"(?P<scheme>[a-z][a-z0-9+.-]*://)(?P<user>[^:/@\s'\"]*):[^@/\s'\"]*@", re.I)


def redact(text: str) -> str:
    """A backend URL, or any message holding one, fit for logs: passwords become ``***``."""
    return _CREDENTIALS.sub(r"\g<scheme>\g<user>:***@", text)


def session_params_setting(name: str, value: Any, _: Any = None) -> frozenset[str]:
    """``SPITAG_SESSION_PARAMS`` (names of query parameters dropped as session ids);
    unset: ``SESSION_PARAMS``."""
    if value is None:
        return SESSION_PARAMS
    names = value.split(",") if isinstance(value, str) else list(value)
    return frozenset(str(n).strip().lower() for n in names if str(n).strip())
