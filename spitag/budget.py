"""The page budget (``SPITAG_PAGE_BUDGET``, Nutch's -topN): pages a crawl may fetch in
all its runs and by all its workers together. The frontier holds it (its ``pop`` takes
no URL past the budget, counting every worker's done and leased URLs: ``Limits``);
this worker's view of what is left (the budget less the crawl's URLs done or leased,
read before each pop) says when to stop asking, and a page whose download failed and
will be tried again counts once."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

    from spitag.frontier import Counts

logger = logging.getLogger(__name__)


class PageBudget:
    def __init__(self, crawler: Crawler, budget: int | None) -> None:
        self.stats = crawler.stats
        self.budget = budget
        self.left: int | None = None

    def start(self, counts: Counts) -> None:
        if self.budget is None:
            return
        self.see(counts)
        logger.info("page budget %d: %d left for the crawl", self.budget, self.left)

    def see(self, counts: Counts | None) -> None:
        """What is left of the budget, as the crawl's counts say (every worker's)."""
        if self.budget is not None and counts is not None:
            self.left = max(self.budget - counts.done - counts.leased, 0)

    def allow(self, wanted: int) -> int:
        """How many of ``wanted`` pages may be popped now."""
        if self.left is None:
            return wanted
        if self.left <= 0 and not self.stats.get_value("spitag/frontier/budget_spent"):
            self.stats.set_value("spitag/frontier/budget_spent", 1)
            logger.info("page budget of %d reached: no more pages are popped", self.budget)
        return min(wanted, self.left)

    def spend(self, pages: int) -> None:
        if self.left is not None:
            self.left -= pages

    @property
    def spent(self) -> bool:
        return self.left is not None and self.left <= 0

    def __repr__(self) -> str:
        return f"PageBudget({self.budget}, left={self.left})"


