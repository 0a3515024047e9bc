"""SpiTag's settings: one table, read once per crawl.

Each ``SPITAG_*`` setting is declared here once — its name, its default, what it takes
and a line of help — and everything else comes from that declaration: the value a
crawl sees (``-s`` on the command line and a spider's ``custom_settings`` win over the
environment, which wins over the project's settings module, which wins over the
default), its validation before the crawl starts (``BadInputError`` naming the
setting), the refusal of a name that is not declared (a typo, or a setting that was
removed: "did you mean …"), and the settings reference in ``docs/settings.md``
(``python -m spitag.options > docs/settings.md``; a test keeps the two equal).

Components read their settings through ``Options.of(crawler)``, built once per crawl::

    options = Options.of(crawler)
    options.max_page_size        # SPITAG_MAX_PAGE_SIZE, parsed and checked
"""

from __future__ import annotations

import difflib
import json
import math
import os
import sys
import weakref
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from scrapy.settings import SETTINGS_PRIORITIES

from spitag.errors import BadInputError

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.settings import BaseSettings

PREFIX = "SPITAG_"
# Environment variables of the tests and benchmarks that share the prefix: not settings.
ENVIRONMENT_ONLY = frozenset({"SPITAG_CORPUS"})


# -- what a setting takes ------------------------------------------------------------
@dataclass(frozen=True)
class Kind:
    """How a raw value (a string from the environment or the command line, or a Python
    value from a settings module) becomes the value a component uses."""

    parse: Callable[[str, Any, BaseSettings | None], Any]  # (name, raw, settings) → value
    takes: str  # for the settings reference: what the setting accepts


def _number(kind: type, low: float | None = None, high: float | None = None, *, empty: Any = ...,
            above: float | None = None) -> Kind:
    """A finite number within bounds (``above``: strictly); ``empty`` (if given) is the
    value of an empty one."""
    word = "whole number" if kind is int else "number"

    def parse(name: str, raw: Any, settings: BaseSettings | None) -> Any:
        if empty is not ... and (raw is None or (isinstance(raw, str) and not raw.strip())):
            return empty(settings) if callable(empty) else empty
        value = number(name, raw, kind, low, high)
        if above is not None and value <= above:
            raise BadInputError(f"setting {name}={raw!r} must be more than {above:g}")
        return value

    bounds = []
    if above is not None:
        bounds.append(f"> {above:g}")
    if low is not None:
        bounds.append(f"≥ {low:g}")
    if high is not None:
        bounds.append(f"≤ {high:g}")
    return Kind(parse, f"{word}{' ' + ', '.join(bounds) if bounds else ''}"
                       + ("; empty: see default" if empty is not ... else ""))


def integer(low: float | None = None, high: float | None = None, *, empty: Any = ...) -> Kind:
    return _number(int, low, high, empty=empty)


def real(low: float | None = None, high: float | None = None, *, empty: Any = ..., above: float | None = None) -> Kind:
    return _number(float, low, high, empty=empty, above=above)


def number(name: str, raw: Any, kind: type, low: float | None = None, high: float | None = None) -> Any:
    """``raw`` as a finite ``kind`` within [low, high]; BadInputError naming ``name``."""
    word = "whole number" if kind is int else "number"
    if isinstance(raw, bool):
        raise BadInputError(f"setting {name}={raw!r} is not a {word}")
    try:
        value = kind(raw)
    except (TypeError, ValueError, OverflowError):
        raise BadInputError(f"setting {name}={raw!r} is not a {word}") from None
    if not math.isfinite(value):  # NaN, or inf: no wait, budget or size is infinite
        raise BadInputError(f"setting {name}={raw!r} is not a finite {word}")
    if low is not None and value < low:
        raise BadInputError(f"setting {name}={raw!r} must be at least {low:g}")
    if high is not None and value > high:
        raise BadInputError(f"setting {name}={raw!r} must be at most {high:g}")
    return value


_FLAG_WORDS = ("True", "true", "False", "false", "1", "0")


def is_flag(raw: Any) -> bool:
    return isinstance(raw, bool) or raw in (0, 1) or raw in _FLAG_WORDS


def flag_value(name: str, raw: Any) -> bool:
    """A boolean as Scrapy's ``getbool`` reads it, but only its own spellings: ``getbool``
    takes any whole number, so ``2`` or ``-1`` (a count typed into a flag) would be true."""
    if raw is None:
        return False
    if not is_flag(raw):
        raise BadInputError(f"setting {name}={raw!r} is not a boolean (True/False/1/0)")
    return raw in (True, 1, "True", "true", "1")


FLAG = Kind(lambda name, raw, _: flag_value(name, raw), "True / False (1 / 0)")


def choice(*values: str) -> Kind:
    def parse(name: str, raw: Any, _: Any) -> str:
        value = str(raw if raw is not None else "").strip().lower()
        if value not in values:
            raise BadInputError(f"setting {name}={raw!r} is not one of: {', '.join(values)}")
        return value

    return Kind(parse, ", ".join(f"`{v}`" for v in values))


def _text(name: str, raw: Any, _: Any) -> str:
    if not isinstance(raw, str) or not raw.strip():
        raise BadInputError(f"setting {name} must be a non-empty string, not {raw!r}")
    return raw.strip()


TEXT = Kind(_text, "text")
ANY_TEXT = Kind(lambda name, raw, _: "" if raw is None else str(raw).strip(), "text (may be empty)")


def _json_object(name: str, raw: Any, _: Any) -> dict[str, Any]:
    if isinstance(raw, Mapping):
        return dict(raw)
    try:
        value = json.loads(raw) if isinstance(raw, str) and raw.strip() else {}
    except ValueError:
        value = None
    if not isinstance(value, dict):
        raise BadInputError(f"setting {name}={raw!r} is not a JSON object")
    return value


def parsed_by(where: str, takes: str) -> Kind:
    """A value whose reading lives with the code that uses it (``where``: a dotted
    ``module:function(name, raw, settings)``), imported when the setting is read."""

    def parse(name: str, raw: Any, settings: BaseSettings | None) -> Any:
        module, _, function = where.partition(":")
        return getattr(__import__(module, fromlist=[function]), function)(name, raw, settings)

    return Kind(parse, takes)


# -- defaults that depend on Scrapy's settings ----------------------------------------
def _twice_concurrent_requests(settings: BaseSettings | None) -> int:
    raw = settings.get("CONCURRENT_REQUESTS", 16) if settings is not None else 16
    return 2 * max(number("CONCURRENT_REQUESTS", raw, int, 1), 1)


def _download_delay(settings: BaseSettings | None) -> float:
    return number("DOWNLOAD_DELAY", settings.get("DOWNLOAD_DELAY", 0) if settings is not None else 0, float, 0)


def _depth_limit(settings: BaseSettings | None) -> int | None:
    if settings is None or settings.get("DEPTH_LIMIT") in (None, ""):
        return None
    return number("DEPTH_LIMIT", settings.get("DEPTH_LIMIT"), int, 0) or None


def _progress_interval(name: str, raw: Any, _: Any) -> float:
    value = number(name, raw, float, 0)
    if 0 < value < MIN_PROGRESS_INTERVAL:  # a line every millisecond floods the log
        raise BadInputError(f"setting {name}={raw!r} must be 0 (no progress line) or at least {MIN_PROGRESS_INTERVAL}")
    return value


MIN_PROGRESS_INTERVAL = 0.5  # seconds: the live display's refresh; more often shows nothing new


# -- the table ----------------------------------------------------------------------
@dataclass(frozen=True)
class Setting:
    name: str
    default: Any  # as a user would write it; what an empty value means is the kind's
    kind: Kind
    help: str
    group: str


SETTINGS: tuple[Setting, ...] = ()
_GROUPS: list[str] = []


def _declare(group: str, *rows: tuple[str, Any, Kind, str]) -> None:
    global SETTINGS
    _GROUPS.append(group)
    SETTINGS += tuple(Setting(PREFIX + name, default, kind, text, group) for name, default, kind, text in rows)


_declare(
    "Store",
    ("STORE", "sqlite:///spitag.db", TEXT, "where pages go: `sqlite:///path.db` or `postgresql://user:pass@host/db`"),
    ("STORE_BODY", "plain", choice("plain", "zlib", "none"), "page bodies stored as UTF-8 text, compressed, or not at all"),
    ("STORE_BATCH", 200, integer(1), "items per store transaction (at most)"),
    ("STORE_FLUSH_SECONDS", 1.0, real(0.05), "longest wait before buffered items are written"),
    ("STORE_CLOSE_SECONDS", 60, real(0), "at shutdown, how long a failing store is retried"),
    ("KEEP_DATA", True, FLAG, "keep the extracted structured data (JSON-LD objects, microdata items, …) in items and store"),
)
_declare(
    "Frontier",
    ("FRONTIER", "sqlite:///spitag-frontier.db", TEXT,
     "the frontier: `sqlite:///path.db` (embedded) or `redis://host:port/db` (shared by workers); "
     "`REDIS_URL` is taken when this is not set"),
    ("LEASE_SECONDS", 60, real(1, 3600), "lease of a popped URL (renewed while its download runs)"),
    ("POP_BATCH", 16, integer(1), "URLs popped per frontier round trip"),
    ("MAX_UNSCORED", "", integer(0, empty=_twice_concurrent_requests),
     "at most this many pages between being requested and being scored (downloading, or waiting to be "
     "profiled); empty: twice `CONCURRENT_REQUESTS`; 0: no limit"),
    ("MAX_BACKLOG", 16, integer(0),
     "below that cap the limit adapts: this many pages may wait for the profile pool, plus twice the "
     "downloads that keep it fed; 0: the cap alone"),
    ("MACHINE", "", ANY_TEXT,
     "the machine whose CPUs this worker shares with the other workers of its crawl naming the same one "
     "(they split `SPITAG_MAX_BACKLOG`); empty: the kernel's boot id, or the host name in a container with a CPU quota"),
)
_declare(
    "Scope and limits",
    ("SCOPE", "domain", choice("domain", "host", "any"),
     "which links are followed: the seeds' registered domains, their host names, or any http(s) link"),
    ("ALLOWED_DOMAINS", "", parsed_by("spitag.filters:domains_setting", "domain names (list, comma-separated or @file)"),
     "only these domains (and their subdomains) are crawled"),
    ("FORBIDDEN_DOMAINS", "", parsed_by("spitag.filters:domains_setting", "domain names (list, comma-separated or @file)"),
     "these domains (and their subdomains) are never crawled"),
    ("REGEX_RULES", "", parsed_by("spitag.filters:regex_setting", "rules `+pattern` / `-pattern` (list or @file)"),
     "Nutch's regex URL filter: the first rule that matches accepts (+) or rejects (-) a URL"),
    ("PREFIX_RULES", "", parsed_by("spitag.filters:rules_setting", "prefixes (list, comma-separated or @file)"),
     "a URL must start with one of these"),
    ("SUFFIX_RULES", "", parsed_by("spitag.filters:rules_setting", "suffixes (list, comma-separated or @file)"),
     "a URL whose path ends with one of these is not followed"),
    ("SKIP_EXTENSIONS", "default", parsed_by("spitag.filters:extensions_setting", "`default`, `none` or extensions"),
     "links to paths with these extensions are not followed: `default` (Scrapy's `IGNORED_EXTENSIONS`), "
     "a list (`pdf, zip`, `@file`; may name `default`), or `none`"),
    ("MAX_DEPTH", "", integer(0, empty=_depth_limit), "deepest layer followed (seeds are 0); empty: `DEPTH_LIMIT`, or none"),
    ("MAX_PAGES_PER_HOST", "", integer(0, empty=None), "URLs of one host the crawl takes at most (its seed included, every worker and run together); empty: no limit"),
    ("PAGE_BUDGET", "", integer(0, empty=None), "pages a crawl may fetch in all its runs and by all its workers together (Nutch's -topN); empty: no limit"),
    ("MAX_PAGE_SIZE", 10485760, integer(1024), "bodies longer are profiled on their first bytes and flagged `truncated`"),
    ("MAX_LINKS_PER_PAGE", 1000, integer(1), "links taken from one page"),
    ("MAX_URL_LENGTH", 2048, integer(16), "longer URLs are not followed"),
    ("FOLLOW_NOFOLLOW", False, FLAG, "follow `rel=\"nofollow\"` links"),
    ("SESSION_PARAMS", None, parsed_by("spitag.urls:session_params_setting", "names, comma-separated"),
     "query parameters dropped as session ids; unset: jsessionid, phpsessid, sid, sessionid, …; empty: none"),
    ("TRAP_MAX_REPEATS", 3, integer(2), "the trap guard: a path with a segment repeated this many times is not followed"),
    ("TRAP_MAX_CHAIN", 30, integer(1), "the trap guard: a link of one URL shape more than this many layers below the first of that shape is not followed"),
    ("SITEMAPS", False, FLAG, "seed the crawl with the sitemaps robots.txt lists"),
    ("MAX_SITEMAP_URLS", 50000, integer(0), "URLs taken from one sitemap"),
)
_declare(
    "Politeness and failures",
    ("CONTACT", "", ANY_TEXT,
     "a URL (or e-mail address) where site owners learn about your crawl, put in SpiTag's user agent: "
     "`SpiTag/<version> (+<contact>; semantic focused crawler)`; a `USER_AGENT` of your own wins"),
    ("HOST_DELAY", "", real(0, empty=_download_delay),
     "seconds between two requests to a host, across all workers (robots.txt `Crawl-delay` overrides it); empty: `DOWNLOAD_DELAY`"),
    ("ROBOTS_TTL", 86400, real(0, 86400 * 365),
     "seconds a host's robots.txt is kept in the frontier for every worker and resumed run; 0: each process asks for its own"),
    ("MAX_RETRY_AFTER", 120, real(0, 86400),
     "a host answering 429 or 503 is left alone as long as its `Retry-After` says, at most this many seconds, "
     "by every worker (without one: a back-off that doubles); 0: no pause, as in plain Scrapy"),
    ("REFUSAL_RETRIES", 8, integer(0, 100),
     "a page refused with 429 or 503 is asked again, after the host's pause, up to this many times"),
    ("HOST_FAILURES", 5, integer(0, 1_000_000),
     "downloads of one host failed in a row (no answer, or 502/504/522/524), every worker's together, "
     "that set it aside as down; 0: never"),
    ("HOST_DOWN_SECONDS", 600, real(1, 86400 * 30),
     "how long a host down is left alone: its URLs stay queued and do not keep the crawl going"),
    ("RETRY_DELAY", 10, real(0, 86400),
     "a failed download is tried again this many seconds later, then twice that, up to `RETRY_TIMES` times "
     "in the whole crawl; 0: Scrapy's immediate retries"),
)
_declare(
    "Extraction",
    ("EXTRACT_PROCESSES", "auto", parsed_by("spitag.offload:processes_option", "`auto` or 0 … 256"),
     "worker processes that profile pages: `auto` (one per core; none on one core), a number, or 0 (in the crawler process)"),
    ("EXTRACT_BUDGET", 1.0, real(0),
     "seconds of extraction per page: past them, the costly syntax running (microdata, microformats, RDFa) is"
     " cut off and those not started are skipped; the page is stored with what was finished; 0: none"),
    ("EXTRACT_MEMORY", 1024, real(0),
     "MB of resident memory of a profile worker: past them, the costly syntax running is cut off, and a worker"
     " still above them after its page is replaced; 0: none"),
)
_declare(
    "Recrawl",
    ("RECRAWL", True, FLAG, "a rerun of a crawl revisits the URLs whose time has come, with conditional requests"),
    ("RECRAWL_INTERVAL", 604800, real(0), "seconds before a page fetched once is due again"),
    ("RECRAWL_MIN_INTERVAL", 3600, real(0), "the shortest revisit interval"),
    ("RECRAWL_MAX_INTERVAL", 31536000, real(0), "the longest revisit interval"),
    ("RECRAWL_INC_RATE", 0.4, real(0, 10), "an unchanged page's interval grows by this share"),
    ("RECRAWL_DEC_RATE", 0.2, real(0, 0.99), "a changed page's interval shrinks by this share"),
)
_declare(
    "Scoring",
    ("STRATEGY", "spitag", choice("spitag", "parent", "opic", "importance", "bfs"), "the order of the crawl"),
    ("SYNTAX_WEIGHTS", "{}", parsed_by("spitag.scoring:syntax_weights_setting", "JSON object: syntax → weight ≥ 0"),
     'weight of each syntax in a page\'s semantic score (every syntax 1 by default): `{"json-ld": 2, "microformat": 0}`'),
    ("EXPLORE_PAGES", 5, real(1, 1e9), "`spitag`: r of the Gittins index of an unseen site (pages a good site is expected to give)"),
    ("LINK_EVIDENCE", 1, real(0, 100), "`spitag`: weight of what the links found to an unseen host predict of its value (0: off)"),
    ("HOST_K", 0.25, real(0, 1e9), "`spitag`: k of the host rank (S + k · best) / (n + k), the pages a link's promise is worth"),
    ("RESCORE_SECONDS", 0.1, real(0, 3600),
     "`spitag`: hosts not fetched yet are ranked again by what the strategy expects of them now, at most this often; 0: never"),
    ("IMPORTANCE_FACTOR", 0.5, real(0, 1), "`importance`: FACTOR of the formula"),
    ("MAX_LINK_NUM", 100, integer(1), "`importance`: MAX_LINK_NUM of the formula"),
)
_declare(
    "Web service",
    ("SERVE", "127.0.0.1:8088", TEXT, "`scrapy serve`: host:port the API binds to (anything but loopback needs `SPITAG_SERVE_TOKEN`)"),
    ("SERVE_TOKEN", "", ANY_TEXT, "`scrapy serve`: the bearer token every API call must bring; empty: none (loopback only)"),
)
_declare(
    "Log and progress",
    ("LOG_LEVEL", "INFO", choice("critical", "error", "warning", "info", "debug"),
     "the log level, from the environment only (the log is set up before `-s` is read: there, use `-s LOG_LEVEL=…`)"),
    ("PROGRESS", "auto", choice("auto", "off", "on"), "the live progress display: `auto` (when stderr is a terminal), `on`, `off`"),
    ("PROGRESS_INTERVAL", 60, Kind(_progress_interval, "seconds: 0, or ≥ 0.5"), "seconds between two progress lines in the log; 0: none"),
)

BY_NAME: dict[str, Setting] = {s.name: s for s in SETTINGS}
# Settings a user may still have set, named in the refusal: old name → what to do instead.
_LEGACY = "the `spitag-legacy` strategy it tuned was removed; `spitag` does not need it"
REMOVED: dict[str, str] = {
    "SPITAG_HOST_WEIGHT": _LEGACY + " (`spitag` always learns hosts; for hosts ranked by their best link, "
                          "SPITAG_STRATEGY=parent)",
    "SPITAG_SCORE_HALF": _LEGACY,
    "SPITAG_LINK_CASH": _LEGACY,
    "SPITAG_HOST_PRIOR": _LEGACY,
    "SPITAG_HOMOPHILY": "removed: it did not lift the focus on the webs of bench/family.py",
    "SPITAG_HOST_NAMES": "removed: the host-name model did not lift the focus on the webs of bench/family.py",
    "SPITAG_HOST_PROBE": "removed: one URL per unseen host until its page is in did not lift the focus"
                         " on the webs of bench/family.py (hosts are always taken as their rank says)",
}


# -- reading ------------------------------------------------------------------------
_PROJECT = SETTINGS_PRIORITIES["project"]


def raw_value(settings: BaseSettings | None, name: str, environ: Mapping[str, str] | None = None) -> Any:
    """What the user gave for ``name``: ``-s`` or a spider's ``custom_settings`` first,
    then the environment, then the project's settings module, then the default."""
    environ = os.environ if environ is None else environ
    priority = settings.getpriority(name) if settings is not None else None
    if priority is not None and priority > _PROJECT:
        return settings.get(name)
    value = environ.get(name)
    if value not in (None, ""):
        return value
    if priority is not None:
        return settings.get(name)
    return BY_NAME[name].default


def read(settings: BaseSettings | None, name: str, environ: Mapping[str, str] | None = None) -> Any:
    """One setting, parsed and checked (BadInputError naming it)."""
    setting = BY_NAME[name]
    return setting.kind.parse(name, raw_value(settings, name, environ), settings)


class Options:
    """Every SpiTag setting of a crawl, parsed and checked once: ``options.store`` is
    ``SPITAG_STORE``'s value."""

    def __init__(self, settings: BaseSettings | None, environ: Mapping[str, str] | None = None) -> None:
        check_names(settings, environ)
        self._values = {s.name: read(settings, s.name, environ) for s in SETTINGS}
        self._values[PREFIX + "FRONTIER"] = _frontier_url(settings, environ, self._values[PREFIX + "FRONTIER"])
        if self.recrawl_min_interval > self.recrawl_max_interval:
            raise BadInputError(
                f"setting SPITAG_RECRAWL_MIN_INTERVAL={self.recrawl_min_interval:g} is above"
                f" SPITAG_RECRAWL_MAX_INTERVAL={self.recrawl_max_interval:g}"
            )

    def __getattr__(self, attribute: str) -> Any:
        try:
            return self.__dict__["_values"][PREFIX + attribute.upper()]
        except KeyError:
            raise AttributeError(attribute) from None

    def __getitem__(self, name: str) -> Any:
        return self._values[name]

    @property
    def refusal_retries(self) -> int:
        """How many times a page refused with 429 or 503 is asked again: none while
        pauses are off (``SPITAG_MAX_RETRY_AFTER`` = 0)."""
        return self.__getattr__("refusal_retries") if self.max_retry_after > 0 else 0

    _cache: weakref.WeakKeyDictionary[Crawler, Options] = weakref.WeakKeyDictionary()

    @classmethod
    def of(cls, crawler: Crawler) -> Options:
        """The crawl's options, built at the first call (its settings are frozen)."""
        options = cls._cache.get(crawler)
        if options is None:
            options = cls._cache[crawler] = cls(crawler.settings)
        return options


def _frontier_url(settings: BaseSettings | None, environ: Mapping[str, str] | None, value: str) -> str:
    """``SPITAG_FRONTIER``, or scrapy-redis' ``REDIS_URL`` when only that one is given."""
    environ = os.environ if environ is None else environ
    name = PREFIX + "FRONTIER"
    explicit = environ.get(name) or (settings is not None and settings.getpriority(name) is not None)
    if explicit:
        return value
    redis_url = (settings.get("REDIS_URL") if settings is not None else None) or environ.get("REDIS_URL")
    return _text("REDIS_URL", redis_url, None) if redis_url else value


def check_names(settings: BaseSettings | None, environ: Mapping[str, str] | None = None) -> None:
    """Refuse a ``SPITAG_*`` name that is not declared, in the settings (``-s``, a
    settings module, ``custom_settings``) or in the environment."""
    environ = os.environ if environ is None else environ
    given = [(n, "setting") for n in (settings or {}) if str(n).startswith(PREFIX)]
    given += [(n, "environment variable") for n in environ if n.startswith(PREFIX)]
    for name, where in given:
        if name in BY_NAME or (where == "environment variable" and name in ENVIRONMENT_ONLY):
            continue
        raise BadInputError(unknown_message(name, where))


def unknown_message(name: str, where: str = "setting") -> str:
    if name in REMOVED:
        return f"{where} {name} is no longer read: {REMOVED[name]}"
    close = difflib.get_close_matches(name, list(BY_NAME), n=1, cutoff=0.75)
    hint = f" (did you mean {close[0]}?)" if close else " (docs/settings.md lists them all)"
    return f"unknown {where} {name}{hint}"


def log_level_from_environment(environ: Mapping[str, str] | None = None) -> str:
    """``SPITAG_LOG_LEVEL`` for the project's settings module (the log is set up before
    any other setting is read), upper-cased as Python's ``logging`` takes it; a bad
    value is one error line and exit code 2, before anything else happens."""
    try:
        return read(None, PREFIX + "LOG_LEVEL", environ).upper()
    except BadInputError as exc:
        sys.stderr.write(f"spitag: error: {exc}\n")
        raise SystemExit(2) from None


# -- the reference --------------------------------------------------------------------
def reference() -> str:
    """The settings reference (``docs/settings.md``), from the table."""
    lines = [
        "# Settings",
        "",
        "Every SpiTag setting, generated from its declaration in `spitag/options.py`",
        "(`python -m spitag.options > docs/settings.md`). Set one with `-s NAME=VALUE` on the",
        "command line, in a spider's `custom_settings`, in the environment, or in your project's",
        "settings module, in that order of precedence. A `SPITAG_*` name that is not below is",
        "refused before the crawl starts.",
        "",
    ]
    for group in _GROUPS:
        lines += [f"## {group}", "", "| setting | default | takes | what it does |", "|---|---|---|---|"]
        for s in SETTINGS:
            if s.group == group:
                default = "empty" if s.default in ("", None) else f"`{s.default}`"
                lines.append(f"| `{s.name}` | {default} | {s.kind.takes} | {s.help} |")
        lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":
    print(reference(), end="")
