"""Expected failures are logged as warnings, one line each, not as errors with tracebacks.

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
