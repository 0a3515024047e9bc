"""spitag.pace.UnscoredLimit on hand-computed cases: the limit on pages between
request and score is the profile pool's backlog plus twice the downloads Little's law
says keep it fed, within SPITAG_MAX_UNSCORED."""

from __future__ import annotations

from spitag.pace import UnscoredLimit


def _answers(limit: UnscoredLimit, n: int, every: float, latency: float, start: float = 100.0) -> None:
    for i in range(n):
        limit.answered(start + i * every, latency)


def test_a_crawl_held_by_its_cpu_keeps_a_short_backlog() -> None:
    limit = UnscoredLimit(max_unscored=64, max_backlog=8, window=32)
    # 16 answers 0.1 s apart, 20 ms each: 15 answers / 1.5 s = 10 a second × 0.02 s =
    # 0.2 downloads needed → 8 + 1 + ceil(0.4) = 10
    _answers(limit, 16, 0.1, 0.02)
    assert limit.downloads_needed() == 10.0 * 0.02
    assert limit.limit() == 10


def test_a_crawl_held_by_the_network_gets_its_downloads() -> None:
    limit = UnscoredLimit(max_unscored=64, max_backlog=8, window=32)
    # 40 a second × 0.5 s = 20 downloads needed → 8 + 1 + 40 = 49
    _answers(limit, 32, 0.025, 0.5)
    assert abs(limit.downloads_needed() - 20.0) < 1e-9
    assert limit.limit() == 49
    _answers(limit, 32, 0.01, 0.5, start=200.0)  # 100 a second: 50 needed, capped
    assert limit.limit() == 64


def test_the_window_forgets_old_answers() -> None:
    limit = UnscoredLimit(max_unscored=64, max_backlog=4, window=4)
    _answers(limit, 4, 0.01, 2.0)  # slow downloads: the cap
    assert limit.limit() == 64
    _answers(limit, 4, 0.5, 0.01, start=200.0)  # then fast ones, 2 a second: 0.02 needed
    assert abs(limit.latency_sum - 0.04) < 1e-9
    assert limit.limit() == 4 + 1 + 1


def test_twice_the_backlog_until_enough_is_known_and_the_cap_when_adapting_is_off() -> None:
    limit = UnscoredLimit(max_unscored=32, max_backlog=8, window=32)
    assert limit.limit() == 2 * 8 + 1  # nothing known: not the cap (the seeds' links come at once)
    _answers(limit, 15, 0.1, 0.001)
    assert limit.downloads_needed() is None and limit.limit() == 17
    limit.answered(101.5, 0.001)
    assert limit.limit() == 10
    small_cap = UnscoredLimit(max_unscored=12, max_backlog=8)
    assert small_cap.limit() == 12  # within the cap
    shared = UnscoredLimit(max_unscored=64, max_backlog=16)
    shared.share(2)  # two workers on this machine: 8 pages of backlog each
    assert shared.limit() == 17
    assert UnscoredLimit(max_unscored=64, max_backlog=16, start=64).limit() == 64  # the crawler before
    fixed = UnscoredLimit(max_unscored=32, max_backlog=0)
    _answers(fixed, 32, 0.1, 0.001)
    assert fixed.limit() == 32
    unlimited = UnscoredLimit(max_unscored=0, max_backlog=8)
    _answers(unlimited, 32, 0.1, 0.001)
    assert unlimited.limit() == 0
    same_instant = UnscoredLimit(max_unscored=32, max_backlog=8, window=4)
    _answers(same_instant, 4, 0.0, 0.001)
    assert same_instant.downloads_needed() is None and same_instant.limit() == 17


def test_workers_on_one_machine_share_its_backlog() -> None:
    limit = UnscoredLimit(max_unscored=64, max_backlog=16, window=32)
    _answers(limit, 16, 0.1, 0.02)  # 0.2 downloads needed: + 1 + ceil(0.4) = + 2
    assert limit.limit() == 16 + 2
    limit.share(2)  # two workers here: 8 each
    assert limit.limit() == 8 + 2
    limit.share(3)  # ceil(16 / 3) = 6
    assert limit.limit() == 6 + 2
    limit.share(40)  # never below one page
    assert limit.limit() == 1 + 2
    limit.share(0)  # nonsense counts as one
    assert limit.limit() == 16 + 2
