"""Issue 4: the Redis frontier against scrapy-redis, on one local site, in one run.

    python bench/frontier.py [--pages 5000] [--runs 3] [--urls 200000] [--hosts 2000]
                             [--out bench/out/frontier] [--only memory,crawl,workers,ops]
                             [--memory-quick]

The baseline is scrapy-redis (``scrapy_redis.scheduler.Scheduler`` with its
``PriorityQueue`` and ``RFPDupeFilter``), measured in the same run on the same data:

1. **memory** — Redis bytes per queued URL, seen set included: N URLs over H hosts
   (paths of 40–60 characters, each with a reason: parent URL and parent score) pushed
   into a fresh redis-server, ``INFO memory`` ``used_memory`` after ``MEMORY PURGE``,
   before and after, divided by N. Ours on the default config and with listpack limits
   of 1024, on random parents (worst case) and on crawl-like parents (20 children
   each), and one simulated layout; bytes per key type from ``MEMORY USAGE … SAMPLES
   0``. ``--memory-quick``: the default config only.
2. **crawl** — pages/s of one plain link-following parse on (a) scrapy-redis' scheduler,
   (b) our ``FrontierScheduler`` on Redis, (c) plain Scrapy; interleaved runs, median.
3. **workers** — the full ``scrapy crawl spitag`` with 1 and with 2 workers on one
   Redis frontier (each worker its own SQLite store); CPU split per process.
4. **ops** — Redis commands per page (``INFO commandstats`` deltas), Redis CPU per page,
   and redis-benchmark's rates for our scripts → how many workers one Redis sustains.

Pages/s is counted in nginx's access log: pages answered 200 over the span from the
first request's arrival to the last answer. The site and nginx are bench/serve.py.
Prints a table and writes ``<out>/frontier.json``.
"""

from __future__ import annotations

import argparse
import collections
import hashlib
import json
import math
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
sys.path[:0] = [str(REPO), str(BENCH)]

import redis  # noqa: E402

from serve import Nginx, make_site  # noqa: E402
from testbed.redisserver import RedisServer  # noqa: E402

TICK = os.sysconf("SC_CLK_TCK")
WORDS = (
    "news world sport business article story local politics culture science tech health "
    "travel food opinion video gallery review guide market city people report"
).split()
TLDS = ("com", "org", "net", "co.uk", "de", "fr", "it", "com.au")

# ------------------------------------------------------------------------- helpers


def proc_cpu(pid: int) -> float:
    """utime + stime of a live process, seconds (/proc/<pid>/stat)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / TICK


def machine_cpu() -> tuple[float, float]:
    """(busy, total) seconds of all CPUs since boot (/proc/stat)."""
    values = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    total = sum(values[:8])
    idle = values[3] + values[4]
    return (total - idle) / TICK, total / TICK


class Sampler:
    """CPU counters sampled every ``every`` seconds (epoch times, as nginx's ``$msec``), so
    that the CPU spent inside the crawl's span — first request to last answer — can be
    told from start-up and shutdown."""

    def __init__(self, sources: dict[str, Any], every: float = 0.1) -> None:
        self.sources = sources
        self.every = every
        self.rows: list[tuple[float, dict[str, float]]] = []
        self.last = 0.0

    def take(self, force: bool = False) -> None:
        now = time.time()
        if force or now - self.last >= self.every:
            self.rows.append((now, {name: f() for name, f in self.sources.items()}))
            self.last = now

    def at(self, name: str, t: float) -> float:
        """The counter at time ``t``, interpolated between samples."""
        rows = self.rows
        if t <= rows[0][0]:
            return rows[0][1][name]
        for (t0, v0), (t1, v1) in zip(rows, rows[1:]):
            if t0 <= t <= t1:
                f = (t - t0) / (t1 - t0) if t1 > t0 else 1.0
                return v0[name] + f * (v1[name] - v0[name])
        return rows[-1][1][name]

    def between(self, name: str, t0: float, t1: float) -> float:
        return self.at(name, t1) - self.at(name, t0)


def wait_all(procs: list[subprocess.Popen], timeout: float, sampler: Sampler | None = None,
             reaped: dict[int, tuple[int, float, float]] | None = None) -> dict[int, tuple[int, float, float]]:
    """Reap children with wait4: {pid: (exit code, cpu seconds, exit time)}. Kills on timeout."""
    out: dict[int, tuple[int, float, float]] = {} if reaped is None else reaped
    deadline = time.monotonic() + timeout
    while len(out) < len(procs):
        for p in procs:
            if p.pid in out:
                continue
            pid, status, usage = os.wait4(p.pid, os.WNOHANG)
            if pid:
                p.returncode = os.waitstatus_to_exitcode(status)
                out[p.pid] = (p.returncode, usage.ru_utime + usage.ru_stime, time.monotonic())
        if sampler is not None:
            sampler.take()
        if time.monotonic() > deadline:
            for p in procs:
                if p.pid not in out:
                    p.kill()
            deadline = math.inf
        time.sleep(0.02)
    return out


def median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def commandstats(client: redis.Redis) -> dict[str, dict[str, float]]:
    return {k.removeprefix("cmdstat_"): v for k, v in client.info("commandstats").items()}


# Commands a SpiTag worker or scrapy-redis sends itself; everything else in commandstats
# was run inside our Lua scripts (its time is already inside evalsha's usec).
CLIENT_COMMANDS = {
    "evalsha", "eval", "script|load", "ping", "hello", "zcard", "exists", "hgetall", "lpop", "select",
    "info", "client|setinfo", "client|setname", "sadd", "zadd", "multi", "exec", "zrange",
    "zremrangebyrank", "del", "set", "hkeys",
}
SCRIPT_ONLY = {"time", "zrevrange", "zscore", "hexists", "zpopmax", "zrangebyscore", "hincrby",
               "hincrbyfloat", "hdel", "zrem", "hset", "hget"}


def ops_delta(before: dict, after: dict) -> dict[str, dict[str, float]]:
    out = {}
    for name, stats in after.items():
        calls = stats["calls"] - before.get(name, {}).get("calls", 0)
        usec = stats["usec"] - before.get(name, {}).get("usec", 0)
        if calls and name not in ("config|resetstat", "info", "flushall", "memory|purge"):
            out[name] = {"calls": calls, "usec": usec}
    return out


def summarize_ops(delta: dict[str, dict[str, float]], pages: int, scripted: bool) -> dict[str, Any]:
    """Per page: client round trips, every command (script internals included), server µs.

    A client's ``zadd``/``hset``/``hget`` are scrapy-redis' own or run inside our
    scripts; ``scripted`` says which (our worker sends them only for robots.txt delays).
    """
    client = {n: d for n, d in delta.items() if n in CLIENT_COMMANDS and not (scripted and n in ("zadd", "zrange"))}
    inner = {n: d for n, d in delta.items() if n not in client}
    if not scripted:
        client.update(inner)
        inner = {}
    pages = max(pages, 1)
    return {
        "client_calls_per_page": sum(d["calls"] for d in client.values()) / pages,
        "all_commands_per_page": sum(d["calls"] for d in delta.values()) / pages,
        "server_usec_per_page": sum(d["usec"] for d in client.values()) / pages,
        "client": {n: round(d["calls"] / pages, 3) for n, d in sorted(client.items())},
        "inner": {n: round(d["calls"] / pages, 3) for n, d in sorted(inner.items())},
        "usec_per_call": {n: round(d["usec"] / d["calls"], 2) for n, d in sorted(client.items())},
    }


# ----------------------------------------------------------------------- 1. memory


def gen_entries(n: int, hosts: int, dist: str, seed: int = 1, children: int = 1) -> list[Any]:
    """N entries over H hosts: paths of 40–60 chars, depth, a spitag-like priority and
    its reason (parent URL — 90 % the same host — and parent semantic score).

    ``zipf``: host i gets a share ∝ 1/(i+1)^0.9, as in a crawl whose queue a few big
    sites dominate; ``uniform``: N/H per host. Each URL's parent is a random earlier URL
    (about 2 children a parent, 100,000 distinct parents in 200,000: the worst case for
    a frontier that keeps parents once); ``children`` = k > 1 keeps one parent for k
    URLs of its host in a row, as a fetched page's outlinks arrive together in a crawl."""
    from spitag.frontier import Entry

    rnd = random.Random(seed)
    names = [f"www.{rnd.choice(WORDS)}{i}.{rnd.choice(TLDS)}" for i in range(hosts)]
    weights = [1 / (i + 1) ** 0.9 for i in range(hosts)] if dist == "zipf" else [1.0] * hosts
    picks = rnd.choices(range(hosts), weights, k=n) if dist == "zipf" else [i % hosts for i in range(n)]
    per_host: dict[int, list[str]] = collections.defaultdict(list)
    current: dict[int, tuple[str, int]] = {}
    out = []
    for k, h in enumerate(picks):
        host = names[h]
        while True:
            slug = "-".join(rnd.choice(WORDS) for _ in range(rnd.randint(3, 5)))
            path = f"/{rnd.choice(WORDS)}/{rnd.randint(2015, 2024)}/{rnd.randint(1, 12):02d}/{slug}-{k}.html"
            if 40 <= len(path) <= 60:
                break
        url = f"https://{host}{path}"
        if children > 1 and h in current and current[h][1] < children:
            parent = current[h][0]
        elif per_host[h] and rnd.random() < 0.9:
            parent = rnd.choice(per_host[h])
        elif out:
            parent = rnd.choice(out).url
        else:
            parent = f"https://{host}/"
        current[h] = (parent, current[h][1] + 1 if h in current and current[h][0] == parent else 1)
        score = float(rnd.choice((0, 0, 1, 2, 3, 4, 6, 9, 12, 20, 35)))
        priority = score / (score + 10) + 0.1 * rnd.random() / rnd.randint(20, 200)
        out.append(Entry(url, host, rnd.randint(1, 8), priority, parent, score))
        per_host[h].append(url)
    return out


def used_memory(client: redis.Redis) -> int:
    client.execute_command("MEMORY", "PURGE")
    return int(client.info("memory")["used_memory"])


def key_report(client: redis.Redis, n: int) -> tuple[dict[str, float], dict[str, int]]:
    """Bytes per URL by key type (q, h, hosts, …) and ``type:encoding`` key counts."""
    usage: collections.Counter = collections.Counter()
    enc: collections.Counter = collections.Counter()
    for key in client.scan_iter(count=2000):
        name = key.decode().split(":", 2)[-1]
        kind = name.split(":", 1)[0] if ":" in name else name
        usage[kind] += client.memory_usage(key, samples=0) or 0
        enc[f"{kind}:{client.object('encoding', key).decode()}"] += 1
    return {k: round(v / n, 1) for k, v in usage.most_common()}, dict(enc.most_common())


# Value formats of the layout-1 records (``h:<host>`` value ``depth|parent_score|parent``)
# were compared here until layout 2; layout 2 keeps parents once per parent (``p:``),
# so only the code's own format is measured now.
DATA_VARIANTS = {"current": None}

LISTPACK_1024 = {"zset-max-listpack-entries": 1024, "hash-max-listpack-entries": 1024}
LISTPACK_1024_V128 = {**LISTPACK_1024, "zset-max-listpack-value": 128, "hash-max-listpack-value": 128}
CONFIG_NAMES = {"": "default", json.dumps(LISTPACK_1024): "entries 1024",
                json.dumps(LISTPACK_1024_V128): "entries 1024, value 128"}


def config_name(config: dict[str, int]) -> str:
    return CONFIG_NAMES.get(json.dumps(config) if config else "", json.dumps(config))


def ours_memory(entries: list[Any], config: dict[str, int], variant: str) -> dict[str, Any]:
    from spitag.frontier import open_frontier
    from spitag.ranking import HostRanking

    if True:
        with RedisServer() as server:
            client = redis.Redis.from_url(server.url)
            for name, value in config.items():
                client.config_set(name, value)
            before = used_memory(client)
            frontier = open_frontier(server.url, "mem", ranking=HostRanking("posterior"))
            started = time.perf_counter()
            for i in range(0, len(entries), 1000):  # the scheduler's push batch
                frontier.queue.push(entries[i : i + 1000], "sum")
            push_seconds = time.perf_counter() - started
            after = used_memory(client)
            counts = frontier.queue.counts()
            by_key, encodings = key_report(client, len(entries))
            frontier.close()
    assert counts.queued == len(entries), counts
    return {"bytes_per_url": (after - before) / len(entries), "push_seconds": push_seconds,
            "by_key": by_key, "encodings": encodings}


def simulated_memory(entries: list[Any], config: dict[str, int], int_scores: bool = False) -> dict[str, Any]:
    """What-if layout, written with plain commands (memory depends only on what is stored):
    ``q:<host>`` as today; the seen set as ``h:<host>:<bucket>`` hashes keyed by the first
    16 hex digits of SHA-1(member) (Lua has ``redis.sha1hex``), ~100 fields per bucket so
    every bucket stays a listpack, value ``depth|parent_score``; plus hosts/ready/n.
    ``int_scores``: priorities stored as integers (micro-units), which a listpack keeps
    in 1–9 bytes instead of a 17-digit string."""
    from spitag.frontier.redis.db import encode_member

    per_host = collections.Counter(e.host for e in entries)
    with RedisServer() as server:
        client = redis.Redis.from_url(server.url)
        for name, value in config.items():
            client.config_set(name, value)
        before = used_memory(client)
        pipe = client.pipeline(transaction=False)
        p = "spitag:sim:"
        for i, e in enumerate(entries):
            host, member = encode_member(e.url)
            fp = hashlib.sha1(member.encode()).hexdigest()[:16]
            bucket = int(fp[:8], 16) % max(1, math.ceil(per_host[host] / 100))
            pipe.zadd(f"{p}q:{host}", {member: round(e.priority * 1e6) if int_scores else e.priority})
            pipe.hset(f"{p}h:{host}:{bucket}", fp, f"{e.depth}|{e.parent_score:g}")
            if i % 2000 == 1999:
                pipe.execute()
        for host in per_host:
            pipe.zadd(f"{p}hosts", {host: 0.5})
            pipe.zadd(f"{p}ready", {host: 0})
        pipe.hset(f"{p}n", "q", len(entries))
        pipe.execute()
        after = used_memory(client)
        by_key, encodings = key_report(client, len(entries))
    return {"bytes_per_url": (after - before) / len(entries), "by_key": by_key, "encodings": encodings}


def scrapy_redis_memory(entries: list[Any]) -> dict[str, Any]:
    """scrapy-redis' PriorityQueue.push + RFPDupeFilter.request_seen of real Requests
    (callback, depth meta, integer priority: what a plain spider enqueues)."""
    import scrapy
    from scrapy.utils.test import get_crawler
    from scrapy_redis.dupefilter import RFPDupeFilter
    from scrapy_redis.queue import PriorityQueue

    class Baseline(scrapy.Spider):
        name = "bench"

        def parse(self, response: Any) -> None:
            pass

    with RedisServer() as server:
        crawler = get_crawler(Baseline, scrapy_redis_settings(server.url))
        spider = Baseline.from_crawler(crawler)
        client = redis.Redis.from_url(server.url)
        before = used_memory(client)
        queue = PriorityQueue(client, spider, "%(spider)s:requests")
        dupefilter = RFPDupeFilter(client, "bench:dupefilter")
        pipe = client.pipeline(transaction=False)  # same commands, fewer round trips
        queue.server = dupefilter.server = pipe
        started = time.perf_counter()
        for i, e in enumerate(entries):
            request = scrapy.Request(e.url, callback=spider.parse, priority=int(round(e.priority * 1000)),
                                     meta={"depth": e.depth})
            dupefilter.request_seen(request)
            queue.push(request)
            if i % 1000 == 999:
                pipe.execute()
        pipe.execute()
        push_seconds = time.perf_counter() - started
        after = used_memory(client)
        n = len(entries)
        queued = client.zcard("bench:requests")
        sample = client.zrange("bench:requests", 0, 0)[0]
        result = {
            "bytes_per_url": (after - before) / n, "push_seconds": push_seconds,
            "by_key": {"requests (zset)": round(client.memory_usage("bench:requests", samples=0) / n, 1),
                       "dupefilter (set)": round(client.memory_usage("bench:dupefilter", samples=0) / n, 1)},
            "encodings": {"requests": client.object("encoding", "bench:requests").decode(),
                          "dupefilter": client.object("encoding", "bench:dupefilter").decode()},
            "pickled_request_bytes": len(sample),
        }
    assert queued == n, queued
    return result


def run_memory(args: argparse.Namespace) -> dict[str, Any]:
    print(f"[memory] {args.urls} URLs over {args.hosts} hosts …", flush=True)
    zipf = gen_entries(args.urls, args.hosts, "zipf")
    uniform = gen_entries(args.urls, args.hosts, "uniform", seed=3)
    crawl_like = gen_entries(args.urls, args.hosts, "zipf", children=20)
    sizes = collections.Counter(e.host for e in zipf)
    share = lambda limit: sum(v for v in sizes.values() if v > limit) / len(zipf)  # noqa: E731
    rows: list[dict[str, Any]] = []
    import spitag.frontier.redis.db as frontier_redis

    def add(system: str, dist: str, config: dict, variant: str, result: dict) -> None:
        rows.append({"system": system, "dist": dist, "config": config_name(config), "variant": variant, **result})
        print(f"  {system:12} {dist:7} {config_name(config):24} {variant:16} "
              f"{result['bytes_per_url']:7.1f} B/URL", flush=True)

    add("scrapy-redis", "zipf", {}, "-", scrapy_redis_memory(zipf))
    for config in ({}, LISTPACK_1024) if not args.memory_quick else ({},):
        add("spitag", "zipf", config, "current", ours_memory(zipf, config, "current"))
    add("spitag", "zipf", {}, "crawl-like", ours_memory(crawl_like, {}, "current"))
    add("spitag", "uniform", {}, "current", ours_memory(uniform, {}, "current"))
    if not args.memory_quick:
        add("simulated", "zipf", {}, "fp-buckets", simulated_memory(zipf, {}))
        add("simulated", "zipf", LISTPACK_1024, "fp-buckets", simulated_memory(zipf, LISTPACK_1024))

    parents = len({e.parent for e in zipf})
    return {
        "urls": args.urls, "hosts": args.hosts, "rows": rows,
        "zipf_hosts": {"largest": sizes.most_common(1)[0][1], "share_in_hosts_over_128": share(128),
                       "share_in_hosts_over_1024": share(1024)},
        "distinct_parents": parents,
        "distinct_parents_crawl_like": len({e.parent for e in crawl_like}),
        "mean_member_len": statistics.mean(len(frontier_redis.encode_member(e.url)[1]) for e in zipf),
        "mean_score_len": statistics.mean(len(repr(float(e.priority))) for e in zipf),
    }


# ------------------------------------------------------------------ 2. crawl (a, b, c)


def scrapy_redis_settings(redis_url: str) -> dict[str, Any]:
    return {
        "SCHEDULER": "scrapy_redis.scheduler.Scheduler",
        "DUPEFILTER_CLASS": "scrapy_redis.dupefilter.RFPDupeFilter",
        "SCHEDULER_QUEUE_CLASS": "scrapy_redis.queue.PriorityQueue",
        "REDIS_URL": redis_url,
    }


def crawl_child(kind: str, seed: str, redis_url: str, concurrency: int, stats_path: str) -> None:
    """One crawl in this (fresh) process: ``a`` scrapy-redis, ``b`` our frontier, ``c`` plain."""
    import scrapy
    from scrapy.crawler import CrawlerProcess


    class PlainSpider(scrapy.Spider):
        """Follow every link; no items. The same parse for a, b and c."""

        name = "plain"

        def __init__(self, seed: str, **kwargs: Any) -> None:
            super().__init__(**kwargs)
            self.seed = seed

        async def start(self) -> Any:
            yield scrapy.Request(self.seed, callback=self.parse)  # filtered like any other

        def parse(self, response: Any) -> Any:
            for href in response.css("a::attr(href)").getall():
                yield response.follow(href, callback=self.parse)

    class FrontierPlainSpider(PlainSpider):
        """(b): the same parse on SpiTag's scheduler (breadth-first, no other part of
        SpiTag); requests the scheduler rebuilds carry their frontier entry, and each
        page, having no item to store, is settled (acknowledged) once parsed."""

        name = "plainfrontier"
        crawl_id = "bench"

        def __init__(self, seed: str, **kwargs: Any) -> None:
            from spitag.scoring import BreadthFirst

            super().__init__(seed, **kwargs)
            self.strategy = BreadthFirst()

        def frontier_request(self, entry: Any, combine: Any = None) -> Any:
            from spitag import meta

            return meta.frontier_request(entry, callback=self.parse, combine=combine)

        def parse(self, response: Any) -> Any:
            from spitag import meta
            from spitag.outcomes import SETTLED, end

            yield from super().parse(response)
            end(self.crawler, SETTLED, [meta.url_of(response) or response.url])

    settings: dict[str, Any] = {
        "LOG_LEVEL": "INFO", "ROBOTSTXT_OBEY": False, "TELNETCONSOLE_ENABLED": False,
        "CONCURRENT_REQUESTS": concurrency, "CONCURRENT_REQUESTS_PER_DOMAIN": concurrency,
        "ITEM_PIPELINES": {}, "USER_AGENT": "SpiTag-bench/0.1",
    }
    spider: type = PlainSpider
    if kind == "a":
        settings.update(scrapy_redis_settings(redis_url))
    elif kind == "b":
        settings.update({"SCHEDULER": "spitag.scheduler.FrontierScheduler", "SPITAG_FRONTIER": redis_url})
        spider = FrontierPlainSpider
    process = CrawlerProcess(settings)
    crawler = process.create_crawler(spider)
    process.crawl(crawler, seed=seed)
    started = time.time()
    process.start()
    stats = {k: v for k, v in crawler.stats.get_stats().items() if isinstance(v, (int, float, str))}
    stats["bench/wall"] = time.time() - started
    Path(stats_path).write_text(json.dumps(stats, default=str))


def page_span(lines: list[Any]) -> tuple[int, float, int]:
    """(distinct pages answered 200, seconds from first arrival to last answer, fetches
    of a page already fetched: wasted work, not counted as pages)."""
    pages = [x for x in lines if x.status == 200 and x.path != "/robots.txt"]
    if not pages:
        return 0, float("nan"), 0
    counts = collections.Counter(x.path for x in pages)
    span = max(x.end for x in pages) - min(x.start for x in pages)
    return len(counts), span, sum(c - 1 for c in counts.values())


class Bench:
    """nginx + one redis-server shared by the crawl runs (flushed before each)."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.out = Path(args.out)
        self.site = Path(args.site) if args.site else Path(tempfile.gettempdir()) / f"spitag-bench-site-{args.pages}"
        self.plan = make_site(self.site, args.pages)
        self.nginx = Nginx(self.site).start()
        self.redis = RedisServer().start()
        self.client = redis.Redis.from_url(self.redis.url)
        self.tmp = Path(tempfile.mkdtemp(prefix="spitag-bench-"))

    def close(self) -> None:
        self.nginx.cleanup()
        self.redis.cleanup()
        shutil.rmtree(self.tmp, ignore_errors=True)

    def measure(self, procs_start: Any, timeout: float, scripted: bool) -> dict[str, Any]:
        """Start processes (``procs_start()``), wait for all; pages/s, CPU split, Redis ops.

        CPU is counted twice: over the whole run (start-up and shutdown included) and
        inside the span of the crawl (first request to last answer, from samples)."""
        self.client.flushall()
        self.client.config_resetstat()
        ops_before = commandstats(self.client)
        offset = self.nginx.log_offset()
        nginx_pids = self.nginx.pids()
        redis_pid = self.redis.proc.pid
        reaped: dict[int, tuple[int, float, float]] = {}
        procs: list[subprocess.Popen] = []

        def worker_cpu(i: int) -> Any:
            return lambda: reaped[procs[i].pid][1] if procs[i].pid in reaped else proc_cpu(procs[i].pid)

        sources: dict[str, Any] = {
            "redis": lambda: proc_cpu(redis_pid), "nginx": lambda: sum(proc_cpu(p) for p in nginx_pids),
            "busy": lambda: machine_cpu()[0], "total": lambda: machine_cpu()[1],
        }
        started = time.monotonic()
        t_start = time.time()
        procs.extend(procs_start())
        sources.update({f"w{i}": worker_cpu(i) for i in range(len(procs))})
        sampler = Sampler(sources)
        sampler.take(force=True)
        wait_all(procs, timeout, sampler, reaped)
        time.sleep(0.2)  # nginx writes its log line as it answers; let the last land
        sampler.take(force=True)
        t_end = time.time()
        ops = ops_delta(ops_before, commandstats(self.client))
        lines = self.nginx.log(offset)
        pages, span, repeated = page_span(lines)
        wall = max(r[2] for r in reaped.values()) - started

        def split(t0: float, t1: float) -> dict[str, Any]:
            workers = [sampler.between(f"w{i}", t0, t1) for i in range(len(procs))]
            redis_, nginx_ = sampler.between("redis", t0, t1), sampler.between("nginx", t0, t1)
            busy, total = sampler.between("busy", t0, t1), sampler.between("total", t0, t1)
            return {"seconds": t1 - t0, "workers": workers, "redis": redis_, "nginx": nginx_, "machine_busy": busy,
                    "others": max(busy - sum(workers) - redis_ - nginx_, 0.0), "capacity": total}

        pages_200 = [x for x in lines if x.status == 200 and x.path != "/robots.txt"]
        first = min((x.start for x in pages_200), default=t_start)
        last = max((x.end for x in pages_200), default=t_end)
        whole = split(t_start, t_end)
        whole["workers"] = [reaped[p.pid][1] for p in procs]  # exact totals (wait4)
        return {
            "exit_codes": [reaped[p.pid][0] for p in procs],
            "pages": pages, "span": span, "pages_per_s": pages / span if span else float("nan"),
            "repeated": repeated, "wall": wall,
            "cpu": whole, "cpu_span": split(first, last),
            "ops": summarize_ops(ops, pages, scripted), "ops_raw": ops,
        }

    def crawl(self, kind: str, run: int) -> dict[str, Any]:
        stats_path = self.tmp / f"crawl-{kind}-{run}.json"
        log = self.out / f"crawl-{kind}-{run}.log"

        def start() -> list[subprocess.Popen]:
            cmd = [sys.executable, str(Path(__file__).resolve()), "--_crawl", kind,
                   "--_seed", self.nginx.base_url + "/", "--_redis", self.redis.url,
                   "--concurrency", str(self.args.concurrency), "--_stats", str(stats_path)]
            return [subprocess.Popen(cmd, cwd=REPO, stdout=subprocess.DEVNULL, stderr=log.open("wb"),
                                     env={**os.environ, "PYTHONPATH": str(REPO)})]

        result = self.measure(start, timeout=900, scripted=(kind == "b"))
        stats = json.loads(stats_path.read_text()) if stats_path.exists() else {}
        result["scrapy_stats"] = {k: stats.get(k) for k in (
            "response_received_count", "scheduler/enqueued/redis", "scheduler/enqueued",
            "dupefilter/filtered", "spitag/frontier/pushed", "spitag/frontier/new",
            "spitag/frontier/acked", "spitag/frontier/popped", "bench/wall", "finish_reason")}
        return result

    def workers(self, n: int, run: int, processes: str = "0") -> dict[str, Any]:
        """``n`` workers of the full spider; ``processes``: their SPITAG_EXTRACT_PROCESSES
        (0: each worker is one process, the unit this part scales)."""
        crawl = f"bench-{n}w{processes}-{run}"

        def start() -> list[subprocess.Popen]:
            procs = []
            for w in range(n):
                name = f"workers-{n}w{processes}-{run}-{w}"
                cmd = [sys.executable, "-m", "scrapy", "crawl", "spitag", "-a", f"seeds={self.nginx.base_url}/",
                       "-a", f"crawl={crawl}", "-s", f"SPITAG_FRONTIER={self.redis.url}",
                       "-s", f"SPITAG_STORE=sqlite:///{self.tmp / name}.db", "-s", "LOG_LEVEL=INFO",
                       "-s", f"CONCURRENT_REQUESTS={self.args.concurrency}",
                       "-s", f"CONCURRENT_REQUESTS_PER_DOMAIN={self.args.concurrency}", "-s", "DOWNLOAD_DELAY=0",
                       "-s", f"SPITAG_EXTRACT_PROCESSES={processes}"]
                env = {k: v for k, v in os.environ.items() if k not in ("SPITAG_FRONTIER", "REDIS_URL", "SPITAG_STORE")}
                procs.append(subprocess.Popen(cmd, cwd=REPO, env=env, stdout=subprocess.DEVNULL,
                                              stderr=(self.out / f"{name}.log").open("wb")))
            return procs

        result = self.measure(start, timeout=1200, scripted=True)
        import sqlite3

        stored = 0
        for w in range(n):
            with sqlite3.connect(self.tmp / f"workers-{n}w{processes}-{run}-{w}.db") as conn:
                stored += conn.execute("SELECT COUNT(*) FROM url WHERE status = 200").fetchone()[0]
        result["stored_200"] = stored
        return result


def run_crawls(bench: Bench, args: argparse.Namespace) -> dict[str, Any]:
    runs: dict[str, list[dict[str, Any]]] = {"a": [], "b": [], "c": []}
    for run in range(args.runs):
        for kind in ("a", "b", "c") if run % 2 == 0 else ("c", "b", "a"):  # interleaved
            r = bench.crawl(kind, run)
            runs[kind].append(r)
            print(f"  crawl {kind} run {run}: {r['pages']} pages in {r['span']:.1f} s = {r['pages_per_s']:.0f} pages/s"
                  f" (exit {r['exit_codes']}, repeated {r['repeated']}, other processes "
                  f"{r['cpu_span']['others'] / r['span']:.2f} cores)",
                  flush=True)
    med = {k: median([r["pages_per_s"] for r in v]) for k, v in runs.items()}
    cpu = {k: {"crawler": median([r["cpu_span"]["workers"][0] / max(r["pages"], 1) * 1000 for r in v]),
               "redis": median([r["cpu_span"]["redis"] / max(r["pages"], 1) * 1000 for r in v])} for k, v in runs.items()}
    total = {k: c["crawler"] + c["redis"] for k, c in cpu.items()}
    return {"runs": runs, "median_pages_per_s": med, "cpu_ms_per_page": cpu,
            "ratios": {"b/a": med["b"] / med["a"], "b/c": med["b"] / med["c"], "a/c": med["a"] / med["c"],
                       "cpu a/b": total["a"] / total["b"], "cpu c/b": total["c"] / total["b"]}}


def run_workers(bench: Bench, args: argparse.Namespace) -> dict[str, Any]:
    """1 vs 2 workers, each one process (SPITAG_EXTRACT_PROCESSES=0: no profile pool, the
    CPU figures are the workers' own); plus 1 worker on the default (``auto``: a profile
    worker process per core), which already uses both cores by itself."""
    runs: dict[int, list[dict[str, Any]]] = {1: [], 2: []}
    pooled: list[dict[str, Any]] = []
    for run in range(args.runs):
        for n in (1, 2, 0) if run % 2 == 0 else (0, 2, 1):
            r = bench.workers(max(n, 1), run, "0" if n else "auto")
            (runs[n] if n else pooled).append(r)
            cpu = r["cpu_span"]
            label = f"{n} worker(s)" if n else "1 worker, pool"
            print(f"  {label} run {run}: {r['pages']} pages in {r['span']:.1f} s = {r['pages_per_s']:.0f} pages/s"
                  f" (exit {r['exit_codes']}, stored {r['stored_200']}, repeated {r['repeated']}; CPU s in span: "
                  f"workers {'+'.join(f'{c:.1f}' for c in cpu['workers'])} redis {cpu['redis']:.1f} nginx "
                  f"{cpu['nginx']:.1f}, other processes {cpu['others'] / r['span']:.2f} cores)", flush=True)
    med = {n: median([r["pages_per_s"] for r in v]) for n, v in runs.items()}

    def ms_per_page(n: int, part: str) -> float:
        pick = (lambda r: sum(r["cpu_span"]["workers"])) if part == "workers" else (lambda r: r["cpu_span"][part])
        return median([pick(r) / max(r["pages"], 1) * 1000 for r in runs[n]])

    # A worker is one Python process: at most one core. Two share the cores with Redis and nginx.
    cores = os.cpu_count() or 1
    one = 1000 / (ms_per_page(1, "workers") + (ms_per_page(1, "redis") + ms_per_page(1, "nginx") if cores < 2 else 0))
    total2 = ms_per_page(2, "workers") + ms_per_page(2, "redis") + ms_per_page(2, "nginx")
    two = min(1000 * min(cores, 3) / total2, 2000 / ms_per_page(2, "workers"))
    return {"runs": {str(k): v for k, v in runs.items()}, "median_pages_per_s": {str(k): v for k, v in med.items()},
            "ratio_2_1": med[2] / med[1], "ceiling": {"1": one, "2": two},
            "pooled_1": {"runs": pooled, "median_pages_per_s": median([r["pages_per_s"] for r in pooled])}}


# --------------------------------------------------------------------------- 4. ops


def redis_benchmark(requests: int) -> dict[str, Any]:
    """redis-benchmark (Debian's redis-tools) on a fresh server: plain SET, a small
    EVALSHA (one ZADD + one HSET, the shape of a one-URL push), our PUSH script with one
    new URL per call, our POP script popping 16 (after the pushes filled the queue)."""
    from spitag.frontier.redis.scripts import source

    binary = shutil.which("redis-benchmark")
    if binary is None:
        return {"error": "redis-benchmark not found (apt-get install redis-tools)"}
    out: dict[str, Any] = {}
    with RedisServer() as server:
        client = redis.Redis.from_url(server.url)
        small = client.script_load("redis.call('ZADD', KEYS[1], ARGV[1], ARGV[2]) "
                                   "redis.call('HSET', KEYS[2], ARGV[2], ARGV[3]) return 1")
        push, pop = client.script_load(source("push")), client.script_load(source("pop"))
        base = [binary, "-p", str(server.port), "-c", "50", "--csv"]
        tests = {
            "SET": ["-n", str(requests), "-r", "100000", "SET", "k:__rand_int__", "v"],
            "EVALSHA zadd+hset": ["-n", str(requests), "-r", "1000000", "EVALSHA", small, "2", "z:__rand_int__",
                                  "h:__rand_int__", "0.5", "s/news/2024/05/some-article-slug-__rand_int__.html", "3|12.0|"],
            "EVALSHA push 1 URL": ["-n", str(requests), "-r", "2000", "EVALSHA", push, "0", "spitag:rb:", "sum", "-1",
                                   "www.host__rand_int__.com", "s/news/2024/05/some-article-slug-__rand_int__.html",
                                   "0.5454", "3", "12", "www.host__rand_int__.com",
                                   "s/news/2024/05/the-parent-article-slug-1.html", ""],
            "EVALSHA pop 16": ["-n", str(max(requests // 20, 1000)), "EVALSHA", pop, "0", "spitag:rb:", "16", "60",
                               "bench-owner", "0", "16", "256", "0", "-1"],
        }
        for name, extra in tests.items():
            proc = subprocess.run(base + extra, capture_output=True, text=True, timeout=300)
            rate = None
            for line in proc.stdout.splitlines():
                cells = [c.strip('"') for c in line.split(",")]
                if len(cells) > 1 and cells[0] != "test":
                    try:
                        rate = float(cells[1])
                    except ValueError:
                        pass
            out[name] = rate if rate is not None else f"failed: {proc.stderr.strip()[:200]}"
    return out


def workers_per_redis(workers: dict[str, Any], rb: dict[str, Any]) -> dict[str, Any]:
    """How many workers one Redis sustains, three ways, from the 1-worker runs.

    A worker is taken at its CPU-bound rate (a core of its own, pages served at once:
    ``1000 / worker CPU ms per page``), the most a worker can ask of Redis; slower
    sites or a busy machine only make Redis' share smaller."""
    one = workers["runs"]["1"]
    pages_s = workers["ceiling"]["1"]
    measured = median([r["pages_per_s"] for r in one])
    cpu_per_page = median([r["cpu_span"]["redis"] / r["pages"] for r in one if r["pages"]])
    usec_per_page = median([r["ops"]["server_usec_per_page"] for r in one])
    client = collections.defaultdict(list)
    for r in one:
        for name, per_page in r["ops"]["client"].items():
            client[name].append(per_page)
    calls = {n: median(v) for n, v in client.items()}
    evalsha = calls.get("evalsha", 0.0)
    out = {
        "worker_pages_per_s": pages_s,
        "worker_pages_per_s_measured": measured,
        "redis_cpu_ms_per_page": cpu_per_page * 1000,
        "by_redis_cpu": (1 / cpu_per_page) / pages_s if cpu_per_page else None,
        "commandstats_usec_per_page": usec_per_page,
        "by_commandstats": (1e6 / usec_per_page) / pages_s if usec_per_page else None,
        "client_calls_per_page": sum(calls.values()),
        "evalsha_per_page": evalsha,
    }
    rate = rb.get("EVALSHA zadd+hset")
    if isinstance(rate, float) and out["client_calls_per_page"]:
        out["by_redis_benchmark"] = rate / (out["client_calls_per_page"] * pages_s)
    return out


# -------------------------------------------------------------------------- report


def rates(runs: list[dict[str, Any]]) -> str:
    return " ".join(format(r["pages_per_s"], ".0f") for r in runs)


def fmt(x: Any, spec: str = ".0f") -> str:
    return "—" if x is None or (isinstance(x, float) and math.isnan(x)) else format(x, spec)


def report(results: dict[str, Any]) -> str:
    lines = [f"# bench/frontier.py — {results['when']}, {os.cpu_count()} CPUs, redis {results['redis_version']}"]
    mem = results.get("memory")
    if mem:
        lines += ["", f"1. Redis memory per queued URL (seen set included), {mem['urls']} URLs over {mem['hosts']} hosts",
                  f"   zipf: largest host {mem['zipf_hosts']['largest']} URLs; "
                  f"{mem['zipf_hosts']['share_in_hosts_over_128']:.0%} of URLs in hosts > 128, "
                  f"{mem['zipf_hosts']['share_in_hosts_over_1024']:.0%} in hosts > 1024",
                  f"   mean member {mem['mean_member_len']:.0f} B, mean score text {mem['mean_score_len']:.0f} B; "
                  f"distinct parents {mem.get('distinct_parents', '?')} (crawl-like: "
                  f"{mem.get('distinct_parents_crawl_like', '?')})",
                  f"   {'system':12} {'hosts':7} {'redis config':24} {'data':16} {'B/URL':>7} {'vs sr':>6} {'push s':>6}  by key (B/URL) · encodings"]
        baseline = next(r["bytes_per_url"] for r in mem["rows"] if r["system"] == "scrapy-redis")
        for r in mem["rows"]:
            keys = " ".join(f"{k}={v}" for k, v in list(r["by_key"].items())[:6])
            enc = " ".join(f"{k}×{v}" for k, v in r["encodings"].items() if not k.startswith(("n:", "hosts:", "ready:")))
            lines.append(f"   {r['system']:12} {r['dist']:7} {r['config']:24} {r['variant']:16} "
                         f"{r['bytes_per_url']:7.1f} {r['bytes_per_url'] / baseline:6.2f} {fmt(r.get('push_seconds'), '6.1f'):>6}  {keys} · {enc}")
        lines.append("   target: spitag ≤ 160 B/URL (scrapy-redis ≈ 416 + 90)")
    crawl = results.get("crawl")
    if crawl:
        med = crawl["median_pages_per_s"]
        lines += ["", f"2. Pages/s, same plain parse, {results['pages']} pages, CONCURRENT_REQUESTS={results['concurrency']}, "
                      f"median of {len(crawl['runs']['a'])}",
                  f"   {'':28} {'pages/s':>8} {'runs':>16} {'crawler cpu ms/page':>19} {'redis cpu ms/page':>17} {'redis calls/page':>16} {'cmd µs/page':>11}"]
        names = {"a": "(a) scrapy-redis scheduler", "b": "(b) spitag FrontierScheduler", "c": "(c) plain Scrapy"}
        for k in ("a", "b", "c"):
            runs = crawl["runs"][k]
            cpu = crawl["cpu_ms_per_page"][k]
            calls = median([r["ops"]["client_calls_per_page"] for r in runs])
            usec = median([r["ops"]["server_usec_per_page"] for r in runs])
            lines.append(f"   {names[k]:28} {med[k]:8.0f} {rates(runs):>16} {cpu['crawler']:19.2f} "
                         f"{fmt(cpu['redis'], '.3f') if k != 'c' else '—':>17} "
                         f"{fmt(calls, '.2f') if k != 'c' else '—':>16} {fmt(usec, '.1f') if k != 'c' else '—':>11}")
        load = {k: median([r["cpu_span"]["others"] / r["span"] for r in crawl["runs"][k]]) for k in ("a", "b", "c")}
        used = {k: median([(r["cpu_span"]["workers"][0] + r["cpu_span"]["redis"] + r["cpu_span"]["nginx"]) / r["span"]
                           for r in crawl["runs"][k]]) for k in ("a", "b", "c")}
        lines.append("   cores used by the crawl (crawler + redis + nginx): " + ", ".join(f"{k} {used[k]:.2f}" for k in used)
                     + "; by other processes meanwhile: " + ", ".join(f"{k} {load[k]:.2f}" for k in load))
        rt = crawl["ratios"]
        lines.append(f"   b/a = {rt['b/a']:.2f}× (target ≥ 1.3×)   b/c = {rt['b/c']:.2f}×   a/c = {rt['a/c']:.2f}×   "
                     f"CPU per page (crawler + redis), a/b = {rt['cpu a/b']:.2f}×, c/b = {rt['cpu c/b']:.2f}×")
    workers = results.get("workers")
    if workers:
        med = workers["median_pages_per_s"]
        lines += ["", "3. Full spitag spider, 1 vs 2 workers on one Redis frontier (pages/s: first request → last answer in nginx's log)"]
        for n in ("1", "2"):
            runs = workers["runs"][n]
            cpu = {k: median([r["cpu_span"][k] for r in runs]) for k in ("redis", "nginx", "others", "machine_busy", "capacity")}
            per_worker = [median([r["cpu_span"]["workers"][i] for r in runs]) for i in range(int(n))]
            span = median([r["span"] for r in runs])
            others = median([r["cpu_span"]["others"] / r["span"] for r in runs])
            lines.append(f"   {n} worker(s): {med[n]:6.0f} pages/s  (runs {rates(runs)}; "
                         f"span {span:.1f} s)  CPU s in span: workers {' + '.join(f'{c:.1f}' for c in per_worker)}, "
                         f"redis {cpu['redis']:.2f}, nginx {cpu['nginx']:.2f}, other processes {cpu['others']:.1f} "
                         f"({others:.2f} cores); machine busy {cpu['machine_busy'] / max(cpu['capacity'], 1e-9):.0%}")
            per_page = median([sum(r["cpu_span"]["workers"]) / max(r["pages"], 1) * 1000 for r in runs])
            redis_pp = median([r["cpu_span"]["redis"] / max(r["pages"], 1) * 1000 for r in runs])
            nginx_pp = median([r["cpu_span"]["nginx"] / max(r["pages"], 1) * 1000 for r in runs])
            cores = median([(sum(r["cpu_span"]["workers"]) + r["cpu_span"]["redis"] + r["cpu_span"]["nginx"]) / r["span"]
                            for r in runs])
            lines.append(f"      CPU per page (in span): workers {per_page:.2f} ms, redis {redis_pp:.3f} ms, nginx {nginx_pp:.3f} ms; "
                         f"cores used by the crawl {cores:.2f} of {os.cpu_count()}")
        c = workers["ceiling"]
        lines.append(f"   2/1 = {workers['ratio_2_1']:.2f}× (target ≥ 1.5×)   CPU from wait4 rusage (workers) and /proc/<pid>/stat (redis, nginx)")
        pooled = workers.get("pooled_1")
        if pooled:
            lines.append(f"   1 worker on the default SPITAG_EXTRACT_PROCESSES=auto (a profile process per core): "
                         f"{pooled['median_pages_per_s']:.0f} pages/s (runs {rates(pooled['runs'])}) = "
                         f"{pooled['median_pages_per_s'] / med['1']:.2f}× one single-process worker")
        lines.append(f"   CPU-bound ceiling with {os.cpu_count()} free cores, from the CPU per page above: 1 worker "
                     f"{c['1']:.0f} pages/s, 2 workers {c['2']:.0f} pages/s → {c['2'] / c['1']:.2f}×")
    ops = results.get("ops")
    if ops:
        w = ops["estimate"]
        lines += ["", "4. Frontier operations and Redis capacity",
                  f"   per page, 1 worker: {w['client_calls_per_page']:.2f} client calls "
                  f"({w['evalsha_per_page']:.2f} EVALSHA), {w['commandstats_usec_per_page']:.1f} µs of Redis command time, "
                  f"{w['redis_cpu_ms_per_page']:.3f} ms of redis-server CPU",
                  "   calls per page by command: " + ", ".join(f"{k} {v}" for k, v in ops["one_worker_client"].items()),
                  "   inside the scripts, per page: " + ", ".join(f"{k} {v}" for k, v in ops["one_worker_inner"].items()),
                  "   redis-benchmark (-c 50), ops/s: " + ", ".join(f"{k} {fmt(v)}" for k, v in ops["redis_benchmark"].items()),
                  f"   one worker at its CPU-bound rate, {w['worker_pages_per_s']:.0f} pages/s (measured here: "
                  f"{w['worker_pages_per_s_measured']:.0f}) → one Redis core sustains ≈ "
                  f"{fmt(w['by_redis_cpu'])} workers by measured redis CPU, {fmt(w['by_commandstats'])} by commandstats µs, "
                  f"{fmt(w.get('by_redis_benchmark'))} by redis-benchmark calls"]
        if crawl:
            a = median([r["ops"]["client_calls_per_page"] for r in crawl["runs"]["a"]])
            b = median([r["ops"]["client_calls_per_page"] for r in crawl["runs"]["b"]])
            lines.append(f"   plain parse: scrapy-redis {a:.2f} calls/page vs spitag {b:.2f} calls/page")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=5000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--urls", type=int, default=200_000)
    parser.add_argument("--hosts", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=16, help="CONCURRENT_REQUESTS (and per domain) of every crawl")
    parser.add_argument("--out", default=str(REPO / "bench" / "out" / "frontier"))
    parser.add_argument("--site", default=None, help="folder of the generated site (reused)")
    parser.add_argument("--only", default="memory,crawl,workers,ops")
    parser.add_argument("--memory-quick", action="store_true",
                        help="memory part: only the default Redis config (no listpack-1024 or simulated rows)")
    parser.add_argument("--benchmark-requests", type=int, default=100_000)
    parser.add_argument("--report", metavar="JSON", help="print the table of an earlier run's frontier.json")
    parser.add_argument("--_crawl", help=argparse.SUPPRESS)
    parser.add_argument("--_seed", help=argparse.SUPPRESS)
    parser.add_argument("--_redis", help=argparse.SUPPRESS)
    parser.add_argument("--_stats", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args._crawl:
        crawl_child(args._crawl, args._seed, args._redis, args.concurrency, args._stats)
        return
    if args.report:
        saved = json.loads(Path(args.report).read_text())
        if "ops" in saved and "workers" in saved:  # estimates from the saved measurements
            saved["ops"]["estimate"] = workers_per_redis(saved["workers"], saved["ops"]["redis_benchmark"])
        print(report(saved))
        return
    only = set(args.only.split(","))
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    results: dict[str, Any] = {
        "when": time.strftime("%Y-%m-%d %H:%M"), "pages": args.pages, "concurrency": args.concurrency,
        "redis_version": subprocess.run(["redis-server", "--version"], capture_output=True, text=True).stdout.split()[2].removeprefix("v="),
        "args": {k: v for k, v in vars(args).items() if not k.startswith("_")},
    }
    started = time.monotonic()
    if "memory" in only:
        results["memory"] = run_memory(args)
    if only & {"crawl", "workers", "ops"}:
        bench = Bench(args)
        try:
            if "crawl" in only:
                print(f"[crawl] {args.pages} pages at {bench.nginx.base_url}/ …", flush=True)
                results["crawl"] = run_crawls(bench, args)
            if only & {"workers", "ops"}:
                print("[workers] full spitag spider, 1 and 2 workers …", flush=True)
                results["workers"] = run_workers(bench, args)
        finally:
            bench.close()
    if "ops" in only and "workers" in results:
        print("[ops] redis-benchmark …", flush=True)
        rb = redis_benchmark(args.benchmark_requests)
        one = results["workers"]["runs"]["1"]
        names = sorted({n for r in one for n in r["ops"]["client"]})
        inner = sorted({n for r in one for n in r["ops"]["inner"]})
        results["ops"] = {
            "redis_benchmark": rb,
            "estimate": workers_per_redis(results["workers"], rb),
            "one_worker_client": {n: round(median([r["ops"]["client"].get(n, 0) for r in one]), 3) for n in names},
            "one_worker_inner": {n: round(median([r["ops"]["inner"].get(n, 0) for r in one]), 3) for n in inner},
        }
    results["seconds"] = time.monotonic() - started
    text = report(results)
    print()
    print(text)
    print(f"\n({results['seconds']:.0f} s; JSON and logs in {out})")
    (out / "frontier.json").write_text(json.dumps(results, indent=1, default=str))
    (out / "frontier.txt").write_text(text + "\n")


if __name__ == "__main__":
    main()
