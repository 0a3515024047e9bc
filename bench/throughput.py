"""The full semantic pipeline against plain Scrapy: pages/s, CPU and items/s on three local webs.

    python bench/throughput.py [--rounds 3] [--pages 5000] [--webs synthetic,real,hosts]
                               [--configs a,b,b2,c,d,e] [--concurrency 16] [--out bench/out/throughput]
    python bench/throughput.py --profile d [--webs synthetic,real]      # one crawl under cProfile
    python bench/throughput.py --report bench/out/throughput/throughput.json

Configs, each crawl a fresh process (bench/throughput_crawl.py for a–c, ``scrapy crawl
spitag`` for d, e), all at the same concurrency, same scope (the seed's host), robots.txt
obeyed:

* (a) plain Scrapy, ``LinkExtractor`` link following only (the baseline);
* (b) (a) on scrapy-redis (Scheduler + PriorityQueue + RFPDupeFilter, a real redis-server);
* (b2) (b) + (c)'s parse;
* (c) (a) + ``extruct.extract(html, base_url=url)`` per page (every syntax), items to JSON lines;
* (d) SpiTag, embedded defaults (SQLite store and frontier, fresh per run), ``-O out.jsonl``;
* (e) SpiTag on a Redis frontier and a PostgreSQL store (real servers, fresh per run);
* (e2) two (e) workers of one crawl on one Redis and one PostgreSQL database, each
  stopping at half the responses (the web of many hosts only);
* (dbfs) (d) with ``SPITAG_STRATEGY=bfs``;
* (dorder) (d) given, as its seeds and nothing more (``SPITAG_MAX_DEPTH=0``), the pages
  the same round's (a) crawl fetched, in (a)'s order: SpiTag's cost per page on plain
  Scrapy's pages, apart from the cost of choosing its own.

Webs (bench/throughput_webs.py), served by nginx on 127.0.0.1 (bench/serve.py): the
synthetic site of bench/serve.py (``--pages`` light pages), the 600 real pages of the
corpus made crawlable (hubs + links appended), both under one host and crawled whole
by a, b, b2, c, d, e; and ``hosts`` (bench/throughput_hosts.py): the corpus' 20 real
sites and its 600 heavy pages under several hundred host names, ~5,000 pages, of which
each config fetches ``--hosts-pages`` responses (1,000) in its own order: a, b2, c,
d, e, e2, dbfs, dorder. On ``hosts`` a run also reports MB/s, the CPU of the crawler process and
of its profile workers apart, cores busy (CPU seconds of all the crawl's processes
over its wall seconds), the workers' peak RSS and semantic items per second: the true
counts (bench/webgen.py's ``semantic_counts``) of the pages it got, per second. Rounds are interleaved (a b b2 c d e, a b …,
web after web in each round); medians over the rounds. Pages/s is nginx's count of
distinct pages answered 200 over the span from the first request's arrival to the last
answer (bench/frontier.py's ``page_span``); CPU is the crawler process' user + sys
(``wait4`` rusage), over the pages; peak RSS its ``ru_maxrss``. A run that did not get
every page of the web answered 200 is a failed run (printed, left out of the medians).

Also prints the per-page time of ``spitag.extract.profile_html`` on the 600 real pages
(as bench/profile_corpus.py measures it) and the per-page extraction budget setting, if
any. Writes ``<out>/throughput.json`` (every run and the summary) and ``throughput.txt``.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import pstats
import re
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

from frontier import machine_cpu, page_span, proc_cpu  # noqa: E402
from throughput_hosts import page_key  # noqa: E402
from throughput_webs import Web, hosts_web, real_web, synthetic_web  # noqa: E402

CONFIGS = ("a", "b", "b2", "c", "d", "e", "e2", "dbfs", "dorder")
WEB_CONFIGS = {"synthetic": CONFIGS[:6], "real": CONFIGS[:6],
               "hosts": ("a", "b2", "c", "d", "e", "e2", "dbfs", "dorder")}
SPITAG = ("d", "e", "e2", "dbfs", "dorder")
NAMES = {
    "a": "(a) plain Scrapy, links only",
    "b": "(b) scrapy-redis, links only",
    "b2": "(b2) scrapy-redis + extruct",
    "c": "(c) plain Scrapy + extruct",
    "d": "(d) SpiTag, SQLite (defaults)",
    "e": "(e) SpiTag, Redis + PostgreSQL",
    "e2": "(e2) two (e) workers, one Redis",
    "dbfs": "(dbfs) SpiTag, SPITAG_STRATEGY=bfs",
    "dorder": "(dorder) SpiTag on (a)'s pages",
}
TARGETS = (("d", "a", 0.75), ("e", "a", 0.6), ("e", "b2", 2.0), ("d", "c", 2.3))
HOSTS_TARGETS = (("d", "a", 0.6), ("dbfs", "a", 0.75))  # pages/s on the web of many hosts
HOSTS_CPU_TARGET = 2.5  # d's CPU per page (all its processes) at most this × a's
HOSTS_ITEMS_TARGET = 15.0  # d's semantic items per second at least this × c's
HOSTS_CORES_TARGET = 1.7  # cores d keeps busy (of 2)
TICK = os.sysconf("SC_CLK_TCK")
TIMEOUT = 3600.0


def median(values: list[float]) -> float:
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else float("nan")


def thread_cpu(pid: int) -> dict[int, float]:
    """CPU seconds of each live thread of ``pid`` (/proc/<pid>/task/<tid>/stat)."""
    out = {}
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return out
    for tid in tids:
        try:
            fields = Path(f"/proc/{pid}/task/{tid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        out[int(tid)] = (int(fields[11]) + int(fields[12])) / TICK
    return out


def tree_cpu(pid: int) -> float:
    """CPU seconds of a process, its reaped children (cutime/cstime) and its live
    children: a PostgreSQL postmaster and its backends, the exited ones included."""
    def stat(p: int) -> list[str] | None:
        try:
            return Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            return None

    def total(fields: list[str]) -> float:
        return sum(int(fields[i]) for i in (11, 12, 13, 14)) / TICK

    own = stat(pid)
    if own is None:
        return 0.0
    out = total(own)
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            fields = stat(int(entry))
            if fields is not None and int(fields[1]) == pid:
                out += total(fields)
    return out


# ----------------------------------------------------------------------- servers


class Servers:
    """redis-server and PostgreSQL when some config needs them (testbed)."""

    def __init__(self, configs: list[str]) -> None:
        self.redis = self.pg = None
        self.client = None
        if {"b", "b2", "e", "e2"} & set(configs):
            import redis

            from testbed.redisserver import RedisServer

            self.redis = RedisServer().start()
            self.client = redis.Redis.from_url(self.redis.url)
        if {"e", "e2"} & set(configs):
            from testbed.pgserver import PgServer

            self.pg = PgServer().start()

    def redis_cpu(self) -> float:
        return proc_cpu(self.redis.proc.pid) if self.redis else 0.0

    def pg_pid(self) -> int | None:
        if self.pg is None:
            return None
        try:
            return int((self.pg.data / "postmaster.pid").read_text().split()[0])
        except (OSError, ValueError, IndexError):
            return None

    def pg_cpu(self) -> float:
        pid = self.pg_pid()
        return tree_cpu(pid) if pid else 0.0

    def close(self) -> None:
        if self.redis:
            self.redis.cleanup()
        if self.pg:
            self.pg.cleanup()


# ------------------------------------------------------------------------ a crawl


def crawl_command(config: str, web: Web, servers: Servers, folder: Path, name: str,
                  concurrency: int, extra: tuple[str, ...] = (), pages: int | None = None,
                  order: Path | None = None) -> list[str]:
    """``pages``: responses a crawl of the web of many hosts stops at; ``order``: the
    seed file of (dorder), the pages (a) fetched, in its order."""
    if config in ("a", "b", "b2", "c"):
        cmd = [str(BENCH / "throughput_crawl.py"), config, web.seed, "--concurrency", str(concurrency),
               "--stats", str(folder / "stats.json"), "--out", str(folder / "items.jsonl")]
        if config in ("b", "b2"):
            cmd += ["--redis", servers.redis.url]
        if web.proxy:
            cmd += ["--any-host", "--pages", str(pages)]
        return cmd
    if config in ("e", "e2"):
        store = servers.pg.create_database(name.replace("-", "_"))
        frontier = servers.redis.url
    else:
        store = f"sqlite:///{folder / 'store.db'}"
        frontier = f"sqlite:///{folder / 'frontier.db'}"
    seeds = web.seed
    more: list[str] = []
    if web.proxy:
        more += ["SPITAG_SCOPE=any", f"CLOSESPIDER_PAGECOUNT={pages}"]
    if config == "dbfs":
        more.append("SPITAG_STRATEGY=bfs")
    if config == "dorder":
        if order is None:
            raise ValueError("dorder needs the pages of an (a) crawl of the same round: put a before dorder")
        seeds = str(order)
        more += ["SPITAG_MAX_DEPTH=0", "SPITAG_STRATEGY=bfs"]
    return ["-m", "scrapy", "crawl", "spitag", "-a", f"seeds={seeds}", "-a", f"crawl={name}",
            "-O", str(folder / "items.jsonl"),
            "-s", f"SPITAG_STORE={store}", "-s", f"SPITAG_FRONTIER={frontier}",
            "-s", f"CONCURRENT_REQUESTS={concurrency}", "-s", f"CONCURRENT_REQUESTS_PER_DOMAIN={concurrency}",
            "-s", "DOWNLOAD_DELAY=0", "-s", "LOG_LEVEL=INFO", *(a for kv in (*more, *extra) for a in ("-s", kv))]


def crawl_commands(config: str, web: Web, servers: Servers, folder: Path, name: str,
                   concurrency: int, extra: tuple[str, ...] = (), pages: int | None = None,
                   order: Path | None = None) -> list[list[str]]:
    """One crawl's processes: (e2) is two (e) workers of one crawl on one Redis frontier
    and one PostgreSQL database, each stopping at half the responses; every other config
    is one process."""
    if config != "e2":
        return [crawl_command(config, web, servers, folder, name, concurrency, extra, pages, order)]
    first = crawl_command(config, web, servers, folder, name, concurrency, extra,
                          -(-pages // 2) if pages else None, order)
    second = list(first)
    second[second.index("-O") + 1] = str(folder / "items-2.jsonl")
    return [first, second]


def process_tree(root: int) -> dict[int, tuple[float, int]]:
    """CPU seconds and peak resident kB (VmHWM) of ``root`` and every live descendant."""
    parent: dict[int, int] = {}
    cpu: dict[int, float] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parent[int(entry)] = int(fields[1])
        cpu[int(entry)] = (int(fields[11]) + int(fields[12])) / TICK
    tree = {root}
    grown = True
    while grown:
        grown = False
        for pid, ppid in parent.items():
            if ppid in tree and pid not in tree:
                tree.add(pid)
                grown = True
    out = {}
    for pid in tree:
        hwm = 0
        try:
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    hwm = int(line.split()[1])
        except OSError:
            continue
        out[pid] = (cpu.get(pid, 0.0), hwm)
    return out


def run_crawl(config: str, web: Web, servers: Servers, out: Path, tag: str, concurrency: int,
              profile: Path | None = None, extra: tuple[str, ...] = (), pages_budget: int | None = None,
              order: Path | None = None) -> dict[str, Any]:
    folder = out / "runs" / f"{web.name}-{config}-{tag}"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    name = f"tp-{web.name}-{config}-{tag}-{os.getpid()}"
    if servers.client is not None:
        servers.client.flushall()
    commands = crawl_commands(config, web, servers, folder, name, concurrency, extra, pages_budget, order)
    if profile is not None and len(commands) > 1:
        raise ValueError(f"--profile runs one process, and {config} is {len(commands)}")
    cmds = [[sys.executable, *args] for args in commands]
    if profile is not None:
        cmds = [[sys.executable, str(BENCH / "throughput_profile.py"), str(profile), *commands[0]]]
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("SPITAG_") and k != "REDIS_URL" and k.lower() not in PROXY_VARIABLES}
    env["PYTHONPATH"] = str(REPO)
    if web.proxy:
        env["http_proxy"] = env["https_proxy"] = web.proxy
    offset = web.nginx.log_offset()
    nginx_pids = web.nginx.pids()
    load = os.getloadavg()
    before = {"redis": servers.redis_cpu(), "pg": servers.pg_cpu(),
              "nginx": sum(proc_cpu(p) for p in nginx_pids), "machine": machine_cpu()}
    started = time.monotonic()
    procs = []
    for i, cmd in enumerate(cmds):
        with (folder / ("crawler.log" if i == 0 else f"crawler-{i + 1}.log")).open("wb") as log:
            procs.append(subprocess.Popen(cmd, cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=log))
    deadline = time.monotonic() + TIMEOUT
    tasks: dict[int, float] = {}  # thread id → CPU seconds, last sample
    tree: dict[int, tuple[float, int]] = {}  # pid → (CPU seconds, peak kB), last sample
    usages: dict[int, Any] = {}  # crawler pid → its rusage, once reaped
    exits: dict[int, int] = {}
    while len(usages) < len(procs):
        for proc in procs:
            if proc.pid in usages:
                continue
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                usages[proc.pid], exits[proc.pid] = usage, os.waitstatus_to_exitcode(status)
                proc.returncode = exits[proc.pid]
                continue
            tasks.update(thread_cpu(proc.pid))
            for p, (cpu, hwm) in process_tree(proc.pid).items():  # a zombie's last look has no VmHWM
                tree[p] = (max(cpu, tree.get(p, (0.0, 0))[0]), max(hwm, tree.get(p, (0.0, 0))[1]))
            if time.monotonic() > deadline:
                proc.kill()
        time.sleep(0.25)
    crawlers = [proc.pid for proc in procs]
    wall = time.monotonic() - started
    time.sleep(0.3)  # the last log lines, backends exiting
    after = {"redis": servers.redis_cpu(), "pg": servers.pg_cpu(),
             "nginx": sum(proc_cpu(p) for p in nginx_pids), "machine": machine_cpu()}
    lines = web.nginx.log(offset)
    with (folder / "answers.tsv").open("w") as f:  # when each request came and went
        f.writelines(f"{x.start:.3f}\t{x.end:.3f}\t{x.status}\t{x.path}\n" for x in lines)
    pages, span, repeated = page_span(lines)
    got = {x.path for x in lines if x.status == 200 and x.path != "/robots.txt"}
    user = sum(u.ru_utime for u in usages.values())
    system = sum(u.ru_stime for u in usages.values())
    cpu = user + system
    servers_cpu = {k: after[k] - before[k] for k in ("redis", "pg", "nginx")}
    busy = after["machine"][0] - before["machine"][0]
    capacity = after["machine"][1] - before["machine"][1]
    others = max(busy - cpu - sum(servers_cpu.values()), 0.0)
    items = None
    if (folder / "items.jsonl").exists():
        with (folder / "items.jsonl").open("rb") as f:
            items = sum(1 for _ in f)
    missing = sorted(web.expected - got)
    r: dict[str, Any] = {
        "web": web.name, "config": config, "tag": tag, "processes": len(procs),
        "exit": next((e for e in exits.values() if e), 0),
        "pages": pages, "expected": len(web.expected), "missing": len(missing), "missing_sample": missing[:5],
        "extra": len(got - web.expected), "repeated": repeated,
        "non_200": sum(1 for x in lines if x.status != 200 and x.path != "/robots.txt"),
        "span": span, "pages_per_s": pages / span if span and span == span else float("nan"),
        "wall": wall, "cpu_s": cpu, "user_s": user, "sys_s": system,
        "cpu_ms_per_page": cpu / max(pages, 1) * 1000,
        "maxrss_mb": max(u.ru_maxrss for u in usages.values()) / 1024,
        "main_thread_cpu_s": sum(tasks.get(pid, 0.0) for pid in crawlers),
        "other_threads_cpu_s": sum(v for k, v in tasks.items() if k not in crawlers),
        "server_cpu_ms_per_page": {k: v / max(pages, 1) * 1000 for k, v in servers_cpu.items()},
        "others_cores": others / wall if wall else None, "machine_busy": busy / capacity if capacity else None,
        "loadavg": load, "items": items,
    }
    r["ok"] = r["exit"] == 0 and r["missing"] == 0 and pages == len(web.expected)
    if web.values:
        r.update(hosts_figures(web, lines, r, tree, crawlers))
        if config == "a":  # (dorder)'s seeds: the pages a fetched, in its order
            first = dict.fromkeys(page_key(x.path) for x in sorted(lines, key=lambda x: x.start)
                                  if x.status == 200 and page_key(x.path) in web.values)
            (folder / "order.txt").write_text("".join(f"http://{key}\n" for key in first))
    stats_file = folder / "stats.json"
    if stats_file.exists():
        stats = json.loads(stats_file.read_text())
        r["scrapy"] = {k: stats.get(k) for k in ("response_received_count", "item_scraped_count",
                                                 "dupefilter/filtered", "finish_reason")}
    if config in ("e", "e2") and servers.pg is not None:
        servers.pg.drop_database(name.replace("-", "_"))
    for big in ("store.db", "items.jsonl", "items-2.jsonl", "frontier.db"):
        path = folder / big
        if path.exists():
            r.setdefault("file_mb", {})[big] = path.stat().st_size / 1e6
            path.unlink()
    return r


PROXY_VARIABLES = ("http_proxy", "https_proxy", "no_proxy", "all_proxy")


def hosts_figures(web: Web, lines: list[Any], r: dict[str, Any], tree: dict[int, tuple[float, int]],
                  crawlers: list[int]) -> dict[str, Any]:
    """A run on the web of many hosts: its HTML pages answered 200 (each page once),
    their bytes and true semantic counts, over the span from the first request to the
    last answer; CPU and peak RSS of the crawler processes and of their descendants
    (the profile workers) apart; cores busy."""
    got: dict[str, Any] = {}
    for x in lines:
        key = page_key(x.path)
        if x.status == 200 and key in web.values and key not in got:
            got[key] = x
    if not got:
        return {"ok": False, "pages": 0}
    span = max(x.end for x in got.values()) - min(x.start for x in got.values())
    items = sum(web.values[k] for k in got)
    workers_cpu = sum(cpu for pid, (cpu, _) in tree.items() if pid not in crawlers)
    crawler_cpu = max(r["cpu_s"] - workers_cpu, 0.0)  # wait4 counts the reaped workers in
    pages = len(got)
    return {
        "pages": pages, "span": span, "pages_per_s": pages / span, "ok": r["exit"] == 0,
        "responses": sum(1 for x in lines if x.path.split("/", 1)[-1] != "robots.txt"),
        "mb_per_s": sum(x.bytes for x in got.values()) / 1e6 / span,
        "items": items, "items_per_s": items / span, "items_per_page": items / pages,
        "crawler_cpu_ms_per_page": crawler_cpu / pages * 1000, "workers_cpu_ms_per_page": workers_cpu / pages * 1000,
        "cpu_ms_per_page": r["cpu_s"] / pages * 1000,
        "cores_busy": r["cpu_s"] / r["wall"] if r["wall"] else None,
        "crawler_peak_mb": max(tree.get(pid, (0, 0))[1] for pid in crawlers) / 1024,
        "workers_peak_mb": max((hwm for pid, (_, hwm) in tree.items() if pid not in crawlers), default=0) / 1024,
    }


def run_line(r: dict[str, Any]) -> str:
    if "items_per_s" in r:
        return (f"  {r['web']:9} {r['config']:6} {r['tag']}: {r['pages']:5d} pages ({r['responses']} responses) in "
                f"{r['span']:6.1f} s = {r['pages_per_s']:6.1f} pages/s, {r['mb_per_s']:5.1f} MB/s, "
                f"{r['items_per_s']:7.0f} items/s ({r['items_per_page']:.1f} a page), CPU ms/page crawler "
                f"{r['crawler_cpu_ms_per_page']:6.1f} + workers {r['workers_cpu_ms_per_page']:6.1f}, "
                f"cores busy {r['cores_busy']:.2f}, peak RSS crawler {r['crawler_peak_mb']:.0f} MB, "
                f"workers {r['workers_peak_mb']:.0f} MB{'' if r['ok'] else '  FAILED (exit %s)' % r['exit']}")
    if "items_per_s" not in r and r.get("pages") == 0:
        return f"  {r['web']:9} {r['config']:6} {r['tag']}: no page  FAILED (exit {r['exit']})"
    srv = r["server_cpu_ms_per_page"]
    shown = {"b": ("redis",), "b2": ("redis",), "e": ("redis", "pg"), "e2": ("redis", "pg")}.get(r["config"], ())
    extra = "".join(f" +{k} {srv[k]:.2f}" for k in shown)
    flag = "" if r["ok"] else f"  FAILED (exit {r['exit']}, {r['missing']} pages missing, e.g. {r['missing_sample'][:2]})"
    return (f"  {r['web']:9} {r['config']:2} {r['tag']}: {r['pages']:5d}/{r['expected']} pages in {r['span']:6.1f} s = "
            f"{r['pages_per_s']:6.1f} pages/s, CPU {r['cpu_ms_per_page']:6.2f} ms/page{extra}, RSS {r['maxrss_mb']:5.0f} MB, "
            f"wall {r['wall']:5.1f} s (threads: main {r['main_thread_cpu_s']:.1f} s CPU, others {r['other_threads_cpu_s']:.1f} s), "
            f"other processes {r['others_cores'] or 0:.2f} cores, load {r['loadavg'][0]:.2f}{flag}")


# ----------------------------------------------------------------------- summary


def summarize(runs: list[dict[str, Any]], webs: list[str], configs: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for web in webs:
        table: dict[str, Any] = {}
        for c in configs:
            mine = [r for r in runs if r["web"] == web and r["config"] == c]
            ok = [r for r in mine if r["ok"]]
            if not mine:
                continue
            server = {k: median([r["server_cpu_ms_per_page"][k] for r in ok]) for k in ("redis", "pg", "nginx")}
            crawler = median([r["cpu_ms_per_page"] for r in ok])
            table[c] = {
                "runs": len(mine), "ok": len(ok), "pages": sorted({r["pages"] for r in mine}),
                "expected": mine[0]["expected"],
                "pages_per_s": median([r["pages_per_s"] for r in ok]),
                "all_pages_per_s": [round(r["pages_per_s"], 1) for r in mine],
                "cpu_ms_per_page": crawler, "server_cpu_ms_per_page": server,
                "total_cpu_ms_per_page": crawler + server["redis"] + server["pg"],
                "maxrss_mb": median([r["maxrss_mb"] for r in ok]),
                "others_cores": median([r["others_cores"] for r in ok]),
            }
        ratios = []
        for num, den, target in TARGETS:
            if num in table and den in table:
                speed = table[num]["pages_per_s"] / table[den]["pages_per_s"]
                cpu = table[den]["cpu_ms_per_page"] / table[num]["cpu_ms_per_page"]
                total = table[den]["total_cpu_ms_per_page"] / table[num]["total_cpu_ms_per_page"]
                ratios.append({"ratio": f"{num}/{den}", "target": target, "pages_per_s": speed,
                               "met": speed >= target, "crawler_cpu": cpu, "total_cpu": total})
        out[web] = {"table": table, "ratios": ratios}
        if any("items_per_s" in r for r in runs if r["web"] == web):
            out[web] = summarize_hosts([r for r in runs if r["web"] == web and "items_per_s" in r], configs)
    return out


HOSTS_COLUMNS = ("pages_per_s", "mb_per_s", "items_per_s", "items_per_page", "crawler_cpu_ms_per_page",
                 "workers_cpu_ms_per_page", "cpu_ms_per_page", "cores_busy", "crawler_peak_mb", "workers_peak_mb")


def summarize_hosts(runs: list[dict[str, Any]], configs: list[str]) -> dict[str, Any]:
    """Medians per config on the web of many hosts, and its targets."""
    table = {}
    for c in configs:
        ok = [r for r in runs if r["config"] == c and r["ok"]]
        if ok:
            table[c] = {"runs": sum(1 for r in runs if r["config"] == c), "ok": len(ok),
                        "pages": median([r["pages"] for r in ok]),
                        "all_pages_per_s": [round(r["pages_per_s"], 1) for r in ok],
                        **{k: median([r[k] for r in ok]) for k in HOSTS_COLUMNS}}
    checks = []

    def check(what: str, value: float, target: float, at_most: bool = False) -> None:
        checks.append({"what": what, "value": value, "target": target,
                       "met": value <= target if at_most else value >= target, "at_most": at_most})

    for num, den, target in HOSTS_TARGETS:
        if num in table and den in table:
            check(f"{num}/{den} pages/s", table[num]["pages_per_s"] / table[den]["pages_per_s"], target)
    if "d" in table and "a" in table:
        check("d/a CPU per page", table["d"]["cpu_ms_per_page"] / table["a"]["cpu_ms_per_page"],
              HOSTS_CPU_TARGET, at_most=True)
    if "d" in table and "c" in table:
        check("d/c items/s", table["d"]["items_per_s"] / table["c"]["items_per_s"], HOSTS_ITEMS_TARGET)
    if "d" in table:
        check("d cores busy", table["d"]["cores_busy"], HOSTS_CORES_TARGET)
    for num, den, what in (("e", "d", "pages/s"), ("e2", "e", "pages/s"), ("e2", "b2", "pages/s"),
                           ("e2", "b2", "items/s")):
        if num in table and den in table:  # distributed mode: no target, reported
            key = "pages_per_s" if what == "pages/s" else "items_per_s"
            checks.append({"what": f"{num}/{den} {what}", "target": None,
                           "value": table[num][key] / table[den][key]})
    if "dorder" in table and "d" in table:
        checks.append({"what": "d/dorder CPU per page (the cost of SpiTag's own pages)", "target": None,
                       "value": table["d"]["cpu_ms_per_page"] / table["dorder"]["cpu_ms_per_page"]})
    return {"hosts_table": table, "checks": checks}


def hosts_report(web: str, info: dict[str, Any], part: dict[str, Any]) -> list[str]:
    lines = ["", f"## {web} web: {info['pages']} pages ({info['site_pages']} of 20 real sites, {info['loose_pages']} "
                 f"single real pages) on {info['hosts']} hosts, ~{info['mean_bytes'] / 1000:.0f} KB a page; "
                 f"{info.get('budget')} responses a crawl",
             f"   {'config':34} {'pages':>6} {'pages/s':>8} {'MB/s':>6} {'items/s':>8} {'items/page':>10} "
             f"{'CPU ms/page: crawler':>21} {'+ workers':>9} {'= all':>7} {'cores':>6} {'RSS crawler':>11} {'workers':>8}"]
    for c, row in part["hosts_table"].items():
        lines.append(f"   {NAMES[c]:34} {row['pages']:6.0f} {row['pages_per_s']:8.1f} {row['mb_per_s']:6.1f} "
                     f"{row['items_per_s']:8.0f} {row['items_per_page']:10.1f} {row['crawler_cpu_ms_per_page']:21.1f} "
                     f"{row['workers_cpu_ms_per_page']:9.1f} {row['cpu_ms_per_page']:7.1f} {row['cores_busy']:6.2f} "
                     f"{row['crawler_peak_mb']:8.0f} MB {row['workers_peak_mb']:5.0f} MB"
                     + ("" if row["ok"] == row["runs"] else f"  {row['runs'] - row['ok']} FAILED"))
    for ch in part["checks"]:
        if ch["target"] is None:
            lines.append(f"   {ch['what']}: {ch['value']:.2f}×")
        else:
            bound = "≤" if ch["at_most"] else "≥"
            lines.append(f"   {ch['what']}: {ch['value']:.2f} (target {bound} {ch['target']}: "
                         f"{'met' if ch['met'] else 'MISSED'})")
    lines.append("   pages: distinct HTML pages answered 200 (nginx log), each once; pages/s, MB/s and items/s over"
                 " the first request → last answer; items: the pages' true semantic counts (bench/webgen.py);"
                 " CPU: the crawler process and its profile workers (all its descendants), start-up included;"
                 " cores: CPU seconds of all of them over the crawl's wall seconds")
    return lines


def fmt(x: Any, spec: str) -> str:
    return "—" if x is None or (isinstance(x, float) and x != x) else format(x, spec)


def report(results: dict[str, Any]) -> str:
    lines = [f"# bench/throughput.py — {results['when']}, {results['cpus']} CPUs, concurrency {results['concurrency']}, "
             f"rounds {results['rounds']}; load average at start {results['load_start']}, at end {results.get('load_end')}"]
    for web, part in results["summary"].items():
        info = results["webs"][web]
        if "hosts_table" in part:
            lines += hosts_report(web, info, part)
            continue
        desc = (f"{info['pages']} pages, ~{info.get('mean_bytes', info.get('mean_bytes_sampled', 0)) / 1000:.0f} KB each"
                + (f" (+ {info['hubs']} hubs and the index; {info['not_utf8']} not UTF-8)" if web == "real" else ""))
        lines += ["", f"## {web} web: {desc}",
                  f"   {'config':34} {'pages':>11} {'pages/s':>8} {'runs (pages/s)':>22} {'CPU ms/page':>11} "
                  f"{'+redis':>7} {'+pg':>7} {'peak RSS':>9} {'others':>7}"]
        for c, row in part["table"].items():
            pages = "/".join(str(p) for p in row["pages"]) + f"/{row['expected']}" if len(row["pages"]) > 1 or row["pages"][0] != row["expected"] else f"{row['expected']}"
            runs = " ".join(fmt(v, ".0f") for v in row["all_pages_per_s"])
            srv = row["server_cpu_ms_per_page"]
            failed = "" if row["ok"] == row["runs"] else f"  {row['runs'] - row['ok']} FAILED"
            lines.append(f"   {NAMES[c]:34} {pages:>11} {fmt(row['pages_per_s'], '8.1f')} {runs:>22} "
                         f"{fmt(row['cpu_ms_per_page'], '11.2f')} {fmt(srv['redis'] if c in ('b', 'b2', 'e') else None, '7.2f')} "
                         f"{fmt(srv['pg'] if c == 'e' else None, '7.2f')} {fmt(row['maxrss_mb'], '6.0f')} MB "
                         f"{fmt(row['others_cores'], '7.2f')}{failed}")
        for rt in part["ratios"]:
            lines.append(f"   {rt['ratio']:5} = {rt['pages_per_s']:5.2f}× pages/s (target ≥ {rt['target']}: "
                         f"{'met' if rt['met'] else 'MISSED'});  by CPU per page: crawler {rt['crawler_cpu']:5.2f}×, "
                         f"crawler + redis + pg {rt['total_cpu']:5.2f}×")
    lines += ["", "   pages/s: distinct pages answered 200 (nginx log) / first request → last answer; CPU: the crawler"
              " process' user+sys (wait4), start-up included, per page; +redis/+pg: those servers' CPU per page;"
              " others: cores busy with other processes during the run"]
    prof = results.get("corpus_profile")
    if prof:
        lines += ["", f"## spitag.extract.profile_html on the {prof['pages']} real pages (one process, one page after the other)",
                  f"   median {prof['median_ms']:.1f} ms, p95 {prof['p95_ms']:.1f} ms, p99 {prof['p99_ms']:.1f} ms, "
                  f"max {prof['max_ms']:.1f} ms, total {prof['total_s']:.1f} s; slowest: "
                  + ", ".join(f"{f} {ms:.0f} ms" for f, ms in prof["slowest"])]
    for h in results.get("heavy", []):
        if "error" in h:
            lines.append(f"   {h['page']}: failed: {h['error']}")
            continue
        if h is results["heavy"][0]:
            lines += ["", f"## pathological pages (testbed/heavy.py), profile_html with SPITAG_EXTRACT_BUDGET = "
                          f"{h['budget']} s and SPITAG_EXTRACT_MEMORY = {h['memory_mb']:.0f} MB, a fresh process each"]
        lines.append(f"   {h['page']:15} {h['mb']:4.1f} MB: {h['seconds']:6.2f} s, peak RSS {h['peak_mb']:5.0f} MB, "
                     f"cut {h['cut']} ({h['cut_by']}), skipped {h['skipped']}")
    budget = results.get("budget")
    if budget is not None:
        lines += ["", "## per-page extraction budget setting: " + (
            ", ".join(f"{k} = {v!r}" for k, v in budget["settings"].items()) if budget["settings"] else
            "none (settings/ has no per-page extraction time limit; " + budget["note"] + ")")]
    return "\n".join(lines)


# ------------------------------------------------------------------- extras


def corpus_profile(corpus: Path) -> dict[str, Any]:
    """profile_html per page on the 600 real pages, as bench/profile_corpus.py does."""
    from profile_corpus import percentile

    from spitag.extract import profile_html
    from testbed.corpus import PAGES_ARCHIVE, unpack

    with tempfile.TemporaryDirectory(prefix="spitag-tp-pages-") as tmp:
        folder = unpack(corpus / PAGES_ARCHIVE, tmp)
        if not (folder / "manifest.jsonl").exists():
            folder = folder / "pages"
        entries = [json.loads(x) for x in (folder / "manifest.jsonl").read_text(encoding="utf-8").splitlines() if x.strip()]
        pages = [(e["file"], e["url"], (folder / e["file"]).read_bytes()) for e in entries]
    times = [(f, profile_html(body, url).seconds) for f, url, body in pages]
    s = sorted(t for _, t in times)
    return {"pages": len(s), "median_ms": statistics.median(s) * 1000, "p95_ms": percentile(s, 0.95) * 1000,
            "p99_ms": percentile(s, 0.99) * 1000, "max_ms": s[-1] * 1000, "total_s": sum(s),
            "slowest": [(f, t * 1000) for f, t in sorted(times, key=lambda x: -x[1])[:5]]}


HEAVY = r"""
import json, resource, sys, time
from spitag.extract import profile_html
from spitag.options import BY_NAME
from testbed import heavy
page = getattr(heavy, sys.argv[1])()
budget = float(BY_NAME["SPITAG_EXTRACT_BUDGET"].default)
memory = int(float(BY_NAME["SPITAG_EXTRACT_MEMORY"].default) * 2**20)
started = time.perf_counter()
p = profile_html(page, "http://heavy.test/", budget=budget, max_memory=memory)
json.dump({"page": sys.argv[1], "mb": len(page) / 2**20, "seconds": time.perf_counter() - started,
           "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, "budget": budget,
           "memory_mb": memory / 2**20, "cut": p.cut, "cut_by": p.cut_by, "skipped": p.skipped}, sys.stdout)
"""


def heavy_pages() -> list[dict[str, Any]]:
    """The pathological pages of testbed/heavy.py, each profiled in a fresh process
    with the default budget and memory bound: seconds and peak RSS (tests/test_extract_budget.py
    shows the same pages cut in a crawl)."""
    out = []
    for name in ("rdfa_page", "microdata_page"):
        done = subprocess.run([sys.executable, "-c", HEAVY, name], cwd=REPO, capture_output=True, text=True,
                              env={**os.environ, "PYTHONPATH": str(REPO)}, timeout=900)
        out.append(json.loads(done.stdout) if done.returncode == 0 else {"page": name, "error": done.stderr[-500:]})
    return out


BUDGET_NAME = re.compile(r"BUDGET|(EXTRACT|PROFILE|PARSE).*(SECONDS|TIMEOUT|_MS|TIME)")


def budget_settings() -> dict[str, Any]:
    from spitag.options import SETTINGS

    found = {s.name: s.default for s in SETTINGS if BUDGET_NAME.search(s.name)}
    per_page = {k: v for k, v in found.items() if k != "SPITAG_PAGE_BUDGET"}
    return {"settings": per_page, "all_matches": found,
            "note": "SPITAG_PAGE_BUDGET is the number of pages of a crawl (Nutch's -topN), not a time"}


# ----------------------------------------------------------------------- profile

WAITS = (("~", "<method 'poll' of 'select.epoll' objects>"), ("~", "<method 'acquire' of '_thread.lock' objects>"),
         ("~", "<built-in method time.sleep>"), ("~", "<method 'get' of '_queue.SimpleQueue' objects>"))
AREAS = (
    ("extruct / pyRdfa / mf2py / rdflib", ("extruct", "pyRdfa", "mf2py", "rdflib", "html_text", "jstyleson", "bs4")),
    ("lxml", ("lxml",)),
    ("spitag.extract", ("spitag/extract",)),
    ("spitag (other)", ("spitag/", "spiders/", "pipelines/")),
    ("sqlite3 / psycopg2 / redis", ("sqlite3", "psycopg2", "redis/")),
    ("json / feed export", ("json/", "scrapy/exporters", "scrapy/extensions/feedexport")),
    ("scrapy", ("scrapy/",)),
    ("twisted", ("twisted/",)),
    ("w3lib / urllib / tldextract / protego", ("w3lib", "urllib", "tldextract", "protego", "idna")),
)


def area_of(func: tuple[str, int, str]) -> str:
    path = func[0]
    if func in WAITS or (path == "~" and any(w in func[2] for w in ("epoll", "_thread.lock", "time.sleep"))):
        return "waiting (epoll, locks, sleep)"
    for name, needles in AREAS:
        if any(n in path for n in needles):
            return name
    if path == "~":
        return "builtins (C)"
    return "other Python"


def _area_table(stats: pstats.Stats, busy: float, title: str, top: int = 15) -> list[str]:
    areas: collections.Counter = collections.Counter()
    for func, (cc, nc, tt, ct, callers) in stats.stats.items():
        areas[area_of(func)] += tt
    lines = [f"{title} — own time by area (% of busy {busy:.1f} s):"]
    for name, tt in areas.most_common():
        if not name.startswith("waiting"):
            lines.append(f"   {name:40} {tt:7.2f} s  {tt / busy:6.1%}")
    rows = sorted(((tt, ct, nc, func) for func, (cc, nc, tt, ct, callers) in stats.stats.items()
                   if not area_of(func).startswith("waiting")), reverse=True)[:top]
    lines.append(f"{title} — biggest own time (% of busy):")
    for tt, ct, nc, func in rows:
        lines.append(f"   {tt / busy:6.1%}  cum {ct / busy:6.1%}  {nc:9d} calls  {pstats.func_std_string(func)[-100:]}")
    return lines


def profile_report(pstats_file: Path, top: int = 30) -> tuple[str, dict[str, Any]]:
    """Top ``top`` by cumulative and by own time of the main (reactor) thread, its time by
    area as % of its busy time (its wall time minus epoll waits), then the other threads."""
    import io

    buf = io.StringIO()
    stats = pstats.Stats(str(pstats_file), stream=buf)
    total = stats.total_tt
    idle = sum(tt for func, (cc, nc, tt, ct, callers) in stats.stats.items() if area_of(func).startswith("waiting"))
    busy = total - idle
    stats.sort_stats("cumulative").print_stats(top)
    stats.sort_stats("tottime").print_stats(top)
    threads = {}
    tfile = Path(str(pstats_file) + ".threads.json")
    if tfile.exists():
        threads = json.loads(tfile.read_text())
    lines = [f"main thread: {total:.1f} s profiled, {idle:.1f} s waiting (epoll) → busy {busy:.1f} s"
             + (f"; whole process: CPU {threads['process_cpu']:.1f} s, wall {threads['wall']:.1f} s" if threads else "")]
    lines += _area_table(stats, busy, "main thread")
    areas = {}
    for func, (cc, nc, tt, ct, callers) in stats.stats.items():
        areas[area_of(func)] = areas.get(area_of(func), 0.0) + tt / busy
    summary = {"main_total_s": total, "main_idle_s": idle, "main_busy_s": busy, "main_areas": areas, "threads": threads}
    other = Path(str(pstats_file) + ".threads.pstats")
    if other.exists():
        ts = pstats.Stats(str(other))
        t_idle = sum(tt for func, (cc, nc, tt, ct, callers) in ts.stats.items() if area_of(func).startswith("waiting"))
        t_busy = ts.total_tt - t_idle
        lines += ["", f"other threads (store writer, thread pool): {ts.total_tt:.1f} s profiled, {t_idle:.1f} s idle → "
                      f"{t_busy:.1f} s busy (wall time: includes disk waits and waiting for the GIL; see the "
                      "per-thread CPU of the run line)"]
        lines += _area_table(ts, t_busy, "other threads", top=10)
        summary["threads_busy_s"] = t_busy
    return buf.getvalue() + "\n" + "\n".join(lines), summary


# -------------------------------------------------------------------------- main


def corpus_dir(explicit: str | None) -> Path:
    folder = Path(explicit or os.environ.get("SPITAG_CORPUS") or REPO.parent / "shared" / "corpus")
    if not (folder / "real-pages.tar.gz").is_file():
        sys.exit(f"corpus not found: {folder}/real-pages.tar.gz (use --corpus or $SPITAG_CORPUS)")
    return folder


def build_webs(args: argparse.Namespace) -> list[Web]:
    work = Path(args.work)
    webs = []
    for name in args.webs.split(","):
        if name == "synthetic":
            webs.append(synthetic_web(work / f"synthetic-{args.pages}", args.pages))
        elif name == "real":
            webs.append(real_web(work / "real", corpus_dir(args.corpus)))
        elif name == "hosts":
            webs.append(hosts_web(work / "hosts", corpus_dir(args.corpus)))
            webs[-1].info["budget"] = args.hosts_pages
        else:
            sys.exit(f"unknown web {name!r}: synthetic, real, hosts")
    return webs


def configs_of(web: Web, chosen: list[str] | None) -> list[str]:
    """The configs run on ``web``: its own (WEB_CONFIGS), or those of ``--configs`` it has."""
    own = WEB_CONFIGS[web.name]
    return [c for c in own if chosen is None or c in chosen]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--pages", type=int, default=5000, help="synthetic site size")
    parser.add_argument("--webs", default="synthetic,real,hosts")
    parser.add_argument("--configs", help="configs to run, among each web's own (default: all of them; "
                        + "; ".join(f"{w}: {','.join(c)}" for w, c in WEB_CONFIGS.items()) + ")")
    parser.add_argument("--hosts-pages", type=int, default=1000, help="responses a crawl of the hosts web gets")
    parser.add_argument("--concurrency", type=int, default=16, help="CONCURRENT_REQUESTS and per domain, every config")
    parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                        help="one more setting for the SpiTag crawls (d, e): for probing a knob, not for the figures")
    parser.add_argument("--out", default=str(REPO / "bench" / "out" / "throughput"))
    parser.add_argument("--work", default=str(Path(tempfile.gettempdir()) / "spitag-bench-throughput"),
                        help="where the webs are built (reused)")
    parser.add_argument("--corpus", help="folder of real-pages.tar.gz (default $SPITAG_CORPUS or ../shared/corpus)")
    parser.add_argument("--profile", metavar="CONFIG", help="one crawl of CONFIG per web under cProfile, then exit")
    parser.add_argument("--top", type=int, default=30, help="functions listed by --profile")
    parser.add_argument("--no-corpus-profile", action="store_true", help="skip the profile_html timing of the real pages")
    parser.add_argument("--report", metavar="JSON", help="reprint the tables of a saved throughput.json")
    args = parser.parse_args()
    if args.report:
        print(report(json.loads(Path(args.report).read_text())))
        return
    chosen = [args.profile] if args.profile else args.configs.split(",") if args.configs else None
    bad = [c for c in chosen or () if c not in CONFIGS]
    if bad:
        sys.exit(f"unknown config(s) {bad}: {', '.join(CONFIGS)}")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    webs = build_webs(args)
    configs = [c for c in CONFIGS if any(c in configs_of(web, chosen) for web in webs)]
    servers = Servers(configs)
    results: dict[str, Any] = {
        "when": time.strftime("%Y-%m-%d %H:%M"), "cpus": os.cpu_count(), "concurrency": args.concurrency,
        "rounds": args.rounds, "load_start": [round(x, 2) for x in os.getloadavg()],
        "args": vars(args), "webs": {}, "runs": [],
    }
    started = time.monotonic()
    try:
        for web in webs:
            web.start()
            results["webs"][web.name] = {**web.info, "expected": len(web.expected)}
            print(f"[{web.name}] {len(web.expected) or len(web.values)} pages at {web.seed} ({web.info})", flush=True)
        if args.profile:
            for web in webs:
                path = out / f"profile-{args.profile}-{web.name}.pstats"
                r = run_crawl(args.profile, web, servers, out, "profile", args.concurrency, profile=path,
                              extra=tuple(args.set), pages_budget=args.hosts_pages)
                print(run_line(r), flush=True)
                text, summary = profile_report(path, args.top)
                print(text, flush=True)
                (out / f"profile-{args.profile}-{web.name}.txt").write_text(run_line(r) + "\n" + text + "\n")
                results["runs"].append({**r, "profile": summary})
            (out / f"profile-{args.profile}.json").write_text(json.dumps(results, indent=1, default=str))
            return
        for rnd in range(args.rounds):
            for web in webs:
                for config in configs_of(web, chosen):
                    order = out / "runs" / f"{web.name}-a-r{rnd}" / "order.txt"
                    r = run_crawl(config, web, servers, out, f"r{rnd}", args.concurrency, extra=tuple(args.set),
                                  pages_budget=args.hosts_pages, order=order if order.exists() else None)
                    results["runs"].append(r)
                    print(run_line(r), flush=True)
                    (out / "throughput.json").write_text(json.dumps(results, indent=1, default=str))
        results["summary"] = summarize(results["runs"], [w.name for w in webs], configs)
    finally:
        for web in webs:
            web.stop()
        servers.close()
    results["load_end"] = [round(x, 2) for x in os.getloadavg()]
    if not args.no_corpus_profile:
        print("[corpus] profile_html on the real pages …", flush=True)
        results["corpus_profile"] = corpus_profile(corpus_dir(args.corpus))
    results["budget"] = budget_settings()
    results["heavy"] = heavy_pages()
    results["seconds"] = time.monotonic() - started
    text = report(results)
    print()
    print(text)
    print(f"\n({results['seconds']:.0f} s; JSON and per-run logs in {out})")
    (out / "throughput.json").write_text(json.dumps(results, indent=1, default=str))
    (out / "throughput.txt").write_text(text + "\n")


if __name__ == "__main__":
    main()
