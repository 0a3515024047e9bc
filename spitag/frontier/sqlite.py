"""The embedded frontier: one SQLite file, one crawl or several, survives any stop.

Tables: ``frontier_url`` (one row per URL and crawl, with its state and lease) and
``frontier_host`` (next-allowed time, delay, best queued priority, rank, the
semantic yield learnt so far, the link evidence found for it: ``link_sum``,
``link_n``, ``link_mask``, ``estimate``, the strategy's latest ``rescore`` of a
host not learnt yet, and ``probing``, 1 while the first URL of a host with nothing
done or learnt waits for its page: ``probe``). ``frontier_url.revisit`` (JSON) is set only for a
revived URL (``revive``: a recrawl's validators) and cleared once it is done. A
host's ``best`` is NULL when it has nothing queued, so the pop scans only hosts with
work, best rank first. ``frontier_robots`` keeps each host's robots.txt for a resumed
run (``keep_robots``; a row past its ``until`` is not read, and is replaced when the
host's robots.txt is fetched again).
"""

from __future__ import annotations

import json
import math
import sqlite3
import time
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from spitag.errors import BackendUnavailableError
from spitag.frontier.base import (
    DONE,
    LEASED,
    MASK,
    QUEUED,
    RETRY_MAX_SECONDS,
    Counts,
    Entry,
    FailureCounts,
    Frontier,
    HostState,
    Learnt,
    PushResult,
    Retry,
    back_off_seconds,
    combine_priority,
    link_rows,
)
from spitag.frontier.owners import is_gone

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
        probing INTEGER NOT NULL DEFAULT 0, down_until REAL NOT NULL DEFAULT 0,
        PRIMARY KEY (crawl, host))""",
    "CREATE TABLE IF NOT EXISTS frontier_control (crawl TEXT PRIMARY KEY, stop REAL)",
    """CREATE TABLE IF NOT EXISTS frontier_setup (
        crawl TEXT NOT NULL, name TEXT NOT NULL, value TEXT NOT NULL, PRIMARY KEY (crawl, name))""",
    """CREATE TABLE IF NOT EXISTS frontier_robots (
        crawl TEXT NOT NULL, netloc TEXT NOT NULL, blob BLOB NOT NULL, until REAL NOT NULL,
        PRIMARY KEY (crawl, netloc))""",
    "CREATE INDEX IF NOT EXISTS frontier_host_rank ON frontier_host (crawl, rank) WHERE best IS NOT NULL",
    "CREATE INDEX IF NOT EXISTS frontier_host_ready ON frontier_host (crawl, next_allowed) WHERE best IS NOT NULL",
]
_CHUNK = 400


class SQLiteFrontier(Frontier):
    def __init__(self, url: str, path: Path, crawl: str, owner: str, **kwargs: Any) -> None:
        super().__init__(url, crawl, owner, **kwargs)
        if not path.parent.is_dir():
            raise BackendUnavailableError(f"frontier {url}: folder {path.parent} does not exist")
        try:
            self.conn = sqlite3.connect(path, timeout=30, isolation_level=None, check_same_thread=False)
            self.conn.execute("PRAGMA journal_mode=WAL")
            self.conn.execute("PRAGMA synchronous=NORMAL")
            for ddl in SCHEMA:
                self.conn.execute(ddl)
            columns = {row[1] for row in self.conn.execute("PRAGMA table_info(frontier_url)")}
            if "revisit" not in columns:  # a frontier file of an earlier SpiTag
                self.conn.execute("ALTER TABLE frontier_url ADD COLUMN revisit TEXT")
            if "tries" not in columns:  # before failed downloads were tried again later
                self.conn.execute("ALTER TABLE frontier_url ADD COLUMN tries INTEGER NOT NULL DEFAULT 0")
            columns = {row[1] for row in self.conn.execute("PRAGMA table_info(frontier_host)")}
            for column, kind in (("link_sum", "REAL"), ("link_n", "INTEGER"), ("link_mask", "INTEGER")):
                if column not in columns:  # before link evidence was kept
                    self.conn.execute(f"ALTER TABLE frontier_host ADD COLUMN {column} {kind} NOT NULL DEFAULT 0")
            if "estimate" not in columns:  # before rescore
                self.conn.execute("ALTER TABLE frontier_host ADD COLUMN estimate REAL")
            if "probing" not in columns:  # before probe
                self.conn.execute("ALTER TABLE frontier_host ADD COLUMN probing INTEGER NOT NULL DEFAULT 0")
            if "down_until" not in columns:  # before hosts were set aside as down
                self.conn.execute("ALTER TABLE frontier_host ADD COLUMN down_until REAL NOT NULL DEFAULT 0")
        except sqlite3.Error as exc:
            raise BackendUnavailableError(f"frontier {url}: cannot open {path}: {exc}") from None

    # -- helpers -------------------------------------------------------------------
    def _tx(self):
        return _Transaction(self.conn)

    def _states(self, urls: Sequence[str]) -> dict[str, tuple]:
        found: dict[str, tuple] = {}
        for chunk in _chunks(list(urls)):
            rows = self.conn.execute(
                f"SELECT url, state, priority, host, owner FROM frontier_url"
                f" WHERE crawl = ? AND url IN ({','.join('?' * len(chunk))})",
                [self.crawl, *chunk],
            )
            for url, state, priority, host, owner in rows:
                found[url] = (state, priority, host, owner)
        return found

    def _refresh_hosts(self, hosts: Iterable[str]) -> None:
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
            rank = None if best is None else self.rank(best, score_sum or 0.0, pages or 0, estimate)
            self.conn.execute(
                "INSERT INTO frontier_host (crawl, host, best, rank) VALUES (?, ?, ?, ?)"
                " ON CONFLICT (crawl, host) DO UPDATE SET best = excluded.best, rank = excluded.rank",
                (self.crawl, host, best, rank),
            )

    # -- contract ------------------------------------------------------------------
    def push(self, entries: Sequence[Entry], combine: str) -> PushResult:
        result = PushResult()
        if not entries:
            return result
        merged: dict[str, Entry] = {}
        for e in entries:  # the same URL twice in one push: combine here first
            if e.url in merged:
                old = merged[e.url]
                old.priority = combine_priority(old.priority, e.priority, combine)
                old.depth = min(old.depth, e.depth)
            else:
                merged[e.url] = Entry(e.url, e.host, e.depth, e.priority, e.reason)
        now = time.time()
        with self._tx():
            known = self._states(list(merged))
            inserts, updates = [], []
            for url, e in merged.items():
                state = known.get(url)
                if state is None:
                    inserts.append(
                        (self.crawl, url, e.host, QUEUED, e.priority, e.depth, e.reason_json(), now)
                    )
                    result.new += 1
                elif state[0] == QUEUED:
                    new_priority = combine_priority(state[1], e.priority, combine)
                    if new_priority != state[1]:
                        updates.append((new_priority, e.depth, self.crawl, url))
                        result.raised += 1
                    continue
                else:
                    result.ignored += 1
                    continue
                result.hosts.add(e.host)
            self.conn.executemany(
                "INSERT INTO frontier_url (crawl, url, host, state, priority, depth, reason, discovered)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                inserts,
            )
            self.conn.executemany(
                "UPDATE frontier_url SET priority = ?, depth = MIN(depth, ?) WHERE crawl = ? AND url = ?",
                updates,
            )
            for url in (u[3] for u in updates):
                result.hosts.add(known[url][2])
            self._refresh_hosts(result.hosts)
        return result

    def revive(self, entries: Sequence[Entry]) -> int:
        if not entries:
            return 0
        merged: dict[str, Entry] = {}
        for e in entries:
            merged.setdefault(e.url, e)
        now = time.time()
        revived = 0
        touched: set[str] = set()
        with self._tx():
            known = self._states(list(merged))
            inserts, updates = [], []
            for url, e in merged.items():
                state = known.get(url)
                revisit = json.dumps(e.revisit, separators=(",", ":"), default=str) if e.revisit else None
                if state is None:
                    inserts.append(
                        (self.crawl, url, e.host, QUEUED, e.priority, e.depth, e.reason_json(), now, revisit)
                    )
                elif state[0] == DONE:
                    updates.append((QUEUED, e.priority, e.depth, e.reason_json(), revisit, self.crawl, url))
                else:
                    continue
                touched.add(e.host if state is None else state[2])
                revived += 1
            self.conn.executemany(
                "INSERT INTO frontier_url (crawl, url, host, state, priority, depth, reason, discovered, revisit)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                inserts,
            )
            self.conn.executemany(
                "UPDATE frontier_url SET state = ?, priority = ?, depth = ?, reason = ?, revisit = ?,"
                " lease_until = NULL, owner = NULL WHERE crawl = ? AND url = ?",
                updates,
            )
            self._refresh_hosts(touched)
        return revived

    def pop(self, n: int, busy: Mapping[str, int] | None = None) -> list[Entry]:
        now = time.time()
        default_delay = self.politeness.delay
        busy = busy or {}
        popped: list[Entry] = []
        with self._tx():
            hosts = self.conn.execute(
                "SELECT host, delay, pages FROM frontier_host WHERE crawl = ? AND best IS NOT NULL"
                " AND next_allowed <= ? ORDER BY rank DESC LIMIT ?",
                (self.crawl, now, n + len(busy)),  # (busy hosts may give nothing)
            ).fetchall()
            for host, delay, pages in hosts:
                if len(popped) >= n:
                    break
                take = min(self.politeness.per_host - busy.get(host, 0), n - len(popped))
                if take <= 0:
                    continue  # all its places are busy with this caller's requests
                delay = default_delay if delay is None else delay
                probing = self.probe and not pages and not self._any_done(host)
                if delay > 0 or probing:
                    take = 1
                rows = self.conn.execute(
                    "SELECT url, depth, priority, reason, revisit FROM frontier_url"
                    " WHERE crawl = ? AND host = ? AND state = ? ORDER BY priority DESC LIMIT ?",
                    (self.crawl, host, QUEUED, take),
                ).fetchall()
                self.conn.executemany(
                    "UPDATE frontier_url SET state = ?, lease_until = ?, owner = ? WHERE crawl = ? AND url = ?",
                    [(LEASED, now + self.lease_seconds, self.owner, self.crawl, r[0]) for r in rows],
                )
                # a probe holds its host until its page is learnt or leaves its lease (_end_probes)
                wait = max(delay, self.lease_seconds) if probing and rows else delay
                self.conn.execute(
                    "UPDATE frontier_host SET next_allowed = ?, probing = ? WHERE crawl = ? AND host = ?",
                    (now + wait, int(probing and bool(rows)), self.crawl, host),
                )
                popped.extend(
                    Entry(url, host, depth, priority, Entry.parse_reason(reason), Entry.parse_reason(revisit))
                    for url, depth, priority, reason, revisit in rows
                )
            self._refresh_hosts(h for h, *_ in hosts)
        return popped

    def mark_done(self, entries: Sequence[Entry]) -> int:
        if not entries:
            return 0
        now = time.time()
        with self._tx():
            known = self._states([e.url for e in entries])
            fresh = [
                (self.crawl, e.url, e.host, DONE, e.priority, e.depth, e.reason_json(), now)
                for e in entries if e.url not in known
            ]
            self.conn.executemany(
                "INSERT INTO frontier_url (crawl, url, host, state, priority, depth, reason, discovered)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (crawl, url) DO NOTHING",
                fresh,
            )
            queued = [u for u, st in known.items() if st[0] == QUEUED]
            self.conn.executemany(
                "UPDATE frontier_url SET state = ?, revisit = NULL, tries = 0 WHERE crawl = ? AND url = ? AND state = ?",
                [(DONE, self.crawl, u, QUEUED) for u in queued],
            )
            self._refresh_hosts(known[u][2] for u in queued)
        return len(fresh) + len(queued)

    def _move(self, urls: Sequence[str], to_state: int, where: str, params: tuple) -> int:
        """Leased URLs → ``to_state`` (every caller moves URLs out of a lease)."""
        if not urls:
            return 0
        moved = 0
        hosts: set[str] = set()
        with self._tx():
            for chunk in _chunks(list(urls)):
                marks = ",".join("?" * len(chunk))
                if to_state == QUEUED or self.probe:
                    hosts.update(
                        h for (h,) in self.conn.execute(
                            f"SELECT DISTINCT host FROM frontier_url WHERE crawl = ? AND url IN ({marks})"
                            f" AND {where}", [self.crawl, *chunk, *params]
                        )
                    )
                clear = ", revisit = NULL, tries = 0" if to_state == DONE else ""
                cur = self.conn.execute(
                    f"UPDATE frontier_url SET state = ?, lease_until = NULL, owner = NULL{clear}"
                    f" WHERE crawl = ? AND url IN ({marks}) AND {where}",
                    [to_state, self.crawl, *chunk, *params],
                )
                moved += cur.rowcount
            self._end_probes(hosts)
            if to_state == QUEUED:
                self._refresh_hosts(hosts)
        return moved

    def _any_done(self, host: str) -> bool:
        return self.conn.execute(
            "SELECT 1 FROM frontier_url WHERE crawl = ? AND host = ? AND state = ? LIMIT 1",
            (self.crawl, host, DONE),
        ).fetchone() is not None

    def _end_probes(self, hosts: Iterable[str]) -> None:
        """A URL of these hosts left its lease, or their first page was learnt: a probe
        among them is over. Its host is ready again now, or when its hard politeness
        gate (``acquire``) opens."""
        if not self.probe:
            return
        now = time.time()
        self.conn.executemany(
            "UPDATE frontier_host SET next_allowed = MAX(hard_next, down_until, ?), probing = 0"
            " WHERE crawl = ? AND host = ? AND probing = 1",
            [(now, self.crawl, host) for host in hosts],
        )

    def ack(self, urls: Sequence[str]) -> int:
        return self._move(urls, DONE, "state = ?", (LEASED,))

    def release(self, urls: Sequence[str]) -> int:
        return self._move(urls, QUEUED, "state = ? AND owner = ?", (LEASED, self.owner))

    def renew(self, urls: Sequence[str]) -> int:
        until = time.time() + self.lease_seconds
        renewed = 0
        with self._tx():
            for chunk in _chunks(list(urls)):
                cur = self.conn.execute(
                    f"UPDATE frontier_url SET lease_until = ? WHERE crawl = ? AND state = ?"
                    f" AND owner = ? AND url IN ({','.join('?' * len(chunk))})",
                    [until, self.crawl, LEASED, self.owner, *chunk],
                )
                renewed += cur.rowcount
        return renewed

    def retry_later(self, url: str, retries: int, seconds: float) -> Retry | None:
        with self._tx():
            row = self.conn.execute(
                "SELECT host, tries FROM frontier_url WHERE crawl = ? AND url = ? AND state = ? AND owner = ?",
                (self.crawl, url, LEASED, self.owner),
            ).fetchone()
            if row is None:
                return None
            host, tries = row[0], row[1] + 1
            if tries > retries:
                self.conn.execute(
                    "UPDATE frontier_url SET tries = 0 WHERE crawl = ? AND url = ?", (self.crawl, url))
                return Retry(tries, 0.0)
            wait = back_off_seconds(tries, seconds, RETRY_MAX_SECONDS)
            self.conn.execute(
                "UPDATE frontier_url SET tries = ?, lease_until = ? WHERE crawl = ? AND url = ?",
                (tries, time.time() + wait, self.crawl, url),
            )
            self._end_probes([host])
        return Retry(tries, wait)

    def reap(self) -> int:
        expired = [
            u for (u,) in self.conn.execute(
                "SELECT url FROM frontier_url WHERE crawl = ? AND state = ? AND lease_until < ?",
                (self.crawl, LEASED, time.time()),
            )
        ]
        return self._move(expired, QUEUED, "state = ?", (LEASED,))

    def recover(self) -> int:
        """Leases held by processes known to be gone (``owners.is_gone``: of this
        machine's process table) go back at once (no wait)."""
        dead = [
            url for url, owner in self.conn.execute(
                "SELECT url, owner FROM frontier_url WHERE crawl = ? AND state = ?", (self.crawl, LEASED))
            if owner == self.owner or is_gone(owner or "")
        ]
        return self._move(dead, QUEUED, "state = ?", (LEASED,))

    def has_work(self) -> bool:
        now = time.time()
        leased = self.conn.execute(
            "SELECT 1 FROM frontier_url u WHERE u.crawl = ? AND u.state = ? AND NOT EXISTS"
            " (SELECT 1 FROM frontier_host h WHERE h.crawl = u.crawl AND h.host = u.host AND h.down_until > ?)"
            " LIMIT 1", (self.crawl, LEASED, now),
        ).fetchone()
        if leased is not None:
            return True
        # a host's best is its best queued priority: NULL when nothing of it is queued
        queued = self.conn.execute(
            "SELECT 1 FROM frontier_host WHERE crawl = ? AND best IS NOT NULL AND down_until <= ? LIMIT 1",
            (self.crawl, now),
        ).fetchone()
        return queued is not None

    def next_ready(self) -> float | None:
        row = self.conn.execute(
            "SELECT MIN(next_allowed) FROM frontier_host WHERE crawl = ? AND best IS NOT NULL",
            (self.crawl,),
        ).fetchone()
        if row[0] is None:
            return None
        return max(0.0, row[0] - time.time())

    def robots(self, netloc: str) -> bytes | None:
        row = self.conn.execute(
            "SELECT blob FROM frontier_robots WHERE crawl = ? AND netloc = ? AND until > ?",
            (self.crawl, netloc, time.time()),
        ).fetchone()
        return None if row is None else bytes(row[0])

    def keep_robots(self, netloc: str, blob: bytes, ttl: float) -> None:
        with self._tx():
            self.conn.execute(
                "INSERT INTO frontier_robots (crawl, netloc, blob, until) VALUES (?, ?, ?, ?)"
                " ON CONFLICT (crawl, netloc) DO UPDATE SET blob = excluded.blob, until = excluded.until",
                (self.crawl, netloc, sqlite3.Binary(blob), time.time() + ttl),
            )

    def set_host_delay(self, host: str, delay: float) -> None:
        with self._tx():
            self.conn.execute(
                "INSERT INTO frontier_host (crawl, host, delay) VALUES (?, ?, ?)"
                " ON CONFLICT (crawl, host) DO UPDATE SET delay = excluded.delay",
                (self.crawl, host, delay),
            )

    def host_delay(self, host: str) -> float:
        row = self.conn.execute(
            "SELECT delay FROM frontier_host WHERE crawl = ? AND host = ?", (self.crawl, host)
        ).fetchone()
        return self.politeness.delay if row is None or row[0] is None else row[0]

    def host_delays(self) -> dict[str, float]:
        return dict(
            self.conn.execute(
                "SELECT host, delay FROM frontier_host WHERE crawl = ? AND delay IS NOT NULL",
                (self.crawl,),
            ).fetchall()
        )

    def acquire(self, host: str, delay: float) -> float:
        now = time.time()
        with self._tx():
            row = self.conn.execute(
                "SELECT hard_next FROM frontier_host WHERE crawl = ? AND host = ?", (self.crawl, host)
            ).fetchone()
            if row is not None and row[0] > now:
                return row[0] - now
            self.conn.execute(
                "INSERT INTO frontier_host (crawl, host, hard_next) VALUES (?, ?, ?)"
                " ON CONFLICT (crawl, host) DO UPDATE SET hard_next = excluded.hard_next",
                (self.crawl, host, now + delay),
            )
        return 0.0

    def set_host_down(self, host: str, seconds: float) -> None:
        until = time.time() + seconds
        with self._tx():
            self.conn.execute(
                "INSERT INTO frontier_host (crawl, host, next_allowed, down_until) VALUES (?, ?, ?, ?)"
                " ON CONFLICT (crawl, host) DO UPDATE SET next_allowed = MAX(next_allowed, excluded.next_allowed),"
                " down_until = MAX(down_until, excluded.down_until)",
                (self.crawl, host, until, until),
            )

    def hosts_down(self) -> list[tuple[str, float, int]]:
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
        with self._tx():
            cur = self.conn.execute(
                "UPDATE frontier_host SET next_allowed = MIN(next_allowed, ?), down_until = 0"
                " WHERE crawl = ? AND down_until > ?",
                (now, self.crawl, now),
            )
        self._failures = FailureCounts()  # (and the failures in a row start over)
        return cur.rowcount

    def pause_host(self, host: str, seconds: float) -> None:
        until = time.time() + seconds
        with self._tx():
            self.conn.execute(
                "INSERT INTO frontier_host (crawl, host, next_allowed, hard_next) VALUES (?, ?, ?, ?)"
                " ON CONFLICT (crawl, host) DO UPDATE SET next_allowed = MAX(next_allowed, excluded.next_allowed),"
                " hard_next = MAX(hard_next, excluded.hard_next)",
                (self.crawl, host, until, until),
            )

    def record_setup(self, setup: dict[str, str]) -> dict[str, str]:
        with self._tx():
            before = dict(self.conn.execute(
                "SELECT name, value FROM frontier_setup WHERE crawl = ?", (self.crawl,)).fetchall())
            self.conn.executemany(
                "INSERT INTO frontier_setup (crawl, name, value) VALUES (?, ?, ?)"
                " ON CONFLICT (crawl, name) DO UPDATE SET value = excluded.value",
                [(self.crawl, name, value) for name, value in setup.items()],
            )
        return before

    def request_stop(self) -> None:
        self.conn.execute(
            "INSERT INTO frontier_control (crawl, stop) VALUES (?, ?)"
            " ON CONFLICT (crawl) DO UPDATE SET stop = excluded.stop",
            (self.crawl, time.time()),
        )

    def stop_requested(self) -> bool:
        row = self.conn.execute(
            "SELECT stop FROM frontier_control WHERE crawl = ?", (self.crawl,)
        ).fetchone()
        return row is not None and row[0] is not None

    def clear_stop(self) -> None:
        self.conn.execute("DELETE FROM frontier_control WHERE crawl = ?", (self.crawl,))

    def learn(
        self, observations: Sequence[tuple[str, float]], links: Sequence[tuple[str, float, int, int]] = ()
    ) -> None:
        """Link evidence is kept for a resume (its masks as signed 64-bit integers, the
        bits unchanged: SQLite's ``|`` ORs them as they are)."""
        sums: dict[str, list[float]] = defaultdict(lambda: [0.0, 0])
        for host, score in observations:
            sums[host][0] += score
            sums[host][1] += 1
        evidence = link_rows(links)
        with self._tx():
            self.conn.executemany(
                "INSERT INTO frontier_host (crawl, host, score_sum, pages) VALUES (?, ?, ?, ?)"
                " ON CONFLICT (crawl, host) DO UPDATE SET score_sum = score_sum + excluded.score_sum,"
                " pages = pages + excluded.pages",
                [(self.crawl, h, s, n) for h, (s, n) in sums.items()],
            )
            self.conn.executemany(
                "INSERT INTO frontier_host (crawl, host, link_sum, link_n, link_mask) VALUES (?, ?, ?, ?, ?)"
                " ON CONFLICT (crawl, host) DO UPDATE SET link_sum = link_sum + excluded.link_sum,"
                " link_n = link_n + excluded.link_n, link_mask = link_mask | excluded.link_mask",
                [(self.crawl, h, ls, n, _signed(m)) for h, (ls, n, m) in evidence.items()],
            )
            self._end_probes(sums)
            if self.host_weight > 0:
                self._refresh_hosts(sums)

    def rescore(self, estimates: Sequence[tuple[str, float]]) -> int:
        values = {host: float(value) for host, value in estimates if math.isfinite(value)}
        if not values:
            return 0
        with self._tx():
            self.conn.executemany(
                "INSERT INTO frontier_host (crawl, host, estimate) VALUES (?, ?, ?)"
                " ON CONFLICT (crawl, host) DO UPDATE SET estimate = excluded.estimate",
                [(self.crawl, h, v) for h, v in values.items()],
            )
            # a host not learnt ranks by its estimate alone, whatever its best
            ranked = self.conn.executemany(
                "UPDATE frontier_host SET rank = ? WHERE crawl = ? AND host = ? AND pages = 0 AND best IS NOT NULL",
                [(self.rank(v, 0.0, 0, v), self.crawl, h) for h, v in values.items()],
            ).rowcount
        return ranked

    def learnt(self, since: str | None) -> tuple[str, list[Learnt]]:
        """Every host's totals at first; afterwards nothing: an SQLite frontier has one
        owner, whose strategy saw its own pages first hand."""
        if since is not None:
            return since, []
        rows = self.conn.execute(
            "SELECT host, score_sum, pages, link_sum, link_n, link_mask FROM frontier_host"
            " WHERE crawl = ? AND (pages > 0 OR link_n > 0)",
            (self.crawl,),
        ).fetchall()
        if not rows:
            return "all", []
        pages = [(h, float(s), int(n)) for h, s, n, _, _, _ in rows if n > 0]
        links = [(h, float(ls), int(ln), int(m) & MASK) for h, _, _, ls, ln, m in rows if ln > 0]
        return "all", [Learnt(pages, links)]

    def counts(self) -> Counts:
        counts = Counts()
        for state, n, failed in self.conn.execute(
            "SELECT state, COUNT(*), SUM(tries > 0) FROM frontier_url WHERE crawl = ? GROUP BY state",
            (self.crawl,),
        ):
            if state == QUEUED:
                counts.queued = n
            elif state == LEASED:
                counts.leased = n
            elif state == DONE:
                counts.done = n
            if state != DONE:
                counts.retrying += failed or 0
        return counts

    def hosts(self, limit: int = 50) -> list[HostState]:
        rows = self.conn.execute(
            "SELECT h.host, h.best, h.next_allowed, h.delay, h.score_sum, h.pages,"
            " SUM(u.state = 0), SUM(u.state = 1), SUM(u.state = 2)"
            " FROM frontier_host h JOIN frontier_url u ON u.crawl = h.crawl AND u.host = h.host"
            " WHERE h.crawl = ? GROUP BY h.host ORDER BY SUM(u.state = 0) DESC, h.host LIMIT ?",
            (self.crawl, limit),
        ).fetchall()
        return [
            HostState(host, q or 0, l or 0, d or 0, best, nxt, delay, s / p if p else None)
            for host, best, nxt, delay, s, p, q, l, d in rows
        ]

    def top(self, n: int = 20) -> list[Entry]:
        rows = self.conn.execute(
            "SELECT url, host, depth, priority, reason, revisit FROM frontier_url"
            " WHERE crawl = ? AND state = ? ORDER BY priority DESC LIMIT ?",
            (self.crawl, QUEUED, n),
        ).fetchall()
        return [Entry(u, h, d, p, Entry.parse_reason(r), Entry.parse_reason(v)) for u, h, d, p, r, v in rows]

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


def _chunks(values: list[Any], size: int = _CHUNK) -> Iterable[list[Any]]:
    for start in range(0, len(values), size):
        yield values[start : start + size]


def _signed(mask: int) -> int:
    """A 64-bit mask as SQLite's signed 64-bit integer, bit for bit."""
    return mask - (1 << 64) if mask >= 1 << 63 else mask
