"""Crawl identity and resume: stop a crawl (Ctrl-C, kill -9), run the same command
again, and every page is fetched — none twice, but for those in flight at a kill."""

from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
import zlib
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from spitag.scoring import depth_discount
from tests.support.crawl import parse_stats
from testbed.sites import tree_paths, tree_site
from testbed.webserver import DictSite, WebServer

REPO = Path(__file__).resolve().parents[1]
PAGES = 400
HOST = "resume.test"


def crawl_command(tmp: Path, out: str, frontier: str | None = None) -> list[str]:
    return [
        sys.executable, "-m", "scrapy", "crawl", "spitag",
        "-a", f"seeds=http://{HOST}/", "-a", "crawl=resume",
        "-O", str(tmp / out),
        "-s", f"SPITAG_STORE=sqlite:///{tmp}/store.db",
        "-s", f"SPITAG_FRONTIER={frontier or f'sqlite:///{tmp}/frontier.db'}",
        "-s", "CONCURRENT_REQUESTS=4",
        "-s", "LOG_LEVEL=INFO",
        "-s", "SPITAG_LEASE_SECONDS=600",  # a lease of the killed run must not simply expire
    ]


STARTED: list[subprocess.Popen] = []


@pytest.fixture(autouse=True)
def no_crawl_left_running() -> Iterator[None]:
    """A test that fails while a crawl runs does not leave it running."""
    yield
    while STARTED:
        proc = STARTED.pop()
        if proc.poll() is None:
            proc.kill()
            proc.wait(30)


def start(cmd: list[str], server: WebServer, log: Path) -> subprocess.Popen:
    env = {**os.environ, "http_proxy": server.proxy_url, "https_proxy": server.proxy_url}
    env.pop("no_proxy", None)
    proc = subprocess.Popen(cmd, cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=log.open("wb"))
    STARTED.append(proc)
    return proc


def wait_for_pages(server: WebServer, n: int, proc: subprocess.Popen, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while sum(e.path != "/robots.txt" for e in server.log) < n:
        assert proc.poll() is None, "crawl ended before it could be interrupted"
        assert time.monotonic() < deadline, "crawl too slow to reach the interruption point"
        time.sleep(0.02)


def fetched(server: WebServer) -> Counter:
    return Counter(e.path for e in server.log if e.host == HOST and e.path != "/robots.txt")


def store_urls(tmp: Path) -> list[str]:
    with sqlite3.connect(tmp / "store.db") as conn:
        return [u for (u,) in conn.execute("SELECT url FROM url WHERE crawl = 'resume'")]


@pytest.fixture
def site() -> WebServer:
    with WebServer() as server:
        server.add_site(HOST, tree_site(PAGES, delay=0.03))
        yield server


def test_ctrl_c_then_rerun_fetches_everything_once(site: WebServer, tmp_path: Path) -> None:
    proc = start(crawl_command(tmp_path, "run1.jsonl"), site, tmp_path / "run1.log")
    wait_for_pages(site, 100, proc)
    proc.send_signal(signal.SIGINT)  # one Ctrl-C: graceful stop
    assert proc.wait(60) == 0
    first = fetched(site)
    assert 100 <= sum(first.values()) < len(tree_paths(PAGES))

    proc = start(crawl_command(tmp_path, "run2.jsonl"), site, tmp_path / "run2.log")
    assert proc.wait(120) == 0
    total = fetched(site)
    assert set(total) == tree_paths(PAGES)
    assert [p for p, n in total.items() if n > 1] == []  # nothing fetched twice
    assert sorted(store_urls(tmp_path)) == sorted(f"http://{HOST}{p}" for p in tree_paths(PAGES))
    # The second run's -O file holds that run's items only; export gives them all.
    run2 = [json.loads(line)["url"] for line in (tmp_path / "run2.jsonl").open()]
    assert len(run2) == len(total) - len(first)
    log = (tmp_path / "run2.log").read_text()
    assert "Spider error processing" not in log and "Traceback" not in log
    # robots.txt (a 404 here) was kept in the frontier: the second run did not ask again;
    # a 404 means no rules, so the error page itself was not kept
    assert sum(e.path == "/robots.txt" for e in site.log) == 1
    assert parse_stats(log).get("spitag/robots/kept_used") == "1"
    with sqlite3.connect(tmp_path / "frontier.db") as conn:
        kept = conn.execute("SELECT netloc, blob FROM frontier_robots WHERE crawl = 'resume'").fetchall()
    assert [(netloc, zlib.decompress(blob)) for netloc, blob in kept] == [(HOST, b"")]
    export = subprocess.run(
        [sys.executable, "-m", "scrapy", "export", "-a", "crawl=resume", "-O", str(tmp_path / "all.jsonl"),
         "-s", f"SPITAG_STORE=sqlite:///{tmp_path}/store.db"],
        cwd=REPO, capture_output=True, text=True, timeout=60,
    )
    assert export.returncode == 0, export.stderr
    exported = [json.loads(line) for line in (tmp_path / "all.jsonl").open()]
    assert len(exported) == len(tree_paths(PAGES))
    assert all(item["semantic"]["json-ld"] == 1 for item in exported if item["status"] == 200)


def test_a_second_ctrl_c_stops_at_once_and_the_rerun_loses_nothing(tmp_path: Path) -> None:
    """Ctrl-C twice: Scrapy stops at once, without finishing the downloads in flight
    (slow pages here, so that the first Ctrl-C's graceful stop is still waiting on them).
    Nothing committed is lost, and the rerun fetches what was not, every URL stored once."""
    pages = 24
    with WebServer() as slow:
        slow.add_site(HOST, tree_site(pages, delay=3.0))
        proc = start(crawl_command(tmp_path, "run1.jsonl"), slow, tmp_path / "run1.log")
        wait_for_pages(slow, 6, proc)
        time.sleep(1.0)  # (downloads of 3 s out)
        proc.send_signal(signal.SIGINT)
        time.sleep(0.2)
        proc.send_signal(signal.SIGINT)  # the second: at once
        proc.wait(30)
        log = (tmp_path / "run1.log").read_text()
        assert "forcing unclean shutdown" in log, log[-3000:]
        stored_first = set(store_urls(tmp_path))
        assert stored_first <= {f"http://{HOST}{p}" for p in fetched(slow)}  # committed: fetched before
        proc = start(crawl_command(tmp_path, "run2.jsonl"), slow, tmp_path / "run2.log")
        assert proc.wait(120) == 0
        total = fetched(slow)
    assert set(total) == tree_paths(pages)
    assert sorted(store_urls(tmp_path)) == sorted(f"http://{HOST}{p}" for p in tree_paths(pages))  # each once
    again = {f"http://{HOST}{p}" for p, n in total.items() if n > 1}
    assert not again & stored_first  # nothing committed was fetched again


@pytest.mark.parametrize("backend", ["sqlite", "redis"])
def test_kill_9_then_rerun_loses_nothing(site: WebServer, tmp_path: Path, request: pytest.FixtureRequest,
                                         backend: str) -> None:
    """The rerun takes back the killed process' leases (``recover``) at its start, on
    either backend, without waiting for them to expire (600 s here, longer than the
    test) nor, on Redis, for the dead worker's heartbeat to go stale (10 s): the killed
    pid is gone from this machine's process table."""
    frontier = request.getfixturevalue("redis_url") if backend == "redis" else None
    proc = start(crawl_command(tmp_path, "run1.jsonl", frontier), site, tmp_path / "run1.log")
    wait_for_pages(site, 120, proc)
    proc.kill()  # SIGKILL: no shutdown at all
    proc.wait(30)
    killed_at = time.monotonic()
    time.sleep(0.5)  # answers to the dead process's last requests are logged when sent
    before = list(site.log)

    proc = start(crawl_command(tmp_path, "run2.jsonl", frontier), site, tmp_path / "run2.log")
    assert proc.wait(120) == 0
    log = (tmp_path / "run2.log").read_text()
    assert re.search(r"frontier .*, crawl resume: .*\([1-9]\d* unfinished leases of an earlier run taken back\)",
                     log), log[-3000:]
    assert "a worker gone" not in log
    total = fetched(site)
    assert set(total) == tree_paths(PAGES)  # nothing lost
    assert sorted(store_urls(tmp_path)) == sorted(f"http://{HOST}{p}" for p in tree_paths(PAGES))
    twice = {p for p, n in total.items() if n > 1}
    assert all(n <= 2 for n in total.values())
    # Only work in flight at the kill is done again: pages fetched in the last moments
    # before it (downloading, or parsed but not yet committed: the store flushes every
    # second) — never older work.
    last_fetch = {e.path: e.time for e in before if e.host == HOST}
    stale = {p for p in twice if killed_at - last_fetch[p] > 3.0}
    assert stale == set(), f"re-fetched work that was committed long before the kill: {sorted(stale)}"


def rich_page(title: str, items: int, links: str = "") -> str:
    """A page with ``items`` JSON-LD items (its semantic score grows with them)."""
    scripts = "".join(
        f'<script type="application/ld+json">{{"@type": "Thing", "name": "{title} {i}"}}</script>'
        for i in range(items)
    )
    return f"<html><head><title>{title}</title>{scripts}</head><body>{links}</body></html>"


def test_resumed_strategy_starts_from_what_the_crawl_learnt(tmp_path: Path) -> None:
    """A rerun's ``spitag`` estimates a link to a site fetched by the earlier run from
    that site's pages (the frontier's totals), not as an unseen site."""
    rich = DictSite()
    rich.add("/", rich_page("rich", 6, '<a href="/1">1</a> <a href="/2">2</a>'))
    rich.add("/1", rich_page("rich one", 4))
    rich.add("/2", rich_page("rich two", 5))
    rich.add("/extra", rich_page("rich extra", 5))  # linked only from poor.test
    poor = DictSite().add("/", rich_page("poor", 1, '<a href="http://rich.test/extra">more</a>'))
    with WebServer() as server:
        server.add_site("rich.test", rich)
        server.add_site("poor.test", poor)

        def run(seeds: str, name: str, *extra: str, code: int = 0) -> list[dict]:
            cmd = crawl_command(tmp_path, f"{name}.jsonl") + list(extra)
            cmd[cmd.index(f"seeds=http://{HOST}/")] = f"seeds={seeds}"
            cmd[cmd.index("crawl=resume")] = "crawl=learnt"
            proc = start(cmd, server, tmp_path / f"{name}.log")
            assert proc.wait(120) == code, (tmp_path / f"{name}.log").read_text()[-3000:]
            out = tmp_path / f"{name}.jsonl"
            return [json.loads(line) for line in out.open()] if out.exists() else []

        first = run("http://rich.test/", "run1")
        second = run("http://rich.test/,http://poor.test/", "run2")
        # another strategy: refused before anything starts, unless the user says to go on
        assert run("http://rich.test/,http://poor.test/", "refused", "-s", "SPITAG_STRATEGY=bfs", code=2) == []
        refusal = (tmp_path / "refused.log").read_text()
        assert "spitag: error: crawl 'learnt' was crawled with SPITAG_STRATEGY=spitag, this run asks for bfs" in refusal
        assert "-a restrategy=yes" in refusal
        run("http://rich.test/,http://poor.test/", "run3", "-s", "SPITAG_STRATEGY=bfs", "-a", "restrategy=yes")
    scores = {item["url"]: item["score"] for item in first}
    assert sorted(scores) == ["http://rich.test/", "http://rich.test/1", "http://rich.test/2"]
    extra = next(item for item in second if item["url"] == "http://rich.test/extra")
    poor_score = next(item["score"] for item in second if item["url"] == "http://poor.test/")
    assert extra["reason"]["parent"] == "http://poor.test/"
    rich_mean = sum(scores.values()) / len(scores)
    assert rich_mean != pytest.approx(poor_score, rel=0.1)  # the two estimates differ
    # rich.test is a known site: its mean, shallowest-first discounted (depth 1)
    assert extra["priority"] == pytest.approx(rich_mean * depth_discount(1))
    stats = parse_stats((tmp_path / "run2.log").read_text())
    assert stats.get("spitag/strategy/learnt_at_start") == "3"
    # each run says when it differs from the one before: its seeds, then its strategy
    logs = [(tmp_path / f"run{n}.log").read_text() for n in (1, 2, 3)]
    assert ["crawled with other seeds" in log for log in logs] == [False, True, False]
    assert ["was crawled with strategy spitag, this worker runs bfs" in log for log in logs] == [False, False, True]


def test_resumed_strategy_starts_from_the_links_the_crawl_found(tmp_path: Path) -> None:
    """The link evidence of hosts (what the links found to them said before their
    first page: ``spitag.linkevidence``) is kept in the frontier, and a rerun's
    ``spitag`` starts from it, not from nothing."""
    hub = DictSite().add("/", rich_page("hub", 3, (
        '<a href="http://one.away.test/">1</a> <a href="http://two.away.test/x">2</a> '
        '<a href="http://two.away.test/y">3</a> <a href="/in">in</a>'
    )))
    hub.add("/in", rich_page("in", 2))
    with WebServer() as server:  # the away hosts are unknown to it: 404
        server.add_site(HOST, hub)
        cmd = crawl_command(tmp_path, "run.jsonl") + ["-s", "SPITAG_SCOPE=any"]
        for name in ("run1", "run2"):
            assert start(cmd, server, tmp_path / f"{name}.log").wait(120) == 0
    with sqlite3.connect(tmp_path / "frontier.db") as conn:
        found = dict(conn.execute("SELECT host, link_n FROM frontier_host WHERE link_n > 0"))
    # found when the hub page was scored, before either away host had a page learnt
    assert found == {"one.away.test": 1, "two.away.test": 2}
    first = parse_stats((tmp_path / "run1.log").read_text())
    assert first.get("spitag/strategy/links_found") == "3" and "spitag/strategy/links_at_start" not in first
    second = parse_stats((tmp_path / "run2.log").read_text())
    assert second.get("spitag/strategy/links_at_start") == "3"
    assert "and 3 links learnt before" in (tmp_path / "run2.log").read_text()
