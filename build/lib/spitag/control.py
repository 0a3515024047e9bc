"""What a user asks of a running crawl, heard every second: ``scrapy stop`` (every
worker stops gracefully) and seeds added while it runs (``scrapy inject``, or on a
Redis frontier the crawl's start-URLs list, ``REDIS_START_URLS_KEY``).

A Scrapy extension of SpiTag's spider, started by ``frontier_opened``.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from scrapy.utils.defer import deferred_from_coro

from spitag.aio import every, stop
from spitag.outage import Outage
from spitag.signals import frontier_closing, frontier_opened
from spitag.urls import try_normalize

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

    from spitag.frontier import CrawlRegistry, Frontier

logger = logging.getLogger(__name__)

CONTROL_INTERVAL = 1.0


def start_urls_key(settings: Any, spider: str, crawl: str) -> str:
    """The Redis list of seeds a running crawl takes: ``REDIS_START_URLS_KEY`` (as in
    scrapy-redis, ``%(name)s`` is the spider's name; ``%(crawl)s`` the crawl's). The
    default, ``%(name)s:%(crawl)s:start_urls``, is the crawl's own: scrapy-redis'
    ``%(name)s:start_urls`` would be taken by whichever crawl on that Redis pops first."""
    return settings.get("REDIS_START_URLS_KEY") % {"name": spider, "crawl": crawl}


class Control:
    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler
        self.outage = Outage.of(crawler, "frontier")
        self.registry: CrawlRegistry | None = None
        self.key = ""
        self.stopping = False
        self.loops: list[Any] = []

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Control:
        control = cls(crawler)
        crawler.signals.connect(control.opened, signal=frontier_opened)
        crawler.signals.connect(control.closing, signal=frontier_closing)
        return control

    def opened(self, frontier: Frontier) -> None:
        self.registry = frontier.registry
        if self.registry.stop_requested():
            self.registry.clear_stop()  # started again after `scrapy stop`: resume
        spider = self.crawler.spider
        self.key = start_urls_key(self.crawler.settings, spider.name, spider.crawl_id)
        self.loops.append(every(CONTROL_INTERVAL, self.listen))

    def closing(self, frontier: Frontier) -> None:
        stop(self.loops)
        self.registry = None

    def listen(self) -> None:
        if self.registry is None:
            return
        if not self.stopping and self.outage.call(self.registry.stop_requested, default=False):
            logger.info("stop requested for crawl %s: stopping gracefully", self.crawler.spider.crawl_id)
            self.stopping = True
            deferred_from_coro(self.crawler.engine.close_spider_async(reason="stopped"))
            return
        raw = self.outage.call(self.registry.take_start_urls, self.key, default=[])
        added = [u for u in (try_normalize(r) for r in raw) if u]
        if added:
            spider = self.crawler.spider
            for url in added:
                self.crawler.engine.crawl(spider.seed_request(url))
            logger.info("%d seed(s) added from %s", len(added), self.key)
            self.crawler.stats.inc_value("spitag/frontier/seeds_added", len(added))
