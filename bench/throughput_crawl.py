"""One baseline crawl of bench/throughput.py, in its own process (configs a, b, b2, c).

    python bench/throughput_crawl.py KIND SEEDS [--redis URL] [--concurrency 16] [--out items.jsonl] [--stats stats.json]
                                     [--any-host] [--pages N]

KIND:
* ``a``  plain Scrapy: ``parse`` follows every link of ``LinkExtractor(allow_domains=[seed host])``;
* ``b``  the same spider on scrapy-redis (Scheduler + PriorityQueue + RFPDupeFilter, ``--redis``);
* ``b2`` ``b`` with ``c``'s parse;
* ``c``  the same links, plus ``extruct.extract(response.text, base_url=response.url,
  errors="ignore")`` (every syntax, mf2py as extruct ships it: spitag is never imported
  here) yielded as an item and written to ``--out`` as JSON lines, as ``-O`` would.

SEEDS: one URL, or several separated by commas. ``--any-host``: links to every host
are followed (the multi-host web, reached through its nginx as the HTTP proxy), not
only the first seed's; ``--pages N``: the crawl stops after N responses
(``CLOSESPIDER_PAGECOUNT``, as SpiTag's crawl of that web).

Same settings for all, and the ones SpiTag's crawl gets: CONCURRENT_REQUESTS and
CONCURRENT_REQUESTS_PER_DOMAIN = ``--concurrency``, DOWNLOAD_DELAY 0, robots.txt
obeyed, meta refresh not followed (SpiTag turns Scrapy's MetaRefreshMiddleware off
too; on the real pages it would send requests to hosts nobody serves).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import scrapy
from scrapy.crawler import CrawlerProcess
from scrapy.linkextractors import LinkExtractor

BENCH = Path(__file__).resolve().parent
sys.path[:0] = [str(BENCH.parent), str(BENCH)]

from frontier import scrapy_redis_settings  # noqa: E402  (imports no spitag module)

KINDS = ("a", "b", "b2", "c")



class LinkSpider(scrapy.Spider):
    """Follow every link in scope (the seed's host); ``extract``: also extruct each page."""

    name = "throughput"

    def __init__(self, seed: str, extract: bool = False, any_host: bool = False, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.seeds = seed.split(",")
        self.extract = extract
        # host:port (Scrapy compares the netloc)
        self.links = LinkExtractor() if any_host else LinkExtractor(allow_domains=[urlsplit(self.seeds[0]).netloc])
        if extract:
            import extruct

            self.extruct = extruct

    async def start(self) -> Any:
        for seed in self.seeds:
            yield scrapy.Request(seed, callback=self.parse)

    def parse(self, response: Any) -> Any:
        if not isinstance(response, scrapy.http.TextResponse):
            return
        for link in self.links.extract_links(response):
            yield scrapy.Request(link.url, callback=self.parse)
        if self.extract:
            data = self.extruct.extract(response.text, base_url=response.url, errors="ignore")
            yield {"url": response.url, "status": response.status, "data": data}


def settings_for(kind: str, concurrency: int, redis_url: str | None, out: str | None,
                 pages: int | None = None) -> dict[str, Any]:
    settings: dict[str, Any] = {
        "LOG_LEVEL": "INFO", "ROBOTSTXT_OBEY": True, "TELNETCONSOLE_ENABLED": False,
        "CONCURRENT_REQUESTS": concurrency, "CONCURRENT_REQUESTS_PER_DOMAIN": concurrency,
        "DOWNLOAD_DELAY": 0, "METAREFRESH_ENABLED": False, "USER_AGENT": "SpiTag-bench/0.1",
        "FEED_EXPORT_ENCODING": "utf-8", "REMOTE_CONTROL_ENABLED": False,
    }
    if pages:
        settings["CLOSESPIDER_PAGECOUNT"] = pages
    if kind in ("b", "b2"):
        if not redis_url:
            raise SystemExit("--redis is needed for b and b2")
        settings.update(scrapy_redis_settings(redis_url))
    if kind in ("b2", "c") and out:
        settings["FEEDS"] = {out: {"format": "jsonlines", "overwrite": True}}
    return settings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("kind", choices=KINDS)
    parser.add_argument("seed")
    parser.add_argument("--redis")
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--out", help="JSON lines of the items (b2, c)")
    parser.add_argument("--stats", help="write Scrapy's stats here (JSON)")
    parser.add_argument("--any-host", action="store_true", help="follow links to every host")
    parser.add_argument("--pages", type=int, help="stop after this many responses")
    args = parser.parse_args()
    process = CrawlerProcess(settings_for(args.kind, args.concurrency, args.redis, args.out, args.pages))
    crawler = process.create_crawler(LinkSpider)
    process.crawl(crawler, seed=args.seed, extract=args.kind in ("b2", "c"), any_host=args.any_host)
    started = time.time()
    process.start()
    if args.stats:
        stats = {k: v for k, v in crawler.stats.get_stats().items() if isinstance(v, (int, float, str))}
        stats["bench/wall"] = time.time() - started
        Path(args.stats).write_text(json.dumps(stats, default=str))


if __name__ == "__main__":
    main()
