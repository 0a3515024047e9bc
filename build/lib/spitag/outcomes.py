"""Every page a SpiTag crawl fetched comes to an end, and each end is one event.

A page ends in one of five ways (``PageEnd.kind``):

* ``stored`` — its item was committed by the store (``spitag.pipeline``);
* ``settled`` — it ends without a row: forbidden by robots.txt, its item dropped by a
  pipeline before the store, or its callback gave none;
* ``set_aside`` — not sent: its host is down (``spitag.politeness``); it goes back to
  the queue for when the host is tried again;
* ``retry_later`` — its download failed and it waits, still leased, for another try
  (``spitag.retry``);
* ``canonical`` — a page fetched under another URL named this one its canonical: it is
  done too, never fetched.

``end(crawler, kind, urls)`` sends the ``page_ended`` signal; its one owner, this
worker's leases (``spitag.leases``), tells the frontier.

``PageOutcomeMiddleware`` makes sure a page whose callback misbehaves ends all the
same: a callback (a spider derived from SpiTag's) that raised before yielding the
page's item has the error logged and counted as Scrapy does (``Spider error
processing``, ``spider_error``, ``spider_exceptions/*``, so ``CLOSESPIDER_ERRORCOUNT``
counts it) and the page recorded as failed by the spider's ``callback_failure_item``;
one that yielded no item for its page is settled and counted (``spitag/pages/no_item``).
A callback that raised after the page's item is left to Scrapy. The middleware runs
closest to the spider (order 950), so that it sees the callback's output first.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from itemadapter import ItemAdapter
from scrapy import signals
from scrapy.exceptions import CloseSpider
from scrapy.utils.log import failure_to_exc_info, logformatter_adapter
from twisted.python.failure import Failure

from spitag import meta
from spitag.signals import page_ended

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Iterable, Sequence

    from scrapy.crawler import Crawler
    from scrapy.http import Response

logger = logging.getLogger(__name__)

STORED, SETTLED, SET_ASIDE, RETRY_LATER, CANONICAL = "stored", "settled", "set_aside", "retry_later", "canonical"


@dataclass(frozen=True)
class PageEnd:
    kind: str
    urls: tuple[str, ...]
    seconds: float = 0.0  # retry_later: until the URL is due again
    depth: int = 0  # canonical: the depth of the page fetched under another URL


def end(crawler: Crawler, kind: str, urls: Sequence[str], *, seconds: float = 0.0, depth: int = 0) -> None:
    """Tell the crawl that these pages came to an end (see the module docstring)."""
    if urls:
        crawler.signals.send_catch_log(page_ended, end=PageEnd(kind, tuple(urls), seconds, depth))


class PageOutcomeMiddleware:
    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> PageOutcomeMiddleware:
        return cls(crawler)


    async def process_spider_output(self, response: Response, result: AsyncIterator[Any]) -> AsyncIterator[Any]:
        url = meta.url_of(response)
        async for output in result:
            if url is not None and ItemAdapter.is_item(output) and ItemAdapter(output).get("url") == url:
                response.meta[meta.ITEM_OUT] = True
            yield output
        if url is not None and not response.meta.get(meta.ITEM_OUT):
            stats = self.crawler.stats
            first = not stats.get_value("spitag/pages/no_item")
            logger.log(logging.WARNING if first else logging.DEBUG,
                       "the callback gave no item for %s: done, not stored%s", url,
                       " (stat spitag/pages/no_item counts such pages)" if first else "")
            stats.inc_value("spitag/pages/no_item")
            end(self.crawler, SETTLED, [url])

    def process_spider_exception(self, response: Response, exception: Exception) -> Iterable[Any] | None:
        url = meta.url_of(response)
        if url is None or response.meta.get(meta.ITEM_OUT) or isinstance(exception, CloseSpider):
            return None  # Scrapy's own handling: the item, if any, is stored as usual
        failure = Failure(exception, exception.__class__, exception.__traceback__)
        self._log_spider_error(failure, response)
        response.meta[meta.ITEM_OUT] = True
        record = getattr(self.crawler.spider, "callback_failure_item", None)
        if record is None:
            end(self.crawler, SETTLED, [url])
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
