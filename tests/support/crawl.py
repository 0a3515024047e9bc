"""Run ``scrapy crawl spitag`` as a user does (a real subprocess) and read what it left.

The crawl goes through a testbed.webserver.WebServer acting as the HTTP proxy,
so sites are served under their own host names without any network. What a test
checks afterwards is what a user has: the exit code, stderr (the log), the ``-O``
JSON lines, the store (an SQLite file, read here with plain SQL) and the server's
request log.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
import sys
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence
from urllib.parse import urljoin, urlsplit

import lxml.html

from spitag.urls import try_normalize

from testbed.webserver import LogEntry, WebServer

REPO = Path(__file__).resolve().parents[2]  # where scrapy.cfg is
CRAWL_TIMEOUT = 300.0  # seconds: a hung crawl fails its test instead of hanging the suite
ERROR_PREFIX = "spitag: error:"

DEFAULT_STORE = Path("<crawl name>.db")  # run_crawl's default: a store file in tmp

_RECORD_START = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d \[", re.M)
_STAT = re.compile(r"^[ {]'([^']+)': (.*?),?}?$")


def sqlite_url(path: Path) -> str:
    """``sqlite:////abs/path.db`` for an absolute path."""
    return f"sqlite:///{Path(path).resolve()}"


def proxy_env(server: WebServer | None, extra: Mapping[str, str | None] | None = None) -> dict[str, str]:
    """The environment of a crawl: our proxy for http and https, nothing bypassing it.

    ``extra`` adds variables; a None value removes one.
    """
    env = dict(os.environ)
    for name in ("no_proxy", "NO_PROXY", "http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY"):
        env.pop(name, None)
    for name in [n for n in env if n.startswith("SPITAG_")]:
        env.pop(name)  # the developer's own SPITAG_* must not change what a test runs
    if server is not None:
        env["http_proxy"] = env["https_proxy"] = server.proxy_url
    for name, value in (extra or {}).items():
        if value is None:
            env.pop(name, None)
        else:
            env[name] = value
    return env


@dataclass
class CrawlRun:
    """What one ``scrapy crawl spitag`` left behind."""

    command: list[str]
    returncode: int
    stderr: str
    out: Path
    store: Path | None
    server_log: list[LogEntry] = field(default_factory=list)

    @cached_property
    def items(self) -> list[dict[str, Any]]:
        """The ``-O`` JSON lines."""
        return read_jsonl(self.out)

    @cached_property
    def items_by_url(self) -> dict[str, dict[str, Any]]:
        return {item["url"]: item for item in self.items}

    @cached_property
    def stats(self) -> dict[str, str]:
        """The final stats dump (``Dumping Scrapy stats``), values as printed."""
        return parse_stats(self.stderr)

    def error_lines(self) -> list[str]:
        return [line for line in self.stderr.splitlines() if line.startswith(ERROR_PREFIX)]

    def connect(self) -> sqlite3.Connection:
        """The store, read-only."""
        assert self.store is not None and self.store.exists(), f"no store file {self.store}"
        return sqlite3.connect(f"file:{self.store}?mode=ro", uri=True)

    def describe(self) -> str:
        """For assertion messages: the command and the end of its log."""
        tail = "\n".join(self.stderr.splitlines()[-40:])
        return f"$ {' '.join(self.command)}\nexit {self.returncode}\n... stderr tail:\n{tail}"


def crawl_command(
    seeds: str | None,
    out: Path,
    *,
    store: Path | str | None,
    frontier: Path,
    settings: Mapping[str, Any] | None = None,
    crawl: str | None = None,
    spider: str = "spitag",
) -> list[str]:
    """The command line; ``store`` None leaves SPITAG_STORE to the environment/defaults,
    a str is passed verbatim (for bad values), a Path becomes ``sqlite:////abs``."""
    cmd = [sys.executable, "-m", "scrapy", "crawl", spider]
    if seeds is not None:
        cmd += ["-a", f"seeds={seeds}"]
    if crawl is not None:
        cmd += ["-a", f"crawl={crawl}"]
    cmd += ["-O", str(out)]
    if store is not None:
        value = store if isinstance(store, str) else sqlite_url(store)
        cmd += ["-s", f"SPITAG_STORE={value}"]
    cmd += ["-s", f"SPITAG_FRONTIER={sqlite_url(frontier)}"]
    for name, value in (settings or {}).items():
        cmd += ["-s", f"{name}={value}"]
    return cmd


def run_crawl(
    server: WebServer | None,
    tmp: Path,
    seeds: str | None,
    *,
    store: Path | str | None = DEFAULT_STORE,
    settings: Mapping[str, Any] | None = None,
    crawl: str | None = None,
    env: Mapping[str, str | None] | None = None,
    name: str = "crawl",
    timeout: float = CRAWL_TIMEOUT,
    spider: str = "spitag",
) -> CrawlRun:
    """Run one crawl to its end in ``tmp``: ``<name>.jsonl``, ``<name>.db`` (the store,
    unless ``store`` says otherwise: see crawl_command) and ``<name>-frontier.db``."""
    tmp.mkdir(parents=True, exist_ok=True)
    out = tmp / f"{name}.jsonl"
    store_arg = tmp / f"{name}.db" if store is DEFAULT_STORE else store
    cmd = crawl_command(
        seeds, out, store=store_arg, frontier=tmp / f"{name}-frontier.db",
        settings=settings, crawl=crawl, spider=spider,
    )
    if server is not None:
        server.clear_log()
    try:
        proc = subprocess.run(
            cmd, cwd=REPO, env=proxy_env(server, env), stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout,
        )
    except subprocess.TimeoutExpired as exc:  # run() has killed the crawl by then
        err = (exc.stderr or b"").decode("utf-8", "replace")
        raise AssertionError(
            f"crawl did not end within {timeout:.0f} s: $ {' '.join(cmd)}\n"
            + "\n".join(err.splitlines()[-40:])
        ) from None
    (tmp / f"{name}.log").write_bytes(proc.stderr)  # kept for a human looking at a failure
    store_path = store_arg if isinstance(store_arg, Path) else None
    return CrawlRun(
        command=cmd,
        returncode=proc.returncode,
        stderr=proc.stderr.decode("utf-8", "replace"),
        out=out,
        store=store_path,
        server_log=server.log if server is not None else [],
    )


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    with open(path, encoding="utf-8") as lines:
        return [json.loads(line) for line in lines if line.strip()]


def log_records(stderr: str) -> list[str]:
    """The log split into records: a timestamped line and its continuation lines."""
    starts = [m.start() for m in _RECORD_START.finditer(stderr)]
    return [stderr[a:b] for a, b in zip(starts, starts[1:] + [len(stderr)])]


def parse_stats(stderr: str) -> dict[str, str]:
    """``{'name': 'value as printed'}`` from the last ``Dumping Scrapy stats`` record."""
    dumps = [r for r in log_records(stderr) if "Dumping Scrapy stats:" in r.splitlines()[0]]
    if not dumps:
        return {}
    stats: dict[str, str] = {}
    for line in dumps[-1].splitlines()[1:]:
        m = _STAT.match(line)
        if m:
            stats[m.group(1)] = m.group(2)
    return stats


def requested_urls(log: Iterable[LogEntry], *, robots: bool = False) -> list[str]:
    """``http://host/path`` of every GET the server answered (CONNECT refusals aside)."""
    return [
        f"http://{e.host}{e.path}"
        for e in log
        if e.path.startswith("/") and (robots or e.path != "/robots.txt")
    ]


# --------------------------------------------------------------------------- the store


def rows(conn: sqlite3.Connection, sql: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
    cur = conn.execute(sql, tuple(params))
    names = [d[0] for d in cur.description]
    return [dict(zip(names, row)) for row in cur.fetchall()]


def url_rows(conn: sqlite3.Connection) -> dict[str, dict[str, Any]]:
    """Every url row by URL (one crawl per store in these tests)."""
    found = rows(conn, "SELECT * FROM url")
    return {r["url"]: r for r in found}


def page_rows(conn: sqlite3.Connection) -> dict[int, dict[str, Any]]:
    return {r["id"]: r for r in rows(conn, "SELECT * FROM page")}


# --------------------------------------------------------------------------- pages


def parse_page(html: bytes | str) -> Any:
    """An lxml document of stored page text (UTF-8 in the store)."""
    data = html.encode("utf-8") if isinstance(html, str) else html
    return lxml.html.document_fromstring(data, parser=lxml.html.HTMLParser(encoding="utf-8"))


_REFRESH_URL = re.compile(r"^\s*[\d.]*\s*[;,]?\s*(?:url\s*=\s*)?(.*)$", re.I | re.S)


def refresh_target(doc: Any, base: str) -> str | None:
    """The normalized target of the first ``<meta http-equiv="refresh">``, if any."""
    for meta in doc.iter("meta"):
        if (meta.get("http-equiv") or "").strip().lower() != "refresh":
            continue
        m = _REFRESH_URL.match(meta.get("content") or "")
        target = (m.group(1) if m else "").strip().strip("'\"")
        if target:
            return try_normalize(urljoin(base, target))
    return None


def base_of(doc: Any, page_url: str) -> str:
    for el in doc.iter("base"):
        href = (el.get("href") or "").strip()
        if href:
            return urljoin(page_url, href)
    return page_url


def robots_meta(html: bytes | str) -> set[str]:
    """The directives of the page's ``<meta name="robots">`` tags (``none`` spelt out)."""
    found: set[str] = set()
    for meta in parse_page(html).iter("meta"):
        if (meta.get("name") or "").strip().lower() == "robots":
            for token in (meta.get("content") or "").lower().split(","):
                token = token.strip()
                found |= {"noindex", "nofollow"} if token == "none" else {token}
    return found


def page_links(html: bytes | str, page_url: str) -> set[str]:
    """The http(s) URLs a page links to, worked out here without SpiTag's extractor:
    ``<a href>`` and ``<area href>`` (but ``rel="nofollow"`` ones, which SpiTag leaves
    by default) resolved against the page URL and its ``<base>``, plus a meta refresh
    target (a link the crawler follows too), normalized."""
    doc = parse_page(html)
    base = base_of(doc, page_url)
    out: set[str] = set()
    for el in doc.iter("a", "area"):
        href = el.get("href")
        if href is None or "nofollow" in (el.get("rel") or "").lower().split():
            continue
        url = urljoin(base, href.strip())
        if urlsplit(url).scheme.lower() in ("http", "https"):
            normalized = try_normalize(url)
            if normalized is not None:
                out.add(normalized)
    refresh = refresh_target(doc, base)
    if refresh is not None:
        out.add(refresh)
    return out
