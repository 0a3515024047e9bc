"""``scrapy crawls [-a format=json]``: the crawls a frontier and a store hold.

One line a crawl: its name, strategy, seeds, queued / leased / done URLs in the
frontier, URLs in the store, and when it last ran (a worker's start). The frontier is
``SPITAG_FRONTIER`` (or ``REDIS_URL``) and the store ``SPITAG_STORE``, as for the crawl;
a store or frontier file that does not exist lists nothing from it.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from scrapy.commands import ScrapyCommand
from scrapy.exceptions import UsageError

from spitag.commands._common import add_crawl_option, reader_may_leave, report_error, spider_args
from spitag.errors import SpitagError
from spitag.frontier import crawl_names, open_frontier
from spitag.options import Options
from spitag.store import open_store, sqlite_path, where
from spitag.urls import redact

if TYPE_CHECKING:
    import argparse


class Command(ScrapyCommand):
    requires_project = True
    requires_crawler_process = False

    def syntax(self) -> str:
        return "[-a format=text|json]"

    def short_desc(self) -> str:
        return "List the crawls of the frontier and the store"

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        super().add_options(parser)
        add_crawl_option(parser, "format=text|json")

    def run(self, args: list[str], opts: argparse.Namespace) -> None:
        fmt = spider_args(opts).get("format", "text").strip().lower()
        if fmt not in ("text", "json"):
            raise UsageError("-a format= takes text or json", print_help=False)
        options = Options(self.settings)
        try:
            crawls = list_crawls(options)
        except SpitagError as exc:
            self.exitcode = report_error(exc)
            return
        with reader_may_leave():
            if fmt == "json":
                print(json.dumps(crawls, indent=1))
            else:
                print(f"frontier {where(options.frontier, 'SPITAG_FRONTIER')} · store {where(options.store)}")
                print(render_text(crawls))


def list_crawls(options: Options) -> list[dict[str, Any]]:
    """Every crawl of the frontier and of the store, by name."""
    stored: dict[str, int] = {}
    if not options.store.startswith("sqlite:") or sqlite_path(options.store).is_file():
        store = open_store(options.store)
        try:
            stored = dict(store.crawls())
        finally:
            store.close()
    in_frontier = set(crawl_names(options.frontier))
    found = []
    for name in sorted(in_frontier | set(stored)):
        row: dict[str, Any] = {"crawl": name, "store_urls": stored.get(name, 0), "strategy": None, "seeds": [],
                               "seed_count": 0, "queued": 0, "leased": 0, "done": 0, "last_run": None}
        if name in in_frontier:
            frontier = open_frontier(options.frontier, name)
            try:
                counts, setup = frontier.queue.counts(), frontier.registry.setup()
            finally:
                frontier.close()
            row.update(queued=counts.queued, leased=counts.leased, done=counts.done,
                       strategy=setup.get("strategy"), seeds=json.loads(setup.get("first_seeds", "[]")),
                       seed_count=int(setup.get("seed_count", 0)), last_run=setup.get("last_run"))
        found.append(row)
    return found


def render_text(crawls: list[dict[str, Any]]) -> str:
    if not crawls:
        return "no crawl yet"
    lines = [f"{'crawl':<28} {'strategy':<9} {'queued':>8} {'leased':>7} {'done':>8} {'stored':>8}  {'last run':<20}  seeds"]
    for c in crawls:
        seeds = ", ".join(c["seeds"]) + (f" (+{c['seed_count'] - len(c['seeds'])})" if c["seed_count"] > len(c["seeds"]) else "")
        lines.append(
            f"{c['crawl']:<28} {c['strategy'] or '-':<9} {c['queued']:>8,} {c['leased']:>7,} {c['done']:>8,}"
            f" {c['store_urls']:>8,}  {c['last_run'] or '-':<20}  {redact(seeds) or '-'}"
        )
    return "\n".join(lines)
