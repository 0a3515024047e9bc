"""The URL queue (``spitag.frontier.queue``) in Redis: one Lua script an operation."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from spitag.frontier.owners import is_gone
from spitag.frontier.queue import UrlQueue
from spitag.frontier.records import RETRY_MAX_SECONDS, Counts, Entry, HostState, PushResult, Retry
from spitag.frontier.redis.db import ALIVE_SECONDS, RedisDB, encode_member, entries, entry_args, lease_key, transient


class RedisQueue(UrlQueue):
    SCAN_HOSTS = 256  # hosts examined by rank in one pop before taking any ready host
    recover_again = ALIVE_SECONDS + 1.0

    def __init__(self, db: RedisDB) -> None:
        self.db = db
        self.crawl = db.crawl
        self.owner = db.owner
        self.lease_seconds = db.lease_seconds

    @transient
    def push(self, entries_: Sequence[Entry], combine: str) -> PushResult:
        result = PushResult()
        args: list[Any] = [combine, self.db.limits.per_host if self.db.limits.per_host is not None else -1]
        for e in entries_:
            one = entry_args(e)
            args += one
            result.hosts.add(one[0])
        if entries_:
            result.new, result.raised, result.ignored, result.over = self.db.run("push", *args)
        return result

    @transient
    def revive(self, entries_: Sequence[Entry]) -> int:
        args: list[Any] = []
        for e in entries_:
            args += entry_args(e, e.revisit or None)
        return int(self.db.run("revive", *args)) if entries_ else 0

    @transient
    def pop(self, n: int, busy: Mapping[str, int] | None = None) -> list[Entry]:
        politeness = self.db.politeness
        budget = self.db.limits.pages
        flat = self.db.run(
            "pop", n, self.lease_seconds, self.owner, politeness.delay, politeness.per_host, self.SCAN_HOSTS,
            -1 if budget is None else budget, *(v for item in (busy or {}).items() for v in item),
        )
        return entries(flat)

    @transient
    def ack(self, urls: Sequence[str]) -> int:
        return int(self.db.run("ack", *map(lease_key, urls))) if urls else 0

    @transient
    def mark_done(self, entries_: Sequence[Entry]) -> int:
        args: list[Any] = []
        for e in entries_:
            args += list(encode_member(e.url))
        return int(self.db.run("mark_done", *args)) if entries_ else 0

    @transient
    def release(self, urls: Sequence[str]) -> int:
        return int(self.db.run("requeue", self.owner, "0", *map(lease_key, urls))) if urls else 0

    @transient
    def renew(self, urls: Sequence[str]) -> int:
        return int(self.db.run("renew", self.owner, self.lease_seconds, *map(lease_key, urls))) if urls else 0

    @transient
    def retry_later(self, url: str, retries: int, seconds: float) -> Retry | None:
        reply = self.db.run("retry_later", self.owner, lease_key(url), retries, repr(float(seconds)),
                            RETRY_MAX_SECONDS)
        return None if reply is None else Retry(int(reply[0]), float(reply[1]))

    @transient
    def reap(self) -> int:
        return int(self.db.run("requeue", "", "1"))

    @transient
    def recover(self) -> int:
        """Leases of workers that are not alive go back at once, and the places they
        held on their hosts: a worker that closed (its failed URLs waiting for another
        try), one whose heartbeat is older than ``ALIVE_SECONDS``, or one known to be
        gone although it beat a moment ago (``owners.is_gone``: a process of this
        machine's process table, killed). A live worker's leases, and this one's, are
        left alone."""
        prefix = self.db.prefix
        gone = [owner for owner in (o.decode() for o in self.db.redis.hkeys(prefix + "alive"))
                if owner != self.owner and is_gone(owner)]
        return int(self.db.run("recover", ALIVE_SECONDS, self.owner, *gone))

    @transient
    def has_work(self) -> bool:
        return bool(int(self.db.run("has_work")))

    @transient
    def next_ready(self) -> float | None:
        value = float(self.db.run("next_ready"))
        return None if value < 0 else value

    @transient
    def counts(self) -> Counts:
        pipe = self.db.redis.pipeline(transaction=True)
        pipe.hgetall(self.db.prefix + "n")
        pipe.hlen(self.db.prefix + "tr")
        raw, retrying = pipe.execute()
        get = lambda k: int(raw.get(k.encode(), 0))  # noqa: E731
        return Counts(queued=get("q"), leased=get("l"), done=get("d"), retrying=int(retrying))

    @transient
    def hosts(self, limit: int = 50) -> list[HostState]:
        flat = [x.decode() if isinstance(x, bytes) else str(x) for x in self.db.run("hosts")]
        out = []
        for i in range(0, len(flat), 9):
            host, seen, done, leased, best, nxt, delay, ys, yn = flat[i : i + 9]
            queued = int(seen) - int(done) - int(leased)
            mean = float(ys) / int(yn) if yn and int(yn) else None
            out.append(HostState(host, queued, int(leased), int(done), float(best) if best else None,
                                 float(nxt or 0), float(delay) if delay else None, mean))
        out.sort(key=lambda h: (-h.queued, h.host))
        out = out[:limit]
        if out:  # places held and requests in line, counted as Redis' clock has them
            seconds, micros = self.db.redis.time()
            now = seconds + micros / 1e6
            pipe = self.db.redis.pipeline(transaction=False)
            for h in out:
                pipe.zcount(f"{self.db.prefix}hx:{h.host}", f"({now}", "+inf")
                pipe.zcount(f"{self.db.prefix}hwt:{h.host}", f"({now}", "+inf")
            counted = pipe.execute()
            for i, h in enumerate(out):
                h.downloading, h.waiting = counted[2 * i], counted[2 * i + 1]
        return out

    @transient
    def top(self, n: int = 20) -> list[Entry]:
        if n <= 0:
            return []
        best = entries(self.db.run("top", n, max(n, 50)))
        best.sort(key=lambda e: -e.priority)
        return best[:n]
