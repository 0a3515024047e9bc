"""``scrapy inject -a crawl=NAME URL [URL ...]``: add seeds to a crawl, running or not.

The URLs are normalized and pushed into the crawl's frontier as seeds (layer 0, the
strategy's seed priority); running workers pop them like any other URL, and widen
their scope to the new seeds' domains. A file of URLs may be given instead (``@path``).
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from scrapy.commands import ScrapyCommand
from scrapy.exceptions import UsageError

from spitag.commands._common import add_crawl_option, crawl_name, frontier_for, is_known, report_error
from spitag.errors import BadInputError, SpitagError
from spitag.frontier import Entry
from spitag.options import Options
from spitag.scoring import strategy_from_options
from spitag.seeds import load_seeds
from spitag.urls import host_of

if TYPE_CHECKING:
    import argparse


class Command(ScrapyCommand):
    requires_project = True
    requires_crawler_process = False

    def syntax(self) -> str:
        return "-a crawl=NAME URL [URL ...] | @seeds.txt"

    def short_desc(self) -> str:
        return "Add seeds to a crawl (running or not)"

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        super().add_options(parser)
        add_crawl_option(parser)

    def run(self, args: list[str], opts: argparse.Namespace) -> None:
        crawl = crawl_name(opts)
        if not args:
            raise UsageError("give the URLs to add, or @file", print_help=False)
        try:
            value = args[0][1:] if len(args) == 1 and args[0].startswith("@") else ",".join(args)
            seeds = load_seeds(value)
            priority = strategy_from_options(Options(self.settings)).seed()
        except BadInputError as exc:
            self.exitcode = report_error(exc)
            return
        try:
            frontier = frontier_for(self.settings, crawl)
            try:
                new_crawl = not is_known(frontier)
                result = frontier.queue.push([Entry(u, host_of(u), 0, priority) for u in seeds], "max")
            finally:
                frontier.close()
        except SpitagError as exc:
            self.exitcode = report_error(exc)
            return
        if new_crawl:
            print(f"spitag: crawl {crawl!r} had nothing in this frontier: the seeds start a new crawl"
                  " (check -a crawl= if you meant a running one)", file=sys.stderr)
        print(
            f"crawl {crawl!r}: {result.new} seed(s) added, {result.raised + result.ignored} already known",
            file=sys.stderr,
        )
