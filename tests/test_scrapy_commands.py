"""Scrapy's own commands inside the project: ``scrapy fetch``, ``scrapy shell`` and
``scrapy parse`` run with SpiTag's settings (its scheduler, store pipeline and progress
extension), against a real local site.

They used to hang: the frontier scheduler served ``fetch``'s and ``shell``'s spider,
lost their callbacks and waited for an acknowledgement that never came, after writing
a store and a frontier into the working folder. Now only a spider that crawls a
frontier gets one (``spitag.frontier.uses_frontier``)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.support.crawl import REPO, proxy_env, run_crawl, sqlite_url
from tests.support.sites import DictSite, tree_site
from tests.support.webserver import WebServer

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
