"""What a crawl harvested: the mean semantic items of its first K pages, and the order
a crawler knowing every page's count would fetch them in (the oracle). Shared by the
focus benchmarks."""

from __future__ import annotations

from collections.abc import Mapping, Sequence


def harvest(counts: Sequence[int], k: int) -> float | None:
    """Mean of the first k counts; None when fewer than k pages were fetched."""
    if len(counts) < k or k <= 0:
        return None
    return sum(counts[:k]) / k


def oracle_order(
    links: Mapping[str, Sequence[str]],
    counts: Mapping[str, int],
    seeds: Sequence[str],
    limit: int,
) -> list[str]:
    """Best-first with perfect knowledge: fetch the discovered, unfetched page with the
    highest true count (ties: the first discovered), then discover its links.

    Greedy, so an upper bound in spirit, not a proof: a crawler that spends a fetch on
    a poor hub early could in principle beat it at some K. Pages not in ``counts``
    (not answered 200) are never fetched.
    """
    import heapq

    heap: list[tuple[int, int, str]] = []
    discovered: set[str] = set()
    order: list[str] = []
    tick = 0

    def discover(url: str) -> None:
        nonlocal tick
        if url in discovered or url not in counts:
            return
        discovered.add(url)
        heapq.heappush(heap, (-counts[url], tick, url))
        tick += 1

    for seed in seeds:
        discover(seed)
    while heap and len(order) < limit:
        _, _, url = heapq.heappop(heap)
        order.append(url)
        for v in links.get(url, ()):
            discover(v)
    return order
