"""One outage policy (spitag.outage) for every component that talks to Redis or
PostgreSQL: one back-off, one cap, one log line, shared by a crawl's components."""

from __future__ import annotations

import logging

import pytest
from scrapy.utils.test import get_crawler

from spitag.errors import BackendUnavailableError, FrontierUnavailableError
from spitag.outage import FIRST_BACKOFF, MAX_BACKOFF, Outage


def test_a_backend_out_is_asked_again_after_a_back_off_that_doubles_to_a_cap(monkeypatch, caplog) -> None:
    clock = [100.0]
    monkeypatch.setattr("spitag.outage.time.monotonic", lambda: clock[0])
    outage = Outage("frontier", "redis://user:secret@127.0.0.1:1/0")
    calls: list[str] = []

    def down() -> str:
        calls.append("asked")
        raise FrontierUnavailableError("frontier redis://user:secret@127.0.0.1:1/0: Redis unavailable: refused")

    with caplog.at_level(logging.INFO, logger="spitag.outage"):
        assert outage.call(down, default="kept") == "kept" and outage.down
        waits = [outage.wait()]
        for _ in range(8):
            assert outage.call(down, default="kept") == "kept"  # within the back-off: not asked
            clock[0] += outage.wait()
            outage.call(down, default="kept")  # asked again, fails again
            waits.append(outage.wait())
    assert waits[0] == FIRST_BACKOFF and waits[1] == 2 * FIRST_BACKOFF and waits[-1] == MAX_BACKOFF
    assert len(calls) == 9  # once per back-off, never in between
    clock[0] += MAX_BACKOFF
    with caplog.at_level(logging.INFO, logger="spitag.outage"):
        assert outage.call(lambda: "answer") == "answer" and not outage.down and outage.wait() == 0
    lines = [r.getMessage() for r in caplog.records]
    assert lines[0].endswith("retrying with backoff, nothing is lost") and "secret" not in lines[0]
    assert len(lines) == 2 and lines[1].startswith("frontier redis://user:***@127.0.0.1:1/0 is back after")


def test_every_component_of_a_crawl_shares_one_outage_per_backend() -> None:
    crawler = get_crawler()
    frontier = Outage.of(crawler, "frontier", "redis://h:1/0")
    assert Outage.of(crawler, "frontier") is frontier and Outage.of(crawler, "store") is not frontier
    assert Outage.of(get_crawler(), "frontier") is not frontier
    frontier.failed("Redis unavailable")
    assert not Outage.of(crawler, "frontier").ready()
    assert crawler.stats.get_value("spitag/frontier/outage_retries") == 1


def test_only_an_unreachable_backend_is_an_outage() -> None:
    outage = Outage("store")
    with pytest.raises(ValueError):
        outage.call(lambda: int("not a number"))
    assert not outage.down
    assert outage.call(lambda: (_ for _ in ()).throw(BackendUnavailableError("gone")), default=0) == 0
    assert outage.down
