"""The local webs of bench/throughput.py, all served by nginx (bench/serve.py).

* ``synthetic``: bench/serve.py's site as it is (``make_site``): N light pages
  (~15 KB, realistic heads with meta, OpenGraph, Twitter, Dublin Core, a JSON-LD block,
  microdata ``itemscope``), 36 body links each.
* ``real``: the 600 pages of ``real-pages.tar.gz`` under one host, each keeping its own
  HTML, with three additions so that every page is reachable and nothing leaves the
  host:

  - ``<base href="ORIGINAL URL">`` inserted right after ``<head…>`` (or ``<html…>``, or
    at the start): the page's own relative links resolve to its original host, which
    every config leaves out of scope, instead of to 127.0.0.1 (where they would 404).
    (``hard::…`` manifest entries get ``http://<file>.invalid/``.) A page that has its
    own ``<base>`` keeps it, after ours: the first one wins, as in browsers.
  - four links appended before the last ``</body>`` (``testbed/corpus.py``'s
    ``_add_links``): the index, the page's hub, the previous and the next page;
  - served at ``/u/<host>/<k>.html`` (UTF-8 bodies, sent with ``charset=utf-8``) or
    ``/r/<host>/<k>.html`` (other encodings, sent as ``text/html`` without charset so
    the page's own ``<meta charset>`` decides, as testbed/corpus.py does). The
    host in the path keeps URL shapes apart (SpiTag's spider-trap guard counts layers
    per shape).

  ``/`` lists the hubs; hub ``/hub/<h>.html`` lists 50 pages and every other hub. So
  every page is at depth 2 from the seed whatever the page itself says (robots
  ``nofollow``, no ``</body>``...).

* ``hosts``: real sites and real heavy pages under several hundred host names
  (bench/throughput_hosts.py), crawled through nginx as the HTTP proxy, 1,000
  responses a crawl.

Each ``Web`` of one host knows the set of paths a full crawl must answer 200
(``expected``); the ``hosts`` web, each page's true semantic count (``values``).
"""

from __future__ import annotations

import json
import re
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
for _p in (str(REPO), str(BENCH)):
    if _p not in sys.path:
        sys.path.insert(0, _p)

import serve  # noqa: E402
from serve import Nginx, make_site  # noqa: E402
from throughput_hosts import HostsNginx, build  # noqa: E402
from testbed.corpus import PAGES_ARCHIVE, _add_links, unpack  # noqa: E402

HUB_SIZE = 50
STAMP_VERSION = "throughput-real-2"
PORT_PLACEHOLDER = "http://127.0.0.1:1/"  # in the real pages' appended links; the real port at serve time


@dataclass
class Web:
    name: str
    root: Path
    expected: set[str]  # paths a full crawl answers 200 (robots.txt aside)
    info: dict = field(default_factory=dict)
    template: Path | None = None  # pages with PORT_PLACEHOLDER in their links, copied to root at start
    nginx: Nginx | None = None
    seeds: list[str] = field(default_factory=list)  # a web of many hosts: its seeds, reached through nginx
    values: dict[str, int] = field(default_factory=dict)  # "host/path" → true semantic count (hosts web)

    @property
    def seed(self) -> str:
        assert self.nginx is not None
        return ",".join(self.seeds) if self.seeds else self.nginx.base_url + "/"

    @property
    def proxy(self) -> str | None:
        """The HTTP proxy its crawlers go through (the web of many hosts), or None."""
        return self.nginx.base_url if self.seeds and self.nginx is not None else None

    def start(self) -> Web:
        self.root.mkdir(parents=True, exist_ok=True)
        self.nginx = (HostsNginx if self.seeds else RawCharsetNginx)(self.root).start()
        try:
            if self.template is not None:  # absolute links need the port nginx got
                here = (self.nginx.base_url + "/").encode()
                for src in self.template.rglob("*.html"):
                    if not src.is_file():
                        continue
                    dest = self.root / src.relative_to(self.template)
                    dest.parent.mkdir(parents=True, exist_ok=True)
                    dest.write_bytes(src.read_bytes().replace(PORT_PLACEHOLDER.encode(), here))
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        if self.nginx is not None:
            self.nginx.cleanup()
            self.nginx = None


class RawCharsetNginx(Nginx):
    """bench/serve.py's nginx, plus ``location /r/ { charset off; }``: pages that are not
    UTF-8 are sent as plain ``text/html`` (their ``<meta charset>`` decides)."""

    def start(self) -> Nginx:
        original = serve.CONF
        marker = "location / {{ try_files $uri $uri/ =404; }}"
        assert marker in original, "bench/serve.py's nginx.conf changed"
        serve.CONF = original.replace(marker, marker + "\n        location /r/ {{ charset off; try_files $uri =404; }}")
        try:
            return super().start()
        finally:
            serve.CONF = original


# ----------------------------------------------------------------------- synthetic


def synthetic_web(root: Path, pages: int) -> Web:
    plan = make_site(root, pages)
    sizes = [(root / plan.file(i)).stat().st_size for i in range(0, pages, max(pages // 100, 1))]
    return Web("synthetic", root, set(plan.paths()),
               {"pages": pages, "mean_bytes_sampled": sum(sizes) / len(sizes), "site": str(root)})


# ---------------------------------------------------------------------------- real

_HEAD = re.compile(rb"<head(?:\s[^>]*)?>", re.I)
_HTML = re.compile(rb"<html(?:\s[^>]*)?>", re.I)
_HOST_SAFE = re.compile(r"[^a-z0-9.-]")


def _insert_base(body: bytes, base: str) -> bytes:
    tag = b'<base href="' + base.replace('"', "%22").encode("ascii", "ignore") + b'">'
    for pattern in (_HEAD, _HTML):
        m = pattern.search(body, 0, 200_000)
        if m:
            return body[: m.end()] + tag + body[m.end():]
    return tag + body


def _is_utf8(body: bytes) -> bool:
    try:
        body.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _hub_html(title: str, hrefs: list[tuple[str, str]]) -> str:
    items = "".join(f'<li><a href="{h}">{t}</a></li>\n' for h, t in hrefs)
    return (f"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{title}</title></head>\n"
            f"<body><h1>{title}</h1><ul>\n{items}</ul></body></html>\n")


def real_web(work: Path, corpus: Path) -> Web:
    """Build (once; reused when complete) the crawlable web of the corpus' real pages:
    templates in ``work/tmpl``, served from ``work/www``."""
    archive = corpus / PAGES_ARCHIVE
    stamp = work / ".complete"
    meta_file = work / ".web.json"
    if stamp.exists() and stamp.read_text() == STAMP_VERSION and meta_file.exists():
        info = json.loads(meta_file.read_text())
        return Web("real", work / "www", set(info.pop("expected")), info, template=work / "tmpl")
    if work.exists():
        shutil.rmtree(work)
    root = work / "tmpl"
    root.mkdir(parents=True)
    folder = unpack(archive, work / ".unpacked")
    if not (folder / "manifest.jsonl").exists() and (folder / "pages" / "manifest.jsonl").exists():
        folder = folder / "pages"
    entries = [json.loads(line) for line in (folder / "manifest.jsonl").read_text(encoding="utf-8").splitlines() if line.strip()]
    per_host: dict[str, int] = {}
    pages: list[tuple[str, str, bytes]] = []  # (path, base, body)
    for e in entries:
        body = (folder / e["file"]).read_bytes()
        url = e["url"].strip()
        parts = urlsplit(url)
        if parts.scheme in ("http", "https") and parts.hostname:
            host, base = parts.hostname.lower(), url
        else:  # hard::… and xhttps://… entries: a base nobody can reach
            host = _HOST_SAFE.sub("-", e["file"].lower())[:60]
            base = f"http://{host}.invalid/"
        host = _HOST_SAFE.sub("-", host)
        k = per_host.get(host, 0)
        per_host[host] = k + 1
        kind = "u" if _is_utf8(body) else "r"
        pages.append((f"/{kind}/{host}/{k}.html", base, body))
    n = len(pages)
    hubs = [f"/hub/{h}.html" for h in range((n + HUB_SIZE - 1) // HUB_SIZE)]
    sizes = []
    for i, (path, base, body) in enumerate(pages):
        hub = hubs[i // HUB_SIZE]
        links = ["/", hub, pages[(i - 1) % n][0], pages[(i + 1) % n][0]]
        # absolute (the page's <base> points elsewhere); the port is set at serve time
        hrefs = [PORT_PLACEHOLDER + p.lstrip("/") for p in links]
        served = _add_links(_insert_base(body, base), hrefs)
        target = root / path.lstrip("/")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(served)
        sizes.append(len(served))
    for h, hub in enumerate(hubs):
        listed = [(p, f"page {h * HUB_SIZE + j}") for j, (p, _, _) in enumerate(pages[h * HUB_SIZE:(h + 1) * HUB_SIZE])]
        listed += [(o, f"hub {j}") for j, o in enumerate(hubs) if o != hub] + [("/", "home")]
        (root / hub.lstrip("/")).parent.mkdir(parents=True, exist_ok=True)
        (root / hub.lstrip("/")).write_text(_hub_html(f"Hub {h}", listed), encoding="utf-8")
    (root / "index.html").write_text(_hub_html("Real pages", [(h, f"hub {j}") for j, h in enumerate(hubs)]),
                                     encoding="utf-8")
    shutil.rmtree(work / ".unpacked", ignore_errors=True)
    expected = ["/"] + hubs + [p for p, _, _ in pages]
    info = {"pages": n, "hubs": len(hubs), "mean_bytes": sum(sizes) / n, "total_mb": sum(sizes) / 1e6,
            "not_utf8": sum(1 for p, _, _ in pages if p.startswith("/r/")), "site": str(work)}
    meta_file.write_text(json.dumps({**info, "expected": expected}))
    stamp.write_text(STAMP_VERSION)
    return Web("real", work / "www", set(expected), info, template=root)




# --------------------------------------------------------------------------- hosts


def hosts_web(work: Path, corpus: Path) -> Web:
    """The web of many hosts (bench/throughput_hosts.py), built once under ``work``."""
    info = build(work, corpus)
    values = info.pop("values")
    return Web("hosts", Path(info["site"]), set(), info, seeds=info["seeds"], values=values)
