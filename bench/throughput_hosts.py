"""The multi-host web of bench/throughput.py: real sites and real heavy pages under
their own host names, served by one nginx that the crawlers use as their HTTP proxy.

* the 20 whole websites of ``real-sites.tar.xz`` (bench/realweb.py: their own pages,
  paths and internal links, and the links between sites of its model, locality 0.3);
* the 600 pages of ``real-pages.tar.gz``, each under its own host name (the host of
  its original URL) at ``/page<k>.html``, heavy as they were (~300 KB on average);
  each links to two other such pages and to one page of a site, and every site page
  links to one such page with probability one half: a web of several hundred hosts
  where the rich and heavy pages are a few links away and a crawler's order matters.

Every host has a ``robots.txt`` (its own, when the site has one). Links to ``https://``
are made ``http://`` (nginx serves no TLS; nothing leaves 127.0.0.1), and a link to
anything this web does not serve (the single pages' links to the rest of their sites,
links to hosts outside the web) becomes ``href="#"``: the web is closed, so a crawl's
responses are its pages and their robots.txt, not a stream of 404s.

nginx serves ``<www>/$host`` and logs ``$host$request_uri``, so the benchmark knows
which page of which host each answer was. ``values`` holds each HTML page's true
semantic count (bench/webgen.py's ``semantic_counts``, the benchmark's own function,
the same for every config), keyed ``host/path``.
"""

from __future__ import annotations

import json
import random
import re
import shutil
import sys
import tempfile
from concurrent.futures import ProcessPoolExecutor
from html import unescape
from pathlib import Path
from typing import Any
from urllib.parse import urljoin, urlsplit

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
for _p in (str(REPO), str(BENCH)):
    if _p not in sys.path:
        sys.path.insert(0, _p)

import serve  # noqa: E402
from realweb import _HREF, LinkModel, RealWeb, manifest, unpack, with_links  # noqa: E402
from serve import Nginx  # noqa: E402
from webgen import poisson, semantic_counts  # noqa: E402

from spitag.extract import SYNTAXES  # noqa: E402
from testbed.corpus import PAGES_ARCHIVE  # noqa: E402
from testbed.corpus import unpack as unpack_pages  # noqa: E402

STAMP_VERSION = "throughput-hosts-2"
ROBOTS = b"User-agent: *\nDisallow: /private/\n"
_HOST_SAFE = re.compile(r"^[a-z0-9.-]+$")
_TITLE = re.compile(rb"<title[^>]*>(.*?)</title>", re.I | re.S)
HTML_SUFFIXES = (".html", ".htm")


class HostsNginx(Nginx):
    """bench/serve.py's nginx with a folder per host name (``root <www>/$host``), the
    host in the access log, and no charset added (each page's own decides)."""

    def start(self) -> Nginx:
        original = serve.CONF
        conf = original.replace("root {root};", "root {root}/$host;").replace("    charset utf-8;\n", "")
        conf = conf.replace("$body_bytes_sent $request_uri'", "$body_bytes_sent $host$request_uri'")
        assert conf.count("$host") == 2 and "charset" not in conf, "bench/serve.py's nginx.conf changed"
        serve.CONF = conf
        try:
            return super().start()
        finally:
            serve.CONF = original


def page_key(logged: str) -> str:
    """``host/path`` of an access-log entry, as ``values`` keys it (``/x/`` → ``/x/index.html``)."""
    key = logged.split("?", 1)[0]
    return key + "index.html" if key.endswith("/") else key


def _title(body: bytes, fallback: str) -> str:
    m = _TITLE.search(body[:200_000])
    text = m.group(1).decode("utf-8", "replace").strip()[:80] if m else ""
    return text or fallback


def _served_key(url: str) -> str | None:
    """``host/path`` of an http(s) URL, as the web's files are keyed (``/x/`` → ``/x/index.html``)."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return None
    path = parts.path or "/"
    return f"{parts.hostname.lower()}{path}index.html" if path.endswith("/") else f"{parts.hostname.lower()}{path}"


def close_links(body: bytes, url: str, served: set[str]) -> bytes:
    """``body`` (of the page at ``url``) with every href to what ``served`` lacks made ``#``."""
    def swap(m: re.Match[bytes]) -> bytes:
        raw = m.group(2)
        value = raw[1:-1] if raw[:1] in (b'"', b"'") else raw
        text = unescape(value.decode("utf-8", "replace")).strip()
        if not text or text.startswith("#"):
            return m.group(0)
        try:
            key = _served_key(urljoin(url, text))
        except ValueError:
            key = None
        if key is None and not text.lower().startswith(("http:", "https:", "//")) and ":" in text.split("/", 1)[0]:
            return m.group(0)  # mailto:, javascript:… (no crawler follows them)
        if key is not None and (key in served or key + "/index.html" in served):
            return m.group(0)
        return m.group(1) + b'"#"'

    return _HREF.sub(swap, body)


def _count(job: tuple[bytes, str]) -> int:
    counts, _ = semantic_counts(job[0], job[1], "text/html")  # sent without a charset, as nginx does here
    return sum(counts.get(s, 0) for s in SYNTAXES)


def build(work: Path, corpus: Path, seed: int = 7) -> dict[str, Any]:
    """Write the web under ``work/www`` (once; reused when complete) and return its
    description: seeds, pages, hosts, sizes and ``values``."""
    stamp, meta_file = work / ".complete", work / ".web.json"
    if stamp.exists() and stamp.read_text() == STAMP_VERSION and meta_file.exists():
        return json.loads(meta_file.read_text())
    if work.exists():
        shutil.rmtree(work)
    www = work / "www"
    www.mkdir(parents=True)
    rng = random.Random(f"hosts:{seed}")
    top = unpack(corpus, work / ".sites")
    site_hosts = sorted(s["host"] for s in manifest(top))
    web = RealWeb(top, site_hosts, LinkModel(seed=seed, locality=0.3),
                  counts_cache=Path(tempfile.gettempdir()) / "spitag-bench" / "real-sites-counts.json")

    folder = unpack_pages(corpus / PAGES_ARCHIVE, work / ".pages")
    if not (folder / "manifest.jsonl").exists():
        folder = folder / "pages"
    loose: list[tuple[str, bytes]] = []  # (url, body) of the single pages
    taken: dict[str, int] = {}
    for line in (folder / "manifest.jsonl").read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        entry = json.loads(line)
        host = (urlsplit(entry["url"].strip()).hostname or "").lower()
        if not _HOST_SAFE.match(host) or host in site_hosts:
            continue
        k = taken[host] = taken.get(host, -1) + 1
        loose.append((f"http://{host}/page{k}.html", (folder / entry["file"]).read_bytes()))
    site_pages = [(h, key) for h in site_hosts for key in web.pages[h] if (h, key) not in web.aliases]

    served = {f"{urlsplit(url).hostname}{urlsplit(url).path}" for url, _ in loose}
    served.update(f"{h}{path}" for h in site_hosts for path in web.directories[h].paths() if not path.endswith("/"))

    def http_only(body: bytes) -> bytes:
        return body.replace(b"https://", b"http://")

    values: dict[str, int] = {}
    sizes: list[int] = []
    jobs: list[tuple[str, bytes, str]] = []
    for i, (url, body) in enumerate(loose):
        links = [(u, _title(b, u)) for u, b in rng.sample(loose[:i] + loose[i + 1:], 2)]
        host, key = rng.choice(site_pages)
        links.append((web.url(host, key), web.titles.get((host, key)) or host))
        page = close_links(with_links(http_only(body), links), url, served)
        parts = urlsplit(url)
        _write(www / parts.hostname / parts.path.lstrip("/"), page)
        jobs.append((f"{parts.hostname}{parts.path}", page, url))
    for host in site_hosts:
        directory = web.directories[host]
        for path in directory.paths():
            if path.endswith("/"):
                continue
            body = web.sites[host].respond(path).body
            if path.lower().endswith(HTML_SUFFIXES):
                body = http_only(body)
                if rng.random() < 0.5:
                    url, page = rng.choice(loose)
                    body = with_links(body, [(url, _title(page, url))])
                body = close_links(body, f"http://{host}{path}", served)
                if (host, path) in web.detail:
                    values[f"{host}{path}"] = sum(web.detail[host, path].get(s, 0) for s in SYNTAXES)
                    sizes.append(len(body))
            _write(www / host / path.lstrip("/"), body)
    with ProcessPoolExecutor(2) as pool:
        for (key, page, _), value in zip(jobs, pool.map(_count, [(b, u) for _, b, u in jobs], chunksize=8)):
            values[key] = value
            sizes.append(len(page))
    for host_dir in www.iterdir():
        robots = host_dir / "robots.txt"
        if not robots.exists():
            robots.write_bytes(ROBOTS)
    shutil.rmtree(work / ".pages", ignore_errors=True)
    info = {
        "seeds": web.seeds + [loose[0][0]],
        "hosts": sum(1 for _ in www.iterdir()), "pages": len(values), "site_pages": len(site_pages),
        "loose_pages": len(loose), "mean_bytes": sum(sizes) / len(sizes), "total_mb": sum(sizes) / 1e6,
        "values": values, "site": str(www),
    }
    meta_file.write_text(json.dumps(info))
    stamp.write_text(STAMP_VERSION)
    return info


def _write(path: Path, body: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(body)
