"""Sitemaps as seeds (``SPITAG_SITEMAPS = True``).

The sitemaps a host lists in its robots.txt (``Sitemap:`` lines, read from the
robots.txt Scrapy already fetches) are queued like seeds; a response that is a sitemap
(``<urlset>``) or a sitemap index (``<sitemapindex>``), gzipped or not, yields its
``<loc>`` URLs, which then pass the crawl's filters like any link.
"""

from __future__ import annotations

import logging
from typing import Any

from scrapy.utils.gz import gunzip
from scrapy.utils.sitemap import Sitemap

logger = logging.getLogger(__name__)

SITEMAP_TYPES = ("urlset", "sitemapindex")


def robots_sitemaps(robotparser: Any) -> list[str]:
    """The ``Sitemap:`` URLs of a parsed robots.txt (Scrapy's Protego parser)."""
    protego = getattr(robotparser, "rp", None)
    return list(getattr(protego, "sitemaps", None) or [])


def sitemap_locations(body: bytes, max_size: int) -> list[str] | None:
    """The ``<loc>`` URLs of a sitemap body (gzipped or not); None if it is not one."""
    if body[:2] == b"\x1f\x8b":
        try:
            body = gunzip(body, max_size=max_size)
        except Exception:  # a broken or oversized archive is not a sitemap we can read
            logger.info("unreadable gzipped sitemap (%d bytes)", len(body))
            return None
    head = body[:2048].lower()
    if b"<urlset" not in head and b"<sitemapindex" not in head:
        return None
    try:
        sitemap = Sitemap(body)
        if sitemap.type not in SITEMAP_TYPES:
            return None
        return [entry["loc"] for entry in sitemap if entry.get("loc")]
    except Exception:  # recover=True parses most junk; what it cannot is no sitemap
        logger.info("unparsable sitemap (%d bytes)", len(body))
        return None
