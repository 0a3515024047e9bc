"""robots.txt, end to end: its rules obeyed, each host's asked for once a crawl (kept in
the frontier for the next run), an error answer asked again; and a host's Retry-After
honoured only up to SPITAG_MAX_RETRY_AFTER."""

from __future__ import annotations

from pathlib import Path

from tests.support.crawl import run_crawl
from testbed.sites import RefusingSite
from testbed.webserver import DictSite, Response, WebServer

PAGE = '<html><head><meta property="og:title" content="{0}"></head><body>{1}</body></html>'


def site(robots: Response) -> DictSite:
    links = '<a href="/open/1.html">1</a> <a href="/private/2.html">2</a> <a href="/private/">p</a>'
    return DictSite({
        "/robots.txt": robots,
        "/": PAGE.format("home", links),
        "/open/1.html": PAGE.format("open", '<a href="/private/3.html">3</a>'),
        "/private/": PAGE.format("private", ""),
        "/private/2.html": PAGE.format("private", ""),
        "/private/3.html": PAGE.format("private", ""),
    })


def test_disallowed_paths_are_never_requested(webserver: WebServer, tmp_path: Path) -> None:
    webserver.add_site("rules.test", site(Response.text("User-agent: *\nDisallow: /private/\n")))
    run = run_crawl(webserver, tmp_path, "http://rules.test/")
    assert run.returncode == 0, run.describe()
    asked = {e.path for e in run.server_log if e.host == "rules.test"}
    assert asked == {"/robots.txt", "/", "/open/1.html"}
    assert set(run.items_by_url) == {"http://rules.test/", "http://rules.test/open/1.html"}  # no row
    assert run.stats.get("spitag/filtered/robots") == "3", run.describe()  # and each of them ended
    assert run.stats.get("spitag/frontier/acked") == "5", run.describe()


def test_robots_txt_is_kept_for_the_next_run_but_an_error_is_asked_again(webserver: WebServer, tmp_path: Path) -> None:
    """A robots.txt answered (2xx–4xx) is kept in the frontier: a second run of the
    crawl does not ask for it. A 5xx is not kept: the next run asks again (RFC 9309:
    the host is crawled as allowed meanwhile)."""
    webserver.add_site("kept.test", site(Response.text("User-agent: *\nDisallow: /private/\n")))
    webserver.add_site("broken.test", site(Response.text("down for maintenance", status=500)))
    for host, asked_again in (("kept.test", False), ("broken.test", True)):
        settings = {"SPITAG_RECRAWL_INTERVAL": 0, "SPITAG_RECRAWL_MIN_INTERVAL": 0, "RETRY_TIMES": 0}
        first = run_crawl(webserver, tmp_path / host, f"http://{host}/", settings=settings)
        assert first.returncode == 0, first.describe()
        assert [e.path for e in first.server_log if e.path == "/robots.txt"] == ["/robots.txt"]
        second = run_crawl(webserver, tmp_path / host, f"http://{host}/", settings=settings)  # a recrawl
        assert second.returncode == 0, second.describe()
        assert any(e.path == "/" for e in second.server_log), second.describe()  # it did crawl again
        robots = [e for e in second.server_log if e.path == "/robots.txt"]
        assert bool(robots) == asked_again, (host, robots)
        private = {e.path for e in first.server_log + second.server_log if e.path.startswith("/private/")}
        assert bool(private) == asked_again  # no rules while robots.txt fails: all allowed


def test_a_retry_after_longer_than_the_cap_pauses_the_host_for_the_cap(webserver: WebServer, tmp_path: Path) -> None:
    """``Retry-After: 100`` with ``SPITAG_MAX_RETRY_AFTER=1``: the host is left alone 1 s,
    not 100, and the refused page is asked again then and stored."""
    busy = RefusingSite(10, retry_after="100")
    webserver.add_site("busy.test", busy)
    run = run_crawl(webserver, tmp_path, "http://busy.test/",
                    settings={"SPITAG_STRATEGY": "bfs", "SPITAG_MAX_RETRY_AFTER": 1})
    assert run.returncode == 0, run.describe()
    assert run.stats.get("spitag/politeness/retry_after_max_s") == "1.0", run.describe()
    retried = [e for e in run.server_log if e.path == busy.refused]
    assert [e.status for e in retried] == [429, 200]
    assert retried[1].arrived - retried[0].time >= 0.95  # after the capped pause, not at once
    assert run.items_by_url[f"http://busy.test{busy.refused}"]["status"] == 200
