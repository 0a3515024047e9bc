"""Twisted glue shared by the scheduler, the politeness gate and the store pipeline."""

from __future__ import annotations

from typing import Any


def running_reactor() -> Any:
    """The running reactor, imported late: importing it at module level would install
    Twisted's default reactor before Scrapy installs the asyncio one."""
    from twisted.internet import reactor

    return reactor
