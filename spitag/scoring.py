"""Scoring strategies: the priority each outlink gets from the page that links to it.

A strategy turns a fetched parent page into a *contribution* for each of its outlinks.
When a URL is discovered again while it waits, the frontier combines the new
contribution with its priority as the strategy says: ``sum`` for cash-like strategies
(every parent adds), ``max`` for best-first ones. Higher priority is fetched first.

Chosen by ``SPITAG_STRATEGY``: ``spitag`` (default), ``opic``, ``importance``, ``bfs``.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar
from urllib.parse import urlsplit

from spitag.errors import BadInputError
from spitag.extract import SYNTAXES

if TYPE_CHECKING:
    from scrapy.settings import BaseSettings


@dataclass(frozen=True)
class Parent:
    """What a strategy may know of the page whose outlinks it scores."""

    url: str
    depth: int
    priority: float  # the priority the parent was fetched with (its cash, for OPIC)
    score: float  # its semantic score (semantic_score of its counts)
    outlinks: int  # distinct http(s) links on it


def semantic_score(counts: dict[str, int], weights: dict[str, float] | None = None) -> float:
    """A page's semantic score: ``Σ_syntax weight[syntax] · count[syntax]``.

    Weights come from ``SPITAG_SYNTAX_WEIGHTS`` (every syntax 1.0 by default, so the
    score is the page's total number of semantic items).
    """
    if weights is None:
        return float(sum(counts.get(s, 0) for s in SYNTAXES))
    return float(sum(weights.get(s, 1.0) * counts.get(s, 0) for s in SYNTAXES))


class Strategy(ABC):
    """One scoring strategy; built from settings, stateless between calls."""

    name: ClassVar[str]
    combine: ClassVar[str]  # "sum" or "max"
    learns_hosts: ClassVar[bool] = False  # rank hosts by their pages' semantic yield too

    @classmethod
    def from_settings(cls, settings: BaseSettings) -> Strategy:
        return cls()

    def seed(self) -> float:
        """Priority of an injected seed."""
        return 1.0

    @abstractmethod
    def contribution(self, parent: Parent, url: str) -> float:
        """What ``parent`` adds to the priority of its outlink ``url``."""

    def reason(self, parent: Parent) -> dict[str, Any]:
        """Why an outlink got its priority: stored with the item, shown by reports."""
        return {"strategy": self.name, "parent": parent.url, "parent_score": parent.score}


class BreadthFirst(Strategy):
    """``bfs``: priority = −depth. A page belongs to the lowest layer that reaches it
    (the max of −depth over its parents), so layer 1 is fetched before layer 2."""

    name = "bfs"
    combine = "max"

    def seed(self) -> float:
        return 0.0

    def contribution(self, parent: Parent, url: str) -> float:
        return -float(parent.depth + 1)


class OPIC(Strategy):
    """``opic`` (Abiteboul et al. 2003, Nutch's default): a seed holds cash 1; a fetched
    page splits its cash equally among its n outlinks, ``cash(child) += cash(p) / n``,
    and the cash is then spent (the page's history, not redistributed: no inflation)."""

    name = "opic"
    combine = "sum"

    def contribution(self, parent: Parent, url: str) -> float:
        return parent.priority / max(parent.outlinks, 1)


class Importance(Strategy):
    """``importance`` (the topic-crawler report):
    ``FACTOR · min(outlinks / MAX_LINK_NUM, 1) + (1 − FACTOR) · 1 / slashes``,
    ``outlinks`` = links on the page that holds the link, ``slashes`` = number of ``/`` in
    the outlink's path (its depth in the site, at least 1). ``SPITAG_IMPORTANCE_FACTOR``,
    ``SPITAG_MAX_LINK_NUM``."""

    name = "importance"
    combine = "max"

    def __init__(self, factor: float = 0.5, max_link_num: int = 100) -> None:
        if not 0.0 <= factor <= 1.0:
            raise BadInputError(f"SPITAG_IMPORTANCE_FACTOR must be in [0, 1], not {factor}")
        if max_link_num < 1:
            raise BadInputError(f"SPITAG_MAX_LINK_NUM must be at least 1, not {max_link_num}")
        self.factor = factor
        self.max_link_num = max_link_num

    @classmethod
    def from_settings(cls, settings: BaseSettings) -> Strategy:
        return cls(
            _float(settings, "SPITAG_IMPORTANCE_FACTOR"),
            int(_float(settings, "SPITAG_MAX_LINK_NUM")),
        )

    def contribution(self, parent: Parent, url: str) -> float:
        slashes = max(urlsplit(url).path.count("/"), 1)
        link_part = min(parent.outlinks / self.max_link_num, 1.0)
        return self.factor * link_part + (1.0 - self.factor) / slashes


class SpiTag(Strategy):
    """``spitag``: the parent's semantic score flows to its outlinks, OPIC-style.

    ``contribution = σ(p) + LINK_CASH · priority(p) / n``, with the normalized semantic
    score ``σ(p) = s / (s + HALF)`` (s = the parent's semantic score, HALF =
    ``SPITAG_SCORE_HALF``: the score worth σ = ½) and ``n`` its outlinks. Contributions
    sum, so a page linked from several rich pages outranks one linked from a single
    rich page, and a little plain link cash (``SPITAG_LINK_CASH``) keeps pages reached
    only through poor pages from starving.

    It also learns per host: the frontier ranks hosts by the mean semantic score of
    the pages fetched from them so far, blended with their best waiting priority
    (``spitag.frontier.base.host_rank``, weight ``SPITAG_HOST_WEIGHT``). Pages of one
    site share templates, so a site's first pages predict the rest far better than
    any single parent does; unknown hosts are ranked by what their parents promise.
    """

    name = "spitag"
    combine = "sum"
    learns_hosts = True

    def __init__(self, half: float = 10.0, link_cash: float = 0.1) -> None:
        if half <= 0:
            raise BadInputError(f"SPITAG_SCORE_HALF must be positive, not {half}")
        if link_cash < 0:
            raise BadInputError(f"SPITAG_LINK_CASH must not be negative, not {link_cash}")
        self.half = half
        self.link_cash = link_cash

    @classmethod
    def from_settings(cls, settings: BaseSettings) -> Strategy:
        return cls(_float(settings, "SPITAG_SCORE_HALF"), _float(settings, "SPITAG_LINK_CASH"))

    def normalized(self, score: float) -> float:
        return score / (score + self.half) if score > 0 else 0.0

    def contribution(self, parent: Parent, url: str) -> float:
        cash = self.link_cash * parent.priority / max(parent.outlinks, 1)
        return self.normalized(parent.score) + cash


STRATEGIES: dict[str, type[Strategy]] = {
    s.name: s for s in (SpiTag, OPIC, Importance, BreadthFirst)
}


def strategy_from_settings(settings: BaseSettings) -> Strategy:
    """The strategy named by ``SPITAG_STRATEGY``; BadInputError for an unknown name."""
    name = str(settings.get("SPITAG_STRATEGY", "spitag")).strip().lower()
    if name not in STRATEGIES:
        raise BadInputError(
            f"unknown SPITAG_STRATEGY {name!r}: choose one of {', '.join(STRATEGIES)}"
        )
    return STRATEGIES[name].from_settings(settings)


def syntax_weights(settings: BaseSettings) -> dict[str, float] | None:
    """``SPITAG_SYNTAX_WEIGHTS`` as a dict (None when every weight is 1)."""
    raw = settings.getdict("SPITAG_SYNTAX_WEIGHTS")
    unknown = set(raw) - set(SYNTAXES)
    if unknown:
        raise BadInputError(f"SPITAG_SYNTAX_WEIGHTS: unknown syntax {sorted(unknown)}")
    weights = {s: _finite(f"SPITAG_SYNTAX_WEIGHTS[{s}]", raw.get(s, 1.0)) for s in SYNTAXES}
    return None if all(w == 1.0 for w in weights.values()) else weights


def _float(settings: BaseSettings, name: str) -> float:
    return _finite(name, settings.get(name))


def _finite(name: str, raw: Any) -> float:
    try:
        value = float(raw)
    except (TypeError, ValueError):
        raise BadInputError(f"setting {name}={raw!r} is not a number") from None
    if not math.isfinite(value):
        raise BadInputError(f"setting {name}={raw!r} is not a finite number")
    return value
