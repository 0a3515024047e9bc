"""``scrapy forget -a crawl=NAME [-a urls=yes]``: start a crawl over.

Deletes what the frontier holds of the crawl (its queue, done URLs, hosts, robots.txt,
what its strategy learnt, its workers and setup): the next ``scrapy crawl`` with that
name starts afresh from its seeds. With ``-a urls=yes`` the store forgets it too: its
URL rows and the links it saw, and the pages no other crawl's URL holds. Other crawls
are left alone. A crawl with workers running is refused: stop it first
(``scrapy stop``).

Exit codes: 0 done, 2 a crawl the frontier does not have (or bad input), 3 a backend
that cannot be reached.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from scrapy.commands import ScrapyCommand
from scrapy.exceptions import UsageError

from spitag.commands._common import (
    add_crawl_option,
    crawl_name,
    frontier_for,
    open_crawl_store,
    report_error,
    spider_args,
)
from spitag.errors import BadInputError, SpitagError
from spitag.frontier import crawl_names
from spitag.options import Options
from spitag.urls import redact

if TYPE_CHECKING:
    import argparse


class Command(ScrapyCommand):
    requires_project = True
    requires_crawler_process = False

    def syntax(self) -> str:
        return "-a crawl=NAME [-a urls=yes]"

    def short_desc(self) -> str:
        return "Forget a crawl (its frontier; with -a urls=yes its store rows too) to start it over"

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        super().add_options(parser)
        add_crawl_option(parser, "crawl=NAME | urls=yes")

    def run(self, args: list[str], opts: argparse.Namespace) -> None:
        crawl = crawl_name(opts)
        urls = spider_args(opts).get("urls", "no").strip().lower()
        if urls not in ("yes", "no"):
            raise UsageError("-a urls= takes yes or no", print_help=False)
        options = Options(self.settings)
        try:
            known = crawl_names(options.frontier)
            if crawl not in known:
                raise BadInputError(f"crawl {crawl!r} is not in frontier {redact(options.frontier)}; crawls there: "
                                    f"{', '.join(known) or 'none'}")
            frontier = frontier_for(self.settings, crawl)
            try:
                running = [w for w in frontier.registry.workers() or [] if w.alive]
                if running:
                    raise BadInputError(f"crawl {crawl!r} has {len(running)} worker(s) running: stop it first "
                                        f"(scrapy stop -a crawl={crawl})")
                done = frontier.queue.counts().done
                frontier.registry.forget()
            finally:
                frontier.close()
            print(f"crawl {crawl!r} forgotten by frontier {redact(options.frontier)} ({done:,} URL(s) done)",
                  file=sys.stderr)
            if urls == "yes":
                store = open_crawl_store(self.settings, must_exist=True)
                try:
                    gone_urls, gone_pages = store.forget(crawl)
                finally:
                    store.close()
                print(f"crawl {crawl!r} forgotten by store {redact(options.store)}: {gone_urls:,} URL row(s), "
                      f"{gone_pages:,} page(s) no other crawl holds", file=sys.stderr)
        except SpitagError as exc:
            self.exitcode = report_error(exc)
