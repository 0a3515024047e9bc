"""The shared test corpus, made servable by testbed.webserver.

Two archives: ``flink.apache.org.tar.gz`` (a whole static site) and
``real-pages.tar.gz`` (``pages/`` with 600 saved pages and ``manifest.jsonl`` lines
``{"file", "url", "bytes"}``). Real pages are served under their original host and
path through the proxy, so a crawl sees the URLs the pages were saved from.
"""

from __future__ import annotations

import html
import json
import logging
import os
import random
import re
import tarfile
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Mapping, Sequence, Union
from urllib.parse import urlsplit

from w3lib.url import safe_url_string

from testbed.webserver import HTML_UTF8, DictSite, DirectorySite, Response, https_rewriter

logger = logging.getLogger(__name__)

FLINK_HOST = "flink.apache.org"
FLINK_ARCHIVE = "flink.apache.org.tar.gz"
PAGES_ARCHIVE = "real-pages.tar.gz"
MANIFEST = "manifest.jsonl"

# A link target: an index into the pages list, or a URL used verbatim.
LinkTarget = Union[int, str]

__all__ = [
    "FLINK_ARCHIVE",
    "FLINK_HOST",
    "PAGES_ARCHIVE",
    "RealPage",
    "flink_site",
    "real_pages",
    "real_pages_site",
    "ring_links",
    "unpack",
]


def unpack(tar_path: str | os.PathLike[str], dest: str | os.PathLike[str]) -> Path:
    """Extract ``tar_path`` into ``dest``; return the archive's single top-level
    folder (``dest/pages``, ``dest/flink.apache.org``), or ``dest`` if it has several."""
    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    with tarfile.open(tar_path) as archive:
        tops = {Path(m.name).parts[0] for m in archive.getmembers() if Path(m.name).parts}
        archive.extractall(dest, filter="data")
    tops.discard(".")
    if len(tops) == 1:
        top = dest / tops.pop()
        if top.is_dir():
            return top
    return dest


def flink_site(unpacked_root: str | os.PathLike[str]) -> DirectorySite:
    """The flink.apache.org site, its ``https://flink.apache.org`` links made http.

    ``unpacked_root`` is the site folder or the folder holding ``flink.apache.org/``.
    """
    root = Path(unpacked_root)
    if not (root / "index.html").exists() and (root / FLINK_HOST).is_dir():
        root = root / FLINK_HOST
    return DirectorySite(root, rewrite_hosts=[FLINK_HOST])


@dataclass(frozen=True)
class RealPage:
    """A saved page and where it came from. ``url`` is the manifest's, as saved;
    ``path`` is its path and query as a crawler sends them (trimmed, percent-encoded)."""

    file: Path
    url: str
    host: str
    path: str

    @property
    def served_url(self) -> str:
        """Where the test server serves it: always http, through the proxy."""
        return f"http://{self.host}{self.path}"

    def read(self) -> bytes:
        return self.file.read_bytes()


def real_pages(pages_dir: str | os.PathLike[str], n: int | None = None, seed: int = 0) -> list[RealPage]:
    """Pages of ``manifest.jsonl`` whose url is http(s), in manifest order.

    With ``n``, a sample of n of them chosen by ``random.Random(seed)`` (still in
    manifest order), so a test sees the same pages on every run.
    """
    folder = Path(pages_dir)
    if not (folder / MANIFEST).exists() and (folder / "pages" / MANIFEST).exists():
        folder = folder / "pages"
    pages: list[RealPage] = []
    with open(folder / MANIFEST, encoding="utf-8") as lines:
        for line in lines:
            if not line.strip():
                continue
            row = json.loads(line)
            # As a crawler would request it: whitespace trimmed, percent-encoded.
            parts = urlsplit(safe_url_string(row["url"]))
            if parts.scheme not in ("http", "https") or not parts.hostname:
                continue
            target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
            pages.append(RealPage(folder / row["file"], row["url"], parts.hostname.lower(), target))
    if n is not None:
        if n > len(pages):
            raise ValueError(f"asked for {n} real pages, the manifest has {len(pages)}")
        chosen = set(random.Random(seed).sample(range(len(pages)), n))
        pages = [p for i, p in enumerate(pages) if i in chosen]
    return pages


def ring_links(n: int) -> dict[int, list[int]]:
    """A link graph where page i links to page i+1 (and the last to the first), so a
    crawl seeded with any one page reaches all n."""
    return {i: [(i + 1) % n] for i in range(n)} if n > 1 else {}


_BODY_END = re.compile(rb"</body\s*>", re.IGNORECASE)


def _add_links(body: bytes, hrefs: Sequence[str]) -> bytes:
    """Insert ``<a href>`` elements before the last ``</body>`` (or at the end)."""
    if not hrefs:
        return body
    anchors = "".join(
        f'\n<a href="{html.escape(h, quote=True)}">spitag test link {i}</a>' for i, h in enumerate(hrefs)
    ).encode("ascii", "xmlcharrefreplace") + b"\n"
    ends = list(_BODY_END.finditer(body))
    at = ends[-1].start() if ends else len(body)
    return body[:at] + anchors + body[at:]


def real_pages_site(
    pages: Sequence[RealPage],
    link_graph: Mapping[int, Iterable[LinkTarget]] | None = None,
) -> dict[str, DictSite]:
    """One DictSite per host serving ``pages`` at their original paths.

    ``link_graph`` maps an index into ``pages`` to link targets (indices, whose
    ``served_url`` is used, or URLs taken verbatim); those links are appended to
    the page body. ``https://<host>`` links to any served host become http.
    Add the result with ``WebServer.add_sites``.
    """
    links = link_graph or {}
    rewrite = https_rewriter(p.host for p in pages)
    sites: dict[str, DictSite] = {}
    for index, page in enumerate(pages):
        body = page.read()
        hrefs = [pages[t].served_url if isinstance(t, int) else t for t in links.get(index, ())]
        body = _add_links(rewrite(body), hrefs)
        site = sites.setdefault(page.host, DictSite())
        if page.path in site:
            raise ValueError(f"two pages for {page.served_url}")
        site.add(page.path, Response(200, body, content_type=_html_type(body)))
    return sites


def _html_type(body: bytes) -> str:
    """utf-8 when the bytes are utf-8; else no charset, so the client reads the
    page's own <meta charset> as it would have from most servers."""
    try:
        body.decode("utf-8")
    except UnicodeDecodeError:
        return "text/html"
    return HTML_UTF8
