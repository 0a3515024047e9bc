"""The site-learning ``spitag`` strategy (issue 3) on hand-computed cases."""

from __future__ import annotations

import pytest

from spitag import scoring
from spitag.errors import BadInputError
from spitag.scoring import (
    Parent,
    SiteLearning,
    depth_discount,
    gittins_index,
)
from spitag.ranking import HostRanking
from tests.support.settings import strategy


def parent(url: str = "http://a.test/", score: float = 30.0, **kw) -> Parent:
    base = {"url": url, "depth": 1, "priority": 30.0, "score": score, "outlinks": 4}
    base.update(kw)
    return Parent(**base)


def test_gittins_index_hand_computed() -> None:
    # μ = 40; r = 10 → r−1 = 9. Only the best site (100) is worth exploiting:
    # g = (40 + 9 · 100/4) / (1 + 9 · 1/4) = 265 / 3.25 = 81.538…, and 30 < g ≤ 100.
    assert gittins_index([10, 20, 30, 100], 10) == pytest.approx(265 / 3.25)
    # one page per site: no option value, the mean
    assert gittins_index([10, 20, 30, 100], 1) == pytest.approx(40.0)
    # r = 2: g = (40 + 100/4) / (1 + 1/4) = 52, in (30, 100]
    assert gittins_index([10, 20, 30, 100], 2) == pytest.approx(52.0)
    # equal sites: their value, whatever r
    assert gittins_index([25, 25, 25], 10) == pytest.approx(25.0)
    assert gittins_index([], 10) == 0.0


def test_gittins_index_is_the_fixed_point() -> None:
    values = [3, 8, 13, 21, 26, 29, 34, 40, 50, 63, 87, 145, 284]
    r = 10
    g = gittins_index(values, r)
    mu = sum(values) / len(values)
    above = [v for v in values if v >= g]
    per_fetch = (mu + (r - 1) * sum(above) / len(values)) / (1 + (r - 1) * len(above) / len(values))
    assert per_fetch == pytest.approx(g)
    # more pages to exploit per good site: exploring is worth more
    assert gittins_index(values, 3) < g < gittins_index(values, 30)


def test_host_posterior() -> None:
    posterior = HostRanking("posterior", k=0.25)
    # nothing fetched: the links' promise
    assert posterior.rank(40.0, 0.0, 0) == 40.0
    # one poor page (10) against a promise of 40 counted as 0.25 page: (10 + 10) / 1.25 = 16
    assert posterior.rank(40.0, 10.0, 1) == pytest.approx(16.0)
    # a rich site seen 4 times (284 each), promised 40: (1136 + 10) / 4.25
    assert posterior.rank(40.0, 4 * 284.0, 4) == pytest.approx(1146 / 4.25)
    # k = 0: the host's own mean once it has one
    assert HostRanking("posterior", k=0.0).rank(40.0, 30.0, 2) == 15.0
    assert HostRanking("posterior", k=0.0).rank(40.0, 0.0, 0) == 40.0
    # an estimate stands for the best link until a page is learnt
    assert posterior.rank(40.0, 0.0, 0, estimate=5.0) == 5.0
    assert posterior.rank(40.0, 10.0, 1, estimate=5.0) == pytest.approx(16.0)
    # not learning hosts: the best queued priority
    assert HostRanking().rank(40.0, 10.0, 1) == 40.0


def test_site_learning_contributions() -> None:
    s = SiteLearning(explore_pages=2)
    assert s.combine == "max" and s.learns_hosts
    p = parent("http://a.test/", score=30.0)
    # same host: the parent's own score
    assert s.contribution(p, "http://a.test/x") == 30.0
    # unseen host: the Gittins index of the sites seen so far (one site, 30) = 30
    assert s.contribution(p, "http://b.test/") == pytest.approx(30.0)
    # a page of b (score 90) is parsed: b is known, its mean is what a link to it is worth
    q = parent("http://b.test/", score=90.0)
    assert s.contribution(q, "http://a.test/y") == 30.0  # a is known: its mean
    assert s.contribution(q, "http://b.test/z") == 90.0
    # unseen c: sites a (30) and b (90), r = 2: μ = 60, g = (60 + 90/2) / (1 + 1/2) = 70
    assert s.contribution(q, "http://c.test/") == pytest.approx(70.0)
    # each parent is learnt once, whatever the number of its outlinks
    assert s.sites == {"a.test": [30.0, 1], "b.test": [90.0, 1]}


def test_absorbed_pages_count_like_observed_ones() -> None:
    """What the frontier learnt without this strategy (a resume, other workers) is
    learnt as if observed: a host's pages at once, by their sum and count."""
    s = SiteLearning(explore_pages=2)
    s.absorb("b.test", 270.0, 3)  # three pages of b, mean 90
    s.absorb("b.test", 0.0, 0)  # nothing: no change
    p = parent("http://a.test/", score=30.0)
    assert s.contribution(p, "http://b.test/x") == 90.0  # known: its mean
    # unseen c: sites a (30) and b (90), r = 2: g = 70, as if each had been observed
    assert s.contribution(p, "http://c.test/") == pytest.approx(70.0)
    s.absorb("a.test", 10.0, 1)  # another worker's page of a: mean (30 + 10) / 2
    assert s.contribution(parent("http://b.test/"), "http://a.test/z") == 20.0
    assert s.sites == {"a.test": [40.0, 2], "b.test": [300.0, 4]}  # b: + the parent above (30)


def test_equal_estimates_go_shallowest_first() -> None:
    """The depth discount: what breaks ties, and nothing else."""
    s = SiteLearning(explore_pages=2)
    shallow = parent("http://a.test/", score=30.0, depth=1)
    deep = parent("http://a.test/deep", score=30.0, depth=40)
    assert s.contribution(shallow, "http://a.test/x") == s.contribution(deep, "http://a.test/y") == 30.0
    assert s.priority(shallow, "http://a.test/x") == 30.0 * depth_discount(2) == 30.0 / (1 + 2e-5)
    assert s.priority(deep, "http://a.test/y") == pytest.approx(30.0 / (1 + 41e-5))
    assert s.priority(deep, "http://a.test/y") < s.priority(shallow, "http://a.test/x")
    # a better estimate still wins at any depth: 0.1 % at depth 100
    richer = parent("http://a.test/rich", score=30.1, depth=100)
    assert SiteLearning().priority(richer, "http://a.test/z") > SiteLearning().priority(shallow, "http://a.test/x")
    assert depth_discount(0) == 1.0 and depth_discount(-3) == 1.0


@pytest.mark.parametrize("name, discounted", [
    ("spitag", True), ("parent", True), ("importance", True), ("bfs", False), ("opic", False),
])
def test_which_strategies_break_ties_by_depth(name: str, discounted: bool) -> None:
    """Max-combined estimates that tie get the discount; bfs (already its depth) and the
    cash strategies (whose discount would compound through parent.priority) do not."""
    s = strategy(SPITAG_STRATEGY=name)
    p = parent("http://a.test/", score=30.0, depth=9, priority=0.5, outlinks=4)
    raw = s.contribution(p, "http://a.test/x/y")
    assert s.priority(p, "http://a.test/x/y") == pytest.approx(raw / (1 + 10e-5) if discounted else raw, rel=1e-12)


def test_estimates_of_waiting_hosts_follow_what_the_strategy_learns(monkeypatch) -> None:
    """``estimates``: every host valued as unseen and not learnt since, at what it is
    worth now (the frontier re-ranks them by it), in slices of the longest-waiting."""
    s = SiteLearning(explore_pages=2, link_evidence=0.0)
    p = parent("http://a.test/", score=30.0)
    for host in ("b", "c", "d"):
        assert s.contribution(p, f"http://{host}.test/") == pytest.approx(30.0)  # g over a (30)
    assert s.estimates() == [("b.test", 30.0), ("c.test", 30.0), ("d.test", 30.0)]
    refits = s.refits
    # b's first page (90) is parsed: b is learnt and waits no more; g is now 70
    s.contribution(parent("http://b.test/", score=90.0), "http://b.test/x")
    assert s.estimates() == [("c.test", pytest.approx(70.0)), ("d.test", pytest.approx(70.0))]
    assert s.refits > refits  # the scheduler re-ranks when this moved
    s.contribution(p, "http://e.test/")
    assert [h for h, _ in s.estimates(2)] == ["c.test", "d.test"]
    assert [h for h, _ in s.estimates(2)] == ["e.test", "c.test"]  # then round again
    s.absorb("c.test", 10.0, 1)  # another worker's page of c: c waits no more either
    assert [h for h, _ in s.estimates()] == ["d.test", "e.test"]
    # memory is bounded: past WAITING_MAX, the host re-ranked longest ago is let go
    monkeypatch.setattr(scoring, "WAITING_MAX", 2)
    s.contribution(p, "http://f.test/")
    assert [h for h, _ in s.estimates()] == ["e.test", "f.test"]


def test_settings_and_names() -> None:
    default = strategy()
    assert isinstance(default, SiteLearning) and default.name == "spitag"
    assert default.ranking == HostRanking("posterior", k=0.25)
    assert default.learns_hosts and not strategy(SPITAG_STRATEGY="bfs").learns_hosts
    assert not strategy(SPITAG_STRATEGY="parent").learns_hosts
    assert default.seed() > 1e5  # seeds before any page, in score units
    tuned = strategy(SPITAG_EXPLORE_PAGES="4", SPITAG_HOST_K="2", SPITAG_LINK_EVIDENCE="0")
    assert (tuned.explore_pages, tuned.ranking.k, tuned.link_evidence) == (4.0, 2.0, 0.0)
    with pytest.raises(BadInputError, match="SPITAG_EXPLORE_PAGES"):
        strategy(SPITAG_EXPLORE_PAGES="0.5")
    for removed in ("SPITAG_HOMOPHILY", "SPITAG_HOST_WEIGHT", "SPITAG_SCORE_HALF", "SPITAG_HOST_NAMES"):
        with pytest.raises(BadInputError, match=f"{removed} is no longer read"):
            strategy(**{removed: "1"})


def test_spitag_says_what_each_estimate_was_learnt_from() -> None:
    s = SiteLearning(explore_pages=2)
    home = parent("http://a.test/", score=30.0)
    s.contribution(home, "http://a.test/x")
    assert s.reason() is None  # a link on the parent's own site: the parent alone
    s.contribution(parent("http://b.test/", score=90.0), "http://b.test/y")
    s.contribution(home, "http://b.test/z")
    assert s.reason() == {"learnt": "site", "pages": 1}  # b's one page
    s.contribution(home, "http://c.test/")
    assert s.reason() == {"learnt": "unseen site"}


def test_parent_reference_is_parent_score_best_first() -> None:
    ref = strategy(SPITAG_STRATEGY="parent")
    assert ref.combine == "max" and not ref.learns_hosts
    assert ref.seed() > 1e5  # seeds first
    rich, poor = parent("http://a.test/", score=40.0, depth=3), parent("http://b.test/", score=2.0, depth=1)
    assert ref.priority(rich, "http://c.test/") == pytest.approx(40.0 * depth_discount(4))
    assert ref.priority(rich, "http://c.test/") > ref.priority(poor, "http://c.test/")
    assert ref.reason() is None


def test_frontier_command_says_why_in_words() -> None:
    from spitag.commands.frontier import why

    base = {"parent": "http://a.test/", "parent_score": 30.0}
    assert why(base, "spitag") == "spitag · linked from http://a.test/ (semantic score 30)"
    assert why({**base, "learnt": "site", "pages": 1200}, "spitag").endswith(
        " · expected from 1,200 pages of its site")
    assert why({**base, "learnt": "unseen site"}, "spitag").endswith(" · a site not fetched yet: worth exploring")
    assert why(None, "spitag") == "seed"
