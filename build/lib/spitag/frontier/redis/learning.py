"""What the strategy learns (``spitag.frontier.learning``) in Redis: totals per host
(``ys``/``yn``, ``le``) and the ``learnt`` stream the other workers read."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import Any

from spitag.frontier.learning import LearningLog
from spitag.frontier.records import Learnt, link_rows
from spitag.frontier.redis.db import RedisDB, transient

# learn batches kept in the ``learnt`` stream: at five a second a worker (one a flush),
# 10 workers fill it in 40 s; only a reader that far behind misses some (a worker that
# starts or resumes reads the totals, not the stream)
LEARNT_KEEP = 2_000
LEARNT_READ = 1_000  # of them read by one ``learnt`` call


def _link_row(host: bytes, value: bytes) -> tuple[str, float, int, int] | None:
    """An ``le`` entry as (host, log sum, links, 64-bit mask); None if unreadable."""
    try:
        log_sum, links, high, low = value.split(b":")
        row = (host.decode(), float(log_sum), int(links), ((int(high) & 0xFFFFFFFF) << 32) | (int(low) & 0xFFFFFFFF))
    except ValueError:
        return None
    return row if row[2] > 0 and math.isfinite(row[1]) else None


class RedisLearning(LearningLog):
    def __init__(self, db: RedisDB) -> None:
        self.db = db
        self.owner = db.owner
        self.prefix = db.prefix

    @transient
    def learn(
        self, observations: Sequence[tuple[str, float]], links: Sequence[tuple[str, float, int, int]] = ()
    ) -> None:
        sums: dict[str, list[float]] = {}
        for host, score in observations:
            total = sums.setdefault(host, [0.0, 0])
            total[0] += score
            total[1] += 1
        evidence = link_rows(links)
        if not sums and not evidence:
            return
        feed = json.dumps([[h, float(sc), int(n)] for h, (sc, n) in sums.items()], separators=(",", ":"))
        told = json.dumps([[h, ls, n, m] for h, (ls, n, m) in evidence.items()], separators=(",", ":"))
        args: list[Any] = [self.owner, feed, LEARNT_KEEP, told if evidence else "", len(sums)]
        for host, (score, pages) in sums.items():
            args += [host, repr(float(score)), int(pages)]
        for host, (log_sum, n, mask) in evidence.items():
            args += [host, repr(log_sum), n, mask >> 32, mask & 0xFFFFFFFF]
        self.db.run("learn", *args)

    @transient
    def rescore(self, estimates: Sequence[tuple[str, float]]) -> int:
        args: list[Any] = []
        for host, value in estimates:
            if math.isfinite(value):
                args += [host, repr(float(value))]
        return int(self.db.run("rescore", *args)) if args else 0

    @transient
    def learnt(self, since: str | None) -> tuple[str, list[Learnt]]:
        """At first, every host's totals (``ys``/``yn``, ``le``) and the ``learnt``
        stream's last id, read in one transaction; then the stream's entries after the
        cursor written by other owners, a batch each (at most ``LEARNT_READ`` a call; the
        next call goes on). A worker that falls more than ``LEARNT_KEEP`` entries behind
        misses those. An entry that is not of the expected shape is skipped."""
        redis = self.db.redis
        key = self.prefix + "learnt"
        if since is None:
            pipe = redis.pipeline(transaction=True)
            pipe.xrevrange(key, count=1)
            for name in ("ys", "yn", "le"):
                pipe.hgetall(self.prefix + name)
            last, sums, pages, evidence = pipe.execute()
            cursor = last[0][0].decode() if last else "0-0"
            batch = Learnt(
                [(h.decode(), float(sums.get(h, 0.0)), int(n)) for h, n in pages.items() if int(n) > 0],
                [row for row in (_link_row(h, v) for h, v in evidence.items()) if row is not None],
            )
            return cursor, [batch] if batch.pages or batch.links else []
        read = redis.xread({key: since}, count=LEARNT_READ)
        batches: list[Learnt] = []
        cursor = since
        for _, found_entries in read:
            for entry_id, fields in found_entries:
                cursor = entry_id.decode()
                if fields.get(b"o", b"").decode() == self.owner:
                    continue
                try:
                    rows = [(str(h), float(sc), int(n)) for h, sc, n in json.loads(fields.get(b"d", b"[]"))]
                    found = link_rows(json.loads(fields.get(b"l", b"[]")))
                except (ValueError, TypeError):
                    continue  # not ours to crash on: an entry written by something else
                batches.append(Learnt(rows, [(h, ls, n, m) for h, (ls, n, m) in found.items()]))
        return cursor, batches
