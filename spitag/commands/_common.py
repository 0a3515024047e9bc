"""What SpiTag's commands share: exit codes, ``-a NAME=VALUE`` arguments, error lines,
and opening a crawl's frontier."""

from __future__ import annotations

import os
import sys
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from scrapy.exceptions import UsageError

from spitag.options import Options
from spitag.errors import BackendUnavailableError, BadInputError
from spitag.frontier import open_frontier
from spitag.store import open_store, sqlite_path
from spitag.urls import redact

if TYPE_CHECKING:
    import argparse
    from collections.abc import Iterator

    from scrapy.settings import BaseSettings

    from spitag.frontier import Frontier
    from spitag.store import Store


EXIT_BAD_INPUT = 2  # seeds, arguments, settings
EXIT_BACKEND = 3  # a store or frontier that cannot be reached


def spider_args(opts: argparse.Namespace) -> dict[str, str]:
    """The ``-a NAME=VALUE`` arguments as a dict."""
    return dict(a.split("=", 1) for a in opts.spargs if "=" in a)


def report_error(exc: Exception) -> int:
    """Print one ``spitag: error: …`` line (passwords hidden); the exit code it means."""
    print(f"spitag: error: {redact(str(exc))}", file=sys.stderr)
    return EXIT_BACKEND if isinstance(exc, BackendUnavailableError) else EXIT_BAD_INPUT


def add_crawl_option(parser: argparse.ArgumentParser, metavar: str = "crawl=NAME") -> None:
    """The ``-a NAME=VALUE`` option (read with ``spider_args``)."""
    parser.add_argument("-a", dest="spargs", action="append", default=[], metavar=metavar)


def crawl_name(opts: argparse.Namespace) -> str:
    crawl = spider_args(opts).get("crawl", "").strip()
    if not crawl:
        raise UsageError("name the crawl: -a crawl=NAME", print_help=False)
    return crawl


def open_crawl_store(settings: BaseSettings, *, must_exist: bool = False) -> Store:
    """The store named by ``SPITAG_STORE``. With ``must_exist``, a missing SQLite file is
    bad input (a typo in the path), not a new empty store. Raises SpitagError."""
    options = Options(settings)
    url = options.store
    if must_exist and url.startswith("sqlite:") and not sqlite_path(url).is_file():
        raise BadInputError(f"no store at {url} (set SPITAG_STORE as for the crawl)")
    return open_store(url, options.store_body)


def require_stored_crawl(store: Store, crawl: str) -> None:
    """BadInputError unless the store holds URLs of ``crawl`` (a typo in ``-a crawl=``),
    naming the crawls it does hold."""
    crawls = store.crawls()
    if not any(name == crawl for name, _ in crawls):
        known = ", ".join(f"{c} ({n} URLs)" for c, n in crawls) or "none"
        raise BadInputError(f"crawl {crawl!r} has no URL in the store; crawls there: {known}")


def frontier_for(settings: BaseSettings, crawl: str, **kwargs: Any) -> Frontier:
    """The crawl's frontier (``kwargs``: as for ``open_frontier``). A missing SQLite file
    is bad input (a typo in the path, or a command run in another folder than the
    crawl's), not a new empty frontier. Raises SpitagError."""
    url = Options(settings).frontier
    if url.startswith("sqlite:") and not sqlite_path(url, "SPITAG_FRONTIER").is_file():
        raise BadInputError(f"no frontier at {url} (set SPITAG_FRONTIER as for the crawl)")
    return open_frontier(url, crawl, **kwargs)


def is_known(frontier: Frontier) -> bool:
    """Whether the frontier holds anything of its crawl (a typo in ``-a crawl=`` does not)."""
    counts = frontier.queue.counts()
    return bool(counts.queued or counts.leased or counts.done)


def unknown_crawl(settings: BaseSettings, crawl: str) -> BadInputError:
    url = Options(settings).frontier
    return BadInputError(f"crawl {crawl!r} has nothing in frontier {redact(url)} (check -a crawl= and SPITAG_FRONTIER)")


class Reader:
    """Whether the reader of standard output is still there (``reader_may_leave``)."""

    left = False


@contextmanager
def reader_may_leave() -> Iterator[Reader]:
    """Write to standard output for a reader that may stop early (``| head``): its
    leaving ends the output quietly, with no traceback; ``reader.left`` says so."""
    reader = Reader()
    try:
        yield reader
        sys.stdout.flush()
    except BrokenPipeError:
        reader.left = True
        # Python flushes standard output again at exit: into the void, not the pipe
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
