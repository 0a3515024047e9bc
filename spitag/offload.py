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

Workers are forked from multiprocessing's forkserver, which loads the crawl's main
module and ``spitag.profile_worker`` (the extractors) once: a worker is ready at once,
and the whole pool costs one import of the extractors, not one per worker (where
there is no forkserver, they are spawned). The crawler process itself is never forked:
a fork of a process running a reactor, a store thread and open sockets is not safe.
Workers ignore SIGINT: a Ctrl-C is the crawl's to handle (Scrapy finishes what is in
flight, and that still needs profiling); they exit by themselves within a second when
the crawl's process is killed. A page's costly syntaxes are cut off at
``SPITAG_EXTRACT_BUDGET`` seconds or at ``SPITAG_EXTRACT_MEMORY`` MB of the worker's
resident memory (``spitag.cutoff``), and a worker cut off for memory, or still above
it after its page, is replaced (``spitag/extract/workers_replaced``): the pages it
already holds come back unprofiled (``profile_worker.Swollen``) and go to the new one.
A worker that dies (killed, out of memory, a crash in C) loses nothing: the pool is
started again (``spitag/extract/pool_restarts``) and the pages it held are profiled in
the reactor thread (``spitag/extract/pool_failures``), within the same budget.
The pool's workers are looked at every second, also between pages: one that dies
halfway through sending a result would otherwise hold its page, and every later one,
for ever (``compat.break_pool_after_a_dead_worker``).
"""

from __future__ import annotations

import logging
import multiprocessing
import os
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import TYPE_CHECKING, Any

from scrapy.utils.defer import maybe_deferred_to_future
from twisted.internet.defer import Deferred

from spitag import aio, compat, profile_worker
from spitag.aio import running_reactor
from spitag.errors import BadInputError

if TYPE_CHECKING:
    from spitag.extract import Profile
    from spitag.profile_worker import ProfileJob

logger = logging.getLogger(__name__)

_open_pools = 0  # ProfilePools of this process using the forkserver (see ProfilePool.close)


MAX_PROCESSES = 256  # profile workers at most (each a Python process of its own)
WORKER_CHECK_SECONDS = 1.0  # how often the crawl looks for a dead worker
SWOLLEN_TRIES = 3  # pools a page is sent to while the workers it meets are too big


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
    if not 0 <= number <= MAX_PROCESSES:
        raise BadInputError(
            f"setting SPITAG_EXTRACT_PROCESSES={value!r} must be auto or a whole number from 0 to {MAX_PROCESSES}"
        )
    return number


def processes_option(name: str, raw: Any, _: Any = None) -> int:
    """The reader of ``SPITAG_EXTRACT_PROCESSES`` (spitag.options)."""
    return processes_setting(raw)


class ProfilePool:
    """``await pool.profile(job)``: the job's Profile, from a worker process if one
    answers, else computed here. Never raises for a page (``profile_html`` does not)."""

    def __init__(self, processes: int, crawler: Any = None) -> None:
        if processes < 1:
            raise ValueError("a ProfilePool needs at least one process")
        self.processes = processes
        self.crawler = crawler  # for its stats, once the crawl runs
        self._executor: ProcessPoolExecutor | None = None
        self._counted = False  # in _open_pools
        self._watch: list[Any] = []  # the LoopingCall of check_workers while started

    def start(self) -> None:
        """Start every worker now (and the forkserver, which imports the extractors:
        a third of a second), so that the first pages do not wait for them. (A
        ProcessPoolExecutor starts a process only when no idle one can take a job: one
        job per process, submitted before any has started, starts them all.)"""
        pool = self._pool()
        for _ in range(self.processes):
            pool.submit(profile_worker.warm_up)
        self._watch = [aio.every(WORKER_CHECK_SECONDS, self.check_workers)]
        # a second Ctrl-C stops the reactor at once, without spider_closed: the workers
        # must not keep the process alive after it
        running_reactor().addSystemEventTrigger("before", "shutdown", self.abandon)

    def check_workers(self) -> None:
        """Break and drop the pool if one of its workers has died: its pages are then
        profiled here, and the next ones by a new pool."""
        executor = self._executor
        if executor is not None and compat.break_pool_after_a_dead_worker(executor):
            logger.warning("a profile worker died: starting the pool afresh")
            self._restart(executor)

    def _restart(self, broken: ProcessPoolExecutor) -> None:
        """Drop the pool ``broken`` once (the next job starts a new one)."""
        if broken is self._executor:
            self._discard()
            if self.crawler is not None:
                self.crawler.stats.inc_value("spitag/extract/pool_restarts")

    def abandon(self) -> None:
        """Stop the workers without waiting for them (the crawl is being stopped)."""
        self._discard()
        self.close()

    def _pool(self) -> ProcessPoolExecutor:
        global _open_pools
        if self._executor is None:
            if not self._counted:
                self._counted = True
                _open_pools += 1
            self._executor = ProcessPoolExecutor(
                max_workers=self.processes, mp_context=_worker_context(),
                initializer=profile_worker.start,
            )
        return self._executor

    async def profile(self, job: ProfileJob) -> Profile:
        executor = None
        try:
            for _ in range(SWOLLEN_TRIES):
                executor = self._pool()
                future = executor.submit(profile_worker.run, job)
                try:
                    profile = await maybe_deferred_to_future(_deferred(future))
                    break
                except profile_worker.Swollen as swollen:  # its worker was left big by a page before
                    self._replace(executor, int(swollen.args[0]))
            else:
                raise profile_worker.Swollen("every new worker was too big already")
        except Exception as exc:  # the page is profiled here instead: never lost
            broken = isinstance(exc, (BrokenProcessPool, OSError))
            logger.warning(
                "profile worker failed (%s: %s): profiling %s in the crawler process",
                type(exc).__name__, exc, job.url,
            )
            if self.crawler is not None:
                self.crawler.stats.inc_value("spitag/extract/pool_failures")
            if broken and executor is not None:  # a worker died: start afresh
                self._restart(executor)
            return job.run()
        if job.max_memory and (profile.cut_by == "memory" or profile.rss > job.max_memory):
            self._replace(executor, profile.rss)
        return profile

    def _replace(self, swollen: ProcessPoolExecutor, rss: int) -> None:
        """A worker of ``swollen`` grew past ``SPITAG_EXTRACT_MEMORY`` on its page (and
        Python seldom gives such memory back): the next pages go to a new pool, and the
        old one's workers exit once the pages they already hold are done."""
        if swollen is not self._executor:
            return
        logger.info("a profile worker grew to %.0f MB on a page: replacing the pool", rss / 2**20)
        self._executor = None
        swollen.shutdown(wait=False, cancel_futures=False)
        if self.crawler is not None:
            self.crawler.stats.inc_value("spitag/extract/workers_replaced")

    def _discard(self) -> None:
        executor, self._executor = self._executor, None
        if executor is not None:
            executor.shutdown(wait=False, cancel_futures=True)

    def close(self) -> None:
        """Stop the workers (at the end of the crawl, when nothing waits on them), and
        the forkserver once no other pool of this process uses it: it exits now and is
        reaped by this process, whose CPU time then includes the workers'."""
        global _open_pools
        aio.stop(self._watch)
        self.check_workers()  # a pool waiting for a dead worker's result would never shut down
        executor, self._executor = self._executor, None
        if executor is not None:
            executor.shutdown(wait=True, cancel_futures=True)
        if self._counted:
            self._counted = False
            _open_pools -= 1
            if _open_pools == 0:
                compat.stop_forkserver()


def _worker_context() -> Any:
    """The forkserver (preloading the main module, as spawn would import it in every
    worker, and the extractors), else spawn."""
    if "forkserver" not in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("spawn")
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(["__main__", profile_worker.__name__])
    return context


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
