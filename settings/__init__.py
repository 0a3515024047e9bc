"""Scrapy settings of the SpiTag project.

SpiTag's own parts — its scheduler, middlewares, pipeline, extensions and defaults —
come with its spider (``spitag.parts``, merged by ``SpitagSpider.update_settings``), and
its settings (``SPITAG_*``) are declared once, with their defaults, in
``spitag/options.py`` (the reference: ``docs/settings.md``). Any of them may be set
here, in the environment, or with ``-s NAME=VALUE``. Another spider of this project is
plain Scrapy.
"""

from spitag.options import log_level_from_environment

BOT_NAME = "spitag"
SPIDER_MODULES = ["spiders"]
NEWSPIDER_MODULE = "spiders"
COMMANDS_MODULE = "spitag.commands"

ROBOTSTXT_OBEY = True
FEED_EXPORT_ENCODING = "utf-8"
TELNETCONSOLE_ENABLED = False
REMOTE_CONTROL_ENABLED = False  # no listening port unless asked for
# Scrapy sets up its log before it reads -s: the environment's SPITAG_LOG_LEVEL is the
# project's LOG_LEVEL (-s LOG_LEVEL=… or -L on the command line).
LOG_LEVEL = log_level_from_environment()
