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
* ``has_pending_requests`` is true while anything is queued or leased by anyone, so a
  worker does not quit while another's leases could still come back.
* A learning strategy (``spitag``) is fed what the frontier learnt without it
  (``Frontier.learnt``): every host's totals at open (a resume, or a worker joining a
  running crawl), then every 0.2 s the pages the other workers learnt; the same for
  link evidence (``links_found`` of the strategy, written with this worker's pages).
  Before a pop, if the strategy refitted its estimates (at most every
  ``SPITAG_RESCORE_SECONDS``), the hosts it valued before their first page are ranked
  again by what it expects of them now (``Frontier.rescore``).
* A frontier that stops answering (Redis restarting) is an outage, not a crash: pushes
  and acks wait in memory and are retried with backoff, pops pause, the crawl goes on.
* Only a spider that crawls a frontier (``uses_frontier``) gets one. Any other, such as
  the ones ``scrapy fetch`` and ``scrapy shell`` run, gets Scrapy's own scheduler. A
  request the frontier could not rebuild (a callback other than the spider's
  ``parse``, such as ``scrapy parse``'s) waits in memory, as Scrapy's disk queues keep
  the requests they cannot serialize; and the frontier is not popped before the
  spider has handed over a request of its own (its seeds), so that ``scrapy parse``
  shows one page and does not resume the crawl.
"""

from __future__ import annotations

import hashlib
import heapq
import logging
import math
import time
from collections import deque
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from scrapy import Request, signals
from scrapy.core.scheduler import BaseScheduler, Scheduler
from scrapy.utils.defer import deferred_from_coro
from twisted.internet import task

from spitag.aio import running_reactor
from spitag.config import CrawlConfig
from spitag.errors import FrontierUnavailableError
from spitag.frontier import Entry, Politeness, open_frontier, uses_frontier
from spitag.frontier.owners import is_gone, short_name
from spitag.machine import this_machine
from spitag.pace import UnscoredLimit
from spitag.politeness import host_delay_setting, refusal_retries
from spitag.recrawl import RecrawlPolicy, plan_recrawl
from spitag.scoring import SEED_PRIORITY
from spitag.signals import batch_stored, frontier_opened, url_retry_later, url_set_aside, url_settled
from spitag.store import open_store
from spitag.urls import host_of, redact, try_normalize

if TYPE_CHECKING:
    from collections.abc import Sequence

    from scrapy import Spider
    from scrapy.crawler import Crawler

    from spitag.frontier import Frontier
    from spitag.frontier.base import Worker
    from spitag.scoring import Strategy

logger = logging.getLogger(__name__)

PUSH_INTERVAL = 0.2
REAP_INTERVAL = 5.0
RETRY_REAP_SLACK = 0.05  # seconds after a failed URL is due before it is reaped (clocks differ)
CONTROL_INTERVAL = 1.0
GONE_INTERVAL = 2.0  # seconds between two looks for workers gone (a shared frontier)
MAX_BACKOFF = 10.0
IDLE_POLL = 0.5
HOLD_BACK_POLL = 0.25
BUSY_POLL = 0.1  # seconds between pops while the only ready hosts are busy (_wake_when_ready)
RESCORE_MAX = 2_000  # hosts re-ranked at once (~20 ms of the reactor); more go round in slices


def start_urls_key(settings: Any, spider: str, crawl: str) -> str:
    """The Redis list of seeds a running crawl takes: ``REDIS_START_URLS_KEY`` (as in
    scrapy-redis, ``%(name)s`` is the spider's name; ``%(crawl)s`` the crawl's). The
    default, ``%(name)s:%(crawl)s:start_urls``, is the crawl's own: scrapy-redis'
    ``%(name)s:start_urls`` would be taken by whichever crawl on that Redis pops first."""
    return settings.get("REDIS_START_URLS_KEY") % {"name": spider, "crawl": crawl}


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


class FrontierScheduler(BaseScheduler):
    def __init__(self, crawler: Crawler) -> None:
        settings = crawler.settings
        config = CrawlConfig.from_settings(settings)
        self.crawler = crawler
        self.frontier_url = config.frontier_url
        self.store_url = config.store_url
        self.recrawl = RecrawlPolicy.from_settings(settings)
        self.lease_seconds = config.lease_seconds
        self.pop_batch = config.pop_batch
        # SPITAG_MAX_UNSCORED, adapted to what keeps the profile pool fed (spitag.pace)
        self.unscored = UnscoredLimit(config.max_unscored, config.max_backlog)
        self.politeness = Politeness(delay=host_delay_setting(settings), per_host=urls_per_host(settings))
        self.host_weight = config.host_weight
        self.score_half = settings.getfloat("SPITAG_SCORE_HALF")
        self.host_prior = config.host_prior
        self.host_k = config.host_k
        self.rescore_seconds = config.rescore_seconds
        self.host_probe = config.host_probe
        self.rescorer: Strategy | None = None  # a strategy whose estimates of unseen hosts move
        self.rescored_refits = -1
        self.rescored_at = -float("inf")
        self.seed_hosts: set[str] = set()  # hosts of seeds: seeds stay first, never re-ranked
        # A lease is renewed while its download may still legitimately be running: every
        # try, and the pauses a host may ask for between them (Retry-After, back-off).
        retries = max(settings.getint("RETRY_TIMES"), refusal_retries(settings))
        self.max_fetch_seconds = (
            (retries + 1) * settings.getfloat("DOWNLOAD_TIMEOUT")
            + retries * max(settings.getfloat("SPITAG_MAX_RETRY_AFTER"), 0.0) + 120
        )
        self.frontier: Frontier | None = None
        self.spider: Spider | None = None
        self.plain: Scheduler | None = None  # Scrapy's, for a spider that crawls no frontier
        self.foreign: deque[Request] = deque()  # requests the frontier could not rebuild
        self.own_seen = False  # the spider handed over a request of its own: pop the frontier
        self.combine = "max"
        self.pending: list[tuple[Entry, str]] = []
        self.unacked: list[str] = []
        self.set_aside: list[str] = []  # leases of URLs not sent (host down) to hand back
        self.ready: deque[Entry] = deque()
        self.retries: deque[Request] = deque()  # our own leases, asked again (RetryMiddleware)
        self.in_flight: dict[str, float] = {}  # leased by this process → when popped
        self.learnt: list[tuple[str, float]] = []
        self.absorbing: Strategy | None = None  # a strategy fed what others learnt
        self.learnt_cursor: str | None = None
        self.links_out: list[tuple[str, float, int, int]] = []  # link evidence not yet written
        self.canonicals: list[Entry] = []
        self.loops: list[task.LoopingCall] = []
        self.wake_call: Any = None
        self.retries_due: list[float] = []  # when this worker's failed URLs are due again
        self.retry_call: Any = None  # a reap when the first of them is due
        self.retry_call_due = 0.0
        self.recover_call: Any = None  # recover once more (a shared frontier)
        self.gone: set[str] = set()  # workers whose leases were taken back
        self.opened_at = time.monotonic()  # when this run opened its frontier
        self.new_run = False  # no other worker ran when this one started (or after recover_again)
        self.down_since: float | None = None
        self.retry_at = 0.0
        self.backoff = 0.0
        self.stopping = False
        # Nutch's -topN: pages fetched by the crawl, all its runs together.
        budget = settings.get("SPITAG_PAGE_BUDGET")
        self.budget: int | None = None if budget in (None, "") else int(budget)
        self.budget_left: int | None = None

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> FrontierScheduler:
        return cls(crawler)

    @property
    def stats(self) -> Any:
        return self.crawler.stats

    # -- life cycle ----------------------------------------------------------------
    def open(self, spider: Spider) -> Any:
        self.spider = spider
        if not uses_frontier(spider):
            self.plain = Scheduler.from_crawler(self.crawler)
            return self.plain.open(spider)
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
            host_prior=self.host_prior,
            host_ranking=getattr(strategy, "host_ranking", "blend"),
            host_k=self.host_k,
            strategy=strategy.name if strategy is not None else None,
            machine=this_machine(self.crawler.settings.get("SPITAG_MACHINE")),
            probe=self.host_probe and getattr(strategy, "learns_hosts", False) and self.host_weight > 0,
        )
        if self.crawler.settings.get("JOBDIR"):
            logger.warning("JOBDIR is not used by a frontier crawl: the frontier %s keeps the crawl's state,"
                           " and running the same command again resumes it", redact(self.frontier_url))
        self._check_setup(spider)
        self.opened_at = time.monotonic()
        recovered = self.frontier.recover()
        self.stats.set_value("spitag/frontier/recovered", recovered)
        if self.frontier.recover_again > 0:
            self.recover_call = running_reactor().callLater(self.frontier.recover_again, self._recover_again)
        counts = self.frontier.counts()
        if self.recrawl.enabled and counts.done:
            revived = self._plan_recrawl(crawl)
            if revived:
                counts = self.frontier.counts()
        logger.info(
            "frontier %s, crawl %s: %d queued, %d leased, %d done%s",
            redact(self.frontier_url), crawl, counts.queued, counts.leased, counts.done,
            f" ({recovered} unfinished leases of an earlier run taken back)" if recovered else "",
        )
        if counts.done or counts.queued:
            self.stats.set_value("spitag/frontier/resumed", 1)
        if not counts.leased:  # no worker of this crawl is running: a new run
            self._start_new_run()
        if self.budget is not None:
            self.budget_left = max(self.budget - counts.done - counts.leased, 0)
            logger.info("page budget %d: %d left for this run", self.budget, self.budget_left)
        if self.frontier.stop_requested():
            self.frontier.clear_stop()  # started again after `scrapy stop`: resume
        if self.host_weight > 0 and hasattr(strategy, "absorb"):
            # The strategy starts from what the crawl learnt before (a resume), then
            # hears of the other workers' pages as they are learnt.
            self.absorbing = strategy
            if hasattr(strategy, "share"):
                strategy.share()  # the links it finds go to the frontier too
            self._absorb()
            if self.rescore_seconds > 0 and hasattr(strategy, "estimates"):
                self.rescorer = strategy
        self._heartbeat()
        self.start_urls_key = start_urls_key(self.crawler.settings, spider.name, crawl)
        signals_ = self.crawler.signals
        signals_.send_catch_log(frontier_opened, frontier=self.frontier)
        signals_.connect(self._on_batch_stored, signal=batch_stored)
        signals_.connect(self._on_url_settled, signal=url_settled)
        signals_.connect(self._on_url_set_aside, signal=url_set_aside)
        signals_.connect(self._on_url_retry_later, signal=url_retry_later)
        signals_.connect(self._on_item_scraped, signal=signals.item_scraped)
        signals_.connect(self._on_response, signal=signals.response_received)
        for interval, work in (
            (PUSH_INTERVAL, self._flush),
            (PUSH_INTERVAL, self._absorb),
            (max(self.lease_seconds / 3, 0.5), self._renew),
            (REAP_INTERVAL, self._reap),
            (CONTROL_INTERVAL, self._control),
            (GONE_INTERVAL, self._recover_gone),
        ):
            loop = task.LoopingCall(self._guarded, work)
            loop.start(interval, now=False)
            self.loops.append(loop)

    def _check_setup(self, spider: Spider) -> None:
        """Workers of one crawl, and its runs, should crawl with one strategy (their
        priorities share one queue) and one list of seeds (each worker keeps to its
        own seeds' scope): say so when this one differs from the one before."""
        setup = {"strategy": self.frontier.strategy or ""}
        seeds = getattr(spider, "seed_urls", None)
        if seeds:
            setup["seeds"] = hashlib.md5("\n".join(sorted(seeds)).encode(), usedforsecurity=False).hexdigest()
        before = self.frontier.record_setup(setup)
        if before.get("strategy") and before["strategy"] != setup["strategy"]:
            logger.warning(
                "crawl %s was crawled with strategy %s, this worker runs %s: their priorities mix in one"
                " queue (set SPITAG_STRATEGY as for the crawl)", self.frontier.crawl, before["strategy"],
                setup["strategy"],
            )
        if before.get("seeds") and setup.get("seeds") and before["seeds"] != setup["seeds"]:
            logger.warning(
                "crawl %s was crawled with other seeds: this worker keeps to its own seeds' scope"
                " (scrapy inject adds seeds to a crawl for every worker)", self.frontier.crawl,
            )

    def _report_down(self) -> None:
        """At the end of a run: the URLs left waiting on hosts set aside as down."""
        down = self._call(self.frontier.hosts_down, default=[])
        waiting = sum(urls for _, _, urls in down)
        if not waiting:
            return
        self.stats.set_value("spitag/frontier/hosts_down_at_end", len(down))
        self.stats.set_value("spitag/frontier/waiting_on_hosts_down", waiting)
        shown = ", ".join(f"{host} ({urls})" for host, _, urls in down[:10])
        more = f" and {len(down) - 10} more" if len(down) > 10 else ""
        logger.warning(
            "%d URL(s) left waiting on %d host(s) set aside as down: %s%s. Run the crawl again"
            " to try them again", waiting, len(down), shown, more,
        )

    def _plan_recrawl(self, crawl: str) -> int:
        """A crawl run again: the URLs whose time has come are queued again."""
        store = open_store(self.store_url)
        try:
            revived = plan_recrawl(store, self.frontier, crawl, datetime.now(timezone.utc))
        finally:
            store.close()
        self.stats.set_value("spitag/recrawl/revived", revived)
        logger.info("recrawl: %d expired URL(s) of crawl %s queued again", revived, crawl)
        return revived

    def close(self, reason: str) -> Any:
        if self.plain is not None:
            return self.plain.close(reason)
        for loop in self.loops:
            if loop.running:
                loop.stop()
        for call in (self.wake_call, self.retry_call, self.recover_call):
            if call is not None and call.active():
                call.cancel()
        if self.frontier is None:
            return
        self.retry_at = 0.0  # one last try, outage or not
        self._guarded(self._flush)
        unfinished = list(self.in_flight)
        released = self._call(self.frontier.release, unfinished, default=0) if unfinished else 0
        self.stats.inc_value("spitag/frontier/released", released)
        counts = self._call(self.frontier.counts, default=None)
        if counts is not None:
            logger.info(
                "frontier closed (%s): %d queued, %d leased, %d done; %d unfinished released",
                reason, counts.queued, counts.leased, counts.done, released,
            )
        self._report_down()
        if self.pending or self.unacked:
            logger.warning(
                "frontier unreachable at shutdown: %d discovered URLs not pushed, %d stored"
                " URLs not acknowledged (their leases expire and are fetched again)",
                len(self.pending), len(self.unacked),
            )
        self.frontier.close()

    # -- the engine's side ---------------------------------------------------------
    def enqueue_request(self, request: Request) -> bool:
        if self.plain is not None:
            return self.plain.enqueue_request(request)
        if request.callback not in (None, self.spider.parse):
            self.foreign.append(request)  # (served first; never stored in the frontier)
            return True
        self.own_seen = True
        meta = request.meta
        url = meta.get("spitag_url") or try_normalize(request.url)
        if url is None:
            self.stats.inc_value("spitag/frontier/rejected")
            return False
        if meta.get("retry_times") and url in self.in_flight:
            # A retry (RetryMiddleware) of a request this worker holds the lease of: it
            # stays ours, and is served again as it is, its retry count included.
            self.retries.append(request)
            self.stats.inc_value("spitag/frontier/retried")
            return True
        priority = meta.get("spitag_priority")
        entry = Entry(
            url=url,
            host=host_of(url),
            depth=int(meta.get("depth", 0)),
            priority=float(request.priority if priority is None else priority),
            reason=meta.get("spitag_reason"),
        )
        self.pending.append((entry, meta.get("spitag_combine", self.combine)))
        if entry.priority >= SEED_PRIORITY:
            self.seed_hosts.add(entry.host)
        if len(self.pending) >= 1000:
            self._guarded(self._flush)
        return True

    def next_request(self) -> Request | None:
        if self.plain is not None:
            return self.plain.next_request()
        if self.foreign:
            return self.foreign.popleft()
        if self.retries:
            return self.retries.popleft()
        if not self.own_seen:
            return None  # (the spider's seeds come first; Scrapy asks again after them)
        if not self.ready:
            want = self.pop_batch if self.budget_left is None else min(self.pop_batch, self.budget_left)
            limit = self.unscored.limit()
            if limit:
                self.stats.min_value("spitag/frontier/unscored_limit_min", limit)
                self.stats.max_value("spitag/frontier/unscored_limit_max", limit)
            room = self._room(limit)
            # pops wait for room for half the limit: one pop per page would cost a
            # frontier query (a Redis round trip) per page
            if 0 < want and room < min(want, max(limit // 2, 1)):
                self._hold_back()  # (before the flush: that would be a write per call)
                return None
            self._guarded(self._flush)
            if want <= 0:
                self._budget_spent()
                return None
            want = min(want, room)
            self._rescore()
            busy = self._busy_hosts()
            popped = self._call(self.frontier.pop, want, busy, default=None)
            if not popped:
                self._wake_when_ready(outage=popped is None, busy=bool(busy))
                return None
            now = time.monotonic()
            for entry in popped:
                self.in_flight[entry.url] = now
            self.ready.extend(popped)
            self.stats.inc_value("spitag/frontier/popped", len(popped))
            if self.budget_left is not None:
                self.budget_left -= len(popped)
        return self._request(self.ready.popleft())

    def _room(self, limit: int) -> int:
        """How many more pages may be requested now under the unscored ``limit``: pages
        downloading or downloaded and not yet through the spider (profile, score) count.
        Popping no more than that keeps the choice of the next pages as late as it can
        be, with the scores of every page fetched before."""
        if not limit:
            return self.pop_batch
        engine = getattr(self.crawler, "engine", None)
        downloader = getattr(engine, "downloader", None)
        scraper_slot = getattr(getattr(engine, "scraper", None), "slot", None)
        if downloader is None or scraper_slot is None:
            return self.pop_batch
        unscored = len(downloader.active) + len(scraper_slot.active)
        return limit - unscored

    def _busy_hosts(self) -> dict[str, int]:
        """Per host, this worker's requests in Scrapy's downloader: downloading, or
        waiting there for one of the host's places or its delay (spitag.politeness).
        The frontier gives a host only what its places can take besides them: without
        that, pops of a slow host's URLs pile up in the downloader and hold up every
        other host (Scrapy counts them against CONCURRENT_REQUESTS while they wait)."""
        downloader = getattr(getattr(self.crawler, "engine", None), "downloader", None)
        busy: dict[str, int] = {}
        for request in getattr(downloader, "active", ()):
            host = host_of(request.url)
            busy[host] = busy.get(host, 0) + 1
        return busy

    def _hold_back(self) -> None:
        """No room. Scrapy asks again when a page has been through the spider; the timer
        is only a safety net."""
        self.stats.inc_value("spitag/frontier/held_back")
        if self.wake_call is None or not self.wake_call.active():
            self.wake_call = running_reactor().callLater(HOLD_BACK_POLL, self._wake)

    def has_pending_requests(self) -> bool:
        if self.plain is not None:
            return self.plain.has_pending_requests()
        if self.ready or self.pending or self.unacked or self.retries or self.set_aside or self.foreign:
            return True
        if self.budget_left is not None and self.budget_left <= 0:
            return False  # the budget is spent: what is still queued waits for a bigger one
        if self.frontier is None or not self.own_seen:
            return False
        return bool(self._call(self.frontier.has_work, default=True))  # in an outage: wait

    def __len__(self) -> int:
        if self.plain is not None:
            return len(self.plain)
        counts = self._call(self.frontier.counts, default=None) if self.frontier else None
        return len(self.ready) + len(self.pending) + (counts.queued if counts else 0)

    def _budget_spent(self) -> None:
        if not self.stats.get_value("spitag/frontier/budget_spent"):
            self.stats.set_value("spitag/frontier/budget_spent", 1)
            logger.info("page budget of %d reached: no more pages are popped", self.budget)

    # -- outages -------------------------------------------------------------------
    def _call(self, fn: Any, *args: Any, default: Any) -> Any:
        """Run a frontier operation; in an outage, back off and return ``default``."""
        if self.down_since is not None and time.monotonic() < self.retry_at:
            return default
        try:
            result = fn(*args)
        except FrontierUnavailableError as exc:
            self._outage(exc)
            return default
        if self.down_since is not None:
            logger.warning(
                "frontier %s is back after %.1f s", redact(self.frontier_url),
                time.monotonic() - self.down_since,
            )
            self.down_since = None
            self.backoff = 0.0
        return result

    def _outage(self, exc: Exception) -> None:
        now = time.monotonic()
        if self.down_since is None:
            self.down_since = now
            logger.warning("%s; retrying with backoff, the crawl waits", exc)
        self.stats.inc_value("spitag/frontier/outage_retries")
        self.backoff = min(max(self.backoff * 2, 0.25), MAX_BACKOFF)
        self.retry_at = now + self.backoff

    # -- internals -----------------------------------------------------------------
    def _request(self, entry: Entry) -> Request:
        return self.spider.make_request(  # (uses_frontier: the spider has one)
            entry.url, depth=entry.depth, priority=entry.priority, reason=entry.reason,
            revisit=entry.revisit,
        )

    def _flush(self) -> None:
        """Write buffered pushes, acks and host observations (kept on failure)."""
        if self.down_since is not None and time.monotonic() < self.retry_at:
            return
        answered = False  # no call made, no news of the frontier
        try:
            while self.pending:
                batch = self.pending[:1000]
                by_combine: dict[str, list[Entry]] = {}
                for entry, combine in batch:
                    by_combine.setdefault(combine, []).append(entry)
                for combine, entries in by_combine.items():
                    result = self.frontier.push(entries, combine)
                    self.stats.inc_value("spitag/frontier/pushed", len(entries))
                    self.stats.inc_value("spitag/frontier/new", result.new)
                    self.stats.inc_value("spitag/frontier/raised", result.raised)
                    self.stats.inc_value("spitag/frontier/seen_done", result.ignored)
                del self.pending[: len(batch)]  # pushes are idempotent: a replay is harmless
                answered = True
            if self.unacked:
                urls = self.unacked[:1000]
                self.stats.inc_value("spitag/frontier/acked", self.frontier.ack(urls))
                del self.unacked[: len(urls)]
                answered = True
            if self.set_aside:
                urls = self.set_aside[:1000]
                self.stats.inc_value("spitag/frontier/set_aside", self.frontier.release(urls))
                del self.set_aside[: len(urls)]
                answered = True
            if self.canonicals:
                marked = self.frontier.mark_done(self.canonicals)
                self.stats.inc_value("spitag/frontier/canonical_done", marked)
                self.canonicals = []
                answered = True
            if self.absorbing is not None and hasattr(self.absorbing, "links_found"):
                found = self.absorbing.links_found()
                self.links_out += found  # kept, like the pages, while the frontier is down
                self.stats.inc_value("spitag/strategy/links_found", sum(row[2] for row in found))
            if self.learnt or self.links_out:
                self.frontier.learn(self.learnt, self.links_out)
                if self.learnt and self.frontier.probe:
                    self._wake()  # a host's first page learnt ends its probe: it is ready
                self.learnt, self.links_out = [], []
                answered = True
        except FrontierUnavailableError as exc:
            self._outage(exc)
            return
        if self.down_since is not None and answered:
            self._call(lambda: None, default=None)  # the frontier answered: mark recovered

    def _ack(self, urls: list[str]) -> None:
        if not urls or self.frontier is None:
            return
        for url in urls:
            self.in_flight.pop(url, None)
        self.unacked.extend(urls)
        self._flush()
        self._wake()

    def _on_batch_stored(self, urls: list[str], spider: Spider | None = None) -> None:
        self._ack(urls)

    def _on_url_settled(self, url: str, spider: Spider | None = None) -> None:
        self._ack([url])

    def _on_url_set_aside(self, url: str, spider: Spider | None = None) -> None:
        """Not sent, its host down: the URL goes back to the queue (``release``), where
        the frontier keeps it until the host is tried again."""
        if self.frontier is not None and self.in_flight.pop(url, None) is not None:
            self.set_aside.append(url)

    def _on_url_retry_later(self, url: str, seconds: float) -> None:
        """Failed, to be tried again in ``seconds`` (``spitag.retry``): the frontier
        holds its lease until then; this worker no longer renews it, nor hands it back
        at close, and reaps it when it is due rather than at the next periodic reap."""
        self.in_flight.pop(url, None)
        if self.budget_left is not None:
            self.budget_left += 1  # (its next try takes it again: a page counts once)
        heapq.heappush(self.retries_due, time.monotonic() + seconds)
        self._arm_retry_reap()
        self._wake()

    def _arm_retry_reap(self) -> None:
        if not self.retries_due:
            return
        due = self.retries_due[0]
        if self.retry_call is not None and self.retry_call.active():
            if self.retry_call_due <= due:
                return
            self.retry_call.cancel()
        self.retry_call_due = due
        wait = max(due - time.monotonic(), 0.0) + RETRY_REAP_SLACK
        self.retry_call = running_reactor().callLater(wait, self._reap_retries)

    def _reap_retries(self) -> None:
        now = time.monotonic()
        while self.retries_due and self.retries_due[0] <= now:
            heapq.heappop(self.retries_due)
        self._guarded(self._reap)
        self._arm_retry_reap()

    def _on_response(self, response: Any, request: Any = None, spider: Any = None) -> None:
        latency = request.meta.get("download_latency") if request is not None else None
        if latency is not None:
            self.unscored.answered(time.monotonic(), float(latency))

    def _on_item_scraped(self, item: Any, response: Any = None, spider: Any = None) -> None:
        if self.host_weight > 0 and item.get("semantic") is not None and item.get("md5dia"):
            self.learnt.append((host_of(item["url"]), float(item.get("score") or 0.0)))
        canonical = item.get("canonical")
        if (
            canonical
            and canonical != item["url"]
            and not item.get("redirect_to")  # a refresh page is not its target's content
            and 200 <= (item.get("status") or 0) < 300
        ):
            # The page was fetched under another URL: its canonical one is done too.
            self.canonicals.append(Entry(canonical, host_of(canonical), item["depth"], 0.0, None))

    def _renew(self) -> None:
        if not self.in_flight:
            return
        now = time.monotonic()
        alive = [u for u, t in self.in_flight.items() if now - t < self.max_fetch_seconds]
        if alive:
            self._call(self.frontier.renew, alive, default=0)

    def _rescore(self) -> None:
        """Before a pop: rank the hosts not fetched yet by what the strategy expects of
        them now (``Frontier.rescore``), if its estimates may have moved (g or its
        models were refitted) and ``SPITAG_RESCORE_SECONDS`` have passed since the last
        time: their links' priorities hold the estimates of the moment each link was
        found. Not the hosts of seeds, which stay first."""
        strategy = self.rescorer
        if strategy is None:
            return
        refits = getattr(strategy, "refits", 0)
        if refits == self.rescored_refits:
            return
        now = time.monotonic()
        if now - self.rescored_at < self.rescore_seconds:
            return
        self.rescored_refits = refits
        estimates = [(h, v) for h, v in strategy.estimates(RESCORE_MAX) if h not in self.seed_hosts]
        if not estimates:
            return  # nothing waits: no time spent, none to wait for
        self.rescored_at = now
        ranked = self._call(self.frontier.rescore, estimates, default=None)
        if ranked:
            self.stats.inc_value("spitag/frontier/rescored", ranked)

    def _absorb(self) -> None:
        """Feed the strategy the pages the frontier learnt that it did not see: every
        earlier page at open, then the other workers' pages (``Frontier.learnt``)."""
        if self.absorbing is None:
            return
        first = self.learnt_cursor is None
        answer = self._call(self.frontier.learnt, self.learnt_cursor, default=None)
        if answer is None:
            return
        self.learnt_cursor, batches = answer
        pages = hosts = links = 0
        for batch in batches:
            if batch.links and hasattr(self.absorbing, "hear_links"):
                links += self.absorbing.hear_links(batch.links)  # first, as their finder did
            for host, score_sum, n in batch.pages:
                self.absorbing.absorb(host, score_sum, n)
                pages += n
            hosts += len(batch.pages)
        if links:
            self.stats.inc_value(
                "spitag/strategy/links_at_start" if first else "spitag/strategy/links_from_workers", links
            )
        if pages:
            self.stats.inc_value(
                "spitag/strategy/learnt_at_start" if first else "spitag/strategy/learnt_from_workers", pages
            )
        if first and (pages or links):
            logger.info("strategy %s starts from %d pages of %d hosts and %d links learnt before",
                        self.absorbing.name, pages, hosts, links)

    def _start_new_run(self) -> None:
        """No other worker of the crawl runs: hosts an earlier run set aside as down
        are tried again."""
        self.new_run = True
        cleared = self._call(self.frontier.clear_down, default=0)
        if cleared:
            logger.info("%d host(s) set aside as down by an earlier run: tried again", cleared)

    def _recover_again(self) -> None:
        """A worker killed just before this one started (on another machine, or in
        another container) is now known to be gone (``Frontier.recover_again``): its
        leases come back. If no other worker is left, this run was on its own from the
        start, held back only by that worker's leases: a new run."""
        self._recover_gone(force=True)
        if not self.new_run and self._call(self.frontier.others_alive, default=None) == 0:
            self._start_new_run()

    def _recover_gone(self, force: bool = False) -> None:
        """A worker of the crawl that is gone (killed: its process is no more, or its
        heartbeat stopped ``ALIVE_SECONDS`` ago) has its leases and its places on their
        hosts taken back now (``Frontier.recover``), not when its leases expire: its
        hosts would wait that long. Each gone worker once; a frontier that keeps no
        heartbeat (SQLite: one worker) has none to look for."""
        workers = self._call(self.frontier.workers, default=None)
        if not workers:
            return
        own = self.frontier.owner
        gone = {w.owner for w in workers if w.owner != own and (not w.alive or is_gone(w.owner))} - self.gone
        if not gone and not force:
            return
        recovered = self._call(self.frontier.recover, default=None)
        if recovered is None:
            return
        self.gone |= gone
        if recovered:
            self.stats.inc_value("spitag/frontier/recovered", recovered)
            logger.info("frontier: %d unfinished leases of %s taken back", recovered,
                        f"gone worker(s) {', '.join(sorted(short_name(o) for o in gone))}" if gone
                        else "a worker gone")
        if gone and not force and self._alone_from_the_start([w for w in workers if w.owner in gone]):
            self._start_new_run()
        if recovered:
            self._wake()

    def _alone_from_the_start(self, gone: Sequence[Worker]) -> bool:
        """The workers just found gone had not beaten since this run started (killed
        before it) and none is left alive: this run was on its own from the start and is
        a new run now, as ``_recover_again`` would decide later, when the run may have
        ended already with the URLs of hosts set aside as down never tried again."""
        due = self.recover_call
        if self.new_run or due is None or not due.active():
            return False
        age = time.monotonic() - self.opened_at
        return (all(w.silent_seconds >= age for w in gone)
                and self._call(self.frontier.others_alive, default=None) == 0)

    def _reap(self) -> None:
        reaped = self._call(self.frontier.reap, default=0)
        if reaped:
            self.stats.inc_value("spitag/frontier/reaped", reaped)
            logger.info("frontier: %d expired leases put back in the queue (a dead worker's, or"
                        " failed URLs due for another try)", reaped)
            self._wake()

    def _heartbeat(self) -> None:
        """Tell the frontier this worker is alive; the workers of the crawl on this
        machine share its profile backlog (``spitag.pace``)."""
        here = self._call(self.frontier.heartbeat, default=None)
        if here is None:
            return
        changed = here != self.unscored.workers_here
        self.unscored.share(here)
        if changed and self.unscored.max_backlog:
            logger.info("%d worker(s) of this crawl on this machine: this one keeps %d of the "
                        "%d pages of profile backlog", here, self.unscored.backlog, self.unscored.max_backlog)
        self.stats.max_value("spitag/frontier/workers_here_max", here)

    def _control(self) -> None:
        """The heartbeat, ``scrapy stop`` and seeds added to a running crawl (``scrapy
        inject``, or the crawl's start-URLs list ``spitag:<crawl>:start_urls`` on a
        Redis frontier: ``REDIS_START_URLS_KEY``)."""
        self._heartbeat()
        if not self.stopping and self._call(self.frontier.stop_requested, default=False):
            logger.info("stop requested for crawl %s: stopping gracefully", self.frontier.crawl)
            self.stopping = True
            deferred_from_coro(self.crawler.engine.close_spider_async(reason="stopped"))
            return
        take = getattr(self.frontier, "take_start_urls", None)
        if take is None:
            return
        raw = self._call(take, self.start_urls_key, default=[])
        added = [u for u in (try_normalize(r) for r in raw) if u]
        if added:
            for url in added:
                self.enqueue_request(self.spider.seed_request(url))
            logger.info("%d seed(s) added from %s", len(added), self.start_urls_key)
            self.stats.inc_value("spitag/frontier/seeds_added", len(added))
            self._flush()
            self._wake()

    def _guarded(self, work: Any) -> None:
        try:
            work()
        except Exception:
            logger.exception("frontier %s: %s failed", redact(self.frontier_url), work.__name__)

    def _wake_when_ready(self, outage: bool = False, busy: bool = False) -> None:
        """Arm one timer for the moment the next host becomes ready (or a retry).
        ``busy``: hosts whose places this worker fills look ready to the frontier, but
        give nothing until a download leaves, which wakes the engine by itself; the
        timer then only polls, every BUSY_POLL at most."""
        if self.wake_call is not None and self.wake_call.active():
            return
        if outage:
            delay = max(self.retry_at - time.monotonic(), 0.05)
        else:
            delay = self._call(self.frontier.next_ready, default=1.0)
            if delay is None:
                # Nothing queued. Other workers' pages may still add work (or their
                # leases come back): look again soon rather than at the 5 s heartbeat.
                delay = IDLE_POLL
        floor = BUSY_POLL if busy else 0.01
        self.wake_call = running_reactor().callLater(min(max(delay, floor), 5.0), self._wake)

    def _wake(self) -> None:
        engine = getattr(self.crawler, "engine", None)
        slot = getattr(engine, "_slot", None)  # Scrapy has no public "wake up" call
        if slot is not None:
            slot.nextcall.schedule()
