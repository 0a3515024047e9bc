"""Frontiers, chosen by a URL: ``sqlite:///spitag-frontier.db`` (embedded) or ``redis://…``."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from spitag.errors import BadInputError
from spitag.frontier.base import Counts, Entry, Frontier, HostState, Learnt, Politeness, PushResult, Retry, Worker
from spitag.frontier.owners import new_owner

__all__ = [
    "Counts", "Entry", "Frontier", "HostState", "Learnt", "Politeness", "PushResult", "Retry", "Worker",
    "open_frontier", "new_owner",
]


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
