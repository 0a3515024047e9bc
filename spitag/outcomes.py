"""Every page a frontier spider fetched comes to an end, whatever its callback does.

A frontier URL's lease is acknowledged when the store commits the page's item
(``batch_stored``) or when the URL ends without one (``url_settled``). A callback that
raised before yielding the page's item, or that yielded none (a spider of the user's,
derived from SpiTag's, with a ``parse`` of its own), used to leave the lease held: it
was renewed for as long as a download may run (half an hour), then reaped and fetched
again, and the crawl waited on it all that time. This spider middleware closes that gap:

* the callback raised before the page's item: the error is logged and counted as
  Scrapy does (``Spider error processing``, the ``spider_error`` signal, so that
  ``CLOSESPIDER_ERRORCOUNT`` counts it, and ``spider_exceptions/*``), and the page is
  recorded as failed (its status, ``error`` "callback ValueError: …") by the spider's
  ``callback_failure_item``; a spider without one settles the URL, with no row;
* the callback ended without the page's item: the URL is settled (done, no row) and
  counted (``spitag/pages/no_item``).

A callback that raised after the page's item is left to Scrapy: the item is stored and
acknowledged as usual. Items that a pipeline drops are the store pipeline's to settle
(``pipelines.store``). The middleware runs closest to the spider (order 950), so that
it sees the callback's output and exceptions first.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from itemadapter import ItemAdapter
from scrapy import signals
from scrapy.exceptions import CloseSpider
from scrapy.utils.log import failure_to_exc_info, logformatter_adapter
from twisted.python.failure import Failure

from spitag.frontier import uses_frontier
from spitag.signals import url_settled

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Iterable

    from scrapy.crawler import Crawler
    from scrapy.http import Response

logger = logging.getLogger(__name__)

ITEM_OUT = "spitag_item_out"  # response.meta: the page's item, or its failure record, was yielded


class PageOutcomeMiddleware:
    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> PageOutcomeMiddleware:
        return cls(crawler)

    def _page_url(self, response: Response) -> str | None:
        """The frontier URL the response answers, when the spider crawls a frontier."""
        if not uses_frontier(self.crawler.spider):
            return None
        return response.meta.get("spitag_url")

    async def process_spider_output(self, response: Response, result: AsyncIterator[Any]) -> AsyncIterator[Any]:
        url = self._page_url(response)
        async for output in result:
            if url is not None and ItemAdapter.is_item(output) and ItemAdapter(output).get("url") == url:
                response.meta[ITEM_OUT] = True
            yield output
        if url is not None and not response.meta.get(ITEM_OUT):
            stats = self.crawler.stats
            first = not stats.get_value("spitag/pages/no_item")
            logger.log(logging.WARNING if first else logging.DEBUG,
                       "the callback gave no item for %s: done, not stored%s", url,
                       " (stat spitag/pages/no_item counts such pages)" if first else "")
            stats.inc_value("spitag/pages/no_item")
            self.crawler.signals.send_catch_log(url_settled, url=url, spider=self.crawler.spider)

    def process_spider_exception(self, response: Response, exception: Exception) -> Iterable[Any] | None:
        url = self._page_url(response)
        if url is None or response.meta.get(ITEM_OUT) or isinstance(exception, CloseSpider):
            return None  # Scrapy's own handling: the item, if any, is stored as usual
        failure = Failure(exception, exception.__class__, exception.__traceback__)
        self._log_spider_error(failure, response)
        response.meta[ITEM_OUT] = True
        record = getattr(self.crawler.spider, "callback_failure_item", None)
        if record is None:
            self.crawler.signals.send_catch_log(url_settled, url=url, spider=self.crawler.spider)
            return []
        return [record(response, failure)]

    def _log_spider_error(self, failure: Failure, response: Response) -> None:
        """What Scrapy does with an exception no middleware handled (``Scraper.handle_spider_error``)."""
        spider = self.crawler.spider
        logkws = self.crawler.logformatter.spider_error(failure, response.request, response, spider)
        logger.log(*logformatter_adapter(logkws), exc_info=failure_to_exc_info(failure), extra={"spider": spider})
        self.crawler.signals.send_catch_log(signal=signals.spider_error, failure=failure, response=response,
                                            spider=spider)
        stats = self.crawler.stats
        stats.inc_value("spider_exceptions/count")
        stats.inc_value(f"spider_exceptions/{type(failure.value).__name__}")
