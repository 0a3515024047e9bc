"""Seeing a crawl while it runs: a periodic progress line in the log and, on a terminal,
a live display (rich) refreshed twice a second.

Settings:

* ``SPITAG_PROGRESS`` — the live display: ``auto`` (only when stderr is a terminal),
  ``on`` (always, even into a file or a pipe), ``off``.
* ``SPITAG_PROGRESS_INTERVAL`` — seconds between two progress lines in the log
  (default 60; 0 turns the line off).

What is shown: pages fetched in this run and the rate (pages/min over the last
interval), URLs stored (committed by the store pipeline), the frontier's queued /
leased / done (``UrlQueue.counts()``, shared by every worker of the crawl; and, when
there are any, the URLs retrying: failed, to be tried again later), the hosts
this run fetched from, and the semantic items per page so far (sum of
``semantic.total`` / pages that answered 2xx, in this run).

``UrlQueue.counts()`` is a ``COUNT … GROUP BY`` on SQLite, so it is asked at most once
per log line and once every ``COUNTS_EVERY`` seconds for the live display; a frontier
that does not answer (Redis restarting) is asked again after the crawl's outage
back-off (``spitag.outage``).
While the live display runs, log records to stderr are printed above it.
"""

from __future__ import annotations

import logging
import sys
import time
from typing import TYPE_CHECKING, Any

from scrapy import signals

from spitag.aio import every, stop
from spitag.errors import SpitagError
from spitag.items import is_page_record
from spitag.options import Options
from spitag.outage import Outage
from spitag.outcomes import STORED, PageEnd
from spitag.signals import frontier_closing, frontier_opened, page_ended
from spitag.urls import host_of

if TYPE_CHECKING:
    from scrapy import Spider
    from scrapy.crawler import Crawler

    from spitag.frontier import Counts, Frontier, UrlQueue

logger = logging.getLogger(__name__)

LIVE_REFRESH = 0.5  # seconds: the live display refreshes about twice a second
COUNTS_EVERY = 5.0  # seconds between two frontier counts for the live display


def retrying(counts: Counts | None) -> str:
    """`` F retrying,`` when F of the queued and leased URLs failed and wait for another
    try (or are being tried again), else nothing."""
    return f" {counts.retrying:,} retrying," if counts and counts.retrying else ""


class Progress:
    """The Scrapy extension (``EXTENSIONS``); see the module docstring."""

    def __init__(self, crawler: Crawler, mode: str, interval: float) -> None:
        self.crawler = crawler
        self.mode = mode
        self.interval = interval
        self.outage = Outage.of(crawler, "frontier")
        self.queue: UrlQueue | None = None
        self.crawl = ""
        self.strategy = ""
        self.started = time.monotonic()
        self.pages = 0  # items scraped: every requested URL yields one
        self.ok_pages = 0  # of which 2xx
        self.semantic = 0  # semantic items on those pages
        self.stored = 0
        self.hosts: set[str] = set()
        self.last_pages = 0
        self.last_time = self.started
        self.counts: Counts | None = None
        self.counts_at = float("-inf")
        self.loops: list[Any] = []
        self.live: _LiveDisplay | None = None

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Progress:
        options = Options.of(crawler)
        ext = cls(crawler, options.progress, options.progress_interval)
        connect = crawler.signals.connect
        connect(ext.frontier_opened, signal=frontier_opened)
        connect(ext.frontier_closing, signal=frontier_closing)
        connect(ext.spider_opened, signal=signals.spider_opened)
        connect(ext.spider_closed, signal=signals.spider_closed)
        connect(ext.item_scraped, signal=signals.item_scraped)
        connect(ext.page_ended, signal=page_ended)
        return ext

    # -- signals ------------------------------------------------------------------
    def frontier_opened(self, frontier: Frontier) -> None:
        self.queue = frontier.queue

    def frontier_closing(self, frontier: Frontier) -> None:
        self.queue = None
        if self.pages:
            return
        try:
            counts = frontier.queue.counts()
        except SpitagError:  # unreachable: the outage is logged where it happened
            return
        if counts.done and not counts.queued and not counts.leased:
            logger.warning(
                "crawl %s: nothing left to fetch (its %s URL(s) were done in earlier runs); to start it over:"
                " scrapy forget -a crawl=%s, or name another crawl (-a crawl=NAME)",
                frontier.crawl, f"{counts.done:,}", frontier.crawl,
            )

    def spider_opened(self, spider: Spider) -> None:
        self.crawl = spider.crawl_id
        self.strategy = spider.strategy.name
        self.started = self.last_time = time.monotonic()
        if self.interval > 0:
            self.loops.append(every(self.interval, self.log_line))
        if self.mode == "on" or (self.mode == "auto" and _stderr_is_tty()):
            try:
                self.live = _LiveDisplay(force=self.mode == "on")
            except Exception:  # a display problem must never stop a crawl
                logger.warning("live progress display unavailable", exc_info=True)
            else:
                self.loops.append(every(LIVE_REFRESH, self.refresh_live))

    def spider_closed(self, spider: Spider, reason: str) -> None:
        stop(self.loops)
        if self.live is not None:
            self.live.stop()
            self.live = None
        logger.info("progress at close: %s", self.summary(frontier=False))
        if reason in ("shutdown", "stopped"):
            logger.info("crawl %s paused (%s): run the same command again to resume", self.crawl, reason)

    def item_scraped(self, item: Any, response: Any = None, spider: Any = None) -> None:
        if not is_page_record(item):
            return
        self.pages += 1
        url = item.get("url")
        if url:
            try:
                self.hosts.add(host_of(url))
            except ValueError:
                pass
        status = item.get("status")
        if status is not None and 200 <= status < 300:
            self.ok_pages += 1
            self.semantic += int((item.get("semantic") or {}).get("total") or 0)

    def page_ended(self, end: PageEnd) -> None:
        if end.kind == STORED:
            self.stored += len(end.urls)

    # -- what is shown ---------------------------------------------------------------
    def frontier_counts(self, max_age: float) -> Counts | None:
        """The frontier's counts, asked again only when older than ``max_age`` seconds
        (and, in an outage, after its back-off: the last numbers meanwhile)."""
        now = time.monotonic()
        if self.queue is None or now - self.counts_at < max_age:
            return self.counts
        counts = self.outage.call(self.queue.counts)
        if counts is not None:
            self.counts, self.counts_at = counts, now
        return self.counts

    @property
    def per_page(self) -> float:
        return self.semantic / self.ok_pages if self.ok_pages else 0.0

    def summary(self, rate: float | None = None, frontier: bool = True) -> str:
        """``N pages (R pages/min), S stored, Q queued, L leased, D done, [F retrying,] H
        hosts, X semantic items/page``; the rate is over the whole run unless given."""
        counts = self.counts
        q = lambda v: "?" if counts is None else f"{v:,}"  # noqa: E731
        if rate is None:
            elapsed = max(time.monotonic() - self.started, 1e-9)
            rate = self.pages / elapsed * 60
        queue = (
            f" {q(counts and counts.queued)} queued, {q(counts and counts.leased)} leased,"
            f" {q(counts and counts.done)} done,{retrying(counts)}" if frontier else ""
        )
        return (
            f"{self.pages:,} pages ({rate:,.1f} pages/min), {self.stored:,} stored,{queue}"
            f" {len(self.hosts):,} hosts, {self.per_page:.2f} semantic items/page"
        )

    def log_line(self) -> None:
        now = time.monotonic()
        rate = (self.pages - self.last_pages) / max(now - self.last_time, 1e-9) * 60
        self.last_pages, self.last_time = self.pages, now
        self.frontier_counts(max_age=min(1.0, self.interval / 2))
        logger.info("progress: %s", self.summary(rate))

    def refresh_live(self) -> None:
        if self.live is None:
            return
        self.frontier_counts(max_age=COUNTS_EVERY)
        try:
            self.live.update(self)
        except Exception:
            logger.warning("live progress display failed; turning it off", exc_info=True)
            self.live.stop()
            self.live = None


def _stderr_is_tty() -> bool:
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


class _LogWriter:
    """A stream for logging handlers while the live display runs: each line printed
    above the display, never wrapped (long log lines stay one line)."""

    def __init__(self, console: Any) -> None:
        self.console = console
        self.buffer = ""

    def write(self, text: str) -> int:
        from rich.text import Text

        self.buffer += text
        *lines, self.buffer = self.buffer.split("\n")
        for line in lines:
            self.console.print(Text(line), soft_wrap=True)
        return len(text)

    def flush(self) -> None:
        if self.buffer:
            self.write("\n")


class _LiveDisplay:
    """The rich live display on stderr; log records to stderr go above it."""

    def __init__(self, force: bool) -> None:
        from rich.console import Console
        from rich.live import Live

        self.console = Console(stderr=True, force_terminal=True if force else None)
        self.live = Live(console=self.console, auto_refresh=False, transient=True,
                         redirect_stdout=False, redirect_stderr=False)
        self.live.start()
        self.redirected: list[tuple[logging.StreamHandler, Any]] = []
        writer = _LogWriter(self.console)
        for handler in logging.getLogger().handlers:
            if type(handler) is logging.StreamHandler and handler.stream in (sys.stderr, sys.__stderr__):
                self.redirected.append((handler, handler.setStream(writer)))

    def update(self, progress: Progress) -> None:
        self.live.update(_render(progress), refresh=True)

    def stop(self) -> None:
        for handler, stream in self.redirected:
            handler.setStream(stream)
        self.redirected = []
        self.live.stop()


def _render(p: Progress) -> Any:
    from rich.console import Group
    from rich.progress_bar import ProgressBar
    from rich.table import Table
    from rich.text import Text

    elapsed = int(time.monotonic() - p.started)
    clock = f"{elapsed // 3600}:{elapsed % 3600 // 60:02d}:{elapsed % 60:02d}"
    title = Text.assemble(
        ("SpiTag ", "bold cyan"), (f"crawl {p.crawl}", "bold"),
        (f" · strategy {p.strategy}" if p.strategy else "", ""), (f" · {clock}", ""),
        ("   Ctrl-C: pause (the same command resumes)", "dim"),
    )
    parts: list[Any] = [title]
    counts = p.counts
    if counts is not None:
        known = counts.queued + counts.leased + counts.done
        row = Table.grid(padding=(0, 1))
        row.add_row(
            ProgressBar(total=max(known, 1), completed=counts.done, width=40),
            Text(f"{counts.done / known if known else 0.0:5.1%}  {counts.done:,} done of {known:,} known"
                 f" · {counts.queued:,} queued · {counts.leased:,} leased"
                 + (f" · {counts.retrying:,} retrying" if counts.retrying else "")),
        )
        parts.append(row)
    minutes = max(time.monotonic() - p.started, 1e-9) / 60
    parts.append(Text(
        f"fetched {p.pages:,} pages ({p.pages / minutes:,.1f}/min) · stored {p.stored:,}"
        f" · {len(p.hosts):,} hosts · {p.per_page:.2f} semantic items/page"
    ))
    return Group(*parts)
