"""The crawl registry (spitag.frontier.registry): one suite, every backend."""

from __future__ import annotations

import time

import redis

from tests.frontier.conftest import entry


def test_heartbeat_counts_the_live_workers_on_this_machine(make, frontier_url) -> None:
    """Workers of one crawl on one machine share its CPUs: each learns how many they are."""
    a = make(owner="box1:101:aaaa")
    if frontier_url.startswith("sqlite"):
        assert a.registry.heartbeat() == 1  # one owner per SQLite frontier
        return
    b = make(owner="box1:102:bbbb")
    elsewhere = make(owner="box2:101:cccc")
    other_crawl = make("another", owner="box1:103:dddd")
    assert a.registry.heartbeat() == 1  # the others have not said a word yet
    assert b.registry.heartbeat() == 2 and elsewhere.registry.heartbeat() == 1 and other_crawl.registry.heartbeat() == 1
    assert a.registry.heartbeat() == 2
    b.close()  # a closing worker removes itself
    assert a.registry.heartbeat() == 1
    odd = make(owner="w1")  # not host:pid:random: a machine of its own
    assert odd.registry.heartbeat() == 1 and a.registry.heartbeat() == 1
    r = redis.Redis.from_url(frontier_url)
    r.hset("spitag:c:alive", "box1:104:eeee", "1.000 box1")  # silent for ages: dropped
    assert a.registry.heartbeat() == 1 and not r.hexists("spitag:c:alive", "box1:104:eeee")
    # Named machines (spitag.machine): two containers of one kernel, host names apart.
    c1 = make(owner="container1:7:ffff", machine="boot:k1")
    c2 = make(owner="container2:7:gggg", machine="boot:k1")
    assert c1.registry.heartbeat() == 1 and c2.registry.heartbeat() == 2 and c1.registry.heartbeat() == 2
    assert a.registry.heartbeat() == 1  # box1 is another machine


def test_setup_is_the_last_workers_and_each_sees_the_one_before(make) -> None:
    a, b = make(owner="a"), make(owner="b")
    assert a.registry.record_setup({"strategy": "spitag", "seeds": "d1"}) == {}
    assert b.registry.record_setup({"strategy": "bfs", "seeds": "d1"}) == {"strategy": "spitag", "seeds": "d1"}
    assert a.registry.record_setup({"strategy": "bfs"}) == {"strategy": "bfs", "seeds": "d1"}
    assert make(crawl="other").registry.record_setup({}) == {}  # each crawl its own


def test_stop_request_is_seen_by_every_worker(make) -> None:
    a, b = make(owner="w:1:a"), make(owner="w:2:b")
    assert not b.registry.stop_requested()
    a.registry.request_stop()
    assert b.registry.stop_requested()
    b.registry.clear_stop()
    assert not a.registry.stop_requested()


def test_workers_by_their_heartbeat(make, frontier_url) -> None:
    """``workers``: every owner with a heartbeat, alive when it beat within
    ``ALIVE_SECONDS``; ``others_alive`` counts the live ones but the caller. SQLite
    keeps no heartbeat and cannot tell (None)."""
    one, two = make(), make(machine="box-2")
    if frontier_url.startswith("sqlite"):
        assert one.registry.workers() is None and one.registry.others_alive() is None
        return
    assert one.registry.workers() == [] and one.registry.others_alive() == 0
    assert two.registry.heartbeat() == 1
    assert one.registry.others_alive() == 1 and two.registry.others_alive() == 0  # itself is not counted
    assert one.registry.heartbeat() == 1  # (the only one on its machine)
    assert two.registry.others_alive() == 1
    r = redis.Redis.from_url(frontier_url)
    r.hset("spitag:c:alive", two.owner, f"{time.time() - 11:.3f} {two.registry.db.machine}")  # silent 11 s
    assert one.registry.others_alive() == 0
    workers = one.registry.workers()
    assert [(w.owner, w.machine, w.alive) for w in workers] == [(one.owner, one.registry.db.machine, True),
                                                                (two.owner, "box-2", False)]
    assert workers[0].silent_seconds < 2 and 10.5 < workers[1].silent_seconds < 13
    r.close()
    two.registry.heartbeat()
    two.close()  # a worker that closes is gone at once
    assert one.registry.others_alive() == 0


def test_forget_deletes_one_crawl_and_leaves_the_others(make, frontier_url) -> None:
    """``forget`` (scrapy forget): the crawl's URLs, hosts, robots.txt, learning and setup
    go; another crawl, even one whose name starts with this one's and a colon (its Redis
    keys share the prefix), keeps everything. ``crawl_names`` lists what is left."""
    from spitag.frontier import crawl_names

    crawls = {name: make(name, owner=f"box1:{i}:aaaa") for i, name in enumerate(["c", "c:more", "d*"])}
    for name, f in crawls.items():
        f.queue.push([entry("http://a.test/1"), entry("http://b.test/2")], "max")
        f.queue.ack([e.url for e in f.queue.pop(1)])
        f.registry.record_setup({"strategy": "bfs", "last_run": "2026-12-06T00:00:00Z"})
        f.robots.keep("a.test", b"User-agent: *\nDisallow: /x", 3600)
        f.learning.learn([("a.test", 2.0)])
    assert crawl_names(frontier_url) == sorted(crawls)
    crawls["c"].registry.forget()
    again = make("c", owner="box1:9:bbbb")  # what a new run of crawl c finds: nothing
    assert again.queue.counts() == type(again.queue.counts())(0, 0, 0)
    assert again.registry.setup() == {} and again.robots.get("a.test") is None
    assert [batch.pages for batch in again.learning.learnt(None)[1]] in ([], [[]])
    assert again.queue.push([entry("http://a.test/1")], "max").new == 1  # its done URL is new again
    for name in ("c:more", "d*"):
        kept = crawls[name]
        counts = kept.queue.counts()
        assert (counts.queued, counts.done) == (1, 1), name
        assert kept.registry.setup()["strategy"] == "bfs" and kept.robots.get("a.test") is not None, name
        assert [host for batch in kept.learning.learnt(None)[1] for host, _, _ in batch.pages] == ["a.test"], name
    assert crawl_names(frontier_url) == sorted(crawls)  # c is back: the new run opened it
