"""SPITAG_MAX_UNSCORED: pages requested but not yet through the spider (downloading, or
waiting to be profiled and scored) stay within the limit, so that the frontier chooses
the next pages with recent scores; nothing is lost for it. Real crawls of a local site
whose pages answer slowly: the server's own log shows how many requests overlapped.

SPITAG_MAX_BACKLOG adapts the limit (spitag.pace): short when the pages wait for the
profile pool (heavy pages, one profile process), the cap when the network is the slow
part (pages that answer slowly)."""

from __future__ import annotations

from pathlib import Path

from tests.support.crawl import run_crawl
from testbed.sites import tree_paths, tree_site
from testbed.webserver import DictSite, Response, WebServer

DELAY = 0.25  # seconds each page takes to answer
PAGES = 40


def _most_overlapping(server: WebServer, skip: int = 0) -> int:
    """The most requests the server was answering at one moment, by its own log (from
    each request's arrival to its answer; one answered as the next arrives does not
    overlap), the first ``skip`` answers left out."""
    edges = []
    for entry in [e for e in server.log if e.path != "/robots.txt"][skip:]:
        edges += [(entry.arrived, 1), (entry.time, -1)]
    most = now = 0
    for _, step in sorted(edges):  # (at one moment, an answer before an arrival)
        now += step
        most = max(most, now)
    return most


def _crawl(
    tmp: Path, server: WebServer, name: str, limit: str, backlog: str = "16", skip: int = 0
) -> tuple[int, set[str], dict]:
    settings = {
        "CONCURRENT_REQUESTS": 8, "CONCURRENT_REQUESTS_PER_DOMAIN": 8,
        "SPITAG_MAX_UNSCORED": limit, "SPITAG_MAX_BACKLOG": backlog,
    }
    run = run_crawl(server, tmp, "http://slow.test/", settings=settings, name=name)
    assert run.returncode == 0, run.describe()
    fetched = {e.path for e in server.log if e.host == "slow.test" and e.status == 200}
    return _most_overlapping(server, skip), fetched, run.stats


def test_requests_wait_for_room_and_every_page_is_fetched(tmp_path: Path) -> None:
    with WebServer() as server:
        server.add_site("slow.test", tree_site(PAGES, fanout=8, delay=DELAY))
        limited, limited_pages, stats = _crawl(tmp_path, server, "limited", "2")
        free, free_pages, _ = _crawl(tmp_path, server, "free", "0")
    assert limited_pages == free_pages == tree_paths(PAGES) - {"/robots.txt"}
    assert limited <= 2
    assert int(stats.get("spitag/frontier/held_back", "0")) > 0
    assert free > 2  # without the limit, Scrapy's own (8 at a time) is the only one


def test_a_slow_network_keeps_its_downloads(tmp_path: Path) -> None:
    """Downloads are the slow part: the adapted limit grows from its start (twice the
    backlog allowed, 1, + 1) to the cap (16), and more requests than that start overlap
    once it has — up to Scrapy's CONCURRENT_REQUESTS (8), which a busy machine may not
    keep full."""
    with WebServer() as server:
        server.add_site("slow.test", tree_site(120, fanout=8, delay=DELAY))
        adapted, pages, stats = _crawl(tmp_path, server, "adapted", "16", backlog="1", skip=40)
    assert pages == tree_paths(120) - {"/robots.txt"}
    assert 4 <= adapted <= 8  # Scrapy's CONCURRENT_REQUESTS at most, not the backlog
    assert int(stats["spitag/frontier/unscored_limit_max"]) == 16
    assert int(stats["spitag/frontier/unscored_limit_min"]) == 3


def _heavy_site(pages: int, items: int) -> DictSite:
    """A tree of pages that are slow to profile (``items`` microdata items each) and
    quick to serve."""
    site = DictSite()
    things = "".join(
        f'<div itemscope itemtype="https://schema.org/Thing"><span itemprop="name">n{i}</span></div>'
        for i in range(items)
    )
    for i in range(pages):
        links = "".join(f'<a href="/p/{c}.html">page {c}</a> ' for c in range(4 * i + 1, min(4 * i + 5, pages)))
        response = Response.html(f"<html><head><title>P{i}</title></head><body>{links}{things}</body></html>")
        site.add("/" if i == 0 else f"/p/{i}.html", response)
    return site


def test_pages_waiting_to_be_profiled_shorten_the_limit(tmp_path: Path) -> None:
    """Pages come faster than one profile process takes them: the limit falls from
    the cap (32) to about the backlog (2) + 1 + the few downloads the pool needs, and
    every page is still fetched. With SPITAG_MAX_BACKLOG=0 the cap stays."""
    settings = {
        "CONCURRENT_REQUESTS": 16, "CONCURRENT_REQUESTS_PER_DOMAIN": 16,
        "SPITAG_MAX_UNSCORED": "32", "SPITAG_EXTRACT_PROCESSES": "1",
    }
    expected = {"/"} | {f"/p/{i}.html" for i in range(1, 40)}
    with WebServer() as server:
        server.add_site("heavy.test", _heavy_site(40, 600))
        run = run_crawl(server, tmp_path, "http://heavy.test/", name="adapted",
                        settings={**settings, "SPITAG_MAX_BACKLOG": "2"})
        assert run.returncode == 0, run.describe()
        assert {e.path for e in server.log if e.status == 200} >= expected
        assert len(run.items) == 40
        assert int(run.stats["spitag/frontier/unscored_limit_min"]) <= 6
        assert int(run.stats["spitag/frontier/held_back"]) > 0
        fixed = run_crawl(server, tmp_path, "http://heavy.test/", name="fixed",
                          settings={**settings, "SPITAG_MAX_BACKLOG": "0"})
        assert fixed.returncode == 0, fixed.describe()
        assert len(fixed.items) == 40
        assert int(fixed.stats["spitag/frontier/unscored_limit_min"]) == 32


def test_a_bad_limit_is_refused(tmp_path: Path) -> None:
    for name in ("SPITAG_MAX_UNSCORED", "SPITAG_MAX_BACKLOG"):
        for value in ("-1", "many"):
            run = run_crawl(None, tmp_path, "http://slow.test/", settings={name: value})
            assert run.returncode == 2, run.describe()
            assert name in run.stderr and "Traceback" not in run.stderr
