"""SpiTag's scrapy sub-commands (``COMMANDS_MODULE``): crawl (checked), export."""
