"""The crawl's registry: its workers, its runs, and what users ask of it.

* ``heartbeat()`` — this worker is alive; how many live workers of the crawl run on its
  machine (``spitag.machine``), itself included: they share its CPUs.
* ``workers()`` — the workers known by their heartbeat (``Worker``), or None where the
  backend keeps none (one worker: SQLite); ``others_alive()`` counts the live ones
  but this one.
* ``record_setup(setup)`` — what this worker crawls with (its strategy, a digest of
  its seeds) becomes the crawl's; returns the one recorded before ({} the first time).
  ``setup()`` reads it.
* ``request_stop()`` / ``stop_requested()`` / ``clear_stop()`` — ``scrapy stop``.
* ``take_start_urls(key)`` — seeds a user pushed to a running crawl's start-URLs list
  (scrapy-redis' convention), where the backend has one.
* ``forget()`` — delete everything the frontier holds of this crawl (``scrapy forget``):
  its URLs, hosts, robots.txt, learning, workers and setup; other crawls are left alone.

``crawl_names(url)`` in ``spitag.frontier`` lists the crawls a frontier holds.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

from spitag.frontier.records import Worker


class CrawlRegistry(ABC):
    owner: str

    def heartbeat(self) -> int:
        return 1

    def workers(self) -> list[Worker] | None:
        return None

    def others_alive(self) -> int | None:
        workers = self.workers()
        return None if workers is None else sum(w.alive and w.owner != self.owner for w in workers)

    @abstractmethod
    def record_setup(self, setup: dict[str, str]) -> dict[str, str]: ...

    def setup(self) -> dict[str, str]:
        return self.record_setup({})

    @abstractmethod
    def request_stop(self) -> None: ...

    @abstractmethod
    def stop_requested(self) -> bool: ...

    @abstractmethod
    def clear_stop(self) -> None: ...

    def take_start_urls(self, key: str, limit: int = 100) -> list[str]:
        return []

    @abstractmethod
    def forget(self) -> None: ...
