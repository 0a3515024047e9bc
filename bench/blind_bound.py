"""How far can a strategy get without knowing a site before fetching it? (issue 3)

    python bench/blind_bound.py [--seeds 0-2] [--k 300] [--orders 100] [--hold a|b] [web parameters]

An upper bound on harvest@K for any strategy that knows nothing of a site's value
before fetching one of its pages, on the web of ``bench/webgen.py`` (whose inter-site
links pick their target site uniformly: no link says how rich a site is). The bound
*relaxes* the crawl: every site can be probed at any time, and once one page of a site
is fetched all its pages are known and available. A blind strategy then sees sites in
an order independent of their values; the best it can do is a threshold rule: probe
sites, and exploit every page of a probed site worth at least T, until the K pages are
spent. The bound is the best mean over thresholds T of that rule, over ``--orders``
random probe orders; the crawl's own constraints (links must be discovered, pages
arrive in parallel and stale) only lower it. Ratios are to the graph oracle
(``bench/focus.py``'s: best-first with every page's count, through the real links).

Two informed variants, same relaxation:

* ``names``: the probe order is chosen by ``spitag.hostnames.HostNameModel``, learnt
  online from the probes so far (the next probe is the unprobed site whose name
  predicts the most) — what the ``spitag`` strategy's host-name model can add;
* ``sizes``: sites probed biggest first (a strategy that knew each site's size).
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
from collections import defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

from bench.webgen import HOLD_SPLIT_SEED, WebParams, hold_halves  # noqa: E402
from spitag.hostnames import HostNameModel  # noqa: E402


def candidate_thresholds(values: Sequence[float], steps: int = 40) -> list[float]:
    """Thresholds worth trying for ``values`` (the site values): their quantiles in
    ``steps`` steps. Between two site values every threshold is the same rule, so the
    quantiles of the values themselves fit any corpus' scale."""
    vs = sorted(values)
    if not vs:
        return []
    return sorted({vs[min(round(i * (len(vs) - 1) / steps), len(vs) - 1)] for i in range(steps + 1)})


def threshold_harvest(order: Sequence[str], value: Mapping[str, float], size: Mapping[str, int], k: int,
                      t: float) -> float:
    """Probe sites in ``order``; a site worth ≥ t has its other pages exploited."""
    total, pages, good = 0.0, 0, []
    for host in order:
        if pages + len(good) >= k:  # probes and good pages fill the budget
            break
        total += value[host]
        pages += 1
        if value[host] >= t:
            good.extend([value[host]] * (size[host] - 1))
    good.sort(reverse=True)
    return (total + sum(good[: k - pages])) / k


def best_threshold(orders: Sequence[Sequence[str]], value: Mapping[str, float], size: Mapping[str, int],
                   k: int) -> tuple[float, float]:
    """(harvest, threshold): the best mean harvest@k of one threshold rule over ``orders``."""
    return max(
        (statistics.mean(threshold_harvest(o, value, size, k, t) for o in orders), t)
        for t in candidate_thresholds(list(value.values()))
    )


def values_and_sizes(pages: Mapping[str, Sequence[int]]) -> tuple[dict[str, float], dict[str, int]]:
    """(value, size) per site of ``pages`` (host → its pages' true counts): every site of
    these webs is single-template or nearly, so its value is its pages' mean."""
    value = {h: statistics.mean(c) for h, c in pages.items() if c}
    return value, {h: len(pages[h]) for h in value}


def random_orders(hosts: Sequence[str], orders: int, seed: int) -> list[list[str]]:
    """``orders`` probe orders of ``hosts``, drawn from ``random.Random(seed)``."""
    rng = random.Random(seed)
    return [rng.sample(hosts, len(hosts)) for _ in range(orders)]


def blind_harvest(pages: Mapping[str, Sequence[int]], ks: Sequence[int], orders: int = 200,
                  seed: int = 0) -> dict[int, dict[str, float]]:
    """What a strategy blind to a site's value before its first page can expect, per K:
    the best threshold rule's mean harvest@K over ``orders`` random probe orders, in the
    relaxed crawl of this module's docstring. ``pages``: host → its pages' true counts
    (a site's value is their mean). Returns K → {"harvest", "threshold"}; a K larger
    than the web has pages is left out.

    A mean over orders, not a bound on one crawl: a crawl is one order, and a web whose
    seeds happen to lead to rich sites first can beat it (``bench/README.md``)."""
    value, size = values_and_sizes(pages)
    drawn = random_orders(sorted(value), orders, seed)
    out: dict[int, dict[str, float]] = {}
    for k in ks:
        if 0 < k <= sum(size.values()):
            got, t = best_threshold(drawn, value, size, k)
            out[k] = {"harvest": got, "threshold": t}
    return out


def named_order(hosts: Sequence[str], value: dict[str, float], k: int, rng: random.Random) -> list[str]:
    """Probe order chosen by the host-name model, learnt from the probes so far
    (ties, and the start before the model predicts, in random order)."""
    pending = list(hosts)
    rng.shuffle(pending)
    model = HostNameModel()
    order: list[str] = []
    while pending and len(order) < k:
        best = max(range(len(pending)), key=lambda i: model.deviation(pending[i]))
        host = pending.pop(best)
        order.append(host)
        model.learn(host, value[host])
        if len(order) % 5 == 0:  # as the crawler refits: every few pages learnt
            model.refit()
    return order + pending


def bound(seed: int, params: dict, k: int, orders: int, hosts: Sequence[str] | None = None) -> dict[str, float]:
    from bench.simulate import build_graph  # here: the simulator imports bench.focus, which imports this

    graph = build_graph(WebParams(seed=seed, **params), hosts=hosts)
    pages: dict[str, list[int]] = defaultdict(list)
    for host, count in zip(graph.host, graph.count):
        pages[host].append(count)
    value, size = values_and_sizes(pages)
    hosts = sorted(value)
    oracle = statistics.mean(graph.oracle(k))
    blind = random_orders(hosts, orders, seed)
    sizes = [sorted(o, key=lambda h: -size[h]) for o in blind]
    named = [named_order(hosts, value, k, random.Random(seed * 1000 + i)) for i in range(max(orders // 10, 4))]
    return {
        "oracle": oracle,
        "blind": best_threshold(blind, value, size, k)[0] / oracle,
        "names": best_threshold(named, value, size, k)[0] / oracle,
        "sizes": best_threshold(sizes, value, size, k)[0] / oracle,
    }


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--seeds", default="0-2")
    p.add_argument("--k", type=int, default=300)
    p.add_argument("--orders", type=int, default=100, help="random probe orders per web")
    p.add_argument("--size-median", type=float, default=None)
    p.add_argument("--inter-links", type=float, default=None)
    p.add_argument("--hold", choices=("a", "b"), default=None, help="webs of one half of the corpus' hosts")
    p.add_argument("--split-seed", type=int, default=HOLD_SPLIT_SEED)
    args = p.parse_args(argv)
    from bench.simulate import DEFAULT_WORK
    from bench.simulate_eval import parse_seeds

    hosts = hold_halves(None, DEFAULT_WORK, args.split_seed)[args.hold] if args.hold else None
    params = {}
    if args.size_median is not None:
        params["size_median"] = args.size_median
    if args.inter_links is not None:
        params["inter_links"] = args.inter_links
    rows = []
    print(f"upper bounds on harvest@{args.k} / graph oracle (relaxed crawl, best threshold rule)")
    print(f"{'seed':>4} {'oracle':>7} {'blind':>6} {'names':>6} {'sizes':>6}")
    for seed in parse_seeds(args.seeds):
        r = bound(seed, params, args.k, args.orders, hosts)
        rows.append(r)
        print(f"{seed:>4} {r['oracle']:7.1f} {r['blind']:6.2f} {r['names']:6.2f} {r['sizes']:6.2f}", flush=True)
    if len(rows) > 1:
        mean = {key: statistics.mean(r[key] for r in rows) for key in ("blind", "names", "sizes")}
        print(f"{'mean':>4} {'':>7} {mean['blind']:6.2f} {mean['names']:6.2f} {mean['sizes']:6.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
