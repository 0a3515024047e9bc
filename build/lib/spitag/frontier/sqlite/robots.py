"""The robots.txt cache (``spitag.frontier.robots``) in SQLite."""

from __future__ import annotations

import sqlite3
import time

from spitag.frontier.robots import RobotsCache
from spitag.frontier.sqlite.db import SQLiteDB


class SQLiteRobots(RobotsCache):
    def __init__(self, db: SQLiteDB) -> None:
        self.db = db

    def get(self, netloc: str) -> bytes | None:
        row = self.db.conn.execute(
            "SELECT blob FROM frontier_robots WHERE crawl = ? AND netloc = ? AND until > ?",
            (self.db.crawl, netloc, time.time()),
        ).fetchone()
        return None if row is None else bytes(row[0])

    def keep(self, netloc: str, blob: bytes, ttl: float) -> None:
        with self.db.tx():
            self.db.conn.execute(
                "INSERT INTO frontier_robots (crawl, netloc, blob, until) VALUES (?, ?, ?, ?)"
                " ON CONFLICT (crawl, netloc) DO UPDATE SET blob = excluded.blob, until = excluded.until",
                (self.db.crawl, netloc, sqlite3.Binary(blob), time.time() + ttl),
            )
