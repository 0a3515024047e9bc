"""The robots.txt cache (spitag.frontier.robots): one suite, every backend."""

from __future__ import annotations

import time




def test_robots_kept_for_every_worker_until_their_time_is_up(make) -> None:
    """``RobotsCache.keep``: what one worker fetched, another (or a resumed run) reads, per
    host and port and per crawl, until its time to live is over; kept again, renewed."""
    a, b, other = make(owner="w:1:a"), make(owner="w:2:b"), make(crawl="other")
    assert b.robots.get("h.test") is None
    a.robots.keep("h.test", b"\x00blob", 1.5)
    a.robots.keep("h.test:8080", b"port", 30.0)
    assert b.robots.get("h.test") == b"\x00blob" and b.robots.get("h.test:8080") == b"port"
    assert other.robots.get("h.test") is None  # another crawl keeps its own
    time.sleep(1.6)
    assert b.robots.get("h.test") is None and b.robots.get("h.test:8080") == b"port"
    b.robots.keep("h.test", b"again", 30.0)
    assert a.robots.get("h.test") == b"again"
