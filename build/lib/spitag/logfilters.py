"""Expected failures are logged as warnings, one line each, not as errors with tracebacks;
and which log levels a setting may name.

Scrapy logs a robots.txt that cannot be downloaded, and a request that failed after
its retries, at ERROR level (the former with a full traceback). On the web both are
ordinary, and SpiTag records them (URL rows with their reason, stats): a person need
not act on them. These filters turn such records into one-line warnings.
"""

from __future__ import annotations

import logging

DOWNGRADED = {
    "scrapy.downloadermiddlewares.robotstxt": "robots.txt unavailable, the host is crawled as allowed",
    "scrapy.downloadermiddlewares.retry": None,
}

LEVEL_NAMES = "CRITICAL, ERROR, WARNING, INFO, DEBUG"  # (what an error message offers)


def is_level(value: object) -> bool:
    """Whether Python's ``logging`` (so Scrapy's ``LOG_LEVEL``) takes ``value`` as a level:
    a level's name, spelt exactly (``DEBUG``, not ``debug``), or a level's number."""
    if isinstance(value, int) and not isinstance(value, bool):
        return True
    return isinstance(value, str) and isinstance(logging.getLevelName(value), int)


class ExpectedFailureFilter(logging.Filter):
    def __init__(self, note: str | None) -> None:
        super().__init__()
        self.note = note

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno >= logging.ERROR:
            message = record.getMessage()
            if record.exc_info and record.exc_info[1] is not None:
                exc = record.exc_info[1]
                message = f"{message} [{type(exc).__name__}: {exc}]"
            if self.note:
                message = f"{message} ({self.note})"
            record.msg, record.args = message, None
            record.levelno, record.levelname = logging.WARNING, "WARNING"
            record.exc_info = record.exc_text = None
        return True


def install() -> None:
    """Attach the filters once (idempotent)."""
    for name, note in DOWNGRADED.items():
        log = logging.getLogger(name)
        if not any(isinstance(f, ExpectedFailureFilter) for f in log.filters):
            log.addFilter(ExpectedFailureFilter(note))
