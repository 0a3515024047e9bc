"""``scrapy serve``: the store and the frontier as a read-only JSON API.

A real crawl of a local web (two sites: recipes with JSON-LD, events with microdata,
plain pages) into a real store (SQLite, and PostgreSQL), then the real server on a free
loopback port, asked over HTTP; every answer is checked against the test's own SQL on
the store (or ``scrapy frontier``'s JSON). Hostile parameters get a clear 4xx and the
store is left as it was.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg2
import pytest

from spitag.errors import BackendUnavailableError
from spitag.serve.queries import has_type
from spitag.serve.reader import StoreReader
from testbed.apiserver import ApiServer
from testbed.pgserver import free_port
from testbed.webserver import DictSite, WebServer
from tests.support.crawl import REPO, proxy_env, run_crawl, sqlite_url

RECIPE = ('<script type="application/ld+json">{{"@context": "https://schema.org", "@type": "Recipe",'
          ' "name": "Dish {i}", "recipeIngredient": ["salt", "water"]}}</script>')
EVENT = ('<div itemscope itemtype="https://schema.org/Event"><span itemprop="name">Gig {i}</span>'
         '<span itemprop="startDate">2026-12-0{i}</span></div>')


def page(title: str, body: str, links: list[str]) -> str:
    anchors = " ".join(f'<a href="{href}">{href}</a>' for href in links)
    return (f"<html><head><title>{title}</title><meta name='description' content='{title}'></head>"
            f"<body><h1>{title}</h1>{body}<p>{anchors}</p></body></html>")


def the_web() -> dict[str, DictSite]:
    """food.test: a home, 6 recipes (JSON-LD Recipe) and a plain about page, linking to
    gigs.test; gigs.test: a home and 4 events (microdata Event) linking back."""
    food = {"/": page("Food", "", [f"/r/{i}.html" for i in range(6)] + ["/about.html", "http://gigs.test/"])}
    for i in range(6):
        food[f"/r/{i}.html"] = page(f"Dish {i}", RECIPE.format(i=i), [f"/r/{(i + 1) % 6}.html", "/"])
    food["/about.html"] = page("About", "<p>nothing here</p>", ["/"])
    gigs = {"/": page("Gigs", "", [f"/e/{i}.html" for i in range(1, 5)])}
    for i in range(1, 5):
        gigs[f"/e/{i}.html"] = page(f"Gig {i}", EVENT.format(i=i), ["/", "http://food.test/r/0.html"])
    return {"food.test": DictSite(food), "gigs.test": DictSite(gigs)}


class Served(ApiServer):
    """A running ``scrapy serve`` (testbed/apiserver.py) and the store it reads."""

    def __init__(self, store: str, frontier: Path | str, settings: dict[str, str] | None = None,
                 args: tuple[str, ...] = (), logs: Path | None = None) -> None:
        """``frontier``: a SQLite file, or a frontier URL (then ``logs``: the log's folder)."""
        self.store, self.frontier = store, frontier
        frontier_url = sqlite_url(frontier) if isinstance(frontier, Path) else frontier
        logs = logs or Path(frontier).parent
        super().__init__(store, frontier_url, logs / f"serve-{len(list(logs.glob('serve-*.log')))}.log",
                         settings=settings, args=args)

    def get(self, path: str, token: str | None = None, **params: Any) -> tuple[int, Any]:
        """(status, JSON answer) of ``GET path?params``."""
        query = urllib.parse.urlencode({k: v for k, v in params.items() if v is not None})
        request = urllib.request.Request(self.base + path + (f"?{query}" if query else ""))
        if token is not None:
            request.add_header("Authorization", f"Bearer {token}")
        try:
            with urllib.request.urlopen(request, timeout=30) as answer:
                body, status, kind = answer.read().decode(), answer.status, answer.headers.get("content-type", "")
        except urllib.error.HTTPError as err:
            body, status, kind = err.read().decode(), err.code, err.headers.get("content-type", "")
        assert "Traceback" not in body and 'File "' not in body
        return status, (json.loads(body) if kind.startswith("application/json") else body)

    def ok(self, path: str, **params: Any) -> Any:
        status, answer = self.get(path, **params)
        assert status == 200, (path, params, answer)
        return answer


def sql(store: str, query: str, params: tuple = ()) -> list[tuple]:
    """The test's own SQL on the store (``?`` placeholders)."""
    if store.startswith("sqlite:"):
        with sqlite3.connect(store[len("sqlite:///"):]) as conn:
            return conn.execute(query, params).fetchall()
    conn = psycopg2.connect(store)
    try:
        cur = conn.cursor()
        cur.execute(query.replace("?", "%s"), params)
        return cur.fetchall()
    finally:
        conn.close()


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def served(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    tmp = tmp_path_factory.mktemp(f"serve-{request.param}")
    pg = None
    if request.param == "postgresql":
        pg = request.getfixturevalue("pg_server")
        store = pg.create_database()
    else:
        store = sqlite_url(tmp / "crawl.db")
    with WebServer() as web:
        for host, site in the_web().items():
            web.add_site(host, site)
        run = run_crawl(web, tmp, "http://food.test/", crawl="food", store=store,
                        settings={"SPITAG_SCOPE": "any"})
        assert run.returncode == 0, run.describe()
    server = Served(store, tmp / "crawl-frontier.db")
    yield server
    server.stop()
    if pg is not None:
        pg.drop_database(store.rsplit("/", 1)[1])


def every(served: Served, path: str, **params: Any) -> list[dict[str, Any]]:
    """Every row of a list, page after page by its cursor (2 a page)."""
    rows, cursor, pages = [], None, 0
    while True:
        answer = served.ok(path, limit=2, cursor=cursor, **params)
        rows += answer["items"]
        pages += 1
        cursor = answer["next_cursor"]
        if cursor is None:
            return rows
        assert pages < 100


def test_crawls_and_summary_are_the_store_s(served: Served) -> None:
    [(urls, pages, items)] = sql(served.store, "SELECT COUNT(*), COUNT(u.page_id), SUM(p.semantic_total)"
                                 " FROM url u LEFT JOIN page p ON p.id = u.page_id WHERE u.crawl = 'food'")
    assert pages == 13 and urls >= pages  # every page of the two sites
    assert served.ok("/api/crawls") == [{"crawl": "food", "urls": urls, "pages": pages,
                                          "last_checked": served.ok("/api/crawls")[0]["last_checked"]}]
    summary = served.ok("/api/crawls/food")
    assert (summary["urls"], summary["pages"], summary["semantic_items"]) == (urls, pages, items)
    assert summary["strategy"] == "spitag" and summary["seeds"] == ["http://food.test/"]
    assert summary["frontier"]["done"] == urls and summary["frontier"]["queued"] == 0


def test_urls_pages_and_filters_match_the_store(served: Served) -> None:
    stored = {u: (s, p) for u, s, p in sql(served.store, "SELECT url, status, page_id FROM url WHERE crawl = 'food'")}
    listed = every(served, "/api/crawls/food/urls")
    assert sorted(r["url"] for r in listed) == sorted(stored)  # each once, over 7 pages of 2
    assert sorted(r["url"] for r in every(served, "/api/crawls/food/pages")) == sorted(
        u for u, (_, p) in stored.items() if p is not None)
    gigs = every(served, "/api/crawls/food/pages", host="gigs.test")
    assert sorted(r["url"] for r in gigs) == sorted(u for u in stored if u.startswith("http://gigs.test/"))
    # by syntax and by schema.org type: the store's semantic counts and structured data
    rows = sql(served.store, "SELECT u.url, p.semantic, p.structured, p.score FROM url u JOIN page p"
                             " ON p.id = u.page_id WHERE u.crawl = 'food'")
    with_microdata = sorted(u for u, sem, _, _ in rows if json.loads(sem).get("microdata", 0) > 0)
    assert with_microdata == sorted(f"http://gigs.test/e/{i}.html" for i in range(1, 5))
    assert sorted(r["url"] for r in every(served, "/api/crawls/food/pages", syntax="microdata")) == with_microdata
    recipes = sorted(u for u, _, data, _ in rows if has_type(data, "Recipe"))
    assert recipes == sorted(f"http://food.test/r/{i}.html" for i in range(6))
    assert sorted(r["url"] for r in every(served, "/api/crawls/food/pages", type="Recipe")) == recipes
    assert sorted(r["url"] for r in every(served, "/api/crawls/food/pages", type="Event")) == with_microdata
    assert every(served, "/api/crawls/food/pages", type="Movie") == []
    # by score range, status, content type, time
    scores = sorted(s for *_, s in rows)
    middle = scores[len(scores) // 2]
    assert sorted(r["url"] for r in every(served, "/api/crawls/food/pages", min_score=middle)) == sorted(
        u for u, *_, s in rows if s >= middle)
    assert len(every(served, "/api/crawls/food/urls", status=200)) == sum(1 for s, _ in stored.values() if s == 200)
    assert len(every(served, "/api/crawls/food/pages", content_type="text/html")) == len(rows)
    assert every(served, "/api/crawls/food/pages", since="2999-01-01T00:00:00Z") == []
    assert len(every(served, "/api/crawls/food/pages", since="2000-01-01")) == len(rows)
    # the export streams what the list gives, as JSON lines
    status, body = served.get("/api/crawls/food/export.jsonl", type="Recipe")
    assert status == 200 and sorted(json.loads(line)["url"] for line in body.splitlines()) == recipes


def test_one_page_and_its_links(served: Served) -> None:
    url = "http://food.test/r/2.html"
    one = served.ok("/api/crawls/food/page", url="HTTP://FOOD.test:80/r/2.html")  # as a user may write it
    [(structured, semantic)] = sql(served.store, "SELECT p.structured, p.semantic FROM url u JOIN page p"
                                   " ON p.id = u.page_id WHERE u.crawl = 'food' AND u.url = ?", (url,))
    assert one["url"] == url and one["structured"] == json.loads(structured) and one["semantic"] == json.loads(semantic)
    # its editions: one crawl, one content, seen when it was fetched
    [(md5,)] = sql(served.store, "SELECT p.md5 FROM url u JOIN page p ON p.id = u.page_id"
                                 " WHERE u.crawl = 'food' AND u.url = ?", (url,))
    editions = served.ok("/api/crawls/food/editions", url=url)["editions"]
    assert [(e["md5"], e["first_seen"], e["last_seen"]) for e in editions] == [(md5, one["fetched"], one["checked"])]
    out = sql(served.store, "SELECT target FROM outlink WHERE crawl = 'food' AND source = ?", (url,))
    into = sql(served.store, "SELECT source FROM outlink WHERE crawl = 'food' AND target = ?", (url,))
    assert (one["links_out"], one["links_in"]) == (len(out), len(into))
    links = served.ok("/api/crawls/food/links", url=url)["links"]
    assert sorted(e["target"] for e in links) == sorted(t for (t,) in out) and {e["distance"] for e in links} == {1}
    back = served.ok("/api/crawls/food/links", url=url, direction="in")["links"]
    assert sorted(e["source"] for e in back) == sorted(s for (s,) in into)
    two = served.ok("/api/crawls/food/links", url=url, depth=2)["links"]
    assert {e["distance"] for e in two} == {1, 2} and len(two) > len(links)
    # paths: home → r/0 → …; the shortest first, none longer than asked
    found = served.ok("/api/crawls/food/paths", source="http://food.test/", target="http://gigs.test/e/3.html",
                      max_length=3)
    assert found["paths"][0] == ["http://food.test/", "http://gigs.test/", "http://gigs.test/e/3.html"]
    assert all(len(p) <= 4 and p[0] == "http://food.test/" and p[-1] == "http://gigs.test/e/3.html"
               for p in found["paths"])
    for path in found["paths"]:  # every step is a stored link
        for a, b in zip(path, path[1:]):
            assert sql(served.store, "SELECT 1 FROM outlink WHERE crawl = 'food' AND source = ? AND target = ?", (a, b))
    assert served.ok("/api/crawls/food/paths", source="http://gigs.test/e/3.html", target="http://food.test/about.html",
                     max_length=1)["paths"] == []


def test_the_frontier_is_scrapy_frontier_s(served: Served) -> None:
    run = subprocess.run([sys.executable, "-m", "scrapy", "frontier", "-a", "crawl=food", "-a", "format=json",
                          "-s", f"SPITAG_FRONTIER={sqlite_url(served.frontier)}"],
                         cwd=REPO, env=proxy_env(None), capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    cli = json.loads(run.stdout)
    api = served.ok("/api/crawls/food/frontier")
    for key in ("crawl", "strategy", "queued", "leased", "done", "hosts_down", "top"):
        assert api[key] == cli[key], key
    assert [h["host"] for h in api["hosts"]] == [h["host"] for h in cli["hosts"]]


@pytest.mark.parametrize("path, params, status", [
    ("/api/crawls/nope", {}, 404),
    ("/api/crawls/food'; DROP TABLE url; --", {}, 404),
    ("/api/crawls/food/urls", {"limit": 10**9}, 422),
    ("/api/crawls/food/urls", {"limit": 0}, 422),
    ("/api/crawls/food/urls", {"cursor": "not-a-cursor"}, 422),
    ("/api/crawls/food/urls", {"cursor": "' OR 1=1 --"}, 422),
    ("/api/crawls/food/urls", {"host": "x' OR '1'='1"}, 422),
    ("/api/crawls/food/urls", {"type": "Recipe%' OR 1=1 --"}, 422),
    ("/api/crawls/food/urls", {"syntax": "json-ld') OR 1=1 --"}, 422),
    ("/api/crawls/food/urls", {"status": "200 OR 1=1"}, 422),
    ("/api/crawls/food/urls", {"min_score": "nan"}, 422),
    ("/api/crawls/food/urls", {"min_score": 5, "max_score": 1}, 422),
    ("/api/crawls/food/urls", {"since": "yesterday'--"}, 422),
    ("/api/crawls/food/page", {"url": "http://food.test/' OR '1'='1"}, 404),
    ("/api/crawls/food/page", {}, 422),
    ("/api/crawls/food/links", {"url": "http://food.test/", "depth": 50}, 422),
    ("/api/crawls/food/links", {"url": "http://food.test/", "direction": "sideways"}, 422),
    ("/api/crawls/food/paths", {"source": "http://food.test/", "target": "http://food.test/", "max_length": 2}, 422),
    ("/api/crawls/food/paths", {"source": "http://food.test/", "target": "http://gigs.test/", "max_length": 40}, 422),
    ("/api/crawls/nope/frontier", {}, 404),
])
def test_hostile_parameters_get_a_clear_4xx(served: Served, path: str, params: dict, status: int) -> None:
    before = sql(served.store, "SELECT COUNT(*) FROM url")
    got, answer = served.get(urllib.parse.quote(path, safe="/"), **params)
    assert got == status, answer
    assert isinstance(answer, dict) and answer.get("detail"), answer
    assert sql(served.store, "SELECT COUNT(*) FROM url") == before


def test_the_reader_cannot_write(served: Served) -> None:
    reader = StoreReader(served.store)
    try:
        with pytest.raises(BackendUnavailableError):
            reader.rows("DELETE FROM url")
        assert reader.rows("SELECT COUNT(*) FROM url")[0][0] > 0  # and it still reads
    finally:
        reader.close()


def test_docs_work_with_no_network(served: Served) -> None:
    status, html = served.get("/docs")
    assert status == 200 and "/static/swagger/swagger-ui-bundle.js" in html and "cdn" not in html.lower()
    assert served.get("/static/swagger/swagger-ui-bundle.js")[0] == 200
    schema = served.ok("/openapi.json")
    assert "/api/crawls/{crawl}/pages" in schema["paths"] and "/api/crawls/{crawl}/paths" in schema["paths"]


def test_a_token_is_needed_when_set_and_off_loopback(served: Served, tmp_path: Path) -> None:
    guarded = Served(served.store, served.frontier, {"SPITAG_SERVE_TOKEN": "s3cret"}, ("-a", "crawl=food"))
    try:
        assert guarded.get("/api/crawls")[0] == 401
        assert guarded.get("/api/crawls", token="wrong")[0] == 401
        assert guarded.get("/api/crawls", token="s3cret") == (200, served.ok("/api/crawls"))
        assert guarded.get("/api/crawls/other", token="s3cret")[0] == 404  # this server serves crawl food only
    finally:
        guarded.stop()
    open_to_all = subprocess.run(
        [sys.executable, "-m", "scrapy", "serve", "-s", f"SPITAG_STORE={served.store}", "-s", "SPITAG_SERVE=0.0.0.0:8088"],
        cwd=REPO, env=proxy_env(None), capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert open_to_all.returncode == 2 and "SPITAG_SERVE_TOKEN" in open_to_all.stderr
    missing = subprocess.run(
        [sys.executable, "-m", "scrapy", "serve", "-s", f"SPITAG_STORE={sqlite_url(tmp_path / 'none.db')}"],
        cwd=REPO, env=proxy_env(None), capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert missing.returncode == 2 and "no store at" in missing.stderr and not (tmp_path / "none.db").exists()


def test_a_dead_postgresql_is_a_clear_error(tmp_path: Path) -> None:
    dead = f"postgresql://spitag:t0p-secret@127.0.0.1:{free_port()}/db"
    run = subprocess.run([sys.executable, "-m", "scrapy", "serve", "-s", f"SPITAG_STORE={dead}"],
                         cwd=REPO, env=proxy_env(None), capture_output=True, text=True, timeout=120,
                         stdin=subprocess.DEVNULL)
    assert run.returncode == 3 and "PostgreSQL unreachable" in run.stderr
    assert "t0p-secret" not in run.stderr and "Traceback" not in run.stderr


def test_the_live_data_and_page(served: Served) -> None:
    [(urls, pages, items)] = sql(served.store, "SELECT COUNT(*), COUNT(u.page_id), SUM(p.semantic_total) FROM url u"
                                 " LEFT JOIN page p ON p.id = u.page_id WHERE u.crawl = 'food'")
    live = served.ok("/api/crawls/food/live")
    assert (live["store"]["urls"], live["store"]["pages"], live["store"]["semantic_items"]) == (urls, pages, items)
    [(answered,)] = sql(served.store, "SELECT COUNT(*) FROM url WHERE crawl = 'food' AND status IS NOT NULL")
    assert live["harvest"]["food"][-1] == [answered, items]  # the curve ends where the crawl is
    assert [p[1] for p in live["harvest"]["food"]] == sorted(p[1] for p in live["harvest"]["food"])
    assert sum(t["pages"] for t in live["timeline"]) <= pages  # minutes of the last two hours only
    assert live["frontier"]["done"] == served.ok("/api/crawls/food/frontier")["done"]
    assert served.get("/api/crawls/food/live", against="nope")[0] == 404
    status, page = served.get("/crawls/food/live")
    assert status == 200 and "/api/crawls/${encodeURIComponent(crawl)}/live" in page and 'const crawl = "food"' in page
    assert "http://" not in page and "https://" not in page  # nothing fetched from elsewhere
    assert served.get("/crawls/%3Cscript%3E/live")[0] == 404


def test_the_report_is_served(served: Served) -> None:
    status, page = served.get("/crawls/food/report/")  # made now, then redirected to its folder
    assert status == 200 and 'src="harvest.png"' in page and "food" in page
    key = urllib.request.urlopen(served.base + "/crawls/food/report/", timeout=60).url.rsplit("/", 2)[-2]
    figure = urllib.request.urlopen(f"{served.base}/reports/{key}/harvest.png", timeout=30)
    assert figure.status == 200 and figure.headers["content-type"] == "image/png" and figure.read(4) == b"\x89PNG"
    assert served.get(f"/reports/{key}/..%2F..%2Fetc%2Fpasswd")[0] == 404
    assert served.get("/reports/0123/index.html")[0] == 422


def test_a_request_reads_one_slice_and_its_cursor_goes_on(served: Served, monkeypatch: pytest.MonkeyPatch) -> None:
    """With slices of ~3 URLs, a filter gives short (even empty) pages, and following
    the cursor to its end still gives every URL it keeps, once."""
    from spitag.serve import queries

    monkeypatch.setattr(queries, "SCAN_ROWS", 3)
    reader = StoreReader(served.store)
    try:
        for f, expected in ((queries.Filters(schema_type="Recipe"), 6), (queries.Filters(), None)):
            seen, after, sizes = [], None, []
            while True:
                rows, after = queries.list_urls(reader, "food", f, 100, after)
                seen += [r["url"] for r in rows]
                sizes.append(len(rows))
                if after is None:
                    break
            assert len(seen) == len(set(seen)) and len(sizes) > 2 and min(sizes) < 3, sizes
            assert len(seen) == (expected or sql(served.store, "SELECT COUNT(*) FROM url WHERE crawl = 'food'")[0][0])
    finally:
        reader.close()
