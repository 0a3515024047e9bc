"""The project's Scrapy settings as a crawl sees them, for tests that build strategies,
policies or filters without running a crawl."""

from __future__ import annotations

from typing import Any

from scrapy.settings import Settings


def project_settings(**overrides: Any) -> Settings:
    """``settings/__init__.py`` at project priority, ``overrides`` as if given with ``-s``."""
    s = Settings()
    s.setmodule("settings", priority="project")
    s.setdict(overrides, priority="cmdline")
    return s
