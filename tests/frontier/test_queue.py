"""The URL queue (spitag.frontier.queue): one suite, every backend."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time

import pytest
import redis

from spitag.frontier import Entry, Politeness
from spitag.frontier.owners import started, this_space
from tests.frontier.conftest import entry, near


PRIORITIES = [-1e300, -1e6, -50.0, -3.0, -1.0, -0.25, -1e-12, -1e-300, 0.0, 1e-307, 1e-250, 7.0 ** -200,
              1e-50, 1e-12, 1e-6, 0.001, 0.1, 0.100001, 1 / 3, 0.999999, 1.0, 1.000001, 3.7, 60.0, 1e6, 1e15,
              1e100, 1e300]


def test_push_then_pop_in_priority_order(make) -> None:
    f = make()
    f.queue.push([entry("http://a.test/1", 1), entry("http://a.test/2", 3), entry("http://a.test/3", 2)], "sum")
    popped = f.queue.pop(10)
    assert [e.url for e in popped][:3] == ["http://a.test/2", "http://a.test/3", "http://a.test/1"]
    assert f.queue.counts().leased == 3 and f.queue.counts().queued == 0


def test_rediscovery_sums_or_maxes_while_queued(make) -> None:
    f = make()
    f.queue.push([entry("http://a.test/x", 0.5), entry("http://a.test/y", 0.9)], "sum")
    result = f.queue.push([entry("http://a.test/x", 0.5)], "sum")
    assert result.raised == 1 and result.new == 0
    assert [e.priority for e in f.queue.top(2)] == near([1.0, 0.9])
    f.queue.push([entry("http://a.test/y", 0.1)], "max")  # lower: no change with max
    f.queue.push([entry("http://a.test/x", 5.0)], "max")
    assert {e.url: e.priority for e in f.queue.top(2)} == near({"http://a.test/x": 5.0, "http://a.test/y": 0.9})


def test_priorities_of_any_sign_and_magnitude_keep_order_and_value(make) -> None:
    """Very small (OPIC cash split again and again), large, zero and negative (BFS)
    priorities: popped in order, each within 1e-6 relative of the one pushed."""
    f = make(politeness=Politeness(delay=0.0, per_host=100))
    f.queue.push([entry(f"http://a.test/{i}", p) for i, p in enumerate(PRIORITIES)], "max")
    hosts = {h.host: h for h in f.queue.hosts()}
    assert hosts["a.test"].best == pytest.approx(1e300, rel=1e-6)
    assert [e.priority for e in f.queue.top(3)] == pytest.approx([1e300, 1e100, 1e15], rel=1e-6)
    popped = f.queue.pop(100)
    assert [e.url for e in popped] == [f"http://a.test/{i}" for i in reversed(range(len(PRIORITIES)))]
    for e, pushed in zip(popped, reversed(PRIORITIES)):
        assert e.priority == pytest.approx(pushed, rel=1e-6, abs=0)
    # handed back and taken again: the same priorities
    f.queue.release([e.url for e in popped])
    assert [e.priority for e in f.queue.pop(100)] == [e.priority for e in popped]


def test_many_tiny_contributions_add_up(make) -> None:
    """Sum-combining keeps order: 2,000 contributions of 1e-9 make 2e-6; 10,000 of 1e-8,
    each far below the precision of a stored priority of 1.0, still make 1.0001."""
    f = make(politeness=Politeness(delay=0.0, per_host=100))
    f.queue.push([entry("http://a.test/low", 1.99e-6), entry("http://a.test/high", 2.01e-6),
            entry("http://a.test/one", 1.0), entry("http://a.test/one-low", 1.00005),
            entry("http://a.test/one-high", 1.00015)], "sum")
    for _ in range(4):
        f.queue.push([entry("http://a.test/tiny", 1e-9)] * 500, "sum")
    for _ in range(10):
        f.queue.push([entry("http://a.test/one", 1e-8)] * 1000, "sum")
    popped = {e.url.rsplit("/", 1)[1]: e.priority for e in f.queue.pop(100)}
    assert list(popped) == ["one-high", "one", "one-low", "high", "tiny", "low"]
    assert popped["tiny"] == pytest.approx(2e-6, rel=1e-4)
    assert popped["one"] == pytest.approx(1.0001, rel=2e-5)


def test_done_is_never_fetched_twice(make) -> None:
    f = make()
    f.queue.push([entry("http://a.test/x")], "sum")
    (e,) = f.queue.pop(5)
    assert f.queue.ack([e.url]) == 1
    result = f.queue.push([entry("http://a.test/x", 100)], "sum")
    assert result.ignored == 1
    assert f.queue.pop(5) == []
    assert not f.queue.has_work()
    assert (f.queue.counts().done, f.queue.counts().queued) == (1, 0)


def test_leased_url_is_not_popped_again_and_release_returns_it(make) -> None:
    f = make()
    f.queue.push([entry("http://a.test/x")], "sum")
    assert len(f.queue.pop(5)) == 1
    assert f.queue.pop(5) == []
    assert f.queue.has_work()  # leased work keeps the crawl alive
    assert f.queue.release(["http://a.test/x"]) == 1
    assert [e.url for e in f.queue.pop(5)] == ["http://a.test/x"]


def test_expired_leases_are_reaped_by_another_owner(make) -> None:
    dead = make(owner="elsewhere:1:dead", lease_seconds=0.2)
    alive = make(owner="elsewhere:2:alive", lease_seconds=0.2)
    dead.queue.push([entry("http://a.test/1"), entry("http://b.test/2")], "sum")
    assert len(dead.queue.pop(5)) == 2
    time.sleep(0.3)
    assert alive.queue.reap() == 2
    assert sorted(e.url for e in alive.queue.pop(5)) == ["http://a.test/1", "http://b.test/2"]
    assert alive.queue.ack(["http://a.test/1", "http://b.test/2"]) == 2


def test_a_lease_is_not_reaped_before_it_expires(make) -> None:
    holder = make(owner="elsewhere:1:holder", lease_seconds=60)
    other = make(owner="elsewhere:2:other", lease_seconds=60)
    holder.queue.push([entry("http://a.test/1")], "sum")
    assert len(holder.queue.pop(5)) == 1
    assert other.queue.reap() == 0 and other.queue.pop(5) == []


def test_renewed_lease_survives_reaping(make) -> None:
    """Renewed, a lease lasts ``lease_seconds`` from the renewal: past its first expiry
    it is not reaped. (Windows of a second, so that a busy machine does not let it
    expire between two calls.)"""
    holder = make(owner="elsewhere:1:holder", lease_seconds=2.0)
    other = make(owner="elsewhere:2:other", lease_seconds=2.0)
    holder.queue.push([entry("http://a.test/slow")], "sum")
    holder.queue.pop(1)
    time.sleep(1.2)
    assert holder.queue.renew(["http://a.test/slow"]) == 1
    time.sleep(1.0)  # past the first expiry, 1 s before the renewed one
    assert other.queue.reap() == 0
    assert other.queue.renew(["http://a.test/slow"]) == 0  # not its lease


def test_polite_host_gives_one_url_per_delay(make) -> None:
    f = make(politeness=Politeness(delay=0.3, per_host=4))
    f.queue.push([entry(f"http://a.test/{i}", i) for i in range(3)] + [entry("http://b.test/0", 0)], "sum")
    first = f.queue.pop(10)
    assert sorted(e.host for e in first) == ["a.test", "b.test"]
    assert f.queue.pop(10) == []
    wait = f.queue.next_ready()
    assert wait is not None and wait <= 0.3
    time.sleep(wait + 0.02)
    assert [e.url for e in f.queue.pop(10)] == ["http://a.test/1"]


def test_host_delay_override_and_no_delay_cap(make) -> None:
    f = make(politeness=Politeness(delay=0.0, per_host=2))
    f.gate.set_delay("slow.test", 10.0)
    f.queue.push([entry(f"http://fast.test/{i}") for i in range(5)] + [entry(f"http://slow.test/{i}") for i in range(5)], "sum")
    popped = f.queue.pop(10)
    assert sum(e.host == "fast.test" for e in popped) == 2  # per_host cap without a delay
    assert sum(e.host == "slow.test" for e in popped) == 1  # its own delay applies
    assert sum(e.host == "fast.test" for e in f.queue.pop(10)) == 2
    assert all(e.host == "fast.test" for e in f.queue.pop(10))


def test_hosts_are_taken_by_rank(make) -> None:
    f = make(politeness=Politeness(delay=0.0, per_host=1))
    f.queue.push([entry("http://poor.test/a", 1.0), entry("http://rich.test/a", 2.0)], "sum")
    assert [e.host for e in f.queue.pop(1)] == ["rich.test"]


def test_crawls_are_separate(make) -> None:
    a, b = make("crawl-a"), make("crawl-b")
    a.queue.push([entry("http://a.test/x")], "sum")
    assert b.queue.pop(5) == [] and not b.queue.has_work()
    assert len(a.queue.pop(5)) == 1


def test_entries_keep_depth_and_reason(make) -> None:
    f = make()
    f.queue.push([entry("http://a.test/x", 0.7, depth=3, parent="http://a.test/", parent_score=4.0)], "sum")
    (e,) = f.queue.pop(1)
    assert (e.depth, e.priority, e.about()) == (3, near(0.7), {"parent": "http://a.test/", "parent_score": 4.0})


def test_rediscovery_from_a_lower_layer_lowers_the_depth(make) -> None:
    """A page belongs to the lowest layer that reaches it (BFS layers, SPITAG_MAX_DEPTH):
    found again at a smaller depth while it waits, it keeps that one; never a larger."""
    f = make()
    f.queue.push([entry("http://a.test/x", 0.5, depth=4, parent="http://a.test/p", parent_score=2.0)], "sum")
    f.queue.push([entry("http://a.test/x", 0.5, depth=2, parent="http://a.test/q", parent_score=1.0)], "sum")
    f.queue.push([entry("http://a.test/x", 0.5, depth=5)], "max")
    (e,) = f.queue.pop(1)
    assert e.depth == 2 and e.about() == {"parent": "http://a.test/p", "parent_score": 2.0}


def test_stats_per_host(make) -> None:
    f = make()
    f.queue.push([entry("http://a.test/1"), entry("http://a.test/2"), entry("http://b.test/1")], "sum")
    popped = f.queue.pop(1)
    f.queue.ack([popped[0].url])
    hosts = {h.host: h for h in f.queue.hosts()}
    assert hosts["a.test"].queued + hosts["a.test"].done + hosts["a.test"].leased == 2
    assert sum(h.done for h in hosts.values()) == 1
    assert f.queue.counts().queued == 2


def test_pop_gives_a_busy_host_only_what_its_places_can_take(make) -> None:
    """``busy``: the caller's requests per host already on their way to a download; a
    host gives at most ``per_host`` minus them (none when they fill its places)."""
    f = make(politeness=Politeness(delay=0.0, per_host=4))
    f.queue.push([entry(f"http://a.test/{i}", 10.0 - i) for i in range(8)]
           + [entry(f"http://b.test/{i}", 1.0 - i / 10) for i in range(2)], "max")
    assert [e.url for e in f.queue.pop(10, {"a.test": 3})] == ["http://a.test/0", "http://b.test/0", "http://b.test/1"]
    assert f.queue.pop(10, {"a.test": 4, "b.test": 1}) == []
    assert [e.url for e in f.queue.pop(10, {"a.test": 2})] == ["http://a.test/1", "http://a.test/2"]
    assert [e.url for e in f.queue.pop(10)] == [f"http://a.test/{i}" for i in range(3, 7)]


def test_a_failed_url_is_tried_again_later_by_any_worker_until_its_retries_are_used(make) -> None:
    """``retry_later``: the failed URL stays leased, renewed by nobody, for ``seconds ·
    2^(n−1)`` and keeps the crawl going; then any worker reaps and pops it again; its
    failures are counted with the URL across workers, and past ``retries`` the count
    goes and nothing changes (the caller stores the failure and acks). Only the
    lease's owner may ask."""
    a = make(owner="w:1:a", politeness=Politeness(delay=0.0, per_host=4))
    b = make(owner="w:2:b", politeness=Politeness(delay=0.0, per_host=4))
    a.queue.push([entry("http://flaky.test/1", 2.0), entry("http://flaky.test/2", 1.0)], "max")
    assert [e.url for e in a.queue.pop(1)] == ["http://flaky.test/1"]
    assert b.queue.retry_later("http://flaky.test/1", 2, 0.3) is None  # not b's lease
    assert a.queue.retry_later("http://never.test/", 2, 0.3) is None  # not a frontier URL
    assert a.queue.retry_later("http://flaky.test/1", 2, 0.3) == (1, 0.3)
    assert [e.url for e in b.queue.pop(5)] == ["http://flaky.test/2"]  # the failed one waits
    assert b.queue.ack(["http://flaky.test/2"]) == 1
    assert a.queue.counts().leased == 1 and a.queue.has_work()  # it waits, and the crawl with it
    assert a.queue.counts().retrying == 1
    assert a.queue.renew(["http://flaky.test/1"]) == 1  # (a stops renewing; a renewal would hold it)
    time.sleep(0.35)
    assert b.queue.reap() == 0  # renewed for lease_seconds: not due yet
    assert a.queue.retry_later("http://flaky.test/1", 2, 1.0) == (2, 2.0)  # doubled
    assert b.queue.reap() == 0 and b.queue.pop(5) == []  # (2 s: a busy machine does not reach it)
    time.sleep(2.05)
    assert b.queue.reap() == 1 and b.queue.counts().retrying == 1  # queued again, still to be tried
    assert [e.url for e in b.queue.pop(5)] == ["http://flaky.test/1"]
    assert a.queue.retry_later("http://flaky.test/1", 2, 0.3) is None  # b's lease now
    assert b.queue.retry_later("http://flaky.test/1", 2, 0.3) == (3, 0.0)  # used up: the failure stands
    assert b.queue.counts().leased == 1 and b.queue.counts().retrying == 0 and b.queue.ack(["http://flaky.test/1"]) == 1
    assert not b.queue.has_work()
    # the count went: a URL revived later (a recrawl) has every retry again
    assert b.queue.revive([entry("http://flaky.test/1")]) == 1
    assert [e.url for e in b.queue.pop(5)] == ["http://flaky.test/1"]
    assert b.queue.retry_later("http://flaky.test/1", 2, 0.3) == (1, 0.3)
    # an ack after a retry that answered forgets the count too
    time.sleep(0.35)
    assert a.queue.reap() == 1 and [e.url for e in a.queue.pop(5)] == ["http://flaky.test/1"]
    assert a.queue.ack(["http://flaky.test/1"]) == 1
    assert a.queue.revive([entry("http://flaky.test/1")]) == 1 and len(a.queue.pop(5)) == 1
    assert a.queue.retry_later("http://flaky.test/1", 0, 0.3) == (1, 0.0)  # no retries at all
    # queued again after a failure, then marked done (its page came under another URL)
    assert a.queue.ack(["http://flaky.test/1"]) == 1
    a.queue.push([entry("http://flaky.test/3")], "max")
    assert [e.url for e in a.queue.pop(5)] == ["http://flaky.test/3"]
    assert a.queue.retry_later("http://flaky.test/3", 2, 0.05) == (1, 0.05)
    time.sleep(0.1)
    assert a.queue.reap() == 1 and a.queue.counts().retrying == 1
    assert a.queue.mark_done([entry("http://flaky.test/3")]) == 1 and a.queue.counts().retrying == 0


def test_recover_takes_back_at_once_the_leases_of_workers_that_are_gone(make, frontier_url) -> None:
    """``recover`` at a worker's start: a dead worker's leases go back to the queue at
    once, a failed URL waiting for its next try included (its failures still counted);
    a live worker's stay leased. Both backends know a process of this machine that
    ended (``owners.is_gone``), even one whose heartbeat is fresh, but not one of
    another process table (a container with its own pids); Redis also knows a worker
    gone by its heartbeat (it closed, or has been silent for ``ALIVE_SECONDS``), and
    frees the places it held on those URLs' hosts."""
    here, me, space = socket.gethostname(), os.getpid(), this_space()
    gone = int(subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                              capture_output=True, text=True, check=True).stdout)
    polite = Politeness(delay=0.0, per_host=4)
    dead = make(owner=f"{here}:{gone}:{space}:1:dead", politeness=polite)
    elsewhere = make(owner=f"{here}:{gone}:0ther5ce:1:there", politeness=polite)  # same pid, other table
    live = make(owner=f"{here}:{me}:{space}:{started(me)}:live", politeness=polite)
    dead.queue.push([entry("http://a.test/1", 4.0), entry("http://b.test/1", 3.0),
               entry("http://c.test/1", 2.0), entry("http://c.test/2", 1.0),
               entry("http://f.test/1", 0.5)], "max")
    # all three beat a moment ago: dead was killed right after its last heartbeat
    assert dead.registry.heartbeat() and elsewhere.registry.heartbeat() and live.registry.heartbeat()
    assert [e.url for e in dead.queue.pop(1)] == ["http://a.test/1"]
    assert [e.url for e in live.queue.pop(1)] == ["http://b.test/1"]
    assert [e.url for e in dead.queue.pop(1)] == ["http://c.test/1"]
    assert [e.url for e in elsewhere.queue.pop(1)] == ["http://c.test/2"]
    assert dead.queue.retry_later("http://c.test/1", 2, 60.0) == (1, 60.0)  # waits a minute
    assert dead.queue.counts().leased == 4
    starting = make(owner=f"{here}:{me}:{space}:{started(me)}:new", politeness=polite)
    assert starting.queue.recover() == 2
    assert (starting.queue.counts().queued, starting.queue.counts().leased) == (3, 2)
    assert starting.queue.recover() == 0  # b.test/1 is the live worker's, c.test/2 elsewhere's
    assert [e.url for e in starting.queue.pop(5)] == ["http://a.test/1", "http://c.test/1", "http://f.test/1"]
    assert starting.queue.counts().queued == 0 and starting.queue.counts().leased == 5
    assert starting.queue.retry_later("http://c.test/1", 2, 0.3) == (2, 0.6)  # its first failure kept
    assert live.queue.ack(["http://b.test/1"]) == 1  # the live worker's lease was left to it
    assert elsewhere.queue.ack(["http://c.test/2"]) == 1
    if frontier_url.startswith("sqlite"):
        return
    # Redis: a worker that closed leaves its failed URLs waiting, taken back at the next
    # start; one silent for longer than ALIVE_SECONDS is gone as well.
    closed = make(owner=f"{here}:{me}:closed", politeness=polite)
    silent = make(owner=f"{here}:{me}:silent", politeness=polite)
    closed.queue.push([entry("http://d.test/1", 2.0), entry("http://e.test/1", 1.0)], "max")
    assert closed.registry.heartbeat() and silent.registry.heartbeat()
    assert [e.url for e in closed.queue.pop(1)] == ["http://d.test/1"]
    assert [e.url for e in silent.queue.pop(1)] == ["http://e.test/1"]
    assert closed.queue.retry_later("http://d.test/1", 2, 60.0) == (1, 60.0)
    assert silent.gate.enter("e.test", f"{silent.owner}#1", 1, 30.0) == 0  # its download's place
    closed.close()
    r = redis.Redis.from_url(frontier_url)
    r.hset("spitag:c:alive", silent.owner, f"{time.time() - 9:.3f} {silent.registry.db.machine}")  # 9 s silent
    assert starting.registry.heartbeat() and starting.queue.recover() == 1  # silent is still alive
    r.hset("spitag:c:alive", silent.owner, f"{time.time() - 11:.3f} {silent.registry.db.machine}")  # 11 s
    assert starting.gate.enter("e.test", f"{starting.owner}#1", 1, 30.0) == 1  # first in line
    assert starting.queue.recover() == 1
    assert starting.gate.enter("e.test", f"{starting.owner}#1", 1, 30.0) == 0  # the place was freed
    assert {e.url for e in starting.queue.pop(5)} == {"http://d.test/1", "http://e.test/1"}
    r.close()


def test_urls_survive_the_round_trip(make) -> None:
    f = make()
    urls = ["https://a.test/", "http://a.test:8080/x?y=1&z=%20", "http://[::1]:9/p", "https://a.test/é"]
    f.queue.push([entry(u) for u in urls], "sum")
    assert sorted(e.url for e in f.queue.pop(10)) == sorted(urls)


def test_mark_done_never_fetches(make) -> None:
    f = make()
    f.queue.push([entry("http://a.test/leased")], "sum")
    assert [e.url for e in f.queue.pop(5)] == ["http://a.test/leased"]
    f.queue.push([entry("http://b.test/queued")], "sum")
    marked = f.queue.mark_done([entry("http://c.test/canonical"), entry("http://b.test/queued"),
                          entry("http://a.test/leased")])
    assert marked == 2  # the unknown and the queued one; the leased one is its worker's
    assert f.queue.pop(5) == []
    assert f.queue.push([entry("http://c.test/canonical", 9.0)], "sum").ignored == 1
    assert f.queue.ack(["http://a.test/leased"]) == 1
    assert f.queue.counts().done == 3 and not f.queue.has_work()


REVISIT = {"etag": '"abc"', "last_modified": "Mon, 30 Nov 2026 10:00:00 GMT", "interval": 86400.0, "md5": "0" * 32}


def revived(url: str, priority: float = 2.0, depth: int = 2, revisit: dict | None = None) -> Entry:
    e = entry(url, priority, depth)
    e.note = {"recrawl": True, "expired": "2026-11-29T00:00:00.000Z"}
    e.revisit = dict(REVISIT if revisit is None else revisit)
    return e


def test_revive_done_url_is_popped_again_with_its_revisit_data(make) -> None:
    f = make()
    f.queue.push([entry("http://a.test/x", 1.0, depth=1, parent="http://a.test/", parent_score=3.0)], "sum")
    (e,) = f.queue.pop(5)
    assert e.revisit is None
    f.queue.ack([e.url])
    assert f.queue.push([entry("http://a.test/x", 5.0)], "sum").ignored == 1  # done stays done…
    assert f.queue.revive([revived("http://a.test/x", 2.5, depth=4)]) == 1  # …until revived
    assert (f.queue.counts().queued, f.queue.counts().leased, f.queue.counts().done) == (1, 0, 0)
    assert f.queue.has_work()
    (top,) = f.queue.top(5)
    assert (top.url, top.priority, top.depth, top.revisit) == ("http://a.test/x", near(2.5), 4, REVISIT)
    (again,) = f.queue.pop(5)
    assert (again.url, again.priority, again.depth) == ("http://a.test/x", near(2.5), 4)
    assert again.about() == {"recrawl": True, "expired": "2026-11-29T00:00:00.000Z"}
    assert again.revisit == REVISIT
    assert f.queue.ack([again.url]) == 1
    assert (f.queue.counts().queued, f.queue.counts().leased, f.queue.counts().done) == (0, 0, 1)
    assert not f.queue.has_work()


def test_revive_leaves_queued_and_leased_alone_and_inserts_unknown(make) -> None:
    f = make()
    f.queue.push([entry("http://a.test/leased", 1.0), entry("http://b.test/queued", 0.5, depth=3)], "sum")
    (leased,) = [e for e in f.queue.pop(1)]
    assert leased.url == "http://a.test/leased"
    n = f.queue.revive([revived("http://a.test/leased", 9.0), revived("http://b.test/queued", 9.0),
                  revived("http://c.test/new", 0.25, depth=5, revisit={"md5": "f" * 32})])
    assert n == 1  # only the unknown one became queued
    assert (f.queue.counts().queued, f.queue.counts().leased, f.queue.counts().done) == (2, 1, 0)
    tops = {e.url: e for e in f.queue.top(10)}
    assert (tops["http://b.test/queued"].priority, tops["http://b.test/queued"].depth) == (near(0.5), 3)
    assert tops["http://b.test/queued"].revisit is None
    assert (tops["http://c.test/new"].priority, tops["http://c.test/new"].revisit) == (near(0.25), {"md5": "f" * 32})
    assert f.queue.ack(["http://a.test/leased"]) == 1
    popped = {e.url: e for e in f.queue.pop(10)}
    assert set(popped) == {"http://b.test/queued", "http://c.test/new"}
    assert popped["http://b.test/queued"].revisit is None
    assert popped["http://c.test/new"].revisit == {"md5": "f" * 32}
    assert f.queue.ack(list(popped)) == 2
    assert (f.queue.counts().queued, f.queue.counts().leased, f.queue.counts().done) == (0, 0, 3)


def test_push_after_revive_combines_as_usual(make) -> None:
    f = make()
    f.queue.push([entry("http://a.test/x", 1.0), entry("http://a.test/y", 1.0)], "sum")
    f.queue.ack([e.url for e in f.queue.pop(5)])
    assert f.queue.revive([revived("http://a.test/x", 1.5), revived("http://a.test/y", 1.5)]) == 2
    assert f.queue.push([entry("http://a.test/x", 0.5)], "sum").raised == 1
    assert f.queue.push([entry("http://a.test/y", 1.0)], "max").raised == 0
    assert f.queue.push([entry("http://a.test/y", 4.0)], "max").raised == 1
    assert {e.url: e.priority for e in f.queue.top(5)} == near({"http://a.test/x": 2.0, "http://a.test/y": 4.0})
    popped = f.queue.pop(5)
    assert [e.url for e in popped] == ["http://a.test/y", "http://a.test/x"]
    assert all(e.revisit == REVISIT for e in popped)
    assert f.queue.counts().queued == 0 and f.queue.counts().leased == 2


def test_revived_acked_then_revived_again(make) -> None:
    f = make()
    f.queue.push([entry("http://a.test/x", 1.0)], "sum")
    f.queue.ack([e.url for e in f.queue.pop(5)])
    for round_ in range(3):
        data = {"etag": f'"v{round_}"'}
        assert f.queue.revive([revived("http://a.test/x", 1.0 + round_, revisit=data)]) == 1
        assert f.queue.revive([revived("http://a.test/x", 7.0)]) == 0  # already queued
        (e,) = f.queue.pop(5)
        assert (e.priority, e.revisit) == (near(1.0 + round_), data)
        assert f.queue.revive([revived("http://a.test/x", 7.0)]) == 0  # leased
        assert f.queue.release([e.url]) == 1  # handed back: still revived, data kept
        (e,) = f.queue.pop(5)
        assert e.revisit == data
        assert f.queue.ack([e.url]) == 1
        assert (f.queue.counts().queued, f.queue.counts().leased, f.queue.counts().done) == (0, 0, 1)
    assert f.queue.push([entry("http://a.test/x", 3.0)], "sum").ignored == 1


def test_revive_mark_done_and_hosts_stay_exact(make) -> None:
    f = make()
    f.queue.push([entry(f"http://a.test/{i}") for i in range(4)], "sum")
    f.queue.ack([e.url for e in f.queue.pop(10)])
    assert f.queue.revive([revived(f"http://a.test/{i}") for i in range(3)]) == 3
    assert f.queue.mark_done([entry("http://a.test/0")]) == 1  # a queued revived URL → done, not fetched
    hosts = {h.host: h for h in f.queue.hosts()}
    assert (hosts["a.test"].queued, hosts["a.test"].leased, hosts["a.test"].done) == (2, 0, 2)
    assert (f.queue.counts().queued, f.queue.counts().done) == (2, 2)
    assert sorted(e.url for e in f.queue.pop(10)) == ["http://a.test/1", "http://a.test/2"]
    assert f.queue.revive([]) == 0


def test_large_hosts_keep_order_reasons_and_counts(make) -> None:
    """Thousands of URLs on a host (the Redis backend splits its buckets many times
    meanwhile): pops stay in priority order, every reason comes back, counts exact."""
    import random

    rnd = random.Random(7)
    f = make(politeness=Politeness(delay=0.0, per_host=50))
    urls = [f"https://big.test/a/{i}-{'x' * rnd.randint(0, 30)}" for i in range(3000)]
    urls += [f"http://small.test/{i}" for i in range(30)]
    parents = ["https://big.test/", "http://small.test/", "https://other.test/p"] + urls[:50]
    expected = {}
    for start in range(0, len(urls), 700):
        batch = []
        for u in urls[start : start + 700]:
            parent = rnd.choice(parents)
            score = float(rnd.randint(0, 40))
            prio = rnd.random()
            expected[u] = (prio, {"parent": parent, "parent_score": score})
            batch.append(entry(u, prio, depth=rnd.randint(1, 9), parent=parent, parent_score=score))
        assert f.queue.push(batch, "max").new == len(batch)
    assert f.queue.push([entry(urls[5], 0.0)], "max").raised == 0
    assert f.queue.counts().queued == len(urls)
    assert sorted(e.url for e in f.queue.top(5)) == sorted(sorted(expected, key=lambda u: -expected[u][0])[:5])
    hosts = {h.host: h for h in f.queue.hosts()}
    assert (hosts["big.test"].queued, hosts["small.test"].queued) == (3000, 30)
    seen: dict[str, list[float]] = {}
    done = 0
    while True:
        popped = f.queue.pop(100)
        if not popped:
            break
        for e in popped:
            assert (e.priority, e.about()) == (near(expected[e.url][0]), expected[e.url][1])
            seen.setdefault(e.host, []).append(e.priority)
        for prios in seen.values():  # one pop: each host's URLs best first
            assert prios == sorted(prios, reverse=True)
        seen.clear()
        keep = popped[: len(popped) // 2]
        f.queue.ack([e.url for e in keep])
        done += len(keep)
        f.queue.mark_done([entry(e.url) for e in popped[len(popped) // 2 :]])  # leased: stays
        f.queue.release([e.url for e in popped[len(popped) // 2 :]])
        if done > 2000:
            break
    counts = f.queue.counts()
    assert (counts.queued + counts.leased, counts.done) == (len(urls) - done, done)
    assert f.queue.mark_done([entry(u) for u in urls]) == len(urls) - done
    assert f.queue.counts().done == len(urls) and f.queue.counts().queued == 0 and not f.queue.has_work()
    assert f.queue.revive([entry(u, 1.0) for u in urls[:100]]) == 100
    assert f.queue.counts().done == len(urls) - 100 and f.queue.counts().queued == 100
    assert len({e.url for e in f.queue.pop(200)} - set(urls[:100])) == 0


def test_the_page_budget_holds_for_every_worker_together(make) -> None:
    """``Limits.pages``: URLs done or leased by any worker count; a pop takes no more, and
    a URL handed back (released, or reaped) frees its place."""
    from spitag.frontier import Limits

    a = make(owner="box1:1:aaaa", limits=Limits(pages=5))
    b = make(owner="box1:2:bbbb", limits=Limits(pages=5))
    a.queue.push([entry(f"http://h{i}.test/p") for i in range(10)], "max")
    first = a.queue.pop(3)
    assert len(first) == 3
    a.queue.ack([first[0].url])  # done counts as leased did
    assert len(b.queue.pop(10)) == 2  # 3 of a's, 2 of b's: 5
    assert a.queue.pop(10) == [] and b.queue.pop(10) == []
    a.queue.release([first[1].url])  # handed back: its place is free again
    assert len(b.queue.pop(10)) == 1
    assert a.queue.counts().leased + a.queue.counts().done == 5


def test_the_per_host_limit_holds_for_every_worker_together(make) -> None:
    """``Limits.per_host``: a host's URLs in the frontier, any state, pushed by any
    worker; the next new ones are refused (``PushResult.over``), a known one is not."""
    from spitag.frontier import Limits

    a = make(owner="box1:1:aaaa", limits=Limits(per_host=3))
    b = make(owner="box1:2:bbbb", limits=Limits(per_host=3))
    first = a.queue.push([entry("http://h.test/1"), entry("http://h.test/2"), entry("http://o.test/1", 10.0)], "max")
    assert (first.new, first.over) == (3, 0)
    done = a.queue.pop(1)
    assert [e.url for e in done] == ["http://o.test/1"]
    a.queue.ack([e.url for e in done])
    second = b.queue.push([entry("http://h.test/3"), entry("http://h.test/4"), entry("http://h.test/2", 5.0)], "sum")
    assert (second.new, second.over, second.raised) == (1, 1, 1)  # 3 taken, 4 refused, 2 raised
    assert sorted(h.host for h in a.queue.hosts() if h.queued + h.leased + h.done == 3) == ["h.test"]
    assert b.queue.push([entry("http://o.test/2")], "max").new == 1  # other hosts are not held up
