"""The private internals of Scrapy and mf2py that SpiTag reaches, all in one place.

Each shim names what it reaches and why no public API does; each has a test
(``tests/test_compat.py``) that fails loudly when a pinned library changes it.
"""

from __future__ import annotations

import copy
from typing import Any

from mf2py import backcompat as mf2_backcompat
from mf2py.mf2_classes import has_embedded_class as mf2_has_embedded_class


# -- Scrapy's engine -----------------------------------------------------------------
def wake_engine(engine: Any) -> None:
    """Ask the engine to take requests from the scheduler now. Scrapy wakes itself when
    a request is scheduled or leaves the downloader, else at its 5-second heartbeat; a
    frontier host that becomes ready (its delay over, a probe's page in) has no public
    way to say so (``ExecutionEngine._slot.nextcall``)."""
    slot = getattr(engine, "_slot", None)
    if slot is not None:
        slot.nextcall.schedule()


def downloads_active(engine: Any) -> list[Any]:
    """The requests in Scrapy's downloader now (``Downloader.active``): downloading, or
    waiting there for their slot."""
    return list(getattr(getattr(engine, "downloader", None), "active", ()))


def pages_in_spider(engine: Any) -> int | None:
    """Responses downloaded and not yet through the spider (``Scraper.slot.active``);
    None before the engine has a scraper slot."""
    slot = getattr(getattr(engine, "scraper", None), "slot", None)
    return None if slot is None else len(slot.active)


def no_downloader_delay(engine: Any) -> None:
    """Turn Scrapy's per-slot download delay off (``Downloader._delay`` and each slot's
    ``delay``): SpiTag's politeness gate spaces requests to a host for every worker, and
    the downloader's own randomized spacing would only shift them after it. The
    downloader keeps no public switch for this."""
    downloader = getattr(engine, "downloader", None)
    if downloader is None:
        return
    downloader._delay = 0.0
    for slot in getattr(downloader, "slots", {}).values():
        slot.delay = 0.0


# -- Scrapy's robots.txt middleware ---------------------------------------------------
def robots_parser_known(middleware: Any, netloc: str) -> bool:
    """Whether ``RobotsTxtMiddleware`` has (or is fetching) ``netloc``'s robots.txt
    (its ``_parsers``): a robots.txt kept in the frontier is handed to it only then."""
    return netloc in middleware._parsers


def set_robots_parser(middleware: Any, netloc: str, parser: Any) -> None:
    """Hand ``RobotsTxtMiddleware`` a parsed robots.txt for ``netloc`` (``_parsers``),
    as if it had fetched it itself."""
    middleware._parsers[netloc] = parser


# ``spitag.robots`` also overrides ``RobotsTxtMiddleware._parse_robots(response, netloc,
# request)``, the one place a fetched robots.txt passes through: tested with the rest.


# -- CPython's multiprocessing ----------------------------------------------------------
def stop_forkserver() -> None:
    """Stop this process' forkserver now (``multiprocessing.forkserver._forkserver``),
    so that it exits and is reaped by this process, whose CPU time then includes its
    workers'; multiprocessing stops it only at interpreter exit."""
    import multiprocessing.forkserver

    server = getattr(multiprocessing.forkserver, "_forkserver", None)
    stop = getattr(server, "_stop", None)
    if stop is not None:
        try:
            stop()
        except OSError:  # gone already
            pass


def break_pool_after_a_dead_worker(executor: Any) -> bool:
    """Whether a worker of ``executor`` (a ``ProcessPoolExecutor``) has died; if so,
    make sure the pool breaks. CPython notices a dead worker by itself, except when it
    died halfway through sending a result: the executor then waits for the rest of that
    message forever, its futures never finish and the process cannot exit. Stopping the
    pool's other workers and closing this process' end of the result pipe
    (``_processes``, ``_result_queue``) ends that read (EOFError), and the executor
    breaks as usual: its pending futures fail with BrokenProcessPool."""
    try:
        workers = tuple((getattr(executor, "_processes", None) or {}).values())
    except RuntimeError:  # changed size meanwhile: look again next time
        return False
    if all(worker.is_alive() for worker in workers):
        return False
    for worker in workers:
        if worker.is_alive():
            worker.terminate()
    results = getattr(executor, "_result_queue", None)
    if results is not None:
        results._writer.close()
    return True


# -- mf2py -----------------------------------------------------------------------------
def mf2py_classic_map() -> dict[str, Any]:
    """mf2py's classic (microformats 1) root classes and their rules (``_CLASSIC_MAP``):
    the extractor finds roots with them before it hands a page to mf2py."""
    return mf2_backcompat._CLASSIC_MAP


def original_mf2py_classes_rule() -> Any:
    """mf2py's own classic rule, before ``patch_mf2py`` (for tests that compare)."""
    return getattr(mf2_backcompat, "_spitag_original_rule", getattr(mf2_backcompat, "_make_classes_rule", None))


def patch_mf2py(roots_mark: str) -> None:
    """Make mf2py's classic-microformat rules copy lazily; same output, ~6x faster.

    mf2py 2.0's backcompat rule deep-copies every descendant of a classic root (hentry,
    vcard, ...) once per rule just in case an ``e-*`` property needs the original HTML,
    which makes a WordPress post (``<article class="hentry">``) cost up to 2 s. The
    replacement takes the same copy, at the same moment (before the class change), only
    when it is kept. Identical items on the corpus (tests/test_extract_corpus.py
    compares with the original rule). ``roots_mark``: the attribute ``spitag.extract``
    puts on the ``<body>`` of the document it hands mf2py, whose children are the
    outermost roots.
    """
    if getattr(mf2_backcompat, "_spitag_lazy_copy", False):
        return

    def make_classes_rule(old_classes: list[str], new_classes: list[str]) -> Any:
        def rule(child: Any, **kwargs: Any) -> None:
            child_classes = child.get("class", [])[:]
            if all(cl in child_classes for cl in old_classes):
                child_classes.extend([cl for cl in new_classes if cl not in child_classes])
                if mf2_has_embedded_class(child_classes) and child.original is None:
                    child.original = copy.copy(child)
                child["class"] = child_classes

        return rule

    mf2_backcompat._spitag_original_rule = mf2_backcompat._make_classes_rule
    mf2_backcompat._make_classes_rule = make_classes_rule

    # apply_rules deep-copies a classic root before rewriting its classes, so that the
    # document stays as it was for whatever reads it later. Nothing does for an
    # outermost root of microformat_document (a child of its marked <body>): mf2py
    # goes on with the root's next sibling, and extruct keeps only the items. There
    # the copy (the whole article of a WordPress post) is skipped.
    copy_module = mf2_backcompat.copy
    apply_rules = mf2_backcompat.apply_rules

    def apply_rules_outermost_in_place(el: Any, html_parser: Any, filtered_roots: Any) -> Any:
        parent = el.parent
        if parent is None or parent.name != "body" or not parent.has_attr(roots_mark):
            return apply_rules(el, html_parser, filtered_roots)
        mf2_backcompat.copy = _NoCopy  # the one copy apply_rules makes: of el itself
        try:
            return apply_rules(el, html_parser, filtered_roots)
        finally:
            mf2_backcompat.copy = copy_module

    mf2_backcompat.apply_rules = apply_rules_outermost_in_place
    mf2_backcompat._spitag_lazy_copy = True


class _NoCopy:
    """Stands for the ``copy`` module inside mf2py's apply_rules (see patch_mf2py)."""

    @staticmethod
    def copy(value: Any) -> Any:
        return value
