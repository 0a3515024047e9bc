"""What the strategy learns (spitag.frontier.learning): one suite, every backend."""

from __future__ import annotations


import redis

from spitag.ranking import HostRanking


def test_learnt_gives_the_totals_then_what_other_owners_learn(make, frontier_url) -> None:
    """A resumed strategy starts from every host's totals, pages and link evidence; a
    worker's strategy then hears of the other workers' pages and links, batch by batch,
    not of its own (it saw those first hand)."""
    high = 1 << 63  # masks keep all 64 bits, whichever backend
    me = make(owner="w1", ranking=HostRanking("posterior"))
    me.learning.learn([("a.test", 2.0), ("a.test", 4.0), ("b.test", 1.5)], [("x.test", 1.0, 1, 4 | high)])
    me.learning.learn([], [("x.test", 0.5, 2, 3), ("y.test", 2.0, 1, 1), ("bad.test", -1.0, 1, 1), ("z.test", 1.0, 0, 1)])
    cursor, batches = me.learning.learnt(None)
    assert len(batches) == 1
    assert sorted(batches[0].pages) == [("a.test", 6.0, 2), ("b.test", 1.5, 1)]
    assert sorted(batches[0].links) == [("x.test", 1.5, 3, 7 | high), ("y.test", 2.0, 1, 1)]
    me.learning.learn([("a.test", 10.0)], [("y.test", 0.5, 2, 3)])  # mine: not fed back
    cursor, batches = me.learning.learnt(cursor)
    assert batches == []
    if frontier_url.startswith("sqlite"):
        return  # one owner per SQLite frontier: there are no other workers
    other = make(owner="w2", ranking=HostRanking("posterior"))
    other.learning.learn([("c.test", 7.0), ("c.test", 1.0), ("a.test", 0.5)])
    other.learning.learn([], [("z.test", 2.5, 3, 6)])  # links alone: found, no page learnt
    other.learning.learn([("c.test", 2.0)], [("z.test", 1.0, 1, 8 | high)])
    cursor, batches = me.learning.learnt(cursor)
    assert [(sorted(b.pages), b.links) for b in batches] == [
        ([("a.test", 0.5, 1), ("c.test", 8.0, 2)], []),
        ([], [("z.test", 2.5, 3, 6)]),
        ([("c.test", 2.0, 1)], [("z.test", 1.0, 1, 8 | high)]),
    ]
    assert me.learning.learnt(cursor)[1] == []  # read once
    r = redis.Redis.from_url(frontier_url)
    r.xadd("spitag:c:learnt", {"o": "w3", "d": "not json"})  # written by something else: skipped
    other.learning.learn([("c.test", 1.0)])
    cursor, batches = me.learning.learnt(cursor)
    assert [b.pages for b in batches] == [[("c.test", 1.0, 1)]]
    _, (batch,) = other.learning.learnt(None)  # a new worker starts from everyone's totals
    assert sorted(batch.pages) == [("a.test", 16.5, 4), ("b.test", 1.5, 1), ("c.test", 11.0, 4)]
    assert sorted(batch.links) == [("x.test", 1.5, 3, 7 | high), ("y.test", 2.5, 3, 3), ("z.test", 3.5, 4, 14 | high)]
