"""``scrapy links -a crawl=NAME --from URL [--depth N] [--reverse]``: the link graph
around one URL, from the store (SQLite or PostgreSQL: the same recursive SQL).

Prints a header line, then one edge a line, tab-separated — ``distance``, ``source``, ``target`` — nearest
first: distance 1 are the links on URL itself, 2 the links on the pages it links to,
and so on up to ``--depth``. With ``--reverse`` the walk goes backwards: distance 1
are the pages linking to URL. Targets never fetched (other sites, pages not crawled
yet) are included: the graph is every link seen. A summary goes to standard error.

Exit codes: 0 (even with no link), 2 bad input (a URL that is not the crawl's) or
store, 3 store unreachable.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from scrapy.commands import ScrapyCommand
from scrapy.exceptions import UsageError

from spitag.commands._common import (
    add_crawl_option,
    open_crawl_store,
    reader_may_leave,
    report_error,
    require_stored_crawl,
    spider_args,
)
from spitag.errors import BadInputError, SpitagError
from spitag.urls import try_normalize

if TYPE_CHECKING:
    import argparse


class Command(ScrapyCommand):
    requires_project = True
    requires_crawler_process = False

    def syntax(self) -> str:
        return "-a crawl=NAME --from URL [--depth N] [--reverse]"

    def short_desc(self) -> str:
        return "Print the stored link graph around a URL"

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        super().add_options(parser)
        add_crawl_option(parser)
        parser.add_argument("--from", dest="start", metavar="URL", help="the URL to start from")
        parser.add_argument("--depth", type=int, default=1, metavar="N", help="hops to follow (default 1)")
        parser.add_argument("--reverse", action="store_true", help="follow links backwards: who links to URL")

    def run(self, args: list[str], opts: argparse.Namespace) -> None:
        spargs = spider_args(opts)
        crawl = spargs.get("crawl", "").strip()
        if not crawl or not opts.start:
            raise UsageError("links needs -a crawl=NAME and --from URL", print_help=False)
        if opts.depth < 1:
            raise UsageError(f"--depth must be 1 or more, not {opts.depth}", print_help=False)
        try:
            store = open_crawl_store(self.settings, must_exist=True)
        except SpitagError as exc:
            self.exitcode = report_error(exc)
            return
        try:
            try:
                require_stored_crawl(store, crawl)
            except BadInputError as exc:
                self.exitcode = report_error(exc)
                return
            start = opts.start
            edges = store.links(crawl, start, opts.depth, reverse=opts.reverse)
            normal = try_normalize(start)
            if not edges and normal and normal != start:  # stored URLs are normalized
                start, edges = normal, store.links(crawl, normal, opts.depth, reverse=opts.reverse)
            known = bool(edges) or store.knows(crawl, start)
        finally:
            store.close()
        if not edges and not known:
            self.exitcode = report_error(BadInputError(
                f"{opts.start} is neither a URL of crawl {crawl!r} nor a link it saw"))
            return
        with reader_may_leave() as reader:
            out = sys.stdout
            out.write("distance\tsource\ttarget\n")
            for source, target, distance in edges:
                out.write(f"{distance}\t{source}\t{target}\n")
        if not reader.left:
            way = "to" if opts.reverse else "from"
            print(f"{len(edges)} link(s) within {opts.depth} hop(s) {way} {start} in crawl {crawl!r}",
                  file=sys.stderr)
