from __future__ import annotations

import json
import re
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from spitag import urls
from spitag.extract import profile_html

from spitag.urls import BadURLError, Scope, normalize_url, redact, registered_domain


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("HTTP://WWW.Example.COM:80/a/../b?b=2&a=1#frag", "http://www.example.com/b?a=1&b=2"),
        ("https://example.org:443", "https://example.org/"),
        ("http://example.org:8080/x", "http://example.org:8080/x"),
        ("  http://example.org/a b  ", "http://example.org/a%20b"),
        ("http://bücher.de/ä", "http://xn--bcher-kva.de/%C3%A4"),
        ("http://[::1]:8080/p", "http://[::1]:8080/p"),
        ("http://127.0.0.1/", "http://127.0.0.1/"),
    ],
)
def test_normalize(raw: str, expected: str) -> None:
    assert normalize_url(raw) == expected
    assert normalize_url(expected) == expected  # idempotent


@pytest.mark.parametrize(
    "raw", ["ftp://x.org/", "mailto:a@b.c", "javascript:alert(1)", "http://", "x.org/a", "http://x:99999/"]
)
def test_normalize_rejects(raw: str) -> None:
    with pytest.raises(BadURLError):
        normalize_url(raw)


def test_registered_domain_uses_bundled_suffix_list() -> None:
    assert registered_domain("www.bbc.co.uk") == "bbc.co.uk"
    assert registered_domain("flink.apache.org") == "apache.org"
    assert registered_domain("127.0.0.1") == "127.0.0.1"
    assert registered_domain("localhost") == "localhost"
    assert registered_domain("www.site.test") == "site.test"  # unknown TLD: last two labels


def test_scope_modes() -> None:
    seeds = ["http://flink.apache.org/", "http://127.0.0.1:8000/"]
    domain = Scope("domain", seeds)
    assert domain.allows("https://www.apache.org/x")
    assert domain.allows("http://127.0.0.1:9000/other-port")
    assert not domain.allows("http://127.0.0.2/")
    assert not domain.allows("http://apache.com/")
    host = Scope("host", seeds)
    assert host.allows("http://flink.apache.org/a")
    assert not host.allows("http://www.apache.org/")
    assert Scope("any", seeds).allows("http://anything.example/")
    with pytest.raises(ValueError, match="SPITAG_SCOPE"):
        Scope("planet", seeds)


def test_redact_hides_passwords() -> None:
    assert redact("postgresql://bob:s3cret@db:5432/x") == "postgresql://bob:***@db:5432/x"
    assert "s3cret" not in redact("error talking to redis://:s3cret@h:6379/0: refused")
    assert redact("sqlite:///spitag.db") == "sqlite:///spitag.db"


def _full_normalize(url: str) -> str | None:
    """normalize_url without its shortcut for plain URLs."""
    try:
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(urls, "_PLAIN_URL", re.compile(r"(?!)"))  # matches nothing
            return normalize_url(url)
    except BadURLError:
        return None


def _normalize(url: str) -> str | None:
    try:
        return normalize_url(url)
    except BadURLError:
        return None


PLAIN_LOOKING = [
    "http://example.com", "https://example.com/", "http://example.com:80/a", "https://example.com:443/a",
    "http://example.com:8080/a/b.html", "http://example.com:0/", "http://example.com:65535/",
    "http://example.com:65536/", "http://example.com:00080/x", "http://a.b-c.d/x/../y", "http://a.b/./y",
    "http://a.b//double//slash", "http://a.b/~user/(x)!$'*+,=:@", "http://xn--bcher-kva.example/",
    "http://a-.b/", "http://-a.b/", "http://" + "a" * 63 + ".com/", "http://" + "a" * 64 + ".com/",
    "http://127.0.0.1:8000/p", "http://Example.com/", "HTTP://example.com/", "http://example.com./",
    "http://example.com/a;jsessionid=1", "http://example.com/a?b=1", "http://example.com/%7Euser",
    "http://example.com/a b", "http://example.com/ä", "http://ex_ample.com/",
]


@pytest.mark.parametrize("url", PLAIN_LOOKING)
def test_plain_url_shortcut_equals_full_normalization(url: str) -> None:
    assert _normalize(url) == _full_normalize(url)


def test_plain_url_shortcut_on_every_corpus_link(real_pages_dir: Path) -> None:
    """The shortcut takes most links of real pages, and gives what the full path gives."""
    taken = total = 0
    for line in (real_pages_dir / "manifest.jsonl").read_text(encoding="utf-8").splitlines():
        entry = json.loads(line)
        body = (real_pages_dir / entry["file"]).read_bytes()
        for href, _ in profile_html(body, "https://www.example.com/dir/page.html").links:
            total += 1
            taken += urls._PLAIN_URL.match(href.strip()) is not None
            assert _normalize(href) == _full_normalize(href), href
    assert total > 50_000 and taken > total * 0.6


@pytest.mark.parametrize("url", [
    "http://example.com/", "https://a.b.example.com:8443/x?y=1", "http://127.0.0.1:8000/", "http://[::1]:80/",
    "http://Example.COM/", "http://user@example.com/", "http://example.com", "http://example.com:/x",
    "https://xn--bcher-kva.example/a", "http://exa_mple.com/",
])
def test_host_of_equals_urlsplit(url: str) -> None:
    assert urls.host_of(url) == (urlsplit(url).hostname or "").lower()
