"""AutoThrottle for the whole crawl: Scrapy's ``AUTOTHROTTLE_*`` settings, applied
through the frontier's shared politeness gate.

Scrapy's AutoThrottle extension sets each downloader slot's delay from the latency of
its answers, so that about ``AUTOTHROTTLE_TARGET_CONCURRENCY`` requests are in
progress to each site at a time. It spaces one process' requests, after the gate, so
N workers sent N times the target. Here the same rule sets the delay the gate
(``HostGate.acquire``) reserves a host for, which every worker of a crawl shares: the
target is the site's, for all workers together. Scrapy's extension is turned off in
the project's settings, so that its spacing does not come on top.
"""

from __future__ import annotations

from typing import Any

HOSTS_KEPT = 65536  # hosts whose delay is remembered; the longest unanswered go first


class HostThrottle:
    """Per-host delays that follow the latency of the host's answers (Scrapy's rule):
    ``target = latency / target_concurrency``; the new delay is the larger of the
    target and the mean of the old delay and the target, within ``[min_delay,
    max_delay]``; an answer other than 200 never lowers it (error pages are small, and
    answer fast). A host starts at ``start_delay``."""

    def __init__(self, target_concurrency: float, min_delay: float, max_delay: float, start_delay: float) -> None:
        if target_concurrency <= 0:
            raise ValueError("target_concurrency must be above 0")
        self.target_concurrency = target_concurrency
        self.min_delay = min_delay
        self.max_delay = max(max_delay, min_delay)
        self.start_delay = min(max(start_delay, min_delay), self.max_delay)
        self.delays: dict[str, float] = {}

    @classmethod
    def from_settings(cls, settings: Any, min_delay: float) -> HostThrottle | None:
        """None unless ``AUTOTHROTTLE_ENABLED`` (the values are checked by spitag.scrapy_settings)."""
        if not settings.getbool("AUTOTHROTTLE_ENABLED"):
            return None
        return cls(
            settings.getfloat("AUTOTHROTTLE_TARGET_CONCURRENCY"),
            min_delay,
            settings.getfloat("AUTOTHROTTLE_MAX_DELAY"),
            settings.getfloat("AUTOTHROTTLE_START_DELAY"),
        )

    def delay(self, host: str) -> float:
        return self.delays.get(host, self.start_delay)

    def adjust(self, host: str, latency: float, status: int) -> tuple[float, float]:
        """Learn from an answer of ``host`` that took ``latency`` seconds: (old delay, new delay)."""
        old = self.delays.pop(host, self.start_delay)  # (re-inserted: the dict keeps recency)
        target = latency / self.target_concurrency
        new = min(max(target, (old + target) / 2.0, self.min_delay), self.max_delay)
        if status != 200 and new <= old:
            new = old
        if len(self.delays) >= HOSTS_KEPT:
            for stale in list(self.delays)[: HOSTS_KEPT // 2]:
                del self.delays[stale]
        self.delays[host] = new
        return old, new
