"""What the crawl's strategy learns beyond its own parents, and what it tells the others.

For a strategy that ranks hosts by what their pages showed (``spitag``:
``Strategy.learns_hosts``):

* every page scraped with a profile is written to the frontier's learning log as
  (host, semantic score): the host ranking's S and n, for every worker; written with
  this worker's other frontier writes (``frontier_flushing``: every 0.2 s, when pages
  are stored, and before each pop), so that a pop ranks hosts by every page learnt;
* a strategy that learns sites (``spitag``) starts from what the crawl learnt before
  (a resumed crawl's pages and links: stats ``spitag/strategy/learnt_at_start``,
  ``…/links_at_start``), then hears every ``FEED_INTERVAL`` of the pages and links the
  other workers learnt; the links it finds to hosts not fetched yet are written too;
* once its estimates may have moved (g or its models refitted), at most every
  ``SPITAG_RESCORE_SECONDS``, the hosts it valued before their first page are ranked
  again by what it expects of them now (``LearningLog.rescore``), after the writes
  before a pop; never the hosts of seeds, which stay first.

What is to be written waits in memory while the frontier is out (``spitag.outage``).
A Scrapy extension of SpiTag's spider, started by ``frontier_opened``.
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, Any

from scrapy import signals

from spitag.aio import every, stop
from spitag.items import is_page_record
from spitag.options import Options
from spitag.outage import Outage
from spitag.signals import frontier_closing, frontier_flushing, frontier_opened
from spitag.urls import host_of

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

    from spitag.frontier import Frontier, LearningLog
    from spitag.scoring import Strategy

logger = logging.getLogger(__name__)

FEED_INTERVAL = 0.2
RESCORE_MAX = 2_000  # hosts re-ranked at once (~20 ms of the reactor); more go round in slices


class StrategyFeed:
    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler
        options = Options.of(crawler)
        self.rescore_seconds = options.rescore_seconds
        self.outage = Outage.of(crawler, "frontier")
        self.log: LearningLog | None = None
        self.strategy: Strategy | None = None
        self.learns_sites = False  # the strategy takes what others learnt (absorb)
        self.pages: list[tuple[str, float]] = []  # (host, score) not written yet
        self.links: list[tuple[str, float, int, int]] = []  # link evidence not written yet
        self.cursor: str | None = None
        self.rescored_refits = -1
        self.rescored_at = -float("inf")
        self.rescores = False
        self.loops: list[Any] = []

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> StrategyFeed:
        feed = cls(crawler)
        crawler.signals.connect(feed.opened, signal=frontier_opened)
        crawler.signals.connect(feed.closing, signal=frontier_closing)
        crawler.signals.connect(feed.item_scraped, signal=signals.item_scraped)
        crawler.signals.connect(feed.flushing, signal=frontier_flushing)
        return feed

    def opened(self, frontier: Frontier) -> None:
        strategy = self.crawler.spider.strategy
        if not strategy.learns_hosts:
            return
        self.log, self.strategy = frontier.learning, strategy
        self.learns_sites = hasattr(strategy, "absorb")
        if self.learns_sites:
            strategy.share()  # the links it finds go to the frontier too
            self.hear()
            self.loops.append(every(FEED_INTERVAL, self.hear))
        self.rescores = self.learns_sites and self.rescore_seconds > 0 and hasattr(strategy, "estimates")

    def closing(self, frontier: Frontier) -> None:
        stop(self.loops)
        if self.log is not None:
            self.outage.retry_at = 0.0
            self.write()
        self.log = None

    def item_scraped(self, item: Any, response: Any = None, spider: Any = None) -> None:
        if self.log is None or not is_page_record(item):
            return
        if item.get("semantic") is not None and item.get("md5dia"):
            self.pages.append((host_of(item["url"]), float(item.get("score") or 0.0)))

    def flushing(self) -> None:
        if self.log is None:
            return
        self.write()
        if self.rescores:
            self.rescore()

    def write(self) -> None:
        """The pages learnt and the links found since the last write, one round trip."""
        if self.learns_sites:
            found = self.strategy.links_found()
            self.links += found  # kept, like the pages, while the frontier is down
            if found:
                self.crawler.stats.inc_value("spitag/strategy/links_found", sum(row[2] for row in found))
        if not self.pages and not self.links:
            return
        if self.outage.call(self.log.learn, self.pages, self.links, default=False) is False:
            return
        self.pages, self.links = [], []

    def hear(self) -> None:
        """Feed the strategy the pages the frontier learnt that it did not see: every
        earlier page at open, then the other workers' pages (``LearningLog.learnt``)."""
        first = self.cursor is None
        answer = self.outage.call(self.log.learnt, self.cursor)
        if answer is None:
            return
        self.cursor, batches = answer
        pages = hosts = links = 0
        for batch in batches:
            if batch.links:
                links += self.strategy.hear_links(batch.links)  # first, as their finder did
            for host, score_sum, n in batch.pages:
                self.strategy.absorb(host, score_sum, n)
                pages += n
            hosts += len(batch.pages)
        stats = self.crawler.stats
        if links:
            stats.inc_value("spitag/strategy/links_at_start" if first else "spitag/strategy/links_from_workers", links)
        if pages:
            stats.inc_value("spitag/strategy/learnt_at_start" if first else "spitag/strategy/learnt_from_workers",
                            pages)
        if first and (pages or links):
            logger.info("strategy %s starts from %d pages of %d hosts and %d links learnt before",
                        self.strategy.name, pages, hosts, links)

    def rescore(self) -> None:
        """Rank the hosts not fetched yet by what the strategy expects of them now, if
        its estimates may have moved (g or its models were refitted): their links'
        priorities hold the estimates of the moment each link was found."""
        refits = getattr(self.strategy, "refits", 0)
        if refits == self.rescored_refits:
            return
        now = time.monotonic()
        if now - self.rescored_at < self.rescore_seconds:
            return
        self.rescored_refits = refits
        seeds = self.crawler.spider.seed_hosts  # seeds stay first: never ranked again
        estimates = [(h, v) for h, v in self.strategy.estimates(RESCORE_MAX) if h not in seeds]
        if not estimates:
            return  # nothing waits: no time spent, none to wait for
        self.rescored_at = now
        ranked = self.outage.call(self.log.rescore, estimates)
        if ranked is None:
            return
        # every estimate is kept with its host (a host whose URLs are not in the queue
        # yet ranks by it once they are); those with queued URLs were ranked again now
        self.crawler.stats.inc_value("spitag/strategy/estimates_given", len(estimates))
        if ranked:
            self.crawler.stats.inc_value("spitag/frontier/rescored", ranked)
