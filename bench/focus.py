"""Focus benchmark: how fast does each strategy reach the pages rich in semantic markup?

    python bench/focus.py [--pages-budget 2000] [--k 100,300,1000]
        [--strategies bfs,opic,importance,spitag] [--seed 0] [--runs 1]
        [--out bench/out/focus] [--sites N] [web parameters, see --help]

Builds the seeded local web of ``bench/webgen.py``, serves it on 127.0.0.1 (origin
server and forward proxy: the crawler reaches ``http://www.example.com/`` with
``http_proxy`` set, no DNS, no network), and crawls it once per strategy (runs > 1:
interleaved, strategy after strategy within each run) with the same seeds and the same
page budget (``CLOSESPIDER_PAGECOUNT``: responses of any status; a refused connection
is not a page), each crawl with fresh store and frontier files.

Measures, per K (100, 300, 1000):

* harvest@K = mean true semantic count of the first K distinct URLs answered 200, in
  the order the server answered them (its request log, cleared before each crawl);
* its ratio to ``bfs`` (the baseline) and to the *oracle*: best-first on the same link
  graph from the same seeds knowing every page's true count (always fetch the
  discovered, unfetched page with the highest count; ties in discovery order);
* the *blind* reference: what a strategy that learns a site's value only from the
  site's own pages can expect on this web (``bench.blind_bound.blind_harvest``).

Also, from each crawl's store, the thesis' figures (``bench/depth_figures.py``, read by
``scrapy report``'s code): semantic items and meta tags per depth (sum, mean, max), and
spitag against each baseline per depth (the difference of the sums and of the means,
per syntax at the last depth both reached); and how often the crawler's own counts
agree with the true ones.

``--redis-workers N``: every crawl is N workers at once on one Redis frontier (a
redis-server started for the benchmark on 127.0.0.1), each with its own store and an
N-th of the page budget: does the focus survive the scale-out?

``--hold a|b``: the web of one seeded half of the corpus' hosts: other sites, other templates, another oracle.

Settings that differ from the project's defaults, and why: ``ROBOTSTXT_OBEY=False``
(the generated sites have no robots.txt; with it on, every host costs one extra 404
request, the same for all strategies, and nothing is learnt), ``SPITAG_SCOPE=any``
(the web is many sites), ``SPITAG_STORE_BODY=none`` (bodies are not needed; 4 crawls
would store ~600 MB). Concurrency and every scoring knob stay at their defaults.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from dataclasses import asdict
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence
from urllib.parse import urlsplit

REPO_ROOT = Path(__file__).resolve().parents[1]
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

from bench.blind_bound import blind_harvest  # noqa: E402
from bench.harvest import harvest, oracle_order  # noqa: E402
from bench.depth_figures import depth_record, load_crawl, merged_depths, print_figures, write_comparisons  # noqa: E402
from bench.webgen import (  # noqa: E402
    FLINK_HOST,
    HOLD_SPLIT_SEED,
    Web,
    WebParams,
    hold_halves,
    load_counted_web,
    verify_sample,
)
from testbed.redisserver import RedisServer  # noqa: E402
from testbed.webserver import DictSite, LogEntry, WebServer  # noqa: E402

logger = logging.getLogger(__name__)

# the default run; parent: the simple reference (parent-score best-first)
STRATEGIES = ("bfs", "opic", "importance", "parent", "spitag")
KNOWN = STRATEGIES
BASELINE = "bfs"
# What the lead asked to report against (not tuned for): spitag at K=300.
TARGETS = {"oracle": 0.8, "bfs": 2.0, "opic": 1.5}
TARGET_K = 300
COLORS = {"bfs": "tab:gray", "opic": "tab:blue", "importance": "tab:orange", "spitag": "tab:green",
          "parent": "tab:olive"}


# ============================================================================ metrics


def arrival_pages(log: Iterable[LogEntry], count_of: Callable[[str, str], int | None]) -> list[dict[str, Any]]:
    """Distinct URLs answered 200, in the server's arrival order, with their true counts.

    A URL answered 200 twice counts once (its first answer); a 200 the web does not
    know (``count_of`` gives None) counts 0 items and is flagged ``known: False``.
    """
    seen: set[tuple[str, str]] = set()
    out = []
    for entry in log:
        if entry.status != 200:
            continue
        key = (entry.host, entry.path)
        if key in seen:
            continue
        seen.add(key)
        count = count_of(entry.host, entry.path)
        out.append({"host": entry.host, "path": entry.path, "count": count or 0, "known": count is not None})
    return out


def refetched(log: Iterable[LogEntry]) -> dict[str, int]:
    """URLs answered 200 more than once in one crawl (the frontier promises once):
    {"urls": how many, "extra": the fetches beyond the first}."""
    seen = Counter((e.host, e.path) for e in log if e.status == 200)
    again = [n for n in seen.values() if n > 1]
    return {"urls": len(again), "extra": sum(again) - len(again)}


def url_key(url: str) -> tuple[str, str]:
    """(host, path?query) of a URL, as the server's log names a request."""
    parts = urlsplit(url)
    return parts.hostname or "", (parts.path or "/") + (f"?{parts.query}" if parts.query else "")


def parents_of(store: Path, crawl: str) -> dict[tuple[str, str], tuple[str, str]]:
    """Each stored URL's parent: the page whose link gave it the priority it was
    fetched with (its reason), both as ``url_key``."""
    out: dict[tuple[str, str], tuple[str, str]] = {}
    with sqlite3.connect(f"file:{store}?mode=ro", uri=True) as conn:
        for url, reason in conn.execute(
            "SELECT url, reason FROM url WHERE crawl = ? AND reason IS NOT NULL", (crawl,)
        ):
            try:
                parent = json.loads(reason).get("parent")
            except (ValueError, AttributeError):
                continue
            if parent:
                out[url_key(url)] = url_key(parent)
    return out


def choice_lag(pages: Sequence[dict[str, Any]], parents: dict[tuple[str, str], tuple[str, str]],
               k: int) -> dict[str, int | None]:
    """How many pages a crawl chose before it knew what it had just fetched.

    For each of the first ``k`` pages that has a child fetched (a page whose reason
    names it), the pages that arrived between it and its first child. A child cannot
    be requested before its parent is parsed and scored, so the small gaps measure the
    pages requested blind to a page: downloads in flight and pages waiting for the
    profile pool. The 10th percentile and the median, over those parents.
    """
    position = {(p["host"], p["path"]): i for i, p in enumerate(pages)}
    first_child: dict[tuple[str, str], int] = {}
    for child, parent in parents.items():
        i, j = position.get(child), position.get(parent)
        if i is None or j is None or j >= k or i <= j:
            continue
        first_child[parent] = min(first_child.get(parent, i), i)
    gaps = sorted(i - position[p] for p, i in first_child.items())
    if not gaps:
        return {"parents": 0, "p10": None, "median": None}
    return {"parents": len(gaps), "p10": gaps[(len(gaps) - 1) // 10], "median": gaps[(len(gaps) - 1) // 2]}


def cumulative(counts: Sequence[int]) -> list[int]:
    out, total = [], 0
    for c in counts:
        total += c
        out.append(total)
    return out


def merge_agreements(parts: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """``agreement`` of several stores as one."""
    out: dict[str, Any] = {"same": 0, "differ": 0, "unknown": 0, "examples": []}
    for part in parts:
        for key in ("same", "differ", "unknown"):
            out[key] += part[key]
        out["examples"] = (out["examples"] + part["examples"])[:10]
    return out


def agreement(store: Path, crawl: str, web: Web) -> dict[str, Any]:
    """How often the crawler's stored total equals the true count of the same URL."""
    same = differ = unknown = 0
    examples = []
    with sqlite3.connect(f"file:{store}?mode=ro", uri=True) as conn:
        for url, total in conn.execute(
            "SELECT u.url, p.semantic_total FROM url u JOIN page p ON p.id = u.page_id"
            " WHERE u.crawl = ? AND u.status = 200",
            (crawl,),
        ):
            true = web.count_of(*url_key(url))
            if true is None:
                unknown += 1
            elif true == total:
                same += 1
            else:
                differ += 1
                if len(examples) < 10:
                    examples.append({"url": url, "crawler": total, "true": true})
    return {"same": same, "differ": differ, "unknown": unknown, "examples": examples}


# ============================================================================ crawling


def crawl_commands(seeds: Sequence[str], name: str, strategy: str, budget: int, folder: Path,
                   extra: Sequence[str], redis_url: str | None, workers: int) -> list[str] | list[list[str]]:
    """The crawl as one command (``redis_url`` None), or as ``workers`` commands on one
    Redis frontier, each with an N-th of the budget (what ``run_crawl`` takes)."""
    if not redis_url:
        return crawl_command(seeds, name, strategy, budget, folder, extra)
    share = -(-budget // workers)
    return [crawl_command(seeds, name, strategy, share, folder, extra, redis_url, i) for i in range(workers)]


def crawl_command(seeds: Sequence[str], name: str, strategy: str, budget: int, folder: Path,
                  extra: Sequence[str] = (), frontier: str | None = None,
                  worker: int | None = None) -> list[str]:
    """The crawl; ``extra`` are more ``NAME=VALUE`` settings (``--set``), given last.
    ``frontier`` None: an embedded SQLite frontier in ``folder``; else its URL (one
    Redis for every worker of the crawl), and ``worker`` names the worker's own store
    and items files."""
    tag = "" if worker is None else f"-w{worker}"
    frontier = frontier or f"sqlite:///{folder / 'frontier.db'}"
    return [
        sys.executable, "-m", "scrapy", "crawl", "spitag",
        "-a", f"seeds={','.join(seeds)}", "-a", f"crawl={name}",
        "-O", str(folder / f"items{tag}.jsonl"),
        "-s", f"SPITAG_STRATEGY={strategy}",
        "-s", f"SPITAG_STORE=sqlite:///{folder / f'store{tag}.db'}",
        "-s", f"SPITAG_FRONTIER={frontier}",
        "-s", "SPITAG_SCOPE=any",
        "-s", "SPITAG_STORE_BODY=none",
        "-s", "CONCURRENT_REQUESTS_PER_DOMAIN=4", "-s", "DOWNLOAD_DELAY=0",  # a local web, not SpiTag's polite defaults
        "-s", "ROBOTSTXT_OBEY=False",
        "-s", f"CLOSESPIDER_PAGECOUNT={budget}",
        "-s", "LOG_LEVEL=INFO",
        *(arg for setting in extra for arg in ("-s", setting)),
    ]


def run_crawl(server: WebServer, cmd: list[str] | list[list[str]], folder: Path, timeout: float,
              cwd: Path = REPO_ROOT) -> dict[str, Any]:
    """One crawl as a subprocess from the repo root (``cwd``), through the server as
    proxy — or, given a list of commands, its workers, all at once; the server's log
    is cleared first and returned (this crawl's requests only). ``returncode`` is the
    first non-zero one of the workers (0 when all succeeded)."""
    cmds = cmd if cmd and isinstance(cmd[0], list) else [cmd]
    folder.mkdir(parents=True, exist_ok=True)
    for pattern in ("store*.db*", "frontier.db*", "items*.jsonl"):
        for path in folder.glob(pattern):
            path.unlink()
    env = {**os.environ, "http_proxy": server.proxy_url, "https_proxy": server.proxy_url}
    for name in ("no_proxy", "NO_PROXY", "HTTP_PROXY", "HTTPS_PROXY", "SPITAG_STORE", "SPITAG_FRONTIER", "REDIS_URL"):
        env.pop(name, None)
    server.clear_log()
    started = time.monotonic()
    deadline = started + timeout
    logs = [open(folder / ("crawl.log" if len(cmds) == 1 else f"crawl-w{i}.log"), "wb") for i in range(len(cmds))]
    procs = [subprocess.Popen(c, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=log)
             for c, log in zip(cmds, logs)]
    timed_out = False
    codes = []
    for proc in procs:
        try:
            codes.append(proc.wait(timeout=max(deadline - time.monotonic(), 0.1)))
        except subprocess.TimeoutExpired:
            timed_out = True
            proc.send_signal(signal.SIGINT)  # graceful: what is in flight is stored
            try:
                codes.append(proc.wait(timeout=60))
            except subprocess.TimeoutExpired:
                proc.kill()
                codes.append(proc.wait())
    for log in logs:
        log.close()
    seconds = time.monotonic() - started
    log = server.log
    with open(folder / "server-log.jsonl", "w") as out:
        for e in log:
            out.write(json.dumps(e._asdict()) + "\n")
    rc = next((c for c in codes if c), 0)
    return {"returncode": rc, "timed_out": timed_out, "seconds": seconds, "log": log}


# ============================================================================ report


def _fmt(x: float | None, digits: int = 2) -> str:
    return "—" if x is None else f"{x:.{digits}f}"


def summarize(results: dict[str, list[dict[str, Any]]], oracle: list[int], ks: Sequence[int],
              blind: Mapping[int, Mapping[str, float]] | None = None) -> dict[str, Any]:
    """Per strategy and K: harvest (mean over runs, min, max) and the ratios; then the
    oracle and, when given, ``blind`` (``bench.blind_bound.blind_harvest`` of the web)."""
    table: dict[str, Any] = {}
    oracle_h = {k: harvest(oracle, k) for k in ks}
    base = results.get(BASELINE)
    for strategy, runs in results.items():
        row = {}
        for k in ks:
            values = [harvest(r["counts"], k) for r in runs]
            got = [v for v in values if v is not None]
            mean = sum(got) / len(got) if got and len(got) == len(values) else None
            base_vals = [harvest(r["counts"], k) for r in base] if base else []
            base_mean = (sum(base_vals) / len(base_vals)) if base_vals and None not in base_vals else None
            opic_vals = [harvest(r["counts"], k) for r in results.get("opic", [])]
            opic_mean = (sum(opic_vals) / len(opic_vals)) if opic_vals and None not in opic_vals else None
            row[k] = {
                "harvest": mean,
                "runs": values,
                "min": min(got) if got else None,
                "max": max(got) if got else None,
                "x_bfs": mean / base_mean if mean is not None and base_mean else None,
                "x_opic": mean / opic_mean if mean is not None and opic_mean else None,
                "x_oracle": mean / oracle_h[k] if mean is not None and oracle_h[k] else None,
            }
        table[strategy] = row
    base_vals = {k: table.get(BASELINE, {}).get(k, {}).get("harvest") for k in ks}
    table["oracle"] = {
        k: {"harvest": oracle_h[k], "x_bfs": oracle_h[k] / base_vals[k] if oracle_h[k] and base_vals[k] else None,
            "x_oracle": 1.0 if oracle_h[k] else None}
        for k in ks
    }
    if blind is not None:
        table["blind"] = {}
        for k in ks:
            got = blind.get(k, {}).get("harvest")
            table["blind"][k] = {
                "harvest": got, "threshold": blind.get(k, {}).get("threshold"),
                "x_bfs": got / base_vals[k] if got is not None and base_vals[k] else None,
                "x_oracle": got / oracle_h[k] if got is not None and oracle_h[k] else None,
            }
    return table


def print_table(table: dict[str, Any], ks: Sequence[int], out: Any = sys.stdout) -> None:
    head = f"{'strategy':<11}" + "".join(f"| K={k:<5} items/page  ×bfs  ×oracle " for k in ks)
    print(head, file=out)
    print("-" * len(head), file=out)
    for name, row in table.items():
        line = f"{name:<11}"
        for k in ks:
            cell = row[k]
            line += f"| {_fmt(cell['harvest']):>18}  {_fmt(cell.get('x_bfs')):>4}  {_fmt(cell.get('x_oracle')):>7} "
        print(line, file=out)


def check_targets(table: dict[str, Any]) -> list[dict[str, Any]]:
    cell = table.get("spitag", {}).get(TARGET_K)
    if cell is None:
        return []
    got = {"oracle": cell.get("x_oracle"), "bfs": cell.get("x_bfs"), "opic": cell.get("x_opic")}
    return [
        {"vs": vs, "target": t, "ratio": got[vs], "met": got[vs] is not None and got[vs] >= t}
        for vs, t in TARGETS.items()
    ]


def plot(results: dict[str, list[dict[str, Any]]], oracle: list[int], depth: dict[str, list[dict]],
         ks: Sequence[int], folder: Path, web_mean: float,
         blind: Mapping[int, Mapping[str, float]] | None = None) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    written = []
    fig, ax = plt.subplots(figsize=(9, 6))
    limit = max(ks)
    for strategy, runs in results.items():
        for i, r in enumerate(runs):
            ys = cumulative(r["counts"][:limit])
            ax.plot(range(1, len(ys) + 1), ys, color=COLORS.get(strategy), alpha=1.0 if i == 0 else 0.4,
                    label=strategy if i == 0 else None)
    ys = cumulative(oracle[:limit])
    ax.plot(range(1, len(ys) + 1), ys, color="black", linestyle="--", label="oracle (best-first, true counts)")
    ax.plot([0, limit], [0, web_mean * limit], color="silver", linestyle=":",
            label=f"web average ({web_mean:.1f} items/page)")
    if blind:
        at = sorted(blind)
        ax.plot(at, [blind[k]["harvest"] * k for k in at], color="black", marker="x", linestyle="none",
                markersize=9, label="blind expectation at K (bench/blind_bound.py)")
    for k in ks:
        ax.axvline(k, color="lightgray", linewidth=0.8, zorder=0)
    ax.set_xlabel("pages fetched (distinct URLs answered 200, server arrival order)")
    ax.set_ylabel("cumulative semantic items (true counts)")
    ax.set_title("Harvest: semantic items vs pages fetched")
    ax.legend()
    fig.tight_layout()
    path = folder / "harvest.png"
    fig.savefig(path, dpi=120)
    plt.close(fig)
    written.append(path)

    fig, axes = plt.subplots(2, 3, figsize=(15, 9))
    for i, (prefix, title) in enumerate((("", "semantic items"), ("meta_", "meta tags"))):
        for j, stat in enumerate(("sum", "mean", "max")):
            ax = axes[i][j]
            for strategy, runs in depth.items():
                table = runs[0]
                ds = sorted(table)
                ax.plot(ds, [table[d][prefix + stat] for d in ds], marker="o", color=COLORS.get(strategy),
                        label=strategy)
            ax.set_xlabel("depth")
            ax.set_title(f"{title} per depth: {stat}")
            if j == 0:
                ax.set_ylabel(f"{title} (crawler's counts, run 1)")
            ax.legend()
    fig.tight_layout()
    path = folder / "depth.png"
    fig.savefig(path, dpi=120)
    plt.close(fig)
    written.append(path)
    return written


# ============================================================================ main


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    d = WebParams()
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--pages-budget", type=int, default=2000,
                   help="CLOSESPIDER_PAGECOUNT of every crawl (responses of any status, 404s included)")
    p.add_argument("--k", default="100,300,1000", help="K values, comma-separated")
    p.add_argument("--strategies", default=",".join(STRATEGIES))
    p.add_argument("--seed", type=int, default=d.seed, help="seed of the web and of the seeds")
    p.add_argument("--runs", type=int, default=1, help="crawls per strategy (interleaved)")
    p.add_argument("--out", type=Path, default=REPO_ROOT / "bench" / "out" / "focus")
    p.add_argument("--work", type=Path, default=Path(os.environ.get("TMPDIR", "/tmp")) / "spitag-bench",
                   help="unpacked corpus and the true-count cache")
    p.add_argument("--corpus", type=Path, default=None, help="folder of real-pages.tar.gz and flink.apache.org.tar.gz "
                   "(without the latter: --no-flink); default $SPITAG_CORPUS or <repo>/../shared/corpus")
    p.add_argument("--sites", type=int, default=None, help="generated sites (default: every real-page host)")
    p.add_argument("--size-median", type=float, default=d.size_median)
    p.add_argument("--size-sigma", type=float, default=d.size_sigma)
    p.add_argument("--size-min", type=int, default=d.size_min)
    p.add_argument("--size-max", type=int, default=d.size_max)
    p.add_argument("--fanout", type=int, default=d.fanout)
    p.add_argument("--intra-links", type=float, default=d.intra_links)
    p.add_argument("--inter-links", type=float, default=d.inter_links)
    p.add_argument("--inter-home", type=float, default=d.inter_home)
    p.add_argument("--popularity", type=float, default=d.popularity,
                   help="a: inter-site links pick a site with weight (1 + its mean count)^a (0: uniform)")
    p.add_argument("--homophily", type=float, default=d.homophily,
                   help="h: probability that an inter-site link goes to a site of like value (0 … 1)")
    p.add_argument("--seeds", type=int, default=d.seeds, help="random generated homes among the seeds")
    p.add_argument("--no-flink", action="store_true", help="leave the flink site out")
    p.add_argument("--hold", choices=("a", "b"), default=None,
                   help="build the web from one seeded half of the corpus' hosts only")
    p.add_argument("--split-seed", type=int, default=HOLD_SPLIT_SEED, help="seed of the --hold split")
    p.add_argument("--workers", type=int, default=os.cpu_count() or 1, help="processes for true counts")
    p.add_argument("--redis-workers", type=int, default=0,
                   help="crawl with N workers sharing one Redis frontier (a redis-server started on 127.0.0.1 "
                   "for the benchmark), each with its own SQLite store and an N-th of the page budget; "
                   "0: one crawler, embedded SQLite frontier")
    p.add_argument("--timeout", type=float, default=900, help="seconds before a crawl is stopped")
    p.add_argument("--blind-orders", type=int, default=200,
                   help="random probe orders of the 'blind' reference row (bench/blind_bound.py; 0: no row)")
    p.add_argument("--crawler-repo", type=Path, default=REPO_ROOT,
                   help="checkout whose `scrapy crawl spitag` is benchmarked (cwd of the crawls)")
    p.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                   help="one more crawler setting for every crawl (repeatable): for probes, not the benchmark")
    p.add_argument("--verify", type=int, default=6, help="generated pages counted in full as a check")
    return p.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s", datefmt="%H:%M:%S")
    ks = sorted({int(k) for k in args.k.split(",") if k.strip()})
    strategies = [s.strip() for s in args.strategies.split(",") if s.strip()]
    unknown = set(strategies) - set(KNOWN)
    if unknown:
        print(f"focus: unknown strategies {sorted(unknown)}", file=sys.stderr)
        return 2
    if args.redis_workers < 0:
        print(f"focus: --redis-workers must be 0 or more, not {args.redis_workers}", file=sys.stderr)
        return 2
    if args.blind_orders < 0:
        print(f"focus: --blind-orders must be 0 or more, not {args.blind_orders}", file=sys.stderr)
        return 2
    params = WebParams(
        seed=args.seed, sites=args.sites, size_median=args.size_median, size_sigma=args.size_sigma,
        size_min=args.size_min, size_max=args.size_max, fanout=args.fanout, intra_links=args.intra_links,
        inter_links=args.inter_links, inter_home=args.inter_home, seeds=args.seeds, flink=not args.no_flink,
        popularity=args.popularity, homophily=args.homophily,
    )
    started = time.monotonic()
    args.out.mkdir(parents=True, exist_ok=True)
    hosts, hold = None, None
    if args.hold:
        hosts = hold_halves(args.corpus, args.work, args.split_seed)[args.hold]
        hold = {"half": args.hold, "split_seed": args.split_seed, "hosts": len(hosts)}
    web, counting = load_counted_web(params, args.corpus, args.work, workers=args.workers, hosts=hosts)
    sample = verify_sample(web, args.verify, seed=args.seed)
    summary = web.summary()
    flink = f" + flink ({summary['flink_pages']} pages)" if web.flink_root is not None else ""
    if params.links_by_value:
        flink += f"; links by value (popularity {params.popularity:g}, homophily {params.homophily:g})"
    if hold:
        flink += f"; hold-{hold['half']}: {hold['hosts']} of the corpus' hosts (split seed {hold['split_seed']})"
    logger.info("web: %d sites%s, %d pages, %.1f items/page; seeds %s", summary["generated_sites"], flink,
                summary["nodes"], summary["items_per_page"], ", ".join(web.seeds))
    if not all(s["equal"] for s in sample):
        logger.warning("generated pages whose count differs from their template's: %s",
                       [s for s in sample if not s["equal"]])

    counts = {u: web.node_count(u) for u in web.nodes}
    oracle_urls = oracle_order({u: n.links for u, n in web.nodes.items()}, counts, web.seeds, max(ks))
    oracle = [counts[u] for u in oracle_urls]
    by_host: dict[str, list[int]] = {}
    for u, node in web.nodes.items():
        by_host.setdefault(node.host, []).append(counts[u])
    blind = blind_harvest(by_host, ks, args.blind_orders, args.seed) if args.blind_orders > 0 else None

    results: dict[str, list[dict[str, Any]]] = {s: [] for s in strategies}
    depth: dict[str, list[dict]] = {s: [] for s in strategies}
    reports: dict[str, list] = {}  # each strategy's first crawl, as scrapy report reads it (one per store)
    crawls: list[dict[str, Any]] = []
    # Default site: 404 for all. Flink links to http://localhost:8081/ (its dashboard);
    # through the proxy a loopback name means the default site, which must not be a page.
    with contextlib.ExitStack() as stack:
        server = stack.enter_context(WebServer(default_site=DictSite()))
        server.add_sites(web.sites())
        redis_url = stack.enter_context(RedisServer()).url if args.redis_workers else None
        for run in range(args.runs):
            for strategy in strategies:
                name = f"focus-{strategy}-r{run + 1}"
                folder = args.out / f"run{run + 1}" / strategy
                cmd = crawl_commands(web.seeds, name, strategy, args.pages_budget, folder, args.set,
                                     redis_url, args.redis_workers)
                logger.info("crawl %s (budget %d%s)", name, args.pages_budget,
                            f", {args.redis_workers} workers on Redis" if redis_url else "")
                got = run_crawl(server, cmd, folder, args.timeout, args.crawler_repo.resolve())
                log = got.pop("log")
                pages = arrival_pages(log, web.count_of)
                status = Counter(e.status for e in log)
                first = pages[: max(ks)]
                record = {
                    "strategy": strategy, "run": run + 1, "crawl": name, **got,
                    "requests": len(log), "status": dict(sorted(status.items())),
                    "pages_200": len(pages), "unknown_200": sum(not p["known"] for p in pages),
                    "refetched": refetched(log),
                    "counts": [p["count"] for p in pages],
                    "hosts_in_first": len({p["host"] for p in first}),
                    "flink_share_first": sum(p["host"] == FLINK_HOST for p in first) / max(len(first), 1),
                    "top_hosts_first": Counter(p["host"] for p in first).most_common(8),
                }
                stores = sorted(folder.glob("store*.db"))
                crawl_reports = load_crawl(stores, name)
                record["per_depth"] = depth_record(merged_depths(crawl_reports))
                reports.setdefault(strategy, crawl_reports)
                record["agreement"] = merge_agreements([agreement(p, name, web) for p in stores])
                parents = {}
                for p in stores:
                    parents.update(parents_of(p, name))
                record["choice_lag"] = choice_lag(pages, parents, TARGET_K)
                logger.info("  %s: %.0f s, rc %s, %d requests, %d pages 200, harvest %s",
                            name, got["seconds"], got["returncode"], len(log), len(pages),
                            ", ".join(f"@{k}={_fmt(harvest(record['counts'], k))}" for k in ks))
                results[strategy].append(record)
                depth[strategy].append(record["per_depth"])
                crawls.append(record)

    table = summarize(results, oracle, ks, blind)
    targets = check_targets(table)

    print()
    print(f"web: {summary['generated_sites']} generated sites ({summary['generated_pages']} pages){flink}; "
          f"{summary['items_per_page']:.1f} true items/page on average; "
          f"seeds: {len(web.seeds)}; budget {args.pages_budget} responses per crawl; runs {args.runs}"
          + (f"; {args.redis_workers} workers, one Redis frontier" if args.redis_workers else "")
          + (f"; extra settings {' '.join(args.set)}" if args.set else ""))
    print("harvest@K = mean true semantic items over the first K distinct pages answered 200 (server arrival order)")
    print_table(table, ks)
    if blind is not None:
        print(f"blind = what a strategy that learns a site's value only from its own pages can expect: the best"
              f" rule 'probe sites in a random order, exploit every site worth ≥ T', mean over {args.blind_orders}"
              " orders, every site reachable at once (bench/blind_bound.py); one crawl is one order and may beat it")
    if args.runs > 1:
        print("per run (harvest@K of run 1, 2, …):")
        for strategy in strategies:
            print(f"  {strategy:<11}" + "  ".join(
                f"K={k}: " + "/".join(_fmt(v, 1) for v in table[strategy][k]["runs"]) for k in ks))
    for t in targets:
        print(f"target spitag@{TARGET_K} ≥ {t['target']}× {t['vs']}: {_fmt(t['ratio'])} "
              f"{'met' if t['met'] else 'NOT met'}")
    against_blind = table.get("spitag", {}).get(TARGET_K, {}).get("harvest")
    blind_at = table.get("blind", {}).get(TARGET_K, {})
    if against_blind is not None and blind_at.get("harvest"):
        print(f"spitag@{TARGET_K} against blind: {against_blind / blind_at['harvest']:.2f}× "
              f"(blind is {_fmt(blind_at['x_oracle'])}× the oracle)")
    versus = print_figures(reports, sys.stdout)
    plots = plot(results, oracle, depth, ks, args.out, summary["items_per_page"], blind)
    plots += write_comparisons(reports, args.out)
    wall = time.monotonic() - started
    print("\ncrawls: strategy run seconds requests 200s(distinct) refetched hosts@first-K flink-share"
          f" agreement(same/differ) lag@{TARGET_K}(p10/median)")
    for c in crawls:
        a, lag = c["agreement"], c["choice_lag"]
        print(f"  {c['strategy']:<11}{c['run']:>3} {c['seconds']:>7.0f} {c['requests']:>8} {c['pages_200']:>5}"
              f" {c['refetched']['urls']:>6} {c['hosts_in_first']:>6} {c['flink_share_first']:>8.2f}"
              f"   {a.get('same')}/{a.get('differ')}   {lag['p10']}/{lag['median']}")
    print(f"lag@{TARGET_K}: pages that arrived between a page among the first {TARGET_K} and its first child "
          "(pages chosen before it was scored)")
    print(f"\nwall time {wall:.0f} s; wrote {args.out / 'focus.json'}, " + ", ".join(str(p) for p in plots))

    report = {
        "command": " ".join([Path(sys.argv[0]).name, *(argv if argv is not None else sys.argv[1:])]),
        "web": summary, "counting": counting, "verify_sample": sample, "ks": ks,
        "budget": args.pages_budget, "runs": args.runs, "oracle": {"counts": oracle, "urls": oracle_urls},
        "blind": {"orders": args.blind_orders, "by_k": {str(k): v for k, v in (blind or {}).items()}},
        "table": {s: {str(k): v for k, v in row.items()} for s, row in table.items()},
        "targets": targets, "crawls": crawls, "wall_seconds": wall,
        "extra_settings": args.set, "redis_workers": args.redis_workers,
        "settings": {"ROBOTSTXT_OBEY": False, "SPITAG_SCOPE": "any", "SPITAG_STORE_BODY": "none",
                     "CLOSESPIDER_PAGECOUNT": args.pages_budget},
        "params": asdict(params), "hold": hold,
        "depth_vs": versus,
    }
    (args.out / "focus.json").write_text(json.dumps(report, indent=1, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
