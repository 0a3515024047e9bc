"""Focus on a family of webs, tuned on one part and reported on the other.

    python bench/family.py                      # the evaluation part: every web, 3 runs, both objectives (~40 min)
    python bench/family.py --part tune          # the part the strategy may be tuned on
    python bench/family.py --part eval --runs 1 --objectives total --strategies bfs,parent,spitag   # a quick look

The webs are built from the corpus' 20 whole real websites (``bench/realweb.py``: the
sites under their own names, the links between them drawn by a documented model).
The sites are split once, before any tuning (``realweb.split_sites``), and each part
gives four webs that differ in how sites link to each other (locality 0, 0.3, 0.6),
in their seeds, and in whether URL paths say what a page is (the sites' own paths, or
opaque ones: ``-opaque``). ``--redis-workers N``: every crawl is N workers on one Redis
frontier, each with an N-th of the page budget; the harvest is the crawl's, from the
server's arrival order, whichever worker fetched a page. Every web is crawled by every strategy, interleaved (each run:
every strategy once), with the same seeds and the same page budget, once per
objective: ``total`` (every syntax counts 1) and ``structured`` (JSON-LD, microdata,
RDFa, OpenGraph, Twitter, Dublin Core: the crawl is told so with
``SPITAG_SYNTAX_WEIGHTS``, and its pages are scored by the same weights).

harvest@K is the mean true value of the first K distinct pages answered 200 with HTML
(meta-refresh aliases included), in the order the server answered them. Ratios per web
(mean of its runs) against ``bfs``, ``opic``, the simple reference ``parent``
(parent-score best-first) and the oracle (best-first knowing every page's value);
then, per strategy, the mean of the per-web ratios and the worst web.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import statistics
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Sequence

REPO_ROOT = Path(__file__).resolve().parents[1]
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

from bench.focus import arrival_pages, crawl_commands, run_crawl  # noqa: E402
from bench.harvest import harvest, oracle_order  # noqa: E402
from bench.realweb import LinkModel, RealWeb, manifest, split_sites, unpack  # noqa: E402
from testbed.redisserver import RedisServer  # noqa: E402
from testbed.webserver import DictSite, WebServer  # noqa: E402

logger = logging.getLogger("family")

OBJECTIVES: dict[str, dict[str, float] | None] = {
    "total": None,
    "structured": {"meta": 0.0, "microformat": 0.0},
}
REFERENCES = ("bfs", "opic", "parent")


@dataclass(frozen=True)
class WebSpec:
    name: str
    part: str
    locality: float
    seed: int
    opaque: bool = False  # URL paths that say nothing of a page (``RealWeb``'s ``opaque``)


FAMILY = (
    WebSpec("tune-l0", "tune", 0.0, 1), WebSpec("tune-l3", "tune", 0.3, 2), WebSpec("tune-l6", "tune", 0.6, 3),
    WebSpec("tune-l3-opaque", "tune", 0.3, 4, opaque=True),
    WebSpec("eval-l0", "eval", 0.0, 101), WebSpec("eval-l3", "eval", 0.3, 102), WebSpec("eval-l6", "eval", 0.6, 103),
    WebSpec("eval-l3-opaque", "eval", 0.3, 104, opaque=True),
)


def ratio(a: float | None, b: float | None) -> float | None:
    return None if a is None or not b else a / b


def web_rows(crawls: dict[str, list[list[float]]], oracle: list[float], ks: Sequence[int]) -> dict[str, Any]:
    """Per strategy and K: the harvest (mean of the runs, min, max) and its ratios."""
    rows: dict[str, Any] = {}
    mean_h = {s: {k: _mean([harvest(c, k) for c in runs]) for k in ks} for s, runs in crawls.items()}
    for strategy, runs in crawls.items():
        row = {}
        for k in ks:
            hs = [h for h in (harvest(c, k) for c in runs) if h is not None]
            row[k] = {"harvest": mean_h[strategy][k], "min": min(hs, default=None), "max": max(hs, default=None),
                      "oracle": ratio(mean_h[strategy][k], harvest(oracle, k)),
                      **{f"x{ref}": ratio(mean_h[strategy][k], mean_h.get(ref, {}).get(k)) for ref in REFERENCES}}
        rows[strategy] = row
    rows["oracle"] = {k: {"harvest": harvest(oracle, k)} for k in ks}
    return rows


def _mean(values: Sequence[float | None]) -> float | None:
    got = [v for v in values if v is not None]
    return statistics.fmean(got) if got else None


def overall(per_web: dict[str, dict[str, Any]], ks: Sequence[int]) -> dict[str, Any]:
    """Per strategy and K: mean and worst over the webs of each per-web ratio."""
    out: dict[str, Any] = {}
    strategies = {s for rows in per_web.values() for s in rows if s != "oracle"}
    for strategy in sorted(strategies):
        out[strategy] = {}
        for k in ks:
            cell = {}
            for key in ("oracle", *(f"x{r}" for r in REFERENCES)):
                values = [rows[strategy][k][key] for rows in per_web.values()
                          if strategy in rows and rows[strategy][k][key] is not None]
                cell[key] = {"mean": _mean(values), "worst": min(values, default=None)}
            out[strategy][k] = cell
    return out


def _fmt(x: float | None, digits: int = 2) -> str:
    return "—" if x is None else f"{x:.{digits}f}"


def print_web(name: str, rows: dict[str, Any], ks: Sequence[int]) -> None:
    print(f"\n{name}: harvest@K (min–max over runs) and ratios at K=" + "/".join(map(str, ks)))
    print(f"  {'strategy':<14}" + "".join(f"{'@' + str(k):>20}" for k in ks)
          + f"{'×bfs':>16}{'×opic':>16}{'×parent':>16}{'×oracle':>16}")
    for strategy, row in rows.items():
        if strategy == "oracle":
            print(f"  {'oracle':<14}" + "".join(f"{_fmt(row[k]['harvest'], 1):>20}" for k in ks))
            continue
        cells = "".join(f"{_fmt(row[k]['harvest'], 1) + ' (' + _fmt(row[k]['min'], 1) + '–' + _fmt(row[k]['max'], 1) + ')':>20}"
                        for k in ks)
        ratios = "".join(f"{'/'.join(_fmt(row[k][key]) for k in ks):>16}" for key in ("xbfs", "xopic", "xparent", "oracle"))
        print(f"  {strategy:<14}{cells}{ratios}")


def print_overall(title: str, table: dict[str, Any], ks: Sequence[int]) -> None:
    print(f"\n{title}: mean (worst web) of the per-web ratios at K=" + "/".join(map(str, ks)))
    print(f"  {'strategy':<14}" + "".join(f"{h:>34}" for h in ("×bfs", "×opic", "×parent", "×oracle")))
    for strategy, row in table.items():
        cells = []
        for key in ("xbfs", "xopic", "xparent", "oracle"):
            cells.append("/".join(_fmt(row[k][key]["mean"]) for k in ks) + " ("
                         + "/".join(_fmt(row[k][key]["worst"]) for k in ks) + ")")
        print(f"  {strategy:<14}" + "".join(f"{c:>34}" for c in cells))


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--part", choices=("tune", "eval", "all"), default="eval")
    p.add_argument("--webs", default="", help="comma-separated web names (default: every web of --part)")
    p.add_argument("--strategies", default="bfs,opic,parent,spitag")
    p.add_argument("--objectives", default="total,structured")
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--budget", type=int, default=2000, help="responses per crawl (CLOSESPIDER_PAGECOUNT)")
    p.add_argument("--k", default="100,300,1000")
    p.add_argument("--redis-workers", type=int, default=0,
                   help="each crawl: N workers on one Redis frontier (a redis-server started here), each an N-th of the budget")
    p.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                   help="one more setting for every crawl (a probe, not the benchmark's numbers)")
    p.add_argument("--corpus", default=None, help="folder with real-sites.tar.xz (default: ../shared/corpus)")
    p.add_argument("--work", type=Path, default=Path("/tmp/spitag-bench"))
    p.add_argument("--out", type=Path, default=REPO_ROOT / "bench" / "out" / "family")
    p.add_argument("--timeout", type=float, default=900.0)
    p.add_argument("--crawler-repo", type=Path, default=REPO_ROOT)
    return p.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s", datefmt="%H:%M:%S")
    ks = sorted({int(k) for k in args.k.split(",") if k.strip()})
    strategies = [s.strip() for s in args.strategies.split(",") if s.strip()]
    objectives = [o.strip() for o in args.objectives.split(",") if o.strip()]
    if args.redis_workers < 0 or args.runs < 1:
        print("family: --redis-workers must be 0 or more and --runs 1 or more", file=sys.stderr)
        return 2
    unknown = set(objectives) - set(OBJECTIVES)
    if unknown:
        print(f"family: unknown objectives {sorted(unknown)} (known: {sorted(OBJECTIVES)})", file=sys.stderr)
        return 2
    chosen = {w.strip() for w in args.webs.split(",") if w.strip()}
    specs = [w for w in FAMILY if (args.part == "all" or w.part == args.part) and (not chosen or w.name in chosen)]
    if not specs:
        print(f"family: no web matches --part {args.part} --webs {args.webs!r}", file=sys.stderr)
        return 2
    corpus = Path(args.corpus or os.environ.get("SPITAG_CORPUS") or REPO_ROOT.parent / "shared" / "corpus")
    try:
        top = unpack(corpus, args.work)
    except FileNotFoundError as exc:
        print(f"family: {exc} (--corpus DIR or $SPITAG_CORPUS)", file=sys.stderr)
        return 2
    parts = split_sites(manifest(top))
    args.out.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    record: dict[str, Any] = {"args": {k: str(v) for k, v in vars(args).items()}, "split": parts, "webs": {}}
    results: dict[str, dict[str, Any]] = {o: {} for o in objectives}
    for spec in specs:
        web = RealWeb(top, parts[spec.part], LinkModel(seed=spec.seed, locality=spec.locality),
                      args.work / "real-sites-counts.json", opaque=spec.opaque)
        graph = web.graph()
        seeds = [u for u in (web.resolve(s) for s in web.seeds) if u]
        summary = web.summary()
        logger.info("web %s: %d sites, %d pages (%d reachable), seeds %s", spec.name, summary["sites"],
                    summary["pages"], len(graph), ", ".join(web.seeds))
        oracles = {}
        for objective in objectives:
            values = web.values(list(graph), OBJECTIVES[objective])
            order = oracle_order(graph, values, seeds, max(ks))
            oracles[objective] = [values[u] for u in order]
        crawls: dict[str, dict[str, list[list[float]]]] = {o: {s: [] for s in strategies} for o in objectives}
        runs_record = []
        with contextlib.ExitStack() as stack:
            server = stack.enter_context(WebServer(default_site=DictSite()))
            server.add_sites(web.sites)
            redis_url = stack.enter_context(RedisServer()).url if args.redis_workers > 0 else None
            for run in range(args.runs):
                for objective in objectives:
                    weights = OBJECTIVES[objective]
                    extra = list(args.set)
                    if weights:
                        extra.append(f"SPITAG_SYNTAX_WEIGHTS={json.dumps(weights)}")
                    for strategy in strategies:
                        name = f"{spec.name}-{objective}-{strategy}-r{run + 1}"
                        folder = args.out / spec.name / objective / f"run{run + 1}" / strategy
                        cmd = crawl_commands(web.seeds, name, strategy, args.budget, folder, extra,
                                             redis_url, args.redis_workers)
                        got = run_crawl(server, cmd, folder, args.timeout, args.crawler_repo.resolve())
                        log = got.pop("log")
                        pages = arrival_pages(log, lambda h, t: web.count_of(h, t, weights))
                        counts = [p["count"] for p in pages]
                        crawls[objective][strategy].append(counts)
                        first = pages[:300]
                        logger.info("%s: %d pages 200 in %.0f s (rc %s); @300 %s; %d hosts in the first 300",
                                    name, len(pages), got["seconds"], got["returncode"],
                                    _fmt(harvest(counts, 300), 1), len({p["host"] for p in first}))
                        runs_record.append({"crawl": name, "strategy": strategy, "objective": objective,
                                            "run": run + 1, **got, "pages_200": len(pages),
                                            "unknown_200": sum(not p["known"] for p in pages), "counts": counts})
        record["webs"][spec.name] = {"spec": asdict(spec), "summary": summary, "reachable": len(graph),
                                     "oracle": oracles, "crawls": runs_record}
        for objective in objectives:
            results[objective][spec.name] = web_rows(crawls[objective], oracles[objective], ks)
    record["results"] = results
    record["overall"] = {o: overall(results[o], ks) for o in objectives}
    for objective in objectives:
        print(f"\n===== objective: {objective} =====")
        for name, rows in results[objective].items():
            print_web(name, rows, ks)
        print_overall(f"{args.part} part, {objective}", record["overall"][objective], ks)
    (args.out / f"family-{args.part}.json").write_text(json.dumps(record, indent=1))
    print(f"\n{len(specs)} webs × {len(strategies)} strategies × {len(objectives)} objectives × {args.runs} runs"
          f" in {time.monotonic() - started:.0f} s; details: {args.out / f'family-{args.part}.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
