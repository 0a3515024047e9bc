"""Scoring strategies: the priority each outlink gets from the page that links to it.

A strategy turns a fetched parent page into a *contribution* for each of its outlinks.
When a URL is discovered again while it waits, the frontier combines the new
contribution with its priority as the strategy says: ``sum`` for cash-like strategies
(every parent adds), ``max`` for best-first ones. Higher priority is fetched first.

Chosen by ``SPITAG_STRATEGY``: ``spitag`` (default), ``parent``, ``opic``, ``importance``, ``bfs``.
"""

from __future__ import annotations

import json
import math
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar
from urllib.parse import urlsplit

from spitag.errors import BadInputError
from spitag.extract import SYNTAXES
from spitag.linkevidence import LinkEvidence
from spitag.ranking import HostRanking

if TYPE_CHECKING:
    from spitag.options import Options


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
    """One scoring strategy, built from settings. Stateless between calls, except
    ``spitag`` (``SiteLearning``), which learns from the parents it scores."""

    name: ClassVar[str]
    combine: ClassVar[str]  # "sum" or "max"
    # How the frontier ranks hosts (spitag.ranking): by their best queued priority,
    # unless the strategy learns hosts.
    ranking: HostRanking = HostRanking()
    # Equal (positive) contributions go shallowest first (``depth_discount``): set by the
    # max-combined strategies whose estimates tie often. Not by ``bfs`` (its priority is
    # the depth) nor by the cash strategies (a discounted cash would compound along
    # every path).
    ties_shallowest: ClassVar[bool] = False

    @classmethod
    def from_options(cls, options: Options) -> Strategy:
        return cls()

    @property
    def learns_hosts(self) -> bool:
        """Hosts rank by what their pages showed: the strategy hears of every page."""
        return self.ranking.learns

    def seed(self) -> float:
        """Priority of an injected seed."""
        return 1.0

    @abstractmethod
    def contribution(self, parent: Parent, url: str) -> float:
        """What ``parent`` adds to the priority of its outlink ``url``."""

    def reason(self) -> dict[str, Any] | None:
        """What the last ``contribution`` rested on, beyond the parent (kept with the
        link for ``scrapy frontier``); None: the parent alone."""
        return None

    def priority(self, parent: Parent, url: str) -> float:
        """The priority pushed for the outlink ``url`` of ``parent``: its contribution,
        times ``depth_discount`` of the link's depth when ``ties_shallowest``."""
        value = self.contribution(parent, url)
        return value * depth_discount(parent.depth + 1) if self.ties_shallowest else value


class BreadthFirst(Strategy):
    """``bfs``: priority = −depth. A page belongs to the lowest layer that reaches it
    (the max of −depth over its parents), so layer 1 is fetched before layer 2."""

    name = "bfs"
    combine = "max"

    def seed(self) -> float:
        return 0.0

    def contribution(self, parent: Parent, url: str) -> float:
        return -float(parent.depth + 1)


class ParentScore(Strategy):
    """``parent``: the thesis' idea in its plainest form, and the simple reference row of
    the focus benchmark: a link's priority is the semantic score of the page it was
    found on, best-first (the max over its parents); equal scores go shallowest first."""

    name = "parent"
    combine = "max"
    ties_shallowest = True

    def seed(self) -> float:
        return SEED_PRIORITY

    def contribution(self, parent: Parent, url: str) -> float:
        return parent.score


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
    ``SPITAG_MAX_LINK_NUM``. Links of one slash count from link-rich pages all tie, so
    ties go shallowest first (``ties_shallowest``)."""

    name = "importance"
    combine = "max"
    ties_shallowest = True  # the formula ties whole layers (same slashes, link-rich parents)

    def __init__(self, factor: float = 0.5, max_link_num: int = 100) -> None:
        self.factor = factor
        self.max_link_num = max_link_num

    @classmethod
    def from_options(cls, options: Options) -> Strategy:
        return cls(options.importance_factor, options.max_link_num)

    def contribution(self, parent: Parent, url: str) -> float:
        slashes = max(urlsplit(url).path.count("/"), 1)
        link_part = min(parent.outlinks / self.max_link_num, 1.0)
        return self.factor * link_part + (1.0 - self.factor) / slashes


WAITING_MAX = 100_000  # unseen hosts SiteLearning keeps re-estimating (a few MB)
SEED_PRIORITY = 1e6  # ``spitag``'s seeds, in score units: more items than any page has
DEPTH_TIE = 1e-5  # relative priority a link loses per layer of depth (ties only)


def depth_discount(depth: int) -> float:
    """``1 / (1 + DEPTH_TIE · depth)``: of two links promising the same score, the
    shallower one first. Without it the frontier's ties go to the URL inserted last, and
    on a site whose pages all score alike a best-first crawl runs depth-first: its
    paths grow dozens of layers deep, and the trap guard (``trap_chain``, a URL shape
    seen far below its first depth) then drops ordinary pages. 1e-5 a layer is above
    the Redis frontier's priority resolution (4.8e-7) and below any difference of
    scores that matters (0.1 % at depth 100)."""
    return 1.0 / (1.0 + DEPTH_TIE * max(depth, 0))


def gittins_index(values: Sequence[float], pages: float) -> float:
    """What exploring an unseen site is worth per fetch, when sites are worth
    ``values`` (their mean page scores so far) and a site found good is exploited for
    ``pages`` pages in all.

    The policy "fetch one page of a new site, then its other ``pages − 1`` pages if its
    value is at least g" yields, per fetch, ``(μ + (r−1)·E[v·1{v ≥ g}]) / (1 + (r−1)·P(v ≥ g))``
    (μ = mean of the values, r = ``pages``). Its fixed point g* — the value at which
    exploring pays exactly as much as a known site of value g* — is the Gittins index of
    an unseen site (Gittins 1979; Weitzman's reservation value): a known site ranks above
    the unknown ones iff its value exceeds g*. Found by scanning the sorted values.
    With ``pages`` ≤ 1 it is μ (no option value); it grows with ``pages`` towards the
    best value seen.
    """
    if not values:
        return 0.0
    vs = sorted(values, reverse=True)
    n = len(vs)
    mu = sum(vs) / n
    r1 = max(pages - 1.0, 0.0)
    if r1 <= 0:
        return mu
    # f(g) = μ + r1·T(g)/n − g·(1 + r1·C(g)/n), T/C = sum/count of values ≥ g: decreasing
    # in g. Between consecutive sorted values C and T are constant, so the root is
    # g = (μ + r1·T/n) / (1 + r1·C/n) for the first prefix where it falls in range.
    top = 0.0
    for c in range(n + 1):
        if c > 0:
            top += vs[c - 1]
        g = (mu + r1 * top / n) / (1.0 + r1 * c / n)
        upper = vs[c - 1] if c > 0 else math.inf
        lower = vs[c] if c < n else -math.inf
        if lower < g <= upper or (c == 0 and g > vs[0]):
            return g
    return mu


class SiteLearning(Strategy):
    """``spitag``: each outlink is given the semantic score its page is expected to
    have, in score units (items per page); best-first (``max``) over its parents.

    The crawl learns per site: pages of one site share templates, so the pages of a
    site fetched so far predict its other pages far better than a link does. An
    outlink of parent p (score s) to URL u on host h gets

    * ``s`` when h is p's host: p is the nearest page of the same site (the thesis'
      propagation from the parent);
    * ``mean(h)`` when h is another host this strategy has already seen pages of
      (their mean score);
    * ``g_u`` when h was never seen: ``g`` is what exploring an
      unseen site is worth (``gittins_index`` of the site means seen so far, with
      ``SPITAG_EXPLORE_PAGES`` pages exploited per good site), ``g_u = g · e^(v·e)``
      with e what the *links* found to the host predict (``spitag.linkevidence``: the
      mean score of the pages linking to it and how many hosts link to it, weighed as
      the sites probed so far show they deserve), v = ``SPITAG_LINK_EVIDENCE``
      (default 1, 0 = off).

    The frontier ranks hosts by the posterior mean of their page score
    (the ``posterior`` of ``spitag.ranking``, ``SPITAG_HOST_K``):
    ``rank = (S + k · best) / (n + k)`` — S and n the score sum and count of the
    host's fetched pages, best its best waiting priority (a link's estimate) counted
    as k pseudo-pages. An unseen host ranks at ``best``; a host seen enough at its
    own mean. A poor host that a link promised well drops as soon as its first page
    is learnt, which max-combined priorities alone could never do. ``best`` of an
    unseen host holds the ``g_u`` of the moment its links were found, and g and the
    link model move as the crawl learns: ``estimates`` gives every unseen
    host's ``g_u`` of now, and the scheduler has the frontier rank such a host by it
    (``LearningLog.rescore``, ``SPITAG_RESCORE_SECONDS``).

    The strategy learns from the parents it scores (each parent page once, when its
    first outlink is scored), and from what the frontier learnt without it
    (``absorb``): a resumed crawl's earlier pages, and with several workers every
    other worker's pages, and (``share``, ``links_found``, ``hear_links``) the links found
    by earlier runs and by the other workers.
    Equal estimates go shallowest first (``ties_shallowest``: breadth-first within a
    site of alike pages).
    """

    name = "spitag"
    combine = "max"
    ties_shallowest = True  # the pages of a site of alike pages all tie

    def __init__(
        self,
        explore_pages: float = 5.0,
        link_evidence: float = 1.0,
        ranking: HostRanking | None = None,
    ) -> None:
        self.ranking = ranking or HostRanking("posterior")
        self.explore_pages = explore_pages
        self.link_evidence = link_evidence  # weight of what the links to a host predict (0: off)
        self.links = LinkEvidence()
        self.sites: dict[str, list[float]] = {}  # host → [score sum, pages]
        self.waiting: dict[str, None] = {}  # hosts valued as unseen and not learnt since (ordered)
        self.refits = 0  # how often g and the models were refitted: estimates may have moved
        self._last_parent: str | None = None
        self._reason: dict[str, Any] | None = None
        self._index: float | None = None  # cached gittins index
        self._index_at = 0  # pages observed when it was computed
        self._observed = 0

    @classmethod
    def from_options(cls, options: Options) -> Strategy:
        return cls(options.explore_pages, options.link_evidence,
                   HostRanking("posterior", k=options.host_k))

    def seed(self) -> float:
        """Seeds (and sitemap URLs) first: above any semantic score."""
        return SEED_PRIORITY

    def observe(self, host: str, score: float) -> None:
        """Learn one fetched page's semantic score."""
        self.absorb(host, score, 1)

    def absorb(self, host: str, score_sum: float, pages: int) -> None:
        """Learn ``pages`` fetched pages of ``host`` at once, scoring ``score_sum`` in
        all: the pages the crawl learnt before a resume, or another worker's pages
        (the scheduler reads them from the frontier, ``LearningLog.learnt``)."""
        if pages <= 0:
            return
        site = self.sites.get(host)
        if site is None:
            site = self.sites[host] = [0.0, 0]
            self.waiting.pop(host, None)
            if self.link_evidence:
                self.links.learn(host, score_sum / pages)
        site[0] += score_sum
        site[1] += pages
        self._observed += pages

    def share(self) -> None:
        """From now on, gather the links found to hosts not fetched yet for
        ``links_found``: the frontier keeps them (a resumed crawl starts from them) and
        passes them to the other workers."""
        self.links.sharing = bool(self.link_evidence)

    def links_found(self) -> list[tuple[str, float, int, int]]:
        """The link evidence found since the last call, per host: (host, Σ log(1 +
        linking page's score), links, mask of linking hosts)."""
        return [(str(h), float(ls), int(n), int(m)) for h, ls, n, m in self.links.drain()]

    def hear_links(self, rows: Sequence[tuple[str, float, int, int]]) -> int:
        """Take in link evidence found elsewhere (an earlier run, another worker), as
        if found here; returns how many links it held."""
        heard = 0
        for host, log_sum, links, mask in rows:
            self.links.merge(host, log_sum, links, mask)
            heard += links
        return heard

    def explore_value(self) -> float:
        """g: the Gittins index of an unseen site over the site means seen so far
        (recomputed when the pages observed grew by 2 %, at least every page early)."""
        if self._index is None or self._observed - self._index_at > self._index_at // 50:
            means = [t / n for t, n in self.sites.values()]
            self._index = gittins_index(means, self.explore_pages)
            self._index_at = self._observed
            self.refits += 1
            if self.link_evidence:
                self.links.refit()
        return self._index

    def contribution(self, parent: Parent, url: str) -> float:
        """The score the outlink's page is expected to have (the cases above)."""
        parent_host = _host(parent.url)
        if parent.url != self._last_parent:
            self._last_parent = parent.url
            self.observe(parent_host, parent.score)
        host = _host(url)
        if host == parent_host:
            self._reason = None  # the parent alone
            return parent.score
        site = self.sites.get(host)
        if site is not None:
            self._reason = {"learnt": "site", "pages": int(site[1])}
            return site[0] / site[1]
        self._reason = {"learnt": "unseen site"}
        if self.link_evidence:
            self.links.saw_link(host, parent_host, parent.score)
        if host not in self.waiting:
            if len(self.waiting) >= WAITING_MAX:  # the one re-ranked longest ago keeps its rank
                del self.waiting[next(iter(self.waiting))]
            self.waiting[host] = None
        return self.unseen_value(host)

    def reason(self) -> dict[str, Any] | None:
        """What the last estimate was learnt from beyond the parent: another site's
        pages (``site``, with how many), or nothing yet (``unseen site``: the Gittins
        index and the links found to it)."""
        return self._reason

    def unseen_value(self, host: str) -> float:
        """What a page of a host not fetched yet is expected to score, as far as the
        crawl knows now: ``g · e^(v·e)`` (g the Gittins index, e what the links found
        to the host predict)."""
        g = self.explore_value()
        if not self.link_evidence:
            return g
        return g * math.exp(self.link_evidence * self.links.deviation(host))

    def estimates(self, limit: int = 0) -> list[tuple[str, float]]:
        """What each host this strategy valued as unseen, and not learnt since, is
        worth now (``unseen_value``): the frontier ranks such a host by it
        (``LearningLog.rescore``) instead of the value its links got when they were found,
        which froze g and the link model of that moment. ``limit`` > 0:
        at most that many, the longest-waiting first, the rest on the next calls."""
        hosts = list(self.waiting)
        if 0 < limit < len(hosts):
            hosts = hosts[:limit]
            for host in hosts:  # to the back of the line
                del self.waiting[host]
                self.waiting[host] = None
        return [(host, self.unseen_value(host)) for host in hosts]


def _host(url: str) -> str:
    try:
        return (urlsplit(url).hostname or "").lower()
    except ValueError:
        return ""


STRATEGIES: dict[str, type[Strategy]] = {
    s.name: s for s in (SiteLearning, ParentScore, OPIC, Importance, BreadthFirst)
}


def strategy_from_options(options: Options) -> Strategy:
    """The strategy named by ``SPITAG_STRATEGY``."""
    return STRATEGIES[options.strategy].from_options(options)


def syntax_weights_setting(name: str, raw: Any, _: Any = None) -> dict[str, float] | None:
    """``SPITAG_SYNTAX_WEIGHTS`` (spitag.options): a JSON object of syntax → weight ≥ 0;
    None when every weight is 1."""
    if isinstance(raw, dict):
        given = raw
    else:
        try:
            given = json.loads(raw) if isinstance(raw, str) and raw.strip() else {}
        except ValueError:
            given = None
    if not isinstance(given, dict):
        raise BadInputError(
            f"{name}={raw!r} is not a JSON object of syntax → weight, e.g. {{\"json-ld\": 2}}")
    unknown = set(given) - set(SYNTAXES)
    if unknown:
        raise BadInputError(f"{name}: unknown syntax {sorted(unknown)}")
    weights = {s: _finite(f"{name}[{s}]", given.get(s, 1.0)) for s in SYNTAXES}
    negative = sorted(s for s, w in weights.items() if w < 0)
    if negative:
        raise BadInputError(f"{name}: a weight must not be negative: {negative}")
    return None if all(w == 1.0 for w in weights.values()) else weights


def _finite(name: str, raw: Any) -> float:
    if isinstance(raw, bool):
        raise BadInputError(f"setting {name}={raw!r} is not a number")
    try:
        value = float(raw)
    except (TypeError, ValueError):
        raise BadInputError(f"setting {name}={raw!r} is not a number") from None
    if not math.isfinite(value):
        raise BadInputError(f"setting {name}={raw!r} is not a finite number")
    return value
