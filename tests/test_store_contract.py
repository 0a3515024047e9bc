"""The store contract: the same suite runs against every backend (see conftest's ``store_url``)."""

from __future__ import annotations

import hashlib
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
    if "outlinks" not in extra:  # as a crawl's items have it: at least the links kept
        base["outlinks"] = len(base["links"] or ())
    return base


def long_url(length: int = 10_000, seed: str = "") -> str:
    """A URL of ``length`` characters that does not compress (a B-tree key of it would
    not fit a PostgreSQL index page even compressed)."""
    noise = "".join(hashlib.sha256(f"{seed}{i}".encode()).hexdigest() for i in range(length // 64 + 1))
    return ("http://a.example/" + noise)[:length]


@pytest.fixture(params=["sqlite", "postgresql"])
def store_url(request: pytest.FixtureRequest, tmp_path) -> str:
    """Every store backend the contract runs against (PostgreSQL: a new database on
    the session's real server)."""
    if request.param == "postgresql":
        return request.getfixturevalue("pg_url")
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
    huge = long_url()
    huge_target = long_url(seed="target")
    hostile = record(
        huge,
        "it's \"quoted\" \x00 nul \udcff surrogate",
        title="O'Brien; DROP TABLE page; --\x00",
        data={"json-ld": [{"name": "bad \udcff \x00"}]},
        content_type="text/html" + "; x=\x00y" * 300,
        encoding="utf-8\udcff",
        error=None,
        reason={"parent": "http://a.example/\x00\udcff"},
        links=[huge_target, "http://a.example/nul\x00byte", "http://a.example/\udcff", "http://a.example/ok"],
    )
    result = store.write([hostile, record("http://a.example/ok", "fine")])
    assert result.rejected == []
    assert store.query("SELECT COUNT(*) FROM url") == [(2,)]
    title = store.query("SELECT title FROM page WHERE title LIKE 'O%'")[0][0]
    assert title == "O'Brien; DROP TABLE page; --"
    assert store.query("SELECT COUNT(*) FROM url WHERE url = ?", (huge,)) == [(1,)]
    assert store.query("SELECT COUNT(*) FROM outlink WHERE target = ?", (huge_target,)) == [(1,)]
    assert ("http://a.example/nulbyte",) in store.query("SELECT target FROM outlink")
    assert store.query("SELECT COUNT(*) FROM link") == [(1,)]  # huge → ok
    store.write([hostile])  # replayed: still one row each
    assert store.query("SELECT COUNT(*) FROM url") == [(2,)]
    assert store.query("SELECT COUNT(*) FROM outlink") == [(4,)]
    (item,) = [i for i in store.iter_urls("c1") if i["url"] == huge]
    assert item["outlinks"] == 4 and item["data"]["json-ld"][0]["name"].startswith("bad ")


def test_a_bad_record_is_skipped_not_its_neighbours(store) -> None:
    batch = [record(f"http://a.example/{i}", f"<p>{i}</p>") for i in range(8)]
    batch[2] = record("http://a.example/2", "<p>2</p>", md5dia=None)  # NOT NULL refused
    batch[5] = {"url": "http://a.example/5", "status": 200}  # no crawl, no digest: unreadable
    result = store.write(batch)
    assert sorted(result.rejected) == ["http://a.example/2", "http://a.example/5"]
    assert result.urls == [r["url"] for r in batch]  # every URL is settled, none retried forever
    assert result.pages_new == 6
    stored = [u for (u,) in store.query("SELECT url FROM url ORDER BY url")]
    assert stored == [f"http://a.example/{i}" for i in (0, 1, 3, 4, 6, 7)]
    assert store.query("SELECT COUNT(*) FROM page") == [(6,)]


def test_write_result_counts_new_and_known_pages(store) -> None:
    batch = [
        record("http://a.example/", "<p>a</p>", links=["http://a.example/b"]),
        record("http://a.example/b", "<p>b</p>", links=["http://a.example/"]),
        record("http://a.example/copy", "<p>b</p>"),
    ]
    first = store.write(batch)
    assert (first.pages_new, first.pages_seen, first.links_new) == (2, 0, 2)
    again = store.write(batch)
    assert (again.pages_new, again.pages_seen, again.links_new) == (0, 2, 0)
    assert again.urls == [r["url"] for r in batch]


def test_one_url_twice_in_a_batch_is_one_row(store) -> None:
    store.write(
        [
            record("http://a.example/x", "<p>1</p>", depth=3, fetched_at="2026-11-30T10:00:00.000Z"),
            record("http://a.example/x", "<p>2</p>", depth=1, fetched_at="2026-11-30T10:00:05.000Z"),
        ]
    )
    rows = store.query("SELECT depth, page_id FROM url")
    assert len(rows) == 1 and rows[0][0] == 1
    (item,) = list(store.iter_urls("c1"))
    assert item["fetched_at"] == "2026-11-30T10:00:05.000Z"
    assert item["md5"] == md5_hex(b"<p>2</p>")


GRAPH = {  # a → b → d → a is a cycle; c links out of the crawl to x, never fetched
    "http://g.example/a": ["http://g.example/b", "http://g.example/c"],
    "http://g.example/b": ["http://g.example/d"],
    "http://g.example/c": ["http://x.example/"],
    "http://g.example/d": ["http://g.example/a"],
    "http://g.example/e": ["http://g.example/a"],
}


def write_graph(store) -> None:
    store.write([record(u, f"<p>{u}</p>", links=t) for u, t in GRAPH.items()])
    store.write([record("http://g.example/a", "<p>other</p>", crawl="c2", links=["http://g.example/z"])])


def test_links_walk_the_url_graph(store) -> None:
    write_graph(store)
    a, b, c, d, e = (f"http://g.example/{n}" for n in "abcde")
    assert store.links("c1", a, 1) == [(a, b, 1), (a, c, 1)]
    assert store.links("c1", a, 2) == [(a, b, 1), (a, c, 1), (b, d, 2), (c, "http://x.example/", 2)]
    assert store.links("c1", a, 3)[-1] == (d, a, 3)  # the cycle closes, and ends
    assert len(store.links("c1", a, 10)) == 5
    assert store.links("c1", a, 0) == []
    assert store.links("c2", a, 5) == [(a, "http://g.example/z", 1)]
    assert store.links("c1", "http://x.example/", 3) == []  # unfetched: no links out


def test_links_reverse_walks_to_the_url(store) -> None:
    write_graph(store)
    a, b, d, e = (f"http://g.example/{n}" for n in "abde")
    assert store.links("c1", a, 1, reverse=True) == [(d, a, 1), (e, a, 1)]
    assert store.links("c1", a, 2, reverse=True) == [(d, a, 1), (e, a, 1), (b, d, 2)]
    assert store.links("c1", a, 3, reverse=True)[-1] == (a, b, 3)
    assert store.links("c1", "http://x.example/", 1, reverse=True) == [
        ("http://g.example/c", "http://x.example/", 1)
    ]


def test_links_of_a_huge_url(store) -> None:
    huge = long_url()
    store.write([record(huge, "<p>h</p>", links=[huge + "/next", "http://a.example/"])])
    assert store.links("c1", huge, 1) == [(huge, "http://a.example/", 1), (huge, huge + "/next", 1)]
    assert store.links("c1", huge + "/next", 1, reverse=True) == [(huge, huge + "/next", 1)]


def test_export_has_the_crawls_own_fields_in_its_order(store) -> None:
    """``iter_urls`` (``scrapy export``) gives what the crawl's ``-O`` gave: PageItem's
    fields, in its order (the body aside), the links in page order."""
    from spitag.items import PageItem

    links = ["http://a.example/z", "http://a.example/b", "http://a.example/m"]
    written = record("http://a.example/", "<p>a</p>", links=links, outlinks=7, canonical="http://a.example/c",
                     robots=["noindex"], changed=True, revisit_interval=3600.0, etag='"e"', last_modified=None)
    store.write([written])
    (item,) = list(store.iter_urls("c1"))
    assert list(item) == [f for f in PageItem.fields if f != "body"]
    assert item["links"] == links and item["outlinks"] == 7
    assert (item["canonical"], item["robots"], item["changed"]) == ("http://a.example/c", ["noindex"], True)


def test_iter_urls_round_trips_items(store) -> None:
    store.write([record("http://a.example/", "<p>a</p>", links=["http://a.example/b"])])
    (item,) = list(store.iter_urls("c1"))
    assert item["url"] == "http://a.example/"
    assert (item["links"], item["canonical"], item["robots"], item["changed"]) == (["http://a.example/b"], None, None, None)
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


def test_due_urls_are_the_expired_ones_with_what_a_revisit_needs(store) -> None:
    store.write([
        record("http://a.example/old", "<p>old</p>", expires="2026-11-30T09:00:00.000Z",
               etag='"e1"', last_modified="Mon, 05 Jan 2026 12:00:00 GMT", revisit_interval=3600.0),
        record("http://a.example/new", "<p>new</p>", expires="2026-12-30T09:00:00.000Z"),
        record("http://a.example/gone", status=404, md5=None, expires="2026-11-30T08:00:00.000Z"),
    ])
    due = {row["url"]: row for row in store.iter_due("c1", "2026-11-30T10:00:00.000Z")}
    assert set(due) == {"http://a.example/old", "http://a.example/gone"}
    old = due["http://a.example/old"]
    assert (old["etag"], old["last_modified"], old["revisit_interval"], old["status"]) == (
        '"e1"', "Mon, 05 Jan 2026 12:00:00 GMT", 3600.0, 200)
    assert old["md5"] == md5_hex(b"<p>old</p>") and old["reason"]["strategy"] == "spitag"
    assert due["http://a.example/gone"]["md5"] is None
    assert list(store.iter_due("other", "2030-01-01T00:00:00.000Z")) == []


def test_a_revisit_without_content_keeps_the_page(store) -> None:
    url = "http://a.example/p"
    store.write([record(url, "<p>v1</p>", etag='"v1"', expires="2026-11-30T10:00:00.000Z")])
    (first,) = store.query("SELECT page_id, status, fetched, checked FROM url")
    # 304: checked and expires move on; page, status, first fetch and validators stay.
    store.write([record(url, "", status=304, md5=md5_hex(b"<p>v1</p>"), content_type=None,
                        fetched_at="2026-11-30T11:00:00.000Z", expires="2026-12-01T11:00:00.000Z",
                        revisit_interval=7200.0)])
    assert store.query("SELECT page_id, status, fetched, checked, expires, etag, revisit_interval, content_type FROM url") == [
        (first[0], 200, first[2], "2026-11-30T11:00:00.000Z", "2026-12-01T11:00:00.000Z", '"v1"', 7200.0, "text/html")
    ]
    # No answer at all: the error is recorded, the page stays.
    store.write([record(url, status=None, md5=None, error="TimeoutError",
                        fetched_at="2026-11-30T12:00:00.000Z", expires="2026-11-30T13:00:00.000Z")])
    assert store.query("SELECT page_id, status, error, checked FROM url") == [
        (first[0], 200, "TimeoutError", "2026-11-30T12:00:00.000Z")
    ]
    # Changed: a new page row, the URL points at it, the first edition is kept.
    store.write([record(url, "<p>v2</p>", etag='"v2"', fetched_at="2026-11-30T13:00:00.000Z")])
    (page_id, etag), = store.query("SELECT page_id, etag FROM url")
    assert page_id != first[0] and etag == '"v2"'
    assert store.query("SELECT COUNT(*) FROM page") == [(2,)]
    assert store.query("SELECT modified FROM page WHERE id = ?", (page_id,)) == [("2026-11-30T13:00:00.000Z",)]
    # Its editions: which page the URL served, first and last seen; v1 again moves v1's last_seen.
    store.write([record(url, "<p>v1</p>", fetched_at="2026-11-30T14:00:00.000Z")])
    assert store.query("SELECT page_id, first_seen, last_seen FROM edition ORDER BY first_seen") == [
        (first[0], "2026-11-30T10:00:00.000Z", "2026-11-30T14:00:00.000Z"),
        (page_id, "2026-11-30T13:00:00.000Z", "2026-11-30T13:00:00.000Z"),
    ]
    store.write([record(url, "<p>v1</p>", fetched_at="2026-11-30T12:30:00.000Z")])  # a late writer: no step back
    assert store.query("SELECT MAX(last_seen) FROM edition") == [("2026-11-30T14:00:00.000Z",)]
    # Forgetting the crawl takes its editions and every page only they held.
    store.write([record("http://a.example/other", "<p>v2</p>", crawl="c2")])
    assert store.forget("c1") == (1, 1)
    assert store.query("SELECT COUNT(*) FROM edition") == [(1,)] and store.query("SELECT COUNT(*) FROM page") == [(1,)]


def test_a_version_2_store_is_migrated_in_place(store) -> None:
    store.write([record("http://a.example/kept", "<p>kept</p>")])
    for column in ("etag", "last_modified", "revisit_interval", "canonical", "robots", "changed", "outlinks"):
        store.query(f"ALTER TABLE url DROP COLUMN {column}")
    store.query("ALTER TABLE outlink DROP COLUMN position")
    store.query("ALTER TABLE page DROP COLUMN incomplete")
    store.query("DROP TABLE edition")
    store.query("DROP INDEX url_expires")
    store.query("UPDATE spitag_meta SET value = '2' WHERE key = 'schema_version'")
    migrated = open_store(store.url)
    try:
        assert migrated.query("SELECT value FROM spitag_meta WHERE key = 'schema_version'") == [(str(SCHEMA_VERSION),)]
        assert migrated.query("SELECT url, etag, revisit_interval FROM url") == [("http://a.example/kept", None, None)]
        migrated.write([record("http://a.example/new", "<p>n</p>", etag='"n"', expires="2026-12-30T09:00:00.000Z")])
        assert migrated.query("SELECT etag FROM url WHERE url = 'http://a.example/new'") == [('"n"',)]
        # No expiry known (written by version 2): due at once.
        assert [r["url"] for r in migrated.iter_due("c1", "2000-01-01T00:00:00.000Z")] == ["http://a.example/kept"]
        # what version 2 did not keep is missing from its row, not invented
        kept = next(i for i in migrated.iter_urls("c1") if i["url"] == "http://a.example/kept")
        assert (kept["canonical"], kept["robots"], kept["changed"], kept["incomplete"]) == (None, None, None, None)
        # each URL with a page has its edition, seen from its first fetch to its last check
        assert migrated.query("SELECT u.url, e.first_seen, e.last_seen FROM edition e JOIN url u"
                              " ON u.url_md5 = e.url_md5 AND u.page_id = e.page_id"
                              " WHERE u.url = 'http://a.example/kept'") == [
            ("http://a.example/kept", "2026-11-30T10:00:00.000Z", "2026-11-30T10:00:00.000Z")]
        migrated.write([record("http://a.example/cut", "<p>c</p>", incomplete=["rdfa"])])
        assert migrated.query("SELECT p.incomplete FROM page p JOIN url u ON u.page_id = p.id"
                              " WHERE u.url = 'http://a.example/cut'") == [("rdfa",)]
    finally:
        migrated.close()
