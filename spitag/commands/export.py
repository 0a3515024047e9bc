"""``scrapy export -a crawl=NAME -O all.jsonl``: a whole crawl, from the store.

A resumed crawl's ``-O`` file holds only that run's items; this command writes every
URL the crawl has stored, across all its runs (``-O`` overwrites, ``-o`` appends,
``-`` is standard output, as JSON lines). The format is the file's, as for ``scrapy
crawl -O``: ``.jsonl`` (or ``.jl``), ``.json``, ``.csv``, ``.xml``, or ``FILE:FORMAT``;
written by the project's ``FEED_EXPORTERS``. A store or a crawl that does not exist
is an error, not an empty file.
"""

from __future__ import annotations

import sys
from contextlib import nullcontext
from pathlib import Path
from typing import TYPE_CHECKING

from scrapy.commands import ScrapyCommand
from scrapy.exceptions import UsageError
from scrapy.utils.conf import feed_process_params_from_cli
from scrapy.utils.misc import load_object

from spitag import parts
from spitag.commands._common import (
    add_crawl_option,
    open_crawl_store,
    reader_may_leave,
    report_error,
    require_stored_crawl,
    spider_args,
)
from spitag.errors import BadInputError, SpitagError
from spitag.scrapy_settings import check_output_path

if TYPE_CHECKING:
    import argparse

    from scrapy.settings import BaseSettings


class Command(ScrapyCommand):
    requires_project = True
    requires_crawler_process = False

    def syntax(self) -> str:
        return "-a crawl=NAME (-O FILE | -o FILE)"

    def short_desc(self) -> str:
        return "Export a stored crawl (JSON lines, JSON, CSV or XML)"

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
        path, fmt = ("-", "jsonlines") if target == "-" else export_format(self.settings, target)
        try:
            if path != "-":
                check_output_path("-O" if opts.overwrite else "-o", Path(path))
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
            exporters = {**self.settings.getwithbase("FEED_EXPORTERS"), **parts.EXPORTERS}  # as a crawl's feeds
            exporter_class = load_object(exporters[fmt])
            out = nullcontext(sys.stdout.buffer) if path == "-" else open(path, "wb" if opts.overwrite else "ab")
            count = 0
            with reader_may_leave() as reader, out as handle:
                exporter = exporter_class(handle, encoding="utf-8")
                exporter.start_exporting()
                for item in store.iter_urls(crawl):
                    exporter.export_item(item)
                    count += 1
                exporter.finish_exporting()
        finally:
            store.close()
        if not reader.left:
            print(f"exported {count} URL(s) of crawl {crawl!r} to {path} ({fmt})", file=sys.stderr)


def export_format(settings: BaseSettings, target: str) -> tuple[str, str]:
    """The file and the feed format that ``target`` names, as ``-O`` of ``scrapy crawl``
    reads it (``pages.csv``, ``pages.jsonl``, ``pages.xml``, ``out.txt:jsonlines``)."""
    ((path, params),) = feed_process_params_from_cli(settings, [target]).items()
    return path, params["format"]
