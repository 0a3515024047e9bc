"""Scrapy settings of the SpiTag project: the embedded defaults.

Every ``SPITAG_*`` setting below may also be set by an environment variable of the same
name; ``-s NAME=VALUE`` on the command line wins over both. The README lists them all.
"""

from __future__ import annotations

import os
import sys

from spitag import logfilters  # (a module: Scrapy would take an upper-case name for a setting)


def _env(name: str, default: str) -> str:
    value = os.environ.get(name)
    return value if value not in (None, "") else default


def _log_level(value: str) -> str:
    """``SPITAG_LOG_LEVEL``, checked here for every command (not only ``crawl``, whose
    checks see ``LOG_LEVEL`` too): Scrapy would stop with a traceback setting up its log."""
    level = value.strip().upper()
    if not logfilters.is_level(level):
        sys.stderr.write(f"spitag: error: SPITAG_LOG_LEVEL={value!r} is not one of {logfilters.LEVEL_NAMES}\n")
        raise SystemExit(2)
    return level


BOT_NAME = "spitag"
SPIDER_MODULES = ["spiders"]
NEWSPIDER_MODULE = "spiders"
COMMANDS_MODULE = "spitag.commands"

USER_AGENT = "SpiTag/0.1 (semantic focused crawler)"
ROBOTSTXT_OBEY = True
ROBOTSTXT_PARSER = "scrapy.robotstxt.ProtegoRobotParser"

# Politeness: a few requests per site at once, no more.
CONCURRENT_REQUESTS = 32
CONCURRENT_REQUESTS_PER_DOMAIN = 4
DOWNLOAD_DELAY = 0
DOWNLOAD_TIMEOUT = 60
# Hard limit (also on decompressed bodies: gzip bombs). Bodies are cut well before it,
# at SPITAG_MAX_PAGE_SIZE, and arrive truncated and flagged.
DOWNLOAD_MAXSIZE = 64 * 1024 * 1024
DOWNLOAD_WARNSIZE = 0
RETRY_TIMES = 2
# A page yields one item and its outlink requests: 16 at once is plenty, and far
# cheaper than Scrapy's 100 concurrent tasks per response.
CONCURRENT_ITEMS = 16

# SpiTag's spider records redirects, meta refreshes and HTTP errors itself (one row per
# URL): it turns Scrapy's redirects and HTTP error filter off for itself (its
# custom_settings); other spiders, and scrapy fetch / shell / view, keep them.
SPIDER_MIDDLEWARES = {
    # Depth is the frontier spider's own (breadth-first layers; a redirect keeps its
    # layer): Scrapy's DepthMiddleware, for every other spider
    "scrapy.spidermiddlewares.depth.DepthMiddleware": None,
    "spitag.depth.DepthMiddleware": 900,
    # every page fetched ends, stored or settled, whatever its callback does
    "spitag.outcomes.PageOutcomeMiddleware": 950,
}
# Log messages name an item by its URL instead of printing it whole (body included).
LOG_FORMATTER = "spitag.logformatter.SpitagLogFormatter"

# The frontier's politeness gate runs last, just before the download.
DOWNLOADER_MIDDLEWARES = {
    # Scrapy's robots.txt middleware, with each robots.txt kept in the frontier
    "scrapy.downloadermiddlewares.robotstxt.RobotsTxtMiddleware": None,
    "spitag.robots.SharedRobotsTxtMiddleware": 100,
    "spitag.auth.SeedAuthMiddleware": 310,  # credentials of seed URLs, never shown
    # Scrapy's RetryMiddleware, with a failed frontier URL tried again later
    "scrapy.downloadermiddlewares.retry.RetryMiddleware": None,
    "spitag.retry.LaterRetryMiddleware": 550,
    "spitag.politeness.PolitenessMiddleware": 990,
}

ITEM_PIPELINES = {"pipelines.store.StorePipeline": 300}
# Live progress: a log line every SPITAG_PROGRESS_INTERVAL seconds (0: none) and, on a
# terminal, a live display: SPITAG_PROGRESS = auto (when stderr is a TTY) | on | off.
EXTENSIONS = {
    "spitag.progress.Progress": 500,
    # AUTOTHROTTLE_* settings are applied by the politeness gate, for every worker
    # together (spitag.throttle); Scrapy's extension would space each worker again
    "scrapy.extensions.throttle.AutoThrottle": None,
}
SPITAG_PROGRESS = _env("SPITAG_PROGRESS", "auto")
SPITAG_PROGRESS_INTERVAL = _env("SPITAG_PROGRESS_INTERVAL", "60")
FEED_EXPORT_ENCODING = "utf-8"
# On a Redis frontier, the list of seeds a running crawl takes (scrapy-redis' setting;
# %(name)s the spider, %(crawl)s the crawl): each crawl its own.
REDIS_START_URLS_KEY = "%(name)s:%(crawl)s:start_urls"
# XML that parses whatever keys the pages' markup has; CSV with JSON for nested data.
FEED_EXPORTERS = {"xml": "spitag.exporters.XmlItemExporter", "csv": "spitag.exporters.CsvItemExporter"}

TELNETCONSOLE_ENABLED = False
REMOTE_CONTROL_ENABLED = False  # no listening port unless asked for
LOG_LEVEL = _log_level(_env("SPITAG_LOG_LEVEL", "INFO"))

# --- SpiTag ------------------------------------------------------------------------
# Where pages go: sqlite:///path.db (embedded) or postgresql://user:pass@host:port/db.
SPITAG_STORE = _env("SPITAG_STORE", "sqlite:///spitag.db")
# How page bodies are stored: plain (UTF-8 text), zlib (compressed) or none.
SPITAG_STORE_BODY = _env("SPITAG_STORE_BODY", "plain")
SPITAG_STORE_BATCH = _env("SPITAG_STORE_BATCH", "200")
SPITAG_STORE_FLUSH_SECONDS = _env("SPITAG_STORE_FLUSH_SECONDS", "1.0")
# At shutdown, how long a failing store (server down, disk full) is retried.
SPITAG_STORE_CLOSE_SECONDS = _env("SPITAG_STORE_CLOSE_SECONDS", "60")
# domain (registered domains of the seeds) | host (the seeds' hosts) | any
SPITAG_SCOPE = _env("SPITAG_SCOPE", "domain")
# Keep the extracted structured data (JSON-LD objects, microdata items...) in items and store.
SPITAG_KEEP_DATA = _env("SPITAG_KEEP_DATA", "True")
# Safety limits, on by default.
SPITAG_MAX_PAGE_SIZE = _env("SPITAG_MAX_PAGE_SIZE", "10485760")
SPITAG_MAX_LINKS_PER_PAGE = _env("SPITAG_MAX_LINKS_PER_PAGE", "1000")
SPITAG_MAX_URL_LENGTH = _env("SPITAG_MAX_URL_LENGTH", "2048")
# Seconds of extraction per page after which its costly syntaxes not started yet
# (microformats, RDFa) are skipped and counted (spitag/extract/skipped/<syntax>); 0: none.
SPITAG_EXTRACT_BUDGET = _env("SPITAG_EXTRACT_BUDGET", "1.0")
# Worker processes that profile pages (spitag/offload.py), so that a crawl uses every
# core: auto (one per core; none on one core) | a number | 0 (in the crawler process).
SPITAG_EXTRACT_PROCESSES = _env("SPITAG_EXTRACT_PROCESSES", "auto")
# Steering (all off until set; lists, comma-separated strings or @file, see spitag/filters.py).
SPITAG_ALLOWED_DOMAINS = _env("SPITAG_ALLOWED_DOMAINS", "")
SPITAG_FORBIDDEN_DOMAINS = _env("SPITAG_FORBIDDEN_DOMAINS", "")
SPITAG_REGEX_RULES = _env("SPITAG_REGEX_RULES", "")
SPITAG_PREFIX_RULES = _env("SPITAG_PREFIX_RULES", "")
SPITAG_SUFFIX_RULES = _env("SPITAG_SUFFIX_RULES", "")
# Links whose path ends with one of these extensions are not followed: files with no
# HTML (so no semantic markup). "default": Scrapy's IGNORED_EXTENSIONS (images, audio,
# video, office documents, PDFs, archives, js, css…); a list (`pdf, zip`, or @file) may
# name "default" among its own; "none": every extension is followed.
SPITAG_SKIP_EXTENSIONS = _env("SPITAG_SKIP_EXTENSIONS", "default")
SPITAG_MAX_DEPTH = _env("SPITAG_MAX_DEPTH", "")
SPITAG_MAX_PAGES_PER_HOST = _env("SPITAG_MAX_PAGES_PER_HOST", "")
# Seconds a host's robots.txt is kept in the frontier for every worker and resumed run
# (RFC 9309: at most a day); 0: each process fetches its own, as in plain Scrapy.
SPITAG_ROBOTS_TTL = _env("SPITAG_ROBOTS_TTL", "86400")
# A host answering 429 or 503 with Retry-After is left alone that long (at most this
# many seconds), by every worker; a 429 or 503 without it backs the host off (1 s, 2 s,
# 4 s, … within the same cap); 0: no pause, as in plain Scrapy.
SPITAG_MAX_RETRY_AFTER = _env("SPITAG_MAX_RETRY_AFTER", "120")
# A page refused with 429 or 503 is asked again, after the host's pause, up to this many
# times (RETRY_TIMES, if more) before it is stored with that status: a host that limits
# its rate costs time, not pages. Needs SPITAG_MAX_RETRY_AFTER > 0.
SPITAG_REFUSAL_RETRIES = _env("SPITAG_REFUSAL_RETRIES", "8")
# A host that fails this many downloads in a row (no answer: timeouts, refused or lost
# connections, DNS failures; or a gateway's 502, 504, 522, 524), every worker's together,
# is set aside as down for SPITAG_HOST_DOWN_SECONDS: its URLs wait in the frontier, are
# not fetched meanwhile, and do not keep the crawl going; a later run tries them
# again. Once its time is up, a host set aside that has not answered since is set
# aside again at its first failure. 0: never (every URL of a dead host costs its
# retries and timeouts).
SPITAG_HOST_FAILURES = _env("SPITAG_HOST_FAILURES", "5")
SPITAG_HOST_DOWN_SECONDS = _env("SPITAG_HOST_DOWN_SECONDS", "600")
# A download that gets no usable answer (no answer at all, or one of RETRY_HTTP_CODES
# but 429 and 503, which politeness pauses for) is tried again this many seconds later,
# then twice as long, up to RETRY_TIMES times, not at once: its URL waits in the
# frontier, counted there with its failures (every worker's, every run's), and keeps the
# crawl going meanwhile (unless its host is down). 0: Scrapy's immediate retries.
SPITAG_RETRY_DELAY = _env("SPITAG_RETRY_DELAY", "10")
# Seed the crawl with the sitemaps listed in robots.txt (needs ROBOTSTXT_OBEY).
SPITAG_SITEMAPS = _env("SPITAG_SITEMAPS", "False")
SPITAG_MAX_SITEMAP_URLS = _env("SPITAG_MAX_SITEMAP_URLS", "50000")
# Pages a crawl may fetch in all its runs together (Nutch's -topN); empty: no limit.
SPITAG_PAGE_BUDGET = _env("SPITAG_PAGE_BUDGET", "")
# Recrawl (spitag.recrawl): running a crawl again re-fetches, with conditional requests,
# the URLs whose time has come: the server's Cache-Control/Expires, else an interval
# that adapts to how often the page changes (Nutch's adaptive schedule), in seconds.
SPITAG_RECRAWL = _env("SPITAG_RECRAWL", "True")
SPITAG_RECRAWL_INTERVAL = _env("SPITAG_RECRAWL_INTERVAL", "604800")  # 7 days, first fetch
SPITAG_RECRAWL_MIN_INTERVAL = _env("SPITAG_RECRAWL_MIN_INTERVAL", "3600")
SPITAG_RECRAWL_MAX_INTERVAL = _env("SPITAG_RECRAWL_MAX_INTERVAL", "31536000")  # 365 days
SPITAG_RECRAWL_INC_RATE = _env("SPITAG_RECRAWL_INC_RATE", "0.4")  # unchanged: × 1.4
SPITAG_RECRAWL_DEC_RATE = _env("SPITAG_RECRAWL_DEC_RATE", "0.2")  # changed: × 0.8
SPITAG_FOLLOW_NOFOLLOW = _env("SPITAG_FOLLOW_NOFOLLOW", "False")
# comma-separated; unset: spitag.urls.SESSION_PARAMS
SPITAG_SESSION_PARAMS = os.environ.get("SPITAG_SESSION_PARAMS")
SPITAG_TRAP_MAX_REPEATS = _env("SPITAG_TRAP_MAX_REPEATS", "3")
SPITAG_TRAP_MAX_CHAIN = _env("SPITAG_TRAP_MAX_CHAIN", "30")
# Scoring: spitag | opic | importance | bfs, and their knobs.
SPITAG_STRATEGY = _env("SPITAG_STRATEGY", "spitag")
SPITAG_SYNTAX_WEIGHTS = _env("SPITAG_SYNTAX_WEIGHTS", "{}")  # JSON: {"json-ld": 2.0, …}
SPITAG_SCORE_HALF = _env("SPITAG_SCORE_HALF", "60")
SPITAG_LINK_CASH = _env("SPITAG_LINK_CASH", "0.1")
# spitag: r of the Gittins index of an unseen site — the pages a site found good is
# expected to be fetched for (more: more exploring of unseen sites; at least 1).
SPITAG_EXPLORE_PAGES = _env("SPITAG_EXPLORE_PAGES", "5")
# spitag: β, how much a rich parent vouches for the other sites it links to (0 … 1):
# an unseen site's link gets g + β·(s − g), g = the Gittins index, s = the parent's score.
SPITAG_HOMOPHILY = _env("SPITAG_HOMOPHILY", "0")
# spitag: weight of what an unseen host's name predicts (spitag.hostnames, learnt during
# the crawl): its explore value is g · e^(weight · d), d the predicted log-ratio of its
# value to an average site's. 0 turns the host-name model off.
SPITAG_HOST_NAMES = _env("SPITAG_HOST_NAMES", "2")
# spitag: weight v of what the links found to an unseen host predict (spitag.linkevidence,
# learnt during the crawl: the mean score of the pages linking to it, how many hosts link to
# it): its explore value is g · e^(w·d + v·e). 0 turns the link-evidence model off.
SPITAG_LINK_EVIDENCE = _env("SPITAG_LINK_EVIDENCE", "1")
# spitag-legacy only: SPITAG_SCORE_HALF (the score worth σ = ½) and SPITAG_LINK_CASH above.
SPITAG_IMPORTANCE_FACTOR = _env("SPITAG_IMPORTANCE_FACTOR", "0.5")
SPITAG_MAX_LINK_NUM = _env("SPITAG_MAX_LINK_NUM", "100")

# --- Frontier ------------------------------------------------------------------------
SCHEDULER = "spitag.scheduler.FrontierScheduler"
# sqlite:///path.db (embedded, the default) or redis://host:port/db (shared by workers).
# REDIS_URL (the scrapy-redis convention) is taken when SPITAG_FRONTIER is not set.
SPITAG_FRONTIER = _env("SPITAG_FRONTIER", _env("REDIS_URL", "sqlite:///spitag-frontier.db"))
SPITAG_LEASE_SECONDS = _env("SPITAG_LEASE_SECONDS", "60")
SPITAG_POP_BATCH = _env("SPITAG_POP_BATCH", "16")
# At most this many pages between being requested and being scored: downloading, or
# downloaded and waiting to be profiled (Scrapy's CONCURRENT_REQUESTS counts only the
# downloads). Empty: twice CONCURRENT_REQUESTS; 0: no limit (then only
# SCRAPER_SLOT_MAX_ACTIVE_SIZE: Scrapy alone lets 5 MB of pages wait, ~35 real pages).
SPITAG_MAX_UNSCORED = _env("SPITAG_MAX_UNSCORED", "")
# Within that cap, the limit adapts (spitag.pace): this many pages may wait for the
# profile pool, plus twice the downloads that keep it fed (answers per second × seconds
# a download takes). When pages come faster than they are profiled (a local web, a
# busy machine), the next pages are then chosen with the scores of all but the last
# twenty; when the network is the slow part, the downloads grow to the cap. 0: the cap
# alone, fixed.
SPITAG_MAX_BACKLOG = _env("SPITAG_MAX_BACKLOG", "16")
# The machine whose CPUs (and so whose backlog) this worker shares with the other
# workers of the crawl naming the same one (spitag.machine). Unset: the kernel's boot
# id (every container of one kernel), or the host name for a process with a CPU quota.
SPITAG_MACHINE = _env("SPITAG_MACHINE", "")
# spitag: k of the host rank (S + k·best) / (n + k) — how many pages the best waiting
# link's promise is worth against the n pages of the host fetched (score sum S). ≥ 0.
SPITAG_HOST_K = _env("SPITAG_HOST_K", "0.25")
# spitag: before a pop, the hosts not fetched yet are ranked again by what the strategy
# expects of them now (Frontier.rescore), at most once in this many seconds and only
# after its estimates moved; 0: never (a host then ranks by its links' values as found).
SPITAG_RESCORE_SECONDS = _env("SPITAG_RESCORE_SECONDS", "0.1")
# spitag, spitag-legacy: a host with no page done or learnt yet gives one URL, and no
# other until that page is learnt or leaves its lease (stored, failed, handed back or
# expired): the crawl does not spend several downloads on a site before its first page
# has shown what the site is worth. False: up to CONCURRENT_REQUESTS_PER_DOMAIN at once.
SPITAG_HOST_PROBE = _env("SPITAG_HOST_PROBE", "True")
# spitag-legacy: weight of what the crawl learnt of a host (its pages' mean semantic
# score) against its best waiting priority, in the pop order (0 … 1). 0 turns host
# learning off for both spitag strategies (hosts then rank by their best priority).
SPITAG_HOST_WEIGHT = _env("SPITAG_HOST_WEIGHT", "0.7")
# spitag-legacy: the semantic score a host not fetched yet is assumed to have (0: none,
# unknown hosts rank by their parents' promise alone).
SPITAG_HOST_PRIOR = _env("SPITAG_HOST_PRIOR", "0")
# Seconds between two requests to one host, across all workers (robots.txt Crawl-delay
# overrides it per host). Unset: DOWNLOAD_DELAY.
SPITAG_HOST_DELAY = _env("SPITAG_HOST_DELAY", "")
