"""Politeness that holds across workers: the frontier's hard gate, taken at download time.

A downloader middleware: before a request to a host with a delay goes out, it asks the
frontier for the host (``acquire``), which answers "go" and reserves the next
``delay`` seconds, or says how long to wait. The reservation lives in the frontier —
in Redis for a shared crawl — so two requests to one host are never less than its
delay apart, however many workers send them. The delay is ``DOWNLOAD_DELAY``, or the
host's own (robots.txt Crawl-delay), and holds for robots.txt requests too.

Scrapy's own per-slot delay is turned off: its randomized, worker-local spacing would
only shift requests after the reservation. Hosts without a delay cost no round trip.
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, Any

from scrapy import signals
from scrapy.utils.defer import maybe_deferred_to_future
from scrapy.utils.httpobj import urlparse_cached
from twisted.internet import task

from spitag.aio import running_reactor
from spitag.signals import frontier_opened

if TYPE_CHECKING:
    from scrapy import Request
    from scrapy.crawler import Crawler

    from spitag.frontier import Frontier

logger = logging.getLogger(__name__)

DELAYS_REFRESH = 10.0  # seconds between reloads of the per-host delays
MAX_CRAWL_DELAY = 120.0  # a robots.txt asking for more is capped (and the host crawled slowly)


def host_delay_setting(settings: Any) -> float:
    """Seconds between two requests to one host: ``SPITAG_HOST_DELAY`` when set,
    else ``DOWNLOAD_DELAY``."""
    value = settings.get("SPITAG_HOST_DELAY")
    return float(settings.getfloat("DOWNLOAD_DELAY") if value is None else value)


class PolitenessMiddleware:
    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler
        self.default_delay = host_delay_setting(crawler.settings)
        self.frontier: Frontier | None = None
        self.delays: dict[str, float] = {}
        self.loaded = 0.0
        self.user_agent = crawler.settings.get("ROBOTSTXT_USER_AGENT") or crawler.settings.get("USER_AGENT")
        crawler.signals.connect(self._opened, signal=frontier_opened)
        crawler.signals.connect(self._robots_parsed, signal=signals.robots_parsed)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> PolitenessMiddleware:
        return cls(crawler)

    def _opened(self, frontier: Frontier) -> None:
        self.frontier = frontier
        # Scrapy's downloader spaces requests per slot by DOWNLOAD_DELAY, randomized,
        # after this middleware: that would shift a request past its reservation. The
        # gate takes over the delay, so the downloader's own is set to 0 (it keeps no
        # public switch for this; its default delay and existing slots are reset).
        downloader = getattr(getattr(self.crawler, "engine", None), "downloader", None)
        if downloader is not None:
            downloader._delay = 0.0
            for slot in getattr(downloader, "slots", {}).values():
                slot.delay = 0.0

    def delay_for(self, host: str) -> float:
        if self.frontier is None:
            return 0.0
        now = time.monotonic()
        if now - self.loaded > DELAYS_REFRESH:
            self.delays = self.frontier.host_delays()
            self.loaded = now
        return self.delays.get(host, self.default_delay)

    def _robots_parsed(self, robotparser: Any, request: Request, **_: Any) -> None:
        """robots.txt Crawl-delay (which Scrapy itself ignores) sets the host's delay."""
        crawl_delay = getattr(robotparser, "crawl_delay", None)
        delay = crawl_delay(self.user_agent) if crawl_delay is not None else None
        if delay is not None and delay > 0:
            host = urlparse_cached(request).hostname or ""
            self.set_delay(host, min(float(delay), MAX_CRAWL_DELAY))
            self.crawler.stats.inc_value("spitag/politeness/crawl_delay_hosts")
            logger.info("robots.txt of %s asks for a Crawl-delay of %s s", host, delay)

    def set_delay(self, host: str, delay: float) -> None:
        """Record a host's own delay (robots.txt Crawl-delay) for every worker."""
        if self.frontier is not None:
            self.frontier.set_host_delay(host, delay)
            self.delays[host] = delay

    async def process_request(self, request: Request, spider: Any = None) -> None:
        host = urlparse_cached(request).hostname or ""
        delay = self.delay_for(host)
        if delay <= 0:
            return None
        waited = 0.0
        while True:
            wait = self.frontier.acquire(host, delay)
            if wait <= 0:
                break
            waited += wait
            await maybe_deferred_to_future(task.deferLater(running_reactor(), wait, lambda: None))
        if waited:
            self.crawler.stats.inc_value("spitag/politeness/waited_ms", int(waited * 1000))
        return None
