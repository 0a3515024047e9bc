"""``scrapy parse --spider spitag -a seeds=URL URL``, with SpiTag's checks first.

The spider's arguments and the settings are checked as for ``scrapy crawl``: a missing
``-a seeds=`` or a bad setting is one ``spitag: error:`` line and exit code 2, not a
traceback from the spider's constructor.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scrapy.commands.parse import Command as ScrapyParseCommand

from spitag.commands.crawl import preflight

if TYPE_CHECKING:
    import argparse


class Command(ScrapyParseCommand):
    def process_options(self, args: list[str], opts: argparse.Namespace) -> None:
        super().process_options(args, opts)
        if opts.spider and self.settings is not None:
            preflight(self.settings, opts.spider, opts.spargs)
