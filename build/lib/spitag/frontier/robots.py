"""The robots.txt cache: each host's robots.txt asked for once a crawl, not once a
worker and a run.

* ``get(netloc)`` — the blob kept for ``netloc`` (``host[:port]``) by any worker or
  earlier run, or None: none kept, or its time to live is over.
* ``keep(netloc, blob, ttl)`` — keep it ``ttl`` seconds.
"""

from __future__ import annotations

from abc import ABC, abstractmethod


class RobotsCache(ABC):
    @abstractmethod
    def get(self, netloc: str) -> bytes | None: ...

    @abstractmethod
    def keep(self, netloc: str, blob: bytes, ttl: float) -> None: ...
