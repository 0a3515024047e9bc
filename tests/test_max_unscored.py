"""SPITAG_MAX_UNSCORED: pages requested but not yet through the spider (downloading, or
waiting to be profiled and scored) stay within the limit, so that the frontier chooses
the next pages with recent scores; nothing is lost for it. Real crawls of a local site
whose pages answer slowly: the server's own log shows how many requests overlapped."""

from __future__ import annotations

from pathlib import Path

from tests.support.crawl import run_crawl
from tests.support.sites import tree_paths, tree_site
from tests.support.webserver import WebServer

DELAY = 0.25  # seconds each page takes to answer
PAGES = 40


def _most_overlapping(server: WebServer) -> int:
    """The most requests the server was answering at one moment (each took DELAY,
    a little less counted so that one ending as the next starts does not overlap)."""
    edges = []
    for entry in server.log:
        if entry.path == "/robots.txt":
            continue
        edges += [(entry.time - DELAY + 0.03, 1), (entry.time - 0.03, -1)]
    most = now = 0
    for _, step in sorted(edges):
        now += step
        most = max(most, now)
    return most


def _crawl(tmp: Path, server: WebServer, name: str, limit: str) -> tuple[int, set[str], dict]:
    settings = {"CONCURRENT_REQUESTS": 8, "CONCURRENT_REQUESTS_PER_DOMAIN": 8, "SPITAG_MAX_UNSCORED": limit}
    run = run_crawl(server, tmp, "http://slow.test/", settings=settings, name=name)
    assert run.returncode == 0, run.describe()
    fetched = {e.path for e in server.log if e.host == "slow.test" and e.status == 200}
    return _most_overlapping(server), fetched, run.stats


def test_requests_wait_for_room_and_every_page_is_fetched(tmp_path: Path) -> None:
    with WebServer() as server:
        server.add_site("slow.test", tree_site(PAGES, fanout=8, delay=DELAY))
        limited, limited_pages, stats = _crawl(tmp_path, server, "limited", "2")
        free, free_pages, _ = _crawl(tmp_path, server, "free", "0")
    assert limited_pages == free_pages == tree_paths(PAGES) - {"/robots.txt"}
    assert limited <= 2
    assert int(stats.get("spitag/frontier/held_back", "0")) > 0
    assert free > 2  # without the limit, Scrapy's own (8 at a time) is the only one


def test_a_bad_limit_is_refused(tmp_path: Path) -> None:
    for value in ("-1", "many"):
        run = run_crawl(None, tmp_path, "http://slow.test/", settings={"SPITAG_MAX_UNSCORED": value})
        assert run.returncode == 2, run.describe()
        assert "SPITAG_MAX_UNSCORED" in run.stderr and "Traceback" not in run.stderr
