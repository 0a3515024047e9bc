"""SpiTag's own settings, read once and checked before a crawl starts.

Each ``SPITAG_*`` setting has its default in ``settings/__init__.py`` (where an
environment variable of the same name overrides it; ``-s`` overrides both). A wrong
value raises BadInputError naming the setting, so the crawl stops before it starts.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import os

from scrapy.settings import SETTINGS_PRIORITIES

from spitag.errors import BadInputError
from spitag.offload import processes_setting
from spitag.store import BODY_FORMATS
from spitag.urls import SCOPES

if TYPE_CHECKING:
    from scrapy.settings import BaseSettings


@dataclass(frozen=True)
class CrawlConfig:
    store_url: str
    store_body: str
    store_batch: int
    store_flush_seconds: float
    store_close_seconds: float
    scope: str
    keep_data: bool
    max_page_size: int
    max_links_per_page: int
    max_url_length: int
    frontier_url: str
    lease_seconds: float
    pop_batch: int
    max_unscored: int
    max_backlog: int
    host_weight: float
    host_prior: float
    host_k: float
    rescore_seconds: float
    host_probe: bool
    explore_pages: float
    homophily: float
    max_sitemap_urls: int
    extract_budget: float
    extract_processes: int

    @classmethod
    def from_settings(cls, settings: BaseSettings) -> CrawlConfig:
        config = cls(
            store_url=_text(settings, "SPITAG_STORE"),
            store_body=_choice(settings, "SPITAG_STORE_BODY", BODY_FORMATS),
            store_batch=number(settings, "SPITAG_STORE_BATCH", int, minimum=1),
            store_flush_seconds=number(settings, "SPITAG_STORE_FLUSH_SECONDS", float, minimum=0.05),
            store_close_seconds=number(settings, "SPITAG_STORE_CLOSE_SECONDS", float, minimum=0.0),
            scope=_choice(settings, "SPITAG_SCOPE", SCOPES),
            keep_data=flag(settings, "SPITAG_KEEP_DATA"),
            max_page_size=number(settings, "SPITAG_MAX_PAGE_SIZE", int, minimum=1024),
            max_links_per_page=number(settings, "SPITAG_MAX_LINKS_PER_PAGE", int, minimum=1),
            max_url_length=number(settings, "SPITAG_MAX_URL_LENGTH", int, minimum=16),
            frontier_url=_frontier_url(settings),
            lease_seconds=number(settings, "SPITAG_LEASE_SECONDS", float, minimum=1.0, maximum=3600.0),
            pop_batch=number(settings, "SPITAG_POP_BATCH", int, minimum=1),
            max_unscored=_max_unscored(settings),
            max_backlog=number(settings, "SPITAG_MAX_BACKLOG", int, minimum=0),
            host_weight=number(settings, "SPITAG_HOST_WEIGHT", float, minimum=0.0, maximum=1.0),
            host_prior=number(settings, "SPITAG_HOST_PRIOR", float, minimum=0.0),
            host_k=number(settings, "SPITAG_HOST_K", float, minimum=0.0, maximum=1e9),
            rescore_seconds=number(settings, "SPITAG_RESCORE_SECONDS", float, minimum=0.0, maximum=3600.0),
            host_probe=flag(settings, "SPITAG_HOST_PROBE"),
            explore_pages=number(settings, "SPITAG_EXPLORE_PAGES", float, minimum=1.0, maximum=1e9),
            homophily=number(settings, "SPITAG_HOMOPHILY", float, minimum=0.0, maximum=1.0),
            max_sitemap_urls=number(settings, "SPITAG_MAX_SITEMAP_URLS", int, minimum=0),
            extract_budget=number(settings, "SPITAG_EXTRACT_BUDGET", float, minimum=0.0),
            extract_processes=processes_setting(settings.get("SPITAG_EXTRACT_PROCESSES")),
        )
        flag(settings, "SPITAG_SITEMAPS")
        number(settings, "SPITAG_HOST_NAMES", float, minimum=0.0, maximum=100.0)
        number(settings, "SPITAG_LINK_EVIDENCE", float, minimum=0.0, maximum=100.0)
        number(settings, "SPITAG_ROBOTS_TTL", float, minimum=0.0, maximum=86400.0 * 365)
        number(settings, "SPITAG_MAX_RETRY_AFTER", float, minimum=0.0, maximum=86400.0)
        number(settings, "SPITAG_REFUSAL_RETRIES", int, minimum=0, maximum=100)
        number(settings, "SPITAG_HOST_FAILURES", int, minimum=0, maximum=1_000_000)
        number(settings, "SPITAG_HOST_DOWN_SECONDS", float, minimum=1.0, maximum=86400.0 * 30)
        number(settings, "SPITAG_RETRY_DELAY", float, minimum=0.0, maximum=86400.0)
        if settings.get("SPITAG_HOST_DELAY") not in (None, ""):
            number(settings, "SPITAG_HOST_DELAY", float, minimum=0.0)
        flag(settings, "SPITAG_FOLLOW_NOFOLLOW")
        progress_settings(settings)
        from spitag.recrawl import RecrawlPolicy  # checks the SPITAG_RECRAWL_* settings

        RecrawlPolicy.from_settings(settings)
        number(settings, "DOWNLOAD_DELAY", float, minimum=0.0)
        if flag(settings, "AUTOTHROTTLE_ENABLED"):  # (Scrapy would turn it off silently)
            number(settings, "AUTOTHROTTLE_TARGET_CONCURRENCY", float, minimum=0.01)
            number(settings, "AUTOTHROTTLE_START_DELAY", float, minimum=0.0)
            number(settings, "AUTOTHROTTLE_MAX_DELAY", float, minimum=0.0)
        if settings.get("SPITAG_PAGE_BUDGET") not in (None, ""):
            number(settings, "SPITAG_PAGE_BUDGET", int, minimum=0)
        return config


def progress_settings(settings: BaseSettings) -> tuple[str, float]:
    """``SPITAG_PROGRESS`` (auto, off, on) and ``SPITAG_PROGRESS_INTERVAL`` (seconds
    between progress lines: 0, none, or at least ``MIN_PROGRESS_INTERVAL``)."""
    mode = _choice(settings, "SPITAG_PROGRESS", PROGRESS_MODES)
    interval = number(settings, "SPITAG_PROGRESS_INTERVAL", float, minimum=0.0)
    if 0 < interval < MIN_PROGRESS_INTERVAL:  # a line every millisecond floods the log
        raise BadInputError(f"setting SPITAG_PROGRESS_INTERVAL={settings.get('SPITAG_PROGRESS_INTERVAL')!r}"
                            f" must be 0 (no progress line) or at least {MIN_PROGRESS_INTERVAL}")
    return mode, interval


def _frontier_url(settings: BaseSettings) -> str:
    """``SPITAG_FRONTIER``, or scrapy-redis' ``REDIS_URL`` when only that one is given
    (on the command line or in the environment: ``SPITAG_FRONTIER`` wins over it)."""
    explicit = (settings.getpriority("SPITAG_FRONTIER") or 0) > SETTINGS_PRIORITIES["project"]
    if not explicit and not os.environ.get("SPITAG_FRONTIER") and settings.get("REDIS_URL"):
        return _text(settings, "REDIS_URL")
    return _text(settings, "SPITAG_FRONTIER")


def _text(settings: BaseSettings, name: str) -> str:
    value = settings.get(name)
    if not isinstance(value, str) or not value.strip():
        raise BadInputError(f"setting {name} must be a non-empty string, not {value!r}")
    return value.strip()


def _choice(settings: BaseSettings, name: str, choices: tuple[str, ...]) -> str:
    value = str(settings.get(name, "")).strip().lower()
    if value not in choices:
        raise BadInputError(
            f"setting {name}={settings.get(name)!r} is not one of: {', '.join(choices)}"
        )
    return value


PROGRESS_MODES = ("auto", "off", "on")
MIN_PROGRESS_INTERVAL = 0.5  # seconds: the live display's refresh; more often shows nothing new
_FLAG_WORDS = ("True", "true", "False", "false", "1", "0")


def flag(settings: BaseSettings, name: str) -> bool:
    """A boolean as Scrapy's ``getbool`` reads it, but only its own spellings: ``getbool``
    takes any whole number, so ``2`` or ``-1`` (a count typed into a flag) would be true."""
    raw = settings.get(name)
    if raw is None:
        return False
    if not (isinstance(raw, bool) or raw in (0, 1) or raw in _FLAG_WORDS):
        raise BadInputError(f"setting {name}={raw!r} is not a boolean (True/False/1/0)")
    return settings.getbool(name)


def number(
    settings: BaseSettings, name: str, kind: type, minimum: Any, maximum: Any = None
) -> Any:
    raw = settings.get(name)
    try:
        value = kind(raw)
    except (TypeError, ValueError, OverflowError):
        raise BadInputError(f"setting {name}={raw!r} is not a {_KINDS[kind]}") from None
    if not math.isfinite(value):  # NaN, or inf: no wait, budget or size is infinite
        raise BadInputError(f"setting {name}={raw!r} is not a finite {_KINDS[kind]}")
    if value < minimum:
        raise BadInputError(f"setting {name}={raw!r} must be at least {minimum}")
    if maximum is not None and value > maximum:
        raise BadInputError(f"setting {name}={raw!r} must be at most {maximum}")
    return value


def _max_unscored(settings: BaseSettings) -> int:
    """SPITAG_MAX_UNSCORED: empty means twice CONCURRENT_REQUESTS; 0, no limit."""
    if settings.get("SPITAG_MAX_UNSCORED") in (None, ""):
        return 2 * max(settings.getint("CONCURRENT_REQUESTS"), 1)
    return number(settings, "SPITAG_MAX_UNSCORED", int, minimum=0)


_KINDS = {int: "whole number", float: "number"}
