"""The crawl's registry (``spitag.frontier.registry``) in Redis: heartbeats in ``alive``."""

from __future__ import annotations

import time
from typing import Any

from spitag.frontier.records import Worker
from spitag.frontier.redis.db import ALIVE_SECONDS, RedisDB, transient
from spitag.frontier.registry import CrawlRegistry


class RedisRegistry(CrawlRegistry):
    def __init__(self, db: RedisDB) -> None:
        self.db = db
        self.owner = db.owner
        self.prefix = db.prefix

    @transient
    def heartbeat(self) -> int:
        """Owners that beat within ``ALIVE_SECONDS`` on this owner's machine."""
        return int(self.db.run("heartbeat", self.owner, self.db.machine, ALIVE_SECONDS))

    @transient
    def workers(self) -> list[Worker]:
        """The owners in ``alive`` (silent for an hour at most), longest silent last;
        alive: a heartbeat within ``ALIVE_SECONDS``."""
        flat = [x.decode() for x in self.db.run("workers")]
        found = [
            Worker(flat[i], flat[i + 2], max(float(flat[i + 1]), 0.0), float(flat[i + 1]) <= ALIVE_SECONDS)
            for i in range(0, len(flat), 3)
        ]
        return sorted(found, key=lambda w: (w.silent_seconds, w.owner))

    @transient
    def record_setup(self, setup: dict[str, str]) -> dict[str, str]:
        pipe = self.db.redis.pipeline(transaction=True)
        pipe.hgetall(self.prefix + "setup")
        if setup:
            pipe.hset(self.prefix + "setup", mapping=setup)
        before = pipe.execute()[0]
        return {k.decode(): v.decode() for k, v in before.items()}

    @transient
    def request_stop(self) -> None:
        self.db.redis.set(self.prefix + "stop", time.time())

    @transient
    def stop_requested(self) -> bool:
        return bool(self.db.redis.exists(self.prefix + "stop"))

    @transient
    def clear_stop(self) -> None:
        self.db.redis.delete(self.prefix + "stop")

    @transient
    def take_start_urls(self, key: str, limit: int = 100) -> list[str]:
        """Pop seeds a user pushed to the scrapy-redis start-URLs list (``LPUSH key URL``)."""
        raw = self.db.redis.lpop(key, limit) or []
        return [r.decode("utf-8", "replace") for r in raw]

    @transient
    def forget(self) -> None:
        """Unlink every key under the crawl's prefix, but those of crawls whose own
        prefix starts with it (a crawl named ``<this>:<more>``)."""
        others = [f"spitag:{name}:" for name in crawl_names_of(self.db.redis) if name != self.db.crawl]
        nested = [o for o in others if o.startswith(self.prefix)]
        batch: list[bytes] = []
        for key in self.db.redis.scan_iter(match=glob_escape(self.prefix) + "*", count=1000):
            if not any(key.decode("utf-8", "replace").startswith(o) for o in nested):
                batch.append(key)
            if len(batch) >= 1000:
                self.db.redis.unlink(*batch)
                batch = []
        if batch:
            self.db.redis.unlink(*batch)


def crawl_names_of(client: Any) -> list[str]:
    """The crawls a Redis holds: each has its ``spitag:<crawl>:cfg`` key."""
    names = set()
    for key in client.scan_iter(match="spitag:*:cfg", count=1000):
        text = key.decode("utf-8", "replace")
        names.add(text[len("spitag:"):-len(":cfg")])
    return sorted(names)


def glob_escape(text: str) -> str:
    """``text`` as a literal in a Redis MATCH pattern."""
    return "".join("\\" + c if c in "*?[]\\" else c for c in text)
