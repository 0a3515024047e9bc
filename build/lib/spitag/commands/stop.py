"""``scrapy stop -a crawl=NAME``: every worker of the crawl stops gracefully.

The request is written to the crawl's frontier; each worker sees it within a second,
finishes its downloads, stores their pages and releases what it had not started.
Running the crawl command again resumes.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from scrapy.commands import ScrapyCommand

from spitag.commands._common import (
    add_crawl_option, crawl_name, frontier_for, is_known, report_error, unknown_crawl,
)
from spitag.errors import SpitagError

if TYPE_CHECKING:
    import argparse


class Command(ScrapyCommand):
    requires_project = True
    requires_crawler_process = False

    def syntax(self) -> str:
        return "-a crawl=NAME"

    def short_desc(self) -> str:
        return "Stop every worker of a crawl gracefully"

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        super().add_options(parser)
        add_crawl_option(parser)

    def run(self, args: list[str], opts: argparse.Namespace) -> None:
        crawl = crawl_name(opts)
        try:
            frontier = frontier_for(self.settings, crawl)
            try:
                if not is_known(frontier):
                    raise unknown_crawl(self.settings, crawl)
                frontier.registry.request_stop()
            finally:
                frontier.close()
        except SpitagError as exc:
            self.exitcode = report_error(exc)
            return
        print(f"stop requested for crawl {crawl!r}", file=sys.stderr)
