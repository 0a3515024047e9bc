"""The focus benchmark's web: a seeded, local, many-site web built from the real corpus.

Every real-page host of ``real-pages.tar.gz`` becomes a site of n generated pages that
reuse that host's real page(s) as templates; the real flink.apache.org site is served
as it is. Only the links are generated — every original ``<a href>`` / ``<area href>``
is neutralized — so the link graph is known exactly and the semantic count of every
served page can be computed here, independently of the crawler. ``bench/README.md``
describes the model; ``bench/focus.py`` crawls it.

Graph model (all draws from ``random.Random(seed)``, hosts in sorted order):

* site size ``n = clip(round(lognormal(ln(size_median), size_sigma)), size_min, size_max)``;
  page 0 is ``/`` (home), page i ≥ 1 is ``/p/<i>.html``; page i uses template
  ``i mod (number of real pages of the host)``.
* intra-site: a tree of fanout ``fanout`` (page i links its children
  ``fanout·i+1 … fanout·i+fanout`` and its parent ``(i−1) // fanout``), every page links
  home, plus Poisson(``intra_links``) uniformly random same-site pages.
* inter-site: Poisson(``inter_links``) links per page; each picks a uniformly random
  *other* site (flink included), then its home with probability ``inter_home``, else a
  uniformly random page of it. No homophily: a rich site is not more likely to link
  to, or be linked from, another rich site. Two parameters (default 0) make links
  carry a site's value, for webs with the topical locality focused crawlers rely on:
  ``popularity`` a — the other site is drawn with weight ``(1 + v)^a`` (v its mean
  true count), so rich sites get more in-links; ``homophily`` h — with probability h
  the link goes instead to a uniformly random site among the ``HOMOPHILY_WINDOW``
  fraction of sites nearest to the linking site in value rank. Either needs the
  sites' values before the links: ``build_counted_web`` counts first.
* seeds: ``seeds`` random generated homes plus flink's home.
* repair: a generated site whose home is not reachable from the seeds gets one link
  from a uniformly random reachable generated page (repeated until all are
  reachable), so every generated page is reachable. Flink keeps its own link
  structure; its graph nodes are the URLs reachable from its home through its links.
"""

from __future__ import annotations

import bisect
import hashlib
import importlib.metadata
import html
import itertools
import json
import logging
import math
import os
import random
import re
import shutil
import sys
import tempfile
from collections import deque
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, Iterable, Sequence
from urllib.parse import unquote, urljoin, urlsplit

REPO_ROOT = Path(__file__).resolve().parents[1]
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

import extruct  # noqa: E402
import lxml.etree  # noqa: E402
import lxml.html  # noqa: E402
from w3lib.encoding import html_to_unicode  # noqa: E402

from spitag.urls import try_normalize  # noqa: E402  (URL spelling only, as the crawler requests)
from testbed.corpus import (  # noqa: E402
    FLINK_ARCHIVE,
    FLINK_HOST,
    PAGES_ARCHIVE,
    RealPage,
    flink_site,
    real_pages,
    unpack,
)
from testbed.webserver import HTML_UTF8, Response, Site, https_rewriter  # noqa: E402

logger = logging.getLogger(__name__)

SYNTAXES = ("json-ld", "microdata", "rdfa", "opengraph", "twitter", "meta", "microformat", "dublincore")
COUNT_VERSION = 1  # bump when the counting rules change: invalidates the count cache
MAX_REDIRECTS = 5


# ============================================================================ corpus


def corpus_dir(explicit: str | os.PathLike[str] | None = None, flink: bool = True) -> Path:
    """``explicit``, else $SPITAG_CORPUS, else <repo>/../shared/corpus: the folder of
    ``real-pages.tar.gz`` and, unless ``flink`` is off, ``flink.apache.org.tar.gz``.
    A missing archive fails here, with what to do about it."""
    root = Path(explicit or os.environ.get("SPITAG_CORPUS") or REPO_ROOT.parent / "shared" / "corpus")
    missing = [n for n in _archives(flink) if not (root / n).is_file()]
    if missing:
        hint = f"; without {FLINK_ARCHIVE}, leave flink out (--no-flink)" if missing == [FLINK_ARCHIVE] else ""
        raise FileNotFoundError(f"corpus archives {missing} not found in {root} (--corpus DIR or $SPITAG_CORPUS{hint})")
    return root


def corpus_stamp(corpus: Path, flink: bool = True) -> str:
    """What identifies a corpus: its archives' paths, sizes and modification times.
    Caches built from a corpus (unpacked folders) are keyed by it,
    so another corpus — or a new version of this one — never reuses them."""
    return "-".join(_archive_key(corpus / name) for name in _archives(flink))


def unpack_corpus(corpus: Path, dest: Path, flink: bool = True) -> tuple[Path, Path | None]:
    """Unpack the archives under ``dest`` once each (a folder per archive version, see
    ``corpus_stamp``); return (pages folder, flink site folder, or None without flink)."""
    pages = unpacked_archive(corpus / PAGES_ARCHIVE, dest)
    return pages, (unpacked_archive(corpus / FLINK_ARCHIVE, dest) if flink else None)


def _archives(flink: bool) -> list[str]:
    return [PAGES_ARCHIVE] + ([FLINK_ARCHIVE] if flink else [])


def _archive_key(archive: Path) -> str:
    st = archive.stat()
    return hashlib.sha1(f"{archive.resolve()}:{st.st_size}:{st.st_mtime_ns}".encode()).hexdigest()[:12]


def unpacked_archive(archive: Path, dest: Path) -> Path:
    """Unpack into a temporary folder, then rename it into place: parallel jobs may race, and a folder that exists is always whole."""
    folder = dest / f"{archive.name}-{_archive_key(archive)}"
    marker = folder / ".unpacked"  # holds the unpacked top folder, relative to ``folder``
    if not marker.is_file():
        if folder.exists():  # without its marker: incomplete
            shutil.rmtree(folder, ignore_errors=True)
        dest.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{folder.name}-", dir=dest))
        top = unpack(archive, tmp)
        (tmp / ".unpacked").write_text(str(top.relative_to(tmp)))
        try:
            tmp.rename(folder)
        except OSError:  # another process renamed its copy first
            shutil.rmtree(tmp, ignore_errors=True)
    return folder / marker.read_text()


# ============================================================================ templates

# <a …> / <area …> start tags. First pass: quote-aware, so a ">" inside a quoted value
# does not end the tag; second pass: quote-naive, for tags with unbalanced quotes
# (rel="noopener  class="x") that the first pass cannot match. Both rename the attribute
# *name* href to data-spitag-href; text that merely contains "href" is left alone.
_TAG = re.compile(rb"<(a|area)(?=[\s/>])((?:[^>\"']|\"[^\"]*\"|'[^']*')*)>", re.I)
_TAG_ATTR = re.compile(rb"(\"[^\"]*\"|'[^']*')|(?<![\w:.-])href(?![\w:.-])", re.I)
_NAIVE_TAG = re.compile(rb"<(a|area)(?=[\s/>])([^>]*)>", re.I)
_NAIVE_ATTR = re.compile(rb"(?<=[\s\"'/])href(?=\s*=)", re.I)
_META = re.compile(rb"<meta(?=[\s/>])[^>]*>", re.I)
_ROBOTS_NAME = re.compile(rb"(\bname\s*=\s*[\"']?\s*)robots\b", re.I)
_REFRESH = re.compile(rb"(\bhttp-equiv\s*=\s*[\"']?\s*)refresh\b", re.I)
_BODY_END = re.compile(rb"</body\s*>", re.I)
NEUTRAL_HREF = b"data-spitag-href"


def neutralize(body: bytes) -> bytes:
    """The page with no way out: a/area ``href`` renamed, ``<meta name="robots">`` renamed
    (a nofollow would hide our links), ``<meta http-equiv="refresh">`` renamed (it is a
    link to the crawler). The renamed metas still count as plain meta tags."""

    def quoted_pass(m: re.Match[bytes]) -> bytes:
        attrs = _TAG_ATTR.sub(lambda a: a.group(1) if a.group(1) is not None else NEUTRAL_HREF, m.group(2))
        return b"<" + m.group(1) + attrs + b">"

    def naive_pass(m: re.Match[bytes]) -> bytes:
        return b"<" + m.group(1) + _NAIVE_ATTR.sub(NEUTRAL_HREF, m.group(2)) + b">"

    def meta_pass(m: re.Match[bytes]) -> bytes:
        tag = _ROBOTS_NAME.sub(rb"\1spitag-robots", m.group(0))
        return _REFRESH.sub(rb"\1spitag-refresh", tag)

    body = _TAG.sub(quoted_pass, body)
    body = _NAIVE_TAG.sub(naive_pass, body)
    return _META.sub(meta_pass, body)


def html_content_type(body: bytes) -> str:
    """As ``testbed.corpus`` serves real pages: utf-8 when the bytes are utf-8,
    else no charset (the client reads the page's own ``<meta charset>``)."""
    try:
        body.decode("utf-8")
    except UnicodeDecodeError:
        return "text/html"
    return HTML_UTF8


@dataclass
class Template:
    """A real page made into a template: neutralized, https→http for served hosts."""

    key: str  # the real page's file name
    host: str  # the generated site that uses it
    source_url: str  # where the real page came from
    body: bytes
    content_type: str
    insert_at: int  # generated links go here: before the last </body>, else the end

    def render(self, hrefs: Sequence[str]) -> bytes:
        return self.body[: self.insert_at] + link_block(hrefs) + self.body[self.insert_at :]


def make_template(page: RealPage, rewrite: Any) -> Template:
    body = neutralize(rewrite(page.read()))
    ends = list(_BODY_END.finditer(body))
    at = ends[-1].start() if ends else len(body)
    return Template(page.file.name, page.host, page.url, body, html_content_type(body), at)


def link_block(hrefs: Sequence[str]) -> bytes:
    """Plain anchors, no attribute but href (nothing a semantic extractor reads)."""
    if not hrefs:
        return b""
    anchors = "".join(
        f'\n<a href="{html.escape(h, quote=True)}">link {i}</a>' for i, h in enumerate(hrefs)
    )
    return anchors.encode("ascii", "xmlcharrefreplace") + b"\n"


# ============================================================================ the web


@dataclass(frozen=True)
class WebParams:
    seed: int = 0
    sites: int | None = None  # generated sites (None: every real-page host)
    size_median: float = 8.0  # lognormal median of the pages per site
    size_sigma: float = 1.0  # lognormal sigma (log scale)
    size_min: int = 3
    size_max: int = 120
    fanout: int = 4
    intra_links: float = 2.0  # Poisson mean of random same-site links per page
    inter_links: float = 1.5  # Poisson mean of links to other sites per page
    inter_home: float = 0.5  # probability that an inter-site link targets a home
    seeds: int = 5  # random generated homes among the seeds (plus flink's home)
    flink: bool = True
    popularity: float = 0.0  # a: inter-site targets drawn with weight (1 + site value)^a
    homophily: float = 0.0  # h: probability that an inter-site link goes to a site of like value

    @property
    def links_by_value(self) -> bool:
        return bool(self.popularity or self.homophily)


@dataclass
class Node:
    """A page of the graph: a URL answered 200, and the URLs (also nodes) it links to."""

    url: str
    host: str
    path: str
    template: str | None  # Template.key for generated pages; None for flink
    links: list[str] = field(default_factory=list)


@dataclass
class Web:
    params: WebParams
    templates: dict[str, Template]
    site_templates: dict[str, list[str]]  # generated host → its template keys
    site_pages: dict[str, list[str]]  # host → its node URLs (index i = page i for generated)
    nodes: dict[str, Node]
    seeds: list[str]
    flink_root: Path | None = None
    flink_files: dict[str, Path] = field(default_factory=dict)  # served path → html file
    repairs: int = 0  # links added so that every site is reachable
    counts: dict[str, int] = field(default_factory=dict)  # template key / flink path → total
    detail: dict[str, dict[str, int]] = field(default_factory=dict)  # … → per-syntax counts
    _flink_site: Any = None

    # -- serving -------------------------------------------------------------------
    def sites(self) -> dict[str, Site]:
        """host → Site, for ``WebServer.add_sites``."""
        out: dict[str, Site] = {h: GeneratedSite(self, h) for h in self.site_templates}
        if self.flink_root is not None:
            out[FLINK_HOST] = self.flink()
        return out

    def flink(self) -> Any:
        if self._flink_site is None and self.flink_root is not None:
            self._flink_site = flink_site(self.flink_root)
        return self._flink_site

    def body_of(self, url: str) -> bytes:
        node = self.nodes[url]
        if node.template is None:
            return self.flink().respond(node.path).body
        return self.templates[node.template].render(node.links)

    # -- truth ---------------------------------------------------------------------
    def count_key(self, host: str, target: str) -> str | None:
        """What a 200 answer for (host, target) is counted by: a template key or a
        flink file path ("flink:/path"); None when the web does not serve it."""
        if host in self.site_templates:
            node = self.nodes.get(f"http://{host}{urlsplit(target).path}")
            return node.template if node is not None else None
        if host == FLINK_HOST and self.flink_root is not None:
            parts = urlsplit(target)
            for path in dict.fromkeys((unquote(parts.path), parts.path)):
                key = path + "index.html" if path.endswith("/") else path
                if key in self.flink_files:
                    return "flink:" + key
                if self.flink().respond(key).status == 200:
                    return "flink-other:" + key  # served, not HTML: no semantic items
        return None

    def count_of(self, host: str, target: str) -> int | None:
        """True semantic total of what (host, target) serves; None if unknown."""
        key = self.count_key(host, target)
        if key is None:
            return None
        if key.startswith("flink-other:"):
            return 0
        return self.counts.get(key)

    def node_count(self, url: str) -> int:
        node = self.nodes[url]
        found = self.count_of(node.host, node.path)
        if found is None:
            raise KeyError(f"no count for {url}: compute_counts() first")
        return found

    # -- shape ---------------------------------------------------------------------
    def reachable(self) -> set[str]:
        seen = set(self.seeds)
        todo = deque(self.seeds)
        while todo:
            for v in self.nodes[todo.popleft()].links:
                if v not in seen:
                    seen.add(v)
                    todo.append(v)
        return seen

    def summary(self) -> dict[str, Any]:
        generated = [n for n in self.nodes.values() if n.template is not None]
        sizes = sorted(len(p) for h, p in self.site_pages.items() if h in self.site_templates)
        out: dict[str, Any] = {
            "params": asdict(self.params),
            "generated_sites": len(self.site_templates),
            "generated_pages": len(generated),
            "templates": len(self.templates),
            "flink_pages": len(self.nodes) - len(generated),
            "nodes": len(self.nodes),
            "edges": sum(len(n.links) for n in self.nodes.values()),
            "site_size": {"min": sizes[0], "median": sizes[len(sizes) // 2], "max": sizes[-1]} if sizes else {},
            "seeds": self.seeds,
            "repairs": self.repairs,
        }
        if self.counts:
            totals = [self.node_count(u) for u in self.nodes]
            out["items_total"] = sum(totals)
            out["items_per_page"] = sum(totals) / len(totals)
            out["pages_without_items"] = sum(t == 0 for t in totals)
        return out


class GeneratedSite:
    """Serves one generated site: ``/`` and ``/p/<i>.html``, rendered on request."""

    def __init__(self, web: Web, host: str) -> None:
        self.web = web
        self.paths = {web.nodes[u].path: u for u in web.site_pages[host]}

    def respond(self, target: str) -> Response:
        url = self.paths.get(urlsplit(target).path)
        if url is None:
            return Response.not_found()
        node = self.web.nodes[url]
        template = self.web.templates[node.template]  # type: ignore[index]
        return Response(200, template.render(node.links), content_type=template.content_type)


def poisson(rng: random.Random, mean: float) -> int:
    """Knuth's sampler (means here are small)."""
    if mean <= 0:
        return 0
    limit, k, p = math.exp(-mean), 0, 1.0
    while True:
        p *= rng.random()
        if p <= limit:
            return k
        k += 1


def site_size(rng: random.Random, params: WebParams) -> int:
    raw = rng.lognormvariate(math.log(params.size_median), params.size_sigma)
    return int(min(max(round(raw), params.size_min), params.size_max))


def build_web(
    pages: Sequence[RealPage], flink_root: Path | None, params: WebParams, values: dict[str, float] | None = None
) -> Web:
    """The seeded web over ``pages`` (http(s) real pages) and, if given, flink's site.
    ``values`` (site → mean true count, ``site_values``) is needed when the params link
    by value (``popularity``, ``homophily``); ``build_counted_web`` supplies it."""
    if params.links_by_value and values is None:
        raise ValueError("popularity/homophily need the sites' values: use build_counted_web")
    if not 0.0 <= params.popularity <= 3.0 or not 0.0 <= params.homophily <= 1.0:
        raise ValueError(f"popularity must be in [0, 3] and homophily in [0, 1], not {params.popularity}, {params.homophily}")
    rng = random.Random(params.seed)
    by_host: dict[str, list[RealPage]] = {}
    for page in pages:
        if page.host != FLINK_HOST:
            by_host.setdefault(page.host, []).append(page)
    hosts = sorted(by_host)
    if params.sites is not None:
        if params.sites > len(hosts):
            raise ValueError(f"asked for {params.sites} sites, the corpus has {len(hosts)} hosts")
        hosts = sorted(rng.sample(hosts, params.sites))
    if not hosts:
        raise ValueError("no generated site")
    served = list(hosts) + ([FLINK_HOST] if flink_root is not None else [])
    rewrite = https_rewriter(served)

    templates: dict[str, Template] = {}
    site_templates: dict[str, list[str]] = {}
    for host in hosts:
        keys = []
        for page in by_host[host]:
            t = make_template(page, rewrite)
            templates[t.key] = t
            keys.append(t.key)
        site_templates[host] = keys

    web = Web(params, templates, site_templates, {}, {}, [], flink_root)
    if flink_root is not None:
        _add_flink(web)

    # Nodes first (all sites' sizes), then links, so link targets can be any page.
    for host in hosts:
        n = site_size(rng, params)
        keys = site_templates[host]
        urls = []
        for i in range(n):
            path = "/" if i == 0 else f"/p/{i}.html"
            url = f"http://{host}{path}"
            web.nodes[url] = Node(url, host, path, keys[i % len(keys)])
            urls.append(url)
        web.site_pages[host] = urls

    sites = hosts + ([FLINK_HOST] if flink_root is not None else [])  # link targets
    by_value = LinkTargets(sites, values, params) if params.links_by_value and values is not None else None
    for host in hosts:
        urls = web.site_pages[host]
        n = len(urls)
        for i, url in enumerate(urls):
            links: list[int | str] = []
            links.extend(range(params.fanout * i + 1, min(params.fanout * i + params.fanout, n - 1) + 1))
            if i > 0:
                links.append((i - 1) // params.fanout)
            links.append(0)
            for _ in range(poisson(rng, params.intra_links)):
                if n > 1:
                    links.append(rng.randrange(n))
            out = [urls[j] if isinstance(j, int) else j for j in links]
            for _ in range(poisson(rng, params.inter_links)):
                if by_value is not None:
                    other = by_value.pick(rng, host)
                else:  # uniform (the default web: these draws must not change)
                    other = host
                    while other == host and len(sites) > 1:
                        other = sites[rng.randrange(len(sites))]
                if other == host:
                    break
                targets = web.site_pages[other]
                home = targets[0] if other != FLINK_HOST else f"http://{FLINK_HOST}/"
                out.append(home if rng.random() < params.inter_home else targets[rng.randrange(len(targets))])
            web.nodes[url].links = [u for u in dict.fromkeys(out) if u != url]

    homes = [web.site_pages[h][0] for h in hosts]
    web.seeds = [homes[i] for i in sorted(rng.sample(range(len(homes)), min(params.seeds, len(homes))))]
    if flink_root is not None:
        web.seeds.append(f"http://{FLINK_HOST}/")
    _repair(web, rng, hosts)
    return web


HOMOPHILY_WINDOW = 0.05  # a homophilous link's target: among this fraction of sites nearest in value


class LinkTargets:
    """The other site an inter-site link goes to, when links follow the sites' values
    (``WebParams.popularity`` and ``homophily``; the module docstring)."""

    def __init__(self, sites: Sequence[str], values: dict[str, float], params: WebParams) -> None:
        missing = [s for s in sites if s not in values]
        if missing:
            raise ValueError(f"no value for sites {missing[:5]}")
        self.sites = list(sites)
        self.index = {s: i for i, s in enumerate(self.sites)}
        self.homophily = params.homophily
        self.cumulative = list(itertools.accumulate((1.0 + max(values[s], 0.0)) ** params.popularity for s in sites))
        self.ranked = sorted(sites, key=lambda s: (values[s], s))
        self.rank = {s: i for i, s in enumerate(self.ranked)}
        self.window = max(1, round(HOMOPHILY_WINDOW * len(sites) / 2))  # on each side

    def pick(self, rng: random.Random, host: str) -> str:
        """Another site than ``host`` (``host`` itself only when it is the only one)."""
        if len(self.sites) < 2:
            return host
        if self.homophily and rng.random() < self.homophily:
            r = self.rank[host]
            lo, hi = max(0, r - self.window), min(len(self.ranked) - 1, r + self.window)
            j = rng.randint(lo, hi - 1)
            return self.ranked[j + 1 if j >= r else j]
        # by weight among the others: one draw over the weight before host's and after it
        i = self.index[host]
        before = self.cumulative[i - 1] if i else 0.0
        after = self.cumulative[-1] - self.cumulative[i]
        x = rng.random() * (before + after)
        if x < before:
            return self.sites[min(bisect.bisect_right(self.cumulative, x), i - 1)]
        j = bisect.bisect_right(self.cumulative, self.cumulative[i] + (x - before))
        return self.sites[max(i + 1, min(j, len(self.sites) - 1))]


def site_values(web: Web) -> dict[str, float]:
    """Mean true count of each site's pages (needs ``compute_counts``)."""
    return {
        host: sum(web.node_count(u) for u in urls) / len(urls)
        for host, urls in web.site_pages.items()
        if urls
    }


def build_counted_web(
    pages: Sequence[RealPage], flink_root: Path | None, params: WebParams,
    cache_file: Path | None = None, workers: int = 1,
) -> tuple[Web, dict[str, Any]]:
    """``build_web`` + ``compute_counts``. When the params link by value, the web is
    built twice: once with uniform links to count the sites (same sites, sizes and
    templates: those draws come first), then with links drawn from those values."""
    web = build_web(pages, flink_root, replace(params, popularity=0.0, homophily=0.0))
    counting = compute_counts(web, cache_file, workers)
    if params.links_by_value:
        linked = build_web(pages, flink_root, params, site_values(web))
        linked.counts, linked.detail = web.counts, web.detail
        web = linked
    return web, counting


def _repair(web: Web, rng: random.Random, hosts: list[str]) -> None:
    """Link every unreachable generated site from a random reachable generated page."""
    while True:
        seen = web.reachable()
        orphans = [h for h in hosts if web.site_pages[h][0] not in seen]
        if not orphans:
            return
        sources = sorted(u for u in seen if web.nodes[u].template is not None)
        if not sources:
            raise ValueError("no generated page is reachable from the seeds")
        host = orphans[0]
        source = web.nodes[sources[rng.randrange(len(sources))]]
        source.links.append(web.site_pages[host][0])
        web.repairs += 1


# ============================================================================ flink


def page_links(body: bytes, url: str, content_type: str | None) -> list[str]:
    """The links a crawler takes from an HTML page, as ``spitag.record`` documents them:
    a/area hrefs resolved against ``<base>`` (``rel=nofollow`` skipped), plus a meta
    refresh target outside ``<noscript>``; none under ``<meta name=robots>``
    nofollow/none. Normalized like the crawler's URLs; http(s) only; each once."""
    root = _parse(_decode(body, content_type))
    if root is None:
        return []
    base = url
    for el in root.iter("base"):
        href = (el.get("href") or "").strip()
        if href:
            try:
                base = urljoin(url, href)
            except ValueError:
                pass
            break
    found: list[str] = []

    def resolve(href: str) -> None:
        try:
            found.append(urljoin(base, href))
        except ValueError:  # e.g. "http://[not-an-ip]/": not a URL
            pass

    for el in root.iter("meta"):
        name = (el.get("name") or "").strip().lower()
        content = (el.get("content") or "").lower()
        if name == "robots" and any(t.strip() in ("nofollow", "none") for t in content.replace(";", ",").split(",")):
            return []
    for el in root.iter("a", "area"):
        href = el.get("href")
        if href is None or "nofollow" in (el.get("rel") or "").lower().split():
            continue
        resolve(re.sub(r"[\t\n\r]", "", href.strip()))
    for el in root.iter("meta"):
        if (el.get("http-equiv") or "").strip().lower() == "refresh" and next(el.iterancestors("noscript"), None) is None:
            m = re.match(r"\s*[\d.]*\s*[;,]?\s*(?:url\s*=\s*)?(.*)", el.get("content") or "", re.I | re.S)
            target = m.group(1).strip().strip("'\"") if m else ""
            if target:
                resolve(target)
            break
    out = []
    for link in found:
        normalized = try_normalize(link) if link[:5].lower() in ("http:", "https") else None
        if normalized:
            out.append(normalized)
    return list(dict.fromkeys(out))


def _add_flink(web: Web) -> None:
    """Flink's graph: the URLs reachable from its home through its own links (following
    its 301s as the crawler does), each a node; its HTML files are counted one by one."""
    site = web.flink()
    root = Path(site.root)
    for file in sorted(root.rglob("*")):
        if file.suffix.lower() in (".html", ".htm") and file.is_file():
            web.flink_files["/" + file.relative_to(root).as_posix()] = file
    home = f"http://{FLINK_HOST}/"
    order: list[str] = []
    todo = deque([home])
    seen = {home}
    links_of: dict[str, list[str]] = {}
    while todo:
        url = todo.popleft()
        parts = urlsplit(url)
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        response = site.respond(target)
        if response.status != 200:
            continue
        order.append(url)
        links: list[str] = []
        if (response.content_type or "").startswith("text/html"):
            for link in page_links(response.body, url, response.content_type):
                final = _resolve_flink(site, link)
                if final is not None:
                    links.append(final)
        links_of[url] = [u for u in dict.fromkeys(links) if u != url]
        for v in links_of[url]:
            if v not in seen:
                seen.add(v)
                todo.append(v)
    for url in order:
        parts = urlsplit(url)
        path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        web.nodes[url] = Node(url, FLINK_HOST, path, None, links_of[url])
    # Inter-site links land on flink's HTML pages only (what a real site would link to).
    web.site_pages[FLINK_HOST] = [
        u for u in order if (web.count_key(FLINK_HOST, web.nodes[u].path) or "").startswith("flink:")
    ]


def _resolve_flink(site: Any, url: str) -> str | None:
    """Where a flink link ends as a 200 (following redirects); None if not a flink 200."""
    for _ in range(MAX_REDIRECTS + 1):
        parts = urlsplit(url)
        if parts.scheme != "http" or (parts.hostname or "") != FLINK_HOST:
            return None  # other hosts: 404 or CONNECT refused by the server, never a page
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        response = site.respond(target)
        if response.status == 200:
            return url
        location = response.header("Location")
        if not (300 <= response.status < 400 and location):
            return None
        url = try_normalize(urljoin(url, location)) or ""
    return None


# ============================================================================ counting


def _decode(body: bytes, content_type: str | None) -> str:
    """As Scrapy decodes a response: the header's charset, else BOM / <meta charset>."""
    text = html_to_unicode(content_type, body)[1]
    text = text.lstrip("\ufeff")
    return re.sub(r"^\s*<\?xml[^>]*>", "", text)  # lxml refuses str with an XML declaration


def _parse(text: str) -> Any:
    if not text.strip():
        return None
    try:
        return lxml.html.document_fromstring(text)
    except (ValueError, lxml.etree.ParserError):
        return None


_OG_PREFIXES = ("og:", "fb:", "article:", "book:", "profile:", "music:", "video:", "product:")
_DC_PREFIXES = ("dc.", "dcterms.")
_RDFA_NOT_OWN = (
    "http://www.w3.org/1999/xhtml/vocab#",  # rel="license", role=...
    "http://www.w3.org/ns/rdfa#",  # rdfa:usesVocabulary
    "http://ogp.me/ns", "https://ogp.me/ns", "http://opengraphprotocol.org/schema",
    "http://opengraph.org/schema", "http://www.facebook.com/2008/fbml",
    "https://www.facebook.com/2008/fbml", "https://dev.twitter.com/cards",
    "https://api.w.org/", "https://github.com/WP-API/",  # WordPress discovery links
)
_JSONLD_WRAPPERS = re.compile(r"^\s*(?:<!--|<!\[CDATA\[)|(?:-->|\]\]>)\s*$")


def semantic_counts(body: bytes, url: str, content_type: str | None) -> tuple[dict[str, int], list[str]]:
    """(counts per syntax plus ``total``, syntaxes that failed) of one served page.

    extruct directly, one ``extruct.extract`` call per syntax, each in its own try;
    JSON-LD script by script (extruct's own decoder per script, then the leniencies
    spitag/extract.py documents); twitter and meta tags with lxml. The rules are those
    of spitag/extract.py's docstring, implemented here without its code.
    """
    counts = dict.fromkeys(SYNTAXES, 0)
    errors: list[str] = []
    text = _decode(body, content_type)
    root = _parse(text)
    if root is None:
        counts["total"] = 0
        return counts, errors

    def run(syntax: str) -> list[Any] | None:
        try:
            return extruct.extract(text, base_url=url, syntaxes=[syntax], errors="strict")[syntax]
        except Exception:
            errors.append(syntax)
            return None

    try:
        counts["json-ld"], broken = _jsonld(root)
        if broken:
            errors.append("json-ld")
    except Exception:
        errors.append("json-ld")
    items = run("microdata")
    counts["microdata"] = len(items or [])
    items = run("opengraph")
    counts["opengraph"] = sum(len(i.get("properties", [])) for i in items or [] if isinstance(i, dict))
    items = run("microformat")
    counts["microformat"] = len(items or [])
    items = run("rdfa")
    counts["rdfa"] = sum(_rdfa_counted(n) for n in items or [])
    items = run("dublincore")
    counts["dublincore"] = sum(_dc_count(i) for i in items or [])
    try:
        counts["twitter"], counts["meta"] = _meta_counts(root)
    except Exception:
        errors.append("meta")
    counts["total"] = sum(counts[s] for s in SYNTAXES)
    return counts, errors


def _jsonld(root: Any) -> tuple[int, bool]:
    """(count, some script unreadable). Scripts typed application/ld+json (any case,
    parameters ignored), each decoded on its own."""
    extractor = extruct.jsonld.JsonLdExtractor()
    total, broken = 0, False
    for script in root.iter("script"):
        kind = (script.get("type") or "").split(";", 1)[0].strip().lower()
        if kind != "application/ld+json":
            continue
        raw = script.text or ""
        if not raw.strip():
            continue
        try:
            values = list(extractor._extract_items(script))
        except Exception:
            values = _lenient_json(raw)
            if values is None:
                broken = True
                continue
        total += sum(_jsonld_count(o) for o in _flatten(values))
    return total, broken


def _lenient_json(raw: str) -> list[Any] | None:
    """The leniencies beyond extruct: <!-- --> / CDATA wrappers, a trailing ';', several
    JSON values in a row. None when nothing can be read."""
    text = raw.strip()
    for _ in range(3):
        text = _JSONLD_WRAPPERS.sub("", text).strip()
    text = text.rstrip(";").strip()
    decoder = json.JSONDecoder(strict=False)
    values, at = [], 0
    try:
        while at < len(text):
            value, end = decoder.raw_decode(text, at)
            values.append(value)
            at = end
            while at < len(text) and (text[at].isspace() or text[at] in ",;"):
                at += 1
    except ValueError:
        if not values:
            return None
    return values


def _flatten(values: Iterable[Any]) -> list[Any]:
    out: list[Any] = []
    stack = list(values)[::-1]
    while stack:
        value = stack.pop()
        if isinstance(value, list):
            stack.extend(value[::-1])
        else:
            out.append(value)
    return out


def _jsonld_count(obj: Any) -> int:
    """1 per non-empty object; an object with @graph: its members (same rule) + 1 if
    it has its own @type."""
    if not isinstance(obj, dict) or not obj:
        return 0
    if "@graph" not in obj:
        return 1
    graph = obj["@graph"]
    members = _flatten(graph if isinstance(graph, list) else [graph])
    return sum(_jsonld_count(m) for m in members) + (1 if obj.get("@type") else 0)


def _rdfa_counted(node: Any) -> int:
    if not isinstance(node, dict):
        return 0
    if node.get("@type"):
        return 1
    for key in node:
        if key.startswith("@") or not key.startswith(("http://", "https://")):
            continue
        if not key.startswith(_RDFA_NOT_OWN):
            return 1
    return 0


def _dc_count(item: Any) -> int:
    prefixes = {"dc", "dcterms"} | {str(k).lower() for k in (item.get("namespaces") or {})}
    n = 0
    for part in ("elements", "terms"):
        for entry in item.get(part, []):
            key = str(entry.get("name") or entry.get("rel") or "").strip().lower()
            if "." in key and key.split(".", 1)[0] in prefixes:
                n += 1
    return n


def _meta_counts(root: Any) -> tuple[int, int]:
    twitter = meta = 0
    for el in root.iter("meta"):
        content = el.get("content")
        if not content or content.isspace():
            continue
        name, prop = el.get("name"), el.get("property")
        key = (name or prop or el.get("http-equiv") or el.get("itemprop") or "").strip().lower()
        if not key:
            continue
        if key.startswith("twitter:") or (prop or "").strip().lower().startswith("twitter:"):
            twitter += 1
        elif not key.startswith(_OG_PREFIXES + _DC_PREFIXES):
            meta += 1
    return twitter, meta


# ---------------------------------------------------------------------------- cache


def _count_job(job: tuple[str, bytes, str, str | None]) -> tuple[str, dict[str, int], list[str]]:
    key, body, url, content_type = job
    counts, errors = semantic_counts(body, url, content_type)
    return key, counts, errors


def compute_counts(web: Web, cache_file: Path | None = None, workers: int = 1) -> dict[str, Any]:
    """Fill ``web.counts`` / ``web.detail``: each template once (at its site's home URL:
    generated pages differ from it only by plain links) and each flink HTML file.
    Results are cached in ``cache_file`` by content digest."""
    jobs: list[tuple[str, bytes, str, str | None]] = []
    for key, t in web.templates.items():
        jobs.append((key, t.body, f"http://{t.host}/", t.content_type))
    for path, file in web.flink_files.items():
        jobs.append(("flink:" + path, web.flink().respond(path).body, f"http://{FLINK_HOST}{path}", HTML_UTF8))
    cache: dict[str, Any] = {}
    if cache_file is not None and cache_file.is_file():
        cache = json.loads(cache_file.read_text())
    version = [COUNT_VERSION, importlib.metadata.version("extruct")]
    if cache.get("version") != version:
        cache = {"version": version, "entries": {}}
    entries = cache["entries"]

    def digest(job: tuple[str, bytes, str, str | None]) -> str:
        return hashlib.sha1(job[1] + b"\0" + job[2].encode() + b"\0" + (job[3] or "").encode()).hexdigest()

    todo = [j for j in jobs if digest(j) not in entries]
    digests = {j[0]: digest(j) for j in jobs}
    if todo:
        logger.info("counting %d pages (%d cached)", len(todo), len(jobs) - len(todo))
        if workers > 1 and len(todo) > 4:
            with ProcessPoolExecutor(workers) as pool:
                results = list(pool.map(_count_job, todo, chunksize=4))
        else:
            results = [_count_job(j) for j in todo]
        for key, counts, errors in results:
            entries[digests[key]] = {"counts": counts, "errors": errors}
        if cache_file is not None:
            cache_file.parent.mkdir(parents=True, exist_ok=True)
            tmp = cache_file.with_suffix(".tmp")
            tmp.write_text(json.dumps(cache))
            tmp.replace(cache_file)
    failed: dict[str, list[str]] = {}
    for key, _, _, _ in jobs:
        entry = entries[digests[key]]
        web.detail[key] = entry["counts"]
        web.counts[key] = entry["counts"]["total"]
        if entry["errors"]:
            failed[key] = entry["errors"]
    return {"counted": len(todo), "cached": len(jobs) - len(todo), "errors": failed}


def verify_sample(web: Web, n: int, seed: int = 0) -> list[dict[str, Any]]:
    """Count ``n`` random generated pages in full (their own URL and links) and compare
    with their template's count; returns one record per page (``equal`` flag)."""
    rng = random.Random(seed)
    generated = sorted(u for u, node in web.nodes.items() if node.template is not None)
    out = []
    for url in rng.sample(generated, min(n, len(generated))):
        node = web.nodes[url]
        template = web.templates[node.template]  # type: ignore[index]
        counts, _ = semantic_counts(web.body_of(url), url, template.content_type)
        out.append({
            "url": url, "template": node.template, "page": counts["total"],
            "template_count": web.counts[node.template],  # type: ignore[index]
            "equal": counts == web.detail[node.template],  # type: ignore[index]
        })
    return out


def corpus_pages(corpus: Path, work: Path, flink: bool,
                 hosts: Iterable[str] | None = None) -> tuple[list[RealPage], Path | None]:
    """The real pages of ``corpus`` (a ``corpus_dir``) and flink's site folder (None
    without flink), unpacked under ``work``/corpus; ``hosts``: only these hosts' pages
    (a hold-out web, ``split_hosts``)."""
    pages_dir, flink_dir = unpack_corpus(corpus, work / "corpus", flink)
    pages = real_pages(pages_dir)
    if hosts is not None:
        keep = set(hosts) | {FLINK_HOST}  # flink is never split off (it is not a generated site)
        pages = [p for p in pages if p.host in keep]
        if not pages:
            raise ValueError(f"none of the {len(keep) - 1} hosts asked for has a page in {corpus}")
    return pages, flink_dir


def corpus_hosts(corpus: Path | None, work: Path) -> list[str]:
    """Every host of a real page of the corpus but flink's: the generated sites."""
    pages, _ = corpus_pages(corpus_dir(corpus, flink=False), work, flink=False)
    return sorted({p.host for p in pages if p.host != FLINK_HOST})


HOLD_SPLIT_SEED = 12345  # the split every hold-out figure of bench/README.md was made with


def split_hosts(hosts: Iterable[str], seed: int = HOLD_SPLIT_SEED) -> dict[str, list[str]]:
    """The corpus' hosts in two seeded random halves, ``a`` and ``b``: a web of ``b`` has other
    sites, templates and values, as a web built from another corpus would."""
    shuffled = sorted(set(hosts) - {FLINK_HOST})
    random.Random(seed).shuffle(shuffled)
    half = len(shuffled) // 2
    return {"a": sorted(shuffled[:half]), "b": sorted(shuffled[half:])}


def hold_halves(corpus: Path | None, work: Path, seed: int = HOLD_SPLIT_SEED) -> dict[str, list[str]]:
    """The corpus' hosts split for ``--hold a|b`` (``split_hosts`` of ``corpus_hosts``)."""
    return split_hosts(corpus_hosts(corpus, work), seed)


def load_web(params: WebParams, corpus: Path | None, work: Path, hosts: Iterable[str] | None = None) -> Web:
    """Unpack the corpus under ``work`` and build the web (no counting); ``hosts``: from
    these hosts' pages only."""
    return build_web(*corpus_pages(corpus_dir(corpus, params.flink), work, params.flink, hosts), params)


def load_counted_web(params: WebParams, corpus: Path | None, work: Path, workers: int = 1,
                     hosts: Iterable[str] | None = None) -> tuple[Web, dict[str, Any]]:
    """Unpack the corpus under ``work``, build the web and count it (``build_counted_web``;
    the count cache is ``work``/true-counts.json); ``hosts``: from these hosts' pages only."""
    pages, flink_dir = corpus_pages(corpus_dir(corpus, params.flink), work, params.flink, hosts)
    return build_counted_web(pages, flink_dir, params, work / "true-counts.json", workers)


def served_hosts(web: Web) -> set[str]:
    return set(web.site_templates) | ({FLINK_HOST} if web.flink_root is not None else set())
