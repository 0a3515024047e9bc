"""``scrapy crawl``, with SpiTag's checks before the crawl starts.

Exit codes: 0 when the crawl ran (whatever pages failed or limits stopped it), 2 for
bad input (seeds, arguments, settings), 3 for a backend that cannot be reached.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from scrapy.commands.crawl import Command as ScrapyCrawlCommand
from scrapy.spiderloader import get_spider_loader

from spitag import __version__, parts
from spitag.commands._common import report_error
from spitag.errors import BackendUnavailableError, BadInputError
from spitag.preflight import check_backends, check_input, check_same_strategy

if TYPE_CHECKING:
    import argparse

    from scrapy.settings import BaseSettings


class Command(ScrapyCrawlCommand):
    def process_options(self, args: list[str], opts: argparse.Namespace) -> None:
        """The checks run once the command line is read, before Scrapy sets up its log
        (``LOG_LEVEL``, which it would fail on with a traceback) and prints its start-up
        lines: a bad value gets one error line, and nothing else."""
        super().process_options(args, opts)
        if args and self.settings is not None:
            preflight(self.settings, args[0], opts.spargs)


def preflight(settings: BaseSettings, name: str, spargs: dict[str, str]) -> None:
    """SpiTag's checks, when spider ``name`` crawls a frontier: a bad value exits with
    one error line (exit code 2, or 3 for a backend that cannot be reached)."""
    spidercls = frontier_spider(settings, name)
    if spidercls is None:
        return
    # the log's first line (Scrapy's "started (bot: …)") says which SpiTag crawls
    settings.set("BOT_NAME", f"{settings.get('BOT_NAME')}, SpiTag {__version__}", priority="cmdline")
    try:
        settings = parts.as_crawled(settings, spidercls)  # SpiTag's parts and the spider's own
        options = check_input(settings, spargs)
        check_backends(options)
        check_same_strategy(options, spargs)
    except (BadInputError, BackendUnavailableError) as exc:
        sys.exit(report_error(exc))


def frontier_spider(settings: BaseSettings, name: str) -> type | None:
    """The class of spider ``name`` if it crawls a frontier (SpiTag's, or one derived
    from it); None for another spider, or a name Scrapy will report as unknown."""
    try:
        spidercls = get_spider_loader(settings).load(name)
    except Exception:  # (KeyError, or a module that fails to import: Scrapy says so next)
        return None
    from spitag.spider import SpitagSpider

    return spidercls if isinstance(spidercls, type) and issubclass(spidercls, SpitagSpider) else None
