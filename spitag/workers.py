"""This worker among its crawl's workers: it joins the crawl, says it is alive, takes back
what gone workers held, and knows when a run is new.

* Joining: what it crawls with (its strategy, a digest of its seeds) becomes the
  crawl's, and it says so when that differs from the workers' or runs' before it; the
  leases of workers known to be gone come back at once (``UrlQueue.recover``); if no
  other worker of the crawl is running, this is a new run: hosts an earlier run set
  aside as down are tried again.
* Every second a heartbeat; its answer, how many of the crawl's workers share this
  machine, goes to the pace (``workers_here``).
* Every ``GONE_INTERVAL`` seconds, a look for workers that are gone (their process ended
  on this machine, or their heartbeat stopped): their leases and host places come back
  now, not when the leases expire. A worker of another machine or container killed just
  before this one started is known to be gone only ``recover_again`` seconds after the
  start: the look is made once more then, and a run left alone from its start is a new
  run.
* At the end of a run, the URLs left waiting on hosts set aside as down are named.

A Scrapy extension of SpiTag's spider, started by ``frontier_opened``.
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from spitag.aio import every, running_reactor, stop
from spitag.frontier.owners import is_gone, short_name
from spitag.outage import Outage
from spitag.signals import frontier_closing, frontier_opened, workers_here

if TYPE_CHECKING:
    from collections.abc import Sequence

    from scrapy.crawler import Crawler

    from spitag.frontier import Frontier, Worker

logger = logging.getLogger(__name__)

HEARTBEAT_INTERVAL = 1.0
GONE_INTERVAL = 2.0  # seconds between two looks for workers gone (a shared frontier)


class Workers:
    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler
        self.outage = Outage.of(crawler, "frontier")
        self.frontier: Frontier | None = None
        self.loops: list[Any] = []
        self.recover_call: Any = None
        self.gone: set[str] = set()  # workers whose leases were taken back
        self.opened_at = time.monotonic()
        self.new_run = False  # no other worker ran when this one started (or after recover_again)
        self.here = 0  # the crawl's live workers on this machine, at the last heartbeat

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Workers:
        workers = cls(crawler)
        crawler.signals.connect(workers.opened, signal=frontier_opened)
        crawler.signals.connect(workers.closing, signal=frontier_closing)
        return workers

    def opened(self, frontier: Frontier) -> None:
        self.frontier = frontier
        self._record_setup()
        self.opened_at = time.monotonic()
        queue = frontier.queue
        recovered = queue.recover()
        self.crawler.stats.set_value("spitag/frontier/recovered", recovered)  # (the scheduler says it)
        if queue.recover_again > 0:
            self.recover_call = running_reactor().callLater(queue.recover_again, self._recover_again)
        if not queue.counts().leased:  # no worker of this crawl is running: a new run
            self._start_new_run()
        self.heartbeat()
        self.loops += [every(HEARTBEAT_INTERVAL, self.heartbeat), every(GONE_INTERVAL, self.look_for_gone)]

    def closing(self, frontier: Frontier) -> None:
        stop(self.loops)
        if self.recover_call is not None and self.recover_call.active():
            self.recover_call.cancel()
        self._report_down()
        self.frontier = None

    def _record_setup(self) -> None:
        """Workers of one crawl, and its runs, should crawl with one strategy (their
        priorities share one queue) and one list of seeds (each worker keeps to its
        own seeds' scope): say so when this one differs from the one before."""
        spider = self.crawler.spider
        setup = {"strategy": spider.strategy.name}
        seeds = getattr(spider, "seed_urls", None)
        if seeds:
            setup["seeds"] = hashlib.md5("\n".join(sorted(seeds)).encode(), usedforsecurity=False).hexdigest()
            setup["first_seeds"] = json.dumps(seeds[:3])  # for scrapy crawls
            setup["seed_count"] = str(len(seeds))
        setup["last_run"] = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        before = self.frontier.registry.record_setup(setup)
        crawl = self.frontier.crawl
        if before.get("strategy") and before["strategy"] != setup["strategy"]:
            logger.warning(
                "crawl %s was crawled with strategy %s, this worker runs %s: their priorities mix in one"
                " queue (set SPITAG_STRATEGY as for the crawl)", crawl, before["strategy"], setup["strategy"],
            )
        if before.get("seeds") and setup.get("seeds") and before["seeds"] != setup["seeds"]:
            logger.warning(
                "crawl %s was crawled with other seeds: this worker keeps to its own seeds' scope"
                " (scrapy inject adds seeds to a crawl for every worker)", crawl,
            )

    def heartbeat(self) -> None:
        """Tell the frontier this worker is alive; the workers of the crawl on this
        machine share its profile backlog (``spitag.pace``)."""
        here = self.outage.call(self.frontier.registry.heartbeat)
        if here is None:
            return
        self.crawler.stats.max_value("spitag/frontier/workers_here_max", here)
        if here != self.here:
            self.here = here
            self.crawler.signals.send_catch_log(workers_here, count=here)

    def _start_new_run(self) -> None:
        """No other worker of the crawl runs: hosts an earlier run set aside as down
        are tried again."""
        self.new_run = True
        cleared = self.outage.call(self.frontier.gate.clear_down, default=0)
        if cleared:
            logger.info("%d host(s) set aside as down by an earlier run: tried again", cleared)

    def _recover_again(self) -> None:
        """A worker killed just before this one started (on another machine, or in
        another container) is now known to be gone: its leases come back. If no other
        worker is left, this run was on its own from the start, held back only by that
        worker's leases: a new run."""
        self.look_for_gone(force=True)
        if not self.new_run and self.outage.call(self.frontier.registry.others_alive) == 0:
            self._start_new_run()

    def look_for_gone(self, force: bool = False) -> None:
        """A worker of the crawl that is gone (killed: its process is no more, or its
        heartbeat stopped) has its leases and its places on their hosts taken back now
        (``UrlQueue.recover``), not when its leases expire: its hosts would wait that
        long. Each gone worker once; a frontier that keeps no heartbeat (SQLite: one
        worker) has none to look for."""
        registry = self.frontier.registry
        workers = self.outage.call(registry.workers)
        if not workers:
            return
        gone = {w.owner for w in workers if w.owner != registry.owner and (not w.alive or is_gone(w.owner))}
        gone -= self.gone
        if not gone and not force:
            return
        recovered = self.outage.call(self.frontier.queue.recover)
        if recovered is None:
            return
        self.gone |= gone
        if recovered:
            self.crawler.stats.inc_value("spitag/frontier/recovered", recovered)
            logger.info("frontier: %d unfinished leases of %s taken back", recovered,
                        f"gone worker(s) {', '.join(sorted(short_name(o) for o in gone))}" if gone
                        else "a worker gone")
        if gone and not force and self._alone_from_the_start([w for w in workers if w.owner in gone]):
            self._start_new_run()
        if recovered:
            from spitag import compat

            compat.wake_engine(getattr(self.crawler, "engine", None))

    def _alone_from_the_start(self, gone: Sequence[Worker]) -> bool:
        """The workers just found gone had not beaten since this run started (killed
        before it) and none is left alive: this run was on its own from the start and is
        a new run now, as ``_recover_again`` would decide later, when the run may have
        ended already with the URLs of hosts set aside as down never tried again."""
        due = self.recover_call
        if self.new_run or due is None or not due.active():
            return False
        age = time.monotonic() - self.opened_at
        return (all(w.silent_seconds >= age for w in gone)
                and self.outage.call(self.frontier.registry.others_alive) == 0)

    def _report_down(self) -> None:
        """At the end of a run: the URLs left waiting on hosts set aside as down."""
        self.outage.retry_at = 0.0  # one last try, outage or not
        down = self.outage.call(self.frontier.gate.down, default=[])
        waiting = sum(urls for _, _, urls in down)
        if not waiting:
            return
        stats = self.crawler.stats
        stats.set_value("spitag/frontier/hosts_down_at_end", len(down))
        stats.set_value("spitag/frontier/waiting_on_hosts_down", waiting)
        shown = ", ".join(f"{host} ({urls})" for host, _, urls in down[:10])
        more = f" and {len(down) - 10} more" if len(down) > 10 else ""
        logger.warning(
            "%d URL(s) left waiting on %d host(s) set aside as down: %s%s. Run the crawl again"
            " to try them again", waiting, len(down), shown, more,
        )
