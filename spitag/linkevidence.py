"""What the links to a site say about it before its first page, learnt during the crawl.

A host that has not been fetched yet is known by the links found to it. On the real web those links often carry the site's value:
rich pages tend to link to sites like them (topical locality, the premise of focused
crawling: Davison 2000, Chakrabarti et al. 1999), and valuable sites are linked from
many others (popularity, the idea behind OPIC's in-link cash). Neither is assumed
here. The model learns from the sites the crawl has probed how well two link features
predicted each site's value. On a web where links say nothing, it predicts "average".

Features of a host u, from the links to it found so far on *other* hosts' pages:

* ``x1 = mean of log(1 + semantic score)`` over the pages found linking to u (a mean,
  not the best: the best grows with every link a waiting host collects, whatever
  the host is worth);
* ``x2 = log(number of distinct hosts linking to u)``, estimated by linear counting
  (Whang et al. 1990) in a 64-bit mask per host: exact while few hosts link, within a
  few percent up to ~100, so memory stays fixed per host.

When u's first page is learnt, the features it had then form one sample with target
``y = log(1 + its score)``. A ridge regression on centred values,
``y − ȳ = b1·(x1 − x̄1) + b2·(x2 − x̄2)``, with b1 and b2 kept non-negative (``refit``). ``deviation(u) = b1·(x1 − x̄1)
+ b2·(x2 − x̄2)``, clipped, is the predicted log-ratio of u's value to an average
site's. It is 0 until ``min_sites`` samples exist.

Memory is bounded: at most ``max_hosts`` unseen hosts are tracked (a few hundred bytes
each, whatever the links to them). A host beyond that has no evidence: deviation 0.

What the links said must outlive the process that saw them: a resumed crawl should
not start from nothing, and several workers of one crawl each parse only their share
of the pages. With ``sharing`` on, the links found are also gathered per host
(``drain``: ``[host, Σ log(1 + score), links, mask]`` rows) for the frontier, which
keeps their totals and passes them to the other workers; a strategy given such rows
(``merge``) counts them as if it had found the links itself: sums add, masks OR.
"""

from __future__ import annotations

import math
import zlib

MASK_BITS = 64  # the frontiers keep masks of up to 64 bits (Redis: two 32-bit words)
MASK = (1 << MASK_BITS) - 1


class LinkEvidence:
    """Online ridge regression of a probed site's log score on its in-link features.

    ``saw_link(host, from_host, score)`` records a link found to a host not learnt yet;
    ``learn(host, score)`` turns the host's evidence into a sample
    when its first page is learnt; ``refit()`` solves the regression;
    ``deviation(host)`` predicts from the host's current evidence.
    """

    def __init__(
        self,
        ridge: float = 3.0,
        min_sites: int = 16,
        clip: float = 2.0,
        max_hosts: int = 100_000,
    ) -> None:
        self.ridge = ridge
        self.min_sites = min_sites
        self.clip = clip
        self.max_hosts = max_hosts
        # unseen host → [Σ log(1 + score) of the links found, mask of linking hosts, links]
        self.pending: dict[str, list[float | int]] = {}
        self.learnt: set[str] = set()
        # the regression's sufficient statistics over samples (x1, x2, y): count, sums,
        # sums of products; memory and refit cost stay fixed however many sites are learnt
        self.n = 0
        self.sums = [0.0] * 3
        self.products = [[0.0] * 3 for _ in range(3)]
        self.coef = (0.0, 0.0)  # b1, b2 (≥ 0)
        self.centre = (0.0, 0.0)  # x̄1, x̄2
        self._fitted = False
        # with sharing on: the links found here since the last drain, per host, as pending
        self.sharing = False
        self.outbox: dict[str, list[float | int]] = {}

    def saw_link(self, host: str, from_host: str, score: float) -> None:
        """A page of ``from_host`` with semantic score ``score`` links to ``host``."""
        if host == from_host or host in self.learnt:
            return
        bit = 1 << (zlib.crc32(from_host.encode()) % MASK_BITS)
        if self._add(self.pending, host, math.log1p(max(score, 0.0)), 1, bit) and self.sharing:
            self._add(self.outbox, host, math.log1p(max(score, 0.0)), 1, bit)

    def merge(self, host: str, log_sum: float, links: int, mask: int) -> None:
        """Links found to ``host`` elsewhere (a ``drain`` row of another worker, or the
        frontier's totals from an earlier run): counted as if found here."""
        if host not in self.learnt and links > 0:
            self._add(self.pending, host, float(log_sum), int(links), int(mask) & MASK)

    def drain(self) -> list[list[float | int | str]]:
        """The links found here since the last drain, ``[host, Σ log(1 + score), links,
        mask]`` per host (empty unless ``sharing``). A host learnt meanwhile is kept: a
        worker hearing of it before its page learns from the same links as this one."""
        rows = [[h, round(float(e[0]), 6), e[2], e[1]] for h, e in self.outbox.items()]
        self.outbox = {}
        return rows

    def _add(self, table: dict[str, list[float | int]], host: str, log_sum: float, links: int, mask: int) -> bool:
        entry = table.get(host)
        if entry is None:
            if len(table) >= self.max_hosts:
                return False
            table[host] = [log_sum, mask, links]
            return True
        entry[0] += log_sum
        entry[1] = int(entry[1]) | mask
        entry[2] += links
        return True

    def features(self, host: str) -> tuple[float, float] | None:
        entry = self.pending.get(host)
        if entry is None:
            return None
        log_sum, mask, links = entry
        return log_sum / links, math.log(linking_hosts(int(mask)))

    def learn(self, host: str, score: float) -> None:
        """``host``'s first page is learnt: what its links said becomes a sample."""
        if host in self.learnt:
            return
        self.learnt.add(host)
        x = self.features(host)
        self.pending.pop(host, None)
        if x is not None:
            sample = (x[0], x[1], math.log1p(max(score, 0.0)))
            self.n += 1
            for i, a in enumerate(sample):
                self.sums[i] += a
                for j, b in enumerate(sample):
                    self.products[i][j] += a * b

    def refit(self) -> None:
        n = self.n
        if n < self.min_sites:
            self._fitted = False
            return
        means = [total / n for total in self.sums]
        # centred sums of products: Σ (a − ā)(b − b̄) = Σ ab − n·ā·b̄
        centred = [[self.products[i][j] - n * means[i] * means[j] for j in range(3)] for i in range(3)]
        gram = [row[:2] for row in centred[:2]]
        rhs = [centred[i][2] for i in range(2)]
        # Ridge over the covariates kept; a link feature whose coefficient comes out
        # negative is dropped and the rest refitted: a site found through better or more
        # links is never predicted worse. On a web where links say nothing the
        # coefficients are noise, and a negative one is also what selection makes of
        # in-degree there: a host the crawl puts off waits longer, collecting links.
        keep = [0, 1]
        while True:
            a = [[gram[i][j] + (self.ridge if i == j else 0.0) for j in keep] for i in keep]
            b = dict(zip(keep, _solve(a, [rhs[i] for i in keep])))
            negative = [i for i in keep if b[i] < 0]
            if not negative:
                break
            keep.remove(min(negative, key=lambda i: b[i]))
        self.coef = (b.get(0, 0.0), b.get(1, 0.0))
        self.centre = (means[0], means[1])
        self._fitted = True

    def deviation(self, host: str) -> float:
        """Predicted log(value / average value) of ``host`` from its links, clipped."""
        if not self._fitted:
            return 0.0
        x = self.features(host)
        if x is None:
            return 0.0
        dev = self.coef[0] * (x[0] - self.centre[0]) + self.coef[1] * (x[1] - self.centre[1])
        return max(-self.clip, min(self.clip, dev))


def linking_hosts(mask: int) -> float:
    """Linear counting: the expected number of distinct hosts that set ``mask``'s bits,
    ``m · ln(m / empty)`` (m bits, ``empty`` of them unset; a full mask counts as one empty)."""
    empty = max(MASK_BITS - bin(mask).count("1"), 1)
    return max(MASK_BITS * math.log(MASK_BITS / empty), 1.0)


def _solve(a: list[list[float]], b: list[float]) -> list[float]:
    """Gaussian elimination with partial pivoting; a (ridge-regularised) is non-singular."""
    n = len(b)
    m = [row[:] + [b[i]] for i, row in enumerate(a)]
    for col in range(n):
        pivot = max(range(col, n), key=lambda r: abs(m[r][col]))
        m[col], m[pivot] = m[pivot], m[col]
        for r in range(col + 1, n):
            f = m[r][col] / m[col][col]
            for c in range(col, n + 1):
                m[r][c] -= f * m[col][c]
    out = [0.0] * n
    for r in range(n - 1, -1, -1):
        out[r] = (m[r][n] - sum(m[r][c] * out[c] for c in range(r + 1, n))) / m[r][r]
    return out
