"""Sweeps of ``bench/simulate.py``: strategies × seeds × web variants, ratios to the
oracle, bfs and opic at each K, mean and worst case.

    python bench/simulate_eval.py [--seeds 0-9] [--variants default,dense,...]
        [--config NAME:SETTING=VALUE,SETTING=VALUE ...] [--jitter 0.3 [--draws 4]]
        [--jobs 2] [--out FILE.json]

Variants (``VARIANTS``) change the web generator's parameters (the default sweep:
``UNIFORM_VARIANTS``, webs whose inter-site links ignore the sites' values; ask for
``corpus-links``, ``homophily`` or ``popular`` by name); ``hold-a`` / ``hold-b``
build the webs from one random half of the real hosts or the other (the split is
fixed by ``--split-seed``): tune on ``hold-a``, report ``hold-b`` as unseen pages.
Each ``--config`` is a ``spitag`` configuration (``NAME:`` then settings); the
baselines (bfs, opic, today's spitag as ``spitag-legacy``) and the oracle are run once
per web. With ``--jitter``, ``--draws N`` replays every web with N draws of the jitter
(draw d seeds it with the web's seed + 1000·d; draw 0 is the single draw of before),
and the means and worst cases are over every (web, draw): one draw of one web is one
crawl's luck, and differences of 0.01–0.02 between configurations are within it.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import replace
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

from bench.simulate import (
    DEFAULT_WORK,
    SimConfig,
    build_graph,
    harvests,
    simulate,
)
from bench.webgen import HOLD_SPLIT_SEED, WebParams, hold_halves

VARIANTS: dict[str, dict[str, Any]] = {
    "default": {},
    "dense": {"intra_links": 4.0, "inter_links": 3.0},
    "sparse": {"intra_links": 1.0, "inter_links": 0.75},
    "inter-heavy": {"inter_links": 3.0, "inter_home": 0.2},
    "small-sites": {"size_median": 4.0},
    "big-sites": {"size_median": 16.0, "size_sigma": 1.2},
    "few-seeds": {"seeds": 1},
    "hold-a": {"hold": "a"},
    "hold-b": {"hold": "b"},
    # Webs whose links carry the sites' values (bench/webgen.py: popularity, homophily);
    # not in the default sweep. "corpus-links": calibrated on the corpus' editorial links
    # (linked sites worth ~40 items a page against 28.5, source-target correlation ~+0.15).
    "corpus-links": {"popularity": 0.75, "homophily": 0.15},
    "homophily": {"homophily": 0.5},
    "popular": {"popularity": 1.0},
}
UNIFORM_VARIANTS = tuple(v for v in VARIANTS if not {"popularity", "homophily"} & set(VARIANTS[v]))
BASELINES = ("bfs", "opic", "spitag-legacy")
DRAW_STRIDE = 1000  # jitter seed of draw d: the web's seed + DRAW_STRIDE · d


def parse_seeds(text: str) -> list[int]:
    out: list[int] = []
    for part in text.split(","):
        if "-" in part:
            a, b = part.split("-")
            out.extend(range(int(a), int(b) + 1))
        elif part.strip():
            out.append(int(part))
    return out


def parse_config(text: str) -> tuple[str, dict[str, str]]:
    name, _, rest = text.partition(":")
    settings = {}
    for item in filter(None, rest.split(",")):
        k, _, v = item.partition("=")
        settings[k.strip()] = v.strip()
    return name, settings


def _job(args: tuple[str, int, int, dict[str, Any], list[tuple[str, dict[str, str]]], list[int], str, dict[str, Any]]) -> dict[str, Any]:
    variant, seed, draw, vparams, configs, ks, work, extra = args
    vp = dict(vparams)
    hold = vp.pop("hold", None)
    hosts = extra["split"][hold] if hold else None
    params = replace(WebParams(seed=seed), **vp)
    graph = build_graph(params, Path(work), hosts=hosts)
    out: dict[str, Any] = {"variant": variant, "seed": seed, "draw": draw, "h": {}}
    out["h"]["oracle"] = harvests(graph.oracle(max(ks)), ks)
    cfg = SimConfig(jitter=extra.get("jitter", 0.0), jitter_seed=seed + DRAW_STRIDE * draw, **extra.get("sim", {}))
    for name in BASELINES:
        out["h"][name] = harvests(simulate(graph, {"SPITAG_STRATEGY": name}, cfg)["counts"], ks)
    for name, settings in configs:
        # SIM.<field>=value: a crawler-mechanics override (SimConfig) for this config
        sim = {k[4:]: type(getattr(cfg, k[4:]))(float(v)) for k, v in settings.items() if k.startswith("SIM.")}
        crawl = {k: v for k, v in settings.items() if not k.startswith("SIM.")}
        got = simulate(graph, {"SPITAG_STRATEGY": "spitag", **crawl}, replace(cfg, **sim))
        out["h"][name] = harvests(got["counts"], ks)
    return out


def ratios(results: list[dict[str, Any]], name: str, base: str, k: int) -> list[float]:
    out = []
    for r in results:
        a, b = r["h"][name][k], r["h"][base][k]
        if a is not None and b:
            out.append(a / b)
    return out


def report(results: list[dict[str, Any]], names: Sequence[str], ks: Sequence[int], file: Any = sys.stdout) -> dict[str, Any]:
    variants = list(dict.fromkeys(r["variant"] for r in results))
    table: dict[str, Any] = {}
    for name in names:
        table[name] = {}
        for scope in [*variants, "all"]:
            rs = [r for r in results if scope == "all" or r["variant"] == scope]
            cell = {}
            for k in ks:
                for base in ("oracle", "bfs", "opic"):
                    xs = ratios(rs, name, base, k)
                    if xs:
                        cell[f"{base}@{k}"] = {"mean": statistics.mean(xs), "min": min(xs), "n": len(xs)}
                hs = [r["h"][name][k] for r in rs if r["h"][name][k] is not None]
                if hs:
                    cell[f"h@{k}"] = statistics.mean(hs)
            table[name][scope] = cell
    print(f"{'config':<22}{'variant':<13}" + "".join(
        f"| K={k:<4} ×orc mean/min  ×bfs mean/min  ×opic mean/min " for k in ks), file=file)
    for name in names:
        for scope, cell in table[name].items():
            line = f"{name:<22}{scope:<13}"
            for k in ks:
                parts = []
                for base in ("oracle", "bfs", "opic"):
                    c = cell.get(f"{base}@{k}")
                    parts.append(f"{c['mean']:.2f}/{c['min']:.2f}" if c else "—")
                line += f"| {parts[0]:>15} {parts[1]:>13} {parts[2]:>13}  "
            print(line, file=file)
    return table


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--seeds", default="0-9")
    p.add_argument("--variants", default=",".join(UNIFORM_VARIANTS),
                   help=f"comma-separated, of {', '.join(VARIANTS)}")
    p.add_argument("--config", action="append", default=[], help="NAME:SETTING=VALUE,… (repeatable)")
    p.add_argument("--k", default="100,300,1000")
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--work", type=Path, default=DEFAULT_WORK)
    p.add_argument("--split-seed", type=int, default=HOLD_SPLIT_SEED)
    p.add_argument("--jitter", type=float, default=0.0)
    p.add_argument("--draws", type=int, default=1, help="jitter draws per web (with --jitter)")
    p.add_argument("--out", type=Path, default=None)
    p.add_argument("--sim", action="append", default=[], metavar="FIELD=VALUE",
                   help="crawler-mechanics override for every run, baselines included (SimConfig field)")
    p.add_argument("--only", default=None, help="configs to print (comma-separated), default all")
    args = p.parse_args(argv)
    if args.draws < 1 or (args.draws > 1 and not args.jitter):
        p.error("--draws must be at least 1, and more than 1 only with --jitter (without it every draw is the same)")
    ks = [int(k) for k in args.k.split(",")]
    configs = [parse_config(c) for c in args.config] or [("spitag", {})]
    variants = [v for v in args.variants.split(",") if v]
    base = SimConfig()
    sim = {k: type(getattr(base, k))(float(v)) for k, _, v in (x.partition("=") for x in args.sim)}
    extra = {"split": hold_halves(None, args.work, args.split_seed), "jitter": args.jitter, "sim": sim}
    jobs = [(v, s, d, VARIANTS[v], configs, ks, str(args.work), extra)
            for v in variants for s in parse_seeds(args.seeds) for d in range(args.draws)]
    started = time.monotonic()
    if args.jobs > 1:
        with ProcessPoolExecutor(args.jobs) as pool:
            results = list(pool.map(_job, jobs))
    else:
        results = [_job(j) for j in jobs]
    names = [*BASELINES, *(n for n, _ in configs)]
    if args.only:
        names = [n for n in names if n in args.only.split(",")]
    table = report(results, names, ks)
    webs = len(jobs) // args.draws
    draws = f" × {args.draws} jitter draws" if args.draws > 1 else ""
    print(f"({webs} webs{draws}, {time.monotonic() - started:.0f} s)")
    if args.out:
        args.out.write_text(json.dumps({"results": results, "table": table, "configs": configs,
                                        "argv": list(argv) if argv is not None else sys.argv[1:]}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
