"""Frontiers, chosen by a URL: ``sqlite:///spitag-frontier.db`` (embedded) or ``redis://…``."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from spitag.errors import BadInputError
from spitag.frontier.base import Counts, Entry, Frontier, HostState, Learnt, Politeness, PushResult, Retry, Worker
from spitag.frontier.owners import new_owner

__all__ = [
    "Counts", "Entry", "Frontier", "HostState", "Learnt", "Politeness", "PushResult", "Retry", "Worker",
    "open_frontier", "new_owner", "uses_frontier",
]


def uses_frontier(spider: Any) -> bool:
    """Whether ``spider`` crawls through a SpiTag frontier: it says so (``uses_frontier =
    True``, as SpiTag's spider does) and rebuilds the frontier's URLs as requests
    (``make_request``). Any other spider of the project, and the ones Scrapy's own
    commands run (``scrapy fetch``, ``shell``, ``view``), get Scrapy's scheduler, and
    the store and the progress display leave them alone."""
    return bool(getattr(spider, "uses_frontier", False)) and callable(getattr(spider, "make_request", None))


def open_frontier(url: str, crawl: str, owner: str | None = None, **kwargs: Any) -> Frontier:
    """Open one crawl's frontier in the backend named by ``url``."""
    owner = owner or new_owner()
    scheme = urlsplit(url).scheme.lower() if url else ""
    if scheme == "sqlite":
        from spitag.frontier.sqlite import SQLiteFrontier
        from spitag.store import sqlite_path

        return SQLiteFrontier(url, sqlite_path(url, "SPITAG_FRONTIER"), crawl, owner, **kwargs)
    if scheme in ("redis", "rediss", "unix"):
        from spitag.frontier.redis import RedisFrontier

        return RedisFrontier(url, crawl, owner, **kwargs)
    raise BadInputError(
        f"unknown frontier URL {url!r}: SPITAG_FRONTIER takes sqlite:///path.db or redis://host:port/db"
    )
