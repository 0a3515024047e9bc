"""The frontier's contracts (spitag.frontier): each suite runs against every backend."""

from __future__ import annotations

import time

import pytest

from spitag.frontier import Entry, open_frontier


def near(value):
    """A priority as it comes back: Redis keeps it as an integer code, within 4.8e-7
    relative of the one pushed (a sum: within one more step of 9.5e-7)."""
    return pytest.approx(value, rel=2e-6, abs=0)


def entry(url: str, priority: float = 1.0, depth: int = 1, parent: str | None = None,
          parent_score: float | None = None, note: dict | None = None) -> Entry:
    host = url.split("/")[2]
    return Entry(url, host, depth, priority, parent, parent_score, note)


@pytest.fixture(params=["sqlite", "redis"])
def frontier_url(request: pytest.FixtureRequest, tmp_path) -> str:
    if request.param == "redis":
        return request.getfixturevalue("redis_url")
    return f"sqlite:///{tmp_path}/frontier.db"


@pytest.fixture
def make(frontier_url: str):
    """``make(crawl="c", owner=None, **options)``: a frontier of the test's backend,
    closed at the end."""
    opened = []

    def factory(crawl: str = "c", owner: str | None = None, **kwargs):
        f = open_frontier(frontier_url, crawl, owner, **kwargs)
        opened.append(f)
        return f

    yield factory
    for f in opened:
        f.close()


class Clock:
    """The time since it was made, to judge a wait by what really passed: on a busy
    machine more may pass between two calls than a window of the test lasts, so a
    lower bound is the window less the time elapsed, not a constant."""

    def __init__(self) -> None:
        self.start = time.monotonic()

    def elapsed(self) -> float:
        return time.monotonic() - self.start

    def left(self, seconds: float, slack: float = 0.05) -> float:
        """What a wait of ``seconds`` begun when the clock was made has left, at least."""
        return seconds - self.elapsed() - slack
