"""A web of whole real websites: the sites of ``real-sites.tar.xz``, served under their
own names, with links between them drawn by a documented model.

Each site keeps its own pages, URL paths, anchor texts and internal links, and the
markup that varies within it (posts with BlogPosting JSON-LD beside tag pages with
none). What the archive's sites lack is links to one another; the model adds two kinds,
as real sites have them:

* a **blogroll**: every page of a site links to the home pages of ``roll`` other sites
  (a footer or sidebar, the same on every page of the site);
* **links in content**: each page links to ``Poisson(inline)`` pages of other sites,
  each anchored with its target page's title.

A linked site is drawn by **popularity**, Zipf-like (the site of popularity rank r
weighs ``1 / r^popularity``; ranks shuffled by the web's seed), and with probability
``locality`` among the sites of the linking site's own **class** only (its mean
semantic count per page at or above the median of the web's sites, or below): rich
sites link to rich sites as much as ``locality`` says, and at 0 a link says nothing of
its target's value. A content link's target page is drawn uniformly from the site's
pages. The links are added at the end of ``<body>`` as one plain ``<div>`` of ``<a>``s,
which no syntax counts as an item. The crawl starts from the home pages of ``seeds``
sites drawn by the seed.

With ``opaque``, every HTML page but a site's home is served at ``/p<digest>.html``
and every link to a page of the web (the site's own links, the model's, redirects
followed) is rewritten to match: a web whose URL paths say nothing of what a page is
(anchor texts stay as the sites wrote them).

``count_of(host, target)`` is the true count of the page a request was answered 200
with (the benchmark's own count, ``bench.webgen.semantic_counts``, per syntax, so an
objective weighs syntaxes as the crawl was told to); ``graph()`` is the link graph
the oracle walks, node = URL as requested, redirects followed.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import logging
import random
import re
import sys
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from html import escape, unescape
from pathlib import Path
from typing import Any, Mapping, Sequence
from urllib.parse import SplitResult, urljoin, urlsplit

REPO_ROOT = Path(__file__).resolve().parents[1]
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

from bench.webgen import COUNT_VERSION, page_links, poisson, semantic_counts, unpacked_archive  # noqa: E402
from spitag.extract import SYNTAXES  # noqa: E402
from testbed.webserver import HTML_UTF8, DirectorySite, Response  # noqa: E402

logger = logging.getLogger("realweb")

ARCHIVE = "real-sites.tar.xz"
REDIRECTS_FOLLOWED = 5
_TITLE = re.compile(rb"<title[^>]*>(.*?)</title>", re.I | re.S)
_BODY_END = re.compile(rb"</body\s*>", re.I)
_REFRESH = re.compile(rb"<meta[^>]+http-equiv=[\"']?refresh", re.I)
_HREF = re.compile(rb"""(\bhref\s*=\s*)("[^"]*"|'[^']*'|[^\s"'>]+)""", re.I)
_REFRESH_URL = re.compile(rb"""(\bcontent\s*=\s*["']?\s*\d*\s*;\s*url\s*=\s*)([^"'>\s]+)""", re.I)


@dataclass(frozen=True)
class LinkModel:
    """How the sites of one web link to each other (the module's docstring)."""

    seed: int = 0
    roll: int = 2  # other sites' home pages every page links to
    inline: float = 1.0  # mean links in content to other sites' pages, per page
    popularity: float = 1.0  # Zipf exponent of the sites' popularity
    locality: float = 0.0  # share of links drawn within the linking site's class
    seeds: int = 2  # sites whose home pages seed the crawl


def unpack(corpus: Path, work: Path) -> Path:
    """The archive unpacked under ``work`` (once per archive version); its top folder."""
    archive = corpus / ARCHIVE
    if not archive.is_file():
        raise FileNotFoundError(f"{archive} not found (the corpus' real websites)")
    return unpacked_archive(archive, work)


def manifest(top: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (top / "manifest.jsonl").read_text().splitlines() if line.strip()]


def split_sites(sites: Sequence[Mapping[str, Any]]) -> dict[str, list[str]]:
    """The fixed tune / eval split of the archive's sites, made before any tuning: the
    sites with structured data (JSON-LD or microdata pages) and those without, each
    ordered by a digest of the host name and dealt alternately, so both parts have
    rich and poor sites."""
    parts: dict[str, list[str]] = {"tune": [], "eval": []}
    for rich in (True, False):
        group = [s["host"] for s in sites if bool(s["jsonld_pages"] or s["microdata_pages"]) == rich]
        group.sort(key=lambda h: hashlib.sha1(h.encode()).hexdigest())
        for i, host in enumerate(group):
            parts["tune" if i % 2 == 0 else "eval"].append(host)
    return parts


class LinkedSite:
    """A real site (a ``DirectorySite``) whose HTML pages also carry the web's links to
    other sites."""

    def __init__(self, directory: DirectorySite, outlinks: Mapping[str, Sequence[tuple[str, str]]]) -> None:
        self.directory = directory
        self.outlinks = outlinks  # file key → [(url, anchor)]
        self._cache: dict[str, Response] = {}

    def file_key(self, target: str) -> str | None:
        return self.directory.file_key(target)

    def respond(self, target: str) -> Response:
        key = self.directory.file_key(target)
        response = self.directory.respond(target)
        if key is None or key not in self.outlinks:
            return response
        cached = self._cache.get(key)
        if cached is None:
            cached = self._cache[key] = Response(200, with_links(response.body, self.outlinks[key]),
                                                 content_type=response.content_type)
        return cached


def with_links(body: bytes, links: Sequence[tuple[str, str]]) -> bytes:
    """``body`` with a ``<div>`` of ``links`` before its ``</body>`` (or at its end)."""
    if not links:
        return body
    block = ("<div>" + "".join(f'<a href="{escape(u)}">{escape(a)}</a> ' for u, a in links) + "</div>").encode()
    found = list(_BODY_END.finditer(body))
    at = found[-1].start() if found else len(body)
    return body[:at] + block + body[at:]


class OpaqueSite:
    """A site of the web at opaque paths (``RealWeb``'s ``opaque``): each HTML page at
    ``paths[key]``, its links rewritten by ``rewrite``; any other path is not found."""

    def __init__(self, inner: LinkedSite, url_of: Mapping[str, str], rewrite: Any) -> None:
        self.inner = inner
        self.directory = inner.directory
        self.url_of = url_of  # file key → the URL it is served at
        self.key_at = {urlsplit(url).path: key for key, url in url_of.items()}
        self.rewrite = rewrite
        self._cache: dict[str, Response] = {}

    def file_key(self, target: str) -> str | None:
        return self.key_at.get(urlsplit(target).path or "/")

    def respond(self, target: str) -> Response:
        key = self.file_key(target)
        if key is None:
            return Response.not_found()
        cached = self._cache.get(key)
        if cached is None:
            response = self.inner.respond(key)
            cached = self._cache[key] = Response(response.status, self.rewrite(response.body, key),
                                                 content_type=response.content_type)
        return cached


class RealWeb:
    """The sites of one part of the split, linked by ``model``."""

    def __init__(self, top: Path, hosts: Sequence[str], model: LinkModel, counts_cache: Path | None = None,
                 workers: int = 2, opaque: bool = False) -> None:
        self.model = model
        entries = {s["host"]: s for s in manifest(top)}
        unknown = sorted(set(hosts) - set(entries))
        if unknown:
            raise ValueError(f"not in the archive: {unknown}")
        self.hosts = sorted(hosts)
        self.base = {h: entries[h]["base_path"] for h in self.hosts}
        self.directories = {h: DirectorySite(top / h, rewrite_hosts=self.hosts) for h in self.hosts}
        self.pages: dict[str, list[str]] = {}  # host → HTML file keys
        self.titles: dict[tuple[str, str], str] = {}
        self.aliases: set[tuple[str, str]] = set()  # meta-refresh pages
        for host, directory in self.directories.items():
            keys = [p for p in directory.paths() if p.lower().endswith((".html", ".htm"))]
            self.pages[host] = keys
            for key in keys:
                body = directory.respond(key).body
                m = _TITLE.search(body)
                self.titles[host, key] = unescape(m.group(1).decode("utf-8", "replace")).strip()[:120] if m else ""
                if _REFRESH.search(body[:4096]):
                    self.aliases.add((host, key))
        self.detail = self._count(counts_cache, workers)  # (host, key) → counts per syntax
        self.outlinks = self._draw_links()
        self.sites: dict[str, LinkedSite | OpaqueSite] = {
            h: LinkedSite(d, self.outlinks[h]) for h, d in self.directories.items()}
        self.opaque: dict[tuple[str, str], str] = {}  # (host, file key) → its opaque URL
        if opaque:
            self._make_opaque()
        rng = random.Random(f"seeds:{model.seed}")
        self.seeds = [self.home(h) for h in rng.sample(self.hosts, min(model.seeds, len(self.hosts)))]

    # -- pages ------------------------------------------------------------------------

    def home(self, host: str) -> str:
        return f"http://{host}{self.base[host]}"

    def url(self, host: str, key: str) -> str:
        path = key[: -len("index.html")] if key.endswith("/index.html") else key
        return f"http://{host}{path}"

    def value(self, counts: Mapping[str, int], weights: Mapping[str, float] | None) -> float:
        if weights is None:
            return float(sum(counts.get(s, 0) for s in SYNTAXES))
        return float(sum(weights.get(s, 1.0) * counts.get(s, 0) for s in SYNTAXES))

    def count_of(self, host: str, target: str, weights: Mapping[str, float] | None = None) -> float | None:
        """The true value of the page ``target`` of ``host`` answered 200 with; None
        when the web does not serve one there."""
        site = self.sites.get(host)
        key = site.file_key(target) if site else None
        if key is None or (host, key) not in self.detail:
            return None
        return self.value(self.detail[host, key], weights)

    def _count(self, cache_file: Path | None, workers: int) -> dict[tuple[str, str], dict[str, int]]:
        cache: dict[str, Any] = {}
        version = [COUNT_VERSION, importlib.metadata.version("extruct")]
        if cache_file is not None and cache_file.is_file():
            cache = json.loads(cache_file.read_text())
        if cache.get("version") != version:
            cache = {"version": version, "entries": {}}
        entries = cache["entries"]
        jobs = {}
        for host, keys in self.pages.items():
            for key in keys:
                body = self.directories[host].respond(key).body
                url = self.url(host, key)
                jobs[host, key] = (hashlib.sha1(body + b"\0" + url.encode()).hexdigest(), body, url)
        todo = [(d, b, u) for d, b, u in jobs.values() if d not in entries]
        if todo:
            logger.info("counting %d pages (%d cached)", len(todo), len(jobs) - len(todo))
            with ProcessPoolExecutor(max(workers, 1)) as pool:
                for digest, counts in zip([t[0] for t in todo], pool.map(_count_job, todo, chunksize=8)):
                    entries[digest] = counts
            if cache_file is not None:
                cache_file.parent.mkdir(parents=True, exist_ok=True)
                tmp = cache_file.with_suffix(".tmp")
                tmp.write_text(json.dumps(cache))
                tmp.replace(cache_file)
        return {page: entries[digest] for page, (digest, _, _) in jobs.items()}

    # -- the links between sites --------------------------------------------------------

    def site_means(self) -> dict[str, float]:
        means = {}
        for host, keys in self.pages.items():
            values = [self.value(self.detail[host, k], None) for k in keys if (host, k) not in self.aliases]
            means[host] = sum(values) / len(values) if values else 0.0
        return means

    def _draw_links(self) -> dict[str, dict[str, list[tuple[str, str]]]]:
        m = self.model
        rng = random.Random(f"links:{m.seed}")
        ranked = self.hosts[:]
        rng.shuffle(ranked)
        weight = {h: 1.0 / (r + 1) ** m.popularity for r, h in enumerate(ranked)}
        means = self.site_means()
        median = sorted(means.values())[len(means) // 2]
        rich = {h: means[h] >= median for h in self.hosts}

        def pick(source: str) -> str:
            others = [h for h in self.hosts if h != source]
            if rng.random() < m.locality:
                same = [h for h in others if rich[h] == rich[source]]
                others = same or others
            return rng.choices(others, [weight[h] for h in others])[0]

        out: dict[str, dict[str, list[tuple[str, str]]]] = {}
        for host in self.hosts:
            roll = []
            for _ in range(min(m.roll, len(self.hosts) - 1)):
                target = pick(host)
                roll.append((self.home(target), target))
            pages = out[host] = {}
            for key in self.pages[host]:
                links = list(roll)
                for _ in range(poisson(rng, m.inline)):
                    target = pick(host)
                    candidates = [k for k in self.pages[target] if (target, k) not in self.aliases] or self.pages[target]
                    if candidates:
                        tkey = rng.choice(candidates)
                        links.append((self.url(target, tkey), self.titles.get((target, tkey)) or target))
                pages[key] = links
        return out

    # -- opaque paths -----------------------------------------------------------------

    def _make_opaque(self) -> None:
        for host in self.hosts:
            home = self.directories[host].file_key(self.base[host])
            for key in self.pages[host]:
                digest = hashlib.sha1(f"{host}{key}".encode()).hexdigest()[:12]
                self.opaque[host, key] = self.home(host) if key == home else f"http://{host}/p{digest}.html"
        for host in self.hosts:
            url_of = {key: self.opaque[host, key] for key in self.pages[host]}
            self.sites[host] = OpaqueSite(self.sites[host], url_of,  # type: ignore[arg-type]
                                          lambda body, key, host=host: self._rewrite(body, self.url(host, key)))

    def _rewrite(self, body: bytes, base: str) -> bytes:
        """``body`` (of the page at ``base``, its original URL) with every link to a
        page of the web pointing at that page's opaque URL."""
        def swap(m: re.Match[bytes], quote: bytes) -> bytes:
            raw = m.group(2)
            value = raw[1:-1] if raw[:1] in (b'"', b"'") else raw
            try:
                page = self._original_page(urljoin(base, unescape(value.decode("utf-8", "replace")).strip()))
            except ValueError:  # not a URL (a bad IPv6 literal and the like): left as it is
                page = None
            if page is None:
                return m.group(0)
            return m.group(1) + quote + escape(self.opaque[page]).encode() + quote

        body = _HREF.sub(lambda m: swap(m, b'"'), body)
        return _REFRESH_URL.sub(lambda m: swap(m, b""), body)  # inside content="…": no quotes of its own

    def _original_page(self, url: str) -> tuple[str, str] | None:
        """The page of the web (host, file key) an original URL ends at, its redirects
        followed; None for anything else."""
        for _ in range(REDIRECTS_FOLLOWED):
            try:
                parts = urlsplit(url)
                host = (parts.hostname or "").lower()
            except ValueError:
                return None
            directory = self.directories.get(host)
            if directory is None or parts.scheme not in ("http", "https"):
                return None
            key = directory.file_key(parts.path or "/")
            if key is not None:
                return (host, key) if (host, key) in self.detail else None
            response = directory.respond(parts.path or "/")
            location = response.header("Location")
            if response.status not in (301, 302, 303, 307, 308) or not location:
                return None
            url = urljoin(url, location)
        return None

    # -- the oracle's graph ---------------------------------------------------------------

    def resolve(self, url: str) -> str | None:
        """The URL a link ends at after the web's redirects, if that is a page answered 200
        with HTML; None otherwise (404, another host, a redirect loop)."""
        for _ in range(REDIRECTS_FOLLOWED):
            parts = urlsplit(url)
            site = self.sites.get((parts.hostname or "").lower())
            if site is None or parts.scheme != "http":
                return None
            target = _target(parts)
            response = site.respond(target)
            if response.status == 200:
                key = site.file_key(target)
                return url if key is not None and (parts.hostname, key) in self.detail else None
            location = response.header("Location")
            if response.status not in (301, 302, 303, 307, 308) or not location:
                return None
            url = urljoin(url, location)
        return None

    def graph(self) -> dict[str, list[str]]:
        """URL → the pages its links end at; every page answered 200 reachable from the
        seeds, found by walking the links from them."""
        links: dict[str, list[str]] = {}
        todo = [u for u in (self.resolve(s) for s in self.seeds) if u]
        while todo:
            url = todo.pop()
            if url in links:
                continue
            parts = urlsplit(url)
            target = _target(parts)
            body = self.sites[parts.hostname].respond(target).body
            found = [self.resolve(v) for v in page_links(body, url, HTML_UTF8)]
            links[url] = list(dict.fromkeys(v for v in found if v))
            todo.extend(v for v in links[url] if v not in links)
        return links

    def values(self, urls: Sequence[str], weights: Mapping[str, float] | None) -> dict[str, float]:
        out = {}
        for url in urls:
            parts = urlsplit(url)
            target = _target(parts)
            value = self.count_of(parts.hostname or "", target, weights)
            if value is not None:
                out[url] = value
        return out

    def summary(self) -> dict[str, Any]:
        pages = sum(len(k) for k in self.pages.values())
        means = self.site_means()
        return {"sites": len(self.hosts), "pages": pages, "aliases": len(self.aliases),
                "items_per_page": sum(self.value(c, None) for c in self.detail.values()) / max(pages, 1),
                "site_means": {h: round(v, 2) for h, v in sorted(means.items(), key=lambda x: -x[1])},
                "seeds": self.seeds}


def _count_job(job: tuple[str, bytes, str]) -> dict[str, int]:
    _, body, url = job
    counts, _ = semantic_counts(body, url, HTML_UTF8)
    return counts


def _target(parts: SplitResult) -> str:
    """The request target of a split URL: its path and query."""
    return (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
