"""The crawl's registry (``spitag.frontier.registry``) in SQLite: one worker, no heartbeat."""

from __future__ import annotations

import time

from spitag.frontier.registry import CrawlRegistry
from spitag.frontier.sqlite.db import TABLES, SQLiteDB


class SQLiteRegistry(CrawlRegistry):
    def __init__(self, db: SQLiteDB) -> None:
        self.db = db
        self.owner = db.owner

    def record_setup(self, setup: dict[str, str]) -> dict[str, str]:
        with self.db.tx():
            before = dict(self.db.conn.execute(
                "SELECT name, value FROM frontier_setup WHERE crawl = ?", (self.db.crawl,)).fetchall())
            self.db.conn.executemany(
                "INSERT INTO frontier_setup (crawl, name, value) VALUES (?, ?, ?)"
                " ON CONFLICT (crawl, name) DO UPDATE SET value = excluded.value",
                [(self.db.crawl, name, value) for name, value in setup.items()],
            )
        return before

    def request_stop(self) -> None:
        self.db.conn.execute(
            "INSERT INTO frontier_control (crawl, stop) VALUES (?, ?)"
            " ON CONFLICT (crawl) DO UPDATE SET stop = excluded.stop",
            (self.db.crawl, time.time()),
        )

    def stop_requested(self) -> bool:
        row = self.db.conn.execute("SELECT stop FROM frontier_control WHERE crawl = ?", (self.db.crawl,)).fetchone()
        return row is not None and row[0] is not None

    def clear_stop(self) -> None:
        self.db.conn.execute("DELETE FROM frontier_control WHERE crawl = ?", (self.db.crawl,))

    def forget(self) -> None:
        with self.db.tx():
            for table in TABLES:
                self.db.conn.execute(f"DELETE FROM {table} WHERE crawl = ?", (self.db.crawl,))
