"""The page budget (``SPITAG_PAGE_BUDGET``, Nutch's -topN): pages a crawl may fetch in
all its runs together. A run starts with what is left of it (the budget less the URLs
done or leased), pops no more, and gives back a page whose download failed and will be
tried again (a page counts once)."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from spitag.outcomes import RETRY_LATER, PageEnd
from spitag.signals import page_ended

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

    from spitag.frontier import Counts

logger = logging.getLogger(__name__)


class PageBudget:
    def __init__(self, crawler: Crawler, budget: int | None) -> None:
        self.stats = crawler.stats
        self.budget = budget
        self.left: int | None = None
        if budget is not None:
            crawler.signals.connect(self.ended, signal=page_ended)

    def start(self, counts: Counts) -> None:
        if self.budget is None:
            return
        self.left = max(self.budget - counts.done - counts.leased, 0)
        logger.info("page budget %d: %d left for this run", self.budget, self.left)

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

    def ended(self, end: PageEnd) -> None:
        if end.kind == RETRY_LATER and self.left is not None:
            self.left += len(end.urls)  # (its next try takes it again)

    def __repr__(self) -> str:
        return f"PageBudget({self.budget}, left={self.left})"


