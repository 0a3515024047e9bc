"""The frontier contract (spitag.frontier.base): one suite, run against every backend."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time

import pytest
import redis

from spitag.frontier import Entry, Politeness, open_frontier
from spitag.frontier.owners import started, this_space


def near(value):
    """A priority as it comes back: Redis keeps it as an integer code, within 4.8e-7
    relative of the one pushed (a sum: within one more step of 9.5e-7)."""
    return pytest.approx(value, rel=2e-6, abs=0)


def entry(url: str, priority: float = 1.0, depth: int = 1, **reason) -> Entry:
    host = url.split("/")[2]
    return Entry(url, host, depth, priority, reason or None)


@pytest.fixture(params=["sqlite", "redis"])
def frontier_url(request: pytest.FixtureRequest, tmp_path) -> str:
    if request.param == "redis":
        return request.getfixturevalue("redis_url")
    return f"sqlite:///{tmp_path}/frontier.db"


@pytest.fixture
def make(frontier_url: str):
    opened = []

    def factory(crawl: str = "c", owner: str | None = None, **kwargs):
        f = open_frontier(frontier_url, crawl, owner, **kwargs)
        opened.append(f)
        return f

    yield factory
    for f in opened:
        f.close()


def test_push_then_pop_in_priority_order(make) -> None:
    f = make()
    f.push([entry("http://a.test/1", 1), entry("http://a.test/2", 3), entry("http://a.test/3", 2)], "sum")
    popped = f.pop(10)
    assert [e.url for e in popped][:3] == ["http://a.test/2", "http://a.test/3", "http://a.test/1"]
    assert f.counts().leased == 3 and f.counts().queued == 0


def test_rediscovery_sums_or_maxes_while_queued(make) -> None:
    f = make()
    f.push([entry("http://a.test/x", 0.5), entry("http://a.test/y", 0.9)], "sum")
    result = f.push([entry("http://a.test/x", 0.5)], "sum")
    assert result.raised == 1 and result.new == 0
    assert [e.priority for e in f.top(2)] == near([1.0, 0.9])
    f.push([entry("http://a.test/y", 0.1)], "max")  # lower: no change with max
    f.push([entry("http://a.test/x", 5.0)], "max")
    assert {e.url: e.priority for e in f.top(2)} == near({"http://a.test/x": 5.0, "http://a.test/y": 0.9})


PRIORITIES = [-1e300, -1e6, -50.0, -3.0, -1.0, -0.25, -1e-12, -1e-300, 0.0, 1e-307, 1e-250, 7.0 ** -200,
              1e-50, 1e-12, 1e-6, 0.001, 0.1, 0.100001, 1 / 3, 0.999999, 1.0, 1.000001, 3.7, 60.0, 1e6, 1e15,
              1e100, 1e300]


def test_priorities_of_any_sign_and_magnitude_keep_order_and_value(make) -> None:
    """Very small (OPIC cash split again and again), large, zero and negative (BFS)
    priorities: popped in order, each within 1e-6 relative of the one pushed."""
    f = make(politeness=Politeness(delay=0.0, per_host=100))
    f.push([entry(f"http://a.test/{i}", p) for i, p in enumerate(PRIORITIES)], "max")
    hosts = {h.host: h for h in f.hosts()}
    assert hosts["a.test"].best == pytest.approx(1e300, rel=1e-6)
    assert [e.priority for e in f.top(3)] == pytest.approx([1e300, 1e100, 1e15], rel=1e-6)
    popped = f.pop(100)
    assert [e.url for e in popped] == [f"http://a.test/{i}" for i in reversed(range(len(PRIORITIES)))]
    for e, pushed in zip(popped, reversed(PRIORITIES)):
        assert e.priority == pytest.approx(pushed, rel=1e-6, abs=0)
    # handed back and taken again: the same priorities
    f.release([e.url for e in popped])
    assert [e.priority for e in f.pop(100)] == [e.priority for e in popped]


def test_many_tiny_contributions_add_up(make) -> None:
    """Sum-combining keeps order: 2,000 contributions of 1e-9 make 2e-6; 10,000 of 1e-8,
    each far below the precision of a stored priority of 1.0, still make 1.0001."""
    f = make(politeness=Politeness(delay=0.0, per_host=100))
    f.push([entry("http://a.test/low", 1.99e-6), entry("http://a.test/high", 2.01e-6),
            entry("http://a.test/one", 1.0), entry("http://a.test/one-low", 1.00005),
            entry("http://a.test/one-high", 1.00015)], "sum")
    for _ in range(4):
        f.push([entry("http://a.test/tiny", 1e-9)] * 500, "sum")
    for _ in range(10):
        f.push([entry("http://a.test/one", 1e-8)] * 1000, "sum")
    popped = {e.url.rsplit("/", 1)[1]: e.priority for e in f.pop(100)}
    assert list(popped) == ["one-high", "one", "one-low", "high", "tiny", "low"]
    assert popped["tiny"] == pytest.approx(2e-6, rel=1e-4)
    assert popped["one"] == pytest.approx(1.0001, rel=2e-5)


def test_done_is_never_fetched_twice(make) -> None:
    f = make()
    f.push([entry("http://a.test/x")], "sum")
    (e,) = f.pop(5)
    assert f.ack([e.url]) == 1
    result = f.push([entry("http://a.test/x", 100)], "sum")
    assert result.ignored == 1
    assert f.pop(5) == []
    assert not f.has_work()
    assert (f.counts().done, f.counts().queued) == (1, 0)


def test_leased_url_is_not_popped_again_and_release_returns_it(make) -> None:
    f = make()
    f.push([entry("http://a.test/x")], "sum")
    assert len(f.pop(5)) == 1
    assert f.pop(5) == []
    assert f.has_work()  # leased work keeps the crawl alive
    assert f.release(["http://a.test/x"]) == 1
    assert [e.url for e in f.pop(5)] == ["http://a.test/x"]


def test_expired_leases_are_reaped_by_another_owner(make) -> None:
    dead = make(owner="elsewhere:1:dead", lease_seconds=0.2)
    alive = make(owner="elsewhere:2:alive", lease_seconds=0.2)
    dead.push([entry("http://a.test/1"), entry("http://b.test/2")], "sum")
    assert len(dead.pop(5)) == 2
    assert alive.reap() == 0  # not expired yet
    time.sleep(0.3)
    assert alive.reap() == 2
    assert sorted(e.url for e in alive.pop(5)) == ["http://a.test/1", "http://b.test/2"]
    assert alive.ack(["http://a.test/1", "http://b.test/2"]) == 2


def test_renewed_lease_survives_reaping(make) -> None:
    holder = make(owner="elsewhere:1:holder", lease_seconds=0.3)
    other = make(owner="elsewhere:2:other", lease_seconds=0.3)
    holder.push([entry("http://a.test/slow")], "sum")
    holder.pop(1)
    for _ in range(3):
        time.sleep(0.15)
        assert holder.renew(["http://a.test/slow"]) == 1
    assert other.reap() == 0
    assert other.renew(["http://a.test/slow"]) == 0  # not its lease


def test_polite_host_gives_one_url_per_delay(make) -> None:
    f = make(politeness=Politeness(delay=0.3, per_host=4))
    f.push([entry(f"http://a.test/{i}", i) for i in range(3)] + [entry("http://b.test/0", 0)], "sum")
    first = f.pop(10)
    assert sorted(e.host for e in first) == ["a.test", "b.test"]
    assert f.pop(10) == []
    wait = f.next_ready()
    assert wait is not None and 0 < wait <= 0.3
    time.sleep(wait + 0.02)
    assert [e.url for e in f.pop(10)] == ["http://a.test/1"]


def test_host_delay_override_and_no_delay_cap(make) -> None:
    f = make(politeness=Politeness(delay=0.0, per_host=2))
    f.set_host_delay("slow.test", 10.0)
    f.push([entry(f"http://fast.test/{i}") for i in range(5)] + [entry(f"http://slow.test/{i}") for i in range(5)], "sum")
    popped = f.pop(10)
    assert sum(e.host == "fast.test" for e in popped) == 2  # per_host cap without a delay
    assert sum(e.host == "slow.test" for e in popped) == 1  # its own delay applies
    assert sum(e.host == "fast.test" for e in f.pop(10)) == 2
    assert all(e.host == "fast.test" for e in f.pop(10))


def test_hosts_are_taken_by_rank(make) -> None:
    f = make(politeness=Politeness(delay=0.0, per_host=1))
    f.push([entry("http://poor.test/a", 1.0), entry("http://rich.test/a", 2.0)], "sum")
    assert [e.host for e in f.pop(1)] == ["rich.test"]


def test_learnt_host_yield_lifts_its_rank(make) -> None:
    f = make(politeness=Politeness(delay=0.0, per_host=1), host_weight=0.7, score_half=10.0)
    f.push([entry("http://poor.test/a", 1.0), entry("http://rich.test/a", 0.25)], "sum")
    # unknown hosts rank by their squashed best priority: poor 0.5 > rich 0.2
    f.learn([("rich.test", 20.0), ("rich.test", 40.0)])  # mean 30: 0.7 · 30/40 + 0.3 · 0.2 = 0.585 > 0.5
    assert [e.host for e in f.pop(1)] == ["rich.test"]
    f.learn([("poor.test", 1.0)])  # poor: 0.7 · 1/11 + 0.3 · 0.5 ≈ 0.21
    f.push([entry("http://rich.test/b", 0.25)], "sum")
    assert [e.host for e in f.pop(1)] == ["rich.test"]


def test_posterior_host_rank_matches_scoring() -> None:
    from spitag.frontier.base import host_rank
    from spitag.scoring import host_posterior

    for best, total, pages, k in [(10, 0, 0, 0.25), (10, 0, 2, 0.25), (8, 20, 1, 0.25), (3, 7, 4, 1.0),
                                  (5, 6, 3, 0.0), (5, 0, 0, 0.0), (5, 6, 3, -1.0)]:
        rank = host_rank(best, None, 0.7, 60.0, 0.0, score_sum=total, pages=pages, mode="posterior", k=k)
        assert rank == pytest.approx(host_posterior(best, total, pages, k))
    assert host_rank(10, None, 0.7, 60.0, 0.0, mode="posterior", k=0.25) == 10  # never fetched: best
    assert host_rank(10, 0.0, 0.0, 60.0, 0.0, score_sum=0, pages=5, mode="posterior") == 10  # weight 0: off


def test_posterior_host_ranking(make) -> None:
    """``spitag``: hosts rank by (S + k·best) / (n + k), S and n learnt, best their top link."""
    f = make(politeness=Politeness(delay=0.0, per_host=1), host_weight=0.7, host_ranking="posterior", host_k=0.25)
    bests = {"a.test": 10.0, "b.test": 8.0, "c.test": 6.0, "d.test": 1.2, "e.test": 1.0}
    f.push([entry(f"http://{h}/{i}", p) for h, p in bests.items() for i in (1, 2)], "max")
    # never fetched: ranked by their best priority
    assert [e.host for e in f.pop(3)] == ["a.test", "b.test", "c.test"]
    assert make().counts().queued == 7  # an inspecting opener (scrapy frontier) changes no ranking
    f.learn([("a.test", 0.0), ("a.test", 0.0)])  # a: (0 + 0.25·10) / (2 + 0.25) ≈ 1.11
    f.learn([("b.test", 20.0)])  # b: (20 + 0.25·8) / (1 + 0.25) = 17.6
    # b (17.6) > c (6, unseen) > d (1.2, unseen) > a (1.11) > e (1.0, unseen)
    assert [e.host for e in f.pop(5)] == ["b.test", "c.test", "d.test", "a.test", "e.test"]


def test_posterior_k_weighs_the_link_promise(make) -> None:
    f = make(politeness=Politeness(delay=0.0, per_host=1), host_weight=0.7, host_ranking="posterior", host_k=2.0)
    f.push([entry("http://a.test/1", 10.0), entry("http://b.test/1", 4.5)], "max")
    f.learn([("a.test", 0.0), ("a.test", 0.0)])  # k = 2: (0 + 2·10) / (2 + 2) = 5 > 4.5
    assert [e.host for e in f.pop(2)] == ["a.test", "b.test"]
    g = make("other", politeness=Politeness(delay=0.0, per_host=1), host_weight=0.7, host_ranking="posterior", host_k=0.0)
    g.push([entry("http://a.test/1", 10.0), entry("http://b.test/1", 0.5)], "max")
    g.learn([("a.test", 0.0), ("a.test", 1.0), ("a.test", 0.2)])  # k = 0: the mean, 0.4 < 0.5 (b's best)
    assert [e.host for e in g.pop(2)] == ["b.test", "a.test"]


def test_rescore_ranks_hosts_not_learnt_by_their_latest_estimate(make) -> None:
    """``rescore``: a host not learnt yet ranks by the strategy's latest estimate, not by
    what its links were worth when found; its URLs keep their own order; a learnt host,
    and a host whose estimate came before its first URL, follow the same rules."""
    f = make(politeness=Politeness(delay=0.0, per_host=1), host_weight=0.7, host_ranking="posterior", host_k=0.25)
    f.push([entry("http://a.test/1", 10.0), entry("http://a.test/2", 9.0), entry("http://b.test/1", 5.0),
            entry("http://c.test/1", 7.0), entry("http://d.test/1", 1.0)], "max")
    f.learn([("c.test", 6.0)])  # c: (6 + 0.25·7) / 1.25 = 6.2
    # a falls below d, b rises above c; c is learnt (its estimate is ignored); e has
    # no URL yet; a NaN is dropped
    assert f.rescore([("a.test", 0.5), ("b.test", 8.0), ("c.test", 100.0), ("e.test", 3.0),
                      ("d.test", float("nan"))]) == 2
    assert [e.host for e in f.top(10)][:1] == ["a.test"]  # the URLs' own priorities stay
    f.push([entry("http://e.test/1", 50.0)], "max")  # e ranks by its estimate (3.0), not 50
    assert [e.host for e in f.pop(5)] == ["b.test", "c.test", "e.test", "d.test", "a.test"]
    assert [e.url for e in f.pop(5)] == ["http://a.test/2"]  # a's URLs in their own order
    assert f.rescore([]) == 0
    # once learnt, a host ranks by what it showed, whatever its estimate was
    f.push([entry("http://b.test/2", 5.0), entry("http://d.test/2", 1.0)], "max")
    f.rescore([("b.test", 8.0), ("d.test", 0.1)])
    f.learn([("d.test", 40.0)])
    assert [e.host for e in f.pop(5)] == ["d.test", "b.test"]


def test_probe_takes_one_url_of_a_host_with_nothing_done_until_its_page_is_in(make) -> None:
    """``probe``: a host none of whose URLs is done gives one URL, then none until that
    page is learnt or leaves its lease (ack, release, reap); a host with a page done
    gives ``per_host`` as usual; a host's hard politeness gate still holds it after."""
    f = make(politeness=Politeness(delay=0.0, per_host=4), lease_seconds=0.5, probe=True,
             host_weight=0.7, host_ranking="posterior")
    f.push([entry(f"http://a.test/{i}", 10.0 - i) for i in range(4)]
           + [entry(f"http://b.test/{i}", 5.0 - i) for i in range(3)], "max")
    assert [e.url for e in f.pop(10)] == ["http://a.test/0", "http://b.test/0"]
    assert f.pop(10) == []  # both wait for their first page
    wait = f.next_ready()
    assert wait is not None and 0.3 < wait <= 0.5  # until the lease would expire
    assert f.ack(["http://a.test/0"]) == 1  # a's page is in: a is an ordinary host now
    assert [e.url for e in f.pop(10)] == ["http://a.test/1", "http://a.test/2", "http://a.test/3"]
    f.learn([("b.test", 3.0)])  # b's page learnt, its lease still running
    assert [e.url for e in f.pop(10)] == ["http://b.test/1", "http://b.test/2"]
    # released or reaped: the host is ready again, and still probed
    f.push([entry(f"http://c.test/{i}", 3.0 - i) for i in range(3)], "max")
    assert [e.url for e in f.pop(10)] == ["http://c.test/0"]
    assert f.release(["http://c.test/0"]) == 1
    assert [e.url for e in f.pop(10)] == ["http://c.test/0"]
    assert f.pop(10) == []
    time.sleep(0.6)
    assert f.reap() >= 1  # c's lease (and the others') expired
    assert [e.url for e in f.pop(10) if e.host == "c.test"] == ["http://c.test/0"]
    # a hard politeness gate taken for the probe's download holds the host after it
    f.push([entry(f"http://d.test/{i}", 1.0 - i / 10) for i in range(2)], "max")
    assert [e.url for e in f.pop(10)] == ["http://d.test/0"]
    assert f.acquire("d.test", 0.4) == 0.0
    f.ack(["http://d.test/0"])
    assert f.pop(10) == []
    wait = f.next_ready()
    assert wait is not None and 0.2 < wait <= 0.4
    time.sleep(wait + 0.02)
    assert [e.url for e in f.pop(10)] == ["http://d.test/1"]
    # without probe, a host with nothing done gives per_host at once
    g = make(crawl="other", politeness=Politeness(delay=0.0, per_host=4))
    g.push([entry(f"http://e.test/{i}", 1.0) for i in range(3)], "max")
    assert len(g.pop(10)) == 3


def test_learnt_gives_the_totals_then_what_other_owners_learn(make, frontier_url) -> None:
    """A resumed strategy starts from every host's totals, pages and link evidence; a
    worker's strategy then hears of the other workers' pages and links, batch by batch,
    not of its own (it saw those first hand)."""
    high = 1 << 63  # masks keep all 64 bits, whichever backend
    me = make(owner="w1", host_weight=0.7, host_ranking="posterior")
    me.learn([("a.test", 2.0), ("a.test", 4.0), ("b.test", 1.5)], [("x.test", 1.0, 1, 4 | high)])
    me.learn([], [("x.test", 0.5, 2, 3), ("y.test", 2.0, 1, 1), ("bad.test", -1.0, 1, 1), ("z.test", 1.0, 0, 1)])
    cursor, batches = me.learnt(None)
    assert len(batches) == 1
    assert sorted(batches[0].pages) == [("a.test", 6.0, 2), ("b.test", 1.5, 1)]
    assert sorted(batches[0].links) == [("x.test", 1.5, 3, 7 | high), ("y.test", 2.0, 1, 1)]
    me.learn([("a.test", 10.0)], [("y.test", 0.5, 2, 3)])  # mine: not fed back
    cursor, batches = me.learnt(cursor)
    assert batches == []
    if frontier_url.startswith("sqlite"):
        return  # one owner per SQLite frontier: there are no other workers
    other = make(owner="w2", host_weight=0.7, host_ranking="posterior")
    other.learn([("c.test", 7.0), ("c.test", 1.0), ("a.test", 0.5)])
    other.learn([], [("z.test", 2.5, 3, 6)])  # links alone: found, no page learnt
    other.learn([("c.test", 2.0)], [("z.test", 1.0, 1, 8 | high)])
    cursor, batches = me.learnt(cursor)
    assert [(sorted(b.pages), b.links) for b in batches] == [
        ([("a.test", 0.5, 1), ("c.test", 8.0, 2)], []),
        ([], [("z.test", 2.5, 3, 6)]),
        ([("c.test", 2.0, 1)], [("z.test", 1.0, 1, 8 | high)]),
    ]
    assert me.learnt(cursor)[1] == []  # read once
    r = redis.Redis.from_url(frontier_url)
    r.xadd("spitag:c:learnt", {"o": "w3", "d": "not json"})  # written by something else: skipped
    other.learn([("c.test", 1.0)])
    cursor, batches = me.learnt(cursor)
    assert [b.pages for b in batches] == [[("c.test", 1.0, 1)]]
    _, (batch,) = other.learnt(None)  # a new worker starts from everyone's totals
    assert sorted(batch.pages) == [("a.test", 16.5, 4), ("b.test", 1.5, 1), ("c.test", 11.0, 4)]
    assert sorted(batch.links) == [("x.test", 1.5, 3, 7 | high), ("y.test", 2.5, 3, 3), ("z.test", 3.5, 4, 14 | high)]


def test_heartbeat_counts_the_live_workers_on_this_machine(make, frontier_url) -> None:
    """Workers of one crawl on one machine share its CPUs: each learns how many they are."""
    a = make(owner="box1:101:aaaa")
    if frontier_url.startswith("sqlite"):
        assert a.heartbeat() == 1  # one owner per SQLite frontier
        return
    b = make(owner="box1:102:bbbb")
    elsewhere = make(owner="box2:101:cccc")
    other_crawl = make("another", owner="box1:103:dddd")
    assert a.heartbeat() == 1  # the others have not said a word yet
    assert b.heartbeat() == 2 and elsewhere.heartbeat() == 1 and other_crawl.heartbeat() == 1
    assert a.heartbeat() == 2
    b.close()  # a closing worker removes itself
    assert a.heartbeat() == 1
    odd = make(owner="w1")  # not host:pid:random: a machine of its own
    assert odd.heartbeat() == 1 and a.heartbeat() == 1
    r = redis.Redis.from_url(frontier_url)
    r.hset("spitag:c:alive", "box1:104:eeee", "1.000 box1")  # silent for ages: dropped
    assert a.heartbeat() == 1 and not r.hexists("spitag:c:alive", "box1:104:eeee")
    # Named machines (spitag.machine): two containers of one kernel, host names apart.
    c1 = make(owner="container1:7:ffff", machine="boot:k1")
    c2 = make(owner="container2:7:gggg", machine="boot:k1")
    assert c1.heartbeat() == 1 and c2.heartbeat() == 2 and c1.heartbeat() == 2
    assert a.heartbeat() == 1  # box1 is another machine


def test_crawls_are_separate(make) -> None:
    a, b = make("crawl-a"), make("crawl-b")
    a.push([entry("http://a.test/x")], "sum")
    assert b.pop(5) == [] and not b.has_work()
    assert len(a.pop(5)) == 1


def test_entries_keep_depth_and_reason(make) -> None:
    f = make()
    f.push([entry("http://a.test/x", 0.7, depth=3, parent="http://a.test/", parent_score=4.0)], "sum")
    (e,) = f.pop(1)
    assert (e.depth, e.priority, e.reason) == (3, near(0.7), {"parent": "http://a.test/", "parent_score": 4.0})


def test_rediscovery_from_a_lower_layer_lowers_the_depth(make) -> None:
    """A page belongs to the lowest layer that reaches it (BFS layers, SPITAG_MAX_DEPTH):
    found again at a smaller depth while it waits, it keeps that one; never a larger."""
    f = make()
    f.push([entry("http://a.test/x", 0.5, depth=4, parent="http://a.test/p", parent_score=2.0)], "sum")
    f.push([entry("http://a.test/x", 0.5, depth=2, parent="http://a.test/q", parent_score=1.0)], "sum")
    f.push([entry("http://a.test/x", 0.5, depth=5)], "max")
    (e,) = f.pop(1)
    assert e.depth == 2 and e.reason == {"parent": "http://a.test/p", "parent_score": 2.0}


def test_stats_per_host(make) -> None:
    f = make()
    f.push([entry("http://a.test/1"), entry("http://a.test/2"), entry("http://b.test/1")], "sum")
    popped = f.pop(1)
    f.ack([popped[0].url])
    hosts = {h.host: h for h in f.hosts()}
    assert hosts["a.test"].queued + hosts["a.test"].done + hosts["a.test"].leased == 2
    assert sum(h.done for h in hosts.values()) == 1
    assert f.counts().queued == 2


def test_acquire_spaces_requests_across_owners(make) -> None:
    a, b = make(owner="w:1:a"), make(owner="w:2:b")
    assert a.acquire("h.test", 0.3) == 0.0
    wait = b.acquire("h.test", 0.3)
    assert 0 < wait <= 0.3
    time.sleep(wait + 0.01)
    assert b.acquire("h.test", 0.3) == 0.0
    assert a.acquire("other.test", 0.3) == 0.0  # per host


def test_pop_gives_a_busy_host_only_what_its_places_can_take(make) -> None:
    """``busy``: the caller's requests per host already on their way to a download; a
    host gives at most ``per_host`` minus them (none when they fill its places)."""
    f = make(politeness=Politeness(delay=0.0, per_host=4))
    f.push([entry(f"http://a.test/{i}", 10.0 - i) for i in range(8)]
           + [entry(f"http://b.test/{i}", 1.0 - i / 10) for i in range(2)], "max")
    assert [e.url for e in f.pop(10, {"a.test": 3})] == ["http://a.test/0", "http://b.test/0", "http://b.test/1"]
    assert f.pop(10, {"a.test": 4, "b.test": 1}) == []
    assert [e.url for e in f.pop(10, {"a.test": 2})] == ["http://a.test/1", "http://a.test/2"]
    assert [e.url for e in f.pop(10)] == [f"http://a.test/{i}" for i in range(3, 7)]


def test_host_places_are_shared_by_every_worker_of_a_shared_frontier(make, frontier_url) -> None:
    """``enter_host``: at most ``limit`` downloads to a host at once for all workers
    together; given back, renewed, and freed by themselves when a hold runs out (a dead
    worker). A frontier one process uses shares nothing: its worker's limit is all."""
    a, b = make(owner="w:1:a"), make(owner="w:2:b")
    if frontier_url.startswith("sqlite"):
        assert not a.shares_hosts
        assert [a.enter_host("h.test", f"a#{i}", 2, 30.0) for i in range(5)] == [0] * 5
        a.push([entry("http://h.test/1")], "sum")
        assert [(h.downloading, h.waiting) for h in a.hosts()] == [(None, None)]
        return
    assert a.shares_hosts
    assert a.enter_host("h.test", "a#1", 2, 30.0) == 0 and b.enter_host("h.test", "b#1", 2, 30.0) == 0
    assert a.enter_host("h.test", "a#2", 2, 30.0) == 1 and b.enter_host("h.test", "b#2", 2, 30.0) == 2
    assert a.enter_host("other.test", "a#3", 2, 30.0) == 0  # per host
    assert b.enter_host("h.test", "b#1", 2, 30.0) == 0  # a place held, asked again: still its own
    b.leave_host("h.test", "b#1")
    assert b.enter_host("h.test", "b#2", 2, 30.0) == 2  # the free place is a#2's turn
    assert a.enter_host("h.test", "a#2", 2, 30.0) == 0
    assert b.enter_host("h.test", "b#2", 2, 30.0) == 1
    b.leave_host("h.test", "b#1")  # twice: nothing more to give back
    assert b.enter_host("h.test", "b#2", 2, 30.0) == 1
    a.leave_host("h.test", "a#2")
    assert a.enter_host("h.test", "a#9", 2, 30.0) == 2  # a newcomer waits behind the line
    assert b.enter_host("h.test", "b#2", 2, 30.0) == 0
    a.leave_host("h.test", "a#9")  # leaving the line gives up its turn
    a.leave_host("h.test", "a#1")
    b.leave_host("h.test", "b#2")
    a.leave_host("other.test", "a#3")
    assert not a.redis.keys(a.prefix + "h[xw]*")  # nothing left behind


@pytest.mark.parametrize("frontier_url", ["redis"], indirect=True)  # SQLite shares nothing (above)
def test_host_places_are_handed_out_in_turn(make) -> None:
    """A busy host's free places go to the requests that have waited longest, whichever
    worker frees them: the worker that gives a place back cannot take it again ahead of
    another's waiting request. A waiter that stops asking leaves the line."""
    a, b = make(owner="w:1:a"), make(owner="w:2:b")
    for f in (a, b):
        f.turn_seconds = 0.4
    assert [a.enter_host("h.test", f"a#{i}", 2, 30.0) for i in (1, 2)] == [0, 0]
    assert b.enter_host("h.test", "b#1", 2, 30.0) == 1
    assert b.enter_host("h.test", "b#2", 2, 30.0) == 2
    a.push([entry("http://h.test/1")], "sum")  # what `scrapy frontier` shows of the host
    assert [(h.host, h.downloading, h.waiting) for h in b.hosts()] == [("h.test", 2, 2)]
    # a's downloads end, one after the other, and a asks again at once each time
    a.leave_host("h.test", "a#1")
    assert a.enter_host("h.test", "a#3", 2, 30.0) == 3  # behind b's two: b#1 has the free place
    assert b.enter_host("h.test", "b#1", 2, 30.0) == 0
    a.leave_host("h.test", "a#2")
    assert a.enter_host("h.test", "a#4", 2, 30.0) == 3
    assert a.enter_host("h.test", "a#3", 2, 30.0) == 2  # still b#2's turn
    assert b.enter_host("h.test", "b#2", 2, 30.0) == 0
    assert a.enter_host("h.test", "a#3", 2, 30.0) == 1  # next, once a place comes free
    # a waiter that stops asking (its worker died) loses its turn; the one behind moves up
    time.sleep(0.25)
    assert a.enter_host("h.test", "a#4", 2, 30.0) == 2
    time.sleep(0.25)  # a#3 last asked 0.5 s ago, a#4 0.25 s ago
    b.leave_host("h.test", "b#1")
    assert a.enter_host("h.test", "a#4", 2, 30.0) == 0
    assert a.enter_host("h.test", "a#3", 2, 30.0) == 1  # back in line, at its end
    # places that are not renewed free themselves; renewed ones stay
    a.leave_host("h.test", "a#3")
    a.leave_host("h.test", "a#4")
    b.leave_host("h.test", "b#2")
    assert a.enter_host("h.test", "a#5", 2, 1.0) == 0 and b.enter_host("h.test", "b#3", 2, 1.0) == 0
    time.sleep(0.6)
    a.hold_hosts([("h.test", "a#5")], 1.0)
    time.sleep(0.6)  # b#3's hold has run out, a#5's was renewed (for 0.4 s more)
    assert b.enter_host("h.test", "b#4", 2, 30.0) == 0
    assert b.enter_host("h.test", "b#5", 2, 30.0) == 1
    time.sleep(0.6)  # now a#5's too
    assert b.enter_host("h.test", "b#5", 2, 30.0) == 0
    b.leave_host("h.test", "b#4")
    b.leave_host("h.test", "b#5")
    assert not a.redis.keys(a.prefix + "h[xw]*")


def test_robots_kept_for_every_worker_until_their_time_is_up(make) -> None:
    """``keep_robots``: what one worker fetched, another (or a resumed run) reads, per
    host and port and per crawl, until its time to live is over; kept again, renewed."""
    a, b, other = make(owner="w:1:a"), make(owner="w:2:b"), make(crawl="other")
    assert b.robots("h.test") is None
    a.keep_robots("h.test", b"\x00blob", 0.4)
    a.keep_robots("h.test:8080", b"port", 30.0)
    assert b.robots("h.test") == b"\x00blob" and b.robots("h.test:8080") == b"port"
    assert other.robots("h.test") is None  # another crawl keeps its own
    time.sleep(0.5)
    assert b.robots("h.test") is None and b.robots("h.test:8080") == b"port"
    b.keep_robots("h.test", b"again", 30.0)
    assert a.robots("h.test") == b"again"


def test_setup_is_the_last_workers_and_each_sees_the_one_before(make) -> None:
    a, b = make(owner="a"), make(owner="b")
    assert a.record_setup({"strategy": "spitag", "seeds": "d1"}) == {}
    assert b.record_setup({"strategy": "bfs", "seeds": "d1"}) == {"strategy": "spitag", "seeds": "d1"}
    assert a.record_setup({"strategy": "bfs"}) == {"strategy": "bfs", "seeds": "d1"}
    assert make(crawl="other").record_setup({}) == {}  # each crawl its own


def test_stop_request_is_seen_by_every_worker(make) -> None:
    a, b = make(owner="w:1:a"), make(owner="w:2:b")
    assert not b.stop_requested()
    a.request_stop()
    assert b.stop_requested()
    b.clear_stop()
    assert not a.stop_requested()


def test_host_delay_defaults_and_overrides(make) -> None:
    f = make(politeness=Politeness(delay=0.5, per_host=4))
    assert f.host_delay("a.test") == 0.5
    f.set_host_delay("a.test", 2.0)
    assert f.host_delay("a.test") == 2.0


def test_a_host_that_asked_for_a_pause_is_left_alone(make) -> None:
    """``pause_host`` (Retry-After): no URL of the host is popped and its hard gate stays
    shut until the pause is over, for every worker; a shorter pause asked for later does
    not shorten it."""
    a, b = make(owner="w:1:a"), make(owner="w:2:b")
    a.push([entry(f"http://p.test/{i}") for i in range(3)] + [entry("http://q.test/1")], "sum")
    a.pause_host("p.test", 0.8)
    a.pause_host("p.test", 0.1)
    assert [e.host for e in b.pop(10)] == ["q.test"]
    assert b.pop(10) == []
    assert 0.5 < b.next_ready() <= 0.8  # the scheduler wakes when the pause is over
    assert 0.5 < b.acquire("p.test", 0.0) <= 0.8
    if b.shares_hosts:  # a request another worker popped before the pause gets no place
        assert -800 <= b.enter_host("p.test", "b#1", 4, 30.0) < -500
    time.sleep(0.9)
    assert b.acquire("p.test", 0.0) == 0.0
    assert b.enter_host("p.test", "b#1", 4, 30.0) == 0
    assert sorted(e.url for e in b.pop(10)) == [f"http://p.test/{i}" for i in range(3)]
    b.pause_host("new.test", 5.0)  # a host with nothing queued yet: paused all the same
    b.push([entry("http://new.test/1")], "sum")
    assert b.pop(10) == [] and b.acquire("new.test", 0.0) > 4.0


def test_refusals_in_a_row_double_the_back_off(make) -> None:
    """``back_off`` (429 or 503 without Retry-After): the n-th refusal in a row pauses
    the host base · 2^(n−1) s, at most the cap; a refusal of a request that was out
    when the back-off began adds nothing; a request sent after it ended and served
    starts the count over. Where workers share the frontier, the count is theirs."""
    a = make(owner="w:1:a")
    b = make(owner="w:2:b") if a.shares_hosts else a
    a.push([entry("http://p.test/1"), entry("http://q.test/1")], "sum")
    assert a.back_off("p.test", 0.05, 0.4, 10.0) == pytest.approx(0.4)
    assert b.back_off("p.test", 0.05, 0.4, 10.0) == 0.0  # out before it began: same overload
    assert [e.host for e in b.pop(10)] == ["q.test"]  # paused, as by pause_host
    assert 0.2 < b.acquire("p.test", 0.0) <= 0.4
    assert not b.end_back_off("p.test", 0.05)  # served, but sent before it ended: counted still
    time.sleep(0.45)
    assert b.back_off("p.test", 0.01, 0.4, 10.0) == pytest.approx(0.8)  # refused again: doubled
    time.sleep(0.85)
    assert a.back_off("p.test", 0.01, 0.4, 1.0) == pytest.approx(1.0)  # 1.6, capped
    assert not a.end_back_off("p.test", 0.01)
    time.sleep(1.05)
    assert a.end_back_off("p.test", 0.01) and b.end_back_off("p.test", 0.01)  # the count went
    assert b.back_off("p.test", 0.01, 0.4, 10.0) == pytest.approx(0.4)
    assert a.end_back_off("q.test", 0.0)  # never refused: nothing to end


def test_a_host_down_waits_without_keeping_the_crawl_going(make) -> None:
    """``set_host_down``: no URL of the host is popped until its time is up, for every
    worker; its queued URLs stay queued (shown by ``hosts_down``) but do not make
    ``has_work`` true, nor do its leased ones (a failed URL waiting for another try),
    while a URL leased on another host does. ``clear_down`` (a new run) makes
    it ready again at once; the end of a probe (its URL released) does not."""
    a = make(owner="w:1:a")
    b = make(owner="w:2:b") if a.shares_hosts else a
    dead = [f"http://dead.test/{i}" for i in range(3)]
    a.push([entry(u) for u in dead] + [entry("http://ok.test/1")], "sum")
    a.set_host_down("dead.test", 0.8)
    a.set_host_down("dead.test", 0.1)  # a shorter time later does not shorten it
    assert [e.host for e in b.pop(10)] == ["ok.test"]
    assert b.pop(10) == []
    assert a.has_work()  # ok.test/1 is leased
    b.ack(["http://ok.test/1"])
    assert a.counts().queued == 3 and not a.has_work() and not b.has_work()
    [(host, left, queued)] = a.hosts_down()
    assert host == "dead.test" and 0.5 < left <= 0.8 and queued == 3
    assert a.acquire("dead.test", 0.0) == 0.0  # its hard gate stays open: requests already out go
    time.sleep(0.85)
    assert a.has_work() and b.hosts_down() == []
    assert sorted(e.url for e in b.pop(10)) == dead  # tried again once its time is up
    a.set_host_down("dead.test", 60.0)  # with its URLs leased
    assert not a.has_work() and b.hosts_down() == [("dead.test", pytest.approx(60.0, abs=1), 3)]
    b.release(dead)
    assert a.pop(10) == [] and not a.has_work()
    assert b.clear_down() == 1 and a.hosts_down() == []
    assert a.has_work() and sorted(e.url for e in a.pop(10)) == dead  # a new run tries it at once
    c = make(crawl="probed", probe=True)
    c.push([entry(u) for u in dead], "sum")
    [first] = c.pop(10)  # a host with nothing done gives one URL, its probe
    c.set_host_down("dead.test", 60.0)
    c.release([first.url])  # the probe ends: the host would be ready, but it is down
    assert c.pop(10) == [] and not c.has_work()


def test_failures_in_a_row_set_a_host_down_for_every_worker(make) -> None:
    """``host_failed``: the failures of every worker count together; the ``limit``-th
    in a row sets the host down (``hosts_down``), a failure while it is down counts
    nothing, an answer (``host_answered``) starts the count over, and a host set down
    before that has not answered since goes down again at its first failure."""
    a = make(owner="w:1:a")
    b = make(owner="w:2:b") if a.shares_hosts else a
    a.push([entry("http://dead.test/1")], "sum")
    assert a.host_failed("dead.test", 3, 0.5) == (1, 0.0, False)
    assert b.host_failed("dead.test", 3, 0.5) == (2, 0.0, False)
    b.host_answered("dead.test")  # it answered: the count starts over
    assert a.failing_hosts() == []
    assert [b.host_failed("dead.test", 3, 0.5).count for _ in range(2)] == [1, 2]
    assert a.failing_hosts() == ["dead.test"] and a.hosts_down() == []
    assert a.host_failed("dead.test", 3, 0.5) == (3, 0.5, False)  # the third in a row
    assert [h for h, _, _ in b.hosts_down()] == ["dead.test"] and b.pop(10) == []
    count, left, again = b.host_failed("dead.test", 3, 0.5)  # out when it went down
    assert count == 0 and 0 < left <= 0.5 and not again
    time.sleep(0.55)
    assert b.hosts_down() == []
    assert b.host_failed("dead.test", 3, 0.5) == (1, 0.5, True)  # down before: its first failure
    time.sleep(0.55)
    a.host_answered("dead.test")
    assert b.host_failed("dead.test", 3, 0.5) == (1, 0.0, False)  # it answered since
    assert a.clear_down() == 0 and b.failing_hosts() == []  # a new run starts over
    assert a.host_answered("never.test") is None and a.failing_hosts() == []


def test_a_failed_url_is_tried_again_later_by_any_worker_until_its_retries_are_used(make) -> None:
    """``retry_later``: the failed URL stays leased, renewed by nobody, for ``seconds ·
    2^(n−1)`` and keeps the crawl going; then any worker reaps and pops it again; its
    failures are counted with the URL across workers, and past ``retries`` the count
    goes and nothing changes (the caller stores the failure and acks). Only the
    lease's owner may ask; a probe of the URL's host ends with the failure."""
    a = make(owner="w:1:a", probe=True, politeness=Politeness(delay=0.0, per_host=4))
    b = make(owner="w:2:b", probe=True, politeness=Politeness(delay=0.0, per_host=4))
    a.push([entry("http://flaky.test/1", 2.0), entry("http://flaky.test/2", 1.0)], "max")
    assert [e.url for e in a.pop(5)] == ["http://flaky.test/1"]  # the host's probe
    assert b.retry_later("http://flaky.test/1", 2, 0.3) is None  # not b's lease
    assert a.retry_later("http://never.test/", 2, 0.3) is None  # not a frontier URL
    assert a.retry_later("http://flaky.test/1", 2, 0.3) == (1, 0.3)
    assert [e.url for e in b.pop(5)] == ["http://flaky.test/2"]  # the probe ended with it
    assert b.ack(["http://flaky.test/2"]) == 1
    assert a.counts().leased == 1 and a.has_work()  # it waits, and the crawl with it
    assert a.counts().retrying == 1
    assert a.renew(["http://flaky.test/1"]) == 1  # (a stops renewing; a renewal would hold it)
    time.sleep(0.35)
    assert b.reap() == 0  # renewed for lease_seconds: not due yet
    assert a.retry_later("http://flaky.test/1", 2, 0.3) == (2, 0.6)  # doubled
    assert b.reap() == 0 and b.pop(5) == []
    time.sleep(0.65)
    assert b.reap() == 1 and b.counts().retrying == 1  # queued again, still to be tried
    assert [e.url for e in b.pop(5)] == ["http://flaky.test/1"]
    assert a.retry_later("http://flaky.test/1", 2, 0.3) is None  # b's lease now
    assert b.retry_later("http://flaky.test/1", 2, 0.3) == (3, 0.0)  # used up: the failure stands
    assert b.counts().leased == 1 and b.counts().retrying == 0 and b.ack(["http://flaky.test/1"]) == 1
    assert not b.has_work()
    # the count went: a URL revived later (a recrawl) has every retry again
    assert b.revive([entry("http://flaky.test/1")]) == 1
    assert [e.url for e in b.pop(5)] == ["http://flaky.test/1"]
    assert b.retry_later("http://flaky.test/1", 2, 0.3) == (1, 0.3)
    # an ack after a retry that answered forgets the count too
    time.sleep(0.35)
    assert a.reap() == 1 and [e.url for e in a.pop(5)] == ["http://flaky.test/1"]
    assert a.ack(["http://flaky.test/1"]) == 1
    assert a.revive([entry("http://flaky.test/1")]) == 1 and len(a.pop(5)) == 1
    assert a.retry_later("http://flaky.test/1", 0, 0.3) == (1, 0.0)  # no retries at all
    # queued again after a failure, then marked done (its page came under another URL)
    assert a.ack(["http://flaky.test/1"]) == 1
    a.push([entry("http://flaky.test/3")], "max")
    assert [e.url for e in a.pop(5)] == ["http://flaky.test/3"]
    assert a.retry_later("http://flaky.test/3", 2, 0.05) == (1, 0.05)
    time.sleep(0.1)
    assert a.reap() == 1 and a.counts().retrying == 1
    assert a.mark_done([entry("http://flaky.test/3")]) == 1 and a.counts().retrying == 0


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
    dead.push([entry("http://a.test/1", 4.0), entry("http://b.test/1", 3.0),
               entry("http://c.test/1", 2.0), entry("http://c.test/2", 1.0),
               entry("http://f.test/1", 0.5)], "max")
    # all three beat a moment ago: dead was killed right after its last heartbeat
    assert dead.heartbeat() and elsewhere.heartbeat() and live.heartbeat()
    assert [e.url for e in dead.pop(1)] == ["http://a.test/1"]
    assert [e.url for e in live.pop(1)] == ["http://b.test/1"]
    assert [e.url for e in dead.pop(1)] == ["http://c.test/1"]
    assert [e.url for e in elsewhere.pop(1)] == ["http://c.test/2"]
    assert dead.retry_later("http://c.test/1", 2, 60.0) == (1, 60.0)  # waits a minute
    assert dead.counts().leased == 4
    starting = make(owner=f"{here}:{me}:{space}:{started(me)}:new", politeness=polite)
    assert starting.recover() == 2
    assert (starting.counts().queued, starting.counts().leased) == (3, 2)
    assert starting.recover() == 0  # b.test/1 is the live worker's, c.test/2 elsewhere's
    assert [e.url for e in starting.pop(5)] == ["http://a.test/1", "http://c.test/1", "http://f.test/1"]
    assert starting.counts().queued == 0 and starting.counts().leased == 5
    assert starting.retry_later("http://c.test/1", 2, 0.3) == (2, 0.6)  # its first failure kept
    assert live.ack(["http://b.test/1"]) == 1  # the live worker's lease was left to it
    assert elsewhere.ack(["http://c.test/2"]) == 1
    if frontier_url.startswith("sqlite"):
        return
    # Redis: a worker that closed leaves its failed URLs waiting, taken back at the next
    # start; one silent for longer than ALIVE_SECONDS is gone as well.
    closed = make(owner=f"{here}:{me}:closed", politeness=polite)
    silent = make(owner=f"{here}:{me}:silent", politeness=polite)
    closed.push([entry("http://d.test/1", 2.0), entry("http://e.test/1", 1.0)], "max")
    assert closed.heartbeat() and silent.heartbeat()
    assert [e.url for e in closed.pop(1)] == ["http://d.test/1"]
    assert [e.url for e in silent.pop(1)] == ["http://e.test/1"]
    assert closed.retry_later("http://d.test/1", 2, 60.0) == (1, 60.0)
    assert silent.enter_host("e.test", f"{silent.owner}#1", 1, 30.0) == 0  # its download's place
    closed.close()
    r = redis.Redis.from_url(frontier_url)
    r.hset("spitag:c:alive", silent.owner, f"{time.time() - 9:.3f} {silent.machine}")  # 9 s silent
    assert starting.heartbeat() and starting.recover() == 1  # silent is still alive
    r.hset("spitag:c:alive", silent.owner, f"{time.time() - 11:.3f} {silent.machine}")  # 11 s
    assert starting.enter_host("e.test", f"{starting.owner}#1", 1, 30.0) == 1  # first in line
    assert starting.recover() == 1
    assert starting.enter_host("e.test", f"{starting.owner}#1", 1, 30.0) == 0  # the place was freed
    assert {e.url for e in starting.pop(5)} == {"http://d.test/1", "http://e.test/1"}
    r.close()


def test_workers_by_their_heartbeat(make, frontier_url) -> None:
    """``workers``: every owner with a heartbeat, alive when it beat within
    ``ALIVE_SECONDS``; ``others_alive`` counts the live ones but the caller. SQLite
    keeps no heartbeat and cannot tell (None)."""
    one, two = make(), make(machine="box-2")
    if frontier_url.startswith("sqlite"):
        assert one.workers() is None and one.others_alive() is None
        return
    assert one.workers() == [] and one.others_alive() == 0
    assert two.heartbeat() == 1
    assert one.others_alive() == 1 and two.others_alive() == 0  # itself is not counted
    assert one.heartbeat() == 1  # (the only one on its machine)
    assert two.others_alive() == 1
    r = redis.Redis.from_url(frontier_url)
    r.hset("spitag:c:alive", two.owner, f"{time.time() - 11:.3f} {two.machine}")  # silent 11 s
    assert one.others_alive() == 0
    workers = one.workers()
    assert [(w.owner, w.machine, w.alive) for w in workers] == [(one.owner, one.machine, True),
                                                                (two.owner, "box-2", False)]
    assert workers[0].silent_seconds < 2 and 10.5 < workers[1].silent_seconds < 13
    r.close()
    two.heartbeat()
    two.close()  # a worker that closes is gone at once
    assert one.others_alive() == 0


def test_urls_survive_the_round_trip(make) -> None:
    f = make()
    urls = ["https://a.test/", "http://a.test:8080/x?y=1&z=%20", "http://[::1]:9/p", "https://a.test/é"]
    f.push([entry(u) for u in urls], "sum")
    assert sorted(e.url for e in f.pop(10)) == sorted(urls)


def test_mark_done_never_fetches(make) -> None:
    f = make()
    f.push([entry("http://a.test/leased")], "sum")
    assert [e.url for e in f.pop(5)] == ["http://a.test/leased"]
    f.push([entry("http://b.test/queued")], "sum")
    marked = f.mark_done([entry("http://c.test/canonical"), entry("http://b.test/queued"),
                          entry("http://a.test/leased")])
    assert marked == 2  # the unknown and the queued one; the leased one is its worker's
    assert f.pop(5) == []
    assert f.push([entry("http://c.test/canonical", 9.0)], "sum").ignored == 1
    assert f.ack(["http://a.test/leased"]) == 1
    assert f.counts().done == 3 and not f.has_work()


REVISIT = {"etag": '"abc"', "last_modified": "Mon, 30 Nov 2026 10:00:00 GMT", "interval": 86400.0, "md5": "0" * 32}


def revived(url: str, priority: float = 2.0, depth: int = 2, revisit: dict | None = None) -> Entry:
    e = entry(url, priority, depth)
    e.reason = {"recrawl": True, "expired": "2026-11-29T00:00:00.000Z"}
    e.revisit = dict(REVISIT if revisit is None else revisit)
    return e


def test_revive_done_url_is_popped_again_with_its_revisit_data(make) -> None:
    f = make()
    f.push([entry("http://a.test/x", 1.0, depth=1, parent="http://a.test/", parent_score=3.0)], "sum")
    (e,) = f.pop(5)
    assert e.revisit is None
    f.ack([e.url])
    assert f.push([entry("http://a.test/x", 5.0)], "sum").ignored == 1  # done stays done…
    assert f.revive([revived("http://a.test/x", 2.5, depth=4)]) == 1  # …until revived
    assert (f.counts().queued, f.counts().leased, f.counts().done) == (1, 0, 0)
    assert f.has_work()
    (top,) = f.top(5)
    assert (top.url, top.priority, top.depth, top.revisit) == ("http://a.test/x", near(2.5), 4, REVISIT)
    (again,) = f.pop(5)
    assert (again.url, again.priority, again.depth) == ("http://a.test/x", near(2.5), 4)
    assert again.reason == {"recrawl": True, "expired": "2026-11-29T00:00:00.000Z"}
    assert again.revisit == REVISIT
    assert f.ack([again.url]) == 1
    assert (f.counts().queued, f.counts().leased, f.counts().done) == (0, 0, 1)
    assert not f.has_work()


def test_revive_leaves_queued_and_leased_alone_and_inserts_unknown(make) -> None:
    f = make()
    f.push([entry("http://a.test/leased", 1.0), entry("http://b.test/queued", 0.5, depth=3)], "sum")
    (leased,) = [e for e in f.pop(1)]
    assert leased.url == "http://a.test/leased"
    n = f.revive([revived("http://a.test/leased", 9.0), revived("http://b.test/queued", 9.0),
                  revived("http://c.test/new", 0.25, depth=5, revisit={"md5": "f" * 32})])
    assert n == 1  # only the unknown one became queued
    assert (f.counts().queued, f.counts().leased, f.counts().done) == (2, 1, 0)
    tops = {e.url: e for e in f.top(10)}
    assert (tops["http://b.test/queued"].priority, tops["http://b.test/queued"].depth) == (near(0.5), 3)
    assert tops["http://b.test/queued"].revisit is None
    assert (tops["http://c.test/new"].priority, tops["http://c.test/new"].revisit) == (near(0.25), {"md5": "f" * 32})
    assert f.ack(["http://a.test/leased"]) == 1
    popped = {e.url: e for e in f.pop(10)}
    assert set(popped) == {"http://b.test/queued", "http://c.test/new"}
    assert popped["http://b.test/queued"].revisit is None
    assert popped["http://c.test/new"].revisit == {"md5": "f" * 32}
    assert f.ack(list(popped)) == 2
    assert (f.counts().queued, f.counts().leased, f.counts().done) == (0, 0, 3)


def test_push_after_revive_combines_as_usual(make) -> None:
    f = make()
    f.push([entry("http://a.test/x", 1.0), entry("http://a.test/y", 1.0)], "sum")
    f.ack([e.url for e in f.pop(5)])
    assert f.revive([revived("http://a.test/x", 1.5), revived("http://a.test/y", 1.5)]) == 2
    assert f.push([entry("http://a.test/x", 0.5)], "sum").raised == 1
    assert f.push([entry("http://a.test/y", 1.0)], "max").raised == 0
    assert f.push([entry("http://a.test/y", 4.0)], "max").raised == 1
    assert {e.url: e.priority for e in f.top(5)} == near({"http://a.test/x": 2.0, "http://a.test/y": 4.0})
    popped = f.pop(5)
    assert [e.url for e in popped] == ["http://a.test/y", "http://a.test/x"]
    assert all(e.revisit == REVISIT for e in popped)
    assert f.counts().queued == 0 and f.counts().leased == 2


def test_revived_acked_then_revived_again(make) -> None:
    f = make()
    f.push([entry("http://a.test/x", 1.0)], "sum")
    f.ack([e.url for e in f.pop(5)])
    for round_ in range(3):
        data = {"etag": f'"v{round_}"'}
        assert f.revive([revived("http://a.test/x", 1.0 + round_, revisit=data)]) == 1
        assert f.revive([revived("http://a.test/x", 7.0)]) == 0  # already queued
        (e,) = f.pop(5)
        assert (e.priority, e.revisit) == (near(1.0 + round_), data)
        assert f.revive([revived("http://a.test/x", 7.0)]) == 0  # leased
        assert f.release([e.url]) == 1  # handed back: still revived, data kept
        (e,) = f.pop(5)
        assert e.revisit == data
        assert f.ack([e.url]) == 1
        assert (f.counts().queued, f.counts().leased, f.counts().done) == (0, 0, 1)
    assert f.push([entry("http://a.test/x", 3.0)], "sum").ignored == 1


def test_revive_mark_done_and_hosts_stay_exact(make) -> None:
    f = make()
    f.push([entry(f"http://a.test/{i}") for i in range(4)], "sum")
    f.ack([e.url for e in f.pop(10)])
    assert f.revive([revived(f"http://a.test/{i}") for i in range(3)]) == 3
    assert f.mark_done([entry("http://a.test/0")]) == 1  # a queued revived URL → done, not fetched
    hosts = {h.host: h for h in f.hosts()}
    assert (hosts["a.test"].queued, hosts["a.test"].leased, hosts["a.test"].done) == (2, 0, 2)
    assert (f.counts().queued, f.counts().done) == (2, 2)
    assert sorted(e.url for e in f.pop(10)) == ["http://a.test/1", "http://a.test/2"]
    assert f.revive([]) == 0


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
        assert f.push(batch, "max").new == len(batch)
    assert f.push([entry(urls[5], 0.0)], "max").raised == 0
    assert f.counts().queued == len(urls)
    assert sorted(e.url for e in f.top(5)) == sorted(sorted(expected, key=lambda u: -expected[u][0])[:5])
    hosts = {h.host: h for h in f.hosts()}
    assert (hosts["big.test"].queued, hosts["small.test"].queued) == (3000, 30)
    seen: dict[str, list[float]] = {}
    done = 0
    while True:
        popped = f.pop(100)
        if not popped:
            break
        for e in popped:
            assert (e.priority, e.reason) == (near(expected[e.url][0]), expected[e.url][1])
            seen.setdefault(e.host, []).append(e.priority)
        for prios in seen.values():  # one pop: each host's URLs best first
            assert prios == sorted(prios, reverse=True)
        seen.clear()
        keep = popped[: len(popped) // 2]
        f.ack([e.url for e in keep])
        done += len(keep)
        f.mark_done([entry(e.url) for e in popped[len(popped) // 2 :]])  # leased: stays
        f.release([e.url for e in popped[len(popped) // 2 :]])
        if done > 2000:
            break
    counts = f.counts()
    assert (counts.queued + counts.leased, counts.done) == (len(urls) - done, done)
    assert f.mark_done([entry(u) for u in urls]) == len(urls) - done
    assert f.counts().done == len(urls) and f.counts().queued == 0 and not f.has_work()
    assert f.revive([entry(u, 1.0) for u in urls[:100]]) == 100
    assert f.counts().done == len(urls) - 100 and f.counts().queued == 100
    assert len({e.url for e in f.pop(200)} - set(urls[:100])) == 0


def test_redis_layout_stays_compact_and_refuses_an_old_crawl(redis_url: str) -> None:
    """Redis only: every bucket in its listpack encoding on a default server, parents
    and side data gone once their URLs are done, an earlier layout refused."""
    import redis as redis_client

    from spitag.errors import BadInputError

    client = redis_client.Redis.from_url(redis_url)
    f = open_frontier(redis_url, "lay", strategy="spitag", politeness=Politeness(delay=0.0, per_host=100))
    batch = [Entry(f"https://big.test/p/{i}", "big.test", 2, 0.5,
                   {"strategy": "spitag", "parent": f"https://big.test/p/{i // 20}", "parent_score": 3.0})
             for i in range(5000)]
    f.push(batch, "sum")
    f.revive([Entry("https://big.test/r", "big.test", 1, 0.1, {"recrawl": True}, {"etag": "e"})])
    encodings = {}
    for key in client.scan_iter("spitag:lay:*"):
        kind = key.decode().split(":")[2]
        if kind in ("h", "q", "p"):
            encodings.setdefault(kind, set()).add(client.object("encoding", key).decode())
    assert encodings == {"h": {"listpack"}, "q": {"listpack"}, "p": {"listpack"}}
    assert len(list(client.scan_iter("spitag:lay:h:big.test:*"))) > 40  # split many times
    while popped := f.pop(100):
        f.ack([e.url for e in popped])
    assert f.counts().done == 5001
    assert not list(client.scan_iter("spitag:lay:p:*")) and not list(client.scan_iter("spitag:lay:x:*"))
    assert not list(client.scan_iter("spitag:lay:q:*"))
    f.close()
    client.delete("spitag:old:cfg")
    client.hset("spitag:old:cfg", "prior", "0.0")  # what the layout-1 code wrote
    with pytest.raises(BadInputError, match="layout 1"):
        open_frontier(redis_url, "old")
    client.delete("spitag:old2:cfg")
    client.hset("spitag:old2:cfg", mapping={"layout": "2", "prior": "0.0"})  # priorities as doubles
    with pytest.raises(BadInputError, match="layout 2"):
        open_frontier(redis_url, "old2")
    client.close()


def test_redis_keeps_priorities_as_integers(redis_url: str) -> None:
    """Redis only: every queued priority is an integer code (a listpack keeps it in a few
    bytes, a double in 17 digits), sums and leases included, and the codes decode back."""
    import redis as redis_client

    from spitag.frontier.redis import PRIORITY_ZERO, decode_priority

    client = redis_client.Redis.from_url(redis_url)
    f = open_frontier(redis_url, "ints", politeness=Politeness(delay=0.0, per_host=100))
    f.push([entry(f"http://a.test/{i}", p) for i, p in enumerate(PRIORITIES)], "sum")
    f.push([entry(f"http://a.test/{i}", 0.1) for i in range(len(PRIORITIES))], "sum")
    f.push([entry(f"https://b.test/p/{i}", 1 / (i + 3)) for i in range(400)], "max")  # buckets split
    scores = [s for key in client.scan_iter("spitag:ints:q*") for _, s in client.zrange(key, 0, -1, withscores=True)]
    assert len(scores) > 400 and all(s.is_integer() for s in scores)
    assert len(list(client.scan_iter("spitag:ints:qt:*"))) == 1
    popped = f.pop(3)
    leases = [v.rsplit(b"|", 1)[1] for v in client.hvals("spitag:ints:lo")]
    assert sorted(decode_priority(v) for v in leases) == sorted(e.priority for e in popped)
    assert popped[0].priority == pytest.approx(1e300, rel=2e-6)
    assert decode_priority(str(2**40)) == sys.float_info.max  # past the largest double: no overflow
    assert decode_priority(str(PRIORITY_ZERO)) == 0.0
    f.close()
    client.close()


def test_an_earlier_sqlite_frontier_gains_the_link_evidence_columns(tmp_path) -> None:
    import sqlite3

    path = tmp_path / "old.db"
    with sqlite3.connect(path) as conn:  # frontier_host as SpiTag wrote it before link evidence
        conn.execute(
            "CREATE TABLE frontier_host (crawl TEXT NOT NULL, host TEXT NOT NULL, best REAL, rank REAL,"
            " next_allowed REAL NOT NULL DEFAULT 0, delay REAL, score_sum REAL NOT NULL DEFAULT 0,"
            " pages INTEGER NOT NULL DEFAULT 0, hard_next REAL NOT NULL DEFAULT 0, PRIMARY KEY (crawl, host))"
        )
        conn.execute("INSERT INTO frontier_host (crawl, host, score_sum, pages) VALUES ('c', 'a.test', 9.0, 3)")
    conn.close()
    f = open_frontier(f"sqlite:///{path}", "c", None)
    try:
        f.learn([], [("x.test", 1.0, 1, 1 << 63)])
        _, (batch,) = f.learnt(None)
        assert batch.pages == [("a.test", 9.0, 3)] and batch.links == [("x.test", 1.0, 1, 1 << 63)]
        f.push([Entry("http://y.test/1", "y.test", 1, 5.0, None)], "max")
        assert f.rescore([("y.test", 2.0)]) == 1  # and the estimate column
    finally:
        f.close()
    f = open_frontier(f"sqlite:///{path}", "c", None, probe=True)
    try:  # and the probing column
        assert [e.url for e in f.pop(5)] == ["http://y.test/1"]
        assert f.pop(5) == [] and f.ack(["http://y.test/1"]) == 1
    finally:
        f.close()
