"""The frontier: one crawl's URLs and per-host state, chosen by a URL —
``sqlite:///spitag-frontier.db`` (embedded, one worker) or ``redis://…`` (shared by
workers).

It is five narrow contracts over one backend, each caller holding only the one it uses:
the URL queue (``queue``: the scheduler), the per-host gate (``gate``: politeness), the
robots.txt cache (``robots``), the crawl's registry of workers and runs (``registry``)
and what the strategy learns (``learning``). Each has its SQLite and Redis
implementation side by side (``sqlite/``, ``redis/``) and a contract test run on both.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from spitag.errors import BadInputError
from spitag.frontier.gate import HostGate
from spitag.frontier.learning import LearningLog
from spitag.frontier.owners import new_owner
from spitag.frontier.queue import UrlQueue
from spitag.frontier.records import Counts, Entry, HostState, Learnt, Limits, Politeness, PushResult, Retry, Worker
from spitag.frontier.registry import CrawlRegistry
from spitag.frontier.robots import RobotsCache

if TYPE_CHECKING:
    from collections.abc import Callable

    from spitag.ranking import HostRanking

__all__ = [
    "Counts", "CrawlRegistry", "Entry", "Frontier", "HostGate", "HostState", "LearningLog", "Learnt", "Limits",
    "Politeness", "PushResult", "Retry", "RobotsCache", "UrlQueue", "Worker", "crawl_names", "open_frontier",
]


@dataclass
class Frontier:
    """One crawl's frontier, opened by ``open_frontier``."""

    url: str
    crawl: str
    owner: str
    queue: UrlQueue
    gate: HostGate
    robots: RobotsCache
    registry: CrawlRegistry
    learning: LearningLog
    closer: Callable[[], None]

    def close(self) -> None:
        self.closer()


def open_frontier(
    url: str,
    crawl: str,
    owner: str | None = None,
    *,
    lease_seconds: float = 60.0,
    politeness: Politeness | None = None,
    ranking: HostRanking | None = None,
    machine: str | None = None,
    limits: Limits | None = None,
) -> Frontier:
    """Open one crawl's frontier in the backend named by ``url``. ``ranking`` is the
    crawl's host ranking, kept with the crawl for every worker; None (a command that
    only reads or injects) leaves the one kept as it is.
    ``machine``: whose CPUs this worker shares (``spitag.machine``). ``limits``: the
    crawl's page budget and per-host limit, held for every worker (``Limits``)."""
    if not 0 < lease_seconds <= 3600:
        raise ValueError("lease_seconds must be in (0, 3600]")
    options: dict[str, Any] = dict(
        lease_seconds=lease_seconds, politeness=politeness or Politeness(), ranking=ranking,
        machine=machine, limits=limits or Limits(),
    )
    owner = owner or new_owner()
    scheme = urlsplit(url).scheme.lower() if url else ""
    if scheme == "sqlite":
        from spitag.frontier.sqlite import open_sqlite
        from spitag.store import sqlite_path

        return open_sqlite(url, sqlite_path(url, "SPITAG_FRONTIER"), crawl, owner, **options)
    if scheme in ("redis", "rediss", "unix"):
        from spitag.frontier.redis import open_redis

        return open_redis(url, crawl, owner, **options)
    raise BadInputError(
        f"unknown frontier URL {url!r}: SPITAG_FRONTIER takes sqlite:///path.db or redis://host:port/db"
    )


def crawl_names(url: str) -> list[str]:
    """The crawls the frontier named by ``url`` holds (``scrapy crawls``)."""
    scheme = urlsplit(url).scheme.lower() if url else ""
    if scheme == "sqlite":
        from spitag.frontier.sqlite.db import crawl_names as sqlite_names
        from spitag.store import sqlite_path

        path = sqlite_path(url, "SPITAG_FRONTIER")
        return sqlite_names(path) if path.is_file() else []
    if scheme in ("redis", "rediss", "unix"):
        import redis

        from spitag.frontier.redis.db import connect
        from spitag.frontier.redis.registry import crawl_names_of
        from spitag.urls import redact

        client = connect(url)
        try:
            return crawl_names_of(client)
        except (redis.RedisError, OSError) as exc:
            from spitag.errors import BackendUnavailableError

            raise BackendUnavailableError(f"frontier {redact(url)}: Redis unreachable: {redact(str(exc))}") from None
        finally:
            client.close()
    raise BadInputError(
        f"unknown frontier URL {url!r}: SPITAG_FRONTIER takes sqlite:///path.db or redis://host:port/db"
    )
