"""The web of many hosts of bench/throughput.py (bench/throughput_hosts.py): it is
closed — a link to anything it does not serve becomes ``#`` — and the benchmark keys
nginx's log entries the way it keys the pages' true counts."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

from throughput_hosts import close_links, page_key  # noqa: E402

SERVED = {"a.test/index.html", "a.test/posts/one/index.html", "a.test/page0.html", "b.test/page3.html"}


def test_links_to_what_the_web_does_not_serve_become_hash() -> None:
    body = (b'<a href="/posts/one/">kept</a> <a href="/posts/one">kept, a folder</a>'
            b' <a href="http://b.test/page3.html">other host, kept</a> <a href="https://b.test/page3.html">kept</a>'
            b' <a href="/missing.html">dead</a> <a href="http://elsewhere.test/">outside</a>'
            b" <a href='//elsewhere.test/x'>outside</a> <a href=\"#top\">fragment</a>"
            b' <a href="mailto:x@a.test">mail</a> <a href="page0.html?x=1">kept, a query</a>')
    out = close_links(body, "http://a.test/page0.html", SERVED).decode()
    assert out.count('href="#"') == 3
    for kept in ('"/posts/one/"', '"/posts/one"', '"http://b.test/page3.html"', '"https://b.test/page3.html"',
                 '"#top"', '"mailto:x@a.test"', '"page0.html?x=1"'):
        assert kept in out
    assert "missing" not in out and "elsewhere" not in out


def test_log_entries_are_keyed_as_the_pages() -> None:
    assert page_key("a.test/") == "a.test/index.html"
    assert page_key("a.test/posts/one/?utm=1") == "a.test/posts/one/index.html"
    assert page_key("b.test/page3.html") == "b.test/page3.html"
