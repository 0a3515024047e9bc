"""How each backend keeps a crawl: Redis' compact layout, and files and keys an earlier
SpiTag wrote."""

from __future__ import annotations

import sys

import pytest

from spitag.frontier import Entry, Politeness, open_frontier
from tests.frontier.conftest import entry
from tests.frontier.test_queue import PRIORITIES


def test_redis_layout_stays_compact_and_refuses_an_old_crawl(redis_url: str) -> None:
    """Redis only: every bucket in its listpack encoding on a default server, parents
    and side data gone once their URLs are done, an earlier layout refused."""
    import redis as redis_client

    from spitag.errors import BadInputError

    client = redis_client.Redis.from_url(redis_url)
    f = open_frontier(redis_url, "lay", politeness=Politeness(delay=0.0, per_host=100))
    batch = [Entry(f"https://big.test/p/{i}", "big.test", 2, 0.5, f"https://big.test/p/{i // 20}", 3.0)
             for i in range(5000)]
    f.queue.push(batch, "sum")
    f.queue.revive([Entry("https://big.test/r", "big.test", 1, 0.1, note={"recrawl": True}, revisit={"etag": "e"})])
    encodings = {}
    for key in client.scan_iter("spitag:lay:*"):
        kind = key.decode().split(":")[2]
        if kind in ("h", "q", "p"):
            encodings.setdefault(kind, set()).add(client.object("encoding", key).decode())
    assert encodings == {"h": {"listpack"}, "q": {"listpack"}, "p": {"listpack"}}
    assert len(list(client.scan_iter("spitag:lay:h:big.test:*"))) > 40  # split many times
    while popped := f.queue.pop(100):
        f.queue.ack([e.url for e in popped])
    assert f.queue.counts().done == 5001
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

    from spitag.frontier.redis.db import PRIORITY_ZERO, decode_priority

    client = redis_client.Redis.from_url(redis_url)
    f = open_frontier(redis_url, "ints", politeness=Politeness(delay=0.0, per_host=100))
    f.queue.push([entry(f"http://a.test/{i}", p) for i, p in enumerate(PRIORITIES)], "sum")
    f.queue.push([entry(f"http://a.test/{i}", 0.1) for i in range(len(PRIORITIES))], "sum")
    f.queue.push([entry(f"https://b.test/p/{i}", 1 / (i + 3)) for i in range(400)], "max")  # buckets split
    scores = [s for key in client.scan_iter("spitag:ints:q*") for _, s in client.zrange(key, 0, -1, withscores=True)]
    assert len(scores) > 400 and all(s.is_integer() for s in scores)
    assert len(list(client.scan_iter("spitag:ints:qt:*"))) == 1
    popped = f.queue.pop(3)
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
        f.learning.learn([], [("x.test", 1.0, 1, 1 << 63)])
        _, (batch,) = f.learning.learnt(None)
        assert batch.pages == [("a.test", 9.0, 3)] and batch.links == [("x.test", 1.0, 1, 1 << 63)]
        f.queue.push([Entry("http://y.test/1", "y.test", 1, 5.0)], "max")
        assert f.learning.rescore([("y.test", 2.0)]) == 1  # and the estimate column
    finally:
        f.close()
    f = open_frontier(f"sqlite:///{path}", "c", None)
    try:  # and the down_until column
        assert [e.url for e in f.queue.pop(5)] == ["http://y.test/1"]
        f.gate.set_down("y.test", 60.0)
        assert f.queue.ack(["http://y.test/1"]) == 1 and [h for h, *_ in f.gate.down()] == ["y.test"]
    finally:
        f.close()
