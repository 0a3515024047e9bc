"""What the strategy learns (``spitag.frontier.learning``) in SQLite: one owner, whose
strategy saw its own pages first hand, so ``learnt`` gives the totals once."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence

from spitag.frontier.learning import LearningLog
from spitag.frontier.records import Learnt, link_rows
from spitag.frontier.sqlite.db import SQLiteDB, signed
from spitag.linkevidence import MASK


class SQLiteLearning(LearningLog):
    def __init__(self, db: SQLiteDB) -> None:
        self.db = db
        self.conn = db.conn
        self.crawl = db.crawl

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
        with self.db.tx():
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
                [(self.crawl, h, ls, n, signed(m)) for h, (ls, n, m) in evidence.items()],
            )
            if self.db.ranking.learns:
                self.db.refresh_hosts(sums)

    def rescore(self, estimates: Sequence[tuple[str, float]]) -> int:
        values = {host: float(value) for host, value in estimates if math.isfinite(value)}
        if not values:
            return 0
        with self.db.tx():
            self.conn.executemany(
                "INSERT INTO frontier_host (crawl, host, estimate) VALUES (?, ?, ?)"
                " ON CONFLICT (crawl, host) DO UPDATE SET estimate = excluded.estimate",
                [(self.crawl, h, v) for h, v in values.items()],
            )
            # a host not learnt ranks by its estimate alone, whatever its best
            ranked = self.conn.executemany(
                "UPDATE frontier_host SET rank = ? WHERE crawl = ? AND host = ? AND pages = 0 AND best IS NOT NULL",
                [(self.db.ranking.rank(v, 0.0, 0, v), self.crawl, h) for h, v in values.items()],
            ).rowcount
        return ranked

    def learnt(self, since: str | None) -> tuple[str, list[Learnt]]:
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
