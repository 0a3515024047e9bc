"""``scrapy serve [-a crawl=NAME] [-s SPITAG_SERVE=127.0.0.1:8088]``: a crawl's store and
frontier as a read-only JSON API (``spitag.serve``), its documentation at ``/docs``.

The store is ``SPITAG_STORE`` and the frontier ``SPITAG_FRONTIER`` (or ``REDIS_URL``),
as for the crawl: the embedded defaults or Redis + PostgreSQL alike. The server binds
to ``SPITAG_SERVE`` (loopback by default); bound to anything else it needs a
``SPITAG_SERVE_TOKEN``, which every API call then brings as ``Authorization: Bearer``.
``-a crawl=NAME`` serves that crawl only.

Exit codes: 0 when stopped (Ctrl-C), 2 bad input (a setting, no store there), 3 a
store that cannot be reached.
"""

from __future__ import annotations

import ipaddress
import json
import logging
from typing import TYPE_CHECKING, Any

from scrapy.commands import ScrapyCommand

from spitag.commands._common import add_crawl_option, report_error, spider_args
from spitag.errors import BadInputError, SpitagError
from spitag.options import Options

if TYPE_CHECKING:
    import argparse

    from scrapy.settings import BaseSettings


class Command(ScrapyCommand):
    requires_project = True
    requires_crawler_process = False

    def syntax(self) -> str:
        return "[-a crawl=NAME] [-s SPITAG_SERVE=127.0.0.1:8088]"

    def short_desc(self) -> str:
        return "Serve the store and the frontier as a read-only JSON API"

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        super().add_options(parser)
        add_crawl_option(parser)

    def run(self, args: list[str], opts: argparse.Namespace) -> None:
        import uvicorn

        from spitag.serve.app import make_app
        from spitag.serve.reader import StoreReader

        only = spider_args(opts).get("crawl", "").strip() or None
        try:
            options = Options(self.settings)
            host, port = bind_address(options.serve)
            token = options.serve_token or None
            if token is None and not is_loopback(host):
                raise BadInputError(f"SPITAG_SERVE={options.serve} is not a loopback address: "
                                    "set SPITAG_SERVE_TOKEN, which every call must then bring")
            reader = StoreReader(options.store)
        except SpitagError as exc:
            self.exitcode = report_error(exc)
            return
        app = make_app(reader, frontier_reader(self.settings), only_crawl=only, token=token)
        logging.getLogger(__name__).info("serving %s at http://%s:%d/ (API documentation: /docs)",
                                         only or "every crawl", host, port)
        try:
            uvicorn.run(app, host=host, port=port, log_level="warning", server_header=False)
        finally:
            app.state.reports.close()
            reader.close()


def bind_address(value: str) -> tuple[str, int]:
    """``host:port`` (``[::1]:8088`` for IPv6) → (host, port); BadInputError if not."""
    host, sep, port = value.strip().rpartition(":")
    host = host.strip("[]")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise BadInputError(f"SPITAG_SERVE={value!r}: write host:port, 127.0.0.1:8088")
    return host, int(port)


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def frontier_reader(settings: BaseSettings) -> Any:
    """``state(crawl, top, hosts)``: the crawl's frontier as ``scrapy frontier -a
    format=json`` prints it, with its seeds; None when the frontier has nothing of it."""
    from spitag.commands.frontier import snapshot
    from spitag.frontier import crawl_names, open_frontier
    from spitag.store import sqlite_path

    options = Options(settings)
    url = options.frontier

    def state(crawl: str, top: int, hosts: int) -> dict[str, Any] | None:
        if url.startswith("sqlite:") and not sqlite_path(url, "SPITAG_FRONTIER").is_file():
            return None
        if crawl not in crawl_names(url):
            return None
        frontier = open_frontier(url, crawl)
        try:
            out = snapshot(frontier, top, hosts, options.host_delay)
            out["seeds"] = json.loads(frontier.registry.setup().get("first_seeds", "[]"))
        finally:
            frontier.close()
        return out

    return state
