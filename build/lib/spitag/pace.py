"""How many pages may be between request and score: as many as keep the profile pool
fed, and no more, so that the next pages are chosen with the freshest scores.

A page requested is a choice made with the scores known at that moment. When pages
come faster than they are profiled (a local web; a real one on a busy machine), every
page waiting to be profiled is a choice made blind to it, and waiting pages add no
throughput: the CPU is busy anyway. On a real web the downloads are the slow part and
the crawl needs many of them in flight. ``UnscoredLimit`` tells the two apart with
Little's law: the downloads needed in flight are the pages answered per second times
the seconds a download takes. The limit is a backlog of ``SPITAG_MAX_BACKLOG`` pages
for the profile pool plus twice those downloads (room to grow, so a crawl held by the
network doubles its downloads each window until ``SPITAG_MAX_UNSCORED`` caps them).

The backlog is the machine's: workers of one crawl on one machine share its CPUs, so
each keeps ``SPITAG_MAX_BACKLOG / n`` of it (``share(n)``, n from the frontier's
heartbeat; which workers share a machine: ``spitag.machine``). Two workers on one
2-core machine, each with the whole backlog, chose about twice as many pages blind to
the latest scores as one worker (``bench/focus.py`` ``lag@300``, p10: 20–28 pages
against 14–15; shared, 12–15).
"""

from __future__ import annotations

import logging
import math
import time
from collections import deque
from typing import Any

from spitag import compat
from spitag.urls import host_of

logger = logging.getLogger(__name__)

WINDOW = 32  # the last answers the rate and latency are measured over


class UnscoredLimit:
    """The scheduler's limit on pages requested and not yet scored (downloading, or
    downloaded and waiting for the spider), from the pages answered so far.

    ``max_unscored`` is the cap (0: no limit at all); ``max_backlog`` the pages allowed
    to wait for the profile pool (0: the cap alone, not adapted). Until ``WINDOW`` / 2
    answers are seen, twice the backlog + 1 (within the cap): as if the downloads needed
    were half the backlog. Not the cap: the seeds' links all arrive at once, and under
    the cap (64) the first 64 pages were all chosen from the seeds' scores alone; from
    this start a network-bound crawl still doubles its downloads each window.
    """

    def __init__(self, max_unscored: int, max_backlog: int, window: int = WINDOW, start: int | None = None) -> None:
        self.max_unscored = max_unscored
        self.max_backlog = max_backlog
        self.start = start  # the limit before anything is measured; None: 2 · backlog + 1
        self.answers: deque[tuple[float, float]] = deque(maxlen=window)  # (when, latency)
        self.latency_sum = 0.0
        self.workers_here = 1  # workers of the crawl on this machine (share)

    def share(self, workers_here: int) -> None:
        """``workers_here`` workers of the crawl (this one included) share this
        machine: this one keeps that fraction of the backlog (at least one page)."""
        self.workers_here = max(int(workers_here), 1)

    @property
    def backlog(self) -> int:
        return max(-(-self.max_backlog // self.workers_here), 1)

    def answered(self, now: float, latency: float) -> None:
        """One download answered at ``now`` (monotonic seconds) after ``latency`` seconds."""
        if len(self.answers) == self.answers.maxlen:
            self.latency_sum -= self.answers[0][1]
        latency = max(latency, 0.0)
        self.answers.append((now, latency))
        self.latency_sum += latency

    def downloads_needed(self) -> float | None:
        """Little's law over the window: answers per second × mean seconds per
        download (None until the window is half full, or when it spans no time)."""
        n = len(self.answers)
        if n < max(self.answers.maxlen // 2, 2):
            return None
        span = self.answers[-1][0] - self.answers[0][0]
        if span <= 0:
            return None
        return (n - 1) / span * (self.latency_sum / n)

    def limit(self) -> int:
        """Pages that may be unscored now (0: no limit)."""
        if not self.max_unscored or not self.max_backlog:
            return self.max_unscored
        needed = self.downloads_needed()
        if needed is None:
            return min(self.max_unscored, 2 * self.backlog + 1 if self.start is None else self.start)
        return min(self.max_unscored, self.backlog + 1 + math.ceil(2 * needed))


class Pace:
    """The scheduler's view of the pages between request and score: the adaptive limit
    (``UnscoredLimit``, fed with each answer's latency and the workers sharing this
    machine) against the pages in Scrapy's downloader and spider now."""

    def __init__(self, crawler: Any, max_unscored: int, max_backlog: int, pop_batch: int) -> None:
        from scrapy import signals

        from spitag.signals import workers_here

        self.crawler = crawler
        self.pop_batch = pop_batch
        self.limit = UnscoredLimit(max_unscored, max_backlog)
        crawler.signals.connect(self._answered, signal=signals.response_received)
        crawler.signals.connect(self._workers_here, signal=workers_here)

    def _answered(self, response: Any, request: Any = None, spider: Any = None) -> None:
        latency = request.meta.get("download_latency") if request is not None else None
        if latency is not None:
            self.limit.answered(time.monotonic(), float(latency))

    def _workers_here(self, count: int) -> None:
        changed = count != self.limit.workers_here
        self.limit.share(count)
        if changed and self.limit.max_backlog:
            logger.info("%d worker(s) of this crawl on this machine: this one keeps %d of the "
                        "%d pages of profile backlog", count, self.limit.backlog, self.limit.max_backlog)

    def room(self) -> tuple[int, int]:
        """(how many more pages may be requested now, the limit): pages downloading or
        downloaded and not yet through the spider (profile, score) count against it.
        Popping no more keeps the choice of the next pages as late as it can be, with
        the scores of every page fetched before."""
        limit = self.limit.limit()
        if not limit:
            return self.pop_batch, limit
        stats = self.crawler.stats
        stats.min_value("spitag/frontier/unscored_limit_min", limit)
        stats.max_value("spitag/frontier/unscored_limit_max", limit)
        engine = getattr(self.crawler, "engine", None)
        in_spider = compat.pages_in_spider(engine)
        if in_spider is None:
            return self.pop_batch, limit
        return limit - len(compat.downloads_active(engine)) - in_spider, limit

    def busy_hosts(self) -> dict[str, int]:
        """Per host, this worker's requests in Scrapy's downloader: downloading, or
        waiting there for one of the host's places or its delay (spitag.politeness).
        The frontier gives a host only what its places can take besides them: without
        that, pops of a slow host's URLs pile up in the downloader and hold up every
        other host (Scrapy counts them against CONCURRENT_REQUESTS while they wait)."""
        busy: dict[str, int] = {}
        for request in compat.downloads_active(getattr(self.crawler, "engine", None)):
            host = host_of(request.url)
            busy[host] = busy.get(host, 0) + 1
        return busy
