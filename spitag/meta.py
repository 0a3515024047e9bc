"""The request meta keys SpiTag owns, and the only code that reads or writes them.

A frontier request carries its ``Entry`` (``spitag_entry``: URL, depth, priority,
parent, revisit data) — what the frontier keeps of it and gives back at a pop — and,
when its push is not to combine as the strategy says, ``spitag_combine``. Scrapy's own
``depth`` key is kept equal to the entry's. The rest are notes the components leave on
a request or its response while it is being handled.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import scrapy

from spitag.frontier.records import Entry
from spitag.urls import host_of, try_normalize

if TYPE_CHECKING:
    from scrapy.http import Request, Response

ENTRY = "spitag_entry"  # the frontier entry the request was built from
COMBINE = "spitag_combine"  # "max" or "sum": how its push combines, when not the strategy's way
BYTES = "spitag_bytes"  # body bytes received so far (SPITAG_MAX_PAGE_SIZE)
HEADERS_ONLY = "spitag_headers_only"  # not HTML: stopped at its headers (spitag.record)
ITEM_OUT = "spitag_item_out"  # the page's item, or its failure record, was yielded (spitag.outcomes)
HOST_SLOT = "spitag_host_slot"  # the host whose download place the request holds (spitag.politeness)
HOST_PLACE = "spitag_host_place"  # the token of its place among every worker's (spitag.politeness)


def frontier_request(entry: Entry, *, callback: Callable[..., Any], errback: Callable[..., Any] | None = None,
                     combine: str | None = None, headers: dict[str, str] | None = None) -> scrapy.Request:
    """A request the frontier can store and rebuild: its entry in the meta."""
    meta: dict[str, Any] = {"depth": entry.depth, ENTRY: entry}
    if combine is not None:
        meta[COMBINE] = combine
    return scrapy.Request(entry.url, callback=callback, errback=errback, priority=int(round(entry.priority * 1000)),
                          meta=meta, headers=headers or None)


def entry_of(request: Request) -> Entry | None:
    """The frontier entry of ``request``: its own, or one made from its URL (a request
    the spider built itself); None for a URL that cannot be normalized."""
    entry = request.meta.get(ENTRY)
    if entry is not None:
        return entry
    url = try_normalize(request.url)
    if url is None:
        return None
    return Entry(url, host_of(url), int(request.meta.get("depth", 0)), float(request.priority))


def url_of(request_or_response: Request | Response) -> str | None:
    """The frontier URL a request (or the response to it) is for; None if it is none."""
    entry = request_or_response.meta.get(ENTRY)
    return None if entry is None else entry.url


def combine_of(request: Request, default: str) -> str:
    return request.meta.get(COMBINE, default)


def page_fields(request: Request, strategy: str) -> dict[str, Any]:
    """What an item records of the request that fetched it: URL, depth, priority, and
    why it was queued (the strategy, the parent and its score, the entry's note)."""
    entry = request.meta.get(ENTRY)
    if entry is None:
        return {"url": request.url, "depth": request.meta.get("depth", 0), "priority": None, "reason": None}
    about = entry.about()
    return {"url": entry.url, "depth": entry.depth, "priority": entry.priority,
            "reason": {"strategy": strategy, **about} if about else None}


def revisit_of(request_or_response: Request | Response) -> dict[str, Any] | None:
    entry = request_or_response.meta.get(ENTRY)
    return None if entry is None else entry.revisit


def count_bytes(request: Request, received: int) -> int:
    """Add ``received`` body bytes to the request's count; the count so far."""
    total = request.meta.get(BYTES, 0) + received
    request.meta[BYTES] = total
    return total
