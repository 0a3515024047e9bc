"""SpiTag's parts: what SpiTag's spider brings to the settings of its crawls.

``SpitagSpider.update_settings`` merges them, so a plain spider of the same project is
plain Scrapy, and a spider derived from SpiTag's keeps them whatever its own
``custom_settings`` say (those win where they name the same setting or component):

* ``REQUIRED`` — what SpiTag's crawl cannot do without: its scheduler over the
  frontier; redirects, meta refreshes and HTTP errors recorded by the spider itself
  (one row per URL), not followed or filtered by Scrapy;
* ``COMPONENTS`` — its middlewares, pipeline and extensions, each in the place it needs
  (``None``: the Scrapy component SpiTag's replaces);
* ``DEFAULTS`` — defaults that differ from Scrapy's, below the project's settings.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from scrapy.settings import SETTINGS_PRIORITIES
from scrapy.utils.misc import load_object

from spitag import __version__
from spitag.errors import BadInputError

if TYPE_CHECKING:
    from scrapy.settings import BaseSettings

REQUIRED: dict[str, Any] = {
    "SCHEDULER": "spitag.scheduler.FrontierScheduler",
    "REDIRECT_ENABLED": False,
    "METAREFRESH_ENABLED": False,
    "HTTPERROR_ALLOW_ALL": True,
    # log lines name an item by its URL instead of printing it whole (body included)
    "LOG_FORMATTER": "spitag.logformatter.SpitagLogFormatter",
}

COMPONENTS: dict[str, dict[str, int | None]] = {
    "SPIDER_MIDDLEWARES": {
        # depth is the spider's own (breadth-first layers; a redirect keeps its layer)
        "scrapy.spidermiddlewares.depth.DepthMiddleware": None,
        # every page fetched ends, stored or settled, whatever its callback does
        "spitag.outcomes.PageOutcomeMiddleware": 950,
    },
    "DOWNLOADER_MIDDLEWARES": {
        # Scrapy's robots.txt middleware, each robots.txt kept in the frontier
        "scrapy.downloadermiddlewares.robotstxt.RobotsTxtMiddleware": None,
        "spitag.robots.SharedRobotsTxtMiddleware": 100,
        "spitag.auth.SeedAuthMiddleware": 310,  # credentials of seed URLs, never shown
        # Scrapy's RetryMiddleware, a failed frontier URL tried again later
        "scrapy.downloadermiddlewares.retry.RetryMiddleware": None,
        "spitag.retry.LaterRetryMiddleware": 550,
        "spitag.politeness.PolitenessMiddleware": 990,  # last, just before the download
    },
    "ITEM_PIPELINES": {"spitag.pipeline.StorePipeline": 300},
    "EXTENSIONS": {
        "spitag.workers.Workers": 100,
        "spitag.control.Control": 100,
        "spitag.recrawl.RecrawlPlanner": 100,
        "spitag.learning.StrategyFeed": 100,
        "spitag.progress.Progress": 500,
        # AUTOTHROTTLE_* settings are applied by the politeness gate, for every worker
        # together (spitag.throttle); Scrapy's extension would space each worker again
        "scrapy.extensions.throttle.AutoThrottle": None,
    },
}

DEFAULTS: dict[str, Any] = {
    "USER_AGENT": f"SpiTag/{__version__} (semantic focused crawler)",  # (+ SPITAG_CONTACT: spider.py)
    "ROBOTSTXT_OBEY": True,
    # polite on the real web, as Nutch and Heritrix are (they wait longer): one request
    # at a time to a site, a second apart, unless the user or robots.txt says otherwise
    "CONCURRENT_REQUESTS": 32,
    "CONCURRENT_REQUESTS_PER_DOMAIN": 1,
    "DOWNLOAD_DELAY": 1.0,
    "DOWNLOAD_TIMEOUT": 60,
    # hard limit (also on decompressed bodies: gzip bombs); bodies are cut well before
    # it, at SPITAG_MAX_PAGE_SIZE, and arrive truncated and flagged
    "DOWNLOAD_MAXSIZE": 64 * 1024 * 1024,
    "DOWNLOAD_WARNSIZE": 0,
    # a page yields one item and its outlink requests: 16 at once is plenty, and far
    # cheaper than Scrapy's 100 concurrent tasks per response
    "CONCURRENT_ITEMS": 16,
    "FEED_EXPORT_ENCODING": "utf-8",
    # on a Redis frontier, the list of seeds a running crawl takes (scrapy-redis'
    # setting; %(name)s the spider, %(crawl)s the crawl): each crawl its own
    "REDIS_START_URLS_KEY": "%(name)s:%(crawl)s:start_urls",
}

SPIDER = SETTINGS_PRIORITIES["spider"]
# SpiTag's defaults: above Scrapy's own ("default", 0), below a command's and the project's
DEFAULT = SETTINGS_PRIORITIES["default"] + 5

# XML that parses whatever keys the pages' markup has; CSV with JSON for nested data
EXPORTERS = {"xml": "spitag.exporters.XmlItemExporter", "csv": "spitag.exporters.CsvItemExporter"}


def merge_required(settings: BaseSettings) -> None:
    """Before the spider's own ``custom_settings``: they may still override these."""
    settings.setdict(REQUIRED, priority="spider")


def merge(settings: BaseSettings) -> None:
    """After the spider's own ``custom_settings``: SpiTag's components where they do not
    name them, and its defaults below the project's settings.

    The merged component lists are kept at the spider's priority, as its
    ``custom_settings`` are: ``scrapy crawl`` applies the project's settings to a
    crawler once more after it was built, and a lower priority would lose them."""
    for name, components in COMPONENTS.items():
        merged = settings.getdict(name)
        named = {load_object(key) if isinstance(key, str) else key for key in merged}
        for path, order in components.items():
            component = load_object(path)
            if order is None:  # a component of Scrapy's that SpiTag's replaces
                for key in [k for k in merged if (load_object(k) if isinstance(k, str) else k) is component]:
                    del merged[key]
                merged[component] = None
            elif component not in named:
                merged[component] = order
        settings.set(name, merged, max(settings.getpriority(name) or 0, SPIDER))
    exporters = settings.getdict("FEED_EXPORTERS")
    for fmt, path in EXPORTERS.items():
        exporters.setdefault(fmt, path)
    settings.set("FEED_EXPORTERS", exporters, max(settings.getpriority("FEED_EXPORTERS") or 0, SPIDER))
    for name, value in DEFAULTS.items():
        settings.set(name, value, priority=DEFAULT)


def as_crawled(settings: BaseSettings, spidercls: type) -> BaseSettings:
    """The settings a crawl of ``spidercls`` will have: SpiTag's parts merged by its
    ``update_settings``, then — as ``scrapy crawl`` does once it has built the crawler —
    the command's settings applied once more (a component list given with ``-s``
    replaces the merged one)."""
    crawled = settings.copy()
    spidercls.update_settings(crawled)
    crawled.update(settings)
    return crawled


def check_components(settings: BaseSettings) -> None:
    """SpiTag's components must all be there (a component list given with ``-s``
    replaces SpiTag's): BadInputError naming what is missing. One turned off on purpose
    (``None``) is the user's choice."""
    for name, components in COMPONENTS.items():
        given = {load_object(k) if isinstance(k, str) else k for k in settings.getwithbase(name)}
        missing = [path for path, order in components.items() if order is not None and load_object(path) not in given]
        if missing:
            raise BadInputError(
                f"{name} given on the command line replaces SpiTag's components: name {', '.join(missing)}"
                " there too, or give yours in a spider's custom_settings"
            )
