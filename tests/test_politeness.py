"""Politeness held by SpiTag itself: per-host concurrency (HostConcurrency),
Retry-After, AutoThrottle (spitag.throttle), dead hosts counted by every worker."""

from __future__ import annotations

import email.utils
from datetime import datetime, timedelta, timezone

import pytest
from scrapy import Request
from scrapy.http import HtmlResponse
from scrapy.utils.project import get_project_settings
from scrapy.utils.reactor import is_reactor_installed
from scrapy.utils.test import get_crawler

from spitag.frontier import open_frontier
from spitag.politeness import HostConcurrency, HostDown, PolitenessMiddleware, retry_after
from spitag.throttle import HostThrottle


def test_places_are_handed_over_first_come_first_served() -> None:
    slots = HostConcurrency(2)
    got: list[tuple[str, bool]] = []
    for name, host in (("a1", "a"), ("a2", "a"), ("a3", "a"), ("a4", "a"), ("b1", "b")):
        slots.enter(host).addCallback(lambda waited, name=name: got.append((name, waited)))
    assert got == [("a1", False), ("a2", False), ("b1", False)]  # a3 and a4 wait
    slots.leave("a")
    assert got[-1] == ("a3", True) and slots.active == {"a": 2, "b": 1}  # handed over
    slots.leave("b")
    assert slots.active == {"a": 2}
    slots.leave("a")
    assert got[-1] == ("a4", True)
    slots.leave("a")
    slots.leave("a")
    assert slots.active == {} and slots.waiting == {}
    slots.enter("a").addCallback(lambda waited: got.append(("a5", waited)))
    assert got[-1] == ("a5", False)  # nothing held: no wait


def test_a_request_cancelled_while_waiting_gives_up_its_turn() -> None:
    slots = HostConcurrency(1)
    first, second, third = slots.enter("a"), slots.enter("a"), slots.enter("a")
    second.addErrback(lambda failure: None)
    second.cancel()  # a shutdown while it waits
    assert first.called and not third.called
    slots.leave("a")  # the place skips the cancelled request
    assert third.called and slots.active == {"a": 1}
    slots.leave("a")
    assert slots.active == {} and slots.waiting == {}


def test_retry_after_reads_seconds_and_dates() -> None:
    """RFC 9110 §10.2.3: delta-seconds or an HTTP-date; anything else is not a pause."""
    assert retry_after(b"3") == 3.0 and retry_after(b" 120 ") == 120.0
    assert retry_after(b"Wed, 21 Oct 2015 07:28:00 GMT") == 0.0  # past: no wait
    later = email.utils.format_datetime(datetime.now(timezone.utc) + timedelta(seconds=90), usegmt=True)
    assert 85.0 < retry_after(later.encode()) <= 90.0
    assert [retry_after(v) for v in (None, b"", b"soon", b"-5", b"1.5")] == [None] * 5


def test_autothrottle_delays_follow_latency_by_scrapys_rule() -> None:
    """``HostThrottle`` (AUTOTHROTTLE_*): target = latency / target concurrency; the
    new delay is the larger of the target and the mean of old and target, within the
    bounds; an answer other than 200 never lowers it. Hand-computed."""
    throttle = HostThrottle(target_concurrency=2.0, min_delay=0.1, max_delay=3.0, start_delay=1.0)
    assert throttle.delay("a") == 1.0  # a host starts at the start delay
    assert throttle.adjust("a", 0.4, 200) == (1.0, 0.6)  # target 0.2: mean (1.0 + 0.2) / 2
    assert throttle.adjust("a", 2.0, 200) == (0.6, 1.0)  # target 1.0 above the mean 0.8
    assert throttle.adjust("a", 0.0, 404) == (1.0, 1.0)  # a fast error page lowers nothing
    assert throttle.adjust("a", 8.0, 503) == (1.0, 3.0)  # a slow one raises it, to the cap
    assert throttle.adjust("b", 0.0, 200) == (1.0, 0.5)
    assert throttle.adjust("b", 0.0, 200)[1] == 0.25
    assert throttle.adjust("b", 0.0, 200)[1] == 0.125
    assert throttle.adjust("b", 0.0, 200)[1] == 0.1  # not below the host's own delay
    assert throttle.delay("a") == 3.0 and throttle.delay("b") == 0.1
    assert HostThrottle(1.0, min_delay=2.0, max_delay=1.0, start_delay=0.0).start_delay == 2.0


def politeness_on(frontier_url: str, owner: str, failures: int, down_seconds: float):
    """A worker's politeness middleware on the frontier of crawl ``c`` (its signals
    are not sent: the frontier is handed to it as ``frontier_opened`` would)."""
    settings = get_project_settings().copy_to_dict()
    # No reactor runs here, but another test of this process may have installed one
    # (any kind): then the crawler takes it as it is.
    installed = is_reactor_installed()
    settings.update(SPITAG_HOST_FAILURES=failures, SPITAG_HOST_DOWN_SECONDS=down_seconds,
                    TWISTED_REACTOR_ENABLED=installed, **({"TWISTED_REACTOR": None} if installed else {}))
    crawler = get_crawler(settings_dict=settings)
    middleware = PolitenessMiddleware(crawler)
    middleware.frontier = open_frontier(frontier_url, "c", owner)
    middleware.link.gate, middleware.link.owner = middleware.frontier.gate, owner
    return middleware


def answer(middleware, status: int) -> None:
    request = Request("http://dead.test/x")
    middleware.process_response(request, HtmlResponse(request.url, status=status, request=request))


def test_workers_count_a_hosts_failures_together(redis_url: str) -> None:
    """Two workers on one Redis frontier, ``SPITAG_HOST_FAILURES`` 3: two failures of
    one and one of the other set the host aside (each counting alone, neither would);
    the other learns it at its next failure and holds its requests back; an answer
    to either starts the count over for both."""
    a = politeness_on(redis_url, "w:1:a", 3, 60.0)
    b = politeness_on(redis_url, "w:2:b", 3, 60.0)
    try:
        answer(a, 502)
        answer(a, 502)
        answer(b, 200)  # b has not heard of a's failures yet: it loads them now
        answer(a, 502)
        answer(a, 502)
        assert a.frontier.gate.down() == []  # the answer between started the count over
        answer(b, 504)  # the third in a row, of both workers together
        assert [h for h, _, _ in a.frontier.gate.down()] == ["dead.test"]
        assert b.crawler.stats.get_value("spitag/politeness/hosts_down") == 1
        a.down.check("dead.test")  # a has not heard yet: its requests still go
        answer(a, 502)  # out when the host went down: a learns it, counting nothing
        assert a.crawler.stats.get_value("spitag/politeness/hosts_found_down") == 1
        assert a.crawler.stats.get_value("spitag/politeness/hosts_down") is None
        with pytest.raises(HostDown):
            a.down.check("dead.test")
    finally:
        a.frontier.close()
        b.frontier.close()
