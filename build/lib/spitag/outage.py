"""One outage policy for every component that talks to Redis or PostgreSQL.

A backend that stops answering (Redis restarting, PostgreSQL failing over, a full disk)
is an outage, not a crash: what is to be written waits in memory, the crawl goes on as
far as it can, and the backend is asked again after a back-off — 0.25 s, doubled at
each failure, at most ``MAX_BACKOFF`` — until it answers. Every component of a crawl
that talks to one backend shares its ``Outage`` (``Outage.of(crawler, "frontier")``):
the scheduler, the politeness gate, the retries, robots.txt and the progress line see
the same state, wait the same time, and the log says it once:

    frontier redis://127.0.0.1:6379/0: Redis unavailable (…); retrying with backoff, nothing is lost
    frontier redis://127.0.0.1:6379/0 is back after 3.2 s

Stats: ``spitag/<name>/outage_retries``, ``spitag/<name>/outage_seconds``.
"""

from __future__ import annotations

import logging
import time
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from spitag.errors import BackendUnavailableError
from spitag.urls import redact

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

logger = logging.getLogger(__name__)

FIRST_BACKOFF = 0.25
MAX_BACKOFF = 10.0
T = TypeVar("T")


class Outage:
    def __init__(self, name: str, where: str = "", stats: Any = None) -> None:
        self.name = name  # "frontier" or "store"
        self.where = redact(where)
        self.stats = stats
        self.down_since: float | None = None
        self.backoff = 0.0
        self.retry_at = 0.0

    _shared: weakref.WeakKeyDictionary[Crawler, dict[str, Outage]] = weakref.WeakKeyDictionary()

    @classmethod
    def of(cls, crawler: Crawler, name: str, where: str = "") -> Outage:
        """The crawl's outage state of backend ``name``, shared by all its components."""
        shared = cls._shared.setdefault(crawler, {})
        outage = shared.get(name)
        if outage is None:
            outage = shared[name] = cls(name, where, crawler.stats)
        elif where and not outage.where:
            outage.where = redact(where)
        return outage

    @property
    def down(self) -> bool:
        return self.down_since is not None

    def ready(self) -> bool:
        """Whether the backend may be asked now (it is up, or its back-off is over)."""
        return self.down_since is None or time.monotonic() >= self.retry_at

    def wait(self) -> float:
        """Seconds until the backend may be asked again."""
        return 0.0 if self.down_since is None else max(self.retry_at - time.monotonic(), 0.0)

    def failed(self, reason: BaseException | str) -> None:
        """The backend did not answer: back off (logged at the first failure only)."""
        now = time.monotonic()
        if self.down_since is None:
            self.down_since = now
            text = redact(str(reason))
            where = f"{self.name} {self.where}: " if self.where and self.where not in text else ""
            logger.warning("%s%s; retrying with backoff, nothing is lost", where, text)
        self.backoff = min(max(self.backoff * 2, FIRST_BACKOFF), MAX_BACKOFF)
        self.retry_at = now + self.backoff
        if self.stats is not None:
            self.stats.inc_value(f"spitag/{self.name}/outage_retries")

    def answered(self) -> None:
        """The backend answered: an outage, if any, is over."""
        if self.down_since is None:
            return
        seconds = time.monotonic() - self.down_since
        logger.warning("%s %s is back after %.1f s", self.name, self.where, seconds)
        if self.stats is not None:
            self.stats.inc_value(f"spitag/{self.name}/outage_seconds", round(seconds, 1))
        self.down_since = None
        self.backoff = 0.0
        self.retry_at = 0.0

    def call(self, fn: Callable[..., T], *args: Any, default: Any = None) -> T | Any:
        """``fn(*args)``; while the backend is out (``BackendUnavailableError``), back
        off and return ``default`` without asking it before its back-off is over."""
        if not self.ready():
            return default
        try:
            result = fn(*args)
        except BackendUnavailableError as exc:
            self.failed(exc)
            return default
        self.answered()
        return result
