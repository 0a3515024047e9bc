"""A static benchmark site on disk, served by Debian's nginx on 127.0.0.1.

    python bench/serve.py [--pages 5000] [--root DIR]     # generate, serve until Ctrl-C

Benchmarks need a web server that is never the bottleneck and that logs when each
request came: nginx (``apt-get install -y nginx``) runs from a temporary folder with
its own config — ``daemon off``, a free port, no default site, an access log of
``$msec $request_time $status $body_bytes_sent $request_uri`` — and is stopped at the
end. One host only (``127.0.0.1:PORT``).

The site is a tree of ``pages`` pages (page i links to its children ``8i+1 … 8i+8``)
with what real article pages carry besides: a head of ~2 KB (meta, OpenGraph,
Twitter, JSON-LD, stylesheets), a navigation bar and a footer linking to the same
top pages everywhere, breadcrumbs, related articles, ~15 KB in all. Every link
points to an existing page, so a full crawl requests each page exactly once.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass
from html import escape
from pathlib import Path

SECTIONS = ("news", "world", "business", "culture", "science", "sport", "travel", "opinion")
WORDS = (
    "the a of and to in that is for on with as was at by from it an be this are which or "
    "has have had were their been more one all would there can new first after also into "
    "city market report government season research study team people world local data "
    "festival music energy climate election court health school policy company museum "
    "river council budget players museum archive history analysis interview review "
    "community transport housing science technology garden harbour library station"
).split()


@dataclass(frozen=True)
class SitePlan:
    pages: int
    fanout: int = 8
    nav: int = 10  # top pages linked from every page's header
    related: int = 5
    size: int = 15_000  # target bytes per page

    def path(self, i: int) -> str:
        """``/`` for page 0, else a realistic article path (40–60 characters)."""
        if i == 0:
            return "/"
        section = SECTIONS[i % len(SECTIONS)]
        rnd = random.Random(i)
        slug = "-".join(rnd.choice(WORDS) for _ in range(3 + i % 3))
        return f"/{section}/{2015 + i % 10}/{1 + i % 12:02d}/{slug}-{i}.html"

    def file(self, i: int) -> str:
        return "index.html" if i == 0 else self.path(i).lstrip("/")

    def children(self, i: int) -> list[int]:
        return [c for c in range(self.fanout * i + 1, self.fanout * i + self.fanout + 1) if c < self.pages]

    def parent(self, i: int) -> int | None:
        return None if i == 0 else (i - 1) // self.fanout

    def paths(self) -> list[str]:
        return [self.path(i) for i in range(self.pages)]


def _words(rnd: random.Random, n: int) -> str:
    return " ".join(rnd.choice(WORDS) for _ in range(n))


def page_html(plan: SitePlan, i: int) -> str:
    rnd = random.Random(1_000_003 * i + 7)
    title = _words(rnd, 6).capitalize()
    path = plan.path(i)
    desc = _words(rnd, 25)
    head = f"""<!DOCTYPE html>
<html lang="en"><head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{escape(title)} | Bench Daily</title>
<meta name="description" content="{desc}">
<meta name="author" content="Bench Newsroom">
<meta name="robots" content="index, follow">
<link rel="canonical" href="{path}">
<link rel="stylesheet" href="/static/site.css">
<link rel="preload" href="/static/font.woff2" as="font" crossorigin>
<meta property="og:type" content="article">
<meta property="og:title" content="{escape(title)}">
<meta property="og:description" content="{desc}">
<meta property="og:url" content="{path}">
<meta property="og:site_name" content="Bench Daily">
<meta name="twitter:card" content="summary_large_image">
<meta name="twitter:title" content="{escape(title)}">
<meta name="twitter:site" content="@benchdaily">
<meta name="DC.title" content="{escape(title)}">
<script type="application/ld+json">{{"@context": "https://schema.org", "@type": "NewsArticle",
 "headline": "{escape(title)}", "datePublished": "2024-0{1 + i % 9}-1{i % 10}T08:00:00Z",
 "author": {{"@type": "Person", "name": "Bench Newsroom"}},
 "publisher": {{"@type": "Organization", "name": "Bench Daily"}}, "description": "{desc}"}}</script>
<script>window.dataLayer = window.dataLayer || []; function gtag(){{dataLayer.push(arguments);}}</script>
</head>"""
    nav = "".join(f'<li><a href="{plan.path(n)}">{SECTIONS[n % len(SECTIONS)]}</a></li>'
                  for n in range(min(plan.nav, plan.pages)))
    crumbs = []
    p = plan.parent(i)
    while p is not None:
        crumbs.append(f'<a href="{plan.path(p)}">up {p}</a>')
        p = plan.parent(p)
    children = "".join(f'<li><a href="{plan.path(c)}">{_words(rnd, 5)}</a></li>' for c in plan.children(i))
    related = "".join(
        f'<li><a href="{plan.path(r)}">{_words(rnd, 4)}</a></li>'
        for r in sorted({(i + d) % plan.pages for d in range(1, plan.related + 1)} - {i})
    )
    footer = "".join(f'<a href="{plan.path(n)}">{_words(rnd, 2)}</a> '
                     for n in range(min(plan.nav, plan.pages)))
    top = (f'{head}\n<body><header><a href="/">Bench Daily</a><nav><ul>{nav}</ul></nav></header>\n'
           f'<main><div class="crumbs">{" › ".join(reversed(crumbs))}</div>'
           f'<article itemscope itemtype="https://schema.org/Article"><h1 itemprop="headline">{escape(title)}</h1>\n')
    bottom = (f'</article>\n<aside><h2>Read more</h2><ul>{children}</ul><h2>Related</h2><ul>{related}</ul></aside></main>\n'
              f'<footer>{footer}<p>© Bench Daily</p></footer></body></html>\n')
    paras = []
    used = len(top) + len(bottom)
    while used < plan.size:
        para = f"<p>{_words(rnd, 60).capitalize()}.</p>\n"
        paras.append(para)
        used += len(para)
    return top + "".join(paras) + bottom


def make_site(root: Path, pages: int) -> SitePlan:
    """Write the site under ``root`` (reused when already complete)."""
    plan = SitePlan(pages)
    stamp = root / ".complete"
    if stamp.exists() and stamp.read_text() == str(pages):
        return plan
    if root.exists():
        shutil.rmtree(root)
    for i in range(pages):
        target = root / plan.file(i)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(page_html(plan, i), encoding="utf-8")
    stamp.write_text(str(pages))
    return plan


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


CONF = """\
worker_processes {workers};
daemon off;
pid {dir}/nginx.pid;
error_log {dir}/error.log warn;
{user}
events {{ worker_connections 1024; }}
http {{
    types {{ text/html html; text/plain txt; }}
    default_type application/octet-stream;
    charset utf-8;
    log_format bench '$msec $request_time $status $body_bytes_sent $request_uri';
    access_log {dir}/access.log bench;
    client_body_temp_path {dir}/tmp-body;
    proxy_temp_path {dir}/tmp-proxy;
    fastcgi_temp_path {dir}/tmp-fastcgi;
    uwsgi_temp_path {dir}/tmp-uwsgi;
    scgi_temp_path {dir}/tmp-scgi;
    sendfile on;
    tcp_nopush on;
    keepalive_timeout 65;
    keepalive_requests 1000000;
    server_tokens off;
    server {{
        listen 127.0.0.1:{port} default_server;
        server_name _;
        root {root};
        index index.html;
        location / {{ try_files $uri $uri/ =404; }}
    }}
}}
"""


@dataclass
class LogLine:
    start: float  # $msec − $request_time: when the request arrived
    end: float  # $msec: when the answer was sent
    status: int
    bytes: int
    path: str


class Nginx:
    """nginx serving ``root`` on 127.0.0.1:``port``; ``log(since)`` reads the access log."""

    def __init__(self, root: Path, workers: int = 2) -> None:
        binary = shutil.which("nginx") or ("/usr/sbin/nginx" if os.path.exists("/usr/sbin/nginx") else None)
        if binary is None:
            raise RuntimeError("nginx not found: apt-get install -y nginx")
        self.binary = binary
        self.root = Path(root).resolve()
        self.workers = workers
        self.dir = Path(tempfile.mkdtemp(prefix="spitag-nginx-"))
        self.port = 0
        self.proc: subprocess.Popen | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> Nginx:
        self.port = free_port()
        user = "user root;" if os.geteuid() == 0 else ""  # workers must read files under /tmp
        conf = CONF.format(workers=self.workers, dir=self.dir, user=user, port=self.port, root=self.root)
        (self.dir / "nginx.conf").write_text(conf)
        self.proc = subprocess.Popen(
            [self.binary, "-p", str(self.dir), "-c", str(self.dir / "nginx.conf"), "-e", str(self.dir / "error.log")],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 10
        while True:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.2):
                    break
            except OSError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    err = (self.dir / "error.log").read_text() if (self.dir / "error.log").exists() else ""
                    self.stop()
                    raise RuntimeError(f"nginx did not start: {err[-2000:]}") from None
                time.sleep(0.05)
        return self

    def pids(self) -> list[int]:
        """The master and its worker processes."""
        if self.proc is None:
            return []
        out = [self.proc.pid]
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                try:
                    stat = Path(f"/proc/{entry}/stat").read_text()
                except OSError:
                    continue
                if int(stat.rsplit(")", 1)[1].split()[1]) == self.proc.pid:
                    out.append(int(entry))
        return out

    def log_offset(self) -> int:
        path = self.dir / "access.log"
        return path.stat().st_size if path.exists() else 0

    def log(self, since: int = 0) -> list[LogLine]:
        path = self.dir / "access.log"
        if not path.exists():
            return []
        with path.open("rb") as f:
            f.seek(since)
            data = f.read().decode("utf-8", "replace")
        out = []
        for line in data.splitlines():
            parts = line.split(" ", 4)
            if len(parts) == 5:
                msec, rt = float(parts[0]), float(parts[1])
                out.append(LogLine(msec - rt, msec, int(parts[2]), int(parts[3]), parts[4]))
        return out

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGQUIT)  # graceful: finish, then exit
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        self.proc = None

    def cleanup(self) -> None:
        self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self) -> Nginx:
        return self.start()

    def __exit__(self, *_: object) -> None:
        self.cleanup()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=5000)
    parser.add_argument("--root", type=Path, default=Path(tempfile.gettempdir()) / "spitag-bench-site")
    args = parser.parse_args()
    plan = make_site(args.root, args.pages)
    sizes = [os.path.getsize(args.root / plan.file(i)) for i in range(0, plan.pages, max(plan.pages // 50, 1))]
    with Nginx(args.root) as server:
        print(f"{plan.pages} pages (~{sum(sizes) // len(sizes)} bytes each) in {args.root}")
        print(f"serving {server.base_url}/  (access log {server.dir / 'access.log'}); Ctrl-C stops")
        try:
            while server.proc and server.proc.poll() is None:
                time.sleep(0.5)
        except KeyboardInterrupt:
            pass


if __name__ == "__main__":
    main()
