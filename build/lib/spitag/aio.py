"""Twisted glue shared by the crawl's components: the reactor, and work done every few
seconds."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

logger = logging.getLogger(__name__)


def running_reactor() -> Any:
    """The running reactor, imported late: importing it at module level would install
    Twisted's default reactor before Scrapy installs the asyncio one."""
    from twisted.internet import reactor

    return reactor


def every(seconds: float, work: Callable[[], Any]) -> Any:
    """Call ``work`` every ``seconds`` (the first time after ``seconds``) until the
    returned ``LoopingCall`` is stopped. An exception is logged, and the loop goes on: a
    failing call must not end the work for the rest of the crawl."""
    from twisted.internet import task

    def guarded() -> None:
        try:
            work()
        except Exception:
            logger.exception("%s failed", getattr(work, "__qualname__", work))

    loop = task.LoopingCall(guarded)
    loop.clock = running_reactor()
    loop.start(seconds, now=False)
    return loop


def stop(loops: list[Any]) -> None:
    """Stop the running ``LoopingCall``s of ``loops`` and forget them."""
    for loop in loops:
        if loop.running:
            loop.stop()
    loops.clear()
