"""Host ranking (spitag.ranking) as the frontier applies it: one suite, every backend."""

from __future__ import annotations


import pytest
import redis

from spitag.frontier import Politeness
from spitag.ranking import HostRanking
from tests.frontier.conftest import entry


def test_posterior_host_ranking(make) -> None:
    """``spitag``: hosts rank by (S + k·best) / (n + k), S and n learnt, best their top link."""
    f = make(politeness=Politeness(delay=0.0, per_host=1), ranking=HostRanking("posterior", k=0.25))
    bests = {"a.test": 10.0, "b.test": 8.0, "c.test": 6.0, "d.test": 1.2, "e.test": 1.0}
    f.queue.push([entry(f"http://{h}/{i}", p) for h, p in bests.items() for i in (1, 2)], "max")
    # never fetched: ranked by their best priority
    assert [e.host for e in f.queue.pop(3)] == ["a.test", "b.test", "c.test"]
    assert make().queue.counts().queued == 7  # an inspecting opener (scrapy frontier) changes no ranking
    f.learning.learn([("a.test", 0.0), ("a.test", 0.0)])  # a: (0 + 0.25·10) / (2 + 0.25) ≈ 1.11
    f.learning.learn([("b.test", 20.0)])  # b: (20 + 0.25·8) / (1 + 0.25) = 17.6
    # b (17.6) > c (6, unseen) > d (1.2, unseen) > a (1.11) > e (1.0, unseen)
    assert [e.host for e in f.queue.pop(5)] == ["b.test", "c.test", "d.test", "a.test", "e.test"]


def test_posterior_k_weighs_the_link_promise(make) -> None:
    f = make(politeness=Politeness(delay=0.0, per_host=1), ranking=HostRanking("posterior", k=2.0))
    f.queue.push([entry("http://a.test/1", 10.0), entry("http://b.test/1", 4.5)], "max")
    f.learning.learn([("a.test", 0.0), ("a.test", 0.0)])  # k = 2: (0 + 2·10) / (2 + 2) = 5 > 4.5
    assert [e.host for e in f.queue.pop(2)] == ["a.test", "b.test"]
    g = make("other", politeness=Politeness(delay=0.0, per_host=1), ranking=HostRanking("posterior", k=0.0))
    g.queue.push([entry("http://a.test/1", 10.0), entry("http://b.test/1", 0.5)], "max")
    g.learning.learn([("a.test", 0.0), ("a.test", 1.0), ("a.test", 0.2)])  # k = 0: the mean, 0.4 < 0.5 (b's best)
    assert [e.host for e in g.queue.pop(2)] == ["b.test", "a.test"]


def test_rescore_ranks_hosts_not_learnt_by_their_latest_estimate(make) -> None:
    """``rescore``: a host not learnt yet ranks by the strategy's latest estimate, not by
    what its links were worth when found; its URLs keep their own order; a learnt host,
    and a host whose estimate came before its first URL, follow the same rules."""
    f = make(politeness=Politeness(delay=0.0, per_host=1), ranking=HostRanking("posterior", k=0.25))
    f.queue.push([entry("http://a.test/1", 10.0), entry("http://a.test/2", 9.0), entry("http://b.test/1", 5.0),
            entry("http://c.test/1", 7.0), entry("http://d.test/1", 1.0)], "max")
    f.learning.learn([("c.test", 6.0)])  # c: (6 + 0.25·7) / 1.25 = 6.2
    # a falls below d, b rises above c; c is learnt (its estimate is ignored); e has
    # no URL yet; a NaN is dropped
    assert f.learning.rescore([("a.test", 0.5), ("b.test", 8.0), ("c.test", 100.0), ("e.test", 3.0),
                      ("d.test", float("nan"))]) == 2
    assert [e.host for e in f.queue.top(10)][:1] == ["a.test"]  # the URLs' own priorities stay
    f.queue.push([entry("http://e.test/1", 50.0)], "max")  # e ranks by its estimate (3.0), not 50
    assert [e.host for e in f.queue.pop(5)] == ["b.test", "c.test", "e.test", "d.test", "a.test"]
    assert [e.url for e in f.queue.pop(5)] == ["http://a.test/2"]  # a's URLs in their own order
    assert f.learning.rescore([]) == 0
    # once learnt, a host ranks by what it showed, whatever its estimate was
    f.queue.push([entry("http://b.test/2", 5.0), entry("http://d.test/2", 1.0)], "max")
    f.learning.rescore([("b.test", 8.0), ("d.test", 0.1)])
    f.learning.learn([("d.test", 40.0)])
    assert [e.host for e in f.queue.pop(5)] == ["d.test", "b.test"]


def test_the_redis_frontier_ranks_hosts_as_the_python_reference_does(redis_url: str) -> None:
    """The Lua ``rank()`` (frontier/redis/lua/rank.lua) against ``HostRanking.rank``, the
    one declaration of the formulas, over every mode and a spread of inputs."""
    import random

    from spitag.frontier.redis.scripts import source

    client = redis.Redis.from_url(redis_url)
    script = client.register_script(
        source("common") + "\n" + source("rank")
        + "\nreturn string.format('%.17g', rank(tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])))"
    )
    rnd = random.Random(11)
    rankings = [HostRanking(), HostRanking("posterior", k=0.25), HostRanking("posterior", k=2.0),
                HostRanking("posterior", k=0.0)]
    for i, ranking in enumerate(rankings):
        prefix = f"spitag:rank{i}:"
        client.hset(prefix + "cfg", mapping=ranking.params())
        for _ in range(200):
            pages = rnd.choice([0, 0, 1, 2, 7, 300])
            best = rnd.choice([0.0, rnd.uniform(0, 1), rnd.uniform(0, 200), 1e6])
            score_sum = rnd.uniform(0, 80) * pages
            lua = float(script(args=[prefix, best, score_sum, pages]))
            assert lua == pytest.approx(ranking.rank(best, score_sum, pages), rel=1e-12, abs=1e-12), (ranking, best)
    assert float(script(args=["spitag:no-cfg:", 7.5, 3.0, 2])) == 7.5  # no ranking kept: by best
    # a crawl of the removed spitag-legacy kept "blend": ranked by best, in Lua as in Python
    client.hset("spitag:old:cfg", mapping={"mode": "blend", "k": "0.25", "w": "0.7", "half": "60", "prior": "0"})
    assert float(script(args=["spitag:old:", 7.5, 3.0, 2])) == 7.5
    assert HostRanking.from_params({"mode": "blend", "w": "0.7"}) == HostRanking()
    client.close()
