"""``scrapy crawl``, with SpiTag's checks before the crawl starts.

Exit codes: 0 when the crawl ran (whatever pages failed or limits stopped it), 2 for
bad input (seeds, arguments, settings), 3 for a backend that cannot be reached.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from scrapy.commands.crawl import Command as ScrapyCrawlCommand

from spitag.commands._common import report_error
from spitag.errors import BackendUnavailableError, BadInputError
from spitag.preflight import check_backends, check_input

if TYPE_CHECKING:
    import argparse


class Command(ScrapyCrawlCommand):
    def process_options(self, args: list[str], opts: argparse.Namespace) -> None:
        """The checks run once the command line is read, before Scrapy sets up its log
        (``LOG_LEVEL``, which it would fail on with a traceback) and prints its start-up
        lines: a bad value gets one error line, and nothing else."""
        super().process_options(args, opts)
        if args and args[0] == "spitag" and self.settings is not None:
            try:
                check_backends(check_input(self.settings, opts.spargs))
            except (BadInputError, BackendUnavailableError) as exc:
                sys.exit(report_error(exc))
