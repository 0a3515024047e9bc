"""What runs in a profile worker process (spitag/offload.py): the ProfileJob and the
process' start-up.

Kept apart from the crawler's modules: it imports the extractors and nothing of Scrapy
or Twisted. The forkserver that every worker is forked from loads this, and the crawl's
main script (which spawn would run again in every worker), once per crawl: a pool of
two starts in 0.6 s of CPU, four in 0.9 (spawned workers that each imported everything
took 0.9 and 1.8).
"""

from __future__ import annotations

import multiprocessing.forkserver
import os
import signal
import threading
import time
from dataclasses import dataclass

from spitag.cutoff import resident_bytes
from spitag.digest import md5dia_hex
from spitag.extract import Profile, profile_html
from spitag.urls import cached_normalizer

PARENT_CHECK_SECONDS = 1.0  # how often a worker checks that its parent still runs
_in_worker = False  # set by start(): this process is a profile worker


@dataclass(frozen=True)
class ProfileJob:
    """Everything profiling one page needs, and nothing else: small to send to a
    worker process (the body, cut by ``profile_html``), and ``run`` there."""

    body: bytes
    url: str
    encoding: str
    keep_data: bool
    max_bytes: int
    budget: float | None
    # Set: the links, refresh and canonical come back normalized with these session
    # parameters dropped (unusable ones left out), and the text's md5dia computed, so
    # that a worker process does that work too (``Profile.normalized``).
    drop_params: frozenset[str] | None = None
    # A profile worker's resident memory (bytes) past which a costly syntax is cut off
    # (``spitag.cutoff``); not applied in the crawler process, whose memory is the crawl's.
    max_memory: int | None = None

    def run(self) -> Profile:
        profile = profile_html(
            self.body, self.url, encoding=self.encoding, keep_data=self.keep_data,
            max_bytes=self.max_bytes, budget=self.budget, max_memory=self.max_memory if _in_worker else None,
        )
        if self.drop_params is not None:
            normalize = cached_normalizer(self.drop_params)
            links = ((normalize(href), rel) for href, rel in profile.links)
            profile.links = [(url, rel) for url, rel in links if url is not None]
            profile.refresh = normalize(profile.refresh) if profile.refresh else None
            profile.canonical = normalize(profile.canonical) if profile.canonical else None
            profile.md5dia = md5dia_hex(profile.text)
            profile.normalized = True
        return profile


def start() -> None:
    """In each worker: leave Ctrl-C to the crawl (Scrapy finishes what is in flight,
    and that still needs profiling), and exit when the process that started this one
    is gone. After a kill -9 of the crawl nothing else would tell a worker waiting for
    pages: its forkserver exits when the crawl does, and the worker is then adopted."""
    global _in_worker
    _in_worker = True
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # A forked worker inherits the crawl's end of the pipe whose closing tells the
    # forkserver that the crawl is gone: kept open here, it would keep the forkserver,
    # and so this worker, running after a kill -9 of the crawl. This one starts no
    # process: close it.
    server = getattr(multiprocessing.forkserver, "_forkserver", None)
    alive = getattr(server, "_forkserver_alive_fd", None)
    if alive is not None:
        os.close(alive)
        server._forkserver_alive_fd = None
    threading.Thread(target=_watch_parent, args=(os.getppid(),), daemon=True).start()


def _watch_parent(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(PARENT_CHECK_SECONDS)
    os._exit(0)


def warm_up() -> int:
    """Nothing: the extractors are imported already. Submitted once per worker when
    the pool starts, so that every worker is running before the first page comes."""
    return os.getpid()


class Swollen(Exception):
    """This worker holds more than the job's memory bound before it starts: a page cut
    off for memory left it so, and the pool that replaces it must take the job."""


def run(job: ProfileJob) -> Profile:
    if job.max_memory and resident_bytes() > job.max_memory:
        raise Swollen(resident_bytes())
    return job.run()
