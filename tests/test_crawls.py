"""Crawls a user can see and manage: ``scrapy crawls`` (and ``scrapy frontier`` without a
name) lists them, ``scrapy forget`` starts one over (with ``-a urls=yes`` its store rows
go too, the pages another crawl holds stay), a finished crawl run again says that
nothing is left, and a seed that failed is tried again at the next run. Real crawls of
local sites, on the embedded defaults (the frontier contract test covers Redis)."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

from testbed.webserver import DictSite, Response, WebServer
from tests.support.crawl import REPO, proxy_env, requested_urls, run_crawl, sqlite_url

SHARED = "<html><body><p>the same page on both sites</p></body></html>"


def command(tmp: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "scrapy", *args, "-s", f"SPITAG_STORE={sqlite_url(tmp / 'c.db')}",
         "-s", f"SPITAG_FRONTIER={sqlite_url(tmp / 'c-frontier.db')}"],
        cwd=REPO, env=proxy_env(None), capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL,
    )


def listed(tmp: Path) -> dict[str, dict]:
    run = command(tmp, "crawls", "-a", "format=json")
    assert run.returncode == 0, run.stderr[-2000:]
    return {c["crawl"]: c for c in json.loads(run.stdout)}


def test_crawls_are_listed_forgotten_and_started_over(webserver: WebServer, tmp_path: Path) -> None:
    webserver.add_site("one.test", DictSite({
        "/": '<html><body><a href="/shared.html">s</a> <a href="/a.html">a</a></body></html>',
        "/a.html": "<html><body><p>a</p></body></html>", "/shared.html": SHARED,
    }))
    webserver.add_site("two.test", DictSite({
        "/": '<html><body><a href="/shared.html">s</a></body></html>', "/shared.html": SHARED,
    }))
    one_urls = {"http://one.test/", "http://one.test/a.html", "http://one.test/shared.html"}
    for crawl, seed in (("one", "http://one.test/"), ("two", "http://two.test/")):
        run = run_crawl(webserver, tmp_path, seed, crawl=crawl, name="c")
        assert run.returncode == 0, run.describe()
    crawls = listed(tmp_path)
    assert {name: (c["done"], c["queued"], c["store_urls"], c["seeds"], c["seed_count"], c["strategy"])
            for name, c in crawls.items()} == {
        "one": (3, 0, 3, ["http://one.test/"], 1, "spitag"),
        "two": (2, 0, 2, ["http://two.test/"], 1, "spitag"),
    }
    assert all(c["last_run"].endswith("Z") for c in crawls.values())
    with sqlite3.connect(tmp_path / "c-frontier.db") as conn:  # the states by name, for SQL readers
        assert conn.execute("SELECT crawl, state, COUNT(*) FROM frontier_urls GROUP BY 1, 2").fetchall() == [
            ("one", "done", 3), ("two", "done", 2)]
    listing = command(tmp_path, "crawls")
    assert listing.returncode == 0, listing.stderr
    head, columns, *rows = listing.stdout.splitlines()
    assert f"({tmp_path / 'c-frontier.db'})" in head and f"({tmp_path / 'c.db'})" in head  # where they are
    assert columns.split()[:2] == ["crawl", "strategy"] and [r.split()[0] for r in rows] == ["one", "two"]
    text = command(tmp_path, "frontier")  # no name: the crawls there are
    assert text.returncode == 0, text.stderr
    assert [line.split()[0] for line in text.stdout.splitlines()[1:3]] == ["one", "two"]
    assert "scrapy frontier -a crawl=NAME" in text.stdout

    again = run_crawl(webserver, tmp_path, "http://one.test/", crawl="one", name="c")
    assert again.returncode == 0 and requested_urls(again.server_log) == [], again.describe()
    assert "nothing left to fetch (its 3 URL(s) were done in earlier runs)" in again.stderr
    assert "scrapy forget -a crawl=one" in again.stderr

    forget = command(tmp_path, "forget", "-a", "crawl=one")
    assert forget.returncode == 0 and "crawl 'one' forgotten by frontier" in forget.stderr, forget.stderr
    crawls = listed(tmp_path)
    assert (crawls["one"]["done"], crawls["one"]["store_urls"], crawls["one"]["strategy"]) == (0, 3, None)
    assert crawls["two"]["done"] == 2
    afresh = run_crawl(webserver, tmp_path, "http://one.test/", crawl="one", name="c")
    assert afresh.returncode == 0 and set(requested_urls(afresh.server_log)) == one_urls, afresh.describe()

    forget = command(tmp_path, "forget", "-a", "crawl=one", "-a", "urls=yes")
    assert forget.returncode == 0, forget.stderr
    assert "3 URL row(s), 2 page(s) no other crawl holds" in forget.stderr  # the shared page stays
    with sqlite3.connect(tmp_path / "c.db") as conn:
        assert conn.execute("SELECT crawl, COUNT(*) FROM url GROUP BY crawl").fetchall() == [("two", 2)]
        pages = conn.execute("SELECT COUNT(*) FROM page").fetchone()[0]
        held = conn.execute("SELECT COUNT(DISTINCT page_id) FROM url WHERE page_id IS NOT NULL").fetchone()[0]
        assert pages == held == 2 and conn.execute("SELECT COUNT(*) FROM outlink WHERE crawl = 'one'").fetchone()[0] == 0
    assert set(listed(tmp_path)) == {"two"}
    unknown = command(tmp_path, "forget", "-a", "crawl=nope")
    assert unknown.returncode == 2 and "crawl 'nope' is not in frontier" in unknown.stderr and "crawls there: two" in unknown.stderr


def test_a_seed_that_failed_is_tried_again_at_the_next_run(webserver: WebServer, tmp_path: Path) -> None:
    site = DictSite({"/": Response.html("<html><body>down</body></html>", status=500)})
    webserver.add_site("flaky.test", site)
    first = run_crawl(webserver, tmp_path, "http://flaky.test/", crawl="flaky", name="c", settings={"RETRY_TIMES": 0})
    assert first.returncode == 0 and [i["status"] for i in first.items] == [500], first.describe()
    site.add("/", "<html><body>up again</body></html>")
    second = run_crawl(webserver, tmp_path, "http://flaky.test/", crawl="flaky", name="c", settings={"RETRY_TIMES": 0})
    assert second.returncode == 0 and requested_urls(second.server_log) == ["http://flaky.test/"], second.describe()
    assert "1 seed(s) that failed last time tried again: http://flaky.test/" in second.stderr
    assert [i["status"] for i in second.items] == [200]
    third = run_crawl(webserver, tmp_path, "http://flaky.test/", crawl="flaky", name="c")
    assert requested_urls(third.server_log) == [] and "tried again" not in third.stderr  # answered: done
