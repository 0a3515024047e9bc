"""A dead host is set aside, for every worker, not waited for.

A host that fails ``SPITAG_HOST_FAILURES`` downloads in a row (5; no answer at all, or a
gateway's 502, 504, 522 or 524) is set aside as down for ``SPITAG_HOST_DOWN_SECONDS``
(600), for every worker (``HostGate.set_down``): the frontier pops none of its URLs,
and they do not keep the crawl going; this worker's requests to it that have not gone
out are handed back to the frontier unsent (``HostDown``). Nutch's
``fetcher.max.exceptions.per.queue`` does the same for a fetch round: without it,
every URL of a dead host costs ``RETRY_TIMES`` + 1 timeouts. The failures are counted
in the frontier, every worker's together (``HostGate.failed``), and an answer of the
host starts the count over (``HostGate.answered``, sent when this worker knows of a
count: its own failures, or the frontier's list of failing hosts, reloaded every
``DELAYS_REFRESH`` seconds). A host set aside that has not answered since is set aside
again at its first failure after its time is up: a host that stays dead costs one
failed download per ``SPITAG_HOST_DOWN_SECONDS``, not ``SPITAG_HOST_FAILURES``. A
worker whose download fails while another has set the host aside learns it then, and
holds back its own requests to it. While the frontier is unreachable, this worker
counts alone.
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, Any

from scrapy.exceptions import IgnoreRequest

from spitag.frontier.records import FAILING_HOSTS, FailureCounts
from spitag.politeness.spacing import DELAYS_REFRESH, LOCAL_GATES

if TYPE_CHECKING:
    from spitag.politeness.link import GateLink

logger = logging.getLogger(__name__)

# Answers that say the host could not be reached (a gateway's, a CDN's): failures, as
# no answer is.
FAILURE_STATUSES = (502, 504, 522, 524)


class HostDown(IgnoreRequest):
    """Not sent: the request's host is down (``SPITAG_HOST_FAILURES``). Its URL goes
    back to the frontier, queued, for when the host is tried again."""


class DeadHosts:
    def __init__(self, link: GateLink, stats: Any, max_failures: int, down_seconds: float) -> None:
        self.link = link
        self.stats = stats
        self.max_failures = max_failures
        self.down_seconds = down_seconds
        self.hosts_down: dict[str, float] = {}  # host → until when (monotonic) it is set aside
        # hosts with failures in a row (or set aside before) in the frontier, as far as
        # this worker knows: an answer of one is told (HostGate.answered)
        self.failing: set[str] = set()
        self.failing_loaded = 0.0
        self.own_failures = FailureCounts()  # the counts while the frontier is unreachable

    def check(self, host: str) -> None:
        """Raise ``HostDown`` if ``host`` is set aside now."""
        until = self.hosts_down.get(host)
        if until is None:
            return
        if until > time.monotonic():
            self.stats.inc_value("spitag/politeness/set_aside")
            raise HostDown(f"{host} is down: set aside, not sent")
        del self.hosts_down[host]

    def answered(self, host: str, status: int) -> None:
        """An answer of ``host``: a failure if a gateway's, else the end of its run."""
        if status in FAILURE_STATUSES:
            self.failed(host, f"HTTP {status}")
        elif self._known_failing(host):
            self._count_over(host)

    def failed(self, host: str, why: str) -> None:
        """A download of ``host`` got no answer (``why``): the frontier counts it with
        every worker's failures; the ``SPITAG_HOST_FAILURES``-th in a row sets the host
        aside as down, for every worker, the first if it was set aside before and has
        not answered since."""
        if not self.max_failures:
            return
        now = time.monotonic()
        if self.hosts_down.get(host, 0.0) > now:
            return  # down already: the downloads that were out add nothing
        failure = self.link.ask("failed", host, self.max_failures, self.down_seconds)
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
            self.stats.inc_value("spitag/politeness/hosts_found_down")
            logger.info("%s failed (%s): another worker set it aside as down for another %.0f s",
                        host, why, failure.down)
            return
        self.stats.inc_value("spitag/politeness/hosts_down")
        if failure.again:
            self.stats.inc_value("spitag/politeness/hosts_down_again")
            logger.warning("%s, down before, failed again (%s): set aside as down for another %.0f s",
                           host, why, failure.down)
            return
        logger.warning("%s failed %d downloads in a row (the last: %s): set aside as down for %.0f s;"
                       " its URLs wait in the frontier", host, failure.count, why, failure.down)

    def _known_failing(self, host: str) -> bool:
        """Whether ``host`` has failures in a row (or was set aside) as far as this
        worker knows: its own failures, and the frontier's list of failing hosts (every
        worker's, where workers share it), reloaded every ``DELAYS_REFRESH`` seconds."""
        if self.link.gate is not None:
            now = time.monotonic()
            if now - self.failing_loaded > DELAYS_REFRESH:
                hosts = self.link.ask("failing")
                if hosts is not None:
                    self.failing = set(hosts) if len(hosts) < FAILING_HOSTS else set()
                self.failing_loaded = now
        return host in self.failing or host in self.own_failures.rows

    def _count_over(self, host: str) -> None:
        """``host`` answered: its failures in a row start over, for every worker."""
        self.failing.discard(host)
        self.own_failures.answered(host)
        if self.link.gate is not None:
            self.link.ask("answered", host)
            if self.link.outage.down:  # unreachable: told once the frontier answers again
                self.failing.add(host)
