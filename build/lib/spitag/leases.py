"""This worker's leases: the URLs it popped and has not finished, and the one owner of
a page's end (``spitag.outcomes``) in the frontier.

* A page stored or settled: its lease is acknowledged (done); set aside (its host is
  down): handed back, queued again; to be retried later: no longer renewed, and reaped
  when it is due; a canonical URL: marked done.
* While a download may still legitimately be running — every try, and the pauses a
  host may ask for between them — its lease is renewed (every third of
  ``SPITAG_LEASE_SECONDS``); then it is left to expire, and any worker reaps it.
* Expired leases (a dead worker's, or failed URLs whose wait is over) are reaped every
  ``REAP_INTERVAL`` seconds, and when one of this worker's failed URLs is due.
* At close, what this worker popped and did not finish is handed back.
"""

from __future__ import annotations

import heapq
import logging
import time
from typing import TYPE_CHECKING, Any

from spitag.aio import every, running_reactor, stop
from spitag.frontier import Entry
from spitag.outcomes import CANONICAL, RETRY_LATER, SET_ASIDE, PageEnd
from spitag.signals import page_ended
from spitag.urls import host_of

if TYPE_CHECKING:
    from collections.abc import Sequence

    from scrapy.crawler import Crawler

    from spitag.client import FrontierClient

logger = logging.getLogger(__name__)

REAP_INTERVAL = 5.0
RETRY_REAP_SLACK = 0.05  # seconds after a failed URL is due before it is reaped (clocks differ)


class Leases:
    def __init__(self, crawler: Crawler, client: FrontierClient) -> None:
        self.crawler = crawler
        self.client = client
        options = client.options
        settings = crawler.settings
        # A lease is renewed while its download may still legitimately be running: every
        # try, and the pauses a host may ask for between them (Retry-After, back-off).
        retries = max(settings.getint("RETRY_TIMES"), options.refusal_retries)
        self.max_fetch_seconds = (
            (retries + 1) * settings.getfloat("DOWNLOAD_TIMEOUT") + retries * options.max_retry_after + 120
        )
        self.lease_seconds = options.lease_seconds
        self.in_flight: dict[str, float] = {}  # leased by this worker → when popped
        self.retries_due: list[float] = []  # when this worker's failed URLs are due again
        self.retry_call: Any = None  # a reap when the first of them is due
        self.retry_call_due = 0.0
        self.loops: list[Any] = []
        crawler.signals.connect(self.ended, signal=page_ended)

    def start(self) -> None:
        self.loops += [every(max(self.lease_seconds / 3, 0.5), self.renew), every(REAP_INTERVAL, self.reap)]

    def popped(self, entries: Sequence[Entry]) -> None:
        now = time.monotonic()
        for entry in entries:
            self.in_flight[entry.url] = now

    def holds(self, url: str) -> bool:
        return url in self.in_flight

    def ended(self, end: PageEnd) -> None:
        if end.kind == CANONICAL:
            self.client.mark_done([Entry(url, host_of(url), end.depth, 0.0) for url in end.urls])
        elif end.kind == SET_ASIDE:  # not sent, its host down: back to the queue
            self.client.release([url for url in end.urls if self.in_flight.pop(url, None) is not None])
        elif end.kind == RETRY_LATER:
            # the frontier holds its lease until it is due: not renewed, nor handed back
            for url in end.urls:
                self.in_flight.pop(url, None)
                heapq.heappush(self.retries_due, time.monotonic() + end.seconds)
            self._arm_retry_reap()
            self.client.wake()
        else:  # stored or settled: done
            for url in end.urls:
                self.in_flight.pop(url, None)
            self.client.ack(list(end.urls))

    def renew(self) -> None:
        now = time.monotonic()
        alive = [u for u, t in self.in_flight.items() if now - t < self.max_fetch_seconds]
        if alive:
            self.client.call(self.client.queue.renew, alive)

    def reap(self) -> None:
        reaped = self.client.call(self.client.queue.reap, default=0)
        if reaped:
            self.crawler.stats.inc_value("spitag/frontier/reaped", reaped)
            logger.info("frontier: %d expired leases put back in the queue (a dead worker's, or"
                        " failed URLs due for another try)", reaped)
            self.client.wake()

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
        self.reap()
        self._arm_retry_reap()

    def close(self) -> int:
        """Stop renewing; hand back what was popped and not finished."""
        stop(self.loops)
        if self.retry_call is not None and self.retry_call.active():
            self.retry_call.cancel()
        unfinished = list(self.in_flight)
        released = self.client.call(self.client.queue.release, unfinished, default=0) if unfinished else 0
        self.crawler.stats.inc_value("spitag/frontier/released", released)
        return released
