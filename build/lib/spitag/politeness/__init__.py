"""Politeness that holds across workers, taken at download time.

A downloader middleware, last before the download, whose request waits, in order, for:

1. its host not to be down (``spitag.politeness.down``: a dead host is set aside);
2. a place among the host's downloads (``spitag.politeness.places``:
   ``CONCURRENT_REQUESTS_PER_DOMAIN``, for every worker together);
3. the end of a pause the host asked for (``spitag.politeness.refusals``: 429 and 503);
4. the host's delay since the last request to it, of any worker
   (``spitag.politeness.spacing``: ``DOWNLOAD_DELAY``, Crawl-delay, AutoThrottle).

Each part reaches the frontier's per-host gate (``HostGate``) through one
``GateLink``; while the frontier is unreachable, each holds what this worker alone
knows (its own places, its own spacing, its own failure counts), and the crawl goes on.
Scrapy's own per-slot delay is turned off: its randomized, worker-local spacing would
only shift requests after the reservation.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from scrapy import signals
from scrapy.utils.defer import maybe_deferred_to_future
from scrapy.utils.httpobj import urlparse_cached
from scrapy.utils.misc import load_object

from spitag import compat, meta
from spitag.aio import every, stop
from spitag.options import Options
from spitag.politeness.down import FAILURE_STATUSES, DeadHosts, HostDown
from spitag.politeness.link import GateLink
from spitag.politeness.places import SHARED_HOLD, HostConcurrency, SharedPlaces
from spitag.politeness.refusals import PAUSE_STATUSES, Refusals, retry_after
from spitag.politeness.spacing import Spacing
from spitag.signals import frontier_closing, frontier_opened

if TYPE_CHECKING:
    from scrapy import Request
    from scrapy.crawler import Crawler

    from spitag.frontier import Frontier

__all__ = ["FAILURE_STATUSES", "PAUSE_STATUSES", "HostConcurrency", "HostDown", "PolitenessMiddleware", "retry_after"]


class PolitenessMiddleware:
    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler
        options = Options.of(crawler)
        self.link = GateLink(crawler)
        self.slots = HostConcurrency(crawler.settings.getint("CONCURRENT_REQUESTS_PER_DOMAIN"))
        self.shared = SharedPlaces(self.link, self.slots.limit, min(options.lease_seconds, SHARED_HOLD),
                                   crawler.stats)
        self.spacing = Spacing(self.link, crawler, options.host_delay)
        self.refusals = Refusals(self.link, self.spacing, crawler, options.max_retry_after, options.refusal_retries)
        self.down = DeadHosts(self.link, crawler.stats, options.host_failures, options.host_down_seconds)
        self.loops: list[Any] = []
        # what counts as no answer: the exceptions Scrapy retries (RETRY_EXCEPTIONS)
        self.no_answer = tuple(
            load_object(x) if isinstance(x, str) else x for x in crawler.settings.getlist("RETRY_EXCEPTIONS")
        )
        crawler.signals.connect(self._opened, signal=frontier_opened)
        crawler.signals.connect(self._closing, signal=frontier_closing)
        crawler.signals.connect(self.spacing.robots_parsed, signal=signals.robots_parsed)
        crawler.signals.connect(self._left_downloader, signal=signals.request_left_downloader)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> PolitenessMiddleware:
        return cls(crawler)

    def _opened(self, frontier: Frontier) -> None:
        self.link.gate, self.link.owner = frontier.gate, frontier.owner
        # Scrapy's downloader spaces requests per slot by DOWNLOAD_DELAY, randomized,
        # after this middleware: that would shift a request past its reservation. The
        # gate takes over the delay.
        compat.no_downloader_delay(getattr(self.crawler, "engine", None))
        if self.link.shares_places:
            self.loops.append(every(self.shared.hold / 3, self.shared.renew))

    def _closing(self, frontier: Frontier) -> None:
        stop(self.loops)
        self.link.gate = None

    async def process_request(self, request: Request, spider: Any = None) -> None:
        host = urlparse_cached(request).hostname or ""
        self.down.check(host)
        asked = self.slots.enter(host)
        held: list[bool] = []
        asked.addCallback(lambda waited: held.append(waited) or waited)
        token = None
        try:
            await maybe_deferred_to_future(asked)
            if held[0]:
                self.crawler.stats.inc_value("spitag/politeness/host_slot_waits")
            token = await self.shared.enter(host)
            await self.refusals.wait(host)
            await self.spacing.wait(host)
            self.down.check(host)  # (set aside while this request waited)
        except BaseException:  # cancelled (a shutdown): the places held are given back
            if token is not None:
                self.shared.leave(token)
            if held:
                self.slots.leave(host)
            raise
        request.meta[meta.HOST_SLOT] = host  # given back when the request leaves the downloader
        if token is not None:
            request.meta[meta.HOST_PLACE] = token
        return None

    def _give_back(self, request: Request) -> None:
        token = request.meta.pop(meta.HOST_PLACE, None)
        if token is not None:
            self.shared.leave(token)  # first, so that the next request here finds it free
        host = request.meta.pop(meta.HOST_SLOT, None)
        if host is not None:
            self.slots.leave(host)

    def _left_downloader(self, request: Request, spider: Any = None) -> None:
        self._give_back(request)

    def process_response(self, request: Request, response: Any, spider: Any = None) -> Any:
        self._give_back(request)  # (already given back, unless a later middleware answered)
        host = urlparse_cached(request).hostname or ""
        self.down.answered(host, response.status)
        self.spacing.answered(host, request, response)
        self.refusals.answered(host, request, response)
        return response

    def process_exception(self, request: Request, exception: BaseException, spider: Any = None) -> None:
        self._give_back(request)
        if isinstance(exception, self.no_answer):
            self.down.failed(urlparse_cached(request).hostname or "", type(exception).__name__)
        return None
