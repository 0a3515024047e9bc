"""Store benchmark: SQLite against PostgreSQL, on recorded items and on a real crawl.

    python bench/store.py [--items 2000] [--batch 200] [--runs 3]
        [--crawl-runs 2] [--crawl-pages 1500] [--no-crawl] [--pg-url postgresql://…]

1. **Writes.** Items shaped exactly like a crawl's: each of the 600 real pages of the
   corpus (``real-pages.tar.gz``; ``$SPITAG_CORPUS`` or ``<repo>/../shared/corpus``)
   goes through ``spitag.record.response_item`` (profile, structured data, links,
   body), then copies with a marker comment fill ``--items`` records with distinct
   bodies. They are written in batches of ``--batch`` to a new store — what the store
   pipeline does — and timed: items/s = items / seconds in ``Store.write`` (median of
   ``--runs``, a new store each run, SQLite and PostgreSQL runs interleaved so that a
   busy machine slows both alike). *replay* writes the same batches again into the
   full store: the idempotent path a re-leased batch takes.
2. **Crawl.** ``scrapy crawl spitag`` of a local ``tree_site(--crawl-pages)`` (no
   delay, served by the loopback test server through ``http_proxy``) with each store,
   all other settings the project's defaults and a new SQLite frontier each time
   (``--crawl-runs`` per store, interleaved).
   pages/s = pages served / wall time of the crawl process (start-up included), and
   over the span between the first and the last request (start-up excluded).

PostgreSQL: a server of the bench's own (Debian's package, 127.0.0.1, a free port, a
temp folder, default durability: fsync on, synchronous_commit on), or ``--pg-url`` (a
database of your own: SpiTag's tables in it are dropped before each run). SQLite:
WAL, synchronous=NORMAL (the store's settings), temp folder. The load average is
printed with the table: the numbers mean little on a busy machine.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

from scrapy.http import HtmlResponse, Request  # noqa: E402

from spitag.digest import md5_hex  # noqa: E402
from spitag.record import response_item  # noqa: E402
from spitag.store import open_store  # noqa: E402
from testbed.corpus import PAGES_ARCHIVE, unpack  # noqa: E402
from testbed.pgserver import PgServer  # noqa: E402
from testbed.sites import tree_site  # noqa: E402
from testbed.webserver import WebServer  # noqa: E402

logger = logging.getLogger(__name__)


def corpus_archive() -> Path:
    root = Path(os.environ.get("SPITAG_CORPUS") or REPO_ROOT.parent / "shared" / "corpus")
    archive = root / PAGES_ARCHIVE
    if not archive.is_file():
        raise SystemExit(f"corpus not found: {archive} (set SPITAG_CORPUS)")
    return archive


def real_items(pages_dir: Path) -> list[dict[str, Any]]:
    """One item per saved page, as the spider makes it (body included)."""
    items = []
    for line in (pages_dir / "manifest.jsonl").read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        url = row["url"] if row["url"].startswith(("http://", "https://")) else f"http://hard.test/{row['file']}"
        request = Request(url, meta={
            "depth": 2, "spitag_priority": 0.5,
            "spitag_reason": {"strategy": "spitag", "parent": "http://seed.test/"},
        })
        response = HtmlResponse(url, body=(pages_dir / row["file"]).read_bytes(),
                                headers={"Content-Type": "text/html"}, request=request)
        item, _ = response_item(response, "bench", keep_data=True, max_page_size=10 * 2**20, max_links=1000)
        items.append(dict(item))
    return items


def records(base: list[dict[str, Any]], count: int) -> list[dict[str, Any]]:
    """``count`` records: the real items, then copies with distinct URLs and bodies."""
    out = []
    for i in range(count):
        copy, item = divmod(i, len(base))
        record = dict(base[item])
        if copy:
            body = record["body"]
            marker = f"\n<!-- copy {copy} -->"
            record["body"] = body + marker if isinstance(body, str) else (body or b"") + marker.encode()
            data = record["body"].encode("utf-8", "surrogatepass") if isinstance(record["body"], str) else record["body"]
            record["md5"] = md5_hex(data)
            record["url"] = f"{record['url']}{'&' if '?' in record['url'] else '?'}copy={copy}"
        out.append(record)
    return out


def time_writes(store: Any, batches: list[list[dict[str, Any]]]) -> tuple[float, float]:
    """items/s of a first write into ``store`` (new), then of a replay; closes it."""
    items = sum(map(len, batches))
    rates = []
    try:
        for _ in ("first", "replay"):
            start = time.perf_counter()
            for batch in batches:
                store.write(batch)
            rates.append(items / (time.perf_counter() - start))
    finally:
        store.close()
    return rates[0], rates[1]


def crawl(store_url: str, pages: int, folder: Path) -> tuple[int, float, float]:
    """Pages served, pages/s over the process's wall time, pages/s over the requests."""
    with WebServer() as server:
        server.add_site("bench.test", tree_site(pages))
        env = {**os.environ, "http_proxy": server.proxy_url, "https_proxy": server.proxy_url}
        env.pop("no_proxy", None)
        frontier = folder / f"frontier-{time.monotonic_ns()}.db"
        start = time.perf_counter()
        run = subprocess.run(
            [sys.executable, "-m", "scrapy", "crawl", "spitag", "-a", "seeds=http://bench.test/",
             "-a", "crawl=bench", "-s", f"SPITAG_STORE={store_url}", "-s", f"SPITAG_FRONTIER=sqlite:///{frontier}",
             "-s", "LOG_LEVEL=WARNING", "-s", "CONCURRENT_REQUESTS_PER_DOMAIN=4", "-s", "DOWNLOAD_DELAY=0"],
            cwd=REPO_ROOT, env=env, capture_output=True, text=True,
        )
        wall = time.perf_counter() - start
        if run.returncode != 0:
            raise SystemExit(f"crawl with {store_url.split('://')[0]} failed:\n{run.stderr[-3000:]}")
        times = [e.time for e in server.log if e.path != "/robots.txt"]
    span = max(times[-1] - times[0], 1e-9)
    return len(times), len(times) / wall, len(times) / span


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, default=2000)
    parser.add_argument("--batch", type=int, default=200)
    parser.add_argument("--runs", type=int, default=3, help="write runs per store (interleaved)")
    parser.add_argument("--crawl-runs", type=int, default=2, help="crawls per store (interleaved)")
    parser.add_argument("--crawl-pages", type=int, default=1500)
    parser.add_argument("--no-crawl", action="store_true")
    parser.add_argument("--pg-url", help="an empty PostgreSQL database (default: start a server)")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    load_before = os.getloadavg()[0]

    with tempfile.TemporaryDirectory(prefix="spitag-bench-") as tmp:
        folder = Path(tmp)
        print(f"preparing {args.items} items from the real pages…", file=sys.stderr)
        base = real_items(unpack(corpus_archive(), folder / "corpus"))
        items = records(base, args.items)
        batches = [items[i : i + args.batch] for i in range(0, len(items), args.batch)]
        links = sum(len(r.get("links") or ()) for r in items)
        body_mb = sum(len(r["body"]) if r.get("body") else 0 for r in items) / 2**20

        server = None if args.pg_url else PgServer(durable=True).start()
        counter = iter(range(10**6))

        def new_url(name: str) -> str:
            """A new, empty store of each kind (a given --pg-url is emptied instead)."""
            if name == "sqlite":
                return f"sqlite:///{folder}/bench-{next(counter)}.db"
            if args.pg_url:
                wipe(args.pg_url)
                return args.pg_url
            return server.create_database(f"bench_{next(counter)}")

        stores = ("sqlite", "postgresql")
        writes: dict[str, list[tuple[float, float]]] = {n: [] for n in stores}
        crawls: dict[str, list[tuple[int, float, float]]] = {n: [] for n in stores}
        try:
            for run in range(args.runs):  # interleaved: a busy machine slows both alike
                for name in stores:
                    print(f"write run {run + 1}: {name}…", file=sys.stderr)
                    writes[name].append(time_writes(open_store(new_url(name)), batches))
            for run in range(0 if args.no_crawl else args.crawl_runs):
                for name in stores:
                    print(f"crawl run {run + 1}: {args.crawl_pages} pages with {name}…", file=sys.stderr)
                    crawls[name].append(crawl(new_url(name), args.crawl_pages, folder))
        finally:
            if server is not None:
                server.cleanup()

    median = statistics.median
    print(f"\n{args.items} items ({body_mb:.0f} MB of bodies, {links} links) in batches of {args.batch};"
          f" medians of {args.runs} write run(s), {0 if args.no_crawl else args.crawl_runs} crawl(s) of"
          f" tree_site({args.crawl_pages}); load average {load_before:.1f} → {os.getloadavg()[0]:.1f}"
          f" on {os.cpu_count()} CPUs")
    header = f"{'store':<12}{'write items/s':>15}{'replay items/s':>16}"
    if not args.no_crawl:
        header += f"{'crawl pages':>13}{'pages/s wall':>14}{'pages/s reqs':>14}"
    print(header)
    for name in stores:
        line = f"{name:<12}{median(w[0] for w in writes[name]):>15.0f}{median(w[1] for w in writes[name]):>16.0f}"
        if crawls[name]:
            line += (f"{median(c[0] for c in crawls[name]):>13.0f}{median(c[1] for c in crawls[name]):>14.0f}"
                     f"{median(c[2] for c in crawls[name]):>14.0f}")
        print(line)


def wipe(url: str) -> None:
    """Empty a given PostgreSQL database of SpiTag's tables (for --pg-url)."""
    import psycopg2

    conn = psycopg2.connect(url)
    try:
        conn.cursor().execute("DROP TABLE IF EXISTS link, outlink, url, page, spitag_meta")
        conn.commit()
    finally:
        conn.close()


if __name__ == "__main__":
    main()
