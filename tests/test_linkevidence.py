"""The link-evidence model (spitag.linkevidence) and its use by the ``spitag`` strategy."""

from __future__ import annotations

import math
import random

import pytest

from spitag.errors import BadInputError
from spitag.linkevidence import LinkEvidence, linking_hosts
from spitag.scoring import Parent, SiteLearning
from tests.support.settings import options, strategy


def score_of(x: float) -> float:
    """The score whose log(1 + score) is x."""
    return math.exp(x) - 1


def test_regression_on_the_linking_scores_is_hand_computable() -> None:
    # Two probed sites, each linked once, worth exactly what their linking page was:
    # x1 = y = 1 and 3, x2 = log 1 = 0, no name signal. Centred: x1 − 2 = ∓1, y − 2 = ∓1,
    # so b1 = Σxy / (Σx² + λ) = 2 / (2 + 1) and a host linked from x1 = 4 gets (2/3)·2.
    m = LinkEvidence(ridge=1.0, min_sites=2)
    m.saw_link("a.test", "src.test", score_of(1))
    m.saw_link("b.test", "src.test", score_of(3))
    m.learn("a.test", score_of(1))
    assert m.deviation("b.test") == 0.0  # fewer than min_sites: no prediction
    m.learn("b.test", score_of(3))
    m.refit()
    assert m.coef == pytest.approx((2 / 3, 0.0))
    m.saw_link("c.test", "src.test", score_of(4))
    assert m.deviation("c.test") == pytest.approx(4 / 3)
    assert m.deviation("unlinked.test") == 0.0  # no evidence at all


def test_in_degree_is_learnt_when_it_predicts() -> None:
    m = LinkEvidence(min_sites=8)
    for i in range(40):
        linkers = 1 + (i % 8)  # 1 … 8 distinct hosts link to site i
        for j in range(linkers):
            m.saw_link(f"s{i}.test", f"from{j}.test", 10.0)  # the same parent score
        m.learn(f"s{i}.test", 3.0 * linkers)  # the more linked, the richer
    m.refit()
    assert m.coef[0] == pytest.approx(0.0, abs=1e-9) and m.coef[1] > 0.5
    for j in range(6):
        m.saw_link("popular.test", f"from{j}.test", 10.0)
    m.saw_link("obscure.test", "from0.test", 10.0)
    assert m.deviation("popular.test") > 0 > m.deviation("obscure.test")


def test_a_feature_that_predicts_worse_is_dropped() -> None:
    # The more hosts link to a site here, the poorer it is (what selection does to
    # in-degree on a web whose links say nothing): b2 is held at 0, not made negative.
    m = LinkEvidence(min_sites=8)
    for i in range(40):
        linkers = 1 + (i % 8)
        for j in range(linkers):
            m.saw_link(f"s{i}.test", f"from{j}.test", 10.0 + i % 3)
        m.learn(f"s{i}.test", 100.0 / linkers)
    m.refit()
    assert m.coef[1] == 0.0 and m.coef[0] >= 0.0
    for j in range(6):
        m.saw_link("popular.test", f"from{j}.test", 10.0)
    m.saw_link("obscure.test", "from0.test", 10.0)
    assert m.deviation("popular.test") == m.deviation("obscure.test")


def test_links_that_say_nothing_predict_nothing() -> None:
    rng = random.Random(1)
    m = LinkEvidence()
    for i in range(1000):  # parent scores and in-degrees independent of the site's value
        for j in range(rng.randint(1, 5)):
            m.saw_link(f"s{i}.test", f"from{j}.test", rng.uniform(0, 200))
        m.learn(f"s{i}.test", rng.uniform(0, 200))
    m.refit()
    assert m.coef[0] < 0.15 and m.coef[1] < 0.15  # the standard error is ~0.05
    m.saw_link("new.test", "from0.test", 200.0)
    assert m.deviation("new.test") < 0.2


def test_what_is_tracked_is_bounded() -> None:
    m = LinkEvidence(max_hosts=2)
    m.saw_link("own.test", "own.test", 50.0)  # a link within a site is no evidence
    assert m.features("own.test") is None
    for j in range(10):
        m.saw_link("a.test", f"from{j}.test", float(j))
        m.saw_link("a.test", f"from{j}.test", 0.0)  # again, score 0: no new host, one more link
    mean, hosts = m.features("a.test")
    assert mean == pytest.approx(sum(math.log1p(j) for j in range(10)) / 20)  # 20 links, 10 of score 0
    assert hosts == pytest.approx(math.log(10), abs=0.15)
    m.saw_link("b.test", "from0.test", 1.0)
    m.saw_link("c.test", "from0.test", 1.0)  # a third host: not tracked
    assert m.features("c.test") is None
    m.learn("a.test", 5.0)
    assert m.features("a.test") is None and m.n == 1
    m.saw_link("a.test", "from1.test", 99.0)  # learnt: its links are no longer evidence
    assert m.features("a.test") is None
    m.learn("a.test", 7.0)  # learnt once only
    assert m.n == 1


def test_linear_counting_of_linking_hosts() -> None:
    assert linking_hosts(0) == 1.0 and linking_hosts(1) == pytest.approx(64 * math.log(64 / 63))
    rng = random.Random(2)
    for n in (1, 5, 20, 60, 120):
        m = LinkEvidence()
        for j in range(n):
            m.saw_link("t.test", f"h{rng.random()}.test", 1.0)
        estimate = math.exp(m.features("t.test")[1])
        assert abs(estimate - n) <= max(1.5, 0.25 * n), (n, estimate)


def parent(url: str, score: float) -> Parent:
    return Parent(url=url, depth=1, priority=score, score=score, outlinks=3)


def test_site_learning_uses_the_links() -> None:
    on = SiteLearning(explore_pages=1, link_evidence=1.0)
    off = SiteLearning(explore_pages=1, link_evidence=0.0)
    for s in (on, off):
        # a homophilous web: site b<k> is linked from site a<k> and worth what a<k> is
        for k in range(20):
            value = 1.0 + 10.0 * (k % 6)
            s.contribution(parent(f"http://a{k}.test/", value), f"http://b{k}.test/")
            s.contribution(parent(f"http://b{k}.test/", value), "http://elsewhere.test/")
    g = off.explore_value()
    last = parent("http://b19.test/", 11.0)
    assert off.contribution(last, "http://fresh.test/") == pytest.approx(g)
    rich = on.contribution(parent("http://b17.test/", 51.0), "http://rich.test/")
    poor = on.contribution(parent("http://b18.test/", 1.0), "http://poor.test/")
    assert on.links.n == 20 and on.links.coef[0] > 0.8  # 1, shrunk by the ridge
    assert rich == pytest.approx(g * math.exp(on.links.deviation("rich.test")))
    assert poor < g < rich


def test_link_evidence_setting() -> None:
    assert strategy().link_evidence == 1.0
    assert strategy(SPITAG_LINK_EVIDENCE="0").link_evidence == 0.0
    assert options(SPITAG_LINK_EVIDENCE="0.5").link_evidence == 0.5
    for bad in ("-1", "some", "1e9"):
        with pytest.raises(BadInputError, match="SPITAG_LINK_EVIDENCE"):
            options(SPITAG_LINK_EVIDENCE=bad)


def test_workers_that_share_their_links_learn_what_one_worker_would() -> None:
    """Two workers each score half of the pages; with the links each one found heard by
    the other (and each one's pages absorbed, as the frontier feeds them), both hold the
    link evidence and the regression samples of one worker that scored every page."""
    one = SiteLearning(explore_pages=1)
    a, b = (SiteLearning(explore_pages=1) for _ in range(2))
    a.share()
    b.share()
    rng = random.Random(5)
    for i in range(120):
        k = rng.randrange(30)
        page = parent(f"http://s{k}.test/{i}", 1.0 + 10.0 * (k % 6))
        links = [f"http://s{(k + rng.randrange(1, 4)) % 30}.test/{j}" for j in range(rng.randrange(1, 5))]
        worker, peer = (a, b) if i % 2 else (b, a)
        for url in links:
            assert one.contribution(page, url) == pytest.approx(worker.contribution(page, url))
        found = worker.links_found()
        assert peer.links_found() == []  # nothing found there since its last call
        assert peer.hear_links(found) == sum(row[2] for row in found)
        peer.absorb(f"s{k}.test", page.score, 1)
    for s in (a, b):
        assert s.links.pending.keys() == one.links.pending.keys()
        for host in one.links.pending:
            assert s.links.features(host) == pytest.approx(one.links.features(host))
        assert s.links.n == one.links.n > 16
        assert s.links.sums == pytest.approx(one.links.sums)
        s.links.refit()
    one.links.refit()
    assert a.links.coef == pytest.approx(one.links.coef) and b.links.coef == pytest.approx(one.links.coef)


def test_links_are_gathered_only_when_shared() -> None:
    alone = SiteLearning()
    alone.contribution(parent("http://a.test/", 5.0), "http://b.test/")
    assert alone.links_found() == []  # not shared: nothing gathered, nothing grows
    s = SiteLearning()
    s.share()
    s.contribution(parent("http://a.test/", 5.0), "http://b.test/1")
    s.contribution(parent("http://a.test/", 5.0), "http://b.test/2")
    ((host, log_sum, links, mask),) = s.links_found()
    assert (host, links, bin(mask).count("1")) == ("b.test", 2, 1)
    assert log_sum == pytest.approx(2 * math.log1p(5.0))
    assert s.links_found() == []  # drained
    heard = SiteLearning()
    assert heard.hear_links([("b.test", log_sum, links, mask), ("c.test", 1.0, 0, 1)]) == 2
    assert list(heard.links.pending) == ["b.test"]  # a row of no links adds nothing
    assert heard.links.features("b.test") == pytest.approx(s.links.features("b.test"))
