"""``scrapy report``: two real crawls of a local site with varied semantic markup (one
focused, one breadth-first, one store), then the report of one and of both side by
side. Every figure of report.json and of the HTML summary is checked against the
store with the test's own SQL, and every PNG must be a real, non-trivial image."""

from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from matplotlib.image import imread

from testbed.webserver import DictSite, Response, WebServer

REPO = Path(__file__).resolve().parents[1]
SEEDS = "http://docs.test/,http://shop.test/,http://blog.test/"
CRAWLS = {"focused": "spitag", "breadth": "bfs"}
SYNTAXES = ("json-ld", "microdata", "rdfa", "opengraph", "twitter", "meta", "microformat", "dublincore")
META = ("opengraph", "twitter", "dublincore", "meta")
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"

# -- a site whose semantic markup varies by host, depth and page ----------------------


def _markup(name: str, c: dict[str, int]) -> tuple[str, str]:
    """(head, body) HTML with the given number of items per syntax."""
    head = "".join(
        '<script type="application/ld+json">'
        + json.dumps({"@context": "https://schema.org", "@type": "Product", "name": f"{name} {k}"})
        + "</script>"
        for k in range(c.get("jsonld", 0))
    )
    og = [("og:title", name), ("og:type", "article"), ("og:url", "http://x/"), ("og:image", "http://x/i.png")]
    head += "".join(f'<meta property="{p}" content="{v}">' for p, v in og[: c.get("og", 0)])
    tw = [("twitter:card", "summary"), ("twitter:title", name), ("twitter:site", "@spitag")]
    head += "".join(f'<meta name="{p}" content="{v}">' for p, v in tw[: c.get("twitter", 0)])
    if c.get("dc"):
        dc = [("DC.title", name), ("DC.creator", "Ann"), ("DC.date", "2024-01-01")]
        head += '<link rel="schema.DC" href="http://purl.org/dc/elements/1.1/">'
        head += "".join(f'<meta name="{p}" content="{v}">' for p, v in dc[: c["dc"]])
    meta = [("description", "A page"), ("keywords", "a,b"), ("author", "Ann")]
    head += "".join(f'<meta name="{p}" content="{v}">' for p, v in meta[: c.get("meta", 0)])
    body = "".join(
        f'<div itemscope itemtype="https://schema.org/Product"><span itemprop="name">{name} {k}</span></div>'
        for k in range(c.get("microdata", 0))
    )
    body += "".join(
        f'<div vocab="https://schema.org/" typeof="Person"><span property="name">{name} {k}</span></div>'
        for k in range(c.get("rdfa", 0))
    )
    body += "".join(
        f'<article class="h-entry"><h2 class="p-name">{name} {k}</h2></article>' for k in range(c.get("mf", 0))
    )
    return head, body


PROFILES = {  # host → items per syntax of its page at (depth, index)
    "shop.test": lambda d, i: {"jsonld": 1 + (d >= 2) + i % 2, "microdata": d, "og": 4, "twitter": 3, "meta": 2},
    "blog.test": lambda d, i: {"jsonld": i % 2, "og": 3, "twitter": 2, "meta": 2, "mf": 1 + (d >= 2), "dc": 2},
    "docs.test": lambda d, i: {"jsonld": int(d == 3 and i % 3 == 0), "meta": 1, "rdfa": int(d == 2 and i % 4 == 0)},
}


def semantic_sites(sections: int = 5, per_section: int = 4, leaves: int = 3) -> dict[str, DictSite]:
    """Three hosts, each a tree / → /cS.html → /cS/pP.html → /cS/pP/lL.html; roots link
    to each other; shop.test is rich, blog.test medium, docs.test poor; 1 broken link."""
    sites = {}
    for host, profile in PROFILES.items():
        site = DictSite()

        def add(path: str, depth: int, index: int, children: list[str]) -> None:
            name = f"{host} {path}"
            head, body = _markup(name, profile(depth, index))
            links = "".join(f'<a href="{c}">{c}</a> ' for c in children)
            if depth == 0:
                links += "".join(f'<a href="http://{h}/">{h}</a> ' for h in PROFILES if h != host)
                links += '<a href="/missing.html">gone</a>'
            site.add(path, Response.html(
                f"<html><head><title>{name}</title>{head}</head><body><h1>{name}</h1>{body}{links}"
                '<a href="/">home</a></body></html>'
            ))

        add("/", 0, 0, [f"/c{s}.html" for s in range(sections)])
        for s in range(sections):
            add(f"/c{s}.html", 1, s, [f"/c{s}/p{p}.html" for p in range(per_section)])
            for p in range(per_section):
                add(f"/c{s}/p{p}.html", 2, p, [f"/c{s}/p{p}/l{k}.html" for k in range(leaves)])
                for k in range(leaves):
                    add(f"/c{s}/p{p}/l{k}.html", 3, k, [])
        sites[host] = site
    return sites


# -- running the commands ---------------------------------------------------------------


def scrapy(*args: str, env: dict[str, str] | None = None, timeout: float = 180) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "scrapy", *args], cwd=REPO, env=env or clean_env(),
        capture_output=True, text=True, timeout=timeout,
    )


def clean_env(proxy: str | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SPITAG_") and k.lower() not in (
        "http_proxy", "https_proxy", "no_proxy")}
    if proxy:
        env["http_proxy"] = env["https_proxy"] = proxy
    return env


@pytest.fixture(scope="module")
def crawled(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One store holding two crawls of the same site, cut at ~120 pages each."""
    tmp = tmp_path_factory.mktemp("report")
    with WebServer() as server:
        server.add_sites(semantic_sites())
        for name, strategy in CRAWLS.items():
            run = scrapy(
                "crawl", "spitag", "-a", f"seeds={SEEDS}", "-a", f"crawl={name}",
                "-s", f"SPITAG_STORE=sqlite:///{tmp}/store.db",
                "-s", f"SPITAG_FRONTIER=sqlite:///{tmp}/frontier.db",
                "-s", f"SPITAG_STRATEGY={strategy}", "-s", "CLOSESPIDER_PAGECOUNT=120",
                "-s", "CONCURRENT_REQUESTS=4", "-s", "SPITAG_PROGRESS=off",
                env=clean_env(server.proxy_url),
            )
            assert run.returncode == 0, run.stderr[-3000:]
            assert "Traceback" not in run.stderr, run.stderr[-3000:]
    return tmp


def report(tmp: Path, out: str, *extra: str) -> tuple[subprocess.CompletedProcess, Path]:
    run = scrapy("report", *extra, "-o", str(tmp / out), "-s", f"SPITAG_STORE=sqlite:///{tmp}/store.db")
    return run, tmp / out


@pytest.fixture(scope="module")
def compared(crawled: Path) -> Path:
    run, out = report(crawled, "compare", "-a", "crawl=focused", "-a", "against=breadth")
    assert run.returncode == 0, run.stderr[-3000:]
    assert "report written to" in run.stderr
    return out


# -- the test's own SQL ----------------------------------------------------------------


def sql(tmp: Path, query: str, *params: Any) -> list[tuple]:
    with sqlite3.connect(tmp / "store.db") as conn:
        return conn.execute(query, params).fetchall()


def jx(syntax: str) -> str:
    return f"COALESCE(json_extract(p.semantic, '$.\"{syntax}\"'), 0)"


META_SQL = " + ".join(jx(s) for s in META)


def expected_depths(tmp: Path, crawl: str) -> dict[int, dict[str, Any]]:
    rows = sql(
        tmp,
        "SELECT u.depth, COUNT(*), SUM(u.page_id IS NOT NULL), SUM(COALESCE(p.semantic_total, 0)),"
        f" MAX(COALESCE(p.semantic_total, 0)), SUM(CASE WHEN p.id IS NULL THEN 0 ELSE {META_SQL} END),"
        f" MAX(CASE WHEN p.id IS NULL THEN 0 ELSE {META_SQL} END)"
        " FROM url u LEFT JOIN page p ON p.id = u.page_id WHERE u.crawl = ? GROUP BY u.depth",
        crawl,
    )
    return {
        d: {"urls": n, "pages": pages, "semantic_sum": s, "semantic_max": smax, "meta_sum": m, "meta_max": mmax}
        for d, n, pages, s, smax, m, mmax in rows
    }


def syntax_at(tmp: Path, crawl: str, depth: int | None = None) -> dict[str, int]:
    where = "" if depth is None else " AND u.depth = ?"
    params = (crawl,) if depth is None else (crawl, depth)
    row = sql(
        tmp,
        "SELECT " + ", ".join(f"COALESCE(SUM({jx(s)}), 0)" for s in SYNTAXES)
        + " FROM url u JOIN page p ON p.id = u.page_id WHERE u.crawl = ?" + where,
        *params,
    )[0]
    return dict(zip(SYNTAXES, row))


def summary_cell(html: str, crawl: str, key: str) -> str:
    found = re.search(rf'data-crawl="{re.escape(crawl)}" data-key="{key}">([^<]*)<', html)
    assert found, f"no summary cell {key} for {crawl}"
    return found.group(1)


def number(text: str) -> float:
    return float(text.replace(",", ""))


def close(a: float | None, b: float | None) -> bool:
    if a is None or b is None:
        return a is b
    return abs(a - b) <= 1e-9 * max(1.0, abs(b))


# -- the tests --------------------------------------------------------------------------


def test_two_strategies_crawled_the_same_site(crawled: Path) -> None:
    rows = dict(sql(crawled, "SELECT crawl, COUNT(*) FROM url GROUP BY crawl"))
    assert set(rows) == set(CRAWLS) and all(n >= 100 for n in rows.values())
    for name, strategy in CRAWLS.items():
        reasons = {r for (r,) in sql(crawled, "SELECT DISTINCT json_extract(reason, '$.strategy') FROM url"
                                               " WHERE crawl = ? AND reason IS NOT NULL", name)}
        assert reasons == {strategy}


MARKUP_KEYS = {"jsonld": "json-ld", "og": "opengraph", "twitter": "twitter", "meta": "meta", "dc": "dublincore",
               "microdata": "microdata", "rdfa": "rdfa", "mf": "microformat"}
PLACE = re.compile(r"^http://([^/]+)/(?:c(\d+)\.html|c\d+/p(\d+)\.html|c\d+/p\d+/l(\d+)\.html)?$")


def served(url: str) -> dict[str, int]:
    """The items per syntax that the test site put on the page at ``url`` (PROFILES)."""
    host, section, page, leaf = PLACE.match(url).groups()
    depth, index = next((d, int(i)) for d, i in ((3, leaf), (2, page), (1, section), (0, "0")) if i is not None)
    counts = {s: 0 for s in SYNTAXES}
    for key, n in PROFILES[host](depth, index).items():
        counts[MARKUP_KEYS[key]] += n
    return counts


def test_report_totals_are_the_markup_the_site_served(crawled: Path, compared: Path) -> None:
    """Per syntax, each crawl's totals in the report are what the site put on the pages
    the crawl fetched (known from the site's own profile of each page), not only what
    the store holds."""
    data = json.loads((compared / "report.json").read_text())
    for crawl, name in zip(data["crawls"], CRAWLS):
        fetched = [u for (u,) in sql(crawled, "SELECT url FROM url WHERE crawl = ? AND status = 200", name)]
        expected = {s: sum(served(u)[s] for u in fetched) for s in SYNTAXES}
        assert crawl["syntaxes"] == expected, name
        assert crawl["semantic_items"] == sum(expected.values())
        assert crawl["meta_tags"] == sum(expected[s] for s in META)


def test_report_numbers_match_the_store(crawled: Path, compared: Path) -> None:
    data = json.loads((compared / "report.json").read_text())
    html = (compared / "index.html").read_text()
    assert [c["crawl"] for c in data["crawls"]] == list(CRAWLS)
    for crawl, (name, strategy) in zip(data["crawls"], CRAWLS.items()):
        urls, pages, failed, redirects, items, rich, max_depth = sql(
            crawled,
            "SELECT COUNT(*), COUNT(page_id), SUM(status IS NULL OR status >= 400),"
            " SUM(status BETWEEN 300 AND 399), SUM(COALESCE(p.semantic_total, 0)),"
            " SUM(p.semantic_total > 0), MAX(depth)"
            " FROM url u LEFT JOIN page p ON p.id = u.page_id WHERE crawl = ?",
            name,
        )[0]
        meta = sql(crawled, f"SELECT SUM({META_SQL}) FROM url u JOIN page p ON p.id = u.page_id"
                            " WHERE u.crawl = ?", name)[0][0]
        assert (crawl["urls"], crawl["pages"], crawl["failed"], crawl["redirects"]) == (urls, pages, failed, redirects)
        assert failed >= 1  # the broken link on each root
        assert (crawl["semantic_items"], crawl["rich_pages"], crawl["max_depth"]) == (items, rich, max_depth)
        assert crawl["meta_tags"] == meta
        assert crawl["strategy"] == strategy
        assert close(crawl["mean_items_per_page"], items / pages)
        hosts = sql(crawled, "SELECT COUNT(DISTINCT substr(url, 8, instr(substr(url, 8), '/') - 1))"
                             " FROM url WHERE crawl = ?", name)[0][0]
        assert crawl["hosts_count"] == hosts == 3
        # per depth: sum, mean, max of semantic items and of meta tags
        expected = expected_depths(crawled, name)
        assert [d["depth"] for d in crawl["depths"]] == sorted(expected)
        for d in crawl["depths"]:
            e = expected[d["depth"]]
            for key in e:
                assert d[key] == e[key], (name, d["depth"], key)
            assert close(d["semantic_mean"], e["semantic_sum"] / e["pages"])
            assert close(d["meta_mean"], e["meta_sum"] / e["pages"])
            assert d["syntaxes"] == syntax_at(crawled, name, d["depth"])
        # per syntax, and pages carrying each
        assert crawl["syntaxes"] == syntax_at(crawled, name)
        for s in SYNTAXES:
            n = sql(crawled, f"SELECT COUNT(*) FROM url u JOIN page p ON p.id = u.page_id"
                             f" WHERE u.crawl = ? AND {jx(s)} > 0", name)[0][0]
            assert crawl["syntax_pages"][s] == n, s
        # the harvest curve: cumulative items in fetch order (url.checked, then url)
        harvest = [h for (h,) in sql(
            crawled,
            "SELECT SUM(COALESCE(p.semantic_total, 0)) OVER (ORDER BY u.checked, u.url"
            " ROWS UNBOUNDED PRECEDING) FROM url u LEFT JOIN page p ON p.id = u.page_id"
            " WHERE u.crawl = ? ORDER BY u.checked, u.url",
            name,
        )]
        assert crawl["harvest"] == harvest and harvest[-1] == items
        assert crawl["harvest_points"]["100%"] == items
        assert crawl["harvest_points"]["50%"] == harvest[-(-len(harvest) // 2) - 1]
        # priorities (the seeds' apart) and scores: one value per fetched URL / page
        assert sorted(crawl["priorities"]) == sorted(p for (p,) in sql(
            crawled, "SELECT priority FROM url WHERE crawl = ? AND priority IS NOT NULL AND depth > 0", name))
        assert sorted(crawl["scores"]) == sorted(
            s for (s,) in sql(crawled, "SELECT p.score FROM url u JOIN page p ON p.id = u.page_id"
                                       " WHERE u.crawl = ?", name))
        # top hosts by richness: mean items per page, the richest (shop.test) first
        by_host = {
            h: (n, s) for h, n, s in sql(
                crawled,
                "SELECT substr(url, 8, instr(substr(url, 8), '/') - 1), COUNT(*), SUM(p.semantic_total)"
                " FROM url u JOIN page p ON p.id = u.page_id WHERE u.crawl = ? GROUP BY 1",
                name,
            )
        }
        assert [h["host"] for h in crawl["hosts"]] == sorted(by_host, key=lambda h: -by_host[h][1] / by_host[h][0])
        assert crawl["hosts"][0]["host"] == "shop.test"
        for h in crawl["hosts"]:
            assert (h["pages"], h["items"]) == by_host[h["host"]]
        # the HTML summary shows the same numbers
        assert number(summary_cell(html, name, "urls")) == urls
        assert number(summary_cell(html, name, "pages")) == pages
        assert number(summary_cell(html, name, "semantic_items")) == items
        assert number(summary_cell(html, name, "meta_tags")) == meta
        assert number(summary_cell(html, name, "mean_items_per_page")) == round(items / pages, 2)
        assert summary_cell(html, name, "strategy") == strategy
        assert number(summary_cell(html, name, "items_after_half")) == harvest[-(-len(harvest) // 2) - 1]


def test_comparison_matches_the_store(crawled: Path, compared: Path) -> None:
    cmp = json.loads((compared / "report.json").read_text())["comparison"]
    html = (compared / "index.html").read_text()
    a, b = expected_depths(crawled, "focused"), expected_depths(crawled, "breadth")
    assert (cmp["a"], cmp["b"]) == ("focused", "breadth")
    assert [r["depth"] for r in cmp["depths"]] == sorted(set(a) | set(b))
    unreached = 0
    for row in cmp["depths"]:
        ea, eb = a.get(row["depth"]), b.get(row["depth"])
        cells = re.search(rf'<tr data-compare="meta" data-depth="{row["depth"]}">(.*?)</tr>', html)
        if ea is None or eb is None:  # a depth one crawl never reached: n/a, not 0
            unreached += 1
            assert row["meta_diff"] is None and row["meta_diff_pct"] is None and row["meta_mean_diff_pct"] is None
            assert (row["meta_a"] is None) == (ea is None) and (row["meta_b"] is None) == (eb is None)
            assert cells and "n/a" in cells.group(1)
            continue
        ma, mb = ea["meta_sum"], eb["meta_sum"]
        assert (row["meta_a"], row["meta_b"], row["meta_diff"]) == (ma, mb, ma - mb)
        assert close(row["meta_diff_pct"], (ma - mb) / mb * 100 if mb else None)
        mean_a = ma / ea["pages"] if ea["pages"] else 0.0
        mean_b = mb / eb["pages"] if eb["pages"] else 0.0
        assert close(row["meta_mean_diff_pct"], (mean_a - mean_b) / mean_b * 100 if mean_b else None)
        sa, sb = ea["semantic_sum"], eb["semantic_sum"]
        assert (row["semantic_a"], row["semantic_b"], row["semantic_diff"]) == (sa, sb, sa - sb)
        # the table row in the HTML
        assert cells and f"<td>{ma:,}</td><td>{mb:,}</td>" in cells.group(1)
    assert unreached == len(set(a) ^ set(b))
    last = min(max(a), max(b))
    assert cmp["last_level"] == last
    sa, sb = syntax_at(crawled, "focused", last), syntax_at(crawled, "breadth", last)
    assert {r["syntax"]: (r["a"], r["b"], r["diff"]) for r in cmp["last_level_syntaxes"]} == {
        s: (sa[s], sb[s], sa[s] - sb[s]) for s in SYNTAXES
    }
    for r in cmp["last_level_syntaxes"]:
        assert close(r["diff_pct"], (r["a"] - r["b"]) / r["b"] * 100 if r["b"] else None)
    # both harvest curves are on one plot, and the comparison figures exist
    figures = json.loads((compared / "report.json").read_text())["figures"]
    assert {"harvest", "compare-depth", "compare-syntax"} <= set(figures)
    assert "A against B" in html and "focused (A)" in html and "breadth (B)" in html
    # the headline: which crawl found more at equal URLs fetched, from the harvest curves
    head = cmp["headline"]
    curves = {c["crawl"]: c["harvest"] for c in json.loads((compared / "report.json").read_text())["crawls"]}
    n = min(len(curves["focused"]), len(curves["breadth"]))
    assert (head["urls"], head["items_a"], head["items_b"]) == (n, curves["focused"][n - 1], curves["breadth"][n - 1])
    more = "focused" if head["items_a"] > head["items_b"] else "breadth"
    assert re.search(rf'<p class="headline" data-headline="two"><b>{more}</b>', html)
    assert html.index('data-headline="two"') < html.index('id="harvest"') < html.index('id="summary"')
    bigger = max(len(c) for c in curves.values())
    assert head["sizes_differ"] == ((bigger - n) / bigger > 0.10)
    assert ('data-warning="sizes"' in html) == head["sizes_differ"]


def test_every_png_is_a_real_image(compared: Path) -> None:
    data = json.loads((compared / "report.json").read_text())
    html = (compared / "index.html").read_text()
    shown = set(re.findall(r'<img src="([^"]+)"', html))
    pngs = {p.name for p in compared.glob("*.png")}
    assert shown == pngs == set(data["figures"].values())
    assert len(pngs) >= 7  # depth ×2, syntax, harvest, distribution, hosts, compare ×2
    for name in pngs:
        path = compared / name
        assert path.read_bytes()[:8] == PNG_SIGNATURE, name
        assert path.stat().st_size > 10_000, name
        image = imread(path)
        height, width = image.shape[:2]
        assert width >= 800 and height >= 250, (name, image.shape)
        pixels = image.reshape(-1, image.shape[-1])
        assert len({tuple(p) for p in pixels[:: max(len(pixels) // 20000, 1)]}) > 20, f"{name} is (nearly) one colour"
        assert pixels.std() > 0.05, name


def test_single_crawl_report(crawled: Path) -> None:
    run, out = report(crawled, "single", "-a", "crawl=breadth")
    assert run.returncode == 0, run.stderr[-3000:]
    data = json.loads((out / "report.json").read_text())
    assert data["comparison"] is None and [c["crawl"] for c in data["crawls"]] == ["breadth"]
    assert not (out / "compare-depth.png").exists()
    html = (out / "index.html").read_text()
    assert "A against B" not in html and "breadth" in html
    for name in data["figures"].values():
        assert (out / name).read_bytes()[:8] == PNG_SIGNATURE


def test_unknown_crawl_is_a_clear_error(crawled: Path) -> None:
    run, out = report(crawled, "nothing", "-a", "crawl=nope")
    assert run.returncode == 2
    assert "spitag: error: crawl 'nope' has no URL in the store" in run.stderr
    assert "focused" in run.stderr and "breadth" in run.stderr  # the crawls that are there
    assert not (out / "index.html").exists()
    missing = scrapy("report", "-a", "crawl=focused", "-o", str(crawled / "x"),
                     "-s", f"SPITAG_STORE=sqlite:///{crawled}/no-such.db")
    assert missing.returncode == 2 and "no store at" in missing.stderr
    assert not (crawled / "no-such.db").exists()
    (crawled / "afile").write_text("a file")  # -o naming a file: a traceback before
    for target in (crawled / "afile", crawled / "afile" / "sub"):
        onto = scrapy("report", "-a", "crawl=focused", "-o", str(target), "-s", f"SPITAG_STORE=sqlite:///{crawled}/store.db")
        assert onto.returncode == 2 and "is a file, not a folder" in onto.stderr and "Traceback" not in onto.stderr


def test_report_on_postgresql(pg_url: str, tmp_path: Path) -> None:
    """The same queries on a PostgreSQL store: numbers checked with psycopg2."""
    import psycopg2

    with WebServer() as server:
        server.add_sites(semantic_sites(sections=3, per_section=3, leaves=2))
        run = scrapy(
            "crawl", "spitag", "-a", f"seeds={SEEDS}", "-a", "crawl=pg",
            "-s", f"SPITAG_STORE={pg_url}", "-s", f"SPITAG_FRONTIER=sqlite:///{tmp_path}/frontier.db",
            "-s", "SPITAG_PROGRESS=off", env=clean_env(server.proxy_url),
        )
        assert run.returncode == 0, run.stderr[-3000:]
    out = tmp_path / "pg-report"
    run = scrapy("report", "-a", "crawl=pg", "-o", str(out), "-s", f"SPITAG_STORE={pg_url}")
    assert run.returncode == 0, run.stderr[-3000:]
    crawl = json.loads((out / "report.json").read_text())["crawls"][0]
    meta = " + ".join(f"COALESCE((p.semantic::json->>'{s}')::int, 0)" for s in META)
    conn = psycopg2.connect(pg_url)
    try:
        with conn.cursor() as cur:
            cur.execute(
                "SELECT COUNT(*), COUNT(page_id), SUM(COALESCE(p.semantic_total, 0)), MAX(depth)"
                " FROM url u LEFT JOIN page p ON p.id = u.page_id WHERE crawl = 'pg'")
            urls, pages, items, max_depth = cur.fetchone()
            cur.execute(
                f"SELECT u.depth, COUNT(*), SUM(p.semantic_total), MAX(p.semantic_total), SUM({meta})"
                " FROM url u JOIN page p ON p.id = u.page_id WHERE crawl = 'pg' GROUP BY 1 ORDER BY 1")
            depths = cur.fetchall()
            cur.execute(
                "SELECT SUM(COALESCE(p.semantic_total, 0)) OVER (ORDER BY u.checked, u.url ROWS UNBOUNDED PRECEDING)"
                " FROM url u LEFT JOIN page p ON p.id = u.page_id WHERE crawl = 'pg' ORDER BY u.checked, u.url")
            harvest = [int(h) for (h,) in cur.fetchall()]
    finally:
        conn.close()
    assert (crawl["urls"], crawl["pages"], crawl["semantic_items"], crawl["max_depth"]) == (urls, pages, items, max_depth)
    assert urls == 3 * (1 + 3 + 9 + 18) + 3  # every page of the three hosts, and each root's broken link
    assert [(d["depth"], d["pages"], d["semantic_sum"], d["semantic_max"], d["meta_sum"]) for d in crawl["depths"]] == [
        tuple(int(v) for v in row) for row in depths
    ]
    assert crawl["harvest"] == harvest
    for name in json.loads((out / "report.json").read_text())["figures"].values():
        assert (out / name).read_bytes()[:8] == PNG_SIGNATURE


def test_crawls_of_different_sizes_are_compared_at_equal_urls(crawled: Path, tmp_path: Path) -> None:
    """B cut to its first 40 URLs (and its depths past them): the headline compares the
    first 40 URLs of each, the page warns that the crawls differ in size, the depths B
    never reached are n/a, and the figures are still drawn."""
    from dataclasses import replace

    from spitag.report import queries, write_reports
    from spitag.store import open_store

    store = open_store(f"sqlite:///{crawled}/store.db")
    try:
        a, b = queries.load(store, "focused"), queries.load(store, "breadth")
    finally:
        store.close()
    short = replace(b, crawl="short", harvest=b.harvest[:40], depths=[d for d in b.depths if d.depth <= 1])
    data = write_reports([a, short], tmp_path / "sizes")
    head = data["comparison"]["headline"]
    assert (head["urls"], head["urls_a"], head["urls_b"]) == (40, len(a.harvest), 40)
    assert (head["items_a"], head["items_b"]) == (a.harvest[39], b.harvest[39]) and head["sizes_differ"]
    html = (tmp_path / "sizes" / "index.html").read_text()
    assert 'data-warning="sizes"' in html and f"short {40:,}" in html
    deep = [r for r in data["comparison"]["depths"] if r["depth"] > 1]
    assert deep and all(r["pages_b"] is None and r["semantic_diff_pct"] is None for r in deep)
    assert all((tmp_path / "sizes" / f).stat().st_size > 10_000 for f in data["figures"].values())
