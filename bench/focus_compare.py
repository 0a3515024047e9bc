"""Is one crawler configuration's focus really better than another's, or is it luck?

    python bench/focus_compare.py --a OUT [OUT …] --b OUT [OUT …] [--k 300]
        [--strategy spitag] [--b-strategy S] [--permutations 20000] [--seed 0]

Reads the ``focus.json`` of ``bench/focus.py`` runs (each OUT a ``--out`` folder or the
file itself): arm A's crawls and arm B's crawls of the same webs. One crawl is one
draw of a noisy order (download timing decides which rich site is found first), so a
seed's harvest@K moves by ±0.1× the oracle between runs. This puts a number on that.

* The unit is a crawl's **×oracle at K** (harvest@K over the oracle's; the same web has
  the same oracle, so this is harvest@K rescaled to compare webs).
* Crawls are grouped by **web** (the generator's parameters, seed included): a
  difference is only ever taken between crawls of one web. The statistic is the mean
  over webs of (mean of A's crawls − mean of B's crawls), each web weighing the same.
* **p**: a stratified permutation test (Fisher–Pitman): within each web the A/B labels
  of its crawls are shuffled, which is what "no difference" allows, and p is the share
  of labellings whose statistic is at least as far from 0 as the observed one
  (two-sided). Exact (every labelling) when there are at most ``--permutations`` of
  them, else that many random ones.
* **90 % interval**: a stratified bootstrap (each web's A and B crawls resampled with
  replacement) of the statistic; webs with a single crawl in an arm contribute no
  spread of their own, so with few runs the interval is too narrow, not too wide.

``--b-strategy`` compares two strategies of the same runs (``--a X --b X --strategy
spitag --b-strategy opic``). A web that only one arm crawled is listed and left out
of the statistic.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import random
import statistics
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

from bench.harvest import harvest  # noqa: E402


@dataclass
class Web:
    """The crawls of one web in each arm, as ×oracle at K."""

    key: str
    label: str
    a: list[float] = field(default_factory=list)
    b: list[float] = field(default_factory=list)


def load(path: Path) -> dict[str, Any]:
    file = path / "focus.json" if path.is_dir() else path
    try:
        return json.loads(file.read_text())
    except (OSError, ValueError) as exc:
        raise SystemExit(f"focus_compare: cannot read {file}: {exc}") from None


def web_key(record: dict[str, Any]) -> tuple[str, str]:
    """(key, label) of a run's web: its parameters (the seed among them) and its hosts
    (``--hold``); whether several workers crawled it does not matter: that is a
    configuration, not a web."""
    params = record.get("web", {}).get("params") or record.get("params") or {}
    hold = record.get("hold")
    key = json.dumps([params, hold] if hold else params, sort_keys=True)
    shown = [f"seed {params.get('seed', '?')}"]
    shown += [f"{k} {params[k]}" for k in ("popularity", "homophily") if params.get(k)]
    if hold:
        shown.append(f"hold-{hold.get('half')} (split {hold.get('split_seed')})")
    return key, ", ".join(shown)


def ratios(record: dict[str, Any], strategy: str, k: int) -> list[float]:
    """×oracle at K of every crawl of ``strategy`` in one run record (None-free)."""
    best = harvest(record["oracle"]["counts"], k)
    if not best:
        return []
    out = []
    for crawl in record.get("crawls", []):
        if crawl.get("strategy") == strategy:
            got = harvest(crawl.get("counts") or [], k)
            if got is not None:
                out.append(got / best)
    return out


def gather(a: Sequence[Path], b: Sequence[Path], strategy: str, b_strategy: str, k: int) -> list[Web]:
    webs: dict[str, Web] = {}
    for arm, paths, name in (("a", a, strategy), ("b", b, b_strategy)):
        for path in paths:
            record = load(path)
            key, label = web_key(record)
            web = webs.setdefault(key, Web(key, label))
            getattr(web, arm).extend(ratios(record, name, k))
    return list(webs.values())


def difference(webs: Sequence[Web]) -> float:
    """Mean over webs of (mean of A − mean of B)."""
    return statistics.fmean(statistics.fmean(w.a) - statistics.fmean(w.b) for w in webs)


def permutation_p(webs: Sequence[Web], limit: int, rng: random.Random) -> tuple[float, int, bool]:
    """(two-sided p, labellings tried, exact?) of the stratified permutation test."""
    observed = abs(difference(webs))
    pools = [(w.a + w.b, len(w.a)) for w in webs]
    per_web = [math.comb(len(pool), n) for pool, n in pools]
    total = math.prod(per_web)
    tol = 1e-12 * max(1.0, observed)

    def statistic(splits: Sequence[Sequence[int]]) -> float:
        diffs = []
        for (pool, _), chosen in zip(pools, splits):
            inside = set(chosen)
            a = [pool[i] for i in chosen]
            b = [x for i, x in enumerate(pool) if i not in inside]
            diffs.append(statistics.fmean(a) - statistics.fmean(b))
        return abs(statistics.fmean(diffs))

    if total <= limit:
        choices = [list(itertools.combinations(range(len(pool)), n)) for pool, n in pools]
        hits = sum(statistic(s) >= observed - tol for s in itertools.product(*choices))
        return hits / total, total, True
    hits = 0
    for _ in range(limit):
        splits = [rng.sample(range(len(pool)), n) for pool, n in pools]
        hits += statistic(splits) >= observed - tol
    return (hits + 1) / (limit + 1), limit, False  # the observed labelling counts once


def bootstrap_interval(webs: Sequence[Web], rounds: int, rng: random.Random, level: float = 0.9) -> tuple[float, float]:
    draws = sorted(
        statistics.fmean(
            statistics.fmean(rng.choices(w.a, k=len(w.a))) - statistics.fmean(rng.choices(w.b, k=len(w.b)))
            for w in webs
        )
        for _ in range(rounds)
    )
    tail = (1.0 - level) / 2
    return draws[int(tail * (rounds - 1))], draws[int(round((1.0 - tail) * (rounds - 1)))]


def compare(webs: Sequence[Web], permutations: int = 20_000, seed: int = 0) -> dict[str, Any]:
    both = [w for w in webs if w.a and w.b]
    out: dict[str, Any] = {
        "webs": [
            {"web": w.label, "a": w.a, "b": w.b,
             "mean_a": statistics.fmean(w.a) if w.a else None, "mean_b": statistics.fmean(w.b) if w.b else None}
            for w in webs
        ],
        "compared": len(both),
    }
    if not both:
        return out
    rng = random.Random(seed)
    p, tried, exact = permutation_p(both, permutations, rng)
    low, high = bootstrap_interval(both, min(permutations, 10_000), rng)
    out.update(
        difference=difference(both),
        mean_a=statistics.fmean(statistics.fmean(w.a) for w in both),
        mean_b=statistics.fmean(statistics.fmean(w.b) for w in both),
        p=p, labellings=tried, exact=exact, interval90=(low, high),
    )
    return out


def report(result: dict[str, Any], k: int, names: tuple[str, str], file: Any = sys.stdout) -> None:
    a, b = names
    print(f"×oracle at K={k} per crawl; A = {a}, B = {b}", file=file)
    for w in result["webs"]:
        cells = "  ".join(
            f"{arm}: " + (", ".join(f"{x:.2f}" for x in w[arm]) or "—") for arm in ("a", "b")
        )
        diff = f"  A−B {w['mean_a'] - w['mean_b']:+.3f}" if w["a"] and w["b"] else "  (one arm only: left out)"
        print(f"  {w['web']:<36} {cells}{diff}", file=file)
    if not result["compared"]:
        print("no web was crawled by both arms: nothing to compare", file=file)
        return
    low, high = result["interval90"]
    how = "exact" if result["exact"] else "random"
    print(
        f"mean over {result['compared']} web(s): A {result['mean_a']:.3f}, B {result['mean_b']:.3f}, "
        f"A−B {result['difference']:+.3f} (90 % bootstrap {low:+.3f} … {high:+.3f}); "
        f"permutation p = {result['p']:.3f} ({result['labellings']} {how} labellings)",
        file=file,
    )


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--a", nargs="+", type=Path, required=True, help="focus.py --out folders (or focus.json) of arm A")
    p.add_argument("--b", nargs="+", type=Path, required=True, help="the same for arm B")
    p.add_argument("--k", type=int, default=300)
    p.add_argument("--strategy", default="spitag", help="arm A's strategy (and B's, unless --b-strategy)")
    p.add_argument("--b-strategy", default=None)
    p.add_argument("--permutations", type=int, default=20_000)
    p.add_argument("--seed", type=int, default=0, help="of the random labellings and the bootstrap")
    p.add_argument("--json", type=Path, default=None, help="also write the result here")
    args = p.parse_args(argv)
    if args.k <= 0 or args.permutations <= 0:
        p.error("--k and --permutations must be positive")
    b_strategy = args.b_strategy or args.strategy
    webs = gather(args.a, args.b, args.strategy, b_strategy, args.k)
    result = compare(webs, args.permutations, args.seed)
    report(result, args.k, (args.strategy, b_strategy) if b_strategy != args.strategy else ("A", "B"))
    if args.json:
        args.json.write_text(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
