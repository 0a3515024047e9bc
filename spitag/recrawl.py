"""Recrawl: when a fetched URL is due again, and how its revisit interval adapts.

Every URL row carries ``expires`` (when it is due), ``revisit_interval`` (the adaptive
interval, seconds) and the validators its last answer gave (``etag``,
``last_modified``). Running a crawl that has done URLs again first *revives* the
expired ones in the frontier (``plan_recrawl``); they are fetched with conditional
requests (``If-None-Match`` / ``If-Modified-Since``), so an unchanged page costs a
``304`` and no body.

The schedule is Nutch's adaptive one (``AdaptiveFetchSchedule``):

* a URL fetched for the first time gets ``SPITAG_RECRAWL_INTERVAL``;
* at each revisit, a page that changed (new MD5) gets ``interval · (1 − DEC_RATE)``,
  one that did not (a 304, or the same MD5) ``interval · (1 + INC_RATE)``;
* the interval stays within ``[MIN_INTERVAL, MAX_INTERVAL]``.

The URL expires ``interval`` seconds after it was checked — unless the server said
how long its answer stays fresh (``Cache-Control: max-age``, ``no-cache``,
``no-store``, else ``Expires``): the server knows best, within the same bounds.
A request that failed (no answer) is due again after ``MIN_INTERVAL``.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from email.utils import format_datetime, parsedate_to_datetime
from typing import TYPE_CHECKING, Any

from spitag.errors import SpitagError
from spitag.frontier import Entry
from spitag.options import Options
from spitag.signals import frontier_opened
from spitag.store import open_store
from spitag.urls import host_of

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.http.headers import Headers

    from spitag.frontier import Frontier, UrlQueue
    from spitag.store import Store

logger = logging.getLogger(__name__)

REVIVE_CHUNK = 1000


@dataclass(frozen=True)
class RecrawlPolicy:
    enabled: bool = True
    interval: float = 7 * 86400.0
    min_interval: float = 3600.0
    max_interval: float = 365 * 86400.0
    inc_rate: float = 0.4
    dec_rate: float = 0.2

    @classmethod
    def from_options(cls, options: Options) -> RecrawlPolicy:
        return cls(options.recrawl, options.recrawl_interval, options.recrawl_min_interval,
                   options.recrawl_max_interval, options.recrawl_inc_rate, options.recrawl_dec_rate)

    def bounded(self, seconds: float) -> float:
        return min(max(seconds, self.min_interval), self.max_interval)

    def next_interval(self, previous: float | None, changed: bool | None) -> float:
        """The revisit interval after this fetch (``changed`` is None on a first fetch)."""
        if previous is None or changed is None:
            return self.bounded(self.interval)
        factor = 1.0 - self.dec_rate if changed else 1.0 + self.inc_rate
        return self.bounded(previous * factor)

    def expires(self, checked: datetime, interval: float, lifetime: float | None) -> datetime:
        """When the URL is due again: the server's freshness lifetime if it gave one,
        else the interval; bounded either way."""
        seconds = self.bounded(interval if lifetime is None else lifetime)
        try:
            return checked + timedelta(seconds=seconds)
        except OverflowError:
            return datetime.max.replace(tzinfo=timezone.utc)


def freshness_lifetime(headers: Headers, received: datetime) -> float | None:
    """Seconds the answer stays fresh by its headers, or None if they do not say.

    ``Cache-Control`` first (``no-store``/``no-cache`` → 0, ``max-age=N`` → N), then
    ``Expires`` (relative to the answer's ``Date``, else to when it was received)."""
    control = (headers.get(b"Cache-Control") or b"").decode("latin-1").lower()
    for part in control.split(","):
        name, _, value = part.strip().partition("=")
        if name in ("no-store", "no-cache"):
            return 0.0
        if name == "max-age":
            value = value.strip().strip('"')
            if value.isdigit():
                return float(value)
    expires = _http_date(headers.get(b"Expires"))
    if expires is None:
        return None
    date = _http_date(headers.get(b"Date")) or received
    return max((expires - date).total_seconds(), 0.0)


def _http_date(raw: bytes | None) -> datetime | None:
    if not raw:
        return None
    try:
        moment = parsedate_to_datetime(raw.decode("latin-1"))
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    if moment is None:
        return None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=timezone.utc)


def validators(headers: Headers) -> tuple[str | None, str | None]:
    """``(ETag, Last-Modified)`` of an answer, to send back on the next visit."""
    etag = headers.get(b"ETag")
    modified = headers.get(b"Last-Modified")
    return (
        etag.decode("latin-1").strip() or None if etag else None,
        modified.decode("latin-1").strip() or None if modified else None,
    )


def conditional_headers(revisit: dict[str, Any] | None) -> dict[str, str]:
    """The headers of a revisit: ``If-None-Match`` and/or ``If-Modified-Since``."""
    if not revisit:
        return {}
    headers = {}
    if revisit.get("etag"):
        headers["If-None-Match"] = revisit["etag"]
    if revisit.get("last_modified"):
        headers["If-Modified-Since"] = revisit["last_modified"]
    return headers


def http_date(moment: datetime) -> str:
    return format_datetime(moment.astimezone(timezone.utc), usegmt=True)


def settle(
    policy: RecrawlPolicy,
    item: dict[str, Any],
    headers: Headers | None,
    revisit: dict[str, Any] | None,
    checked: datetime,
) -> None:
    """Fill an item's schedule: ``changed``, ``revisit_interval``, ``expires``, validators.

    A 304 is the page unchanged: the item names the stored content (its MD5), the URL
    row keeps its page (``spitag.store``). Without an answer (``headers`` None) the URL
    is due again after ``MIN_INTERVAL`` and keeps its interval."""
    if headers is None:
        interval = (revisit or {}).get("interval")
        item["revisit_interval"] = float(interval) if interval else policy.bounded(policy.interval)
        item["expires"] = iso(policy.expires(checked, policy.min_interval, None))
        return
    etag, last_modified = validators(headers)
    status = item.get("status")
    changed: bool | None = None
    if revisit is not None:
        if status == 304:
            changed = False
            item["md5"] = revisit.get("md5")
            item["md5dia"] = None  # no content seen: nothing to profile or learn from
            etag = etag or revisit.get("etag")
            last_modified = last_modified or revisit.get("last_modified")
        else:
            same_status = status == revisit.get("status")
            is_page = status is not None and 200 <= status < 300
            changed = not (same_status and (not is_page or item.get("md5") == revisit.get("md5")))
    interval = policy.next_interval(revisit.get("interval") if revisit else None, changed)
    item.update(
        etag=etag,
        last_modified=last_modified,
        changed=changed,
        revisit_interval=interval,
        expires=iso(policy.expires(checked, interval, freshness_lifetime(headers, checked))),
    )


def plan_recrawl(store: Store, queue: UrlQueue, crawl: str, now: datetime) -> int:
    """Revive every URL of ``crawl`` that expired by ``now``: done → queued, with what
    its revisit needs (validators, interval, MD5). Returns how many were revived."""
    def entries(rows: Iterable[dict[str, Any]]) -> Iterator[Entry]:
        for row in rows:
            revisit = {
                "etag": row["etag"],
                "last_modified": row["last_modified"],
                "interval": row["revisit_interval"],
                "md5": row["md5"],
                "status": row["status"],
            }
            about = dict(row["reason"] or {})
            about.update(recrawl=True, expired=row["expires"])
            yield Entry.from_about(row["url"], host_of(row["url"]), int(row["depth"] or 0),
                                   float(row["priority"] or 0.0), about,
                                   {k: v for k, v in revisit.items() if v is not None})

    revived = 0
    batch: list[Entry] = []
    for entry in entries(store.iter_due(crawl, iso(now))):
        batch.append(entry)
        if len(batch) >= REVIVE_CHUNK:
            revived += queue.revive(batch)
            batch = []
    if batch:
        revived += queue.revive(batch)
    return revived


def iso(moment: datetime) -> str:
    """UTC, ISO 8601 with milliseconds and a Z: the store's timestamp text."""
    return moment.astimezone(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class RecrawlPlanner:
    """A crawl run again revives, at its start, the URLs whose time has come (a Scrapy
    extension of SpiTag's spider, started by ``frontier_opened``; stat
    ``spitag/recrawl/revived``), and its seeds whose last try failed (no answer, a
    server error: a typo fixed, a network back; stat ``spitag/recrawl/seeds_again``)."""

    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler
        self.options = Options.of(crawler)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> RecrawlPlanner:
        planner = cls(crawler)
        crawler.signals.connect(planner.opened, signal=frontier_opened)
        return planner

    def opened(self, frontier: Frontier) -> None:
        if not frontier.queue.counts().done:
            return
        try:
            store = open_store(self.options.store)
        except SpitagError as exc:  # the crawl goes on; its pipeline rides the outage out
            logger.warning("crawl %s: seeds that failed and URLs due again not looked at: %s", frontier.crawl, exc)
            return
        try:
            self._seeds_again(store, frontier)
            if self.options.recrawl:
                revived = plan_recrawl(store, frontier.queue, frontier.crawl, datetime.now(timezone.utc))
                self.crawler.stats.set_value("spitag/recrawl/revived", revived)
                logger.info("recrawl: %d expired URL(s) of crawl %s queued again", revived, frontier.crawl)
        finally:
            store.close()

    def _seeds_again(self, store: Any, frontier: Frontier) -> None:
        spider = self.crawler.spider
        seeds = getattr(spider, "seed_urls", None) or []
        failed = store.failed(frontier.crawl, seeds) if seeds else []
        if not failed:
            return
        again = frontier.queue.revive([Entry(url, host_of(url), 0, spider.strategy.seed()) for url in failed])
        self.crawler.stats.set_value("spitag/recrawl/seeds_again", again)
        logger.info("crawl %s: %d seed(s) that failed last time tried again: %s", frontier.crawl, again,
                    ", ".join(failed[:3]) + (" …" if len(failed) > 3 else ""))
