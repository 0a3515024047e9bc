"""How many downloads a host has at once: ``CONCURRENT_REQUESTS_PER_DOMAIN``, held here.

Scrapy's downloader slot is meant to hold it, but Scrapy 2.19 starts each download of a
slot's queue as an asyncio task and counts it as transferring only once the task runs,
so a queue of waiting requests is started all at once (``Downloader._process_queue``):
a crawl of one site with the limit at 4 reached 20 downloads at a time, and one request
per host after robots.txt came in all together. ``HostConcurrency`` holds the limit in
this process. Where workers share the frontier (Redis), the limit is for all of them
together (``SharedPlaces``): a download also takes one of the host's places in the
frontier (``HostGate.enter``), renewed while it runs and given back when it leaves, and
handed out in turn: the requests that have waited longest first, whichever worker's.
"""

from __future__ import annotations

import itertools
import time
from collections import deque
from typing import TYPE_CHECKING, Any

from scrapy.utils.defer import maybe_deferred_to_future
from twisted.internet import task
from twisted.internet.defer import Deferred, succeed

from spitag.aio import running_reactor

if TYPE_CHECKING:
    from spitag.politeness.link import GateLink

# A place in the shared frontier lasts the frontier's lease (SPITAG_LEASE_SECONDS), at
# most SHARED_HOLD seconds, unless renewed (three times a hold while the download
# runs): how long a dead worker's places stay taken, as its leases do.
SHARED_HOLD = 30.0
POLL_FIRST, POLL_MAX = 0.05, 0.5  # seconds between asks for a place other workers hold


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


class SharedPlaces:
    """A host's places among the downloads of every worker sharing the frontier."""

    def __init__(self, link: GateLink, limit: int, hold: float, stats: Any) -> None:
        self.link = link
        self.limit = limit
        self.hold = hold
        self.stats = stats
        self.places: dict[str, str] = {}  # token → host: the places this worker holds
        self.tokens = itertools.count(1)
        self.napping: dict[str, dict[Deferred, Any]] = {}  # host → its requests waiting in line

    def renew(self) -> None:
        """Every ``hold / 3`` seconds while downloads run: their places stay taken."""
        if self.places:
            self.link.ask("hold", [(h, t) for t, h in self.places.items()], self.hold)

    async def enter(self, host: str) -> str | None:
        """A place for ``host``: its token, or None (nothing shared, or the frontier
        unreachable: this worker's own limit holds meanwhile). While every place is
        taken the request waits in the host's line, asking again every 0.05 s when a
        place would be its own, less often further back."""
        link = self.link
        if not link.shares_places:
            return None
        token = f"{link.owner}#{next(self.tokens)}"
        far, started, asked = POLL_FIRST, time.monotonic(), 0
        try:
            while True:
                line = link.ask("enter", host, token, self.limit, self.hold)
                if line is None:  # the place may have been taken as the link broke
                    link.unreleased.append((host, token))
                    return None
                if not line:
                    break
                if line < 0:  # the host asked for a pause (Retry-After, to any worker)
                    self.stats.inc_value("spitag/politeness/paused_ms", -line)
                    await sleep(-line / 1000)
                    continue
                asked += 1
                if line <= self.limit:
                    await self._nap(host, POLL_FIRST)
                else:
                    await self._nap(host, far)
                    far = min(far * 1.5, POLL_MAX)
        except BaseException:  # cancelled in line: its turn goes to the next
            link.ask("leave", host, token)
            raise
        self.places[token] = host
        if asked:
            waited = time.monotonic() - started
            self.stats.inc_value("spitag/politeness/shared_host_waits")
            self.stats.inc_value("spitag/politeness/shared_host_waited_ms", int(waited * 1000))
        return token

    def leave(self, token: str) -> None:
        host = self.places.pop(token, None)
        if host is None or self.link.gate is None:
            return
        self.link.ask("leave", host, token)
        if self.link.outage.down:  # unreachable: given back once it answers again
            self.link.unreleased.append((host, token))
        else:
            self._wake(host)

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


async def sleep(seconds: float) -> None:
    await maybe_deferred_to_future(task.deferLater(running_reactor(), seconds, lambda: None))
