"""Checks run before a crawl starts, so that bad input fails fast and writes nothing.

Seeds, every SpiTag setting, the Scrapy settings a crawl depends on (with its log
and feed files) and the scoring strategy are validated, then each backend
is reached once without writing to it: a typo or an unreachable server gives one clear
message and a non-zero exit code instead of a traceback in the middle of a crawl.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from spitag import parts
from spitag.errors import BackendUnavailableError, BadInputError
from spitag.filters import UrlFilter
from spitag.logfilters import LEVEL_NAMES, is_level
from spitag.options import Options
from spitag.scrapy_settings import check_scrapy_settings
from spitag.seeds import default_crawl_id, load_seeds
from spitag.store import sqlite_path
from spitag.urls import Scope, redact

if TYPE_CHECKING:
    from scrapy.settings import BaseSettings

STORE_SCHEMES = ("sqlite", "postgresql", "postgres")
FRONTIER_SCHEMES = ("sqlite", "redis", "rediss", "unix")
SQLITE_HEADER = b"SQLite format 3\x00"  # the first 16 bytes of every SQLite database file


def check_input(settings: BaseSettings, spargs: dict[str, Any]) -> Options:
    """Validate seeds and settings; BadInputError names what is wrong. Every SpiTag
    setting is read (``spitag.options``: a bad knob of a strategy not chosen is a
    mistake too, and a name that is not declared is refused)."""
    check_log_level(settings)
    check_scrapy_settings(settings)
    parts.check_components(settings)
    options = Options(settings)
    seeds = load_seeds(spargs.get("seeds"))
    check_crawl_name(spargs.get("crawl"))
    UrlFilter.from_options(options, Scope(options.scope, seeds))
    check_backend_url("SPITAG_FRONTIER", options.frontier, FRONTIER_SCHEMES)
    check_backend_url("SPITAG_STORE", options.store, STORE_SCHEMES)
    return options


def check_log_level(settings: BaseSettings) -> None:
    """``LOG_LEVEL`` (Scrapy's) must name a level of Python's ``logging``, or be one."""
    level = settings.get("LOG_LEVEL")
    if not is_level(level):
        raise BadInputError(f"setting LOG_LEVEL={level!r} is not one of {LEVEL_NAMES}")


MAX_CRAWL_NAME = 255


def check_crawl_name(name: str | None) -> None:
    """A crawl name keys every row of the crawl: short, printable, one line."""
    if name is None:
        return
    name = name.strip()
    if len(name) > MAX_CRAWL_NAME or not name.isprintable():
        raise BadInputError(
            f"crawl name must be printable and at most {MAX_CRAWL_NAME} characters: {name[:40]!r}…"
        )


def check_backend_url(setting: str, url: str, schemes: tuple[str, ...]) -> None:
    scheme = urlsplit(url).scheme.lower()
    if scheme not in schemes:
        raise BadInputError(
            f"{setting}={redact(url)!r}: unknown scheme {scheme!r}, expected one of {', '.join(schemes)}"
        )
    if scheme == "sqlite":
        sqlite_path(url, setting)
    elif scheme == "unix":
        if not urlsplit(url).path:
            raise BadInputError(f"{setting}={redact(url)!r} names no socket: write unix:///path/to/redis.sock")
    else:
        _check_url_parts(setting, url)
        database = urlsplit(url).path.strip("/")
        if scheme.startswith("redis") and database and not database.isdigit():  # (redis-py would use 0)
            raise BadInputError(f"{setting}={redact(url)!r}: the database number must be a whole number")


def _check_url_parts(setting: str, url: str) -> None:
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError on a bad port
    except ValueError as exc:
        raise BadInputError(f"{setting}={redact(url)!r} is malformed: {exc}") from None
    if not parts.hostname:
        raise BadInputError(f"{setting}={redact(url)!r} names no host")


def check_backends(options: Options) -> None:
    """Reach every backend once, writing nothing; BackendUnavailableError if one can't be."""
    for setting, url in (("SPITAG_FRONTIER", options.frontier), ("SPITAG_STORE", options.store)):
        scheme = urlsplit(url).scheme.lower()
        if scheme == "sqlite":
            path = sqlite_path(url, setting).resolve()
            if not path.parent.is_dir():
                raise BadInputError(f"{setting}: folder {path.parent} does not exist")
            if not os.access(path.parent, os.W_OK):
                raise BadInputError(f"{setting}: folder {path.parent} is not writable")
            if path.exists():
                _check_sqlite_file(setting, path)
        elif scheme.startswith("postgres"):
            from spitag.store.postgres import ping

            ping(url)
        else:
            from spitag.frontier.redis.db import ping

            ping(url)


def _check_sqlite_file(setting: str, path: Path) -> None:
    """An existing file must be a SQLite database (or empty) that this process may
    write: another file there is a mistake in the setting, not something to open. The
    header is read, not the database, so a crawl running on it is no obstacle."""
    if not path.is_file():
        raise BadInputError(f"{setting}: {path} is not a file")
    try:
        with path.open("rb") as f:
            header = f.read(len(SQLITE_HEADER))
    except OSError as exc:
        raise BackendUnavailableError(f"{setting}: cannot read {path}: {exc.strerror or exc}") from None
    if header and header != SQLITE_HEADER:
        raise BadInputError(f"{setting}: {path} is not a SQLite database")
    if not os.access(path, os.W_OK):
        raise BackendUnavailableError(f"{setting}: {path} is not writable")


def check_same_strategy(options: Options, spargs: dict[str, Any]) -> None:
    """A crawl resumed (or joined) with another strategy would mix two scales of
    priority in one queue: refused, unless ``-a restrategy=yes`` says to go on."""
    if str(spargs.get("restrategy", "")).strip().lower() in ("yes", "true", "1"):
        return
    from spitag.frontier import crawl_names, open_frontier

    crawl = (spargs.get("crawl") or "").strip() or default_crawl_id(load_seeds(spargs.get("seeds")))
    if crawl not in crawl_names(options.frontier):
        return
    frontier = open_frontier(options.frontier, crawl)
    try:
        before = frontier.registry.setup().get("strategy")
    finally:
        frontier.close()
    if before and before != options.strategy:
        raise BadInputError(
            f"crawl {crawl!r} was crawled with SPITAG_STRATEGY={before}, this run asks for {options.strategy}: "
            f"their priorities would mix in one queue. Run with -s SPITAG_STRATEGY={before}, start the crawl over "
            f"(scrapy forget -a crawl={crawl}), or go on with {options.strategy} anyway (-a restrategy=yes)"
        )
