"""URL filters and the trap guard, on hand-made cases."""

from __future__ import annotations

from pathlib import Path

import pytest

from spitag.errors import BadInputError
from spitag.filters import TrapGuard, UrlFilter, read_rules, skip_extensions
from spitag.urls import Scope
from tests.support.settings import options


def make(**kw) -> UrlFilter:
    return UrlFilter(Scope("domain", ["http://www.site.test/"]), **kw)


def test_scope_and_length() -> None:
    f = make(max_url_length=40)
    assert f.reason("http://news.site.test/a", 1) is None
    assert f.reason("http://other.test/", 1) == "scope"
    assert f.reason("http://www.site.test/" + "x" * 40, 1) == "url_length"


def test_domain_lists_cover_subdomains() -> None:
    f = make(forbidden_domains=["ads.site.test"])
    assert f.reason("http://x.ads.site.test/", 1) == "forbidden_domain"
    assert f.reason("http://www.site.test/", 1) is None
    allowed = make(allowed_domains=["other.test"])  # replaces the seed scope
    assert allowed.reason("http://a.other.test/", 1) is None
    assert allowed.reason("http://www.site.test/", 1) == "not_allowed_domain"


def test_nutch_style_rules(tmp_path: Path) -> None:
    rules = tmp_path / "regex-urlfilter.txt"
    rules.write_text("# skip queries\n-[?*!@=]\n+^http://www\\.site\\.test/\n")
    f = make(regex_rules=read_rules("SPITAG_REGEX_RULES", f"@{rules}"), suffixes=[".zip", ".JPG"],
             prefixes=["http://www.site.test/"])
    assert f.reason("http://www.site.test/a", 1) is None
    assert f.reason("http://www.site.test/a?b=1", 1) == "regex"  # first match wins
    assert f.reason("http://www.site.test/photo.jpg", 1) == "suffix"
    assert f.reason("http://news.site.test/a", 1) == "prefix"
    no_match = make(regex_rules=["+^https://"])
    assert no_match.reason("http://www.site.test/", 1) == "regex"  # no rule matched
    with pytest.raises(BadInputError, match="starts with"):
        make(regex_rules=["[bad"])


def test_files_with_no_html_are_skipped_by_their_extension(tmp_path: Path) -> None:
    """``SPITAG_SKIP_EXTENSIONS``: by default Scrapy's ``IGNORED_EXTENSIONS`` (what its
    link extractors leave out); a list may add to it or replace it; ``none`` skips none."""
    f = make(extensions=skip_extensions("default"))
    for path in ("/logo.PNG", "/paper.pdf", "/a/b.tar.gz", "/slides.pptx", "/app.js", "/site.css"):
        assert f.reason(f"http://www.site.test{path}", 1) == "extension", path
    for path in ("/", "/a.html", "/b.php?x=.pdf", "/c.xml", "/d.xml.gz", "/jpg", "/photos.jpg/"):
        assert f.reason(f"http://www.site.test{path}", 1) is None, path
    listed = tmp_path / "extensions.txt"
    listed.write_text("# ours\n.XML\nepub\n")
    assert skip_extensions(f"@{listed}") == {".xml", ".epub"}
    assert {".xml", ".pdf"} <= skip_extensions("default, xml")
    assert skip_extensions("none") == skip_extensions("") == frozenset()
    with pytest.raises(BadInputError, match="not a file extension"):
        skip_extensions("pdf, a b")


def test_limits() -> None:
    """(SPITAG_MAX_PAGES_PER_HOST is the frontier's, for every worker: tests/frontier.)"""
    f = make(max_depth=2)
    assert f.reason("http://www.site.test/deep", 3) == "depth"
    assert f.reason("http://www.site.test/1", 2) is None


def test_trap_guard() -> None:
    guard = TrapGuard(max_repeats=3, max_chain=5)
    assert guard.reason("http://a.test/a/a/b", 1) is None
    assert guard.reason("http://a.test/a/a/a/b", 1) == "trap_repeat"
    # a calendar: one shape, ever deeper
    verdicts = [guard.reason(f"http://a.test/cal?y=2026&m={m}", m) for m in range(1, 12)]
    assert verdicts[:6] == [None] * 6 and set(verdicts[6:]) == {"trap_chain"}
    # numbered pages found a layer or two below their index: never stopped
    assert all(guard.reason(f"http://a.test/p/{i}.html", 2 + i % 2) is None for i in range(5000))


def test_the_settings_report_bad_values() -> None:
    UrlFilter.from_options(options(), Scope("domain", ["http://a.test/"]))
    with pytest.raises(BadInputError, match="SPITAG_MAX_DEPTH"):
        options(SPITAG_MAX_DEPTH="deep")
    with pytest.raises(BadInputError, match="cannot read rule file"):
        options(SPITAG_REGEX_RULES="@/nonexistent/rules.txt")
    with pytest.raises(BadInputError, match="a rule starts with"):
        options(SPITAG_REGEX_RULES="no sign")


def test_scrapy_depth_limit_is_the_depth_limit_unless_ours_is_set() -> None:
    """Scrapy's DepthMiddleware is off (depth is the spider's own), so ``DEPTH_LIMIT``
    is honoured here: the limit when ``SPITAG_MAX_DEPTH`` is not set; 0, none."""
    scope = Scope("domain", ["http://a.test/"])
    assert UrlFilter.from_options(options(), scope).max_depth is None
    f = UrlFilter.from_options(options(DEPTH_LIMIT=2), scope)
    assert f.max_depth == 2 and f.reason("http://a.test/x", 2) is None and f.reason("http://a.test/y", 3) == "depth"
    assert UrlFilter.from_options(options(DEPTH_LIMIT=2, SPITAG_MAX_DEPTH="5"), scope).max_depth == 5
    assert UrlFilter.from_options(options(DEPTH_LIMIT=0, SPITAG_MAX_DEPTH=""), scope).max_depth is None
