"""The web service (``scrapy serve``): how fast it answers, and what it costs a crawl.

    python bench/api.py [--pages 100000] [--calls 30] [--rounds 3] [--crawl-pages 5000] [--out bench/out/api]

1. **Answer times.** A store of ``--pages`` pages (SQLite, written by the store's own
   code, kept in ``--work`` for the next run): synthetic URLs on 500 hosts, each page 10
   links to others, semantic counts drawn with a seed, structured data of a schema.org
   type (4 % Recipe, 10 % Event, 0.1 % Movie, the rest Article or none). ``scrapy serve``
   on it; each common query is asked ``--calls`` times, in turn with the others:
   median and p95 milliseconds, target ≤ 100 ms.
2. **Cost to a running crawl.** bench/throughput.py's synthetic web (``--crawl-pages``
   light pages under nginx) crawled by SpiTag on the embedded defaults (its config d),
   with and without a client asking the API 10 times a second about that very crawl
   (its live data, a crawl summary, pages by host, pages by syntax, in turn), rounds
   interleaved: pages/s with the client over pages/s without, target ≥ 0.95.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
sys.path[:0] = [str(REPO), str(BENCH)]

from frontier import page_span  # noqa: E402
from throughput import Servers, crawl_command  # noqa: E402
from throughput_webs import synthetic_web  # noqa: E402

from testbed.apiserver import ApiServer  # noqa: E402

HOSTS = 500
TYPES = (("Recipe", 0.04), ("Event", 0.10), ("Movie", 0.001), ("Article", 0.5))
TARGET_MS = 100.0
TARGET_COST = 0.95
CRAWL = "bench"


def build_store(path: Path, pages: int, seed: int = 7) -> None:
    """``pages`` records written as a crawl writes them (the store's own ``write``)."""
    from spitag.digest import md5_hex
    from spitag.store import open_store

    rnd = random.Random(seed)
    store = open_store(f"sqlite:///{path}", "none")
    try:
        batch = []
        for i in range(pages):
            host = f"h{i % HOSTS}.example"
            url = f"http://{host}/p/{i}.html"
            draw, kind = rnd.random(), None
            for name, share in TYPES:
                if draw < share:
                    kind = name
                    break
                draw -= share
            counts = {"json-ld": 1 if kind else 0, "microdata": rnd.choice((0, 0, 0, 2)),
                      "opengraph": rnd.randint(0, 6), "meta": rnd.randint(1, 9)}
            counts["total"] = sum(counts.values())
            data = {"json-ld": [{"@context": "https://schema.org", "@type": kind, "name": f"thing {i}"}]} if kind else {}
            body = f"page {i}".encode()
            batch.append({
                "crawl": CRAWL, "url": url, "status": 200, "error": None, "depth": i % 7,
                "priority": rnd.random(), "reason": {"strategy": "spitag", "parent": f"http://h0.example/p/{i // 10}.html"},
                "fetched_at": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(1_780_000_000 + i)) + ".000Z",
                "content_type": "text/html", "encoding": "utf-8", "size": len(body), "truncated": False,
                "md5": md5_hex(body), "md5dia": md5_hex(body), "title": f"Page {i}", "semantic": counts,
                "score": float(counts["total"]), "data": data, "outlinks": 10,
                "links": [f"http://h{j % HOSTS}.example/p/{j}.html" for j in rnd.sample(range(pages), 10)],
            })
            if len(batch) == 500:
                store.write(batch)
                batch = []
        if batch:
            store.write(batch)
    finally:
        store.close()


class Server(ApiServer):
    """``scrapy serve`` on a store (testbed/apiserver.py), its calls timed."""

    def get(self, path: str) -> tuple[int, float]:
        """(status, milliseconds) of one call, the body read whole."""
        started = time.perf_counter()
        try:
            with urllib.request.urlopen(self.base + path, timeout=60) as answer:
                answer.read()
                status = answer.status
        except urllib.error.HTTPError as err:
            err.read()
            status = err.code
        return status, (time.perf_counter() - started) * 1000



def answer_times(store: Path, calls: int, out: Path) -> dict[str, Any]:
    queries = {
        "crawl summary": f"/api/crawls/{CRAWL}",
        "pages by host": f"/api/crawls/{CRAWL}/pages?host=h17.example&limit=100",
        "pages by syntax": f"/api/crawls/{CRAWL}/pages?syntax=microdata&limit=100",
        "pages by type (4 %)": f"/api/crawls/{CRAWL}/pages?type=Recipe&limit=100",
        "pages by type (0.1 %)": f"/api/crawls/{CRAWL}/pages?type=Movie&limit=100",
        "pages by score": f"/api/crawls/{CRAWL}/pages?min_score=20&limit=100",
        "one page": f"/api/crawls/{CRAWL}/page?url=http://h3.example/p/1003.html",
        "links out": f"/api/crawls/{CRAWL}/links?url=http://h3.example/p/1003.html",
        "links in": f"/api/crawls/{CRAWL}/links?url=http://h3.example/p/1003.html&direction=in",
        "live data": f"/api/crawls/{CRAWL}/live",
    }
    server = Server(f"sqlite:///{store}", f"sqlite:///{out / 'no-frontier.db'}", out / "serve-answers.log")
    times: dict[str, list[float]] = {name: [] for name in queries}
    try:
        for path in queries.values():  # a first call each: connections, caches
            server.get(path)
        for _ in range(calls):
            for name, path in queries.items():
                status, ms = server.get(path)
                if status != 200:
                    raise SystemExit(f"{name}: {path} answered {status}")
                times[name].append(ms)
    finally:
        server.stop()
    return {name: {"median_ms": statistics.median(t), "p95_ms": sorted(t)[int(0.95 * (len(t) - 1))],
                   "max_ms": max(t), "met": sorted(t)[int(0.95 * (len(t) - 1))] <= TARGET_MS}
            for name, t in times.items()}


def crawl_once(web: Any, servers: Servers, out: Path, tag: str, concurrency: int, with_client: bool) -> dict[str, Any]:
    """One crawl of config d; with the client, ``scrapy serve`` on its store (made
    empty before the crawl starts) asked 10 times a second while it runs."""
    from spitag.store import open_store

    folder = out / "runs" / tag
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    name = f"api-{tag}-{os.getpid()}"
    open_store(f"sqlite:///{folder / 'store.db'}").close()
    server = Server(f"sqlite:///{folder / 'store.db'}", f"sqlite:///{folder / 'frontier.db'}",
                    folder / "serve.log") if with_client else None
    cmd = [sys.executable, *crawl_command("d", web, servers, folder, name, concurrency)]
    env = {k: v for k, v in os.environ.items() if not k.startswith("SPITAG_")}
    offset = web.nginx.log_offset()
    stop = threading.Event()
    calls: list[tuple[int, float]] = []
    client_span = [0.0, 0.0]

    def client() -> None:
        client_span[0] = time.monotonic()
        host = urlsplit(web.seed).netloc
        paths = [f"/api/crawls/{name}/live", f"/api/crawls/{name}", f"/api/crawls/{name}/pages?host={host}&limit=100",
                 f"/api/crawls/{name}/pages?syntax=json-ld&limit=100"]
        i = 0
        while not stop.is_set():
            started = time.monotonic()
            calls.append(server.get(paths[i % len(paths)]))
            i += 1
            stop.wait(max(0.1 - (time.monotonic() - started), 0))
        client_span[1] = time.monotonic()

    thread = threading.Thread(target=client, daemon=True) if server else None
    with (folder / "crawler.log").open("wb") as log:
        proc = subprocess.Popen(cmd, cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=log)
        if thread:
            thread.start()
        proc.wait(timeout=3600)
    stop.set()
    if thread:
        thread.join()
        server.stop()
    pages, span, _ = page_span(web.nginx.log(offset))
    ok = sum(1 for status, _ in calls if status in (200, 404))  # 404: the crawl not in the store yet
    return {"tag": tag, "client": with_client, "exit": proc.returncode, "pages": pages, "span": span,
            "pages_per_s": pages / span if span else float("nan"), "calls": len(calls), "calls_ok": ok,
            "calls_per_s": len(calls) / (client_span[1] - client_span[0]) if calls else 0.0,
            "call_median_ms": statistics.median(ms for _, ms in calls) if calls else None}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--pages", type=int, default=100_000, help="pages of the store the answer times are measured on")
    p.add_argument("--calls", type=int, default=30, help="calls of each query")
    p.add_argument("--rounds", type=int, default=3, help="crawls with and without the client, interleaved")
    p.add_argument("--crawl-pages", type=int, default=5000, help="pages of the web crawled")
    p.add_argument("--concurrency", type=int, default=16)
    p.add_argument("--out", default=str(REPO / "bench" / "out" / "api"))
    p.add_argument("--work", default="/tmp/spitag-bench-api", help="where the store and the web are kept")
    args = p.parse_args()
    out, work = Path(args.out), Path(args.work)
    out.mkdir(parents=True, exist_ok=True)
    work.mkdir(parents=True, exist_ok=True)
    results: dict[str, Any] = {"when": time.strftime("%Y-%m-%d %H:%M"), "cpus": os.cpu_count(), "args": vars(args)}

    store = work / f"store-{args.pages}.db"
    if not store.exists():
        print(f"[store] writing {args.pages:,} pages …", flush=True)
        started = time.monotonic()
        build_store(work / "store-new.db", args.pages)
        (work / "store-new.db").rename(store)
        print(f"[store] {time.monotonic() - started:.0f} s, {store.stat().st_size / 1e6:.0f} MB", flush=True)
    results["answers"] = answer_times(store, args.calls, out)
    print(f"\n## answer times on a store of {args.pages:,} pages (SQLite), {args.calls} calls each")
    for name, r in results["answers"].items():
        print(f"   {name:24} median {r['median_ms']:7.1f} ms, p95 {r['p95_ms']:7.1f} ms, max {r['max_ms']:7.1f} ms"
              f"  (target p95 ≤ {TARGET_MS:.0f} ms: {'met' if r['met'] else 'MISSED'})", flush=True)

    web = synthetic_web(work / f"synthetic-{args.crawl_pages}", args.crawl_pages).start()
    servers = Servers([])
    runs = []
    try:
        for rnd in range(args.rounds):
            for with_client in ((False, True) if rnd % 2 == 0 else (True, False)):
                r = crawl_once(web, servers, out, f"r{rnd}-{'client' if with_client else 'alone'}",
                               args.concurrency, with_client)
                runs.append(r)
                print(f"   crawl {r['tag']:15} {r['pages']} pages in {r['span']:.1f} s = {r['pages_per_s']:.1f} pages/s"
                      + (f", {r['calls']} API calls ({r['calls_per_s']:.1f}/s, median {r['call_median_ms']:.0f} ms,"
                         f" {r['calls_ok']} answered)" if with_client else "") + f", exit {r['exit']}", flush=True)
    finally:
        web.stop()
        servers.close()
    ratios = []
    for rnd in range(args.rounds):
        alone = next(r for r in runs if r["tag"] == f"r{rnd}-alone")
        client = next(r for r in runs if r["tag"] == f"r{rnd}-client")
        ratios.append(client["pages_per_s"] / alone["pages_per_s"])
    med = statistics.median(ratios)
    results.update(runs=runs, cost_ratios=ratios, cost_median=med)
    print(f"\n## a crawl's pages/s with a client calling the API 10 times a second, over without: "
          f"{', '.join(f'{x:.3f}' for x in ratios)}; median {med:.3f} (target ≥ {TARGET_COST}: "
          f"{'met' if med >= TARGET_COST else 'MISSED'})")
    (out / "api.json").write_text(json.dumps(results, indent=1, default=str))


if __name__ == "__main__":
    main()
