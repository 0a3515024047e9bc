"""Scrapy's log messages, with a page's item shown by its URL, not whole (``LOG_FORMATTER``).

Scrapy writes the whole item into "Dropped: …", "Error processing …" and "Scraped
from …": a SpiTag item holds the page's body and its extracted data, megabytes a line.
The messages name the item by its URL and status instead; any other item is cut at
``MAX_ITEM_CHARS``.
"""

from __future__ import annotations

from typing import Any

from itemadapter import ItemAdapter
from scrapy.logformatter import LogFormatter

MAX_ITEM_CHARS = 500


def item_summary(item: Any) -> str:
    """``<url> (status 200)`` for an item with a URL; else its repr, cut."""
    if ItemAdapter.is_item(item):
        adapter = ItemAdapter(item)
        url = adapter.get("url")
        if url:
            status = adapter.get("status")
            error = adapter.get("error")
            details = ", ".join(
                part for part in (f"status {status}" if status is not None else "",
                                  f"error {error}" if error else "") if part
            )
            return f"<{url}>" + (f" ({details})" if details else "")
    text = repr(item)
    return text if len(text) <= MAX_ITEM_CHARS else text[:MAX_ITEM_CHARS] + f"… ({len(text)} characters)"


class SpitagLogFormatter(LogFormatter):
    def scraped(self, item: Any, response: Any, spider: Any) -> Any:
        return _shortened(super().scraped(item, response, spider), item)

    def dropped(self, item: Any, exception: BaseException, response: Any, spider: Any) -> Any:
        return _shortened(super().dropped(item, exception, response, spider), item)

    def item_error(self, item: Any, exception: BaseException, response: Any, spider: Any) -> Any:
        return _shortened(super().item_error(item, exception, response, spider), item)


def _shortened(logkws: Any, item: Any) -> Any:
    if logkws and isinstance(logkws.get("args"), dict) and "item" in logkws["args"]:
        logkws = {**logkws, "args": {**logkws["args"], "item": item_summary(item)}}
    return logkws
