"""The private internals of Scrapy and mf2py that spitag.compat reaches, each against the
pinned library: a release that renames or reshapes one fails here, by name, instead of
somewhere in a crawl."""

from __future__ import annotations

import inspect

import pytest
from mf2py import backcompat
from scrapy import Spider
from scrapy.core.downloader import Downloader
from scrapy.core.engine import ExecutionEngine, _Slot
from scrapy.core.scraper import Scraper
from scrapy.core.scraper import Slot as ScraperSlot
from scrapy.downloadermiddlewares.robotstxt import RobotsTxtMiddleware
from scrapy.utils.test import get_crawler

from spitag import compat
from spitag.extract import ROOTS_MARK


class _Nop(Spider):
    name = "nop"


@pytest.fixture
def crawler():
    return get_crawler(_Nop, {"DOWNLOAD_DELAY": 2.5, "ROBOTSTXT_OBEY": True, "TWISTED_REACTOR_ENABLED": False})


def test_the_engine_is_woken_through_its_slots_nextcall() -> None:
    assert "_slot" in inspect.getsource(ExecutionEngine.__init__)
    assert "nextcall" in inspect.signature(_Slot.__init__).parameters

    class NextCall:
        scheduled = 0

        def schedule(self) -> None:
            self.scheduled += 1

    class Engine:
        _slot = type("Slot", (), {"nextcall": NextCall()})()

    engine = Engine()
    compat.wake_engine(engine)
    assert engine._slot.nextcall.scheduled == 1
    compat.wake_engine(None)  # no engine yet: nothing to wake


def test_the_downloader_keeps_its_requests_and_its_delay(crawler) -> None:
    downloader = Downloader(crawler)
    assert downloader.active == set() and downloader._delay == 2.5 and downloader.slots == {}
    engine = type("Engine", (), {"downloader": downloader})()
    assert compat.downloads_active(engine) == []
    compat.no_downloader_delay(engine)
    assert downloader._delay == 0.0
    assert compat.downloads_active(None) == []


def test_the_scraper_slot_counts_the_responses_in_the_spider(crawler) -> None:
    assert "self.slot" in inspect.getsource(Scraper.__init__)
    slot = ScraperSlot(5_000_000)
    assert slot.active == set()
    scraper = type("Scraper", (), {"slot": slot})()
    assert compat.pages_in_spider(type("Engine", (), {"scraper": scraper})()) == 0
    assert compat.pages_in_spider(type("Engine", (), {"scraper": type("S", (), {"slot": None})()})()) is None


def test_the_robots_middleware_keeps_its_parsers_by_netloc(crawler) -> None:
    middleware = RobotsTxtMiddleware(crawler)
    assert not compat.robots_parser_known(middleware, "a.test:80")
    compat.set_robots_parser(middleware, "a.test:80", "parser")
    assert compat.robots_parser_known(middleware, "a.test:80") and middleware._parsers["a.test:80"] == "parser"
    # spitag.robots overrides this hook: the one place a fetched robots.txt passes through
    assert list(inspect.signature(RobotsTxtMiddleware._parse_robots).parameters) == [
        "self", "response", "netloc", "request"]


def test_mf2py_classic_rules_are_patched_and_its_root_map_is_read() -> None:
    assert {"hentry", "vcard", "hcard"} & set(compat.mf2py_classic_map())
    assert backcompat._make_classes_rule is not compat.original_mf2py_classes_rule()  # the lazy copy
    assert getattr(backcompat, "_spitag_lazy_copy", False)
    assert backcompat.copy is __import__("copy")  # apply_rules' copy, put back after each outermost root
    assert list(inspect.signature(compat.original_mf2py_classes_rule()).parameters) == ["old_classes", "new_classes"]
    assert ROOTS_MARK.startswith("data-")


def test_the_forkserver_can_be_stopped_and_starts_again() -> None:
    import multiprocessing
    import multiprocessing.forkserver

    context = multiprocessing.get_context("forkserver")
    with context.Pool(1) as pool:
        assert pool.apply(abs, (-3,)) == 3
    server = multiprocessing.forkserver._forkserver
    assert callable(server._stop) and server._forkserver_pid is not None
    compat.stop_forkserver()
    assert server._forkserver_pid is None
    with context.Pool(1) as pool:  # a later pool starts another
        assert pool.apply(abs, (-4,)) == 4
    compat.stop_forkserver()


def test_a_pool_whose_worker_died_halfway_through_a_result_breaks() -> None:
    """CPython waits for the rest of a result a dead worker began to send: the future
    never finishes (were that fixed, this test says the shim can go). The shim breaks
    the pool, and the future fails as for any dead worker."""
    import multiprocessing
    import time
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    from tests.support.dying import die_halfway_through_the_result

    executor = ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("forkserver"))
    try:
        future = executor.submit(die_halfway_through_the_result)
        (worker,) = executor._processes.values()
        worker.join(timeout=30)
        assert worker.exitcode == -9
        time.sleep(1.0)
        assert not future.done()  # CPython alone: waits for ever
        assert compat.break_pool_after_a_dead_worker(executor)
        assert isinstance(future.exception(timeout=30), BrokenProcessPool)
    finally:
        executor.shutdown(wait=False, cancel_futures=True)
        compat.stop_forkserver()


def test_a_pool_of_live_workers_is_left_alone() -> None:
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    executor = ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("forkserver"))
    try:
        assert executor.submit(abs, -5).result(timeout=30) == 5
        assert not compat.break_pool_after_a_dead_worker(executor)
        assert executor.submit(abs, -6).result(timeout=30) == 6
    finally:
        executor.shutdown(wait=True)
        compat.stop_forkserver()
