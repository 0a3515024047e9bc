"""Every page fetched ends, whatever the user's code does with it.

A frontier URL is acknowledged once its item is stored, or at once when it ends without
one. A pipeline of the user's that dropped an item (``DropItem``) or failed on it, and
a spider derived from SpiTag's whose callback raised or gave no item, used to leave the
URL leased: renewed for half an hour, then fetched again, with the crawl waiting on it.
Each crawl here runs against a real local site with the user's code in a module of its
own, and must end by itself, its frontier with nothing queued or leased."""

from __future__ import annotations

import json
import sqlite3
import textwrap
from pathlib import Path

from spitag.frontier.records import DONE
from tests.support.crawl import run_crawl, url_rows
from testbed.webserver import DictSite, Response, WebServer

HOME = """<html><head><title>home</title><meta property="og:title" content="home"></head><body>
<a href="/a">a</a> <a href="/b">b</a> <a href="/missing">missing</a>
<a href="/boom">boom</a> <a href="/late">late</a> <a href="/quiet">quiet</a></body></html>"""
BODY_MARK = "a-body-that-must-not-reach-the-log"


def leaf(name: str) -> str:
    return (f'<html><head><title>{name}</title><meta property="og:title" content="{name}">'
            f'</head><body><p>{BODY_MARK}</p></body></html>')


def site() -> DictSite:
    pages = {"/": HOME, **{f"/{n}": leaf(n) for n in ("a", "b", "boom", "late", "quiet")}}
    pages["/missing"] = Response.html(leaf("missing"), status=404)
    return DictSite(pages)


def frontier_states(tmp: Path) -> dict[str, int]:
    with sqlite3.connect(tmp / "crawl-frontier.db") as conn:
        return {url: state for url, state in conn.execute("SELECT url, state FROM frontier_url")}


def assert_all_done(tmp: Path, urls: set[str]) -> None:
    states = frontier_states(tmp)
    assert set(states) >= urls, states
    assert set(states.values()) == {DONE}, f"some URLs are not done: {states}"


def write_module(tmp: Path, name: str, source: str) -> dict[str, str]:
    """A module of the user's in ``tmp``; the environment that imports it."""
    (tmp / f"{name}.py").write_text(textwrap.dedent(source))
    return {"PYTHONPATH": str(tmp)}


PIPELINES = """
    from scrapy.exceptions import DropItem

    class Before:
        def process_item(self, item):
            if (item.get("status") or 0) >= 400:
                raise DropItem("an error page")
            if item["url"].endswith("/b"):
                raise ValueError("this pipeline broke")
            return item

    class After:
        def process_item(self, item):
            if item["url"].endswith("/a"):
                raise DropItem("not for the feed")
            return item
"""


def test_items_a_pipeline_drops_or_fails_on_end_their_urls(webserver: WebServer, tmp_path: Path) -> None:
    webserver.add_site("drop.test", site())
    env = write_module(tmp_path, "userpipes", PIPELINES)
    pipelines = {"userpipes.Before": 100, "pipelines.store.StorePipeline": 300, "userpipes.After": 400}
    run = run_crawl(webserver, tmp_path, "http://drop.test/", env=env, timeout=120,
                    settings={"ITEM_PIPELINES": json.dumps(pipelines)})
    assert run.returncode == 0, run.describe()
    assert run.stats.get("finish_reason") == "'finished'", run.describe()
    urls = {f"http://drop.test/{p}" for p in ("", "a", "b", "missing", "boom", "late", "quiet")}
    assert_all_done(tmp_path, urls)
    with run.connect() as conn:
        stored = set(url_rows(conn))
    # dropped or failed before the store: no row; dropped after it: stored all the same
    assert "http://drop.test/missing" not in stored and "http://drop.test/b" not in stored
    assert "http://drop.test/a" in stored and "http://drop.test/quiet" in stored
    assert set(run.items_by_url) == urls - {"http://drop.test/a", "http://drop.test/b", "http://drop.test/missing"}
    assert run.stats.get("spitag/items/dropped") == "2" and run.stats.get("spitag/items/failed") == "1"
    # the log names a dropped item by its URL; the page's body stays out of it
    assert "Dropped: an error page" in run.stderr and "<http://drop.test/missing> (status 404)" in run.stderr
    assert BODY_MARK not in run.stderr


SPIDER = """
    from spiders.spitag import SpitagSpider


    class Mine(SpitagSpider):
        name = "mine"

        async def parse(self, response):
            if response.url.endswith("/boom"):
                raise ValueError("boom before the item")
            if response.url.endswith("/quiet"):
                return
            if response.url.endswith("/a"):
                yield {"product": "a thing", "url": response.url}  # an item of the user's own
            output = super().parse(response)
            outputs = [o async for o in output] if hasattr(output, "__aiter__") else list(output)
            for o in outputs:
                yield o
                if response.url.endswith("/late"):
                    raise ValueError("late, after the item")
"""


def test_a_callback_that_raises_or_gives_no_item_ends_its_url(webserver: WebServer, tmp_path: Path) -> None:
    webserver.add_site("mine.test", site())
    env = write_module(tmp_path, "userspiders", SPIDER)
    run = run_crawl(webserver, tmp_path, "http://mine.test/", env=env, timeout=120, spider="mine",
                    settings={"SPIDER_MODULES": "spiders,userspiders"})
    assert run.returncode == 0, run.describe()
    assert run.stats.get("finish_reason") == "'finished'", run.describe()
    urls = {f"http://mine.test/{p}" for p in ("", "a", "b", "missing", "boom", "late", "quiet")}
    assert_all_done(tmp_path, urls)
    with run.connect() as conn:
        rows = url_rows(conn)
    boom = rows["http://mine.test/boom"]
    assert boom["status"] == 200 and boom["error"] == "callback ValueError: boom before the item"
    assert boom["page_id"] is None
    assert rows["http://mine.test/late"]["page_id"] is not None  # its item came before the error
    assert "http://mine.test/quiet" not in rows
    # logged and counted as Scrapy does, once each
    assert run.stderr.count("Spider error processing") == 2, run.describe()
    assert run.stats.get("spider_exceptions/ValueError") == "2"
    assert run.stats.get("spitag/errors/callback") == "1" and run.stats.get("spitag/pages/no_item") == "1"
    # the user's own item went to the feed, not into the page store
    assert {"product": "a thing", "url": "http://mine.test/a"} in run.items
    assert run.stats.get("spitag/store/other_items") == "1" and run.stats.get("spitag/store/rejected") == "0"
    assert rows["http://mine.test/a"]["page_id"] is not None
