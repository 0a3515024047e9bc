"""Two requests to one host never less than its delay apart, however many workers send them.

Before a request to a host with a delay goes out, the frontier's hard gate is asked
(``HostGate.acquire``): it answers "go" and reserves the next ``delay`` seconds, or says
how long to wait. The reservation lives in the frontier — in Redis for a shared crawl.
The delay is ``DOWNLOAD_DELAY`` (``SPITAG_HOST_DELAY``), or the host's own (robots.txt
Crawl-delay, which Scrapy itself ignores), and holds for robots.txt requests too. With
``AUTOTHROTTLE_ENABLED``, a host's delay follows the latency of its answers, by Scrapy's
AutoThrottle rule (``spitag.throttle``), and the gate spaces every worker's requests by
it: the target concurrency is the site's, not each worker's. Hosts without a delay cost
no round trip. While the frontier is unreachable, this worker spaces its own requests.
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, Any

from scrapy.utils.httpobj import urlparse_cached

from spitag.politeness.places import sleep
from spitag.throttle import HostThrottle

if TYPE_CHECKING:
    from scrapy import Request

    from spitag.politeness.link import GateLink

logger = logging.getLogger(__name__)

DELAYS_REFRESH = 10.0  # seconds between reloads of the per-host delays
MAX_CRAWL_DELAY = 120.0  # a robots.txt asking for more is capped (and the host crawled slowly)
LOCAL_GATES = 4096  # hosts remembered for the local delay gate before a clean-up


class Spacing:
    def __init__(self, link: GateLink, crawler: Any, default_delay: float) -> None:
        self.link = link
        self.stats = crawler.stats
        self.default_delay = default_delay
        self.throttle = HostThrottle.from_settings(crawler.settings, default_delay)
        self.throttle_debug = crawler.settings.getbool("AUTOTHROTTLE_DEBUG")
        self.user_agent = crawler.settings.get("ROBOTSTXT_USER_AGENT") or crawler.settings.get("USER_AGENT")
        self.delays: dict[str, float] = {}  # hosts' own delays, every worker's
        self.loaded = 0.0
        self.local_next: dict[str, float] = {}  # the delay gate while the frontier is down
        self.local_limit = LOCAL_GATES

    def delay_for(self, host: str) -> float:
        """The host's delay: its own (robots.txt Crawl-delay) or the default, or the one
        AutoThrottle set from its latency when that is longer."""
        if self.link.gate is None:
            return 0.0
        now = time.monotonic()
        if now - self.loaded > DELAYS_REFRESH:
            delays = self.link.ask("delays")
            if delays is not None:  # (unreachable: the delays known so far hold)
                self.delays = delays
            self.loaded = now
        delay = self.delays.get(host, self.default_delay)
        return delay if self.throttle is None else max(delay, self.throttle.delay(host))

    def robots_parsed(self, robotparser: Any, request: Request, **_: Any) -> None:
        """robots.txt Crawl-delay sets the host's delay, for every worker."""
        crawl_delay = getattr(robotparser, "crawl_delay", None)
        delay = crawl_delay(self.user_agent) if crawl_delay is not None else None
        if delay is not None and delay > 0:
            host = urlparse_cached(request).hostname or ""
            self.set_delay(host, min(float(delay), MAX_CRAWL_DELAY))
            self.stats.inc_value("spitag/politeness/crawl_delay_hosts")
            logger.info("robots.txt of %s asks for a Crawl-delay of %s s", host, delay)

    def set_delay(self, host: str, delay: float) -> None:
        if self.link.gate is not None:
            self.link.ask("set_delay", host, delay)
            self.delays[host] = delay

    async def wait(self, host: str) -> None:
        """Until the frontier lets this host be asked again (while it is unreachable,
        until this worker's own spacing does)."""
        delay = self.delay_for(host)
        if delay <= 0:
            return
        waited = 0.0
        while True:
            wait = self.link.ask("acquire", host, delay)
            if wait is None:
                wait = self.local_next.get(host, 0.0) - time.monotonic()
            if wait <= 0:
                self._spaced(host, delay)
                break
            waited += wait
            await sleep(wait)
        if waited:
            self.stats.inc_value("spitag/politeness/waited_ms", int(waited * 1000))

    def _spaced(self, host: str, delay: float) -> None:
        """Remember when this worker may ask ``host`` again, should the frontier go
        down; hosts whose time has passed are forgotten as the table grows."""
        now = time.monotonic()
        self.local_next[host] = now + delay
        if len(self.local_next) > self.local_limit:
            self.local_next = {h: t for h, t in self.local_next.items() if t > now}
            self.local_limit = max(LOCAL_GATES, 2 * len(self.local_next))

    def answered(self, host: str, request: Request, response: Any) -> None:
        """AutoThrottle: the host's delay follows its latency (``spitag.throttle``)."""
        if self.throttle is None or "download_latency" not in request.meta:
            return
        if request.meta.get("autothrottle_dont_adjust_delay") is True:  # (Scrapy's key)
            return
        latency = request.meta["download_latency"]
        old, new = self.throttle.adjust(host, latency, response.status)
        self.stats.max_value("spitag/politeness/autothrottle_delay_max_s", round(new, 3))
        if self.throttle_debug:
            logger.info("autothrottle: %s | delay: %5d ms (%+d) | latency: %5d ms | size: %6d bytes",
                        host, new * 1000, (new - old) * 1000, latency * 1000, len(response.body))
