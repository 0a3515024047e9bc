"""Scrapy's own commands inside the project: ``scrapy fetch``, ``scrapy shell`` and
``scrapy parse`` run in SpiTag's project, against a real local site.

SpiTag's parts — its scheduler over a frontier, its store pipeline, its progress
extension — come with SpiTag's spider (``spitag.parts``): the spider ``fetch`` and
``shell`` run is plain Scrapy, and writes no store or frontier into the working folder;
``parse --spider spitag`` shows what SpiTag makes of one page."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.support.crawl import REPO, proxy_env, read_jsonl, run_crawl, sqlite_url
from testbed.sites import DictSite, tree_site
from testbed.webserver import WebServer

TIMEOUT = 90  # seconds: each command answers in a few; a hang fails the test, not the run
PAGE = ('<html><head><title>a page</title><meta property="og:title" content="fetched here">'
        '</head><body><a href="/other">other</a></body></html>')


def scrapy(webserver: WebServer, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``scrapy ARGS`` with the project's settings, run in ``cwd`` (not the repository,
    so that whatever it writes in its working folder shows)."""
    env = proxy_env(webserver, {"SCRAPY_SETTINGS_MODULE": "settings", "PYTHONPATH": str(REPO)})
    return subprocess.run([sys.executable, "-m", "scrapy", *args], cwd=cwd, env=env, text=True,
                          stdin=subprocess.DEVNULL, capture_output=True, timeout=TIMEOUT)


def test_scrapy_fetch_prints_the_page_and_writes_nothing(webserver: WebServer, tmp_path: Path) -> None:
    webserver.add_site("page.test", DictSite({"/": PAGE}))
    run = scrapy(webserver, tmp_path, "fetch", "--nolog", "http://page.test/")
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stdout.strip() == PAGE
    assert sorted(p.name for p in tmp_path.iterdir()) == []  # no store, no frontier


def test_scrapy_shell_answers_and_writes_nothing(webserver: WebServer, tmp_path: Path) -> None:
    webserver.add_site("page.test", DictSite({"/": PAGE}))
    run = scrapy(webserver, tmp_path, "shell", "http://page.test/",
                 "-c", "(response.status, response.css('meta::attr(content)').get())")
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stdout.strip() == "(200, 'fetched here')"
    assert "[spitag.progress]" not in run.stderr  # progress lines are a crawl's
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_scrapy_parse_shows_the_item_of_one_page_and_does_not_resume_the_crawl(
        webserver: WebServer, tmp_path: Path) -> None:
    """``scrapy parse --spider spitag`` shows what SpiTag makes of one page. A crawl of
    the same seeds that stopped at its page budget has URLs waiting in the frontier;
    ``parse`` fetches its one page and none of them."""
    webserver.add_site("tree.test", tree_site(20, fanout=4))
    first = run_crawl(webserver, tmp_path, "http://tree.test/", settings={"SPITAG_PAGE_BUDGET": 3})
    assert first.returncode == 0, first.describe()
    waiting = [u for u in (f"http://tree.test/p/{i}.html" for i in range(20)) if u not in first.items_by_url]
    assert len(waiting) >= 10  # the crawl left them queued

    webserver.clear_log()
    page = waiting[-1]
    run = scrapy(webserver, tmp_path, "parse", "--nolog", "--spider", "spitag",
                 "-a", "seeds=http://tree.test/",
                 "-s", f"SPITAG_FRONTIER={sqlite_url(tmp_path / 'crawl-frontier.db')}",
                 "-s", f"SPITAG_STORE={sqlite_url(tmp_path / 'crawl.db')}", page)
    assert run.returncode == 0, run.stderr[-3000:]
    assert "# Scraped Items" in run.stdout and f"'url': '{page}'" in run.stdout, run.stdout[-3000:]
    assert "'semantic':" in run.stdout  # SpiTag's item: its semantic counts
    asked = [f"http://{e.host}{e.path}" for e in webserver.log if e.path != "/robots.txt"]
    assert asked == [page]


def test_scrapy_fetch_and_shell_follow_redirects(webserver: WebServer, tmp_path: Path) -> None:
    """SpiTag's spider records redirects instead of following them, for itself only:
    ``fetch`` and ``shell`` get Scrapy's redirects (they printed nothing, or failed on a 301)."""
    webserver.add_site("page.test", DictSite({"/": PAGE}).redirect("/old", "/"))
    run = scrapy(webserver, tmp_path, "fetch", "--nolog", "http://page.test/old")
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stdout.strip() == PAGE
    run = scrapy(webserver, tmp_path, "shell", "http://page.test/old", "-c", "(response.status, response.url)")
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stdout.strip() == "(200, 'http://page.test/')"


PLAIN_SPIDER = '''
import scrapy


class Plain(scrapy.Spider):
    name = "plain"
    start_urls = ["http://plain.test/"]

    def parse(self, response):
        yield {"url": response.url, "depth": response.meta["depth"]}
        for href in response.css("a::attr(href)").getall():
            yield response.follow(href)
'''


def test_another_spider_of_the_project_keeps_scrapys_redirects_depth_and_error_filter(
        webserver: WebServer, tmp_path: Path) -> None:
    """A plain Scrapy spider run in the project (a ``genspider`` one) has Scrapy's
    behaviour: redirects followed, 404s kept from its callback, ``DEPTH_LIMIT`` honoured."""
    pages = {
        "/": '<a href="/old">old</a> <a href="/missing">missing</a>',
        "/one": '<a href="/two">two</a>',
        "/two": '<a href="/three">three</a>',
        "/three": "the end",
    }
    webserver.add_site("plain.test", DictSite(pages).redirect("/old", "/one"))
    (tmp_path / "userspiders.py").write_text(PLAIN_SPIDER)
    env = proxy_env(webserver, {"SCRAPY_SETTINGS_MODULE": "settings",
                                "PYTHONPATH": f"{REPO}:{tmp_path}"})
    out = tmp_path / "plain.jsonl"
    run = subprocess.run(
        [sys.executable, "-m", "scrapy", "crawl", "plain", "-O", str(out), "-s", "DEPTH_LIMIT=2",
         "-s", "SPIDER_MODULES=spiders,userspiders"],
        cwd=tmp_path, env=env, text=True, stdin=subprocess.DEVNULL, capture_output=True, timeout=TIMEOUT)
    assert run.returncode == 0, run.stderr[-3000:]
    items = {item["url"]: item["depth"] for item in read_jsonl(out)}
    # /old redirected to /one (depth 1); /two at depth 2; /three beyond DEPTH_LIMIT; /missing filtered
    assert items == {"http://plain.test/": 0, "http://plain.test/one": 1, "http://plain.test/two": 2}
    assert "Ignoring response <404 http://plain.test/missing>" in run.stderr
    assert not (tmp_path / "spitag.db").exists() and not (tmp_path / "spitag-frontier.db").exists()


def test_scrapy_parse_without_seeds_is_one_clear_error(webserver: WebServer, tmp_path: Path) -> None:
    webserver.add_site("page.test", DictSite({"/": PAGE}))
    run = scrapy(webserver, tmp_path, "parse", "--spider", "spitag", "http://page.test/")
    assert run.returncode == 2, run.stderr[-3000:]
    assert run.stderr.strip().splitlines() == [
        "spitag: error: no seeds: pass -a seeds=URL1,URL2 or -a seeds=path/to/seeds.txt"], run.stderr[-3000:]
    assert "Traceback" not in run.stderr and webserver.log == []
