"""``scrapy export -a crawl=NAME -O all.jsonl``: a whole crawl, from the store, as JSON lines.

A resumed crawl's ``-O`` file holds only that run's items; this command writes every
URL the crawl has stored, across all its runs (``-O`` overwrites, ``-o`` appends,
``-`` is standard output).
"""

from __future__ import annotations

import json
import sys
from contextlib import nullcontext
from typing import TYPE_CHECKING

from scrapy.commands import ScrapyCommand
from scrapy.exceptions import UsageError

from spitag.commands._common import add_crawl_option, open_crawl_store, report_error, spider_args
from spitag.errors import SpitagError

if TYPE_CHECKING:
    import argparse


class Command(ScrapyCommand):
    requires_project = True
    requires_crawler_process = False

    def syntax(self) -> str:
        return "-a crawl=NAME (-O FILE | -o FILE)"

    def short_desc(self) -> str:
        return "Export a stored crawl as JSON lines"

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        super().add_options(parser)
        add_crawl_option(parser)
        parser.add_argument("-o", dest="append", metavar="FILE", help="append to FILE")
        parser.add_argument("-O", dest="overwrite", metavar="FILE", help="overwrite FILE")

    def run(self, args: list[str], opts: argparse.Namespace) -> None:
        crawl = spider_args(opts).get("crawl", "").strip()
        target = opts.overwrite or opts.append
        if not crawl or not target:
            raise UsageError("export needs -a crawl=NAME and -O FILE (or -o FILE)")
        try:
            store = open_crawl_store(self.settings)
        except SpitagError as exc:
            self.exitcode = report_error(exc)
            return
        mode = "w" if opts.overwrite else "a"
        out = nullcontext(sys.stdout) if target == "-" else open(target, mode, encoding="utf-8")
        count = 0
        try:
            with out as handle:
                for item in store.iter_urls(crawl):
                    handle.write(json.dumps(item, ensure_ascii=False, default=str) + "\n")
                    count += 1
        finally:
            store.close()
        print(f"exported {count} URL(s) of crawl {crawl!r} to {target}", file=sys.stderr)
