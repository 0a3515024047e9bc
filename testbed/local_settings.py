"""The project's Scrapy settings for crawls of a local web (tests and benchmarks).

SpiTag's defaults are polite for the real web: one request at a time to a site, a
second apart. A web served on 127.0.0.1 for a test or a benchmark is crawled as fast as
the machine allows, as before those defaults: four downloads to a host at once, no
delay. The test command sets ``SCRAPY_SETTINGS_MODULE`` to this module
(``tests/conftest.py``); a test of the defaults themselves unsets it.
"""

from settings import *  # noqa: F401,F403  (the project's own settings, then:)

CONCURRENT_REQUESTS_PER_DOMAIN = 4
DOWNLOAD_DELAY = 0
