"""robots.txt fetched once a crawl, not once a worker and a run.

Scrapy's ``RobotsTxtMiddleware`` keeps each host's parsed robots.txt in the memory of
one process: every worker of a shared crawl fetches it again, and so does every run of
a resumed crawl. This subclass also keeps the body in the frontier, for every worker
and run, ``SPITAG_ROBOTS_TTL`` seconds (default 86,400: RFC 9309 lets a crawler use a
cached robots.txt for up to 24 hours; 0: Scrapy's behaviour). A host whose robots.txt
is kept is not asked for it again: its kept body is parsed, and ``robots_parsed`` is
sent as for a fetched one (so its Crawl-delay and sitemaps are read as before).

Kept: answers 2xx–4xx; a 4xx means "no rules" (RFC 9309), so its body (an error page)
is neither parsed, as Scrapy alone would, nor kept. Not kept: a 5xx or a
network error, which the next worker or run tries again. At most ``MAX_ROBOTS`` bytes
are kept (RFC 9309's parsing limit is 500 KiB), zlib-compressed. While the frontier
is unreachable, robots.txt is fetched as Scrapy would.
"""

from __future__ import annotations

import logging
import zlib
from typing import TYPE_CHECKING

from scrapy import signals
from scrapy.downloadermiddlewares.robotstxt import RobotsTxtMiddleware
from scrapy.utils.httpobj import urlparse_cached
from scrapy.utils.misc import build_from_crawler

from spitag import compat
from spitag.options import Options
from spitag.outage import Outage
from spitag.signals import frontier_closing, frontier_opened

if TYPE_CHECKING:
    from scrapy import Request
    from scrapy.crawler import Crawler
    from scrapy.http import Response
    from scrapy.robotstxt import RobotParser

    from spitag.frontier import Frontier, RobotsCache

logger = logging.getLogger(__name__)

MAX_ROBOTS = 512 * 1024


class SharedRobotsTxtMiddleware(RobotsTxtMiddleware):
    def __init__(self, crawler: Crawler) -> None:
        super().__init__(crawler)
        self.ttl = Options.of(crawler).robots_ttl
        self.outage = Outage.of(crawler, "frontier")
        self.cache: RobotsCache | None = None
        crawler.signals.connect(self._opened, signal=frontier_opened)
        crawler.signals.connect(self._closing, signal=frontier_closing)

    def _opened(self, frontier: Frontier) -> None:
        self.cache = frontier.robots if self.ttl > 0 else None

    def _closing(self, frontier: Frontier) -> None:
        self.cache = None

    async def robot_parser(self, request: Request) -> RobotParser | None:
        netloc = urlparse_cached(request).netloc
        if self.cache is not None and not compat.robots_parser_known(self, netloc):
            body = self._recall(netloc)
            if body is not None:
                parser = build_from_crawler(self._parserimpl, self.crawler, body)
                compat.set_robots_parser(self, netloc, parser)
                self._stats.inc_value("spitag/robots/kept_used")
                await self.crawler.signals.send_catch_log_async(
                    signal=signals.robots_parsed, robotparser=parser, request=request
                )
                return parser
        return await super().robot_parser(request)

    async def _parse_robots(self, response: Response, netloc: str, request: Request) -> None:
        if 400 <= response.status < 500:  # "unavailable": no rules (RFC 9309 2.3.1.3), and
            response = response.replace(body=b"")  # an error page's HTML is not kept
        await super()._parse_robots(response, netloc, request)
        if self.cache is not None and 200 <= response.status < 500:
            self._keep(netloc, response.body)

    def _recall(self, netloc: str) -> bytes | None:
        try:
            blob = self.outage.call(self.cache.get, _host(netloc))
            return None if blob is None else zlib.decompress(blob)
        except zlib.error as exc:
            logger.debug("robots.txt of %s not read from the frontier: %s", netloc, exc)
        except Exception as exc:  # never a reason to fail the request: fetch it instead
            logger.warning("robots.txt of %s not read from the frontier: %r", netloc, exc)
        return None

    def _keep(self, netloc: str, body: bytes) -> None:
        try:
            kept = self.outage.call(self.cache.keep, _host(netloc), zlib.compress(body[:MAX_ROBOTS]), self.ttl,
                                    default=False)
        except Exception as exc:
            logger.warning("robots.txt of %s not kept in the frontier: %r", netloc, exc)
            return
        if kept is not False:
            self._stats.inc_value("spitag/robots/kept")


def _host(netloc: str) -> str:
    """``host[:port]``: Scrapy keys robots.txt by netloc, whose credentials (if any)
    must not become a key in the frontier."""
    return netloc.rpartition("@")[2].lower()
