"""The embedded frontier's database: one SQLite file, one crawl or several, survives any stop.

Tables: ``frontier_url`` (one row per URL and crawl, with its state and lease; ``reason``
the JSON of its parent, parent score and note; ``revisit`` (JSON) set only for a
revived URL and cleared once it is done; ``tries`` its failed downloads while it waits
for another try) and ``frontier_host`` (next-allowed time, delay, best queued priority,
rank, the semantic yield learnt so far, the link evidence found for it: ``link_sum``,
``link_n``, ``link_mask``; ``estimate``, the strategy's latest value of a host not
learnt yet; ``down_until``). A host's ``best`` is NULL when it has nothing
queued, so the pop scans only hosts with work, best rank first. ``frontier_robots``
keeps each host's robots.txt; ``frontier_control`` a stop request;
``frontier_setup`` the strategy and seeds a worker started with; ``frontier_cfg`` the
crawl's host ranking (``spitag.ranking``).

A file written by an earlier SpiTag gains the columns and tables it lacks when opened
(a ``reason`` it wrote names its strategy too: that is dropped on reading).
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from spitag.errors import BackendUnavailableError
from spitag.frontier.records import DONE, LEASED, QUEUED, FailureCounts, Limits, Politeness
from spitag.ranking import HostRanking

TABLES = ("frontier_url", "frontier_host", "frontier_control", "frontier_setup", "frontier_cfg", "frontier_robots")
SCHEMA = [
    """CREATE TABLE IF NOT EXISTS frontier_url (
        crawl TEXT NOT NULL, url TEXT NOT NULL, host TEXT NOT NULL,
        state INTEGER NOT NULL, priority REAL NOT NULL, depth INTEGER NOT NULL,
        reason TEXT, lease_until REAL, owner TEXT, discovered REAL NOT NULL,
        revisit TEXT, tries INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (crawl, url))""",
    "CREATE INDEX IF NOT EXISTS frontier_url_queue ON frontier_url (crawl, host, state, priority)",
    "CREATE INDEX IF NOT EXISTS frontier_url_state ON frontier_url (crawl, state, lease_until)",
    """CREATE TABLE IF NOT EXISTS frontier_host (
        crawl TEXT NOT NULL, host TEXT NOT NULL,
        best REAL, rank REAL, next_allowed REAL NOT NULL DEFAULT 0, delay REAL,
        score_sum REAL NOT NULL DEFAULT 0, pages INTEGER NOT NULL DEFAULT 0,
        hard_next REAL NOT NULL DEFAULT 0,
        link_sum REAL NOT NULL DEFAULT 0, link_n INTEGER NOT NULL DEFAULT 0,
        link_mask INTEGER NOT NULL DEFAULT 0, estimate REAL,
        down_until REAL NOT NULL DEFAULT 0,
        PRIMARY KEY (crawl, host))""",
    "CREATE TABLE IF NOT EXISTS frontier_control (crawl TEXT PRIMARY KEY, stop REAL)",
    """CREATE TABLE IF NOT EXISTS frontier_setup (
        crawl TEXT NOT NULL, name TEXT NOT NULL, value TEXT NOT NULL, PRIMARY KEY (crawl, name))""",
    """CREATE TABLE IF NOT EXISTS frontier_cfg (
        crawl TEXT NOT NULL, name TEXT NOT NULL, value TEXT NOT NULL, PRIMARY KEY (crawl, name))""",
    """CREATE TABLE IF NOT EXISTS frontier_robots (
        crawl TEXT NOT NULL, netloc TEXT NOT NULL, blob BLOB NOT NULL, until REAL NOT NULL,
        PRIMARY KEY (crawl, netloc))""",
    "CREATE INDEX IF NOT EXISTS frontier_host_rank ON frontier_host (crawl, rank) WHERE best IS NOT NULL",
    "CREATE INDEX IF NOT EXISTS frontier_host_ready ON frontier_host (crawl, next_allowed) WHERE best IS NOT NULL",
    # for people reading the file with SQL: the URLs with their state by name
    f"""CREATE VIEW IF NOT EXISTS frontier_urls AS SELECT crawl, url, host,
        CASE state WHEN {QUEUED} THEN 'queued' WHEN {LEASED} THEN 'leased' WHEN {DONE} THEN 'done' END AS state,
        priority, depth, reason, tries, owner, lease_until FROM frontier_url""",
]
# Columns an earlier SpiTag's file lacks: table → (column, definition)
ADDED_COLUMNS = {
    "frontier_url": [("revisit", "TEXT"), ("tries", "INTEGER NOT NULL DEFAULT 0")],
    "frontier_host": [
        ("link_sum", "REAL NOT NULL DEFAULT 0"), ("link_n", "INTEGER NOT NULL DEFAULT 0"),
        ("link_mask", "INTEGER NOT NULL DEFAULT 0"), ("estimate", "REAL"),
        ("down_until", "REAL NOT NULL DEFAULT 0"),
    ],
}
CHUNK = 400


class SQLiteDB:
    """The connection and what the five contracts share of one crawl."""

    def __init__(self, url: str, path: Path, crawl: str, owner: str, *, lease_seconds: float,
                 politeness: Politeness, ranking: HostRanking | None, machine: str | None,
                 limits: Limits) -> None:
        if not path.parent.is_dir():
            raise BackendUnavailableError(f"frontier {url}: folder {path.parent} does not exist")
        self.url = url
        self.crawl = crawl
        self.owner = owner
        self.lease_seconds = lease_seconds
        self.politeness = politeness
        self.limits = limits
        try:
            self.conn = sqlite3.connect(path, timeout=30, isolation_level=None, check_same_thread=False)
            self.conn.execute("PRAGMA journal_mode=WAL")
            self.conn.execute("PRAGMA synchronous=NORMAL")
            for ddl in SCHEMA:
                self.conn.execute(ddl)
            for table, added in ADDED_COLUMNS.items():
                columns = {row[1] for row in self.conn.execute(f"PRAGMA table_info({table})")}
                for column, definition in added:
                    if column not in columns:
                        self.conn.execute(f"ALTER TABLE {table} ADD COLUMN {column} {definition}")
            self.ranking = self._ranking(ranking)
        except sqlite3.Error as exc:
            raise BackendUnavailableError(f"frontier {url}: cannot open {path}: {exc}") from None
        self.failures = FailureCounts()  # failures in a row: one worker owns this frontier

    def _ranking(self, ranking: HostRanking | None) -> HostRanking:
        """The crawl's host ranking: the one given, kept with the crawl, or the one kept."""
        if ranking is None:
            rows = self.conn.execute("SELECT name, value FROM frontier_cfg WHERE crawl = ?", (self.crawl,))
            return HostRanking.from_params(dict(rows.fetchall()))
        with self.tx():
            self.conn.executemany(
                "INSERT INTO frontier_cfg (crawl, name, value) VALUES (?, ?, ?)"
                " ON CONFLICT (crawl, name) DO UPDATE SET value = excluded.value",
                [(self.crawl, name, value) for name, value in ranking.params().items()],
            )
        return ranking

    def tx(self) -> _Transaction:
        return _Transaction(self.conn)

    def states(self, urls: Sequence[str]) -> dict[str, tuple]:
        found: dict[str, tuple] = {}
        for chunk in chunks(list(urls)):
            rows = self.conn.execute(
                f"SELECT url, state, priority, host, owner FROM frontier_url"
                f" WHERE crawl = ? AND url IN ({','.join('?' * len(chunk))})",
                [self.crawl, *chunk],
            )
            for url, state, priority, host, owner in rows:
                found[url] = (state, priority, host, owner)
        return found

    def refresh_hosts(self, hosts: Iterable[str]) -> None:
        """Recompute best and rank of the hosts whose queue changed."""
        for host in set(hosts):
            row = self.conn.execute(
                "SELECT MAX(priority) FROM frontier_url WHERE crawl = ? AND host = ? AND state = ?",
                (self.crawl, host, QUEUED),
            ).fetchone()
            best = row[0]
            stats = self.conn.execute(
                "SELECT score_sum, pages, estimate FROM frontier_host WHERE crawl = ? AND host = ?",
                (self.crawl, host),
            ).fetchone()
            score_sum, pages, estimate = stats if stats else (0.0, 0, None)
            rank = None if best is None else self.ranking.rank(best, score_sum or 0.0, pages or 0, estimate)
            self.conn.execute(
                "INSERT INTO frontier_host (crawl, host, best, rank) VALUES (?, ?, ?, ?)"
                " ON CONFLICT (crawl, host) DO UPDATE SET best = excluded.best, rank = excluded.rank",
                (self.crawl, host, best, rank),
            )

    def upsert_host(self, columns: str, values: Sequence[Any], update: str) -> None:
        """Insert the crawl's host row with ``columns`` (host first), or ``update`` it."""
        marks = ", ".join("?" * (len(values) + 1))
        self.conn.execute(
            f"INSERT INTO frontier_host (crawl, {columns}) VALUES ({marks})"
            f" ON CONFLICT (crawl, host) DO UPDATE SET {update}",
            (self.crawl, *values),
        )

    def close(self) -> None:
        self.conn.close()


class _Transaction:
    """BEGIN IMMEDIATE … COMMIT (or ROLLBACK on error) on an autocommit connection."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self.depth = 0

    def __enter__(self) -> None:
        if not self.conn.in_transaction:
            self.conn.execute("BEGIN IMMEDIATE")
            self.depth = 1

    def __exit__(self, exc_type: Any, *_: Any) -> None:
        if self.depth:
            self.conn.execute("ROLLBACK" if exc_type else "COMMIT")


def chunks(values: list[Any], size: int = CHUNK) -> Iterable[list[Any]]:
    for start in range(0, len(values), size):
        yield values[start : start + size]


def signed(mask: int) -> int:
    """A 64-bit mask as SQLite's signed 64-bit integer, bit for bit."""
    return mask - (1 << 64) if mask >= 1 << 63 else mask


def crawl_names(path: Path) -> list[str]:
    """The crawls an existing frontier file holds (set up, or with URLs)."""
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=30)
    try:
        rows = conn.execute("SELECT crawl FROM frontier_setup UNION SELECT DISTINCT crawl FROM frontier_url")
        return sorted(str(name) for (name,) in rows)
    except sqlite3.Error as exc:
        raise BackendUnavailableError(f"frontier {path}: cannot read it: {exc}") from None
    finally:
        conn.close()
