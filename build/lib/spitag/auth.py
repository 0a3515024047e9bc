"""Credentials written in seed URLs (``http://user:pass@host/``), used but never shown.

Normalization drops the ``user:pass@`` part of every URL, so it never reaches the
frontier, the store, the items or the log. The credentials are kept here instead and
sent as HTTP Basic authentication to that seed's scheme, host and port only.
"""

from __future__ import annotations

from base64 import b64encode
from typing import Any
from urllib.parse import unquote, urlsplit

from scrapy.utils.httpobj import urlparse_cached

from spitag.urls import DEFAULT_PORTS


def origin(scheme: str, host: str, port: int | None) -> tuple[str, str, int]:
    return scheme.lower(), host.lower(), port or DEFAULT_PORTS.get(scheme.lower(), 0)


def seed_credentials(raw_seeds: list[str]) -> dict[tuple[str, str, int], str]:
    """``{origin: "Basic …"}`` for the seeds that carry a user name."""
    found: dict[tuple[str, str, int], str] = {}
    for raw in raw_seeds:
        try:
            parts = urlsplit(raw.strip())
            port = parts.port
        except ValueError:
            continue
        if parts.username is None or not parts.hostname:
            continue
        pair = f"{unquote(parts.username)}:{unquote(parts.password or '')}".encode()
        found[origin(parts.scheme, parts.hostname, port)] = "Basic " + b64encode(pair).decode()
    return found


class SeedAuthMiddleware:
    """Downloader middleware: the Authorization header for the seeds' own origins."""

    def __init__(self, crawler: Any) -> None:
        self.crawler = crawler

    @classmethod
    def from_crawler(cls, crawler: Any) -> SeedAuthMiddleware:
        return cls(crawler)

    def process_request(self, request: Any, spider: Any = None) -> None:
        credentials = getattr(self.crawler.spider, "credentials", None)
        if not credentials or b"Authorization" in request.headers:
            return None
        parts = urlparse_cached(request)
        header = credentials.get(origin(parts.scheme, parts.hostname or "", parts.port))
        if header:
            request.headers[b"Authorization"] = header
        return None
