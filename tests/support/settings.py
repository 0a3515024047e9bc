"""The project's Scrapy settings as a crawl sees them, for tests that build strategies,
policies or filters without running a crawl."""

from __future__ import annotations

from typing import Any

from scrapy.settings import Settings

from spitag.options import Options
from spitag.scoring import Strategy, strategy_from_options


def project_settings(**overrides: Any) -> Settings:
    """``settings/__init__.py`` at project priority with SpiTag's spider's parts (as a
    crawl of it has them), ``overrides`` as if given with ``-s``."""
    from spitag.spider import SpitagSpider

    s = Settings()
    s.setmodule("settings", priority="project")
    SpitagSpider.update_settings(s)
    s.setdict(overrides, priority="cmdline")
    return s


def options(**overrides: Any) -> Options:
    """SpiTag's settings of a crawl given ``overrides`` (with no SPITAG_* from the
    environment)."""
    return Options(project_settings(**overrides), environ={})


def strategy(**overrides: Any) -> Strategy:
    return strategy_from_options(options(**overrides))
