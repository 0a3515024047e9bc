"""The store contract: the same suite runs against every backend (see conftest's ``store_url``)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from spitag.digest import md5_hex
from spitag.errors import BadInputError
from spitag.store import open_store
from spitag.store.schema import SCHEMA_VERSION


def record(url: str, body: str = "<html>x</html>", **extra: Any) -> dict[str, Any]:
    base = {
        "crawl": "c1",
        "url": url,
        "status": 200,
        "error": None,
        "depth": 1,
        "priority": 0.5,
        "reason": {"strategy": "spitag", "parent": "http://a.example/"},
        "fetched_at": "2026-11-30T10:00:00.000Z",
        "content_type": "text/html",
        "encoding": "utf-8",
        "size": len(body.encode("utf-8", "surrogatepass")),
        "truncated": False,
        "md5": md5_hex(body.encode("utf-8", "surrogatepass")),
        "md5dia": md5_hex(body.encode("utf-8", "surrogatepass")),
        "title": "T",
        "semantic": {"json-ld": 2, "total": 2},
        "score": 2.0,
        "data": {"json-ld": [{"@type": "Thing"}]},
        "outlinks": 0,
        "links": [],
        "redirect_to": None,
        "canonical": None,
        "expires": None,
        "body": body,
    }
    base.update(extra)
    return base


@pytest.fixture(params=["sqlite"])
def store_url(request: pytest.FixtureRequest, tmp_path) -> str:
    """Every store backend the contract runs against."""
    return f"sqlite:///{tmp_path}/store.db"


@pytest.fixture
def store(store_url: str):
    s = open_store(store_url)
    yield s
    s.close()


def test_schema_is_created_and_versioned(store) -> None:
    assert store.query("SELECT value FROM spitag_meta WHERE key = 'schema_version'") == [
        (str(SCHEMA_VERSION),)
    ]
    for table in ("page", "url", "link", "outlink"):
        assert store.query(f"SELECT COUNT(*) FROM {table}") == [(0,)]


def test_same_bytes_share_one_page(store) -> None:
    store.write([record("http://a.example/1"), record("http://a.example/2")])
    assert store.query("SELECT COUNT(*) FROM page") == [(1,)]
    rows = store.query("SELECT url, page_id FROM url ORDER BY url")
    assert [r[0] for r in rows] == ["http://a.example/1", "http://a.example/2"]
    assert rows[0][1] == rows[1][1] is not None


def test_writes_are_idempotent(store) -> None:
    batch = [
        record("http://a.example/", "<p>a</p>", links=["http://a.example/b", "http://z.example/"]),
        record("http://a.example/b", "<p>b</p>", links=["http://a.example/"]),
    ]
    store.write(batch)
    store.write(batch)  # a replayed lease
    assert store.query("SELECT COUNT(*) FROM page") == [(2,)]
    assert store.query("SELECT COUNT(*) FROM url") == [(2,)]
    assert store.query("SELECT COUNT(*) FROM link") == [(2,)]
    assert store.query("SELECT COUNT(*) FROM outlink") == [(3,)]


def test_links_fill_in_as_targets_arrive(store) -> None:
    store.write([record("http://a.example/", "<p>a</p>", links=["http://a.example/b"])])
    assert store.query("SELECT COUNT(*) FROM link") == [(0,)]  # target not fetched yet
    store.write([record("http://a.example/b", "<p>b</p>")])
    pages = dict(store.query("SELECT md5, id FROM page"))
    assert store.query("SELECT source, target FROM link") == [
        (pages[md5_hex(b"<p>a</p>")], pages[md5_hex(b"<p>b</p>")])
    ]


def test_errors_and_redirects_are_url_rows_without_pages(store) -> None:
    store.write(
        [
            record("http://a.example/gone", "not found", status=404),
            record("http://a.example/old", "", status=301, redirect_to="http://a.example/new"),
            {**record("http://a.example/down", "", status=None, md5=None, md5dia=None,
                      error="TimeoutError: took too long"), "body": None},
        ]
    )
    assert store.query("SELECT COUNT(*) FROM page") == [(0,)]
    rows = store.query("SELECT url, status, page_id, redirect_to, error, fetched FROM url ORDER BY url")
    assert rows[0][:5] == ("http://a.example/down", None, None, None, "TimeoutError: took too long")
    assert rows[0][5] is None  # never downloaded
    assert rows[1][:4] == ("http://a.example/gone", 404, None, None)
    assert rows[2][:4] == ("http://a.example/old", 301, None, "http://a.example/new")


def test_hostile_values_are_stored(store) -> None:
    long_url = "http://a.example/" + "x" * 10_000
    hostile = record(
        long_url,
        "it's \"quoted\" \x00 nul \udcff surrogate",
        title="O'Brien; DROP TABLE page; --\x00",
        data={"json-ld": [{"name": "bad \udcff"}]},
    )
    store.write([hostile, record("http://a.example/ok", "fine")])
    assert store.query("SELECT COUNT(*) FROM url") == [(2,)]
    title = store.query("SELECT title FROM page WHERE title LIKE 'O%'")[0][0]
    assert title == "O'Brien; DROP TABLE page; --"
    assert store.query("SELECT COUNT(*) FROM url WHERE url = ?", (long_url,)) == [(1,)]


def test_iter_urls_round_trips_items(store) -> None:
    store.write([record("http://a.example/", "<p>a</p>", links=["http://a.example/b"])])
    (item,) = list(store.iter_urls("c1"))
    assert item["url"] == "http://a.example/"
    assert item["semantic"] == {"json-ld": 2, "total": 2}
    assert item["data"] == {"json-ld": [{"@type": "Thing"}]}
    assert item["reason"]["strategy"] == "spitag"
    assert item["outlinks"] == 1
    assert list(store.iter_urls("other")) == []
    page_id = store.query("SELECT id FROM page")[0][0]
    assert store.page_body(page_id) == b"<p>a</p>"
    json.dumps(item)


def test_compressed_and_bodiless_stores(store_url: str) -> None:
    for body_format, expected in (("zlib", b"<p>zlib</p>"), ("none", None)):
        s = open_store(store_url, body_format)
        try:
            body = f"<p>{body_format}</p>"
            s.write([record(f"http://{body_format}.example/", body, crawl=body_format)])
            page_id = s.query("SELECT page_id FROM url WHERE crawl = ?", (body_format,))[0][0]
            assert s.page_body(page_id) == expected
        finally:
            s.close()


def test_other_schema_version_is_refused(store) -> None:
    store.query("UPDATE spitag_meta SET value = '999' WHERE key = 'schema_version'")
    with pytest.raises(BadInputError, match="schema version 999"):
        open_store(store.url)
