"""``scrapy crawl``, with SpiTag's checks before the crawl starts.

Exit codes: 0 when the crawl ran (whatever pages failed or limits stopped it), 2 for
bad input (seeds, arguments, settings), 3 for a backend that cannot be reached.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from scrapy.commands.crawl import Command as ScrapyCrawlCommand

from spitag.errors import BackendUnavailableError, BadInputError
from spitag.preflight import check_backends, check_input
from spitag.urls import redact

if TYPE_CHECKING:
    import argparse

EXIT_BAD_INPUT = 2
EXIT_BACKEND = 3


class Command(ScrapyCrawlCommand):
    def run(self, args: list[str], opts: argparse.Namespace) -> None:
        if args and args[0] == "spitag" and self.settings is not None:
            try:
                check_backends(check_input(self.settings, opts.spargs))
            except BadInputError as exc:
                self._fail(exc, EXIT_BAD_INPUT)
                return
            except BackendUnavailableError as exc:
                self._fail(exc, EXIT_BACKEND)
                return
        super().run(args, opts)

    def _fail(self, exc: Exception, code: int) -> None:
        print(f"spitag: error: {redact(str(exc))}", file=sys.stderr)
        self.exitcode = code
