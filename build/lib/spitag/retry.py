"""A download that failed is tried again later, not at once.

Scrapy's ``RetryMiddleware`` asks a failed request again at once, ``RETRY_TIMES`` (2)
times in a row: a timeout, a refused connection or a 500 is asked three times within
a second or so, and a server that is restarting or a link that drops for a minute
loses the page. Crawlers of the web try again later instead (Nutch in a later fetch
round, Heritrix after ``retry-delay-seconds``, StormCrawler after its ``fetch.error``
schedule). ``LaterRetryMiddleware`` does the same with the frontier: the failed URL
stays leased, renewed by nobody, for ``SPITAG_RETRY_DELAY`` seconds (10), then twice
that, and so on; when a lease runs out the URL is queued again and popped by any
worker in its turn (``UrlQueue.retry_later``). Its failures are counted with the URL in
the frontier, every worker's and every run's, so ``RETRY_TIMES`` bounds the tries of a
URL in the whole crawl; past them the failure is stored, as before. A URL waiting to
be tried again keeps the crawl going, unless its host is set aside as down
(``SPITAG_HOST_FAILURES``): a crawl that ends on its own has tried every URL of a
host that answers its full number of times; a URL of a host down waits for the host,
or for the next run.

Left as Scrapy does them: 429 and 503, which the politeness middleware pauses the host
for and asks again after the pause (``SPITAG_REFUSAL_RETRIES``); requests that are not
this worker's frontier leases (robots.txt, a URL whose lease was reaped); every request
while the frontier is unreachable; and all of them with ``SPITAG_RETRY_DELAY = 0``.
``dont_retry`` and ``max_retry_times`` in a request's meta are honoured.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from scrapy.downloadermiddlewares.retry import RetryMiddleware
from scrapy.exceptions import IgnoreRequest
from scrapy.utils.python import global_object_name
from scrapy.utils.response import response_status_message

from spitag import meta
from spitag.options import Options
from spitag.outage import Outage
from spitag.outcomes import RETRY_LATER, end
from spitag.politeness import PAUSE_STATUSES
from spitag.signals import frontier_closing, frontier_opened

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.http import Request, Response

    from spitag.frontier import Frontier, UrlQueue

logger = logging.getLogger(__name__)


class RetryLater(IgnoreRequest):
    """The request failed and its URL waits in the frontier to be tried again later."""


class LaterRetryMiddleware(RetryMiddleware):
    def __init__(self, settings: Any) -> None:
        super().__init__(settings)
        level = self.give_up_log_level  # (as Scrapy's get_retry_request reads it)
        self.give_up_level = logging.getLevelName(level) if isinstance(level, str) else int(level)
        self.queue: UrlQueue | None = None

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> LaterRetryMiddleware:
        middleware = super().from_crawler(crawler)
        options = Options.of(crawler)
        middleware.delay = options.retry_delay
        # 429 and 503 are asked again after the host's pause, when pauses are on
        middleware.paused_statuses = PAUSE_STATUSES if options.max_retry_after > 0 else ()
        middleware.outage = Outage.of(crawler, "frontier")
        crawler.signals.connect(middleware._opened, signal=frontier_opened)
        crawler.signals.connect(middleware._closing, signal=frontier_closing)
        return middleware

    def _opened(self, frontier: Frontier) -> None:
        self.queue = frontier.queue

    def _closing(self, frontier: Frontier) -> None:
        self.queue = None

    def process_response(self, request: Request, response: Response, spider: Any = None) -> Any:
        if response.status in self.paused_statuses:
            if request.meta.get("dont_retry") or response.status not in self.retry_http_codes:
                return response
            return super()._retry(request, response_status_message(response.status)) or response
        return super().process_response(request, response)

    def _retry(self, request: Request, reason: Any) -> Request | None:
        url = meta.url_of(request)
        if self.delay <= 0 or self.queue is None or url is None or request.meta.get("retry_times"):
            return super()._retry(request, reason)  # (an immediate retry goes on as it began)
        retries = request.meta.get("max_retry_times", self.max_retry_times)
        retry = self.outage.call(self.queue.retry_later, url, retries, self.delay)
        if retry is None:  # not this worker's lease, or the frontier is unreachable
            return super()._retry(request, reason)
        if isinstance(reason, Exception):
            reason = global_object_name(reason.__class__)
        stats = self.crawler.stats
        if not retry.seconds:
            stats.inc_value("retry/max_reached")
            logger.log(self.give_up_level, "Gave up retrying %s (failed %d times): %s", url, retry.tries, reason)
            return None
        stats.inc_value("retry/count")
        stats.inc_value(f"retry/reason_count/{reason}")
        stats.inc_value("spitag/retry/later")
        logger.info("failed %s (%s, %d of %d tries): tried again in %.0f s",
                    url, reason, retry.tries, retries + 1, retry.seconds)
        end(self.crawler, RETRY_LATER, [url], seconds=retry.seconds)
        raise RetryLater(f"tried again in {retry.seconds:.0f} s")
