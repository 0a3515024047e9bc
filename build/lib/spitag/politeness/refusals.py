"""A host that limits its rate is left alone, by every worker, and its page asked again.

A host that answers 429 (Too Many Requests) or 503 with ``Retry-After`` is left alone
that long (at most ``SPITAG_MAX_RETRY_AFTER`` seconds): the frontier pops none of its
URLs, shuts its hard gate and, where workers share places, gives none
(``HostGate.pause``), and this worker holds back its own requests to it, the retry of
the refused one among them. A 429 or 503 without ``Retry-After`` pauses the host for
its delay (at least 1 s), doubled with each such refusal in a row, whichever worker
gets it (``HostGate.back_off``): the requests that were out when a back-off began add
nothing to it, and a request sent after it ended and served ends the run. Scrapy's
``RetryMiddleware`` retries at once, whatever the server asked, and gives up after
``RETRY_TIMES`` (2); a refused page is asked again, each time after the pause, up to
``SPITAG_REFUSAL_RETRIES`` times (8), so that a host limiting its rate costs time, not
pages.
"""

from __future__ import annotations

import email.utils
import logging
import time
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from spitag.frontier.records import BACK_OFF_KEEP
from spitag.politeness.places import sleep
from spitag.politeness.spacing import LOCAL_GATES

if TYPE_CHECKING:
    from scrapy import Request

    from spitag.politeness.link import GateLink
    from spitag.politeness.spacing import Spacing

logger = logging.getLogger(__name__)

PAUSE_STATUSES = (429, 503)  # answers whose Retry-After pauses the host (RFC 6585, RFC 9110)


class Refusals:
    def __init__(self, link: GateLink, spacing: Spacing, crawler: Any, max_pause: float, retries: int) -> None:
        self.link = link
        self.spacing = spacing
        self.stats = crawler.stats
        self.retry_times = crawler.settings.getint("RETRY_TIMES")
        self.max_pause = max_pause
        self.retries = retries
        self.paused: dict[str, float] = {}  # host → until when (monotonic) it asked to be left alone
        # host → when (monotonic) the last back-off this worker knows of ends (back_off)
        self.backing_off: dict[str, float] = {}

    async def wait(self, host: str) -> None:
        """Until the end of a pause the host asked this worker for."""
        until = self.paused.get(host)
        if until is not None:
            wait = until - time.monotonic()
            if wait > 0:
                self.stats.inc_value("spitag/politeness/paused_ms", int(wait * 1000))
                await sleep(wait)

    def answered(self, host: str, request: Request, response: Any) -> None:
        sent_ago = request.meta.get("download_latency", 0.0)  # the request went out that long ago
        if response.status in PAUSE_STATUSES and self.max_pause > 0:
            # asked again after the pause, more times than a broken page would be
            # (RetryMiddleware, after this middleware, reads it; its copy keeps it)
            tries = request.meta.get("max_retry_times", self.retry_times)
            request.meta["max_retry_times"] = max(tries, self.retries)
            seconds = retry_after(response.headers.get(b"Retry-After"))
            if seconds is not None:
                if seconds:
                    self.pause(host, min(seconds, self.max_pause), response.status)
            else:  # no word on how long: back off, doubling while the refusals go on
                self._back_off(host, sent_ago, response.status)
        elif host in self.backing_off and time.monotonic() - sent_ago >= self.backing_off[host]:
            # sent after the back-off this worker knows of ended, and served: the count
            # starts over (unless another worker's back-off began since)
            ended = True if self.link.gate is None else self.link.ask("end_back_off", host, sent_ago)
            if ended:
                del self.backing_off[host]

    def _back_off(self, host: str, sent_ago: float, status: int) -> None:
        """A refusal without ``Retry-After``: the frontier counts the refusals in a row
        (every worker's) and pauses the host for its delay (at least 1 s), doubled with
        each; a refusal of a request already out when the last back-off began adds
        nothing. While the frontier is unreachable, this worker pauses itself once."""
        base = max(self.spacing.delay_for(host), 1.0)
        seconds = self.link.ask("back_off", host, sent_ago, base, self.max_pause)
        counted = seconds is not None  # (and the frontier paused the host)
        if not counted:
            seconds = base
        now = time.monotonic()
        if len(self.backing_off) >= LOCAL_GATES:
            self.backing_off = {h: t for h, t in self.backing_off.items() if t + BACK_OFF_KEEP > now}
        self.backing_off[host] = max(self.backing_off.get(host, now), now + seconds)
        if seconds:
            self.stats.inc_value("spitag/politeness/back_offs")
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
        if shared:
            self.link.ask("pause", host, seconds)
        self.stats.inc_value("spitag/politeness/retry_after_pauses")
        self.stats.max_value("spitag/politeness/retry_after_max_s", round(seconds, 3))
        logger.info("%s answered %s: it is left alone for %.1f s", host, status, seconds)


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
