"""How the frontier orders hosts: declared once, by the strategy.

A pop takes ready hosts in order of their *rank*, and each host's URLs in order of
priority. A strategy that does not learn hosts ranks a host by its best queued priority
(``best``). One that does declares how what the crawl learnt of a host — the score
sum S and count n of its pages fetched so far — enters the rank:

* ``posterior`` (``spitag``): the posterior mean of the host's page score,
  ``(S + k · best) / (n + k)``: ``best`` (a link's estimate of a page of the host, in
  score units) counted as k pseudo-pages (``SPITAG_HOST_K``). k ≤ 0: the host's mean
  once it has pages, else ``best``.
* ``blend`` (``spitag-legacy``): the priority squashed into [0, 1), ``link = best /
  (best + 1)``, blended with σ of the host's mean, ``σ(m) = m / (m + half)``:
  ``W · σ(mean) + (1 − W) · link`` (W = ``SPITAG_HOST_WEIGHT``, half =
  ``SPITAG_SCORE_HALF``); a host with no page is taken to be as rich as ``prior``
  (``SPITAG_HOST_PRIOR``), or ranked by ``link`` alone when that is 0.

``HostRanking.rank`` is the reference. The SQLite frontier calls it; the Redis frontier
stores ``params()`` with the crawl and ranks in Lua (``frontier/redis/lua/rank.lua``),
tested against this function.
"""

from __future__ import annotations

from dataclasses import dataclass

MODES = ("best", "posterior", "blend")


@dataclass(frozen=True)
class HostRanking:
    mode: str = "best"
    k: float = 0.25  # posterior: the pages a link's promise is worth
    weight: float = 0.0  # blend: W
    half: float = 60.0  # blend: the score worth σ = ½
    prior: float = 0.0  # blend: the score assumed for a host with no page

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise ValueError(f"host ranking must be one of {MODES}, not {self.mode!r}")

    @property
    def learns(self) -> bool:
        """Whether hosts rank by what their pages showed (and are probed first)."""
        return self.mode != "best"

    def rank(self, best: float, score_sum: float = 0.0, pages: int = 0, estimate: float | None = None) -> float:
        """The rank of a host whose best queued priority is ``best``, whose ``pages``
        fetched pages scored ``score_sum`` in all; ``estimate``: the strategy's latest
        value of a host with no page yet (``LearningLog.rescore``), which stands for
        ``best`` until a page is learnt."""
        if self.mode == "best":
            return best
        if not pages and estimate is not None:
            best = estimate
        if self.mode == "posterior":
            if self.k <= 0:
                return score_sum / pages if pages else best
            return (score_sum + self.k * best) / (pages + self.k)
        link = best / (best + 1.0) if best > 0 else 0.0
        mean = score_sum / pages if pages else (self.prior if self.prior > 0 else None)
        if mean is None:
            return link
        sigma = mean / (mean + self.half) if mean > 0 else 0.0
        return self.weight * sigma + (1.0 - self.weight) * link

    def params(self) -> dict[str, str]:
        """What a backend that ranks on its own side keeps with the crawl."""
        return {"mode": self.mode, "k": repr(float(self.k)), "w": repr(float(self.weight)),
                "half": repr(float(self.half)), "prior": repr(float(self.prior))}

    @classmethod
    def from_params(cls, params: dict[str, str]) -> HostRanking:
        if not params.get("mode"):
            return cls()
        return cls(params["mode"], float(params.get("k", 0.25)), float(params.get("w", 0.0)),
                   float(params.get("half", 60.0)), float(params.get("prior", 0.0)))
