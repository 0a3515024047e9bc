"""This worker's link to its crawl's frontier: it opens it, rides out its outages, and
writes what the crawl adds to the queue in batches.

* ``open(spider)`` opens the frontier named by ``SPITAG_FRONTIER`` for the spider's
  crawl, with the strategy's host ranking and the politeness settings, and sends
  ``frontier_opened``: each component keeps the contract it uses.
* Pushes (new URLs), acks, hand-backs and canonical URLs done are buffered and written
  every ``PUSH_INTERVAL`` (0.2 s), when pages are stored, and when the scheduler is
  about to pop, so the reactor never waits on one round trip per request; each write
  sends ``frontier_flushing``, for what other components buffered to go with it.
* A frontier that stops answering is an outage (``spitag.outage``): what is buffered
  waits in memory and is written once it is back; nothing is dropped.
"""

from __future__ import annotations

import logging
import math
from typing import TYPE_CHECKING, Any

from spitag import compat
from spitag.aio import every
from spitag.errors import FrontierUnavailableError
from spitag.frontier import Entry, Limits, Politeness, open_frontier
from spitag.machine import this_machine
from spitag.options import Options
from spitag.outage import Outage
from spitag.signals import frontier_closing, frontier_flushing, frontier_opened
from spitag.urls import redact

if TYPE_CHECKING:
    from scrapy import Spider
    from scrapy.crawler import Crawler

    from spitag.frontier import Counts, Frontier, UrlQueue

logger = logging.getLogger(__name__)

PUSH_INTERVAL = 0.2
BATCH = 1000


def urls_per_host(settings: Any) -> int:
    """How many of a host's URLs this worker may have on their way to a download at
    once: ``CONCURRENT_REQUESTS_PER_DOMAIN``; with AutoThrottle, no more than its
    target concurrency can use, plus one waiting at the gate (spitag.throttle spaces
    the host's requests so that about that many are in progress): more would only
    wait in Scrapy's downloader, where they count against ``CONCURRENT_REQUESTS`` and
    hold up every other host."""
    per_host = max(settings.getint("CONCURRENT_REQUESTS_PER_DOMAIN"), 1)
    if settings.getbool("AUTOTHROTTLE_ENABLED"):
        target = settings.getfloat("AUTOTHROTTLE_TARGET_CONCURRENCY")
        per_host = min(per_host, math.ceil(target) + 1)
    return per_host


class FrontierClient:
    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler
        self.options = Options.of(crawler)
        self.outage = Outage.of(crawler, "frontier", self.options.frontier)
        self.frontier: Frontier | None = None
        self.pushes: list[tuple[Entry, str]] = []
        self.acks: list[str] = []
        self.releases: list[str] = []  # leases handed back unfinished (a host down)
        self.canonicals: list[Entry] = []
        self.loop: Any = None

    @property
    def queue(self) -> UrlQueue:
        assert self.frontier is not None
        return self.frontier.queue

    def open(self, spider: Spider) -> Frontier:
        options = self.options
        strategy = spider.strategy
        self.frontier = open_frontier(
            options.frontier,
            spider.crawl_id,
            lease_seconds=options.lease_seconds,
            politeness=Politeness(delay=options.host_delay, per_host=urls_per_host(self.crawler.settings)),
            ranking=strategy.ranking,
            machine=this_machine(options.machine),
            limits=Limits(pages=options.page_budget, per_host=options.max_pages_per_host),
        )
        if self.crawler.settings.get("JOBDIR"):
            logger.warning("JOBDIR is not used by a frontier crawl: the frontier %s keeps the crawl's state,"
                           " and running the same command again resumes it", redact(options.frontier))
        self.crawler.signals.send_catch_log(frontier_opened, frontier=self.frontier)
        self.loop = every(PUSH_INTERVAL, self.flush)
        return self.frontier

    def call(self, fn: Any, *args: Any, default: Any = None) -> Any:
        """A frontier operation; in an outage, ``default`` (``spitag.outage``)."""
        return self.outage.call(fn, *args, default=default)

    def counts(self) -> Counts | None:
        return self.call(self.queue.counts)

    # -- buffered writes ------------------------------------------------------------
    def push(self, entry: Entry, combine: str) -> None:
        self.pushes.append((entry, combine))
        if len(self.pushes) >= BATCH:
            self.flush()

    def ack(self, urls: list[str]) -> None:
        self.acks.extend(urls)
        self.flush()

    def release(self, urls: list[str]) -> None:
        self.releases.extend(urls)

    def mark_done(self, entries: list[Entry]) -> None:
        self.canonicals.extend(entries)

    @property
    def unwritten(self) -> bool:
        return bool(self.pushes or self.acks or self.releases or self.canonicals)

    def flush(self) -> None:
        """Write what is buffered, in batches; kept, and written later, in an outage."""
        if self.frontier is None or not self.outage.ready():
            return
        if self.unwritten and not self._write():
            return
        self.crawler.signals.send_catch_log(frontier_flushing)

    def _write(self) -> bool:
        queue, stats = self.frontier.queue, self.crawler.stats
        acked = bool(self.acks)
        try:
            while self.pushes:
                batch = self.pushes[:BATCH]
                by_combine: dict[str, list[Entry]] = {}
                for entry, combine in batch:
                    by_combine.setdefault(combine, []).append(entry)
                for combine, entries in by_combine.items():
                    result = queue.push(entries, combine)
                    stats.inc_value("spitag/frontier/pushed", len(entries))
                    stats.inc_value("spitag/frontier/new", result.new)
                    stats.inc_value("spitag/frontier/raised", result.raised)
                    stats.inc_value("spitag/frontier/seen_done", result.ignored)
                    if result.over:
                        stats.inc_value("spitag/frontier/over_host_limit", result.over)
                del self.pushes[: len(batch)]  # pushes are idempotent: a replay is harmless
            while self.acks:
                urls = self.acks[:BATCH]
                stats.inc_value("spitag/frontier/acked", queue.ack(urls))
                del self.acks[: len(urls)]
            while self.releases:
                urls = self.releases[:BATCH]
                stats.inc_value("spitag/frontier/set_aside", queue.release(urls))
                del self.releases[: len(urls)]
            if self.canonicals:
                stats.inc_value("spitag/frontier/canonical_done", queue.mark_done(self.canonicals))
                self.canonicals = []
        except FrontierUnavailableError as exc:
            self.outage.failed(exc)
            return False
        self.outage.answered()
        if acked:
            self.wake()  # a lease ended: its host may give another URL (a delay's)
        return True

    def wake(self) -> None:
        """Ask the engine for requests now: a URL left its lease, a host may be ready."""
        compat.wake_engine(getattr(self.crawler, "engine", None))

    def close(self) -> None:
        """A last write, outage or not; what cannot be written is said, and comes back
        to the next run (its leases expire)."""
        if self.loop is not None and self.loop.running:
            self.loop.stop()
        if self.frontier is None:
            return
        self.outage.retry_at = 0.0
        self.crawler.signals.send_catch_log(frontier_closing, frontier=self.frontier)
        self.outage.retry_at = 0.0
        self.flush()
        if self.pushes or self.acks:
            logger.warning(
                "frontier unreachable at shutdown: %d discovered URLs not pushed, %d stored"
                " URLs not acknowledged (their leases expire and are fetched again)",
                len(self.pushes), len(self.acks),
            )
        self.frontier.close()
