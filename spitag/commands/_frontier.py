"""Shared by the commands that act on a running crawl's frontier (stop, inject)."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from scrapy.exceptions import UsageError

from spitag.config import CrawlConfig
from spitag.errors import SpitagError
from spitag.frontier import open_frontier
from spitag.urls import redact

if TYPE_CHECKING:
    import argparse

    from scrapy.settings import BaseSettings

    from spitag.frontier import Frontier


def add_crawl_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("-a", dest="spargs", action="append", default=[], metavar="crawl=NAME")


def crawl_name(opts: argparse.Namespace) -> str:
    spargs = dict(a.split("=", 1) for a in opts.spargs if "=" in a)
    crawl = spargs.get("crawl", "").strip()
    if not crawl:
        raise UsageError("name the crawl: -a crawl=NAME", print_help=False)
    return crawl


def frontier_for(settings: BaseSettings, crawl: str) -> Frontier | None:
    """The crawl's frontier, or None after printing a clear error."""
    try:
        config = CrawlConfig.from_settings(settings)
        return open_frontier(config.frontier_url, crawl)
    except SpitagError as exc:
        print(f"spitag: error: {redact(str(exc))}", file=sys.stderr)
        return None
