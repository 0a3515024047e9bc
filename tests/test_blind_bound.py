"""The 'blind' reference of the focus benchmark (``bench/blind_bound.py``): what a
strategy that learns a site's value only from its own pages can expect, on hand-made
webs whose answers are worked out by hand below."""

from __future__ import annotations

import pytest

from bench.blind_bound import blind_harvest, candidate_thresholds, threshold_harvest

VALUE = {"a": 10.0, "b": 2.0, "c": 6.0}
SIZE = {"a": 3, "b": 4, "c": 2}


def test_the_threshold_rule_probes_in_order_and_exploits_the_sites_worth_the_threshold() -> None:
    order = ["b", "a", "c"]
    # t=5: probe b (2, not exploited), probe a (10, its 2 other pages): 2 probes + 2 pages fill K=4
    assert threshold_harvest(order, VALUE, SIZE, 4, 5.0) == pytest.approx((2 + 10 + 10 + 10) / 4)
    # t=1: b is exploited at once, its 3 other pages fill the budget
    assert threshold_harvest(order, VALUE, SIZE, 4, 1.0) == pytest.approx((2 + 2 + 2 + 2) / 4)
    # t=11: nothing is worth it; the three probes are all there is (the fourth page is empty)
    assert threshold_harvest(order, VALUE, SIZE, 4, 11.0) == pytest.approx((2 + 10 + 6) / 4)
    # good pages found early but beyond the budget give way to better ones found later
    assert threshold_harvest(["c", "a"], VALUE, SIZE, 4, 5.0) == pytest.approx((6 + 10 + 10 + 10) / 4)


def test_thresholds_are_the_quantiles_of_the_site_values() -> None:
    assert candidate_thresholds([]) == []
    assert candidate_thresholds([3.0, 1.0, 2.0], steps=2) == [1.0, 2.0, 3.0]
    assert candidate_thresholds([float(v) for v in range(1001)], steps=4) == [0.0, 250.0, 500.0, 750.0, 1000.0]
    assert candidate_thresholds([5.0] * 9) == [5.0]


def test_blind_harvest_is_the_best_threshold_rule_over_random_orders() -> None:
    # Two sites of 3 pages, one worth 10 a page, one worth nothing, K=3. Threshold 10:
    # rich site first → 10, 10, 10; poor first → 0, 10, 10. Half the orders each: 25/3.
    # Threshold 0 exploits the poor site when it comes first (0, 0, 0): 5 on average.
    pages = {"rich.example": [10, 10, 10], "poor.example": [0, 0, 0]}
    got = blind_harvest(pages, [3, 7], orders=400, seed=1)
    assert got[3]["threshold"] == 10
    assert got[3]["harvest"] == pytest.approx(25 / 3, abs=0.5)
    assert 20 / 3 < got[3]["harvest"] < 10
    assert 7 not in got  # more pages than the web has: no figure
    # the same orders every time: one seed, one answer
    assert blind_harvest(pages, [3], orders=400, seed=1) == {3: got[3]}


def test_a_site_value_is_the_mean_of_its_pages() -> None:
    # one site only: whatever the order, its pages are all there is
    got = blind_harvest({"one.example": [4, 8, 0, 12]}, [2, 4], orders=5)
    assert got[4]["harvest"] == pytest.approx(6.0)  # the mean, 4 pages of it
    assert got[2]["harvest"] == pytest.approx(6.0)
