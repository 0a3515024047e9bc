"""The ``spitag`` spider: fetch, profile, score, follow.

    scrapy crawl spitag -a seeds=URL1,URL2 [-a crawl=NAME] -O pages.jsonl

Every requested URL yields one PageItem (``spitag.record``); outlinks in scope are
followed with the priority the scoring strategy gives them (``spitag.scoring``).
Redirects and meta refreshes are recorded as such and their targets followed, rather
than followed silently by Scrapy's middlewares, so that each URL keeps its own row.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import AsyncIterator, Iterator
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

import scrapy
from scrapy import signals
from scrapy.exceptions import IgnoreRequest, StopDownload

from spitag import __version__, logfilters, meta, parts
from spitag.auth import seed_credentials
from spitag.filters import UrlFilter
from spitag.frontier import Entry
from spitag.offload import ProfilePool
from spitag.options import Options
from spitag.outcomes import SET_ASIDE, SETTLED, end
from spitag.politeness import HostDown
from spitag.recrawl import RecrawlPolicy, conditional_headers, settle
from spitag.record import failure_item, media_type, profile_job, response_item, worth_its_body
from spitag.retry import RetryLater
from spitag.scoring import Parent, semantic_score, strategy_from_options
from spitag.seeds import default_crawl_id, load_seeds, raw_seeds
from spitag.sitemaps import robots_sitemaps, sitemap_locations
from spitag.urls import Scope, cached_normalizer, host_of

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.http import Response
    from scrapy.settings import BaseSettings
    from twisted.python.failure import Failure

logger = logging.getLogger(__name__)

ROBOTS_FORBIDDEN = "Forbidden by robots.txt"  # RobotsTxtMiddleware's IgnoreRequest message


class SpitagSpider(scrapy.Spider):
    name = "spitag"

    @classmethod
    def update_settings(cls, settings: BaseSettings) -> None:
        """SpiTag's parts (``spitag.parts``) come with its spider: merged here, so that a
        spider derived from it keeps them whatever its own ``custom_settings`` say."""
        parts.merge_required(settings)
        super().update_settings(settings)
        parts.merge(settings)

    def __init__(self, seeds: str | None = None, crawl: str | None = None, **kwargs: Any):
        super().__init__(**kwargs)
        self.seed_urls = load_seeds(seeds)
        self.credentials = seed_credentials(raw_seeds(seeds))
        self.crawl_id = (crawl or "").strip() or default_crawl_id(self.seed_urls)
        self.seed_hosts: set[str] = set()  # hosts of the seeds requested (seed_request)

    @classmethod
    def from_crawler(cls, crawler: Crawler, *args: Any, **kwargs: Any) -> SpitagSpider:
        spider = super().from_crawler(crawler, *args, **kwargs)
        options = spider.options = Options.of(crawler)
        spider.strategy = strategy_from_options(options)
        spider.weights = options.syntax_weights
        spider.scope = Scope(options.scope, spider.seed_urls)
        spider.filter = UrlFilter.from_options(options, spider.scope)
        spider.follow_nofollow = options.follow_nofollow
        spider.drop_params = options.session_params
        spider.normalize = cached_normalizer(spider.drop_params)
        logfilters.install()
        crawler.signals.connect(spider._bytes_received, signal=signals.bytes_received)
        crawler.signals.connect(spider._headers_received, signal=signals.headers_received)
        spider.recrawl = RecrawlPolicy.from_options(options)
        spider.use_sitemaps = options.sitemaps
        if options.contact and crawler.settings.getpriority("USER_AGENT") == parts.DEFAULT:  # (not the user's)
            spider.user_agent = f"SpiTag/{__version__} (+{options.contact}; semantic focused crawler)"
        spider.pool = None
        if options.extract_processes:
            spider.pool = ProfilePool(options.extract_processes, crawler)
            crawler.signals.connect(spider.pool.start, signal=signals.spider_opened)
            crawler.signals.connect(spider.pool.close, signal=signals.spider_closed)
        if spider.use_sitemaps:
            crawler.signals.connect(spider._robots_parsed, signal=signals.robots_parsed)
        return spider

    @property
    def stats(self) -> Any:
        return self.crawler.stats

    async def start(self) -> AsyncIterator[scrapy.Request]:
        logger.info(
            "crawl %s: %d seed(s), scope %s, strategy %s",
            self.crawl_id, len(self.seed_urls), self.options.scope, self.strategy.name,
        )
        for url in self.seed_urls:
            yield self.seed_request(url)

    def seed_request(self, url: str, depth: int = 0) -> scrapy.Request:
        """A seed (or a sitemap's URL): the strategy's seed priority, never added to twice.
        Its host is one of ``seed_hosts``, which stay first (never ranked again)."""
        host = host_of(url)
        self.seed_hosts.add(host)
        return self.frontier_request(Entry(url, host, depth, self.strategy.seed()), combine="max")

    def frontier_request(self, entry: Entry, combine: str | None = None) -> scrapy.Request:
        """The request of a frontier entry (``spitag.meta``), conditional when the entry
        holds what its last visit left (``revisit``: ``spitag.recrawl``). ``combine``
        overrides the strategy's rule for its push: seeds and redirect targets pass
        ``"max"`` (their priority is handed over, not contributed)."""
        return meta.frontier_request(entry, callback=self.parse, errback=self.on_error, combine=combine,
                                     headers=conditional_headers(entry.revisit))

    def parse(self, response: Response, **kwargs: Any) -> Iterator[Any] | AsyncIterator[Any]:
        """The page's item, then its outlinks. An HTML page is profiled in a worker
        process when there is a pool (the callback then awaits it), else right here.

        A subclass' own ``parse`` may go through ``super().parse(response)`` with
        ``async for`` (profiled in a worker, as here) or with ``for`` (profiled in the
        crawler process: a sync callback cannot wait for a worker)."""
        job = None
        if self.pool is not None:
            job = profile_job(
                response,
                keep_data=self.options.keep_data,
                max_page_size=self.options.max_page_size,
                extract_budget=self.options.extract_budget or None,
                max_memory=int(self.options.extract_memory * 2**20) or None,
                drop_params=self.drop_params,
            )
        if not self._called_by_scrapy(response):  # but by a subclass' callback
            return PageOutput(self, response, job)
        if job is not None:
            return self._parse_offloaded(response, job)
        return self._parse_page(response, None)

    def _called_by_scrapy(self, response: Response) -> bool:
        """Whether Scrapy called this ``parse`` as the request's callback, rather than a
        subclass' callback (its own ``parse`` or another) through ``super().parse``."""
        callback = getattr(getattr(response, "request", None), "callback", None)
        if callback is None:  # Scrapy calls the spider's parse, whichever it is
            return type(self).parse is SpitagSpider.parse
        return getattr(callback, "__func__", callback) is SpitagSpider.parse

    async def _parse_offloaded(self, response: Response, job: Any) -> AsyncIterator[Any]:
        profile = await self.pool.profile(job) if job is not None else None
        for output in self._parse_page(response, profile):
            yield output

    def _parse_page(self, response: Response, profiled: Any) -> Iterator[Any]:
        item, profile = response_item(
            response,
            self.crawl_id,
            keep_data=self.options.keep_data,
            max_page_size=self.options.max_page_size,
            max_links=self.options.max_links_per_page,
            follow_nofollow=self.follow_nofollow,
            normalize=self.normalize,
            extract_budget=self.options.extract_budget or None,
            profiled=profiled,
            strategy=self.strategy.name,
        )
        if profile is not None:
            item["score"] = semantic_score(item["semantic"], self.weights)
        revisit = meta.revisit_of(response)
        settle(self.recrawl, item, response.headers, revisit, _checked(item))
        self._count(item, profile)
        if revisit is not None:
            self.stats.inc_value(
                "spitag/recrawl/" + ("not_modified" if response.status == 304 else
                                     "changed" if item["changed"] else "unchanged")
            )
        yield item
        depth = item["depth"]
        if depth == 0 and not self.scope.allows(item["url"]):
            self.scope.add_seed(item["url"])  # a seed injected into the running crawl
        if item["redirect_to"] and 300 <= response.status < 400:
            # A redirect is not a page: its target takes its place, same layer, same priority.
            target = item["redirect_to"]
            if self._may_follow(target, depth):
                entry = Entry(target, host_of(target), depth, item["priority"] or 0.0,
                              note={"redirect_from": item["url"]})
                yield self.frontier_request(entry, combine="max")
            return
        if self.use_sitemaps and profile is None and 200 <= response.status < 300:
            yield from self._follow_sitemap(response, item)
            return
        if profile is None or not item["links"]:
            return
        parent = Parent(
            url=item["url"],
            depth=depth,
            priority=float(item["priority"] or 0.0),
            score=item["score"],
            outlinks=item["outlinks"],
        )
        if item["robots"] and "nofollow" in item["robots"]:
            self.stats.inc_value("spitag/robots/nofollow")
        filtered: Counter[str] = Counter()  # most links are: one stats call a reason, not a link
        for url in item["links"]:
            if self._may_follow(url, depth + 1, filtered):
                entry = Entry(url, host_of(url), depth + 1, self.strategy.priority(parent, url), parent.url,
                              parent.score, self.strategy.reason())
                yield self.frontier_request(entry)
        for why, count in filtered.items():
            self.stats.inc_value(f"spitag/filtered/{why}", count)

    def _bytes_received(self, data: bytes, request: scrapy.Request, **_: Any) -> None:
        """Cut a body at SPITAG_MAX_PAGE_SIZE: the page arrives truncated (and flagged),
        instead of being downloaded whole or failing."""
        if meta.count_bytes(request, len(data)) > self.options.max_page_size:
            raise StopDownload(fail=False)

    def _headers_received(self, headers: Any, request: scrapy.Request, **_: Any) -> None:
        """A frontier page whose type says it holds nothing the crawl reads (an archive,
        an image, a PDF) is stopped at its headers: its URL row records the answer, and
        its body is never downloaded (``spitag.record``)."""
        if meta.url_of(request) is None:  # (robots.txt, the spider's own requests)
            return
        if worth_its_body(media_type(headers), self.use_sitemaps):
            return
        request.meta[meta.HEADERS_ONLY] = True
        self.stats.inc_value("spitag/pages/headers_only")
        raise StopDownload(fail=False)

    def _robots_parsed(self, robotparser: Any, request: scrapy.Request, **_: Any) -> None:
        """Queue the sitemaps a robots.txt lists, as seeds."""
        for raw in robots_sitemaps(robotparser):
            url = self.normalize(raw)
            if url and self._may_follow(url, 0):
                self.stats.inc_value("spitag/sitemaps/listed")
                self.crawler.engine.crawl(self.seed_request(url))

    def _follow_sitemap(self, response: Response, item: Any) -> Iterator[scrapy.Request]:
        locations = sitemap_locations(response.body, self.options.max_page_size)
        if locations is None:
            return
        self.stats.inc_value("spitag/sitemaps/read")
        depth = item["depth"] + 1
        for raw in locations[: self.options.max_sitemap_urls]:
            url = self.normalize(raw)
            if url and self._may_follow(url, depth):
                self.stats.inc_value("spitag/sitemaps/urls")
                yield self.seed_request(url, depth)

    def _may_follow(self, url: str, depth: int, tally: Counter[str] | None = None) -> bool:
        """The URL filter's verdict; a refusal is counted in the stats, or in ``tally``
        for the caller to add to them at once."""
        reason = self.filter.reason(url, depth)
        if reason is None:
            return True
        if tally is None:
            self.stats.inc_value(f"spitag/filtered/{reason}")
        else:
            tally[reason] += 1
        return False

    def on_error(self, failure: Failure) -> Iterator[Any]:
        request = failure.request
        url = meta.url_of(request) or request.url
        if failure.check(IgnoreRequest) and ROBOTS_FORBIDDEN in str(failure.value):
            # Never requested: robots.txt forbids it. Done, with no URL row.
            self.stats.inc_value("spitag/filtered/robots")
            logger.debug("forbidden by robots.txt: %s", url)
            end(self.crawler, SETTLED, [url])
            return
        if failure.check(RetryLater):  # failed: its URL waits in the frontier (spitag.retry)
            return
        if failure.check(HostDown):  # not sent: back to the frontier, for a later try
            logger.debug("set aside, its host is down: %s", url)
            end(self.crawler, SET_ASIDE, [url])
            return
        # Requested but no usable response: timeouts, refused connections, bodies over
        # DOWNLOAD_MAXSIZE, decompression bombs... recorded with their reason.
        item = failure_item(request, failure, self.crawl_id, self.strategy.name)
        settle(self.recrawl, item, None, meta.revisit_of(request), _checked(item))
        self.stats.inc_value(f"spitag/errors/{type(failure.value).__name__}")
        logger.info("failed %s: %s", url, item["error"])
        yield item

    def callback_failure_item(self, response: Response, failure: Failure) -> Any:
        """The record of a page whose callback raised before its item
        (``spitag.outcomes``): its status, and the error, so that the URL is done and
        shows why it has no page."""
        item = failure_item(response.request, failure, self.crawl_id, self.strategy.name)
        item["status"] = response.status
        item["error"] = f"callback {item['error']}"[:500]
        settle(self.recrawl, item, None, meta.revisit_of(response), _checked(item))
        self.stats.inc_value("spitag/errors/callback")
        return item

    def _count(self, item: Any, profile: Any) -> None:
        self.stats.inc_value(f"spitag/status/{item['status']}")
        if profile is None:
            return
        self.stats.inc_value("spitag/pages/html")
        for syntax in profile.errors:
            self.stats.inc_value(f"spitag/extract/errors/{syntax}")
        for syntax in profile.skipped:
            self.stats.inc_value(f"spitag/extract/skipped/{syntax}")
        for syntax in profile.cut:
            self.stats.inc_value(f"spitag/extract/cut/{syntax}")
        if profile.cut_by:
            self.stats.inc_value(f"spitag/extract/cut_by/{profile.cut_by}")
        for key, count in profile.counts.items():
            if count:
                self.stats.inc_value(f"spitag/semantic/{key}", count)
        if item["truncated"]:
            self.stats.inc_value("spitag/truncated")


def _checked(item: Any) -> datetime:
    """When the item's answer came (its ``fetched_at``)."""
    try:
        return datetime.fromisoformat(item["fetched_at"].replace("Z", "+00:00"))
    except (TypeError, ValueError, AttributeError):
        return datetime.now(timezone.utc)


class PageOutput:
    """What ``SpitagSpider.parse`` gives a subclass' ``parse``: the page's item and
    requests, with ``for`` (the page profiled in the crawler process) or ``async for``
    (in a profile worker when the crawl has them)."""

    def __init__(self, spider: SpitagSpider, response: Response, job: Any) -> None:
        self.spider, self.response, self.job = spider, response, job

    def __iter__(self) -> Iterator[Any]:
        return self.spider._parse_page(self.response, None)

    def __aiter__(self) -> AsyncIterator[Any]:
        return self.spider._parse_offloaded(self.response, self.job)
