"""Scoring strategies on hand-computed cases."""

from __future__ import annotations

import pytest

from spitag.errors import BadInputError
from spitag.scoring import (
    OPIC,
    BreadthFirst,
    Importance,
    Parent,
    ParentScore,
    semantic_score,
)
from tests.support.settings import options, strategy


def parent(**kw) -> Parent:
    base = {"url": "http://a.test/", "depth": 2, "priority": 0.6, "score": 30.0, "outlinks": 4}
    base.update(kw)
    return Parent(**base)


def test_semantic_score_is_total_by_default_and_weighted_on_request() -> None:
    counts = {"json-ld": 2, "opengraph": 5, "meta": 4, "total": 11}
    assert semantic_score(counts) == 11.0
    weights = {"json-ld": 3.0, "opengraph": 1.0, "meta": 0.25}
    assert semantic_score(counts, weights) == 3 * 2 + 5 + 0.25 * 4


def test_bfs_gives_the_next_layer() -> None:
    s = BreadthFirst()
    assert (s.combine, s.seed()) == ("max", 0.0)
    assert s.contribution(parent(depth=2), "http://a.test/x") == -3.0


def test_opic_splits_the_cash() -> None:
    s = OPIC()
    assert s.combine == "sum"
    assert s.contribution(parent(priority=0.6, outlinks=4), "http://a.test/x") == pytest.approx(0.15)
    # the four shares add back up to the parent's cash: nothing is created
    assert 4 * s.contribution(parent(priority=0.6, outlinks=4), "x") == pytest.approx(0.6)


def test_importance_formula() -> None:
    s = Importance(factor=0.5, max_link_num=100)
    # 0.5·min(50/100, 1) + 0.5·1/3 for a path /a/b/c (3 slashes)
    assert s.contribution(parent(outlinks=50), "http://a.test/a/b/c") == pytest.approx(0.25 + 0.5 / 3)
    # link part saturates at MAX_LINK_NUM; the root path counts 1 slash
    assert s.contribution(parent(outlinks=500), "http://a.test/") == pytest.approx(0.5 + 0.5)


def test_strategies_from_settings() -> None:
    assert isinstance(strategy(SPITAG_STRATEGY="parent"), ParentScore)
    imp = strategy(SPITAG_STRATEGY="importance", SPITAG_IMPORTANCE_FACTOR="0.2")
    assert isinstance(imp, Importance) and imp.factor == 0.2
    with pytest.raises(BadInputError, match="SPITAG_STRATEGY='pagerank' is not one of"):
        strategy(SPITAG_STRATEGY="pagerank")
    with pytest.raises(BadInputError, match="SPITAG_HOST_K"):
        strategy(SPITAG_HOST_K="-1")
    with pytest.raises(BadInputError, match="SPITAG_IMPORTANCE_FACTOR"):
        strategy(SPITAG_IMPORTANCE_FACTOR="1.5")
    with pytest.raises(BadInputError, match="unknown syntax"):
        options(SPITAG_SYNTAX_WEIGHTS={"jsonld": 2})
    assert options().syntax_weights is None
    assert options(SPITAG_SYNTAX_WEIGHTS='{"meta": 0}').syntax_weights["meta"] == 0.0
