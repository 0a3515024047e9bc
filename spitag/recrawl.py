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

from spitag.errors import BadInputError

if TYPE_CHECKING:
    from scrapy.http.headers import Headers
    from scrapy.settings import BaseSettings

    from spitag.frontier import Entry, Frontier
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
    def from_settings(cls, settings: BaseSettings) -> RecrawlPolicy:
        from spitag.config import flag, number  # one validation for all settings

        policy = cls(
            enabled=flag(settings, "SPITAG_RECRAWL"),
            interval=number(settings, "SPITAG_RECRAWL_INTERVAL", float, minimum=0.0),
            min_interval=number(settings, "SPITAG_RECRAWL_MIN_INTERVAL", float, minimum=0.0),
            max_interval=number(settings, "SPITAG_RECRAWL_MAX_INTERVAL", float, minimum=0.0),
            inc_rate=number(settings, "SPITAG_RECRAWL_INC_RATE", float, minimum=0.0, maximum=10.0),
            dec_rate=number(settings, "SPITAG_RECRAWL_DEC_RATE", float, minimum=0.0, maximum=0.99),
        )
        if policy.min_interval > policy.max_interval:
            raise BadInputError(
                f"setting SPITAG_RECRAWL_MIN_INTERVAL={policy.min_interval:g} is above"
                f" SPITAG_RECRAWL_MAX_INTERVAL={policy.max_interval:g}"
            )
        return policy

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


def plan_recrawl(store: Store, frontier: Frontier, crawl: str, now: datetime) -> int:
    """Revive every URL of ``crawl`` that expired by ``now``: done → queued, with what
    its revisit needs (validators, interval, MD5). Returns how many were revived."""
    from spitag.frontier import Entry
    from spitag.urls import host_of

    def entries(rows: Iterable[dict[str, Any]]) -> Iterator[Entry]:
        for row in rows:
            revisit = {
                "etag": row["etag"],
                "last_modified": row["last_modified"],
                "interval": row["revisit_interval"],
                "md5": row["md5"],
                "status": row["status"],
            }
            reason = dict(row["reason"] or {})
            reason.update(recrawl=True, expired=row["expires"])
            yield Entry(
                url=row["url"],
                host=host_of(row["url"]),
                depth=int(row["depth"] or 0),
                priority=float(row["priority"] or 0.0),
                reason=reason,
                revisit={k: v for k, v in revisit.items() if v is not None},
            )

    revived = 0
    batch: list[Entry] = []
    for entry in entries(store.iter_due(crawl, iso(now))):
        batch.append(entry)
        if len(batch) >= REVIVE_CHUNK:
            revived += frontier.revive(batch)
            batch = []
    if batch:
        revived += frontier.revive(batch)
    return revived


def iso(moment: datetime) -> str:
    """UTC, ISO 8601 with milliseconds and a Z: the store's timestamp text."""
    return moment.astimezone(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")
