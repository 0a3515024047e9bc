"""What a link's URL path predicts (spitag.pathmodel), and how ``spitag`` and the simple
reference ``parent`` use it."""

from __future__ import annotations

import pytest

from spitag.pathmodel import MAX_KEYS, SHRINK, PathModel, path_keys
from spitag.scoring import Parent, depth_discount
from tests.support.settings import strategy


def parent(url: str, score: float, depth: int = 1) -> Parent:
    return Parent(url=url, depth=depth, priority=1.0, score=score, outlinks=3)


@pytest.mark.parametrize("url, keys", [
    ("http://a.test/", ("a.test", "", "")),
    ("http://a.test/index.html", ("a.test", "", "")),
    ("http://A.test/Posts/my-first-post/", ("a.test", "posts", "posts/*/")),
    ("http://a.test/posts/my-first-post/index.html", ("a.test", "posts", "posts/*/")),
    ("http://a.test/tags/go/page/2/", ("a.test", "tags", "tags/*/*/#/")),
    ("http://a.test/2019/05/a-slug.html", ("a.test", "#", "#/#/*")),
    ("http://a.test/about", ("a.test", "about", "about")),
    ("http://[bad/", ("", "", "")),
])
def test_path_keys(url: str, keys: tuple[str, str, str]) -> None:
    assert path_keys(url) == keys


def test_prediction_shrinks_each_level_towards_the_one_above() -> None:
    model = PathModel()
    site = 10.0
    # nothing learnt: the site's value
    assert model.predict("http://a.test/posts/x/", site) == site
    for slug in ("a", "b", "c"):
        model.learn(f"http://a.test/posts/{slug}/", 40.0)
    model.learn("http://a.test/tags/go/", 0.0)
    section = (120.0 + SHRINK * site) / (3 + SHRINK)  # posts: 3 pages of 40
    shape = (120.0 + SHRINK * section) / (3 + SHRINK)  # posts/*/: the same 3 pages
    assert model.predict("http://a.test/posts/new/", site) == pytest.approx(shape)
    assert model.predict("http://a.test/tags/rust/", site) == pytest.approx(
        (0.0 + SHRINK * (0.0 + SHRINK * site) / (1 + SHRINK)) / (1 + SHRINK))
    # a section seen, a shape not: the section's value
    assert model.predict("http://a.test/posts/new/comments/", site) == pytest.approx(section)
    assert model.estimate("http://a.test/posts/new/comments/", site)[1:] == ("section", 3)
    assert model.estimate("http://a.test/posts/new/", site)[1:] == ("shape", 3)
    assert model.estimate("http://a.test/about", site) == (site, None, 0)
    # another site learns nothing from this one's paths
    assert model.predict("http://b.test/posts/x/", site) == site
    assert model.predict("http://a.test/posts/new/", site) > site > model.predict("http://a.test/tags/rust/", site)


def test_memory_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("spitag.pathmodel.MAX_KEYS", 4)
    model = PathModel()
    for i in range(10):
        model.learn(f"http://a.test/s{i}/x", 5.0)
    assert len(model.levels) == 4
    assert model.predict("http://a.test/s9/x", 1.0) == 1.0  # not learnt: the level above
    assert MAX_KEYS >= 100_000


def test_spitag_orders_a_sites_links_by_what_their_paths_showed() -> None:
    s = strategy()
    home = "http://blog.test/"
    # the crawl has seen posts rich and tag pages poor on this site
    for i, (url, score) in enumerate([(home, 5.0), ("http://blog.test/posts/a/", 30.0),
                                      ("http://blog.test/tags/x/", 0.0), ("http://blog.test/posts/b/", 34.0),
                                      ("http://blog.test/tags/y/", 1.0)]):
        s.contribution(parent(url, score), "http://blog.test/")  # each parent observed once
    tag_page = parent("http://blog.test/tags/z/", 0.0)
    post = s.contribution(tag_page, "http://blog.test/posts/c/")
    assert s.reason() == {"learnt": "path shape", "pages": 2}  # posts/*/: a and b
    tag = s.contribution(tag_page, "http://blog.test/tags/w/")
    assert s.reason() == {"learnt": "path shape", "pages": 3}  # tags/*/: x, y and z
    assert post > 3 * tag
    # a path never seen on the site: the site's own pages; a site never fetched: nothing yet
    s.contribution(tag_page, "http://blog.test/about")
    assert s.reason() == {"learnt": "site", "pages": 6}
    s.contribution(tag_page, "http://other.test/posts/c/")
    assert s.reason() == {"learnt": "unseen site"}
    # the simple reference knows only the parent: both links tie at the tag page's score
    ref = strategy(SPITAG_STRATEGY="parent")
    assert ref.contribution(tag_page, "http://blog.test/posts/c/") == ref.contribution(tag_page, "x") == 0.0


def test_parent_reference_is_parent_score_best_first() -> None:
    ref = strategy(SPITAG_STRATEGY="parent")
    assert ref.combine == "max" and not ref.learns_hosts
    assert ref.seed() > 1e5  # seeds first
    rich, poor = parent("http://a.test/", 40.0, depth=3), parent("http://b.test/", 2.0, depth=1)
    assert ref.priority(rich, "http://c.test/") == pytest.approx(40.0 * depth_discount(4))
    assert ref.priority(rich, "http://c.test/") > ref.priority(poor, "http://c.test/")
