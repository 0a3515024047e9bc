"""The host-name model (spitag.hostnames) and its use by the ``spitag`` strategy."""

from __future__ import annotations

import math

import pytest

from spitag.errors import BadInputError
from spitag.hostnames import HostNameModel, host_features
from spitag.scoring import Parent, SiteLearning
from tests.support.settings import options, strategy


def test_host_features() -> None:
    f = set(host_features("zulang.wordpress.com"))
    assert {"sfx:com", "dom:wordpress.com", "sub:zulang", "tok:zulang", "tok:wordpress"} <= f
    assert {"g4:^wor", "g4:word", "g4:ess$"} <= f
    g = set(host_features("www.gazetadopovo.com.br"))
    assert {"sfx:com.br", "dom:gazetadopovo.com.br", "sub:www", "g4:zeta"} <= g
    # sites of one platform share its registered domain
    assert "dom:wordpress.com" in host_features("other.wordpress.com")
    # an IP address or an unknown suffix: the host alone, nothing shared
    assert host_features("127.0.0.1") == ("host:127.0.0.1",)
    assert host_features("a.test") == ("host:a.test",)


def test_ridge_on_disjoint_features_is_hand_computable() -> None:
    # Each host has a single feature of its own: the exact ridge solution is
    # w = (y − μ) / (1 + λ), reached in one sweep.
    m = HostNameModel(ridge=1.0, min_sites=2)
    m.learn("a.test", math.e**2 - 1)  # y = 2
    assert m.deviation("a.test") == 0.0  # fewer than min_sites: no prediction
    m.learn("b.test", 0.0)  # y = 0
    m.refit()
    assert m.deviation("a.test") == pytest.approx((2 - 1) / 2)
    assert m.deviation("b.test") == pytest.approx((0 - 1) / 2)
    assert m.deviation("c.test") == 0.0  # nothing known of c's name
    m.learn("b.test", math.e**4 - 1)  # b's mean moved: its target is replaced
    m.refit()
    assert m.deviation("b.test") == pytest.approx((4 - 3) / 2)


def test_model_learns_what_names_share() -> None:
    m = HostNameModel()
    for i in range(10):
        m.learn(f"blog{i}.wordpress.com", 100.0)  # a rich platform
        m.learn(f"www.firma{i}.de", 5.0)  # poor company sites
    m.refit()
    rich, poor = m.deviation("newcomer.wordpress.com"), m.deviation("www.firma-neu.de")
    assert rich > 0.5 and poor < -0.5
    assert abs(m.deviation("unrelated.org")) < abs(rich)  # shares only weak features


def test_clip_bounds_the_deviation() -> None:
    m = HostNameModel(ridge=0.01, min_sites=2, clip=0.5)
    m.learn("a.test", 1e6)
    m.learn("b.test", 0.0)
    m.refit()
    assert m.deviation("a.test") == 0.5 and m.deviation("b.test") == -0.5


def parent(url: str, score: float) -> Parent:
    return Parent(url=url, depth=1, priority=score, score=score, outlinks=3)


def test_site_learning_uses_the_names() -> None:
    on, off = SiteLearning(explore_pages=1, host_names=2.0), SiteLearning(explore_pages=1, host_names=0.0)
    for s in (on, off):
        for i in range(6):
            s.contribution(parent(f"http://blog{i}.wordpress.com/", 100.0), "http://x.test/")
            s.contribution(parent(f"http://www.firma{i}.de/", 5.0), "http://x.test/")
    g = off.explore_value()
    assert g == pytest.approx(52.5)  # r = 1: the mean of the site means
    last = parent("http://www.firma5.de/", 5.0)
    # names off: every unseen host is worth g
    assert off.contribution(last, "http://new.wordpress.com/") == pytest.approx(g)
    # names on: g · e^(2·d), d the model's deviation
    rich = on.contribution(last, "http://new.wordpress.com/")
    poor = on.contribution(last, "http://www.firma-neu.de/")
    assert rich == pytest.approx(g * math.exp(2 * on.names.deviation("new.wordpress.com")))
    assert poor < g < rich


def test_host_names_setting() -> None:
    assert strategy().host_names == 2.0
    assert strategy(SPITAG_HOST_NAMES="0").host_names == 0.0
    assert options(SPITAG_HOST_NAMES="0.5").host_names == 0.5
    for bad in ("-1", "many", "1e9", "lots"):
        with pytest.raises(BadInputError, match="SPITAG_HOST_NAMES"):
            options(SPITAG_HOST_NAMES=bad)


def test_the_model_keeps_its_first_sites_only() -> None:
    m = HostNameModel(max_sites=2, min_sites=1)
    m.learn("a.test", 1.0)
    m.learn("b.test", 2.0)
    m.learn("c.test", 3.0)  # beyond max_sites: not learnt
    m.learn("a.test", 5.0)  # a known site's mean still moves
    assert sorted(m.targets) == ["a.test", "b.test"]
    assert m.targets["a.test"] == pytest.approx(math.log1p(5.0))
