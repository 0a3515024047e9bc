"""Per-host concurrency held by SpiTag itself (spitag.politeness.HostConcurrency)."""

from __future__ import annotations

import email.utils
from datetime import datetime, timedelta, timezone

from spitag.politeness import HostConcurrency, retry_after


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
