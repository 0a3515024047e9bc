"""Page profiles computed in worker processes, so that the reactor thread only
downloads, scores, stores and exports.

The profile (one lxml parse, then every syntax: ``spitag.extract``) is CPU-bound
Python and, on real pages, most of what a page costs (mf2py and pyRdfa above all). In
the reactor thread it holds a crawl to one core. ``ProfilePool`` hands each page's
``ProfileJob`` to a ``ProcessPoolExecutor`` and gives back its ``Profile``; the spider
awaits it, so downloads go on meanwhile. ``SPITAG_EXTRACT_PROCESSES``: ``auto`` (one
process per core: the reactor thread mostly waits, and the system shares the cores;
measured on 2 cores, 2 workers 89 pages/s of real pages, 1 worker 62, none 48) or a
number; ``0`` profiles in the reactor thread, as ``auto`` does on one core.

Workers are started with ``spawn`` (a fork of a process running a reactor, a store
thread and open sockets is not safe) and ignore SIGINT: a Ctrl-C is the crawl's to
handle (Scrapy finishes what is in flight, and that still needs profiling); they exit
by themselves within a second when the crawl's process is killed. A worker that dies (killed, out of memory, a crash in C) loses nothing: the pool is started
again and the page profiled in the reactor thread; ``spitag/extract/pool_failures``
counts it.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import signal
import threading
import time
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import TYPE_CHECKING, Any

from scrapy.utils.defer import maybe_deferred_to_future
from twisted.internet.defer import Deferred

from spitag.aio import running_reactor
from spitag.errors import BadInputError

if TYPE_CHECKING:
    from spitag.extract import Profile
    from spitag.record import ProfileJob

logger = logging.getLogger(__name__)

ORPHAN_CHECK_SECONDS = 1.0  # how often a worker checks that the crawl's process still runs


def processes_setting(value: Any, cores: int | None = None) -> int:
    """``SPITAG_EXTRACT_PROCESSES`` as a number of worker processes (0: none)."""
    text = str(value).strip().lower()
    if text == "auto":
        cores = cores if cores is not None else os.cpu_count() or 1
        return cores if cores > 1 else 0
    try:
        number = int(text)
    except ValueError:
        number = -1
    if number < 0:
        raise BadInputError(
            f"setting SPITAG_EXTRACT_PROCESSES={value!r} must be auto or a whole number ≥ 0"
        )
    return number


def _start_worker(crawler_pid: int) -> None:
    """In each worker: leave Ctrl-C to the crawl, and exit when the crawl's process is
    gone (after a kill -9 nothing else would tell a worker waiting for pages)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    threading.Thread(target=_watch_crawler, args=(crawler_pid,), daemon=True).start()


def _watch_crawler(crawler_pid: int) -> None:
    while os.getppid() == crawler_pid:
        time.sleep(ORPHAN_CHECK_SECONDS)
    os._exit(0)


def _warm_up() -> int:
    import spitag.record  # noqa: F401  (and with it extruct, mf2py, pyRdfa, rdflib)

    return os.getpid()


def _run(job: ProfileJob) -> Profile:
    return job.run()


class ProfilePool:
    """``await pool.profile(job)``: the job's Profile, from a worker process if one
    answers, else computed here. Never raises for a page (``profile_html`` does not)."""

    def __init__(self, processes: int, crawler: Any = None) -> None:
        if processes < 1:
            raise ValueError("a ProfilePool needs at least one process")
        self.processes = processes
        self.crawler = crawler  # for its stats, once the crawl runs
        self._executor: ProcessPoolExecutor | None = None

    def start(self) -> None:
        """Start every worker now, each importing the extractors (half a second), so
        that the first pages do not wait for them. (A ProcessPoolExecutor starts a
        process only when no idle one can take a job: one job per process, submitted
        before any has started, starts them all.)"""
        pool = self._pool()
        for _ in range(self.processes):
            pool.submit(_warm_up)

    def _pool(self) -> ProcessPoolExecutor:
        if self._executor is None:
            self._executor = ProcessPoolExecutor(
                max_workers=self.processes,
                mp_context=multiprocessing.get_context("spawn"),
                initializer=_start_worker,
                initargs=(os.getpid(),),
            )
        return self._executor

    async def profile(self, job: ProfileJob) -> Profile:
        executor = None
        try:
            executor = self._pool()
            future = executor.submit(_run, job)
            return await maybe_deferred_to_future(_deferred(future))
        except Exception as exc:  # the page is profiled here instead: never lost
            broken = isinstance(exc, (BrokenProcessPool, OSError))
            logger.warning(
                "profile worker failed (%s: %s): profiling %s in the crawler process",
                type(exc).__name__, exc, job.url,
            )
            if self.crawler is not None:
                self.crawler.stats.inc_value("spitag/extract/pool_failures")
            if broken and executor is self._executor:  # a worker died: start afresh
                self._discard()
            return job.run()

    def _discard(self) -> None:
        executor, self._executor = self._executor, None
        if executor is not None:
            executor.shutdown(wait=False, cancel_futures=True)

    def close(self) -> None:
        """Stop the workers (at the end of the crawl, when nothing waits on them)."""
        executor, self._executor = self._executor, None
        if executor is not None:
            executor.shutdown(wait=True, cancel_futures=True)


def _deferred(future: Future) -> Deferred:
    """A Deferred fired in the reactor thread when ``future`` (run elsewhere) is done."""
    deferred: Deferred = Deferred()
    reactor = running_reactor()

    def settle(done: Future) -> None:
        exc = BrokenProcessPool("cancelled") if done.cancelled() else done.exception()
        if exc is not None:
            reactor.callFromThread(deferred.errback, exc)
        else:
            reactor.callFromThread(deferred.callback, done.result())

    future.add_done_callback(settle)
    return deferred
