"""Page/URL/Link stores, chosen by a URL: ``sqlite:///spitag.db`` or ``postgresql://…``."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit

from spitag.errors import BadInputError
from spitag.store.base import BODY_FORMATS, Store

__all__ = ["BODY_FORMATS", "Store", "open_store", "sqlite_path"]


def sqlite_path(url: str, setting: str = "SPITAG_STORE") -> Path:
    """The file of a ``sqlite:///path`` URL (three slashes: relative; four: absolute)."""
    rest = url[len("sqlite:///") :]
    if not url.startswith("sqlite:///") or not rest or rest.endswith("/"):
        raise BadInputError(
            f"malformed {setting} URL {url!r}: write sqlite:///relative.db or sqlite:////abs/path.db"
        )
    if rest == ":memory:":
        raise BadInputError(
            f"{setting} URL {url!r} names no file: an in-memory database would lose the crawl at its end"
        )
    return Path(rest)


def where(url: str, setting: str = "SPITAG_STORE") -> str:
    """``url`` as a log line shows it: passwords hidden, a SQLite file's absolute path
    (relative ones depend on the folder the crawl was started from)."""
    from spitag.urls import redact

    if url.startswith("sqlite:///"):
        try:
            return f"{url} ({sqlite_path(url, setting).resolve()})"
        except BadInputError:
            return url
    return redact(url)


def open_store(url: str, body_format: str = "plain") -> Store:
    """Open (and create the tables of) the store named by ``url``."""
    scheme = urlsplit(url).scheme.lower() if url else ""
    if scheme == "sqlite":
        from spitag.store.sqlite import SQLiteStore

        return SQLiteStore(url, sqlite_path(url), body_format)
    if scheme in ("postgresql", "postgres"):
        from spitag.store.postgres import PostgresStore

        return PostgresStore(url, body_format)
    raise BadInputError(
        f"unknown store URL {url!r}: SPITAG_STORE takes sqlite:///path.db or postgresql://…"
    )
