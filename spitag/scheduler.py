"""The Scrapy scheduler of SpiTag's spider: an adapter over the crawl's frontier.

It replaces Scrapy's memory and disk queues and its dupe filter: the frontier is both
the queue and the record of what was seen and done (``spitag.frontier.queue``).

* ``enqueue_request`` hands the request's entry to the frontier client, which pushes in
  batches (``spitag.client``).
* ``next_request`` serves from a few popped entries, each leased to this worker
  (``spitag.leases``), and pops again when they are gone — no more than the pages that
  may be between request and score (``spitag.pace``) and the page budget
  (``spitag.budget``) allow. When no host is ready it arms a timer for the moment one
  will be and wakes the engine then (Scrapy alone would wait for its 5-s heartbeat).
* ``has_pending_requests`` is true while anything is queued or leased by anyone, so a
  worker does not quit while another's leases could still come back.

A request the frontier cannot rebuild — one not built from a frontier entry (by the
spider's ``frontier_request``, which a subclass may override to choose its own callback
for some URLs) and whose callback is not the spider's ``parse``, such as ``scrapy
parse``'s — waits in memory, as Scrapy's disk queues keep
the requests they cannot serialize; and the frontier is not popped before the spider
has handed over a request of its own (its seeds), so that ``scrapy parse`` shows one
page and does not resume the crawl. What else a crawl needs of its frontier is done by
collaborators with one job each: ``spitag.workers`` (joining, heartbeats, gone
workers), ``spitag.control`` (stop, seeds added), ``spitag.learning`` (what the
strategy learns), ``spitag.recrawl`` (URLs due again).
"""

from __future__ import annotations

import logging
from collections import deque
from typing import TYPE_CHECKING, Any

from scrapy.core.scheduler import BaseScheduler

from spitag import meta
from spitag.aio import running_reactor
from spitag.budget import PageBudget
from spitag.client import FrontierClient
from spitag.leases import Leases
from spitag.pace import Pace
from spitag.store import where

if TYPE_CHECKING:
    from scrapy import Request, Spider
    from scrapy.crawler import Crawler

    from spitag.frontier import Entry

logger = logging.getLogger(__name__)

IDLE_POLL = 0.5  # seconds between looks while nothing is queued (other workers may add some)
HOLD_BACK_POLL = 0.25
BUSY_POLL = 0.1  # seconds between pops while the only ready hosts are busy with this worker's requests


class FrontierScheduler(BaseScheduler):
    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler
        self.client = FrontierClient(crawler)
        options = self.client.options
        self.leases = Leases(crawler, self.client)
        self.pace = Pace(crawler, options.max_unscored, options.max_backlog, options.pop_batch)
        self.budget = PageBudget(crawler, options.page_budget)
        self.pop_batch = options.pop_batch
        self.spider: Spider | None = None
        self.combine = "max"  # the strategy's rule for a URL found again while it waits
        self.ready: deque[Entry] = deque()  # popped and leased, not yet handed to the engine
        self.retries: deque[Request] = deque()  # our own leases, asked again (RetryMiddleware)
        self.foreign: deque[Request] = deque()  # requests the frontier could not rebuild
        self.own_seen = False  # the spider handed over a request of its own: pop the frontier
        self.wake_call: Any = None

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> FrontierScheduler:
        return cls(crawler)

    def open(self, spider: Spider) -> None:
        self.spider = spider
        self.combine = spider.strategy.combine
        frontier = self.client.open(spider)
        counts = frontier.queue.counts()
        recovered = self.crawler.stats.get_value("spitag/frontier/recovered")  # (spitag.workers, at open)
        logger.info("frontier %s, crawl %s: %d queued, %d leased, %d done%s", where(frontier.url, "SPITAG_FRONTIER"),
                    frontier.crawl, counts.queued, counts.leased, counts.done,
                    f" ({recovered} unfinished leases of an earlier run taken back)" if recovered else "")
        if counts.done or counts.queued:
            self.crawler.stats.set_value("spitag/frontier/resumed", 1)
        self.budget.start(counts)
        self.leases.start()

    def close(self, reason: str) -> None:
        if self.wake_call is not None and self.wake_call.active():
            self.wake_call.cancel()
        if self.client.frontier is None:
            return
        self.client.flush()
        released = self.leases.close()
        counts = self.client.counts()
        if counts is not None:
            logger.info("frontier closed (%s): %d queued, %d leased, %d done; %d unfinished released",
                        reason, counts.queued, counts.leased, counts.done, released)
        self.client.close()

    # -- the engine's side ---------------------------------------------------------
    def enqueue_request(self, request: Request) -> bool:
        if meta.url_of(request) is None and request.callback not in (None, self.spider.parse):
            # the spider's own request for its own callback, not built from a frontier
            # entry (``frontier_request``): served first, never stored in the frontier
            self.foreign.append(request)
            return True
        self.own_seen = True
        entry = meta.entry_of(request)
        if entry is None:
            self.crawler.stats.inc_value("spitag/frontier/rejected")
            return False
        if request.meta.get("retry_times") and self.leases.holds(entry.url):
            # A retry (RetryMiddleware) of a request this worker holds the lease of: it
            # stays ours, and is served again as it is, its retry count included.
            self.retries.append(request)
            self.crawler.stats.inc_value("spitag/frontier/retried")
            return True
        self.client.push(entry, meta.combine_of(request, self.combine))
        return True

    def next_request(self) -> Request | None:
        if self.foreign:
            return self.foreign.popleft()
        if self.retries:
            return self.retries.popleft()
        if not self.own_seen:
            return None  # (the spider's seeds come first; Scrapy asks again after them)
        if not self.ready and not self._pop():
            return None
        return self.spider.frontier_request(self.ready.popleft())

    def _pop(self) -> bool:
        if self.budget.budget is not None:
            self.budget.see(self.client.counts())  # other workers spend it too
        want = self.budget.allow(self.pop_batch)
        room, limit = self.pace.room()
        # pops wait for room for half the limit: one pop per page would cost a frontier
        # query (a Redis round trip) per page
        if 0 < want and room < min(want, max(limit // 2, 1)):
            self.crawler.stats.inc_value("spitag/frontier/held_back")
            self._wake_in(HOLD_BACK_POLL)  # (Scrapy asks again when a page is through the spider)
            return False
        self.client.flush()
        if want <= 0:
            return False
        busy = self.pace.busy_hosts()
        popped = self.client.call(self.client.queue.pop, min(want, room), busy)
        if not popped:
            self._wake_when_ready(outage=popped is None, busy=bool(busy))
            return False
        self.leases.popped(popped)
        self.budget.spend(len(popped))
        self.ready.extend(popped)
        self.crawler.stats.inc_value("spitag/frontier/popped", len(popped))
        return True

    def has_pending_requests(self) -> bool:
        if self.ready or self.retries or self.foreign or self.client.unwritten:
            return True
        if self.budget.spent:
            # what is still queued waits for a bigger budget; a leased URL (a download
            # waiting for another try, another worker's page) may still come back
            counts = self.client.counts()
            return counts is None or counts.leased > 0
        if self.client.frontier is None or not self.own_seen:
            return False
        return bool(self.client.call(self.client.queue.has_work, default=True))  # in an outage: wait

    def __len__(self) -> int:
        counts = self.client.counts() if self.client.frontier is not None else None
        return len(self.ready) + len(self.client.pushes) + (counts.queued if counts else 0)

    # -- waking the engine ---------------------------------------------------------
    def _wake_when_ready(self, outage: bool, busy: bool) -> None:
        """Wake the engine when the next host becomes ready (or the frontier may be
        back). ``busy``: hosts whose places this worker fills look ready to the
        frontier, but give nothing until a download leaves, which wakes the engine by
        itself; the timer then only polls, every ``BUSY_POLL`` at most."""
        if outage:
            delay = max(self.client.outage.wait(), 0.05)
        else:
            delay = self.client.call(self.client.queue.next_ready, default=1.0)
            if delay is None:
                # Nothing queued. Other workers' pages may still add work (or their
                # leases come back): look again soon rather than at the 5-s heartbeat.
                delay = IDLE_POLL
        self._wake_in(min(max(delay, BUSY_POLL if busy else 0.01), 5.0))

    def _wake_in(self, seconds: float) -> None:
        if self.wake_call is None or not self.wake_call.active():
            self.wake_call = running_reactor().callLater(seconds, self.client.wake)
