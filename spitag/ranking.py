"""How the frontier orders hosts: declared once, by the strategy.

A pop takes ready hosts in order of their *rank*, and each host's URLs in order of
priority. A strategy that does not learn hosts ranks a host by its best queued priority
(``best``). One that does declares how what the crawl learnt of a host — the score
sum S and count n of its pages fetched so far — enters the rank:

* ``posterior`` (``spitag``): the posterior mean of the host's page score,
  ``(S + k · best) / (n + k)``: ``best`` (a link's estimate of a page of the host, in
  score units) counted as k pseudo-pages (``SPITAG_HOST_K``). k ≤ 0: the host's mean
  once it has pages, else ``best``.

``HostRanking.rank`` is the reference. The SQLite frontier calls it; the Redis frontier
stores ``params()`` with the crawl and ranks in Lua (``frontier/redis/lua/rank.lua``),
tested against this function.
"""

from __future__ import annotations

from dataclasses import dataclass

MODES = ("best", "posterior")


@dataclass(frozen=True)
class HostRanking:
    mode: str = "best"
    k: float = 0.25  # posterior: the pages a link's promise is worth

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise ValueError(f"host ranking must be one of {MODES}, not {self.mode!r}")

    @property
    def learns(self) -> bool:
        """Whether hosts rank by what their pages showed."""
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
        if self.k <= 0:
            return score_sum / pages if pages else best
        return (score_sum + self.k * best) / (pages + self.k)

    def params(self) -> dict[str, str]:
        """What a backend that ranks on its own side keeps with the crawl."""
        return {"mode": self.mode, "k": repr(float(self.k))}

    @classmethod
    def from_params(cls, params: dict[str, str]) -> HostRanking:
        """The ranking a crawl stored; a mode this version does not rank by (``blend``, of
        the removed ``spitag-legacy``) ranks by ``best``."""
        if params.get("mode") not in MODES:
            return cls()
        return cls(params["mode"], float(params.get("k", 0.25)))
