"""The URL queue (``spitag.frontier.queue``) in SQLite."""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence

from spitag.frontier.owners import is_gone
from spitag.frontier.queue import UrlQueue
from spitag.frontier.records import (
    DONE,
    LEASED,
    QUEUED,
    RETRY_MAX_SECONDS,
    Counts,
    Entry,
    HostState,
    PushResult,
    Retry,
    back_off_seconds,
    combine_priority,
)
from spitag.frontier.sqlite.db import SQLiteDB, chunks


def _revisit_json(revisit: dict | None) -> str | None:
    return json.dumps(revisit, separators=(",", ":"), default=str) if revisit else None


def _entry(url: str, host: str, depth: int, priority: float, about: str | None, revisit: str | None) -> Entry:
    return Entry.from_about(url, host, depth, priority, about, json.loads(revisit) if revisit else None)


class SQLiteQueue(UrlQueue):
    def __init__(self, db: SQLiteDB) -> None:
        self.db = db
        self.conn = db.conn
        self.crawl = db.crawl
        self.owner = db.owner
        self.lease_seconds = db.lease_seconds

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
                merged[e.url] = Entry(e.url, e.host, e.depth, e.priority, e.parent, e.parent_score, e.note)
        now = time.time()
        with self.db.tx():
            known = self.db.states(list(merged))
            cap = self.db.limits.per_host
            held = self._urls_of_hosts({e.host for u, e in merged.items() if u not in known}) if cap else {}
            inserts, updates = [], []
            for url, e in merged.items():
                state = known.get(url)
                if state is None:
                    if cap is not None and held.get(e.host, 0) >= cap:
                        result.over += 1
                        continue
                    held[e.host] = held.get(e.host, 0) + 1
                    inserts.append((self.crawl, url, e.host, QUEUED, e.priority, e.depth, e.about_json(), now))
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
            self.db.refresh_hosts(result.hosts)
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
        with self.db.tx():
            known = self.db.states(list(merged))
            inserts, updates = [], []
            for url, e in merged.items():
                state = known.get(url)
                revisit = _revisit_json(e.revisit)
                if state is None:
                    inserts.append((self.crawl, url, e.host, QUEUED, e.priority, e.depth, e.about_json(), now, revisit))
                elif state[0] == DONE:
                    updates.append((QUEUED, e.priority, e.depth, e.about_json(), revisit, self.crawl, url))
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
            self.db.refresh_hosts(touched)
        return revived

    def _urls_of_hosts(self, hosts: set[str]) -> dict[str, int]:
        """How many URLs (any state) the crawl has of each of ``hosts``."""
        held: dict[str, int] = {}
        for chunk in chunks(sorted(hosts)):
            held.update(self.conn.execute(
                f"SELECT host, COUNT(*) FROM frontier_url WHERE crawl = ? AND host IN ({', '.join('?' * len(chunk))})"
                " GROUP BY host", (self.crawl, *chunk)).fetchall())
        return held

    def pop(self, n: int, busy: Mapping[str, int] | None = None) -> list[Entry]:
        now = time.time()
        politeness = self.db.politeness
        busy = busy or {}
        popped: list[Entry] = []
        with self.db.tx():
            budget = self.db.limits.pages
            if budget is not None:  # done or leased, by every worker and run
                (taken,) = self.conn.execute(
                    "SELECT COUNT(*) FROM frontier_url WHERE crawl = ? AND state IN (?, ?)",
                    (self.crawl, LEASED, DONE),
                ).fetchone()
                n = min(n, max(budget - taken, 0))
                if n <= 0:
                    return popped
            hosts = self.conn.execute(
                "SELECT host, delay FROM frontier_host WHERE crawl = ? AND best IS NOT NULL"
                " AND next_allowed <= ? ORDER BY rank DESC LIMIT ?",
                (self.crawl, now, n + len(busy)),  # (busy hosts may give nothing)
            ).fetchall()
            for host, delay in hosts:
                if len(popped) >= n:
                    break
                take = min(politeness.per_host - busy.get(host, 0), n - len(popped))
                if take <= 0:
                    continue  # all its places are busy with this caller's requests
                delay = politeness.delay if delay is None else delay
                if delay > 0:
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
                self.conn.execute(
                    "UPDATE frontier_host SET next_allowed = ? WHERE crawl = ? AND host = ?",
                    (now + delay, self.crawl, host),
                )
                popped.extend(_entry(url, host, depth, priority, about, revisit)
                              for url, depth, priority, about, revisit in rows)
            self.db.refresh_hosts(h for h, *_ in hosts)
        return popped

    def mark_done(self, entries: Sequence[Entry]) -> int:
        if not entries:
            return 0
        now = time.time()
        with self.db.tx():
            known = self.db.states([e.url for e in entries])
            fresh = [
                (self.crawl, e.url, e.host, DONE, e.priority, e.depth, e.about_json(), now)
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
            self.db.refresh_hosts(known[u][2] for u in queued)
        return len(fresh) + len(queued)

    def _move(self, urls: Sequence[str], to_state: int, where: str, params: tuple) -> int:
        """Leased URLs → ``to_state`` (every caller moves URLs out of a lease)."""
        if not urls:
            return 0
        moved = 0
        hosts: set[str] = set()
        with self.db.tx():
            for chunk in chunks(list(urls)):
                marks = ",".join("?" * len(chunk))
                if to_state == QUEUED:
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
            if to_state == QUEUED:
                self.db.refresh_hosts(hosts)
        return moved

    def ack(self, urls: Sequence[str]) -> int:
        return self._move(urls, DONE, "state = ?", (LEASED,))

    def release(self, urls: Sequence[str]) -> int:
        return self._move(urls, QUEUED, "state = ? AND owner = ?", (LEASED, self.owner))

    def renew(self, urls: Sequence[str]) -> int:
        until = time.time() + self.lease_seconds
        renewed = 0
        with self.db.tx():
            for chunk in chunks(list(urls)):
                cur = self.conn.execute(
                    f"UPDATE frontier_url SET lease_until = ? WHERE crawl = ? AND state = ?"
                    f" AND owner = ? AND url IN ({','.join('?' * len(chunk))})",
                    [until, self.crawl, LEASED, self.owner, *chunk],
                )
                renewed += cur.rowcount
        return renewed

    def retry_later(self, url: str, retries: int, seconds: float) -> Retry | None:
        with self.db.tx():
            row = self.conn.execute(
                "SELECT host, tries FROM frontier_url WHERE crawl = ? AND url = ? AND state = ? AND owner = ?",
                (self.crawl, url, LEASED, self.owner),
            ).fetchone()
            if row is None:
                return None
            host, tries = row[0], row[1] + 1
            if tries > retries:
                self.conn.execute("UPDATE frontier_url SET tries = 0 WHERE crawl = ? AND url = ?", (self.crawl, url))
                return Retry(tries, 0.0)
            wait = back_off_seconds(tries, seconds, RETRY_MAX_SECONDS)
            self.conn.execute(
                "UPDATE frontier_url SET tries = ?, lease_until = ? WHERE crawl = ? AND url = ?",
                (tries, time.time() + wait, self.crawl, url),
            )
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
            "SELECT MIN(next_allowed) FROM frontier_host WHERE crawl = ? AND best IS NOT NULL", (self.crawl,)
        ).fetchone()
        if row[0] is None:
            return None
        return max(0.0, row[0] - time.time())

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
        return [_entry(*row) for row in rows]
