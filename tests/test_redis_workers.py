"""Several workers, one Redis frontier: one crawl, nothing lost, politeness shared."""

from __future__ import annotations

import os
import re
import sqlite3
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import redis

from tests.support.crawl import parse_stats
from testbed.redisserver import RedisServer
from spitag.frontier import open_frontier
from testbed.sites import CountingSite, DeadSite, RefusingSite, tree_paths, tree_site
from testbed.webserver import DictSite, Response, WebServer

REPO = Path(__file__).resolve().parents[1]
_started: list[subprocess.Popen] = []  # every worker of the running test


@pytest.fixture(autouse=True)
def no_worker_outlives_its_test() -> Iterator[None]:
    """A failed assertion must not leave workers crawling (and holding their ports and
    files) for the rest of the run: the test's workers still running are killed."""
    yield
    while _started:
        proc = _started.pop()
        if proc.poll() is None:
            proc.kill()
            proc.wait(30)


def until(condition: Callable[[], bool], *procs: subprocess.Popen, seconds: float = 120) -> None:
    """Wait for ``condition``, at most ``seconds``, while every one of ``procs`` runs."""
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, f"not reached in {seconds} s"
        assert all(p.poll() is None for p in procs), "a worker ended first"
        time.sleep(0.05)


def worker(tmp: Path, name: str, frontier: str, server: WebServer, seeds: str, *extra: str,
           crawl: str = "shared") -> subprocess.Popen:
    cmd = [
        sys.executable, "-m", "scrapy", "crawl", "spitag", "-a", f"seeds={seeds}", "-a", f"crawl={crawl}",
        "-O", str(tmp / f"{name}.jsonl"),
        "-s", f"SPITAG_STORE=sqlite:///{tmp}/{name}.db",
        "-s", f"SPITAG_FRONTIER={frontier}",
        *extra,
    ]
    env = {**os.environ, "http_proxy": server.proxy_url, "https_proxy": server.proxy_url}
    env.pop("no_proxy", None)
    proc = subprocess.Popen(cmd, cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=(tmp / f"{name}.log").open("wb"))
    _started.append(proc)
    return proc


class HeldSite:
    """A site that answers nothing until ``open()``: a test of two workers sharing one
    site lets it answer once both are up, so a worker that starts late on a loaded
    machine still finds work left."""

    def __init__(self, site: Any) -> None:
        self.site = site
        self.opened = threading.Event()

    def open(self) -> None:
        self.opened.set()

    def respond(self, target: str) -> Response:
        self.opened.wait(120)
        return self.site.respond(target)


def logged(tmp: Path, text: str, *names: str) -> Callable[[], bool]:
    """Every named worker's log has ``text`` (by default: it has seeded and crawls)."""
    def up() -> bool:
        return all(text in (tmp / f"{n}.log").read_text(errors="replace") for n in names)
    return up


UP = "seed(s), scope"  # the spider's first line, once its frontier is open


def stored(tmp: Path, *names: str) -> set[str]:
    urls: set[str] = set()
    for name in names:
        with sqlite3.connect(tmp / f"{name}.db") as conn:
            urls |= {u for (u,) in conn.execute("SELECT url FROM url")}
    return urls


def working(tmp: Path, name: str) -> bool:
    """The worker has committed pages of its own (both share the work)."""
    try:
        with sqlite3.connect(tmp / f"{name}.db") as conn:
            return conn.execute("SELECT COUNT(*) FROM url").fetchone()[0] >= 20
    except sqlite3.Error:
        return False


def pages_fetched(server: WebServer, host: str) -> Counter:
    return Counter(e.path for e in server.log if e.host == host and e.path != "/robots.txt")


def test_two_workers_one_killed_nothing_lost(redis_url: str, tmp_path: Path) -> None:
    pages = 2000
    with WebServer() as server:
        server.add_site("big.test", tree_site(pages, fanout=10, delay=0.005))
        extra = ("-s", "SPITAG_LEASE_SECONDS=5")
        a = worker(tmp_path, "a", redis_url, server, "http://big.test/", *extra)
        b = worker(tmp_path, "b", redis_url, server, "http://big.test/", *extra)
        until(lambda: sum(pages_fetched(server, "big.test").values()) >= 300 and working(tmp_path, "a"), a, b)
        a.kill()  # SIGKILL after about 300 pages: its leases must come back
        a.wait(30)
        killed_at = time.monotonic()
        time.sleep(0.3)  # answers to the dead worker's last requests are logged when sent
        first_fetch = {}
        for e in server.log:
            first_fetch.setdefault(e.path, e.time)
        assert b.wait(300) == 0
        fetched = pages_fetched(server, "big.test")
    expected = tree_paths(pages)
    assert set(fetched) == expected, f"never fetched: {sorted(expected - set(fetched))[:10]}"
    assert stored(tmp_path, "a", "b") == {f"http://big.test{p}" for p in expected}  # 0 lost
    # Only the dead worker's work in flight at the kill is fetched twice: downloads
    # running, or pages parsed but not yet committed (its store flushes every second).
    twice = {p for p, n in fetched.items() if n > 1}
    stale = {p for p in twice if killed_at - first_fetch[p] > 3.0}
    assert stale == set(), f"re-fetched work committed long before the kill: {sorted(stale)[:10]}"
    assert max(fetched.values()) <= 2
    log = (tmp_path / "b.log").read_text()
    assert "taken back" in log or "expired leases put back in the queue" in log
    assert "Traceback" not in log


def test_a_worker_killed_mid_crawl_is_taken_back_before_its_leases_expire(redis_url: str, tmp_path: Path) -> None:
    """Killed long after the other started (past the look ``recover_again`` takes at
    start), a worker's leases and its places on the site are taken back by the other
    within seconds: they used to wait for the leases to expire (600 s here, longer than
    the test lets the crawl run) and for the places to go stale."""
    pages = 700
    with WebServer() as server:
        server.add_site("long.test", tree_site(pages, fanout=6, delay=0.08))
        extra = ("-s", "SPITAG_LEASE_SECONDS=600", "-s", "CONCURRENT_REQUESTS=2")
        a = worker(tmp_path, "a", redis_url, server, "http://long.test/", *extra)
        b = worker(tmp_path, "b", redis_url, server, "http://long.test/", *extra)
        started = time.monotonic()
        until(lambda: time.monotonic() - started >= 14 and working(tmp_path, "b"), a, b)
        b.kill()
        b.wait(30)
        try:
            assert a.wait(150) == 0
        finally:
            a.kill()  # (a worker left waiting must not outlive the test)
        fetched = pages_fetched(server, "long.test")
    assert set(fetched) == tree_paths(pages)
    assert stored(tmp_path, "a", "b") == {f"http://long.test{p}" for p in tree_paths(pages)}
    log = (tmp_path / "a.log").read_text()
    assert re.search(r"frontier: \d+ unfinished leases of gone worker\(s\) \S+ taken back", log), log[-3000:]
    assert "expired leases put back" not in log


def test_workers_share_politeness_and_stop_by_themselves(redis_url: str, tmp_path: Path) -> None:
    delay = 0.25
    site = HeldSite(tree_site(16, fanout=4))
    with WebServer() as server:
        server.add_site("polite.test", site)
        # one download of the host at a time per worker: neither can take every URL
        # queued, whichever finds them first (on a busy machine one worker is faster)
        args = ("-s", f"DOWNLOAD_DELAY={delay}", "-s", "CONCURRENT_REQUESTS_PER_DOMAIN=1")
        procs = [worker(tmp_path, n, redis_url, server, "http://polite.test/", *args) for n in "ab"]
        until(logged(tmp_path, "2 worker(s) of this crawl on this machine", "a", "b"), *procs)
        site.open()
        assert [p.wait(120) for p in procs] == [0, 0]  # both end by themselves
        times = sorted(e.arrived for e in server.log if e.host == "polite.test")
        fetched = pages_fetched(server, "polite.test")
    assert set(fetched) == tree_paths(16) and max(fetched.values()) == 1  # each page once
    gaps = [b - a for a, b in zip(times, times[1:])]
    assert min(gaps) >= delay - 0.02, f"two requests {min(gaps):.3f} s apart, delay {delay}"
    assert stored(tmp_path, "a") and stored(tmp_path, "b")  # both did work
    # Each worker's strategy learnt from the other's pages (the frontier's learnt
    # feed), and never its own pages twice.
    stats = {n: parse_stats((tmp_path / f"{n}.log").read_text()) for n in "ab"}
    heard = {n: int(stats[n].get("spitag/strategy/learnt_from_workers", 0)) for n in "ab"}
    assert heard["a"] <= len(stored(tmp_path, "b")) and heard["b"] <= len(stored(tmp_path, "a"))
    # all but the last pages (stored after the other worker last read the feed)
    assert heard["a"] + heard["b"] >= len(stored(tmp_path, "a", "b")) // 2
    # Both on this machine: each saw the other, and kept half of the profile backlog.
    assert [stats[n].get("spitag/frontier/workers_here_max") for n in "ab"] == ["2", "2"]
    assert all("this one keeps 8 of the 16 pages of profile backlog" in (tmp_path / f"{n}.log").read_text() for n in "ab")


def test_workers_together_hold_the_per_host_limit(redis_url: str, tmp_path: Path) -> None:
    """``CONCURRENT_REQUESTS_PER_DOMAIN`` is for the whole crawl: two workers of one
    slow site never have more downloads to it at once than the limit between them, and
    share its places in turn."""
    site = CountingSite(pages=80)
    held = HeldSite(site)
    with WebServer() as server:
        server.add_site("one.test", held)
        args = ("-s", "CONCURRENT_REQUESTS_PER_DOMAIN=3")
        procs = [worker(tmp_path, n, redis_url, server, "http://one.test/", *args) for n in "ab"]
        until(logged(tmp_path, UP, "a", "b"), *procs)
        held.open()
        assert [p.wait(120) for p in procs] == [0, 0]
        fetched = pages_fetched(server, "one.test")
        robots = sum(e.host == "one.test" and e.path == "/robots.txt" for e in server.log)
    assert len(fetched) == 81 and max(fetched.values()) == 1  # the home and its pages, once each
    # places are handed out in turn: each worker does a fair share of the one host
    # (38 and 43 pages in four runs of four; 78 and 3, or 3 and 78, before the line)
    assert min(len(stored(tmp_path, n)) for n in "ab") >= 81 // 4
    assert site.most == 3, site.most  # reached, never passed (each worker alone allows 3)
    assert robots == 1  # one worker fetched robots.txt; the other read it from Redis
    stats = {n: parse_stats((tmp_path / f"{n}.log").read_text()) for n in "ab"}
    assert sum(int(stats[n].get("spitag/politeness/shared_host_waits", 0)) for n in "ab") > 0


def test_the_page_budget_and_the_per_host_limit_hold_for_both_workers(redis_url: str, tmp_path: Path) -> None:
    """``SPITAG_PAGE_BUDGET`` and ``SPITAG_MAX_PAGES_PER_HOST`` count every worker's
    pages: two workers started together fetch the budget between them, over by at most
    the requests in flight when it was reached (they are taken from the frontier within
    it, so here: not at all), and no host gives more URLs than its limit."""
    budget, per_host = 60, 25
    with WebServer() as server:
        sites = {f"s{i}.test": HeldSite(tree_site(200, fanout=5)) for i in range(4)}
        for host, site in sites.items():
            server.add_site(host, site)
        seeds = ",".join(f"http://{host}/" for host in sites)
        args = ("-s", f"SPITAG_PAGE_BUDGET={budget}", "-s", f"SPITAG_MAX_PAGES_PER_HOST={per_host}")
        procs = [worker(tmp_path, n, redis_url, server, seeds, *args, crawl="limits") for n in "ab"]
        until(logged(tmp_path, UP, "a", "b"), *procs)
        for site in sites.values():
            site.open()
        assert [p.wait(120) for p in procs] == [0, 0]
        fetched = {host: pages_fetched(server, host) for host in sites}
    pages = sum(sum(c.values()) for c in fetched.values())
    assert pages == budget, {h: sum(c.values()) for h, c in fetched.items()}  # both workers' together
    assert max(sum(c.values()) for c in fetched.values()) <= per_host
    assert all(max(c.values()) == 1 for c in fetched.values() if c)
    assert len(stored(tmp_path, "a", "b")) == budget


def test_a_pause_one_worker_was_asked_for_holds_for_both(redis_url: str, tmp_path: Path) -> None:
    """429 with ``Retry-After: 3`` to one of two workers: neither sends the host anything
    for 3 s (the frontier gives no URL of it, and no place to a request the other worker
    had already taken), then both go on."""
    site = RefusingSite(80, refuse=30, delay=0.5)  # once both have requests out and in line
    with WebServer() as server:
        server.add_site("busy.test", site)
        args = ("-s", "CONCURRENT_REQUESTS_PER_DOMAIN=6")  # requests of both workers in line
        procs = [worker(tmp_path, n, redis_url, server, "http://busy.test/", *args) for n in "ab"]
        assert [p.wait(120) for p in procs] == [0, 0]
        log = [e for e in server.log if e.host == "busy.test"]
    pages = [e for e in log if e.path not in ("/", "/robots.txt")]
    refused = next(e for e in pages if e.status == 429).time
    # nothing asked until the pause ends: what came in just after the refusal was out (or
    # took a place) before the pause reached Redis; then both went on
    sent_in_pause = [e for e in pages if refused + 0.5 < e.arrived < refused + 3.0 - 0.1]
    assert not sent_in_pause, sent_in_pause
    assert len([e for e in pages if e.arrived - refused >= 2.9]) >= 10, pages
    assert len({e.path for e in log if e.status == 200 and e.path != "/"}) == 80  # every page
    stats = {n: parse_stats((tmp_path / f"{n}.log").read_text()) for n in "ab"}
    assert sum(int(stats[n].get("spitag/politeness/retry_after_pauses", 0)) for n in "ab") == 1


def test_refusals_in_a_row_double_the_back_off_whichever_worker_gets_them(redis_url: str, tmp_path: Path) -> None:
    """429 with no ``Retry-After``, three times in a row (the first request after each
    pause is refused again), to either of two workers: the host is left alone 1 s, 2 s,
    then 4 s, by both. The count is the frontier's: counted by each worker alone, a
    refusal that reached the other worker would start over at 1 s."""
    site = RefusingSite(80, refuse=30, delay=0.3, retry_after=None, episodes=3)
    with WebServer() as server:
        server.add_site("busy.test", site)
        args = ("-s", "CONCURRENT_REQUESTS_PER_DOMAIN=6")
        procs = [worker(tmp_path, n, redis_url, server, "http://busy.test/", *args) for n in "ab"]
        assert [p.wait(120) for p in procs] == [0, 0]
        log = [e for e in server.log if e.host == "busy.test"]
    refusals = [e.time for e in log if e.status == 429]
    assert len(refusals) == 3, refusals
    assert refusals[1] - refusals[0] >= 0.95 and refusals[2] - refusals[1] >= 1.95, refusals
    served = [e.time - refusals[2] for e in log if e.status == 200 and e.time > refusals[2]]
    # what was out answers by ~0.35 s (0.3 s pages); then nothing until the 4 s are over
    assert not [t for t in served if 0.8 < t < 4.0 - 0.1], served
    assert len({e.path for e in log if e.status == 200 and e.path != "/"}) == 80  # every page
    stats = {n: parse_stats((tmp_path / f"{n}.log").read_text()) for n in "ab"}
    assert sum(int(stats[n].get("spitag/politeness/back_offs", 0)) for n in "ab") == 3
    assert max(float(stats[n].get("spitag/politeness/retry_after_max_s", 0)) for n in "ab") == 4.0


def test_a_dead_host_is_set_aside_for_both_workers(redis_url: str, tmp_path: Path) -> None:
    """A host whose gateway answers 502 to everything, two workers: it is set aside as
    down in the frontier, both workers end once the rest is done, and its URLs that
    were not stored as failures wait in the frontier, queued."""
    site = DeadSite(status=502)
    links = " ".join(f'<a href="/{i}">{i}</a> <a href="http://dead.test/{i}">d{i}</a>' for i in range(40))
    hub = DictSite({"/": f"<html><body>{links}</body></html>"})
    for i in range(40):
        hub.add(f"/{i}", Response.html(DeadSite.PAGE, delay=0.1))
    with WebServer() as server:
        server.add_site("hub.test", hub).add_site("dead.test", site)
        args = ("-s", "SPITAG_STRATEGY=bfs", "-s", "SPITAG_SCOPE=any", "-s", "ROBOTSTXT_OBEY=False")
        procs = [worker(tmp_path, n, redis_url, server, "http://hub.test/", *args, crawl="dead") for n in "ab"]
        assert [p.wait(120) for p in procs] == [0, 0]
    urls = stored(tmp_path, "a", "b")
    assert {f"http://hub.test/{i}" for i in range(40)} <= urls
    failed = {u for u in urls if u.startswith("http://dead.test/")}
    # before: 120 requests (40 URLs, 3 tries each), every URL stored as a 502; each
    # worker counting its own failures: 8 or 16. Counted together: the 5 failures,
    # the 3 other places' downloads then out, and at most 4 more of the worker that
    # learns of it at its next failure (measured: 8 in four runs)
    assert len(site.asked) <= 12 and len(failed) <= 8, (len(site.asked), failed)
    frontier = open_frontier(redis_url, "dead")
    try:
        assert [(h, n) for h, _, n in frontier.gate.down()] == [("dead.test", 40 - len(failed))]
        assert not frontier.queue.has_work()
    finally:
        frontier.close()


def test_autothrottle_targets_the_crawl_not_each_worker(redis_url: str, tmp_path: Path) -> None:
    """Scrapy's ``AUTOTHROTTLE_*`` settings, two workers: the delay AutoThrottle sets
    from the answers' latency (0.3 s pages, target 1) spaces the requests of both
    workers together (the frontier's gate), so about one page at a time is served on
    average, not one per worker."""
    site = CountingSite(40)
    held = HeldSite(site)
    with WebServer() as server:
        server.add_site("slow.test", held)
        args = ("-s", "AUTOTHROTTLE_ENABLED=True", "-s", "AUTOTHROTTLE_TARGET_CONCURRENCY=1",
                "-s", "AUTOTHROTTLE_START_DELAY=0.3")
        procs = [worker(tmp_path, n, redis_url, server, "http://slow.test/", *args) for n in "ab"]
        until(logged(tmp_path, UP, "a", "b"), *procs)
        held.open()
        assert [p.wait(120) for p in procs] == [0, 0]
    assert len(stored(tmp_path, "a", "b")) == 41  # every page, once
    assert stored(tmp_path, "a") and stored(tmp_path, "b")  # both worked
    assert site.mean < 1.4, (site.mean, site.most)


def test_workers_on_machines_named_apart_keep_their_whole_backlog(redis_url: str, tmp_path: Path) -> None:
    """``SPITAG_MACHINE`` names the machine: two workers of one crawl told they run on
    two machines do not split the profile backlog, though they share this host name."""
    site = HeldSite(tree_site(16, fanout=4))
    with WebServer() as server:
        server.add_site("polite.test", site)
        procs = [worker(tmp_path, n, redis_url, server, "http://polite.test/", "-s", "DOWNLOAD_DELAY=0.25",
                        "-s", "CONCURRENT_REQUESTS_PER_DOMAIN=1", "-s", f"SPITAG_MACHINE=rack-{n}") for n in "ab"]
        until(logged(tmp_path, UP, "a", "b"), *procs)
        site.open()
        assert [p.wait(120) for p in procs] == [0, 0]
    assert stored(tmp_path, "a") and stored(tmp_path, "b")  # both worked
    # side by side: the same crawl without the setting counts 2 (the test above)
    stats = {n: parse_stats((tmp_path / f"{n}.log").read_text()) for n in "ab"}
    assert [stats[n].get("spitag/frontier/workers_here_max") for n in "ab"] == ["1", "1"]


def test_workers_hear_the_links_the_other_found(redis_url: str, tmp_path: Path) -> None:
    """Each page links once to a host of its own elsewhere (one the server does not
    know: 404): the link evidence each worker's strategy gathers goes to the other one,
    read at its start (the frontier's totals) or as it is found (the learnt stream)."""
    with WebServer() as server:
        server.add_site("hub.test", tree_site(24, fanout=4, away="away.test", delay=0.3))
        # hub.test's pages 0.2 s apart, whichever worker asks, and each worker one download
        # at a time, 0.3 s a page: neither can take them all, however busy the machine
        args = ("-s", "SPITAG_SCOPE=any", "-s", "ROBOTSTXT_OBEY=False", "-s", "DOWNLOAD_DELAY=0.2",
                "-s", "CONCURRENT_REQUESTS=1")
        procs = [worker(tmp_path, n, redis_url, server, "http://hub.test/", *args) for n in "ab"]
        assert [p.wait(120) for p in procs] == [0, 0]
    parsed = {n: {u for u in stored(tmp_path, n) if u.startswith("http://hub.test/")} for n in "ab"}
    assert parsed["a"] | parsed["b"] == {f"http://hub.test{p}" for p in tree_paths(24)}
    stats = {n: parse_stats((tmp_path / f"{n}.log").read_text()) for n in "ab"}
    live = {n: int(stats[n].get("spitag/strategy/links_from_workers", 0)) for n in "ab"}
    heard = {n: live[n] + int(stats[n].get("spitag/strategy/links_at_start", 0)) for n in "ab"}
    # one link away a page: a worker hears at most the other's, each once, and in all
    # at least half of them (the last ones are found after the other worker last read)
    assert parsed["a"] and parsed["b"]
    assert heard["a"] <= len(parsed["b"]) and heard["b"] <= len(parsed["a"])
    assert heard["a"] + heard["b"] >= 24 // 2 and live["a"] + live["b"] > 0


def test_robots_crawl_delay_sets_the_shared_delay(redis_url: str, tmp_path: Path) -> None:
    site = tree_site(6, fanout=5)
    site.add("/robots.txt", Response.text("User-agent: *\nCrawl-delay: 0.4\n"))
    with WebServer() as server:
        server.add_site("slow.test", site)
        procs = [worker(tmp_path, n, redis_url, server, "http://slow.test/") for n in "ab"]
        assert [p.wait(120) for p in procs] == [0, 0]
        times = [e.time for e in server.log if e.host == "slow.test" and e.path != "/robots.txt"]
    gaps = [b - a for a, b in zip(times, times[1:])]
    assert len(times) == len(tree_paths(6)) and min(gaps) >= 0.4 - 0.02
    assert redis.Redis.from_url(redis_url).hget("spitag:shared:delay", "slow.test") == b"0.4"


def test_stop_command_stops_every_worker_and_rerun_resumes(redis_url: str, tmp_path: Path) -> None:
    with WebServer() as server:
        server.add_site("long.test", tree_site(600, delay=0.05))
        procs = [worker(tmp_path, n, redis_url, server, "http://long.test/", "-s", "CONCURRENT_REQUESTS=2")
                 for n in "ab"]
        until(lambda: sum(pages_fetched(server, "long.test").values()) >= 40, *procs)
        stop = subprocess.run(
            [sys.executable, "-m", "scrapy", "stop", "-a", "crawl=shared", "-s", f"SPITAG_FRONTIER={redis_url}"],
            cwd=REPO, capture_output=True, text=True, timeout=60,
        )
        assert stop.returncode == 0, stop.stderr
        typo = subprocess.run(
            [sys.executable, "-m", "scrapy", "stop", "-a", "crawl=shraed", "-s", f"SPITAG_FRONTIER={redis_url}"],
            cwd=REPO, capture_output=True, text=True, timeout=60,
        )
        assert typo.returncode == 2 and "crawl 'shraed' has nothing in frontier" in typo.stderr, typo.stderr
        assert [p.wait(60) for p in procs] == [0, 0]
        assert sum(pages_fetched(server, "long.test").values()) < 600
        rerun = worker(tmp_path, "c", redis_url, server, "http://long.test/")
        assert rerun.wait(180) == 0
        fetched = pages_fetched(server, "long.test")
    assert set(fetched) == tree_paths(600) and max(fetched.values()) == 1
    assert "stop requested for crawl shared" in (tmp_path / "a.log").read_text()


def test_seeds_reach_running_workers(redis_url: str, tmp_path: Path) -> None:
    with WebServer() as server:
        server.add_site("first.test", tree_site(150, delay=0.05))
        server.add_site("second.test", tree_site(5))
        server.add_site("third.test", tree_site(5))
        server.add_site("fourth.test", tree_site(5))
        proc = worker(tmp_path, "a", redis_url, server, "http://first.test/", "-s", "CONCURRENT_REQUESTS=2")
        until(lambda: sum(pages_fetched(server, "first.test").values()) >= 10, proc)
        inject = subprocess.run(
            [sys.executable, "-m", "scrapy", "inject", "-a", "crawl=shared", "http://second.test/",
             "-s", f"SPITAG_FRONTIER={redis_url}"],
            cwd=REPO, capture_output=True, text=True, timeout=60,
        )
        assert inject.returncode == 0, inject.stderr
        client = redis.Redis.from_url(redis_url)
        client.lpush("spitag:shared:start_urls", "http://third.test/")  # the crawl's own list
        client.lpush("spitag:start_urls", "http://fourth.test/")  # scrapy-redis' list: no crawl's
        assert proc.wait(180) == 0
        # the new seeds were crawled, links included (the scope widened to them)
        assert set(pages_fetched(server, "second.test")) == tree_paths(5)
        assert set(pages_fetched(server, "third.test")) == tree_paths(5)
        assert pages_fetched(server, "fourth.test") == {}
        assert client.lrange("spitag:start_urls", 0, -1) == [b"http://fourth.test/"]


def test_redis_unreachable_at_start_is_one_clear_error(tmp_path: Path) -> None:
    port = RedisServer().port  # free, nothing listening
    run = subprocess.run(
        [sys.executable, "-m", "scrapy", "crawl", "spitag", "-a", "seeds=http://x.test/",
         "-O", str(tmp_path / "out.jsonl"), "-s", f"SPITAG_FRONTIER=redis://:secret@127.0.0.1:{port}/0",
         "-s", f"SPITAG_STORE=sqlite:///{tmp_path}/s.db"],
        cwd=REPO, capture_output=True, text=True, timeout=60,
    )
    assert run.returncode == 3
    errors = [line for line in run.stderr.splitlines() if line.startswith("spitag: error:")]
    assert len(errors) == 1 and "Redis unreachable" in errors[0] and "secret" not in run.stderr
    assert not (tmp_path / "out.jsonl").exists() and not (tmp_path / "s.db").exists()


def test_redis_restart_mid_crawl_loses_nothing(tmp_path: Path) -> None:
    with RedisServer(appendonly=True) as server_redis, WebServer() as server:
        server.add_site("restart.test", tree_site(500, delay=0.02))
        proc = worker(tmp_path, "a", server_redis.url, server, "http://restart.test/", "-s", "CONCURRENT_REQUESTS=4")
        until(lambda: sum(pages_fetched(server, "restart.test").values()) >= 100, proc)
        server_redis.restart(down_seconds=2.0)
        assert proc.wait(240) == 0
        fetched = pages_fetched(server, "restart.test")
    assert set(fetched) == tree_paths(500)
    assert stored(tmp_path, "a") == {f"http://restart.test{p}" for p in tree_paths(500)}
    log = (tmp_path / "a.log").read_text()
    assert "Redis unavailable" in log and "is back after" in log
    assert "Spider error processing" not in log
    # one worker alone never waits for a place of the shared per-host limit, not even
    # after the outage: the places its downloads gave back meanwhile were given back first
    stats = parse_stats(log)
    assert stats.get("finish_reason") == "'finished'" and "spitag/politeness/shared_host_waits" not in stats
