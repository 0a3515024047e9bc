"""A Scrapy project of its own that crawls with SpiTag's spider.

SpiTag's scheduler, middlewares, store pipeline and extensions come with its spider:
nothing of them is listed here. This project adds its own pipeline (after SpiTag's
store, which runs at 300) and SpiTag's commands (``scrapy frontier``, ``export``, …).
"""

BOT_NAME = "recipes"
SPIDER_MODULES = ["recipes.spiders"]
COMMANDS_MODULE = "spitag.commands"

ITEM_PIPELINES = {"recipes.pipelines.RecipeCsvPipeline": 800}
RECIPES_CSV = "recipes.csv"

SPITAG_STORE = "sqlite:///recipes-store.db"
SPITAG_FRONTIER = "sqlite:///recipes-frontier.db"
ROBOTSTXT_OBEY = True
FEED_EXPORT_ENCODING = "utf-8"
TELNETCONSOLE_ENABLED = False
REMOTE_CONTROL_ENABLED = False  # no listening port
