"""Recrawl against a real local server: a finished crawl run again fetches only what
expired, with conditional requests; 304s, changed and unchanged pages land in the store
as they should; the revisit interval adapts within its bounds."""

from __future__ import annotations

import time
from datetime import datetime, timedelta, timezone
from email.utils import format_datetime
from pathlib import Path

import pytest

from tests.support.crawl import page_rows, requested_urls, run_crawl, url_rows
from testbed.webserver import DictSite, Response, WebServer

HOST = "news.test"
BASE = f"http://{HOST}"
LAST_MODIFIED = format_datetime(datetime(2026, 1, 5, 12, 0, tzinfo=timezone.utc), usegmt=True)


def page(title: str, *links: str, extra: str = "") -> str:
    anchors = "".join(f'<a href="{link}">{link}</a> ' for link in links)
    return (
        f'<html><head><title>{title}</title><meta property="og:title" content="{title}">'
        f"</head><body><h1>{title}</h1>{extra}{anchors}</body></html>"
    )


def news_site() -> DictSite:
    in_an_hour = format_datetime(datetime.now(timezone.utc) + timedelta(hours=1), usegmt=True)
    return DictSite({
        "/": page("Home", "/a", "/b", "/c", "/d", "/fresh", "/later"),
        "/a": Response.html(page("A"), headers={"ETag": '"a1"'}),
        "/b": Response.html(page("B"), headers={"Last-Modified": LAST_MODIFIED}),
        "/c": Response.html(page("C, first edition"), headers={"ETag": '"c1"'}),
        "/d": page("D, no validators"),
        "/fresh": Response.html(page("Fresh"), headers={"Cache-Control": "public, max-age=3600"}),
        "/later": Response.html(page("Later"), headers={"Expires": in_an_hour}),
    })


@pytest.fixture(params=["sqlite", "redis"])
def frontier(request: pytest.FixtureRequest, tmp_path: Path) -> dict[str, str]:
    """The frontier backends: the embedded one, and a real redis-server."""
    if request.param == "redis":
        return {"SPITAG_FRONTIER": request.getfixturevalue("redis_url")}
    return {}


def crawl(server: WebServer, tmp: Path, **settings: object):
    run = run_crawl(server, tmp, f"{BASE}/", crawl="news", settings={
        "SPITAG_RECRAWL_INTERVAL": 0, "SPITAG_RECRAWL_MIN_INTERVAL": 0, **settings,
    })
    assert run.returncode == 0, run.describe()
    assert "Traceback" not in run.stderr and "Spider error processing" not in run.stderr
    return run


def fetched_paths(run) -> list[str]:
    return sorted(url.removeprefix(BASE) for url in requested_urls(run.server_log))


def test_a_finished_crawl_run_again_fetches_what_expired_with_conditional_requests(
    tmp_path: Path, frontier: dict[str, str],
) -> None:
    site = news_site()
    with WebServer() as server:
        server.add_site(HOST, site)
        first = crawl(server, tmp_path, **frontier)
        assert fetched_paths(first) == ["/", "/a", "/b", "/c", "/d", "/fresh", "/later"]
        with first.connect() as conn:
            before = url_rows(conn)
            pages_before = page_rows(conn)
        assert before[f"{BASE}/a"]["etag"] == '"a1"'
        assert before[f"{BASE}/b"]["last_modified"] == LAST_MODIFIED
        assert before[f"{BASE}/fresh"]["expires"] > datetime.now(timezone.utc).isoformat()[:19]
        # /c changes and links to a page that did not exist before.
        site.add("/c", Response.html(page("C, second edition", "/new"), headers={"ETag": '"c2"'}))
        site.add("/new", page("New"))

        second = crawl(server, tmp_path, **frontier)

        # Only the expired URLs (the ones whose freshness is still running are left
        # alone), plus the page the changed one links to now.
        assert fetched_paths(second) == ["/", "/a", "/b", "/c", "/d", "/new"]
        assert server.headers_for(HOST, "/a").get("If-None-Match") == '"a1"'
        assert server.headers_for(HOST, "/b").get("If-Modified-Since") == LAST_MODIFIED
        assert server.headers_for(HOST, "/c").get("If-None-Match") == '"c1"'
        assert "If-None-Match" not in server.headers_for(HOST, "/d")
        assert "If-None-Match" not in server.headers_for(HOST, "/new")
        statuses = {e.path: e.status for e in second.server_log if e.path != "/robots.txt"}
        assert statuses == {"/": 200, "/a": 304, "/b": 304, "/c": 200, "/d": 200, "/new": 200}

        items = second.items_by_url
        assert {u.removeprefix(BASE): (i["status"], i["changed"]) for u, i in items.items()} == {
            "/": (200, False), "/a": (304, False), "/b": (304, False), "/c": (200, True),
            "/d": (200, False), "/new": (200, None),
        }
        assert items[f"{BASE}/a"]["md5"] == pages_before[before[f"{BASE}/a"]["page_id"]]["md5"]
        assert items[f"{BASE}/a"]["reason"]["recrawl"] is True
        stats = second.stats
        assert stats["spitag/recrawl/revived"] == "5"
        assert stats["spitag/recrawl/not_modified"] == "2"
        assert stats["spitag/recrawl/changed"] == "1"
        assert stats["spitag/recrawl/unchanged"] == "2"

        with second.connect() as conn:
            after = url_rows(conn)
            pages_after = page_rows(conn)
        for path in ("/a", "/b"):  # 304: checked moves on, the page and status stay
            old, new = before[BASE + path], after[BASE + path]
            assert (new["status"], new["page_id"], new["fetched"]) == (200, old["page_id"], old["fetched"])
            assert new["checked"] > old["checked"]
            assert new["etag"] == old["etag"] and new["last_modified"] == old["last_modified"]
        old_c, new_c = before[f"{BASE}/c"], after[f"{BASE}/c"]
        assert new_c["page_id"] != old_c["page_id"] and new_c["etag"] == '"c2"'
        assert pages_after[new_c["page_id"]]["md5"] != pages_before[old_c["page_id"]]["md5"]
        assert pages_after[new_c["page_id"]]["modified"] > pages_before[old_c["page_id"]]["modified"]
        assert old_c["page_id"] in pages_after  # the earlier edition is kept
        assert after[f"{BASE}/d"]["page_id"] == before[f"{BASE}/d"]["page_id"]
        assert after[f"{BASE}/fresh"] == before[f"{BASE}/fresh"]
        assert after[f"{BASE}/later"] == before[f"{BASE}/later"]
        # The export of the whole crawl has every URL once, /new included.
        assert set(after) == {BASE + p for p in ("/", "/a", "/b", "/c", "/d", "/fresh", "/later", "/new")}


def test_nothing_is_fetched_again_before_it_expires(tmp_path: Path) -> None:
    with WebServer() as server:
        server.add_site(HOST, news_site())
        first = run_crawl(server, tmp_path, f"{BASE}/", crawl="news")  # default interval: 7 days
        assert first.returncode == 0, first.describe()
        assert len(requested_urls(first.server_log)) == 7
        again = run_crawl(server, tmp_path, f"{BASE}/", crawl="news")
        assert again.returncode == 0, again.describe()
        assert requested_urls(again.server_log) == []
        assert again.items == []
        with again.connect() as conn:
            intervals = {r["revisit_interval"] for r in url_rows(conn).values()}
        assert intervals == {7 * 86400.0}
        # Recrawl off: not even what expired is fetched.
        off = run_crawl(server, tmp_path, f"{BASE}/", crawl="news", settings={
            "SPITAG_RECRAWL": "False", "SPITAG_RECRAWL_INTERVAL": 0, "SPITAG_RECRAWL_MIN_INTERVAL": 0,
        })
        assert off.returncode == 0 and requested_urls(off.server_log) == []


def test_the_interval_adapts_to_how_often_a_page_changes_within_its_bounds(tmp_path: Path) -> None:
    site = DictSite({
        "/": page("Home", "/still", "/busy"),
        "/still": Response.html(page("Still"), headers={"ETag": '"s"'}),
        "/busy": page("Busy 0"),
    })
    settings = {
        "SPITAG_RECRAWL_INTERVAL": 1.0, "SPITAG_RECRAWL_MIN_INTERVAL": 0.7,
        "SPITAG_RECRAWL_MAX_INTERVAL": 1.5, "SPITAG_RECRAWL_INC_RATE": 0.4,
        "SPITAG_RECRAWL_DEC_RATE": 0.2,
    }
    seen: list[dict[str, float]] = []
    with WebServer() as server:
        server.add_site(HOST, site)
        for edition in range(1, 4):
            run = run_crawl(server, tmp_path, f"{BASE}/", crawl="busy", settings=settings)
            assert run.returncode == 0, run.describe()
            with run.connect() as conn:
                rows = url_rows(conn)
            seen.append({u.removeprefix(BASE): r["revisit_interval"] for u, r in rows.items()})
            for row in rows.values():  # due `interval` seconds after the check
                checked = datetime.fromisoformat(row["checked"].replace("Z", "+00:00"))
                expires = datetime.fromisoformat(row["expires"].replace("Z", "+00:00"))
                assert (expires - checked).total_seconds() == pytest.approx(row["revisit_interval"], abs=0.002)
            if edition == 1:
                assert fetched_paths(run) == ["/", "/busy", "/still"]
            else:
                assert fetched_paths(run) == ["/", "/busy", "/still"]
                assert {e.path: e.status for e in run.server_log}["/still"] == 304
            site.add("/busy", page(f"Busy {edition}"))
            time.sleep(1.6)  # everything expires (the longest interval is 1.5 s)
    # First fetch: the default. Changed: × 0.8 (not below 0.7). Unchanged: × 1.4 (not above 1.5).
    assert seen[0] == {"/": 1.0, "/still": 1.0, "/busy": 1.0}
    assert seen[1] == pytest.approx({"/": 1.4, "/still": 1.4, "/busy": 0.8})
    assert seen[2] == pytest.approx({"/": 1.5, "/still": 1.5, "/busy": 0.7})
