"""SpiTag's store and frontier behind a web service (``scrapy serve``).

Other programs read a crawl through a JSON API instead of the tables: ``reader``
opens the store read-only, ``queries`` holds the SQL, ``app`` the routes, their
validation and the OpenAPI page; ``spitag.commands.serve`` starts it.
"""
