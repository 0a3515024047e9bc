"""Politeness that holds across workers: the frontier's hard gate, taken at download time.

A downloader middleware: before a request to a host with a delay goes out, it asks the
frontier for the host (``acquire``), which answers "go" and reserves the next
``delay`` seconds, or says how long to wait. The reservation lives in the frontier —
in Redis for a shared crawl — so two requests to one host are never less than its
delay apart, however many workers send them. The delay is ``DOWNLOAD_DELAY``, or the
host's own (robots.txt Crawl-delay), and holds for robots.txt requests too.

Scrapy's own per-slot delay is turned off: its randomized, worker-local spacing would
only shift requests after the reservation. Hosts without a delay cost no round trip.

It also holds ``CONCURRENT_REQUESTS_PER_DOMAIN`` itself (``HostConcurrency``): at most
that many downloads to one host at a time in this process. Scrapy's downloader slot
is meant to, but Scrapy 2.19 starts each download of a slot's queue as an asyncio task
and counts it as transferring only once the task runs, so a queue of waiting requests
is started all at once (``Downloader._process_queue``): a crawl of one site with the
limit at 4 reached 20 downloads at a time, and one request per host after robots.txt
came in all together. Where workers share the frontier (Redis), the limit is for all of
them together: a download also takes one of the host's places in the frontier
(``Frontier.enter_host``), renewed while it runs and given back when it leaves, and
handed out in turn: the requests that have waited longest first, whichever worker's.

A host that answers 429 (Too Many Requests) or 503 with ``Retry-After`` is left alone
that long (at most ``SPITAG_MAX_RETRY_AFTER`` seconds): the frontier pops none of its
URLs, shuts its hard gate and, where workers share places, gives none
(``Frontier.pause_host``), and this worker holds back its own requests to it, the
retry of the refused one among them. A 429 or 503 without ``Retry-After`` pauses the
host for its delay (at least 1 s), doubled with each such refusal in a row, whichever
worker gets it (``Frontier.back_off``): the requests that were out when a back-off
began add nothing to it, and a request sent after it ended and served ends the run.
Scrapy's ``RetryMiddleware`` retries at once, whatever the server asked, and gives
up after ``RETRY_TIMES`` (2); a refused page is asked again, each time after the
pause, up to ``SPITAG_REFUSAL_RETRIES`` times (8), so that a host limiting its rate
costs time, not pages.

With ``AUTOTHROTTLE_ENABLED``, a host's delay follows the latency of its answers, by
Scrapy's AutoThrottle rule (``spitag.throttle``), and the gate spaces every worker's
requests by it: the target concurrency is the site's, not each worker's.

A host that fails ``SPITAG_HOST_FAILURES`` downloads in a row (5; no answer at all,
or a gateway's 502, 504, 522 or 524) is set aside as down for
``SPITAG_HOST_DOWN_SECONDS`` (600), for every worker (``Frontier.set_host_down``): the
frontier pops none of its URLs, and they do not keep the crawl going; this worker's
requests to it that have not gone out are handed back to the frontier unsent
(``HostDown``). Nutch's ``fetcher.max.exceptions.per.queue`` does the same for a
fetch round: without it, every URL of a dead host costs ``RETRY_TIMES`` + 1 timeouts.
The failures are counted in the frontier, every worker's together
(``Frontier.host_failed``), and an answer of the host starts the count over
(``host_answered``, sent when this worker knows of a count: its own failures, or the
frontier's list of failing hosts, reloaded every ``DELAYS_REFRESH`` seconds). A host
set aside that has not answered since is set aside again at its first failure after
its time is up: a host that stays dead costs one failed download per
``SPITAG_HOST_DOWN_SECONDS``, not ``SPITAG_HOST_FAILURES``. A worker whose download
fails while another has set the host aside learns it then, and holds back its own
requests to it.

While the frontier is unreachable, politeness falls back to what this worker alone
knows (its own places, its own spacing), and the crawl goes on.
"""

from __future__ import annotations

import email.utils
import itertools
import logging
import time
from collections import deque
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from scrapy import signals
from scrapy.exceptions import IgnoreRequest
from scrapy.utils.defer import maybe_deferred_to_future
from scrapy.utils.httpobj import urlparse_cached
from scrapy.utils.misc import load_object
from twisted.internet import task
from twisted.internet.defer import Deferred, succeed

from spitag import compat, meta
from spitag.aio import every, running_reactor, stop
from spitag.errors import FrontierUnavailableError
from spitag.frontier.records import BACK_OFF_KEEP, FAILING_HOSTS, FailureCounts
from spitag.options import Options
from spitag.outage import Outage
from spitag.signals import frontier_closing, frontier_opened
from spitag.throttle import HostThrottle

if TYPE_CHECKING:
    from scrapy import Request
    from scrapy.crawler import Crawler

    from spitag.frontier import Frontier, HostGate

logger = logging.getLogger(__name__)

DELAYS_REFRESH = 10.0  # seconds between reloads of the per-host delays
MAX_CRAWL_DELAY = 120.0  # a robots.txt asking for more is capped (and the host crawled slowly)
# A place in the shared frontier lasts the frontier's lease (SPITAG_LEASE_SECONDS), at
# most SHARED_HOLD seconds, unless renewed (three times a hold while the download
# runs): how long a dead worker's places stay taken, as its leases do.
SHARED_HOLD = 30.0
LOCAL_GATES = 4096  # hosts remembered for the local delay gate before a clean-up
POLL_FIRST, POLL_MAX = 0.05, 0.5  # seconds between asks for a place other workers hold
PAUSE_STATUSES = (429, 503)  # answers whose Retry-After pauses the host (RFC 6585, RFC 9110)
# Answers that say the host could not be reached (a gateway's, a CDN's): failures, as
# no answer is.
FAILURE_STATUSES = (502, 504, 522, 524)


class HostDown(IgnoreRequest):
    """Not sent: the request's host is down (``SPITAG_HOST_FAILURES``). Its URL goes
    back to the frontier, queued, for when the host is tried again."""


class HostConcurrency:
    """At most ``limit`` downloads to one host at a time; the others wait, first come
    first served. A finished download hands its place to the next waiting request.
    Plain Deferreds, so that it runs (and is tested) without a reactor."""

    def __init__(self, limit: int) -> None:
        self.limit = max(int(limit), 1)
        self.active: dict[str, int] = {}
        self.waiting: dict[str, deque[Deferred]] = {}

    def enter(self, host: str) -> Deferred:
        """A place for ``host``: fires True once handed over after a wait, False at
        once if one was free. Cancelled while waiting, it gives up its turn."""
        if self.active.get(host, 0) < self.limit and not self.waiting.get(host):
            self.active[host] = self.active.get(host, 0) + 1
            return succeed(False)
        turn: Deferred = Deferred(canceller=lambda turn: self._withdraw(host, turn))
        self.waiting.setdefault(host, deque()).append(turn)
        return turn

    def _withdraw(self, host: str, turn: Deferred) -> None:
        queue = self.waiting.get(host)
        if queue is not None and turn in queue:
            queue.remove(turn)
            if not queue:
                del self.waiting[host]

    def leave(self, host: str) -> None:
        queue = self.waiting.get(host)
        if queue:
            turn = queue.popleft()
            if not queue:
                del self.waiting[host]
            turn.callback(True)  # the place goes to the next request as it is
            return
        left = self.active.get(host, 0) - 1
        if left > 0:
            self.active[host] = left
        else:
            self.active.pop(host, None)


class PolitenessMiddleware:
    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler
        options = Options.of(crawler)
        self.outage = Outage.of(crawler, "frontier")
        self.default_delay = options.host_delay
        self.throttle = HostThrottle.from_settings(crawler.settings, self.default_delay)
        self.throttle_debug = crawler.settings.getbool("AUTOTHROTTLE_DEBUG")
        self.gate: HostGate | None = None
        self.owner = ""
        self.delays: dict[str, float] = {}
        self.loaded = 0.0
        self.user_agent = crawler.settings.get("ROBOTSTXT_USER_AGENT") or crawler.settings.get("USER_AGENT")
        self.slots = HostConcurrency(crawler.settings.getint("CONCURRENT_REQUESTS_PER_DOMAIN"))
        self.places: dict[str, str] = {}  # token → host: the places held in a shared frontier
        self.tokens = itertools.count(1)
        self.loops: list[Any] = []
        self.hold = min(options.lease_seconds, SHARED_HOLD)
        self.local_next: dict[str, float] = {}  # the delay gate while the frontier is down
        self.local_limit = LOCAL_GATES
        self.unreleased: list[tuple[str, str]] = []
        self.napping: dict[str, dict[Deferred, Any]] = {}  # host → its requests waiting in line
        self.max_pause = options.max_retry_after
        self.refusal_retries = options.refusal_retries
        self.paused: dict[str, float] = {}  # host → until when (monotonic) it asked to be left alone
        # host → when (monotonic) the last back-off this worker knows of ends (back_off)
        self.backing_off: dict[str, float] = {}
        self.max_failures = options.host_failures
        self.down_seconds = options.host_down_seconds
        self.hosts_down: dict[str, float] = {}  # host → until when (monotonic) it is set aside
        # hosts with failures in a row (or set aside before) in the frontier, as far as
        # this worker knows: an answer of one is told (host_answered)
        self.failing: set[str] = set()
        self.failing_loaded = 0.0
        self.own_failures = FailureCounts()  # the counts while the frontier is unreachable
        # what counts as no answer: the exceptions Scrapy retries (RETRY_EXCEPTIONS)
        self.no_answer = tuple(
            load_object(x) if isinstance(x, str) else x for x in crawler.settings.getlist("RETRY_EXCEPTIONS")
        )
        crawler.signals.connect(self._opened, signal=frontier_opened)
        crawler.signals.connect(self._closing, signal=frontier_closing)
        crawler.signals.connect(self._robots_parsed, signal=signals.robots_parsed)
        crawler.signals.connect(self._left_downloader, signal=signals.request_left_downloader)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> PolitenessMiddleware:
        return cls(crawler)

    def _opened(self, frontier: Frontier) -> None:
        self.gate, self.owner = frontier.gate, frontier.owner
        # Scrapy's downloader spaces requests per slot by DOWNLOAD_DELAY, randomized,
        # after this middleware: that would shift a request past its reservation. The
        # gate takes over the delay.
        compat.no_downloader_delay(getattr(self.crawler, "engine", None))
        if self.gate.shares_places:
            self.loops.append(every(self.hold / 3, self._renew))

    def _closing(self, frontier: Frontier) -> None:
        stop(self.loops)
        self.gate = None

    def _renew(self) -> None:
        if self.places and self.gate is not None:
            self._ask(self.gate.hold, [(h, t) for t, h in self.places.items()], self.hold)

    def _ask(self, fn: Any, *args: Any) -> Any:
        """A call of the frontier's gate: None while the frontier is out (``spitag.outage``);
        this worker holds its own limits meanwhile."""
        if not self.outage.ready():
            return None
        try:
            while self.unreleased:  # places given back while it was down: first, really
                self.gate.leave(*self.unreleased[-1])
                self.unreleased.pop()
            result = fn(*args)
        except FrontierUnavailableError as exc:
            self.outage.failed(exc)
            return None
        self.outage.answered()
        return result

    def delay_for(self, host: str) -> float:
        """The host's delay: its own (robots.txt Crawl-delay) or the default, or the one
        AutoThrottle set from its latency when that is longer."""
        if self.gate is None:
            return 0.0
        now = time.monotonic()
        if now - self.loaded > DELAYS_REFRESH:
            delays = self._ask(self.gate.delays)
            if delays is not None:  # (unreachable: the delays known so far hold)
                self.delays = delays
            self.loaded = now
        delay = self.delays.get(host, self.default_delay)
        return delay if self.throttle is None else max(delay, self.throttle.delay(host))

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
        if self.gate is not None:
            self._ask(self.gate.set_delay, host, delay)
            self.delays[host] = delay

    async def process_request(self, request: Request, spider: Any = None) -> None:
        host = urlparse_cached(request).hostname or ""
        self._check_down(host)
        asked = self.slots.enter(host)
        held: list[bool] = []
        asked.addCallback(lambda waited: held.append(waited) or waited)
        token = None
        try:
            await maybe_deferred_to_future(asked)
            if held[0]:
                self.crawler.stats.inc_value("spitag/politeness/host_slot_waits")
            token = await self._share(host)
            await self._space(host)
            self._check_down(host)  # (set aside while this request waited)
        except BaseException:  # cancelled (a shutdown): the places held are given back
            if token is not None:
                self._leave_shared(token)
            if held:
                self.slots.leave(host)
            raise
        request.meta[meta.HOST_SLOT] = host  # given back when the request leaves the downloader
        if token is not None:
            request.meta[meta.HOST_PLACE] = token
        return None

    async def _share(self, host: str) -> str | None:
        """A place among the host's downloads of every worker, where workers share the
        frontier: its token, or None (nothing shared, or the frontier unreachable).
        While every place is taken the request waits in the host's line, asking again
        every 0.05 s when a place would be its own, less often further back."""
        gate = self.gate
        if gate is None or not gate.shares_places:
            return None
        token = f"{self.owner}#{next(self.tokens)}"
        far, started, asked = POLL_FIRST, time.monotonic(), 0
        try:
            while True:
                line = self._ask(gate.enter, host, token, self.slots.limit, self.hold)
                if line is None:  # this worker's own limit holds meanwhile; the place may
                    self.unreleased.append((host, token))  # have been taken as the link broke
                    return None
                if not line:
                    break
                if line < 0:  # the host asked for a pause (Retry-After, to any worker)
                    self.crawler.stats.inc_value("spitag/politeness/paused_ms", -line)
                    await _sleep(-line / 1000)
                    continue
                asked += 1
                if line <= self.slots.limit:
                    await self._nap(host, POLL_FIRST)
                else:
                    await self._nap(host, far)
                    far = min(far * 1.5, POLL_MAX)
        except BaseException:  # cancelled in line: its turn goes to the next
            self._ask(gate.leave, host, token)
            raise
        self.places[token] = host
        if asked:
            waited = time.monotonic() - started
            self.crawler.stats.inc_value("spitag/politeness/shared_host_waits")
            self.crawler.stats.inc_value("spitag/politeness/shared_host_waited_ms", int(waited * 1000))
        return token

    async def _nap(self, host: str, seconds: float) -> None:
        """Sleep ``seconds``, or less: until this worker gives back a place of ``host``
        (``_wake``), which may be the one its line promises to the request."""
        nap: Deferred = Deferred()
        call = running_reactor().callLater(seconds, lambda: nap.called or nap.callback(None))
        naps = self.napping.setdefault(host, {})
        naps[nap] = call
        try:
            await maybe_deferred_to_future(nap)
        finally:
            if call.active():
                call.cancel()
            naps.pop(nap, None)
            if not naps and self.napping.get(host) is naps:
                del self.napping[host]

    def _wake(self, host: str) -> None:
        for nap in list(self.napping.get(host, ())):
            if not nap.called:
                nap.callback(None)

    def _leave_shared(self, token: str) -> None:
        host = self.places.pop(token, None)
        if host is not None and self.gate is not None:
            self._ask(self.gate.leave, host, token)
            if self.outage.down:  # unreachable: given back once it answers again
                self.unreleased.append((host, token))
            else:
                self._wake(host)

    async def _space(self, host: str) -> None:
        """The hard delay gate: wait until the frontier lets this host be asked again
        (while it is unreachable, until this worker's own spacing does), and until the
        end of a pause the host asked for."""
        until = self.paused.get(host)
        if until is not None:
            wait = until - time.monotonic()
            if wait > 0:
                self.crawler.stats.inc_value("spitag/politeness/paused_ms", int(wait * 1000))
                await _sleep(wait)
        delay = self.delay_for(host)
        if delay <= 0:
            return
        waited = 0.0
        while True:
            wait = self._ask(self.gate.acquire, host, delay)
            if wait is None:
                now = time.monotonic()
                wait = self.local_next.get(host, 0.0) - now
                if wait <= 0:
                    self._spaced(host, delay)
                    break
            elif wait <= 0:
                self._spaced(host, delay)
                break
            waited += wait
            await _sleep(wait)
        if waited:
            self.crawler.stats.inc_value("spitag/politeness/waited_ms", int(waited * 1000))

    def _spaced(self, host: str, delay: float) -> None:
        """Remember when this worker may ask ``host`` again, should the frontier go
        down; hosts whose time has passed are forgotten as the table grows."""
        now = time.monotonic()
        self.local_next[host] = now + delay
        if len(self.local_next) > self.local_limit:
            self.local_next = {h: t for h, t in self.local_next.items() if t > now}
            self.local_limit = max(LOCAL_GATES, 2 * len(self.local_next))

    def _give_back(self, request: Request) -> None:
        token = request.meta.pop(meta.HOST_PLACE, None)
        if token is not None:
            self._leave_shared(token)  # first, so that the next request here finds it free
        host = request.meta.pop(meta.HOST_SLOT, None)
        if host is not None:
            self.slots.leave(host)

    def _left_downloader(self, request: Request, spider: Any = None) -> None:
        self._give_back(request)

    def process_response(self, request: Request, response: Any, spider: Any = None) -> Any:
        self._give_back(request)  # (already given back, unless a later middleware answered)
        host = urlparse_cached(request).hostname or ""
        if response.status in FAILURE_STATUSES:
            self._failed(host, f"HTTP {response.status}")
        elif self._known_failing(host):
            self._answered(host)
        sent_ago = request.meta.get("download_latency", 0.0)  # the request went out that long ago
        if self.throttle is not None and "download_latency" in request.meta:
            if request.meta.get("autothrottle_dont_adjust_delay") is not True:  # (Scrapy's key)
                self._throttle(host, sent_ago, response)
        if response.status in PAUSE_STATUSES and self.max_pause > 0:
            # asked again after the pause, more times than a broken page would be
            # (RetryMiddleware, after this middleware, reads it; its copy keeps it)
            tries = request.meta.get("max_retry_times", self.crawler.settings.getint("RETRY_TIMES"))
            request.meta["max_retry_times"] = max(tries, self.refusal_retries)
            seconds = retry_after(response.headers.get(b"Retry-After"))
            if seconds is not None:
                if seconds:
                    self.pause(host, min(seconds, self.max_pause), response.status)
            else:  # no word on how long: back off, doubling while the refusals go on
                self._back_off(host, sent_ago, response.status)
        elif host in self.backing_off and time.monotonic() - sent_ago >= self.backing_off[host]:
            # sent after the back-off this worker knows of ended, and served: the count
            # starts over (unless another worker's back-off began since)
            ended = True if self.gate is None else self._ask(self.gate.end_back_off, host, sent_ago)
            if ended:
                del self.backing_off[host]
        return response

    def _throttle(self, host: str, latency: float, response: Any) -> None:
        """AutoThrottle: the host's delay follows its latency (``spitag.throttle``)."""
        old, new = self.throttle.adjust(host, latency, response.status)
        self.crawler.stats.max_value("spitag/politeness/autothrottle_delay_max_s", round(new, 3))
        if self.throttle_debug:
            logger.info("autothrottle: %s | delay: %5d ms (%+d) | latency: %5d ms | size: %6d bytes",
                        host, new * 1000, (new - old) * 1000, latency * 1000, len(response.body))

    def _back_off(self, host: str, sent_ago: float, status: int) -> None:
        """A refusal without ``Retry-After``: the frontier counts the refusals in a row
        (every worker's) and pauses the host for its delay (at least 1 s), doubled with
        each; a refusal of a request already out when the last back-off began adds
        nothing. While the frontier is unreachable, this worker pauses itself once."""
        base = max(self.delay_for(host), 1.0)
        seconds = None if self.gate is None else self._ask(self.gate.back_off, host, sent_ago, base, self.max_pause)
        counted = seconds is not None  # (and the frontier paused the host)
        if not counted:
            seconds = base
        now = time.monotonic()
        if len(self.backing_off) >= LOCAL_GATES:
            self.backing_off = {h: t for h, t in self.backing_off.items() if t + BACK_OFF_KEEP > now}
        self.backing_off[host] = max(self.backing_off.get(host, now), now + seconds)
        if seconds:
            self.crawler.stats.inc_value("spitag/politeness/back_offs")
            self.pause(host, min(seconds, self.max_pause), status, shared=not counted)

    def pause(self, host: str, seconds: float, status: int, shared: bool = True) -> None:
        """Leave ``host`` alone for ``seconds``: this worker, and through the frontier
        every worker (``shared``: tell the frontier; a back-off already did)."""
        now = time.monotonic()
        if now + seconds <= self.paused.get(host, 0.0):
            return
        if len(self.paused) >= LOCAL_GATES:
            self.paused = {h: t for h, t in self.paused.items() if t > now}
        self.paused[host] = now + seconds
        if shared and self.gate is not None:
            self._ask(self.gate.pause, host, seconds)
        self.crawler.stats.inc_value("spitag/politeness/retry_after_pauses")
        self.crawler.stats.max_value("spitag/politeness/retry_after_max_s", round(seconds, 3))
        logger.info("%s answered %s: it is left alone for %.1f s", host, status, seconds)

    def process_exception(self, request: Request, exception: BaseException, spider: Any = None) -> None:
        self._give_back(request)
        if isinstance(exception, self.no_answer):
            self._failed(urlparse_cached(request).hostname or "", type(exception).__name__)
        return None

    def _check_down(self, host: str) -> None:
        """Raise ``HostDown`` if ``host`` is set aside now."""
        until = self.hosts_down.get(host)
        if until is None:
            return
        if until > time.monotonic():
            self.crawler.stats.inc_value("spitag/politeness/set_aside")
            raise HostDown(f"{host} is down: set aside, not sent")
        del self.hosts_down[host]

    def _failed(self, host: str, why: str) -> None:
        """A download of ``host`` got no answer (``why``): the frontier counts it with
        every worker's failures (``Frontier.host_failed``); the
        ``SPITAG_HOST_FAILURES``-th in a row sets the host aside as down, for every
        worker, the first if it was set aside before and has not answered since.
        While the frontier is unreachable, this worker counts alone."""
        if not self.max_failures:
            return
        now = time.monotonic()
        if self.hosts_down.get(host, 0.0) > now:
            return  # down already: the downloads that were out add nothing
        failure = None
        if self.gate is not None:
            failure = self._ask(self.gate.failed, host, self.max_failures, self.down_seconds)
        if failure is None:
            failure = self.own_failures.failed(host, self.max_failures, self.down_seconds)
        if len(self.failing) >= FAILING_HOSTS:
            self.failing.clear()  # (reloaded from the frontier within DELAYS_REFRESH)
        self.failing.add(host)
        if not failure.down:
            return
        if len(self.hosts_down) >= LOCAL_GATES:
            self.hosts_down = {h: t for h, t in self.hosts_down.items() if t > now}
        self.hosts_down[host] = now + failure.down
        if not failure.count:  # another worker set it aside: this one learns it now
            self.crawler.stats.inc_value("spitag/politeness/hosts_found_down")
            logger.info("%s failed (%s): another worker set it aside as down for another %.0f s",
                        host, why, failure.down)
            return
        self.crawler.stats.inc_value("spitag/politeness/hosts_down")
        if failure.again:
            self.crawler.stats.inc_value("spitag/politeness/hosts_down_again")
            logger.warning("%s, down before, failed again (%s): set aside as down for another %.0f s",
                           host, why, failure.down)
            return
        logger.warning("%s failed %d downloads in a row (the last: %s): set aside as down for %.0f s;"
                       " its URLs wait in the frontier", host, failure.count, why, failure.down)

    def _known_failing(self, host: str) -> bool:
        """Whether ``host`` has failures in a row (or was set aside) as far as this
        worker knows: its own failures, and the frontier's list of failing hosts (every
        worker's, where workers share it), reloaded every ``DELAYS_REFRESH`` seconds."""
        gate = self.gate
        if gate is not None:
            now = time.monotonic()
            if now - self.failing_loaded > DELAYS_REFRESH:
                hosts = self._ask(gate.failing)
                if hosts is not None:
                    self.failing = set(hosts) if len(hosts) < FAILING_HOSTS else set()
                self.failing_loaded = now
        return host in self.failing or host in self.own_failures.rows

    def _answered(self, host: str) -> None:
        """``host`` answered: its failures in a row start over, for every worker."""
        self.failing.discard(host)
        self.own_failures.answered(host)
        if self.gate is not None:
            self._ask(self.gate.answered, host)
            if self.outage.down:  # unreachable: told once the frontier answers again
                self.failing.add(host)


def retry_after(value: bytes | None) -> float | None:
    """Seconds to wait from a ``Retry-After`` value, delta-seconds or an HTTP-date (RFC
    9110 §10.2.3); None when absent or unreadable, 0 for a date already past."""
    if not value:
        return None
    text = value.decode("latin-1").strip()
    if text.isdigit():
        return float(text)
    try:
        when = email.utils.parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    return max((when - datetime.now(timezone.utc)).total_seconds(), 0.0)


async def _sleep(seconds: float) -> None:
    await maybe_deferred_to_future(task.deferLater(running_reactor(), seconds, lambda: None))
