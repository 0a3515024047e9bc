"""The per-host gate (``spitag.frontier.gate``) in SQLite: one worker owns the frontier,
so its failures and back-offs in a row are counted in the process."""

from __future__ import annotations

import time

from spitag.frontier.gate import HostGate
from spitag.frontier.records import DONE, BackOffs, FailureCounts, HostFailure
from spitag.frontier.sqlite.db import SQLiteDB


class SQLiteGate(HostGate):
    def __init__(self, db: SQLiteDB) -> None:
        self.db = db
        self.conn = db.conn
        self.crawl = db.crawl
        self.back_offs = BackOffs()

    def acquire(self, host: str, delay: float) -> float:
        now = time.time()
        with self.db.tx():
            row = self.conn.execute(
                "SELECT hard_next FROM frontier_host WHERE crawl = ? AND host = ?", (self.crawl, host)
            ).fetchone()
            if row is not None and row[0] > now:
                return row[0] - now
            self.db.upsert_host("host, hard_next", (host, now + delay), "hard_next = excluded.hard_next")
        return 0.0

    def set_delay(self, host: str, delay: float) -> None:
        with self.db.tx():
            self.db.upsert_host("host, delay", (host, delay), "delay = excluded.delay")

    def delays(self) -> dict[str, float]:
        return dict(self.conn.execute(
            "SELECT host, delay FROM frontier_host WHERE crawl = ? AND delay IS NOT NULL", (self.crawl,)
        ).fetchall())

    def pause(self, host: str, seconds: float) -> None:
        until = time.time() + seconds
        with self.db.tx():
            self.db.upsert_host(
                "host, next_allowed, hard_next", (host, until, until),
                "next_allowed = MAX(next_allowed, excluded.next_allowed), hard_next = MAX(hard_next, excluded.hard_next)",
            )

    def back_off(self, host: str, sent_ago: float, base: float, cap: float) -> float:
        seconds = self.back_offs.refused(host, sent_ago, base, cap)
        if seconds:
            self.pause(host, seconds)
        return seconds

    def end_back_off(self, host: str, sent_ago: float) -> bool:
        return self.back_offs.served(host, sent_ago)

    def failed(self, host: str, limit: int, seconds: float) -> HostFailure:
        failure = self.db.failures.failed(host, limit, seconds)
        if failure.count and failure.down:
            self.set_down(host, seconds)
        return failure

    def answered(self, host: str) -> None:
        self.db.failures.answered(host)

    def failing(self) -> list[str]:
        return self.db.failures.failing()

    def set_down(self, host: str, seconds: float) -> None:
        until = time.time() + seconds
        with self.db.tx():
            self.db.upsert_host(
                "host, next_allowed, down_until", (host, until, until),
                "next_allowed = MAX(next_allowed, excluded.next_allowed), down_until = MAX(down_until, excluded.down_until)",
            )

    def down(self) -> list[tuple[str, float, int]]:
        now = time.time()
        rows = self.conn.execute(
            "SELECT h.host, h.down_until, (SELECT COUNT(*) FROM frontier_url u"
            "  WHERE u.crawl = h.crawl AND u.host = h.host AND u.state != ?)"
            " FROM frontier_host h WHERE h.crawl = ? AND h.down_until > ? ORDER BY h.host",
            (DONE, self.crawl, now),
        ).fetchall()
        return [(host, until - now, waiting) for host, until, waiting in rows]

    def clear_down(self) -> int:
        now = time.time()
        with self.db.tx():
            cur = self.conn.execute(
                "UPDATE frontier_host SET next_allowed = MIN(next_allowed, ?), down_until = 0"
                " WHERE crawl = ? AND down_until > ?",
                (now, self.crawl, now),
            )
        self.db.failures = FailureCounts()  # (and the failures in a row start over)
        return cur.rowcount
