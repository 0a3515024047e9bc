"""A Scrapy scheduler over a SpiTag frontier (``SCHEDULER = "spitag.scheduler.FrontierScheduler"``).

It replaces Scrapy's memory/disk queues and its dupe filter: the frontier is both the
queue and the record of what was seen and done (``spitag.frontier.base``).

* ``enqueue_request`` buffers pushes; they are written in batches (every 0.2 s, or
  before a pop), so the reactor never waits on one round trip per request.
* ``next_request`` serves from a small buffer of popped, leased entries and refills it
  with one ``pop`` when empty. When no host is ready it arms a timer for the moment one
  will be, and wakes the engine then (Scrapy alone would wait for its 5 s heartbeat).
* Leases are acknowledged when the store commits the item (``batch_stored``), or at
  once for requests that end without an item (``url_settled``); leases of downloads
  still running are renewed. On close, what was popped but not done is released.
* ``has_pending_requests`` is true while anything is queued or leased by anyone.
"""

from __future__ import annotations

import logging
import time
from collections import deque
from typing import TYPE_CHECKING, Any

from scrapy import Request, signals
from scrapy.core.scheduler import BaseScheduler
from scrapy.utils.defer import deferred_from_coro
from twisted.internet import reactor, task

from spitag.config import CrawlConfig
from spitag.frontier import Entry, Politeness, open_frontier
from spitag.scoring import Strategy
from spitag.signals import batch_stored, frontier_opened, url_settled
from spitag.urls import host_of, redact, try_normalize

if TYPE_CHECKING:
    from scrapy import Spider
    from scrapy.crawler import Crawler

    from spitag.frontier import Frontier

logger = logging.getLogger(__name__)

PUSH_INTERVAL = 0.2
REAP_INTERVAL = 5.0
CONTROL_INTERVAL = 1.0


class FrontierScheduler(BaseScheduler):
    def __init__(self, crawler: Crawler) -> None:
        settings = crawler.settings
        config = CrawlConfig.from_settings(settings)
        self.crawler = crawler
        self.frontier_url = config.frontier_url
        self.lease_seconds = config.lease_seconds
        self.pop_batch = config.pop_batch
        self.politeness = Politeness(
            delay=settings.getfloat("DOWNLOAD_DELAY"),
            per_host=max(settings.getint("CONCURRENT_REQUESTS_PER_DOMAIN"), 1),
        )
        self.host_weight = config.host_weight
        self.score_half = settings.getfloat("SPITAG_SCORE_HALF")
        # A lease is renewed while its download may still legitimately be running.
        self.max_fetch_seconds = (
            (settings.getint("RETRY_TIMES") + 1) * settings.getfloat("DOWNLOAD_TIMEOUT") + 120
        )
        self.frontier: Frontier | None = None
        self.spider: Spider | None = None
        self.combine = "max"
        self.pending: list[tuple[Entry, str]] = []
        self.ready: deque[Entry] = deque()
        self.in_flight: dict[str, float] = {}  # leased by this process → when popped
        self.learnt: list[tuple[str, float]] = []
        self.loops: list[task.LoopingCall] = []
        self.wake_call: Any = None

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> FrontierScheduler:
        return cls(crawler)

    @property
    def stats(self) -> Any:
        return self.crawler.stats

    # -- life cycle ----------------------------------------------------------------
    def open(self, spider: Spider) -> None:
        self.spider = spider
        strategy: Strategy | None = getattr(spider, "strategy", None)
        self.combine = strategy.combine if strategy is not None else "max"
        crawl = getattr(spider, "crawl_id", spider.name)
        self.frontier = open_frontier(
            self.frontier_url,
            crawl,
            lease_seconds=self.lease_seconds,
            politeness=self.politeness,
            host_weight=self.host_weight if getattr(strategy, "learns_hosts", False) else 0.0,
            score_half=self.score_half,
            strategy=strategy.name if strategy is not None else None,
        )
        recovered = self.frontier.recover()
        counts = self.frontier.counts()
        logger.info(
            "frontier %s, crawl %s: %d queued, %d leased, %d done%s",
            redact(self.frontier_url), crawl, counts.queued, counts.leased, counts.done,
            f" ({recovered} unfinished leases of an earlier run taken back)" if recovered else "",
        )
        if counts.done or counts.queued:
            self.stats.set_value("spitag/frontier/resumed", 1)
        if self.frontier.stop_requested():
            self.frontier.clear_stop()  # started again after `scrapy stop`: resume
        self.start_urls_key = self.crawler.settings.get("REDIS_START_URLS_KEY", "%(name)s:start_urls") % {
            "name": spider.name
        }
        signals_ = self.crawler.signals
        signals_.send_catch_log(frontier_opened, frontier=self.frontier)
        signals_.connect(self._on_batch_stored, signal=batch_stored)
        signals_.connect(self._on_url_settled, signal=url_settled)
        signals_.connect(self._on_item_scraped, signal=signals.item_scraped)
        for interval, work in (
            (PUSH_INTERVAL, self._flush),
            (max(self.lease_seconds / 3, 0.5), self._renew),
            (REAP_INTERVAL, self._reap),
            (CONTROL_INTERVAL, self._control),
        ):
            loop = task.LoopingCall(self._guarded, work)
            loop.start(interval, now=False)
            self.loops.append(loop)

    def close(self, reason: str) -> None:
        for loop in self.loops:
            if loop.running:
                loop.stop()
        if self.wake_call is not None and self.wake_call.active():
            self.wake_call.cancel()
        if self.frontier is None:
            return
        self._flush()
        unfinished = list(self.in_flight)
        released = self.frontier.release(unfinished) if unfinished else 0
        self.stats.inc_value("spitag/frontier/released", released)
        counts = self.frontier.counts()
        logger.info(
            "frontier closed (%s): %d queued, %d leased, %d done; %d unfinished released",
            reason, counts.queued, counts.leased, counts.done, released,
        )
        self.frontier.close()

    # -- the engine's side ---------------------------------------------------------
    def enqueue_request(self, request: Request) -> bool:
        meta = request.meta
        url = meta.get("spitag_url") or try_normalize(request.url)
        if url is None:
            self.stats.inc_value("spitag/frontier/rejected")
            return False
        priority = meta.get("spitag_priority")
        entry = Entry(
            url=url,
            host=host_of(url),
            depth=int(meta.get("depth", 0)),
            priority=float(request.priority if priority is None else priority),
            reason=meta.get("spitag_reason"),
        )
        self.pending.append((entry, meta.get("spitag_combine", self.combine)))
        if len(self.pending) >= 1000:
            self._flush()
        return True

    def next_request(self) -> Request | None:
        if not self.ready:
            self._flush()
            popped = self.frontier.pop(self.pop_batch)
            if not popped:
                self._wake_when_ready()
                return None
            now = time.monotonic()
            for entry in popped:
                self.in_flight[entry.url] = now
            self.ready.extend(popped)
            self.stats.inc_value("spitag/frontier/popped", len(popped))
        return self._request(self.ready.popleft())

    def has_pending_requests(self) -> bool:
        if self.ready or self.pending:
            return True
        return self.frontier is not None and self.frontier.has_work()

    def __len__(self) -> int:
        counts = self.frontier.counts() if self.frontier is not None else None
        return len(self.ready) + len(self.pending) + (counts.queued if counts else 0)

    # -- internals -----------------------------------------------------------------
    def _request(self, entry: Entry) -> Request:
        make = getattr(self.spider, "make_request", None)
        if make is not None:
            return make(entry.url, depth=entry.depth, priority=entry.priority, reason=entry.reason)
        return Request(entry.url, priority=int(entry.priority), meta={"depth": entry.depth})

    def _flush(self) -> None:
        if self.pending:
            by_combine: dict[str, list[Entry]] = {}
            for entry, combine in self.pending:
                by_combine.setdefault(combine, []).append(entry)
            self.pending = []
            for combine, entries in by_combine.items():
                result = self.frontier.push(entries, combine)
                self.stats.inc_value("spitag/frontier/pushed", len(entries))
                self.stats.inc_value("spitag/frontier/new", result.new)
                self.stats.inc_value("spitag/frontier/raised", result.raised)
                self.stats.inc_value("spitag/frontier/seen_done", result.ignored)
        if self.learnt:
            observations, self.learnt = self.learnt, []
            for host, score in observations:
                self.frontier.learn(host, score)

    def _ack(self, urls: list[str]) -> None:
        if not urls or self.frontier is None:
            return
        acked = self.frontier.ack(urls)
        for url in urls:
            self.in_flight.pop(url, None)
        self.stats.inc_value("spitag/frontier/acked", acked)
        self._wake()

    def _on_batch_stored(self, urls: list[str], spider: Spider | None = None) -> None:
        self._ack(urls)

    def _on_url_settled(self, url: str, spider: Spider | None = None) -> None:
        self._ack([url])

    def _on_item_scraped(self, item: Any, response: Any = None, spider: Any = None) -> None:
        if self.host_weight > 0 and item.get("semantic") is not None and item.get("md5dia"):
            self.learnt.append((host_of(item["url"]), float(item.get("score") or 0.0)))

    def _renew(self) -> None:
        if not self.in_flight:
            return
        now = time.monotonic()
        alive = [u for u, t in self.in_flight.items() if now - t < self.max_fetch_seconds]
        if alive:
            self.frontier.renew(alive)

    def _reap(self) -> None:
        reaped = self.frontier.reap()
        if reaped:
            self.stats.inc_value("spitag/frontier/reaped", reaped)
            logger.info("frontier: %d expired leases put back in the queue", reaped)
            self._wake()

    def _control(self) -> None:
        """``scrapy stop`` and seeds added to a running crawl (``scrapy inject``, or the
        scrapy-redis start-URLs list ``<spider>:start_urls`` on a Redis frontier)."""
        if self.frontier.stop_requested():
            logger.info("stop requested for crawl %s: stopping gracefully", self.frontier.crawl)
            deferred_from_coro(self.crawler.engine.close_spider_async(reason="stopped"))
            for loop in self.loops:
                if loop.running:
                    loop.stop()
            return
        taken = getattr(self.frontier, "take_start_urls", None)
        if taken is None:
            return
        added = [u for u in (try_normalize(raw) for raw in taken(self.start_urls_key)) if u]
        if added:
            make = getattr(self.spider, "seed_request", None)
            for url in added:
                if make is not None:
                    self.enqueue_request(make(url))
                else:
                    self.enqueue_request(Request(url, meta={"depth": 0, "spitag_combine": "max"}))
            logger.info("%d seed(s) added from %s", len(added), self.start_urls_key)
            self.stats.inc_value("spitag/frontier/seeds_added", len(added))
            self._flush()
            self._wake()

    def _guarded(self, work: Any) -> None:
        try:
            work()
        except Exception:
            logger.exception("frontier %s: %s failed", redact(self.frontier_url), work.__name__)

    def _wake_when_ready(self) -> None:
        """Arm one timer for the moment the next host becomes ready."""
        if self.wake_call is not None and self.wake_call.active():
            return
        delay = self.frontier.next_ready()
        if delay is None:
            return
        self.wake_call = reactor.callLater(min(max(delay, 0.01), 5.0), self._wake)

    def _wake(self) -> None:
        engine = getattr(self.crawler, "engine", None)
        slot = getattr(engine, "_slot", None)  # Scrapy has no public "wake up" call
        if slot is not None:
            slot.nextcall.schedule()
