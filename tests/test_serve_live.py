"""The live page of ``scrapy serve`` in a real headless browser (Debian's Chromium,
testbed/browser.py) during a real crawl of two workers on one Redis frontier and one
PostgreSQL store: the page loads, its numbers move while the crawl runs, both workers
show as running, and once the crawl has stopped the numbers are ``scrapy frontier``'s
and the store's."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from pathlib import Path

from spitag.store import open_store
from testbed.browser import dump_dom, screenshot
from testbed.sites import tree_site
from testbed.webserver import WebServer
from tests.support.crawl import REPO, proxy_env
from tests.test_redis_workers import until, worker
from tests.test_serve import Served, sql

PAGES = 240


def shown(dom: str) -> dict[str, object]:
    """The live page's numbers (``<b id=…>``) and its workers' states, as the browser left them."""
    numbers = {k: v for k, v in re.findall(r'<b id="(\w+)">([^<]*)</b>', dom)}
    out: dict[str, object] = {k: int(v.replace(",", "")) if v.replace(",", "").isdigit() else v
                              for k, v in numbers.items()}
    table = re.search(r'<table id="workers">(.*?)</table>', dom, re.S)
    out["running"] = table.group(1).count('<span class="good">running</span>') if table else 0
    out["updated"] = re.search(r'<span id="at">([^<]*)</span>', dom).group(1)
    return out


def test_the_live_page_follows_a_two_worker_crawl(redis_url: str, pg_url: str, tmp_path: Path) -> None:
    open_store(pg_url).close()  # the store the workers will fill, there before the server
    served = Served(pg_url, redis_url, logs=tmp_path)
    try:
        page = f"{served.base}/crawls/live/live"
        with WebServer() as web:
            web.add_site("live.test", tree_site(PAGES, fanout=4, delay=0.25))
            settings = ("-s", f"SPITAG_STORE={pg_url}", "-s", "CONCURRENT_REQUESTS=2", "-s", "CONCURRENT_REQUESTS_PER_DOMAIN=2")
            workers = [worker(tmp_path, name, redis_url, web, "http://live.test/", *settings, crawl="live") for name in "ab"]
            try:
                def done() -> int:
                    status, state = served.get("/api/crawls/live/frontier")
                    return state["done"] if status == 200 else 0

                until(lambda: done() >= 10, *workers)
                first = shown(dump_dom(page))
                time.sleep(3)
                second = shown(dump_dom(page))
                png = screenshot(page, tmp_path / "live.png")  # the crawl running: docs/live.png is one
                assert all(w.poll() is None for w in workers), "the crawl ended before the page was seen twice"
                assert isinstance(first["done"], int) and isinstance(second["done"], int), (first, second)
                assert second["done"] > first["done"] and second["pages"] > first["pages"], (first, second)
                assert second["updated"] != first["updated"] and second["running"] == 2, second
                for w in workers:
                    assert w.wait(timeout=300) == 0, (tmp_path / "a.log").read_text()[-3000:]
            finally:
                for w in workers:
                    if w.poll() is None:
                        w.kill()
        time.sleep(2.5)  # the live data is made again at most every 2 s
        last = shown(dump_dom(page))
        run = subprocess.run([sys.executable, "-m", "scrapy", "frontier", "-a", "crawl=live", "-a", "format=json",
                              "-s", f"SPITAG_FRONTIER={redis_url}"],
                             cwd=REPO, env=proxy_env(None), capture_output=True, text=True, timeout=120)
        assert run.returncode == 0, run.stderr
        cli = json.loads(run.stdout)
        assert (last["queued"], last["leased"], last["done"]) == (cli["queued"], cli["leased"], cli["done"])
        assert last["done"] >= PAGES and last["running"] == 0
        [(pages, items)] = sql(pg_url, "SELECT COUNT(u.page_id), SUM(p.semantic_total) FROM url u"
                                       " LEFT JOIN page p ON p.id = u.page_id WHERE u.crawl = 'live'")
        assert (last["pages"], last["items"]) == (pages, items)
        assert png.read_bytes()[:4] == b"\x89PNG"
    finally:
        served.stop()
