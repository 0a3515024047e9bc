"""Checks run before a crawl starts, so that bad input fails fast and writes nothing.

Seeds, every SpiTag setting and the scoring strategy are validated, then each backend
is opened once: a typo or an unreachable server gives one clear message and a non-zero
exit code instead of a traceback in the middle of a crawl.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from spitag.config import CrawlConfig
from spitag.scoring import strategy_from_settings, syntax_weights
from spitag.seeds import load_seeds
from spitag.store import open_store

if TYPE_CHECKING:
    from scrapy.settings import BaseSettings


def check_input(settings: BaseSettings, spargs: dict[str, Any]) -> CrawlConfig:
    """Validate seeds, settings and strategy; BadInputError names what is wrong."""
    load_seeds(spargs.get("seeds"))
    config = CrawlConfig.from_settings(settings)
    strategy_from_settings(settings)
    syntax_weights(settings)
    return config


def check_backends(config: CrawlConfig) -> None:
    """Open the store once (creating its tables); BackendUnavailableError if it can't."""
    open_store(config.store_url, config.store_body).close()
