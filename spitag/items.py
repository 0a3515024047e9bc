"""The item SpiTag yields for every requested URL: one JSON line each with ``-O``."""

from __future__ import annotations

from typing import Any

import scrapy


class PageItem(scrapy.Item):
    """What was learnt of one requested URL (fetched, failed, redirected or not HTML).

    ``body`` is internal: the store pipeline takes it off the item before the feed
    export sees it.
    """

    crawl = scrapy.Field()
    url = scrapy.Field()
    status = scrapy.Field()          # HTTP status; None when no response came
    error = scrapy.Field()           # why no usable response (timeout, DNS, size...), else None
    depth = scrapy.Field()           # breadth-first layer: seeds are 0
    priority = scrapy.Field()        # the number the scheduler ordered this request by
    reason = scrapy.Field()          # why that priority: strategy, parent URL, parent score
    fetched_at = scrapy.Field()      # ISO 8601 UTC
    content_type = scrapy.Field()    # MIME type without parameters
    encoding = scrapy.Field()        # original character encoding of a text body
    size = scrapy.Field()            # body bytes as received (after content decoding)
    truncated = scrapy.Field()       # body cut at SPITAG_MAX_PAGE_SIZE before profiling
    md5 = scrapy.Field()
    md5dia = scrapy.Field()
    title = scrapy.Field()
    semantic = scrapy.Field()        # counts per syntax + total (spitag.extract.COUNT_KEYS)
    incomplete = scrapy.Field()      # syntaxes skipped or cut off by the extraction budget or memory bound
    score = scrapy.Field()           # this page's semantic score (spitag.scoring)
    data = scrapy.Field()            # extracted structured data per syntax (SPITAG_KEEP_DATA)
    outlinks = scrapy.Field()        # number of distinct http(s) links on the page
    links = scrapy.Field()           # those links, normalized (at most SPITAG_MAX_LINKS_PER_PAGE)
    redirect_to = scrapy.Field()     # Location of a 3xx, or a meta refresh target
    canonical = scrapy.Field()       # <link rel="canonical"> of the page, normalized
    robots = scrapy.Field()          # noindex / nofollow from robots <meta> or X-Robots-Tag
    expires = scrapy.Field()         # when the URL is due again (spitag.recrawl), ISO 8601 UTC
    revisit_interval = scrapy.Field()  # its adaptive revisit interval, seconds
    changed = scrapy.Field()         # on a revisit: did the content change? None on a first fetch
    etag = scrapy.Field()            # validators the answer gave, sent back on the next visit
    last_modified = scrapy.Field()
    body = scrapy.Field()            # internal: decoded text (str) or raw bytes for binary


def is_page_record(item: Any) -> bool:
    """A SpiTag page record: a ``PageItem`` (``spitag.record``), or a mapping with its
    keys (``crawl``, ``url``). Anything else a spider yields (a subclass' own items) is
    the user's: exported, passed to their pipelines, never stored or counted as a page."""
    if isinstance(item, PageItem):
        return True
    return isinstance(item, dict) and bool(item.get("crawl")) and bool(item.get("url"))
