"""The shared frontier: one Redis, many workers, one crawl (key layout: ``redis/db.py``;
each operation a Lua script of ``lua/``)."""

from __future__ import annotations

from typing import Any

from spitag.frontier import Frontier
from spitag.frontier.redis.db import RedisDB
from spitag.frontier.redis.gate import RedisGate
from spitag.frontier.redis.learning import RedisLearning
from spitag.frontier.redis.queue import RedisQueue
from spitag.frontier.redis.registry import RedisRegistry
from spitag.frontier.redis.robots import RedisRobots


def open_redis(url: str, crawl: str, owner: str, **options: Any) -> Frontier:
    db = RedisDB(url, crawl, owner, **options)
    return Frontier(url, crawl, owner, RedisQueue(db), RedisGate(db), RedisRobots(db), RedisRegistry(db),
                    RedisLearning(db), db.close)
