"""The store pipeline: batches items into the Page/URL/Link store (``SPITAG_STORE``).

Items are buffered and written in one transaction per batch — every
``SPITAG_STORE_BATCH`` items or ``SPITAG_STORE_FLUSH_SECONDS``, whichever comes first —
on a thread of its own, so the reactor never waits on the disk. A failed batch is kept
and retried after the store's outage back-off (``spitag.outage``): nothing is dropped,
and past a high-water mark downloads pause until the store is back. When a batch is
committed its pages end as ``stored`` (``spitag.outcomes``: the frontier acknowledges
them then). A page naming another URL its canonical ends that URL too. Items that are
no page record (a spider of the user's may yield its own) pass through.

An item that a pipeline drops (``DropItem``) or fails on before it reaches this one will
never be stored: its URL is settled at once (done, no row), or its lease would be held,
renewed and finally fetched again while the crawl waits on it.
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, Any

from scrapy import signals
from twisted.internet import defer, task
from twisted.internet.threads import deferToThreadPool
from twisted.python.threadpool import ThreadPool

from scrapy.utils.defer import maybe_deferred_to_future

from spitag.aio import running_reactor
from spitag.items import is_page_record
from spitag.options import Options
from spitag.outage import Outage
from spitag.outcomes import CANONICAL, SETTLED, STORED, end
from spitag.store import open_store, where
from spitag.urls import redact

if TYPE_CHECKING:
    from scrapy import Spider
    from scrapy.crawler import Crawler

    from spitag.store import Store
    from spitag.store.base import WriteResult

logger = logging.getLogger(__name__)

class StorePipeline:
    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler
        self.stats = crawler.stats
        self.options = Options.of(crawler)
        self.outage = Outage.of(crawler, "store", self.options.store)
        self.store: Store | None = None
        self.buffer: list[dict[str, Any]] = []
        self.pool = ThreadPool(minthreads=1, maxthreads=1, name="spitag-store")
        self.writing: defer.Deferred | None = None
        self.batch: list[dict[str, Any]] = []  # the records being written
        self.paused = False
        # Past this many buffered records during an outage, downloads pause: memory
        # stays bounded and nothing more is fetched that could not be stored.
        self.high_water = max(self.options.store_batch * 10, 1000)
        self.loop = task.LoopingCall(self.flush)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> StorePipeline:
        return cls(crawler)

    def open_spider(self, spider: Spider | None = None) -> None:
        self.store = open_store(self.options.store, self.options.store_body)
        logger.info("storing pages in %s", where(self.options.store))
        self.pool.start()
        # a second Ctrl-C stops the reactor at once, without close_spider: the pool's
        # threads must not keep the process alive after it
        running_reactor().addSystemEventTrigger("before", "shutdown", self._stop_pool)
        self.loop.start(self.options.store_flush_seconds, now=False)
        self.crawler.signals.connect(self._item_dropped, signal=signals.item_dropped)
        self.crawler.signals.connect(self._item_failed, signal=signals.item_error)

    def process_item(self, item: Any, spider: Spider | None = None) -> Any:
        if not is_page_record(item):
            # an item of the user's spider that is no page record (a product, a
            # review): for the feeds and the user's pipelines, not the page store
            self.stats.inc_value("spitag/store/other_items")
            return item
        record = dict(item)
        item.pop("body", None)  # the feed export and later pipelines never see the body
        self.buffer.append(record)
        self._canonical_done(record)
        if len(self.buffer) >= self.options.store_batch and self.writing is None:
            self.flush()
        if self.outage.down and len(self.buffer) >= self.high_water and not self.paused:
            self.paused = True
            self.crawler.engine.pause()
            logger.warning(
                "store %s unavailable: %d pages wait in memory; downloads paused until it is back",
                redact(self.options.store), len(self.buffer),
            )
        return item

    def _canonical_done(self, record: dict[str, Any]) -> None:
        """The page was fetched under another URL than its canonical one: that one is
        done too (never fetched)."""
        canonical = record.get("canonical")
        if (
            canonical
            and canonical != record["url"]
            and not record.get("redirect_to")  # a refresh page is not its target's content
            and 200 <= (record.get("status") or 0) < 300
        ):
            end(self.crawler, CANONICAL, [canonical], depth=record.get("depth") or 0)

    def flush(self) -> defer.Deferred | None:
        """Write the buffered records as one batch (one batch at a time)."""
        if self.writing is not None or not self.buffer:
            return self.writing
        batch, self.buffer = self.buffer, []
        self.batch = batch
        self.writing = deferToThreadPool(running_reactor(), self.pool, self.store.write, batch)
        self.writing.addCallbacks(self._stored, self._failed, errbackArgs=(batch,))
        return self.writing

    def _item_dropped(self, item: Any, response: Any = None, exception: Any = None, **_: Any) -> None:
        self._not_stored(item, "spitag/items/dropped")

    def _item_failed(self, item: Any, response: Any = None, failure: Any = None, **_: Any) -> None:
        self._not_stored(item, "spitag/items/failed")

    def _not_stored(self, item: Any, stat: str) -> None:
        """A pipeline dropped the item, or failed on it. Taken here before (a pipeline
        after this one): it is stored all the same, its URL acknowledged then. Otherwise
        its URL is done, with no row."""
        if not is_page_record(item):
            return  # not a page's record: no URL of the frontier waits on it
        url = item["url"]
        self.stats.inc_value(stat)
        if any(record.get("url") == url for record in (*self.buffer, *self.batch)):
            return
        end(self.crawler, SETTLED, [url])

    def _stored(self, result: WriteResult) -> None:
        self.writing = None
        self.batch = []
        self.outage.answered()
        if self.paused and len(self.buffer) < self.high_water // 2:
            self.paused = False
            self.crawler.engine.unpause()
            logger.warning("downloads resumed")
        self.stats.inc_value("spitag/store/batches")
        self.stats.inc_value("spitag/store/urls", len(result.urls))
        self.stats.inc_value("spitag/store/pages_new", result.pages_new)
        self.stats.inc_value("spitag/store/pages_duplicate", result.pages_seen)
        self.stats.inc_value("spitag/store/links_new", result.links_new)
        self.stats.inc_value("spitag/store/rejected", len(result.rejected))  # refused by the database, skipped
        end(self.crawler, STORED, result.urls)

    def _failed(self, failure: Any, batch: list[dict[str, Any]]) -> None:
        self.writing = None
        self.batch = []
        self.buffer[:0] = batch  # keep order; nothing is dropped
        self.stats.inc_value("spitag/store/retries")
        self.outage.failed(f"writing {len(batch)} records failed ({failure.getErrorMessage()})")
        self.writing = task.deferLater(running_reactor(), self.outage.wait(), lambda: None)
        self.writing.addCallback(self._retry)

    def _retry(self, _: Any) -> None:
        self.writing = None
        self.flush()

    async def close_spider(self, spider: Spider | None = None) -> None:
        """Write what is buffered; a store still failing after SPITAG_STORE_CLOSE_SECONDS is given up
        on: those URLs are not acknowledged, so the frontier gives them back and the
        next run fetches them again. Nothing is lost, the store stays consistent."""
        if self.loop.running:
            self.loop.stop()
        deadline = time.monotonic() + self.options.store_close_seconds
        while self.buffer or self.writing is not None:
            pending = self.flush()
            if pending is not None:
                await maybe_deferred_to_future(pending)
            if self.buffer and self.outage.down and time.monotonic() > deadline:
                logger.error(
                    "store %s: %d pages could not be written before shutdown; they stay"
                    " unacknowledged and the next run fetches them again",
                    redact(self.options.store), len(self.buffer),
                )
                self.stats.set_value("spitag/store/unwritten", len(self.buffer))
                break
        self._stop_pool()
        if self.store is not None:
            self.store.close()

    def _stop_pool(self) -> None:
        if self.pool.started and not self.pool.joined:
            self.pool.stop()
