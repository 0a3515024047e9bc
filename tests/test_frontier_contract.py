"""The frontier contract (spitag.frontier.base): one suite, run against every backend."""

from __future__ import annotations

import time

import pytest

from spitag.frontier import Entry, Politeness, open_frontier


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
    assert [e.priority for e in f.top(2)] == [1.0, 0.9]
    f.push([entry("http://a.test/y", 0.1)], "max")  # lower: no change with max
    f.push([entry("http://a.test/x", 5.0)], "max")
    assert {e.url: e.priority for e in f.top(2)} == {"http://a.test/x": 5.0, "http://a.test/y": 0.9}


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


def test_crawls_are_separate(make) -> None:
    a, b = make("crawl-a"), make("crawl-b")
    a.push([entry("http://a.test/x")], "sum")
    assert b.pop(5) == [] and not b.has_work()
    assert len(a.pop(5)) == 1


def test_entries_keep_depth_and_reason(make) -> None:
    f = make()
    f.push([entry("http://a.test/x", 0.7, depth=3, parent="http://a.test/", parent_score=4.0)], "sum")
    (e,) = f.pop(1)
    assert (e.depth, e.priority, e.reason) == (3, 0.7, {"parent": "http://a.test/", "parent_score": 4.0})


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
