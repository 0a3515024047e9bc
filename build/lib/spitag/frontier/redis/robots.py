"""The robots.txt cache (``spitag.frontier.robots``) in Redis: ``rb:<host[:port]>``
strings that expire with their time to live."""

from __future__ import annotations

from spitag.frontier.redis.db import RedisDB, transient
from spitag.frontier.robots import RobotsCache


class RedisRobots(RobotsCache):
    def __init__(self, db: RedisDB) -> None:
        self.db = db

    @transient
    def get(self, netloc: str) -> bytes | None:
        return self.db.redis.get(f"{self.db.prefix}rb:{netloc}")

    @transient
    def keep(self, netloc: str, blob: bytes, ttl: float) -> None:
        self.db.redis.set(f"{self.db.prefix}rb:{netloc}", blob, px=max(int(ttl * 1000), 1))
