"""How far can a strategy get without knowing a site before fetching it?

An upper bound on harvest@K for any strategy that knows nothing of a site's value
before fetching one of its pages, on the web of ``bench/webgen.py`` (whose inter-site
links pick their target site uniformly: no link says how rich a site is). The bound
*relaxes* the crawl: every site can be probed at any time, and once one page of a site
is fetched all its pages are known and available. A blind strategy then sees sites in
an order independent of their values; the best it can do is a threshold rule: probe
sites, and exploit every page of a probed site worth at least T, until the K pages are
spent. The bound is the best mean over thresholds T of that rule, over random probe
orders; the crawl's own constraints (links must be discovered, pages
arrive in parallel and stale) only lower it. Ratios are to the graph oracle
(``bench/focus.py``'s: best-first with every page's count, through the real links).

``bench/focus.py`` prints it as its ``blind`` row (``blind_harvest``).
"""

from __future__ import annotations

import random
import statistics
from collections.abc import Mapping, Sequence


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
