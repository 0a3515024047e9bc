"""The per-host gate (spitag.frontier.gate): one suite, every backend."""

from __future__ import annotations

import time

import pytest

from tests.frontier.conftest import Clock, entry


def test_acquire_spaces_requests_across_owners(make) -> None:
    a, b = make(owner="w:1:a"), make(owner="w:2:b")
    clock = Clock()
    assert a.gate.acquire("h.test", 1.0) == 0.0
    wait = b.gate.acquire("h.test", 1.0)
    assert clock.left(1.0) < wait <= 1.0
    time.sleep(wait + 0.01)
    assert b.gate.acquire("h.test", 0.3) == 0.0
    assert a.gate.acquire("other.test", 0.3) == 0.0  # per host


def test_host_places_are_shared_by_every_worker_of_a_shared_frontier(make, frontier_url) -> None:
    """``enter``: at most ``limit`` downloads to a host at once for all workers
    together; given back, renewed, and freed by themselves when a hold runs out (a dead
    worker). A frontier one process uses shares nothing: its worker's limit is all."""
    a, b = make(owner="w:1:a"), make(owner="w:2:b")
    if frontier_url.startswith("sqlite"):
        assert not a.gate.shares_places
        assert [a.gate.enter("h.test", f"a#{i}", 2, 30.0) for i in range(5)] == [0] * 5
        a.queue.push([entry("http://h.test/1")], "sum")
        assert [(h.downloading, h.waiting) for h in a.queue.hosts()] == [(None, None)]
        return
    assert a.gate.shares_places
    assert a.gate.enter("h.test", "a#1", 2, 30.0) == 0 and b.gate.enter("h.test", "b#1", 2, 30.0) == 0
    assert a.gate.enter("h.test", "a#2", 2, 30.0) == 1 and b.gate.enter("h.test", "b#2", 2, 30.0) == 2
    assert a.gate.enter("other.test", "a#3", 2, 30.0) == 0  # per host
    assert b.gate.enter("h.test", "b#1", 2, 30.0) == 0  # a place held, asked again: still its own
    b.gate.leave("h.test", "b#1")
    assert b.gate.enter("h.test", "b#2", 2, 30.0) == 2  # the free place is a#2's turn
    assert a.gate.enter("h.test", "a#2", 2, 30.0) == 0
    assert b.gate.enter("h.test", "b#2", 2, 30.0) == 1
    b.gate.leave("h.test", "b#1")  # twice: nothing more to give back
    assert b.gate.enter("h.test", "b#2", 2, 30.0) == 1
    a.gate.leave("h.test", "a#2")
    assert a.gate.enter("h.test", "a#9", 2, 30.0) == 2  # a newcomer waits behind the line
    assert b.gate.enter("h.test", "b#2", 2, 30.0) == 0
    a.gate.leave("h.test", "a#9")  # leaving the line gives up its turn
    a.gate.leave("h.test", "a#1")
    b.gate.leave("h.test", "b#2")
    a.gate.leave("other.test", "a#3")
    assert not a.queue.db.redis.keys(a.queue.db.prefix + "h[xw]*")  # nothing left behind


@pytest.mark.parametrize("frontier_url", ["redis"], indirect=True)  # SQLite shares nothing (above)
def test_host_places_are_handed_out_in_turn(make) -> None:
    """A busy host's free places go to the requests that have waited longest, whichever
    worker frees them: the worker that gives a place back cannot take it again ahead of
    another's waiting request. A waiter that stops asking leaves the line."""
    a, b = make(owner="w:1:a"), make(owner="w:2:b")
    for f in (a, b):
        f.gate.turn_seconds = 1.0
    assert [a.gate.enter("h.test", f"a#{i}", 2, 30.0) for i in (1, 2)] == [0, 0]
    assert b.gate.enter("h.test", "b#1", 2, 30.0) == 1
    assert b.gate.enter("h.test", "b#2", 2, 30.0) == 2
    a.queue.push([entry("http://h.test/1")], "sum")  # what `scrapy frontier` shows of the host
    assert [(h.host, h.downloading, h.waiting) for h in b.queue.hosts()] == [("h.test", 2, 2)]
    # a's downloads end, one after the other, and a asks again at once each time
    a.gate.leave("h.test", "a#1")
    assert a.gate.enter("h.test", "a#3", 2, 30.0) == 3  # behind b's two: b#1 has the free place
    assert b.gate.enter("h.test", "b#1", 2, 30.0) == 0
    a.gate.leave("h.test", "a#2")
    assert a.gate.enter("h.test", "a#4", 2, 30.0) == 3
    assert a.gate.enter("h.test", "a#3", 2, 30.0) == 2  # still b#2's turn
    assert b.gate.enter("h.test", "b#2", 2, 30.0) == 0
    assert a.gate.enter("h.test", "a#3", 2, 30.0) == 1  # next, once a place comes free
    # a waiter that stops asking (its worker died) loses its turn; the one behind moves up
    time.sleep(0.6)
    assert a.gate.enter("h.test", "a#4", 2, 30.0) == 2
    time.sleep(0.6)  # a#3 last asked 1.2 s ago, a#4 0.6 s ago (a turn lasts 1 s)
    b.gate.leave("h.test", "b#1")
    assert a.gate.enter("h.test", "a#4", 2, 30.0) == 0
    assert a.gate.enter("h.test", "a#3", 2, 30.0) == 1  # back in line, at its end
    # places that are not renewed free themselves; renewed ones stay
    a.gate.leave("h.test", "a#3")
    a.gate.leave("h.test", "a#4")
    b.gate.leave("h.test", "b#2")
    assert a.gate.enter("h.test", "a#5", 2, 2.0) == 0 and b.gate.enter("h.test", "b#3", 2, 2.0) == 0
    time.sleep(1.2)
    a.gate.hold([("h.test", "a#5")], 2.0)
    time.sleep(1.2)  # b#3's hold has run out, a#5's was renewed (for 0.8 s more)
    assert b.gate.enter("h.test", "b#4", 2, 30.0) == 0
    assert b.gate.enter("h.test", "b#5", 2, 30.0) == 1
    time.sleep(1.2)  # now a#5's too
    assert b.gate.enter("h.test", "b#5", 2, 30.0) == 0
    b.gate.leave("h.test", "b#4")
    b.gate.leave("h.test", "b#5")
    assert not a.queue.db.redis.keys(a.queue.db.prefix + "h[xw]*")


def test_host_delays_are_kept_for_every_worker(make) -> None:
    a = make(owner="w:1:a")
    b = make(owner="w:2:b") if a.gate.shares_places else a
    assert a.gate.delays() == {}
    a.gate.set_delay("a.test", 2.0)
    assert b.gate.delays() == {"a.test": 2.0}


def test_a_host_that_asked_for_a_pause_is_left_alone(make) -> None:
    """``pause`` (Retry-After): no URL of the host is popped and its hard gate stays
    shut until the pause is over, for every worker; a shorter pause asked for later does
    not shorten it."""
    a, b = make(owner="w:1:a"), make(owner="w:2:b")
    a.queue.push([entry(f"http://p.test/{i}") for i in range(3)] + [entry("http://q.test/1")], "sum")
    clock = Clock()
    a.gate.pause("p.test", 1.0)
    a.gate.pause("p.test", 0.1)
    assert [e.host for e in b.queue.pop(10)] == ["q.test"]
    assert b.queue.pop(10) == []
    assert clock.left(1.0) < b.queue.next_ready() <= 1.0  # the scheduler wakes when the pause is over
    assert clock.left(1.0) < b.gate.acquire("p.test", 0.0) <= 1.0
    if b.gate.shares_places:  # a request another worker popped before the pause gets no place
        assert -1000 <= b.gate.enter("p.test", "b#1", 4, 30.0) < -1000 * clock.left(1.0)
    time.sleep(1.1)
    assert b.gate.acquire("p.test", 0.0) == 0.0
    assert b.gate.enter("p.test", "b#1", 4, 30.0) == 0
    assert sorted(e.url for e in b.queue.pop(10)) == [f"http://p.test/{i}" for i in range(3)]
    b.gate.pause("new.test", 5.0)  # a host with nothing queued yet: paused all the same
    b.queue.push([entry("http://new.test/1")], "sum")
    assert b.queue.pop(10) == [] and b.gate.acquire("new.test", 0.0) > 4.0


def test_refusals_in_a_row_double_the_back_off(make) -> None:
    """``back_off`` (429 or 503 without Retry-After): the n-th refusal in a row pauses
    the host base · 2^(n−1) s, at most the cap; a refusal of a request that was out
    when the back-off began adds nothing; a request sent after it ended and served
    starts the count over. Where workers share the frontier, the count is theirs."""
    a = make(owner="w:1:a")
    b = make(owner="w:2:b") if a.gate.shares_places else a
    a.queue.push([entry("http://p.test/1"), entry("http://q.test/1")], "sum")
    clock = Clock()
    assert a.gate.back_off("p.test", 0.05, 0.8, 10.0) == pytest.approx(0.8)
    assert b.gate.back_off("p.test", 0.05, 0.8, 10.0) == 0.0  # out before it began: same overload
    assert [e.host for e in b.queue.pop(10)] == ["q.test"]  # paused, as by pause
    assert clock.left(0.8) < b.gate.acquire("p.test", 0.0) <= 0.8
    assert not b.gate.end_back_off("p.test", 0.05)  # served, but sent before it ended: counted still
    time.sleep(0.85)
    assert b.gate.back_off("p.test", 0.01, 0.8, 10.0) == pytest.approx(1.6)  # refused again: doubled
    time.sleep(1.65)
    assert a.gate.back_off("p.test", 0.01, 0.8, 2.0) == pytest.approx(2.0)  # 3.2, capped
    assert not a.gate.end_back_off("p.test", 0.01)
    time.sleep(2.05)
    assert a.gate.end_back_off("p.test", 0.01) and b.gate.end_back_off("p.test", 0.01)  # the count went
    assert b.gate.back_off("p.test", 0.01, 0.8, 10.0) == pytest.approx(0.8)
    assert a.gate.end_back_off("q.test", 0.0)  # never refused: nothing to end


def test_a_host_down_waits_without_keeping_the_crawl_going(make) -> None:
    """``set_down``: no URL of the host is popped until its time is up, for every
    worker; its queued URLs stay queued (shown by ``hosts_down``) but do not make
    ``has_work`` true, nor do its leased ones (a failed URL waiting for another try),
    while a URL leased on another host does. ``clear_down`` (a new run) makes
    it ready again at once."""
    a = make(owner="w:1:a")
    b = make(owner="w:2:b") if a.gate.shares_places else a
    dead = [f"http://dead.test/{i}" for i in range(3)]
    a.queue.push([entry(u) for u in dead] + [entry("http://ok.test/1")], "sum")
    clock = Clock()
    a.gate.set_down("dead.test", 1.5)
    a.gate.set_down("dead.test", 0.1)  # a shorter time later does not shorten it
    assert [e.host for e in b.queue.pop(10)] == ["ok.test"]
    assert b.queue.pop(10) == []
    assert a.queue.has_work()  # ok.test/1 is leased
    b.queue.ack(["http://ok.test/1"])
    assert a.queue.counts().queued == 3 and not a.queue.has_work() and not b.queue.has_work()
    [(host, left, queued)] = a.gate.down()
    assert host == "dead.test" and clock.left(1.5) < left <= 1.5 and queued == 3
    assert a.gate.acquire("dead.test", 0.0) == 0.0  # its hard gate stays open: requests already out go
    time.sleep(max(clock.left(1.5, slack=0), 0) + 0.05)
    assert a.queue.has_work() and b.gate.down() == []
    assert sorted(e.url for e in b.queue.pop(10)) == dead  # tried again once its time is up
    a.gate.set_down("dead.test", 60.0)  # with its URLs leased
    assert not a.queue.has_work() and b.gate.down() == [("dead.test", pytest.approx(60.0, abs=1), 3)]
    b.queue.release(dead)
    assert a.queue.pop(10) == [] and not a.queue.has_work()
    assert b.gate.clear_down() == 1 and a.gate.down() == []
    assert a.queue.has_work() and sorted(e.url for e in a.queue.pop(10)) == dead  # a new run tries it at once


def test_failures_in_a_row_set_a_host_down_for_every_worker(make) -> None:
    """``failed``: the failures of every worker count together; the ``limit``-th
    in a row sets the host down (``hosts_down``), a failure while it is down counts
    nothing, an answer (``answered``) starts the count over, and a host set down
    before that has not answered since goes down again at its first failure."""
    a = make(owner="w:1:a")
    b = make(owner="w:2:b") if a.gate.shares_places else a
    a.queue.push([entry("http://dead.test/1")], "sum")
    assert a.gate.failed("dead.test", 3, 0.5) == (1, 0.0, False)
    assert b.gate.failed("dead.test", 3, 0.5) == (2, 0.0, False)
    b.gate.answered("dead.test")  # it answered: the count starts over
    assert a.gate.failing() == []
    assert [b.gate.failed("dead.test", 3, 0.5).count for _ in range(2)] == [1, 2]
    assert a.gate.failing() == ["dead.test"] and a.gate.down() == []
    clock = Clock()
    assert a.gate.failed("dead.test", 3, 1.5) == (3, 1.5, False)  # the third in a row
    assert [h for h, _, _ in b.gate.down()] == ["dead.test"] and b.queue.pop(10) == []
    count, left, again = b.gate.failed("dead.test", 3, 1.5)  # out when it went down
    assert count == 0 and clock.left(1.5) < left <= 1.5 and not again
    time.sleep(max(clock.left(1.5, slack=0), 0) + 0.05)
    assert b.gate.down() == []
    assert b.gate.failed("dead.test", 3, 0.5) == (1, 0.5, True)  # down before: its first failure
    time.sleep(0.55)
    a.gate.answered("dead.test")
    assert b.gate.failed("dead.test", 3, 0.5) == (1, 0.0, False)  # it answered since
    assert a.gate.clear_down() == 0 and b.gate.failing() == []  # a new run starts over
    assert a.gate.answered("never.test") is None and a.gate.failing() == []
