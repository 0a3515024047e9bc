"""A crawl begun by an earlier SpiTag goes on with this one.

``tests/data/upgrade/`` holds a crawl as SpiTag wrote it before its frontier was split
into contracts (commit 6d04bad): a crawl named ``old`` of ``tree_site(40, fanout=4)``
at ``old.test``, stopped after 12 pages (``CLOSESPIDER_PAGECOUNT``), once on a SQLite
frontier and once on Redis; the SQLite files as SQL text, the Redis keys as JSON.
Their queued URLs carry reasons that name the strategy, Redis' ``cfg`` has no ranking
weights yet, and its learnt feed is the old one. Resumed here, the crawl fetches the 28
pages left, each once, and none of the 12 done before.
"""

from __future__ import annotations

import base64
import json
import sqlite3
from pathlib import Path
from typing import Any

import redis

from testbed.sites import tree_paths, tree_site
from testbed.webserver import WebServer
from tests.support.crawl import requested_urls, run_crawl

DATA = Path(__file__).parent / "data" / "upgrade"
PAGES = 40
DONE_BEFORE = 12


def restore_sqlite(dump: str, path: Path) -> Path:
    with sqlite3.connect(path) as conn:
        conn.executescript((DATA / dump).read_text())
    conn.close()
    return path


def decoded(value: Any) -> Any:
    return base64.b64decode(value["b64"]) if isinstance(value, dict) else value


def restore_redis(url: str) -> None:
    client = redis.Redis.from_url(url)
    for record in json.loads((DATA / "frontier-redis.json").read_text()):
        key, kind, value = decoded(record["key"]), record["type"], record["value"]
        if kind == "hash":
            client.hset(key, mapping={decoded(k): decoded(v) for k, v in value})
        elif kind == "zset":
            client.zadd(key, {decoded(m): s for m, s in value})
        elif kind == "string":
            client.set(key, decoded(value))
        elif kind == "stream":
            for entry_id, fields in value:
                client.xadd(key, {decoded(k): decoded(v) for k, v in fields}, id=entry_id)
        else:
            raise AssertionError(f"no restore for a Redis {kind}")
        if record["ttl_ms"] > 0:
            client.pexpire(key, record["ttl_ms"])
    client.close()


def stored_urls(store: Path) -> set[str]:
    with sqlite3.connect(store) as conn:
        return {url for (url,) in conn.execute("SELECT url FROM url")}


def resumes(tmp: Path, store: Path, **settings: str) -> None:
    done_before = stored_urls(store)
    assert len(done_before) == DONE_BEFORE
    with WebServer() as server:
        server.add_site("old.test", tree_site(PAGES, fanout=4))
        run = run_crawl(server, tmp, "http://old.test/", crawl="old", store=store, name="old",
                        settings={"SPITAG_EXTRACT_PROCESSES": 0, **settings})
    assert run.returncode == 0, run.describe()
    fetched = requested_urls(run.server_log)
    assert len(fetched) == len(set(fetched)), "a page fetched twice"
    assert not set(fetched) & done_before, "a page done before was fetched again"
    assert {u.removeprefix("http://old.test") for u in stored_urls(store)} == tree_paths(PAGES)
    assert len(fetched) == PAGES - DONE_BEFORE
    # the URLs queued before keep the reason they were queued with, named for this crawl
    reasons = {i["url"]: i["reason"] for i in run.items}
    assert len(reasons) == PAGES - DONE_BEFORE
    assert all(r["strategy"] == "spitag" and r["parent"].startswith("http://old.test/") for r in reasons.values())


def test_a_sqlite_frontier_written_before_resumes(tmp_path: Path) -> None:
    restore_sqlite("frontier.sql", tmp_path / "old-frontier.db")  # run_crawl's frontier file
    resumes(tmp_path, restore_sqlite("store-sqlite.sql", tmp_path / "store.db"))


def test_a_redis_frontier_written_before_resumes(tmp_path: Path, redis_url: str) -> None:
    restore_redis(redis_url)
    resumes(tmp_path, restore_sqlite("store-redis.sql", tmp_path / "store.db"), SPITAG_FRONTIER=redis_url)
