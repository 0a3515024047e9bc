"""``scrapy report -a crawl=NAME [-a against=OTHER] -o DIR``: a crawl as an HTML report.

Reads the store (``SPITAG_STORE``, as for the crawl) and writes ``DIR/index.html``,
its figures as PNG files beside it and every number as ``DIR/report.json``. With
``against``, the two crawls side by side (the SpiTag thesis' comparison).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

from scrapy.commands import ScrapyCommand
from scrapy.exceptions import UsageError

from spitag.commands._common import (
    EXIT_BAD_INPUT,
    add_crawl_option,
    open_crawl_store,
    report_error,
    spider_args,
)
from spitag.errors import SpitagError
from spitag.scrapy_settings import check_output_folder
from spitag.urls import redact

if TYPE_CHECKING:
    import argparse


class Command(ScrapyCommand):
    requires_project = True
    requires_crawler_process = False

    def syntax(self) -> str:
        return "-a crawl=NAME [-a against=OTHER] -o DIR"

    def short_desc(self) -> str:
        return "Write an HTML report (figures, numbers) of a stored crawl, or of two side by side"

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        super().add_options(parser)
        add_crawl_option(parser, "crawl=NAME [-a against=OTHER]")
        parser.add_argument("-o", "-O", dest="output", metavar="DIR", help="folder to write the report to")

    def run(self, args: list[str], opts: argparse.Namespace) -> None:
        # Imported here: matplotlib is only needed by this command.
        from spitag.report import MissingCrawlError, write_report

        spargs = spider_args(opts)
        crawl = spargs.get("crawl", "").strip()
        against = spargs.get("against", "").strip() or None
        if not crawl or not opts.output:
            raise UsageError("report needs -a crawl=NAME and -o DIR", print_help=False)
        out = Path(opts.output)
        try:
            check_output_folder("-o", out)
            store = open_crawl_store(self.settings, must_exist=True)
        except SpitagError as exc:
            self.exitcode = report_error(exc)
            return
        try:
            data = write_report(store, crawl, out, against, redact(store.url))
        except MissingCrawlError as exc:
            print(f"spitag: error: {exc}", file=sys.stderr)
            self.exitcode = EXIT_BAD_INPUT
            return
        finally:
            store.close()
        for report in data["crawls"]:
            print(
                f"crawl {report['crawl']!r}: {report['urls']:,} URLs, {report['pages']:,} pages,"
                f" {report['semantic_items']:,} semantic items ({report['mean_items_per_page']:.2f} per page)",
                file=sys.stderr,
            )
        print(f"report written to {out / 'index.html'}", file=sys.stderr)
