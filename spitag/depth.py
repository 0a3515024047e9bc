"""Scrapy's ``DepthMiddleware``, for every spider but one that crawls a frontier.

SpiTag's spider gives each request its own depth (breadth-first layers: a redirect
target keeps its layer) and limits it itself (``SPITAG_MAX_DEPTH``, else
``DEPTH_LIMIT``); the frontier orders the crawl, so ``DEPTH_PRIORITY`` means nothing to
it. Any other spider run in the project (``scrapy genspider``'s, ``runspider``, the
ones of ``scrapy fetch`` and ``shell``) keeps Scrapy's depth, ``DEPTH_LIMIT`` and
``DEPTH_PRIORITY``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from scrapy.spidermiddlewares.depth import DepthMiddleware as ScrapyDepthMiddleware

from spitag.frontier import uses_frontier

if TYPE_CHECKING:
    from scrapy import Request
    from scrapy.http import Response


class DepthMiddleware(ScrapyDepthMiddleware):
    def _init_depth(self, response: Response) -> None:
        if not uses_frontier(self.crawler.spider):
            super()._init_depth(response)

    def get_processed_request(self, request: Request, response: Response | None) -> Request | None:
        if uses_frontier(self.crawler.spider):
            return request
        return super().get_processed_request(request, response)

    def get_processed_item(self, item: Any, response: Response | None) -> Any:
        return item
