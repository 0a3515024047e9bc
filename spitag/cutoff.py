"""Cut a costly extraction step off at a deadline or past a memory bound.

The costly extractors (microdata, mf2py, pyRdfa) are pure Python loops over a page's
tree; one pathological page (5 MB of RDFa nodes) can run for minutes and take a
gigabyte. Checking the time between steps does not stop a step that is already
running, so ``limits`` arms a repeating interval timer (``SIGALRM``) around the step:
every ``TICK`` seconds it looks at the clock and at this process' resident memory,
and once either is past its bound raises ``Cut`` inside the step, at the next Python
bytecode. ``Cut`` is a ``BaseException``, so the extractors' own ``except Exception``
cannot swallow it; the timer goes on firing until the step has let go.

Signals reach only the main thread, so a step run in another thread is not watched
(``limits`` then does nothing); a profile worker process and the crawler's reactor
thread are both main threads. Code in C that never returns to Python (one huge
regular expression) is not interrupted: the bound is only as fine as the bytecode.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from contextlib import contextmanager
from typing import Iterator

TICK = 0.02  # seconds between two looks at the clock and the memory
_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


class Cut(BaseException):
    """A step ran past its deadline (``reason`` "time") or its memory bound ("memory")."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def resident_bytes() -> int:
    """This process' resident memory now (0 where /proc is not there)."""
    try:
        with open("/proc/self/statm", "rb") as statm:
            return int(statm.read().split()[1]) * _PAGE
    except (OSError, ValueError, IndexError):
        return 0


def can_watch() -> bool:
    return hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()


@contextmanager
def limits(deadline: float | None, max_bytes: int | None) -> Iterator[None]:
    """Run the ``with`` body until ``deadline`` (``time.perf_counter()``) or while this
    process' resident memory stays under ``max_bytes``; past either, ``Cut`` is raised
    in it. None for both, or a thread that is not the main one: nothing is watched."""
    if (deadline is None and not max_bytes) or not can_watch():
        yield
        return
    armed = True

    def look(signum: int, frame: object) -> None:
        if not armed:
            return
        if deadline is not None and time.perf_counter() > deadline:
            raise Cut("time")
        if max_bytes and resident_bytes() > max_bytes:
            raise Cut("memory")

    previous = signal.signal(signal.SIGALRM, look)
    first = TICK if deadline is None else min(max(deadline - time.perf_counter(), 1e-4), TICK)
    signal.setitimer(signal.ITIMER_REAL, first, TICK)
    try:
        yield
    finally:
        armed = False
        signal.setitimer(signal.ITIMER_REAL, 0, 0)
        signal.signal(signal.SIGALRM, previous)
