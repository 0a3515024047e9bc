"""SpiTag's own signals (sent through ``crawler.signals``)."""

from __future__ import annotations

#: The scheduler opened the crawl's frontier. Arguments: ``frontier``
#: (``spitag.frontier.Frontier``). Each component that needs it keeps the one contract
#: it uses (the politeness gate its ``gate``, robots.txt its ``robots``, …).
frontier_opened = object()

#: The scheduler is about to close the frontier (the crawl ends, or pauses): the last
#: moment to use it. Arguments: ``frontier``. Scrapy's ``spider_closed`` comes after.
frontier_closing = object()

#: This worker writes what it buffered for the frontier (every 0.2 s, after a page is
#: stored, and before each pop): the moment to write with it what others buffered, so
#: that the pop sees it (``spitag.learning``: the pages learnt, the links found).
#: No arguments.
frontier_flushing = object()

#: A page of the frontier came to an end (``spitag.outcomes.PageEnd``: stored,
#: settled, set aside, to be retried later, or a canonical URL done). Argument: ``end``.
#: One owner acts on it in the frontier: this worker's leases (``spitag.leases``).
page_ended = object()

#: The heartbeat counted the live workers of the crawl on this machine, this one
#: included (they share its CPUs: ``spitag.pace``). Argument: ``count``.
workers_here = object()
