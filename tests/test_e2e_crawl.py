"""End to end: ``scrapy crawl spitag`` run as a user runs it, checked as a user checks it.

Every crawl is a real subprocess (tests.support.crawl) going through the loopback
web server acting as its HTTP proxy, so real sites are crawled under their own names
with no network. Each test looks at what a user has afterwards: the exit code, the
log, the ``-O`` JSON lines, the store's tables and the server's request log.

Two bugs these tests found stay pinned by their tests: a retried request must run
again and be recorded (test_server_error_is_retried_then_recorded), and a meta
refresh target that the refresh page also names as rel=canonical must be fetched
(test_flink_meta_refresh_targets_are_fetched).
"""

from __future__ import annotations

import hashlib
import json
import re
import sqlite3
import subprocess
import sys
import time
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from spitag.extract import COUNT_KEYS, profile_html
from spitag.frontier import Entry, open_frontier
from spitag.urls import normalize_url
from testbed.corpus import FLINK_HOST, flink_site, real_pages, real_pages_site, ring_links
from tests.support.crawl import (
    REPO,
    CrawlRun,
    base_of,
    crawl_command,
    log_records,
    page_links,
    page_rows,
    parse_page,
    proxy_env,
    read_jsonl,
    refresh_target,
    requested_urls,
    robots_meta,
    rows,
    run_crawl,
    sqlite_url,
    url_rows,
)
from testbed.sites import CountingSite, DeadSite, FlakySite, RefusingSite, tree_site
from testbed.webserver import DictSite, DirectorySite, Response, WebServer

HEX32 = re.compile(r"^[0-9a-f]{32}$")
ISO_UTC = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$")
EMPTY_MD5 = "d41d8cd98f00b204e9800998ecf8427e"
ITEM_FIELDS = {
    "url", "status", "depth", "priority", "md5", "md5dia", "content_type", "semantic",
    "outlinks", "fetched_at",
}
OPENGRAPH_PREFIXES = ("og:", "article:", "book:", "profile:", "music:", "video:", "product:")

# The test proxy refuses https (CONNECT): flink links to ~4,000 https pages of other
# apache.org hosts, the real pages to the live web. Each failure is recorded all the
# same; retrying each twice more would only triple the test's time.
REFUSED_HTTPS = {"RETRY_TIMES": 0}


def assert_clean_log(run: CrawlRun) -> None:
    assert "Spider error processing" not in run.stderr, run.describe()
    assert "Traceback" not in run.stderr, run.describe()


def in_apache_org(host: str) -> bool:
    return host == "apache.org" or host.endswith(".apache.org")


# =========================================================================== flink


@dataclass
class FlinkCrawl:
    run: CrawlRun
    site: DirectorySite


FLINK_ROOT = f"http://{FLINK_HOST}/"
FLINK_INDEX = f"http://{FLINK_HOST}/index.html"  # same bytes as the root: one page, two URLs


def flink_html(flink: FlinkCrawl, url: str, page: dict) -> bytes:
    """A page's stored HTML; for a ``noindex`` page (stored without its body) the bytes
    the server sent, after checking that the page does say noindex."""
    if page["data"] is not None:
        return bytes(page["data"])
    served = flink.site.respond(urlsplit(url).path).body
    assert "noindex" in robots_meta(served), f"{url}: body missing from the store"
    return served


@pytest.fixture(scope="module")
def flink(flink_root: Path, tmp_path_factory: pytest.TempPathFactory) -> FlinkCrawl:
    """One whole crawl of flink.apache.org, shared by the flink tests."""
    site = flink_site(flink_root)
    with WebServer() as server:
        server.add_site(FLINK_HOST, site)
        run = run_crawl(
            server, tmp_path_factory.mktemp("flink-crawl"), f"{FLINK_ROOT},{FLINK_INDEX}",
            settings=REFUSED_HTTPS, name="flink",
        )
    assert run.returncode == 0, run.describe()
    return FlinkCrawl(run, site)


def test_flink_every_answered_url_is_recorded_once(flink: FlinkCrawl) -> None:
    run = flink.run
    assert run.returncode == 0
    items = run.items
    item_urls = [i["url"] for i in items]
    assert [u for u, n in Counter(item_urls).items() if n > 1] == []
    with run.connect() as conn:
        table = url_rows(conn)
    assert set(table) == set(item_urls)

    # Every GET the server answered (robots.txt aside) is one URL row and one JSON line,
    # with the status the server sent; nothing was fetched twice.
    answered = Counter(requested_urls(run.server_log))
    assert [u for u, n in answered.items() if n > 1] == []
    status_sent = {f"http://{e.host}{e.path}": e.status for e in run.server_log if e.path.startswith("/")}
    http_rows = {u for u in table if u.startswith("http://")}
    assert http_rows == set(answered)
    assert {u: table[u]["status"] for u in answered} == {u: status_sent[u] for u in answered}
    assert {u: run.items_by_url[u]["status"] for u in answered} == {u: status_sent[u] for u in answered}
    assert sum(1 for u in answered if urlsplit(u).hostname == FLINK_HOST and status_sent[u] == 200) > 300

    # The rest are https links to other apache.org hosts: the test proxy refuses CONNECT,
    # so they are rows with an error and no status.
    for url in set(table) - http_rows:
        assert url.startswith("https://"), url
        assert table[url]["status"] is None and "TunnelError" in (table[url]["error"] or ""), table[url]


def test_flink_items_carry_the_documented_fields(flink: FlinkCrawl) -> None:
    items = flink.run.items
    assert items
    for item in items:
        missing = ITEM_FIELDS - set(item)
        assert not missing, (item["url"], missing)
        assert set(item["semantic"]) == set(COUNT_KEYS), item["url"]
        assert item["semantic"]["total"] == sum(v for k, v in item["semantic"].items() if k != "total")
        assert ISO_UTC.match(item["fetched_at"]), item["fetched_at"]
        assert isinstance(item["depth"], int) and item["depth"] >= 0
        assert isinstance(item["priority"], (int, float))
        assert isinstance(item["outlinks"], int) and item["outlinks"] >= 0
        if item["status"] is not None:
            assert HEX32.match(item["md5"]) and HEX32.match(item["md5dia"]), item["url"]
            assert isinstance(item["content_type"], str) and "/" in item["content_type"]
    by_url = flink.run.items_by_url
    assert by_url[FLINK_ROOT]["depth"] == 0 and by_url[FLINK_INDEX]["depth"] == 0
    assert all(i["depth"] > 0 for i in items if i["url"] not in (FLINK_ROOT, FLINK_INDEX))
    # The root page, as the server sent it: same md5.
    assert by_url[FLINK_ROOT]["md5"] == hashlib.md5(flink.site.respond("/").body).hexdigest()


def test_flink_opengraph_is_counted_on_content_pages(flink: FlinkCrawl) -> None:
    """Each content page (a 200 that is not a meta refresh) has OpenGraph in its head:
    the count equals the ``<meta property="og:…">`` (and ``article:…``, the other
    OpenGraph namespace this site uses) tags found there independently."""
    run = flink.run
    with run.connect() as conn:
        bodies = {
            r["url"]: flink_html(flink, r["url"], r)
            for r in rows(conn, "SELECT u.url, p.data FROM url u JOIN page p ON p.id = u.page_id")
        }
    content = [i for i in run.items if i["status"] == 200 and i["redirect_to"] is None]
    assert len(content) > 300
    wrong = {}
    for item in content:
        head = parse_page(bodies[item["url"]]).find("head")
        props = head.xpath("meta[@content]/@property") if head is not None else []
        expected = sum(1 for p in props if p.startswith(OPENGRAPH_PREFIXES))
        if item["semantic"]["opengraph"] != expected or not any(p.startswith("og:") for p in props):
            wrong[item["url"]] = (item["semantic"]["opengraph"], expected)
    assert wrong == {}


def test_flink_stays_in_its_registered_domain(flink: FlinkCrawl) -> None:
    hosts = {e.host for e in flink.run.server_log}
    assert FLINK_HOST in hosts
    assert {h for h in hosts if not in_apache_org(h)} == set()
    assert {urlsplit(u).hostname for u in flink.run.items_by_url} <= {h for h in hosts}
    # Links off the domain were seen (github, twitter...) but never requested.
    stats = flink.run.stats
    assert int(stats.get("spitag/filtered/scope", 0)) > 0


def test_flink_log_is_clean(flink: FlinkCrawl) -> None:
    """No callback crashed and nothing logged a traceback (unreachable hosts included)."""
    run = flink.run
    assert "Spider error processing" not in run.stderr
    with_traceback = [r.splitlines()[0] for r in log_records(run.stderr) if "Traceback" in r]
    assert with_traceback == []


def test_flink_link_rows_equal_the_links_on_the_pages(flink: FlinkCrawl) -> None:
    """For each stored page, the link table holds exactly (page, target page) for the
    links found in its stored HTML here, independently of SpiTag's extractor."""
    run = flink.run
    with run.connect() as conn:
        table = url_rows(conn)
        pages = page_rows(conn)
        link_rows = rows(conn, "SELECT source, target FROM link")
    page_of = {u: r["page_id"] for u, r in table.items() if r["page_id"] is not None}
    serving: dict[int, list[str]] = defaultdict(list)
    for url, page_id in page_of.items():
        serving[page_id].append(url)
    stored: dict[int, set[int]] = defaultdict(set)
    for r in link_rows:
        stored[r["source"]].add(r["target"])
    assert set(stored) <= set(pages)

    wrong = {}
    for page_id, page in pages.items():
        assert page["data_format"] == "plain"
        if page["type"] != "text/html":
            assert page_id not in stored
            continue
        targets: set[str] = set()
        for url in serving[page_id]:
            html = flink_html(flink, url, page)
            found = page_links(html, url)
            item = run.items_by_url[url]
            if item["outlinks"] != len(found):
                wrong[f"outlinks of {url}"] = (item["outlinks"], len(found))
            if "nofollow" not in robots_meta(html):  # a nofollow page gives no links
                targets |= found
        expected = {page_of[t] for t in targets if t in page_of}
        if stored[page_id] != expected:
            wrong[serving[page_id][0]] = {
                "missing": sorted(expected - stored[page_id]),
                "extra": sorted(stored[page_id] - expected),
            }
    assert wrong == {}
    assert len(link_rows) > 1000


def refresh_targets(flink: FlinkCrawl) -> dict[str, str | None]:
    """Each stored page's URL → its meta refresh target, read here from its HTML."""
    with flink.run.connect() as conn:
        table = url_rows(conn)
        pages = page_rows(conn)
    found = {}
    for url, row in table.items():
        if row["page_id"] is not None:
            doc = parse_page(flink_html(flink, url, pages[row["page_id"]]))
            found[url] = refresh_target(doc, base_of(doc, url))
    return found


def test_flink_meta_refresh_pages_are_recorded(flink: FlinkCrawl) -> None:
    """A meta refresh page is a 200 URL row with its page, and redirect_to its target."""
    run = flink.run
    with run.connect() as conn:
        table = url_rows(conn)
    targets = refresh_targets(flink)
    for url, target in targets.items():
        assert table[url]["redirect_to"] == target, url
        assert run.items_by_url[url]["redirect_to"] == target, url
        if target is not None:
            assert table[url]["status"] == 200 and table[url]["page_id"] is not None
    assert sum(t is not None for t in targets.values()) >= 50  # the site has 263; many are linked


def test_flink_meta_refresh_targets_are_fetched(flink: FlinkCrawl) -> None:
    with flink.run.connect() as conn:
        table = url_rows(conn)
    never = {}
    for url, target in refresh_targets(flink).items():
        if target is None:
            continue
        if target not in table or (
            urlsplit(target).hostname == FLINK_HOST and table[target]["status"] != 200
        ):
            never[url] = target
    assert never == {}


def test_flink_http_redirects_are_recorded_and_followed(flink: FlinkCrawl) -> None:
    """The site answers a folder path without its slash with a 301 to the slash."""
    run = flink.run
    with run.connect() as conn:
        table = url_rows(conn)
    moved = {u: r for u, r in table.items() if r["status"] == 301}
    assert moved
    for url, row in moved.items():
        assert row["page_id"] is None
        assert row["redirect_to"] == url + "/"
        assert run.items_by_url[url]["redirect_to"] == url + "/"
        target = table.get(url + "/")
        assert target is not None and target["status"] == 200, url
        assert target["depth"] <= row["depth"]  # a redirect's target keeps its layer (or less)


def test_flink_identical_bytes_are_one_page_two_urls(flink: FlinkCrawl) -> None:
    run = flink.run
    with run.connect() as conn:
        table = url_rows(conn)
        pages = page_rows(conn)
    root, index = table[FLINK_ROOT], table[FLINK_INDEX]
    assert root["status"] == index["status"] == 200
    assert root["page_id"] is not None and root["page_id"] == index["page_id"]
    page = pages[root["page_id"]]
    assert page["md5"] == hashlib.md5(flink.site.respond("/index.html").body).hexdigest()
    # In general: one page row per distinct md5 of the 2xx responses.
    md5s = {i["md5"] for i in run.items if i["status"] is not None and 200 <= i["status"] < 300}
    assert sorted(p["md5"] for p in pages.values()) == sorted(md5s)


# =========================================================================== hand-made site

SITE = "site.test"
ELSEWHERE = "http://elsewhere.test/away.html"

JSONLD_PAGE = """<!doctype html><html><head><title>JSON-LD</title>
<script type="application/ld+json">{"@context": "https://schema.org", "@type": "Organization", "name": "A"}</script>
<script type="application/ld+json">{"@type": "Person", "name": </script>
<script type="application/ld+json">[{"@context": "https://schema.org", "@type": "Event", "name": "E"}]</script>
</head><body><p>Two readable scripts, one broken.</p></body></html>"""

MICRODATA_PAGE = """<!doctype html><html><head><title>Microdata</title></head><body>
<div itemscope itemtype="https://schema.org/Product"><span itemprop="name">Widget</span>
  <div itemprop="offers" itemscope itemtype="https://schema.org/Offer"><span itemprop="price">3</span></div>
</div>
<div itemscope itemtype="https://schema.org/Person"><span itemprop="name">Ann</span></div>
</body></html>"""

COPY_PAGE = b"""<!doctype html><html><head><title>Copy</title></head>
<body><p>The same bytes at two URLs.</p><a href="/jsonld.html">json-ld</a></body></html>"""

PDF = (
    b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<< /Type /Catalog >>\nendobj\n\x00\x01\x02\xff"
    b'<a href="/from-pdf.html">not a link</a>\n%%EOF\n'
)

# Latin-1 bytes (invalid UTF-8) under a header that says utf-8: with the page's own
# <meta charset> (which SpiTag then trusts), and without one (nothing to go by).
LATIN_PAGE = (
    '<html><head><meta charset="iso-8859-1"><title>Café crème</title></head>'
    '<body><p>Ça coûte cher.</p><a href="/after-latin.html">next</a></body></html>'
).encode("latin-1")
LATIN_PAGE_NO_META = (
    "<html><head><title>Crème brûlée</title></head><body><p>Très bien.</p>"
    '<a href="/after-latin-no-meta.html">next</a></body></html>'
).encode("latin-1")

INDEX = f"""<!doctype html><html><head><title>Index</title></head><body>
<a href="/jsonld.html">a</a> <a href="/microdata.html">b</a> <a href="/missing.html">c</a>
<a href="/moved">d</a> <a href="/copy-a.html">e</a> <a href="/copy-b.html">f</a>
<a href="/doc">g</a> <a href="/empty.html">h</a> <a href="/latin.html">i</a>
<a href="/latin-no-meta.html">i2</a>
<a href="{ELSEWHERE}">j</a> <a href="/broken.html">k</a>
</body></html>"""


def hand_made_site() -> DictSite:
    return DictSite({
        "/": INDEX,
        "/jsonld.html": JSONLD_PAGE,
        "/microdata.html": MICRODATA_PAGE,
        "/moved": Response.redirect("/target.html", 301),
        "/target.html": "<html><head><title>Target</title></head><body>here</body></html>",
        "/copy-a.html": COPY_PAGE,
        "/copy-b.html": COPY_PAGE,
        "/doc": Response(200, PDF, content_type="application/pdf"),  # (a .pdf link is skipped)
        "/empty.html": Response.html(b""),
        "/latin.html": Response(200, LATIN_PAGE, content_type="text/html; charset=utf-8"),
        "/after-latin.html": "<html><body>after</body></html>",
        "/latin-no-meta.html": Response(200, LATIN_PAGE_NO_META, content_type="text/html; charset=utf-8"),
        "/after-latin-no-meta.html": "<html><body>after</body></html>",
        "/from-pdf.html": "<html><body>must not be requested</body></html>",
        "/broken.html": Response.html(
            '<html><body>oops <a href="/behind-500.html">x</a></body></html>', status=500
        ),
        "/behind-500.html": "<html><body>must not be requested</body></html>",
    })


def u(path: str) -> str:
    return f"http://{SITE}{path}"


@pytest.fixture(scope="module")
def hand_made(tmp_path_factory: pytest.TempPathFactory) -> tuple[CrawlRun, DictSite]:
    site = hand_made_site()
    with WebServer() as server:
        server.add_site(SITE, site)
        # No retries, so that every URL is requested exactly once (the 500 included);
        # retries have their own test, test_server_error_is_retried_then_recorded.
        run = run_crawl(
            server, tmp_path_factory.mktemp("hand-made"), u("/"), crawl="site", name="site",
            settings={"RETRY_TIMES": 0},
        )
    return run, site


def test_hand_made_site_every_request_is_recorded(hand_made: tuple[CrawlRun, DictSite]) -> None:
    run, _ = hand_made
    assert run.returncode == 0, run.describe()
    assert_clean_log(run)
    expected = {
        u(p) for p in (
            "/", "/jsonld.html", "/microdata.html", "/missing.html", "/moved", "/target.html",
            "/copy-a.html", "/copy-b.html", "/doc", "/empty.html", "/latin.html",
            "/after-latin.html", "/latin-no-meta.html", "/after-latin-no-meta.html", "/broken.html",
        )
    }
    assert Counter(requested_urls(run.server_log)) == Counter(expected)  # each once
    assert {e.host for e in run.server_log} == {SITE}  # elsewhere.test never asked
    with run.connect() as conn:
        table = url_rows(conn)
        outlinks = rows(conn, "SELECT crawl, source, target FROM outlink WHERE target = ?", (ELSEWHERE,))
    assert set(table) == expected
    assert sorted(i["url"] for i in run.items) == sorted(expected)
    assert {r["crawl"] for r in table.values()} == {"site"}
    assert {i["crawl"] for i in run.items} == {"site"}
    # The off-scope link was seen (kept as an outlink) but not followed.
    assert outlinks == [{"crawl": "site", "source": u("/"), "target": ELSEWHERE}]
    assert int(run.stats["spitag/filtered/scope"]) >= 1


def test_hand_made_site_per_url_expectations(hand_made: tuple[CrawlRun, DictSite]) -> None:
    run, site = hand_made
    with run.connect() as conn:
        table = url_rows(conn)
        pages = page_rows(conn)
    items = run.items_by_url

    def page(path: str) -> dict:
        row = table[u(path)]
        assert row["page_id"] is not None, path
        return pages[row["page_id"]]

    def served_md5(path: str) -> str:
        return hashlib.md5(site.respond(path).body).hexdigest()

    # Structured data: JSON-LD (one broken script among three), microdata.
    assert items[u("/jsonld.html")]["semantic"]["json-ld"] == 2
    assert items[u("/jsonld.html")]["semantic"]["total"] == 2
    assert items[u("/microdata.html")]["semantic"]["microdata"] == 2
    assert page("/jsonld.html")["semantic_total"] == 2

    # 404: a URL row, no page.
    assert table[u("/missing.html")]["status"] == 404 and table[u("/missing.html")]["page_id"] is None
    assert items[u("/missing.html")]["status"] == 404

    # 500: a URL row with its status, no page, its body's links not followed.
    broken = table[u("/broken.html")]
    assert (broken["status"], broken["page_id"]) == (500, None)
    assert items[u("/broken.html")]["status"] == 500

    # 301: a URL row with its target, no page; the target was fetched.
    moved = table[u("/moved")]
    assert (moved["status"], moved["page_id"], moved["redirect_to"]) == (301, None, u("/target.html"))
    assert items[u("/moved")]["redirect_to"] == u("/target.html")
    assert table[u("/target.html")]["status"] == 200 and table[u("/target.html")]["page_id"] is not None

    # The same bytes at two URLs: one page, two URL rows.
    assert table[u("/copy-a.html")]["page_id"] == table[u("/copy-b.html")]["page_id"]
    assert page("/copy-a.html")["md5"] == served_md5("/copy-a.html")
    assert sum(1 for p in pages.values() if p["md5"] == served_md5("/copy-a.html")) == 1

    # A PDF: stopped at its headers (no semantic markup to read in it), its URL row
    # records the answer: status, type and length, and no page.
    pdf_item = items[u("/doc")]
    assert (pdf_item["status"], pdf_item["content_type"], pdf_item["size"]) == (200, "application/pdf", len(PDF))
    assert pdf_item["md5"] is None and pdf_item["semantic"]["total"] == 0 and table[u("/doc")]["page_id"] is None
    assert table[u("/doc")]["content_type"] == "application/pdf"
    assert int(run.stats["spitag/pages/headers_only"]) == 1

    # An empty 200.
    empty = items[u("/empty.html")]
    assert (empty["status"], empty["size"], empty["md5"]) == (200, 0, EMPTY_MD5)
    assert page("/empty.html")["md5"] == EMPTY_MD5
    assert empty["semantic"]["total"] == 0

    # Invalid UTF-8 under a charset=utf-8 header: recorded with the md5 of the bytes,
    # text stored as valid UTF-8, links still followed. With the page's own
    # <meta charset>, the text is read right; without, undecodable bytes are replaced.
    for path, raw in (("/latin.html", LATIN_PAGE), ("/latin-no-meta.html", LATIN_PAGE_NO_META)):
        item = items[u(path)]
        assert item["status"] == 200 and item["md5"] == hashlib.md5(raw).hexdigest(), path
        assert item["size"] == len(raw)
        bytes(page(path)["data"]).decode("utf-8")  # strict: raises if not UTF-8
    assert items[u("/latin.html")]["title"] == "Café crème"
    assert "Ça coûte cher." in bytes(page("/latin.html")["data"]).decode("utf-8")
    no_meta_title = items[u("/latin-no-meta.html")]["title"]
    assert no_meta_title.startswith("Cr") and no_meta_title.endswith("e")
    assert table[u("/after-latin.html")]["status"] == 200
    assert table[u("/after-latin-no-meta.html")]["status"] == 200

    # JSON lines and url rows agree on status and md5 for every URL.
    for url, row in table.items():
        item = items[url]
        assert item["status"] == row["status"], url
        if row["page_id"] is not None:
            assert pages[row["page_id"]]["md5"] == item["md5"], url


def test_hand_made_site_counts_the_broken_json_ld(hand_made: tuple[CrawlRun, DictSite]) -> None:
    run, _ = hand_made
    assert run.stats.get("spitag/extract/errors/json-ld") == "1", run.describe()
    assert re.search(r"'spitag/extract/errors/json-ld': 1\b", run.stderr)


def test_server_error_is_retried_later_then_recorded(webserver: WebServer, tmp_path: Path) -> None:
    """A 500 is asked again ``SPITAG_RETRY_DELAY`` seconds later, then twice that
    (``spitag.retry``), not at once; after ``RETRY_TIMES`` retries it is stored."""
    webserver.add_site("retry.test", DictSite({
        "/": '<html><body><a href="/boom">boom</a> <a href="/ok">ok</a></body></html>',
        "/ok": "<html><body>fine</body></html>",
        "/boom": Response.text("internal error\n", status=500),
    }))
    # CLOSESPIDER_TIMEOUT only bounds the hang of the bug above; a right crawl ends once
    # the last retry is in (about 1 + 2 s).
    run = run_crawl(webserver, tmp_path, "http://retry.test/",
                    settings={"CLOSESPIDER_TIMEOUT": 30, "SPITAG_RETRY_DELAY": 1, "SPITAG_PROGRESS_INTERVAL": 0.5})
    assert run.returncode == 0, run.describe()
    # the progress lines while it waits (3 s: about six of them) count it
    assert "1 leased, 2 done, 1 retrying," in run.stderr, run.describe()
    boom = "http://retry.test/boom"
    asked = [e.time for e in run.server_log if f"http://{e.host}{e.path}" == boom]
    assert len(asked) == 3, run.describe()  # RETRY_TIMES = 2
    assert asked[1] - asked[0] >= 1.0 and asked[2] - asked[1] >= 2.0, asked
    assert run.stats.get("spitag/retry/later") == "2", run.describe()
    with run.connect() as conn:
        table = url_rows(conn)
    assert boom in table, run.describe()
    assert (table[boom]["status"], table[boom]["page_id"]) == (500, None)
    assert run.items_by_url[boom]["status"] == 500
    assert run.stats.get("finish_reason") == "'finished'"


@pytest.mark.parametrize("strategy", ["spitag", "bfs"])
def test_one_site_never_gets_more_downloads_at_once_than_allowed(
    webserver: WebServer, tmp_path: Path, strategy: str
) -> None:
    """``CONCURRENT_REQUESTS_PER_DOMAIN`` holds however many of a site's URLs wait.
    (Scrapy 2.19's downloader alone started a slot's whole queue at once: 20 downloads
    at a time with a limit of 4 on this site. The frontier now gives a site no more
    than its places can take, and the politeness gate holds the limit whatever comes.)"""
    site = CountingSite()
    webserver.add_site("one.test", site)
    run = run_crawl(webserver, tmp_path, "http://one.test/", settings={
        "SPITAG_STRATEGY": strategy, "CONCURRENT_REQUESTS_PER_DOMAIN": 3,
    })
    assert run.returncode == 0, run.describe()
    assert run.stats.get("spitag/frontier/acked") == "41", run.describe()  # the home and its 40 pages
    assert site.most == 3, site.most  # reached, never passed


def test_autothrottle_spaces_a_slow_site_by_its_latency(webserver: WebServer, tmp_path: Path) -> None:
    """``AUTOTHROTTLE_ENABLED`` with a target of 1: the site's delay follows its 0.3 s
    answers, so about one page is served at a time, though 4 places are allowed."""
    site = CountingSite()
    webserver.add_site("one.test", site)
    run = run_crawl(webserver, tmp_path, "http://one.test/", settings={
        "AUTOTHROTTLE_ENABLED": True, "AUTOTHROTTLE_TARGET_CONCURRENCY": 1, "AUTOTHROTTLE_START_DELAY": 0.3,
        "CONCURRENT_REQUESTS_PER_DOMAIN": 4,
    })
    assert run.returncode == 0, run.describe()
    assert run.stats.get("spitag/frontier/acked") == "41", run.describe()
    assert site.mean < 1.4, (site.mean, site.most)  # without the setting: 3.5
    assert 0.25 <= float(run.stats["spitag/politeness/autothrottle_delay_max_s"]) <= 1.0, run.describe()


def test_a_slow_site_does_not_hold_up_the_others(webserver: WebServer, tmp_path: Path) -> None:
    """Requests a site cannot take yet (its places all busy) must not fill the
    downloader: a slow site (0.6 s an answer, 2 at a time) gets no more of this worker's
    downloads than it can serve, and a fast site linked from the same page is crawled
    meanwhile, not after it."""
    slow = " ".join(f'<a href="http://slow.test/{i}">s{i}</a>' for i in range(30))
    fast = " ".join(f'<a href="http://fast.test/{i}">f{i}</a>' for i in range(48))
    webserver.add_site("hub.test", DictSite({"/": f"<html><body>{slow} {fast}</body></html>"}))
    page = '<html><head><meta name="description" content="x"></head><body>x</body></html>'
    webserver.add_site("slow.test", DictSite({f"/{i}": Response.html(page, delay=0.6) for i in range(30)}))
    webserver.add_site("fast.test", DictSite({f"/{i}": Response.html(page) for i in range(48)}))
    run = run_crawl(webserver, tmp_path, "http://hub.test/", settings={
        "SPITAG_STRATEGY": "bfs", "SPITAG_SCOPE": "any",
        "CONCURRENT_REQUESTS": 8, "CONCURRENT_REQUESTS_PER_DOMAIN": 2,
    })
    assert run.returncode == 0, run.describe()
    assert run.stats.get("spitag/frontier/acked") == "79", run.describe()  # every page, once
    pages = [e for e in run.server_log if e.path != "/robots.txt"]
    slow_times = sorted(e.time for e in pages if e.host == "slow.test")
    fast_times = sorted(e.time for e in pages if e.host == "fast.test")
    assert len(slow_times) == 30 and len(fast_times) == 48
    # 30 slow pages take 9 s at 2 at a time; the fast site is done within the first third
    assert fast_times[-1] < slow_times[9], (fast_times[-1] - slow_times[0], slow_times[9] - slow_times[0])


def test_a_host_asking_for_a_pause_is_left_alone_that_long(webserver: WebServer, tmp_path: Path) -> None:
    """HTTP 429 with ``Retry-After: 3``: no request to the host for 3 s (Scrapy's retry
    of the refused page waits too), then the crawl goes on and the page is stored."""
    site = RefusingSite(20)
    webserver.add_site("busy.test", site)
    run = run_crawl(webserver, tmp_path, "http://busy.test/", settings={"SPITAG_STRATEGY": "bfs"})
    assert run.returncode == 0, run.describe()
    log = [e for e in run.server_log if e.host == "busy.test" and e.path not in ("/", "/robots.txt")]
    refused = next(e for e in log if e.status == 429).time
    # nothing asked until the pause ends (what came in just after the refusal was out
    # before the crawler read it), then the crawl went on
    sent_in_pause = [e for e in log if refused + 0.5 < e.arrived < refused + 3.0 - 0.1]
    assert not sent_in_pause, sent_in_pause
    assert len([e for e in log if e.arrived - refused >= 2.9]) >= 10, log
    retried = [e for e in log if e.path == site.refused]
    assert [e.status for e in retried] == [429, 200] and retried[1].arrived - retried[0].time >= 2.9
    assert run.items_by_url[f"http://busy.test{site.refused}"]["status"] == 200
    assert len({e.path for e in log if e.status == 200}) == 20  # every page, once
    assert run.stats.get("spitag/politeness/retry_after_pauses") == "1", run.describe()


def test_throttled_sites_do_not_fill_the_downloader(webserver: WebServer, tmp_path: Path) -> None:
    """AutoThrottle keeps three slow sites at one request a second (target 0.25, 0.3 s
    pages, delay capped at 1 s): this worker holds at most 2 of each site's URLs (the
    target, rounded up, plus one at the gate), not 4 that would wait there, so a fast
    site linked from the same page gets the downloader's other places meanwhile."""
    slow = [f"slow{n}.test" for n in range(3)]
    links = " ".join(f'<a href="http://{h}/{i}">{h}{i}</a>' for h in slow for i in range(6))
    links += " ".join(f'<a href="http://fast.test/{i}">f{i}</a>' for i in range(24))
    webserver.add_site("hub.test", DictSite({"/": f"<html><body>{links}</body></html>"}))
    page = '<html><head><meta name="description" content="x"></head><body>x</body></html>'
    for host in slow:
        webserver.add_site(host, DictSite({f"/{i}": Response.html(page, delay=0.3) for i in range(6)}))
    webserver.add_site("fast.test", DictSite({f"/{i}": Response.html(page) for i in range(24)}))
    run = run_crawl(webserver, tmp_path, "http://hub.test/", settings={
        "SPITAG_STRATEGY": "bfs", "SPITAG_SCOPE": "any", "CONCURRENT_REQUESTS": 8,
        "AUTOTHROTTLE_ENABLED": True, "AUTOTHROTTLE_TARGET_CONCURRENCY": 0.25,
        "AUTOTHROTTLE_START_DELAY": 1.0, "AUTOTHROTTLE_MAX_DELAY": 1.0,
    })
    assert run.returncode == 0, run.describe()
    assert run.stats.get("spitag/frontier/acked") == "43", run.describe()  # every page, once
    pages = [e for e in run.server_log if e.path != "/robots.txt"]
    slow_times = sorted(e.time for e in pages if e.host in slow)
    fast_times = sorted(e.time for e in pages if e.host == "fast.test")
    assert len(slow_times) == 18 and len(fast_times) == 24
    # measured: the fast site done 3.0 s in, the slow ones 5.0 s; holding 4 URLs of
    # each slow site, most of them waiting at its gate, the fast site was done 6.6 s
    # in, after the slow ones (6.3 s)
    assert fast_times[-1] < slow_times[-1] - 1.0, (fast_times[-1] - slow_times[0], slow_times[-1] - slow_times[0])


@pytest.mark.parametrize("status", [429, 503])
def test_a_host_refusing_without_retry_after_is_backed_off(webserver: WebServer, tmp_path: Path, status: int) -> None:
    """429 or 503 with no ``Retry-After``, twice in a row for one page: the host is left
    alone 1 s, then 2 s (doubled), and the page is stored at the third try."""
    site = RefusingSite(20, retry_after=None, times=2, status=status)
    webserver.add_site("busy.test", site)
    run = run_crawl(webserver, tmp_path, "http://busy.test/", settings={"SPITAG_STRATEGY": "bfs"})
    assert run.returncode == 0, run.describe()
    tries = [e for e in run.server_log if e.host == "busy.test" and e.path == site.refused]
    assert [e.status for e in tries] == [status, status, 200], run.describe()
    assert 0.95 <= tries[1].time - tries[0].time and 1.95 <= tries[2].time - tries[1].time, tries
    assert run.items_by_url[f"http://busy.test{site.refused}"]["status"] == 200
    assert run.stats.get("spitag/politeness/back_offs") == "2", run.describe()
    assert run.stats.get("spitag/politeness/retry_after_pauses") == "2", run.describe()
    assert run.stats.get("spitag/politeness/retry_after_max_s") == "2.0", run.describe()


@pytest.mark.parametrize("retries, stored", [(None, 200), (0, 429)])
def test_a_page_refused_many_times_is_not_lost(webserver: WebServer, tmp_path: Path, retries, stored) -> None:
    """A page refused five times in a row (429, ``Retry-After: 1``) is asked again after
    each pause (``SPITAG_REFUSAL_RETRIES``, 8) and stored with its page, where Scrapy's
    ``RETRY_TIMES`` (2) would give up at the third refusal and store the 429."""
    site = RefusingSite(10, retry_after="1", times=5)
    webserver.add_site("busy.test", site)
    settings = {"SPITAG_STRATEGY": "bfs"}
    if retries is not None:
        settings["SPITAG_REFUSAL_RETRIES"] = retries
    run = run_crawl(webserver, tmp_path, "http://busy.test/", settings=settings)
    assert run.returncode == 0, run.describe()
    tries = [e for e in run.server_log if e.host == "busy.test" and e.path == site.refused]
    assert run.items_by_url[f"http://busy.test{site.refused}"]["status"] == stored
    if stored == 200:
        assert [e.status for e in tries] == [429] * 5 + [200], tries
        assert all(b.time - a.time >= 0.95 for a, b in zip(tries, tries[1:])), tries
    else:  # Scrapy's own limit
        assert [e.status for e in tries] == [429] * 3, tries


@pytest.mark.parametrize("skip", [None, "none"])
def test_files_with_no_html_are_not_fetched(webserver: WebServer, tmp_path: Path, skip: str | None) -> None:
    """Links to images, PDFs, archives, scripts and style sheets are not followed
    (``SPITAG_SKIP_EXTENSIONS``, by default Scrapy's ``IGNORED_EXTENSIONS``): they hold
    no semantic markup and would cost downloads and page budget. ``none`` follows them."""
    files = ["/logo.png", "/paper.pdf", "/code.tar.gz", "/app.js", "/style.css"]
    links = " ".join(f'<a href="{path}">{path}</a>' for path in files + ["/page.html", "/feed.xml"])
    site = DictSite({"/": f"<html><body>{links}</body></html>", "/page.html": "<html><body>p</body></html>"})
    for path in files + ["/feed.xml"]:
        site.add(path, Response(body=b"\x89 not html", content_type="application/octet-stream"))
    webserver.add_site("files.test", site)
    settings = {"ROBOTSTXT_OBEY": False} if skip is None else {"ROBOTSTXT_OBEY": False, "SPITAG_SKIP_EXTENSIONS": skip}
    run = run_crawl(webserver, tmp_path, "http://files.test/", settings=settings)
    assert run.returncode == 0, run.describe()
    asked = {e.path for e in run.server_log}
    if skip is None:
        assert asked == {"/", "/page.html", "/feed.xml"}, asked
        assert run.stats.get("spitag/filtered/extension") == "5", run.describe()
    else:
        assert asked == {"/", "/page.html", "/feed.xml", *files}, asked


def test_pages_that_fail_for_a_while_are_fetched_when_they_are_back(webserver: WebServer, tmp_path: Path) -> None:
    """Pages that answer 502 for 2 s after they are first asked for: Scrapy's
    immediate retries (``SPITAG_RETRY_DELAY=0``) spend all three tries in that time
    and store the 502; tried again later, every page is stored as it is once back."""
    stored = {}
    for delay in (0, 1):
        webserver.add_site("flaky.test", FlakySite(pages=4, down_for=2.0))
        run = run_crawl(webserver, tmp_path / f"delay{delay}", "http://flaky.test/",
                        settings={"SPITAG_RETRY_DELAY": delay, "SPITAG_HOST_FAILURES": 0,
                                  "ROBOTSTXT_OBEY": False, "CLOSESPIDER_TIMEOUT": 30})
        assert run.returncode == 0 and run.stats.get("finish_reason") == "'finished'", run.describe()
        pages = {u: i for u, i in run.items_by_url.items() if u != "http://flaky.test/"}
        assert len(pages) == 4, run.describe()
        stored[delay] = sorted(i["status"] for i in pages.values())
        asked = requested_urls(run.server_log)
        assert all(asked.count(u) <= 3 for u in pages), asked  # RETRY_TIMES = 2 in both
    assert stored == {0: [502] * 4, 1: [200] * 4}


def serve_dead_host_and_hub(webserver: WebServer, site: DeadSite, n: int, unlinked: tuple[str, ...] = ()) -> set[str]:
    """``site`` served as dead.test, and hub.test: a home linking its n pages and n
    URLs of dead.test (and serving the ``unlinked`` paths too). Returns those n dead URLs."""
    webserver.add_site("dead.test", site)
    links = " ".join(f'<a href="/{i}">{i}</a> <a href="http://dead.test/{i}">d{i}</a>' for i in range(n))
    hub = DictSite({"/": f"<html><body>{links}</body></html>"})
    for path in (*(f"/{i}" for i in range(n)), *unlinked):
        hub.add(path, DeadSite.PAGE)
    webserver.add_site("hub.test", hub)
    return {f"http://dead.test/{i}" for i in range(n)}


def waiting_on_dead_host(tmp_path: Path) -> set[str]:
    """The URLs of dead.test not done in the crawl's frontier: queued, or leased (failed,
    waiting for another try)."""
    with sqlite3.connect(tmp_path / "crawl-frontier.db") as conn:
        return {u for (u,) in conn.execute("SELECT url FROM frontier_url WHERE host = 'dead.test' AND state != 2")}


@pytest.mark.parametrize(("dead", "frontier"), [("timeouts", "sqlite"), ("502", "sqlite"), ("502", "redis")])
def test_a_dead_host_is_set_aside_and_its_urls_wait_for_the_next_run(
    webserver: WebServer, tmp_path: Path, request: pytest.FixtureRequest, dead: str, frontier: str
) -> None:
    """A host that stops answering (every request times out, or a gateway answers 502)
    fails 5 downloads in a row (``SPITAG_HOST_FAILURES``): it is set aside, its URLs
    are not asked for, and the crawl ends when the rest is done, the URLs still queued
    in the frontier (or leased, failed and waiting for another try). The next run tries
    the host again and fetches them: on a Redis frontier too, where the waiting URLs
    are leases of a worker that has closed (``recover`` takes them back)."""
    site = DeadSite(hang=3.0) if dead == "timeouts" else DeadSite(status=502)
    dead_urls = serve_dead_host_and_hub(webserver, site, 30)
    settings = {"SPITAG_STRATEGY": "bfs", "SPITAG_SCOPE": "any", "ROBOTSTXT_OBEY": False, "DOWNLOAD_TIMEOUT": 1}
    frontier_url = sqlite_url(tmp_path / "crawl-frontier.db")
    if frontier == "redis":
        frontier_url = settings["SPITAG_FRONTIER"] = request.getfixturevalue("redis_url")
    first = run_crawl(webserver, tmp_path, "http://hub.test/", settings=settings, crawl="dead")
    assert first.returncode == 0, first.describe()
    failed = {u for u in first.items_by_url if u in dead_urls}
    assert len([u for u in first.items_by_url if u.startswith("http://hub.test/")]) == 31
    # before: every URL asked 3 times (RETRY_TIMES 2), 90 requests, and stored as a
    # failure, the timeouts' crawl taking 24.7 s; measured: 8 requests, 2.3 s
    assert 5 <= len(site.asked) <= 12, site.asked
    assert "dead.test failed 5 downloads in a row" in first.stderr, first.describe()
    queued = dead_urls - failed
    assert len(queued) >= 25  # none lost: failed, or waiting
    if frontier == "sqlite":
        assert waiting_on_dead_host(tmp_path) == queued
    assert first.stats.get("spitag/frontier/waiting_on_hosts_down") == str(len(queued)), first.describe()
    shown = subprocess.run(
        [sys.executable, "-m", "scrapy", "frontier", "-a", "crawl=dead", "-a", "format=json",
         "-s", f"SPITAG_FRONTIER={frontier_url}"],
        cwd=REPO, env=proxy_env(None), capture_output=True, text=True, timeout=120,
    )
    state = json.loads(shown.stdout)
    assert [(d["host"], d["waiting"]) for d in state["hosts_down"]] == [("dead.test", len(queued))], shown.stderr
    assert state["workers"] == ([] if frontier == "redis" else None)  # a worker that closed leaves
    # the URLs that failed and wait for another try (the others were never asked for)
    tried = {f"http://dead.test{path}" for path in site.asked} - failed
    assert tried and state["retrying"] == len(tried), (state["retrying"], tried)
    text = subprocess.run(
        [sys.executable, "-m", "scrapy", "frontier", "-a", "crawl=dead", "-s", f"SPITAG_FRONTIER={frontier_url}"],
        cwd=REPO, env=proxy_env(None), capture_output=True, text=True, timeout=120,
    ).stdout
    assert f"  {len(tried)} of the queued and leased failed and wait for another try" in text, text

    site.alive = True
    site.asked.clear()
    second = run_crawl(webserver, tmp_path, "http://hub.test/", settings=settings, crawl="dead")  # (same files: a rerun)
    assert second.returncode == 0, second.describe()
    assert "set aside as down by an earlier run: tried again" in second.stderr, second.describe()
    assert {u: i["status"] for u, i in second.items_by_url.items()} == {u: 200 for u in queued}
    assert sorted(site.asked) == sorted(urlsplit(u).path for u in queued)  # each once


@pytest.mark.parametrize("frontier", ["sqlite", "redis"])
def test_a_rerun_right_after_kill_9_is_a_new_run(
    webserver: WebServer, tmp_path: Path, request: pytest.FixtureRequest, frontier: str
) -> None:
    """A crawl killed (SIGKILL) while a host is set aside as down, run again at once:
    the rerun takes back the killed worker's leases at its start (``owners.is_gone``),
    so it knows that no worker of the crawl is running, a new run, and tries the host
    again rather than leaving it down for ``SPITAG_HOST_DOWN_SECONDS`` (600). On Redis
    it used to wait for the dead worker's heartbeat to go stale and leave the host
    down: the rerun ended at once with the host's URLs still waiting."""
    site = DeadSite(status=502)
    dead_urls = serve_dead_host_and_hub(webserver, site, 30)
    settings = {"SPITAG_STRATEGY": "bfs", "SPITAG_SCOPE": "any", "ROBOTSTXT_OBEY": False,
                "DOWNLOAD_DELAY": 0.3, "SPITAG_LEASE_SECONDS": 600}  # the hub lasts ~10 s
    if frontier == "redis":
        settings["SPITAG_FRONTIER"] = request.getfixturevalue("redis_url")
    cmd = crawl_command("http://hub.test/", tmp_path / "run1.jsonl", store=tmp_path / "store.db",
                        frontier=tmp_path / "frontier.db", settings=settings, crawl="killed")
    log = tmp_path / "run1.log"
    with log.open("wb") as err:
        proc = subprocess.Popen(cmd, cwd=REPO, env=proxy_env(webserver), stdin=subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL, stderr=err)
        try:
            deadline = time.monotonic() + 60
            while "dead.test failed 5 downloads in a row" not in log.read_text(errors="replace"):
                assert proc.poll() is None and time.monotonic() < deadline, log.read_text()[-3000:]
                time.sleep(0.1)
            proc.kill()
        finally:
            proc.kill()
            proc.wait(30)
    first = read_jsonl(tmp_path / "run1.jsonl") if (tmp_path / "run1.jsonl").exists() else []
    assert len([i for i in first if i["url"].startswith("http://hub.test/")]) < 31  # killed mid-crawl

    site.alive = True
    site.asked.clear()
    cmd[cmd.index(str(tmp_path / "run1.jsonl"))] = str(tmp_path / "run2.jsonl")
    second = subprocess.run(cmd, cwd=REPO, env=proxy_env(webserver), stdin=subprocess.DEVNULL,
                            capture_output=True, text=True, timeout=120)
    assert second.returncode == 0, second.stderr[-3000:]
    assert re.search(r"\([1-9]\d* unfinished leases of an earlier run taken back\)", second.stderr), second.stderr[-3000:]
    assert "set aside as down by an earlier run: tried again" in second.stderr, second.stderr[-3000:]
    with sqlite3.connect(tmp_path / "store.db") as conn:
        status = dict(conn.execute("SELECT url, status FROM url WHERE url LIKE 'http://dead.test/%'"))
    assert set(status) == dead_urls  # none lost
    asked_again = {f"http://dead.test{path}" for path in site.asked}
    assert asked_again and all(status[u] == 200 for u in asked_again), (asked_again, status)


def test_a_worker_alone_once_a_killed_worker_of_another_container_is_gone_starts_a_new_run(
    webserver: WebServer, tmp_path: Path, redis_url: str
) -> None:
    """Redis: a crawl ended with a host set aside as down; a worker of another container
    (a process table of its own: its death cannot be seen from here) held a lease and
    was killed just before the rerun. The rerun first counts as joining that worker, so
    the host stays down; once the worker's heartbeat is stale (10 s: the scheduler's look
    for gone workers every 2 s, or ``recover_again`` at 11 s) its lease comes back and,
    no other worker being alive, the rerun is a new run and tries the host again,
    whichever look came first (it used to end with the host's URLs still waiting; and
    when the 2-s look came first, the run could end before ``recover_again``)."""
    site = DeadSite(status=502)
    dead_urls = serve_dead_host_and_hub(webserver, site, 20, unlinked=("/extra",))
    settings = {"SPITAG_STRATEGY": "bfs", "SPITAG_SCOPE": "any", "ROBOTSTXT_OBEY": False,
                "SPITAG_FRONTIER": redis_url}
    first = run_crawl(webserver, tmp_path, "http://hub.test/", settings=settings, crawl="gone")
    assert first.returncode == 0 and "dead.test failed 5 downloads in a row" in first.stderr, first.describe()
    stored_first = {u for u in first.items_by_url if u in dead_urls}
    killed = open_frontier(redis_url, "gone", owner="box:1:0ther5ce:1:killed")
    try:
        killed.queue.push([Entry("http://hub.test/extra", "hub.test", 1, 1.0)], "max")
        assert killed.registry.heartbeat() and [e.url for e in killed.queue.pop(5)] == ["http://hub.test/extra"]
        # ... and it was killed: no close, no more heartbeats
        site.alive = True
        site.asked.clear()
        second = run_crawl(webserver, tmp_path, "http://hub.test/", settings=settings, crawl="gone")
    finally:
        killed.close()
    assert second.returncode == 0, second.describe()
    # taken back by the look for gone workers (heartbeat stale at 10 s) or by recover_again (11 s)
    assert re.search(r"frontier: 1 unfinished leases of (gone worker\(s\) box:1|a worker gone) taken back",
                     second.stderr), second.describe()
    assert "set aside as down by an earlier run: tried again" in second.stderr, second.describe()
    assert second.items_by_url["http://hub.test/extra"]["status"] == 200
    assert {u: i["status"] for u, i in second.items_by_url.items() if u in dead_urls} == {
        u: 200 for u in dead_urls - stored_first}


def test_a_host_down_before_is_set_aside_again_at_its_first_failure(webserver: WebServer, tmp_path: Path) -> None:
    """A host that stays dead through a long crawl: when its down time is up (1 s here)
    the frontier hands out its URLs again, and its first failure sets it aside again,
    not its fifth: each new try of a dead host costs one download, not
    ``SPITAG_HOST_FAILURES``. No URL of it is lost."""
    site = DeadSite(status=502)
    dead_urls = serve_dead_host_and_hub(webserver, site, 25)
    run = run_crawl(webserver, tmp_path, "http://hub.test/", settings={
        "SPITAG_STRATEGY": "bfs", "SPITAG_SCOPE": "any", "ROBOTSTXT_OBEY": False,
        "DOWNLOAD_DELAY": 0.2, "SPITAG_HOST_DOWN_SECONDS": 1,  # the hub takes ~5 s: several down times
    }, crawl="dead-again")
    assert run.returncode == 0, run.describe()
    assert len([u for u in run.items_by_url if u.startswith("http://hub.test/")]) == 26
    times = int(run.stats.get("spitag/politeness/hosts_down", "0"))
    assert times >= 2, run.describe()  # set aside, tried again after 1 s, set aside again...
    assert run.stats.get("spitag/politeness/hosts_down_again") == str(times - 1), run.describe()
    assert "dead.test, down before, failed again (HTTP 502)" in run.stderr, run.describe()
    # 5 failures the first time, then 1 a try (5 a try before); a little slack for a
    # request that passed the gate as the host was set aside
    assert len(site.asked) <= 5 + 2 * (times - 1), (times, site.asked)
    stored = {u for u in run.items_by_url if u in dead_urls}
    queued = waiting_on_dead_host(tmp_path)
    assert stored | queued == dead_urls and not stored & queued  # each failed, or waiting


def test_refusals_of_downloads_already_out_back_off_once(webserver: WebServer, tmp_path: Path) -> None:
    """Three of the four downloads running at once are refused (429, no ``Retry-After``):
    one overload, so one pause of 1 s, not three that double (1, 2, 4 s). The refused
    pages are asked again after it and stored."""
    site = RefusingSite(20, refuse=2, burst=3, retry_after=None)
    webserver.add_site("busy.test", site)
    run = run_crawl(webserver, tmp_path, "http://busy.test/", settings={
        "SPITAG_STRATEGY": "bfs", "CONCURRENT_REQUESTS_PER_DOMAIN": 4,
    })
    assert run.returncode == 0, run.describe()
    log = [e for e in run.server_log if e.host == "busy.test" and e.path not in ("/", "/robots.txt")]
    refused = [e for e in log if e.status == 429]
    assert len(refused) == 3, refused
    assert run.stats.get("spitag/politeness/back_offs") == "1", run.describe()
    assert run.stats.get("spitag/politeness/retry_after_max_s") == "1.0", run.describe()
    # nothing asked during the pause: what came in after the first refusal was out
    # already (it came in before the crawler could read that refusal), or came a pause later
    first = refused[0].time
    sent_in_pause = [e for e in log if first + 0.5 < e.arrived < first + 0.95]
    assert not sent_in_pause, sent_in_pause
    assert len({e.path for e in log if e.status == 200}) == 20  # every page, the refused ones again
    assert {e.path for e in refused} <= {e.path for e in log if e.status == 200 and e.arrived - first >= 0.95}


def test_refusals_of_requests_sent_after_a_back_off_double_it(webserver: WebServer, tmp_path: Path) -> None:
    """The first request after each pause is refused again (429, no ``Retry-After``),
    three times: pauses of 1, 2 and 4 s. The other requests sent with it, and served,
    were sent before the new back-off ended: they do not start the count over."""
    site = RefusingSite(40, refuse=6, retry_after=None, episodes=3)
    webserver.add_site("busy.test", site)
    run = run_crawl(webserver, tmp_path, "http://busy.test/", settings={
        "SPITAG_STRATEGY": "bfs", "CONCURRENT_REQUESTS_PER_DOMAIN": 4,
    })
    assert run.returncode == 0, run.describe()
    log = [e for e in run.server_log if e.host == "busy.test" and e.path not in ("/", "/robots.txt")]
    refusals = [e.time for e in log if e.status == 429]
    assert len(refusals) == 3, refusals
    assert refusals[1] - refusals[0] >= 0.95 and refusals[2] - refusals[1] >= 1.95, refusals
    assert run.stats.get("spitag/politeness/retry_after_max_s") == "4.0", run.describe()
    assert len({e.path for e in log if e.status == 200}) == 40  # every page


# =========================================================================== real pages

REAL_PAGES = 10  # a fixed sample, plus the first two pages that are not valid UTF-8


def ring_sample(real_pages_dir: Path) -> list:
    def utf8(data: bytes) -> bool:
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            return False
        return True

    sample = real_pages(real_pages_dir, n=REAL_PAGES, seed=0)
    other = [p for p in real_pages(real_pages_dir) if not utf8(p.read())][:2]
    assert len(other) == 2 and not set(other) & set(sample)
    return sample[:5] + other[:1] + sample[5:] + other[1:]


def test_real_pages_ring_profiles_match_profile_html(
    real_pages_dir: Path, webserver: WebServer, tmp_path: Path
) -> None:
    """Twelve saved pages (two whose bytes are not valid UTF-8), each linking to the next (the last to the
    first), under their own hosts: the crawl fetches all of them, and each JSON line's
    semantic counts are those of spitag.extract.profile_html on the bytes served, so the
    crawl hands the extractor the right bytes, URL and encoding."""
    pages = ring_sample(real_pages_dir)
    sites = real_pages_site(pages, ring_links(len(pages)))
    webserver.add_sites(sites)
    run = run_crawl(
        webserver, tmp_path, pages[0].served_url,
        settings={"SPITAG_SCOPE": "any", **REFUSED_HTTPS}, name="ring",
    )
    assert run.returncode == 0, run.describe()
    assert "Spider error processing" not in run.stderr
    with run.connect() as conn:
        table = url_rows(conn)
        pages_by_id = page_rows(conn)
    requested = Counter(requested_urls(run.server_log))
    mismatches = {}
    for page in pages:
        url = normalize_url(page.served_url)
        assert requested[page.served_url] == 1, page.served_url
        assert table[url]["status"] == 200 and table[url]["page_id"] is not None, url
        item = run.items_by_url[url]
        body = sites[page.host].respond(page.path).body
        expected = profile_html(body, url).counts
        stored = pages_by_id[table[url]["page_id"]]
        if item["semantic"] != expected or stored["semantic_total"] != expected["total"]:
            mismatches[url] = {"crawl": item["semantic"], "profile_html": expected}
        assert item["md5"] == hashlib.md5(body).hexdigest(), url
        assert item["title"] == profile_html(body, url).title, url
    assert mismatches == {}
    # The ring is walked in order: page k is k links away from the seed.
    depths = [run.items_by_url[normalize_url(p.served_url)]["depth"] for p in pages]
    assert depths == list(range(len(pages)))


# =========================================================================== bad input

BAD_INPUT = [
    # id, seeds, settings, store, exit code, words the error line must hold
    ("ftp-seed", "ftp://x", {}, None, 2, ["ftp://x"]),
    ("empty-seeds", "", {}, None, 2, ["seeds"]),
    ("missing-seed-file", "{tmp}/no-such-seeds.txt", {}, None, 2, ["{tmp}/no-such-seeds.txt"]),
    ("unknown-scope", "http://bad.test/", {"SPITAG_SCOPE": "galaxy"}, None, 2, ["SPITAG_SCOPE", "galaxy"]),
    ("mysql-store", "http://bad.test/", {}, "mysql://x", 2, ["SPITAG_STORE", "mysql"]),
    ("store-folder-missing", "http://bad.test/", {}, "sqlite:///{tmp}/missing/store.db", 2,
     ["SPITAG_STORE", "{tmp}/missing"]),
]


@pytest.mark.parametrize(
    "seeds, settings, store, code, words", [c[1:] for c in BAD_INPUT], ids=[c[0] for c in BAD_INPUT]
)
def test_bad_input_fails_before_the_crawl(
    webserver: WebServer, tmp_path: Path, seeds: str, settings: dict, store: str | None,
    code: int, words: list[str],
) -> None:
    webserver.add_site("bad.test", DictSite({"/": "<html><body>never asked</body></html>"}))
    crawl_dir = tmp_path / "crawl"
    fill = lambda text: text.replace("{tmp}", str(tmp_path))  # noqa: E731
    store_value = fill(store) if store is not None else tmp_path / "crawl" / "store.db"
    run = run_crawl(webserver, crawl_dir, fill(seeds), store=store_value, settings=settings, name="bad")
    assert run.returncode == code, run.describe()
    errors = run.error_lines()
    assert len(errors) == 1, run.describe()
    for word in words:
        assert fill(word) in errors[0], errors[0]
    assert "Traceback" not in run.stderr
    assert run.server_log == []
    left = sorted(p.name for p in crawl_dir.iterdir() if p.name != "bad.log")
    assert left == [], f"files written by a crawl that never started: {left}"
    assert not (tmp_path / "missing").exists()


# =========================================================================== seeds and limits


def test_seed_file_with_blank_lines_and_comments(webserver: WebServer, tmp_path: Path) -> None:
    webserver.add_site("seeds.test", DictSite({
        "/a.html": "<html><body>a</body></html>",
        "/b.html": "<html><body>b</body></html>",
        "/commented.html": "<html><body>commented out</body></html>",
    }))
    seeds = tmp_path / "seeds.txt"
    seeds.write_text(
        "# SpiTag seeds\n\n   \nhttp://seeds.test/a.html   # the first\n"
        "# http://seeds.test/commented.html\n\nhttp://seeds.test/b.html\n\n",
        encoding="utf-8",
    )
    run = run_crawl(webserver, tmp_path / "crawl", str(seeds))
    assert run.returncode == 0, run.describe()
    assert_clean_log(run)
    wanted = {"http://seeds.test/a.html", "http://seeds.test/b.html"}
    assert sorted(requested_urls(run.server_log)) == sorted(wanted)
    assert {i["url"]: i["depth"] for i in run.items} == dict.fromkeys(wanted, 0)
    with run.connect() as conn:
        assert set(url_rows(conn)) == wanted


def test_closespider_pagecount_stops_early(webserver: WebServer, tmp_path: Path) -> None:
    webserver.add_site("tree.test", tree_site(300))
    run = run_crawl(
        webserver, tmp_path, "http://tree.test/", settings={"CLOSESPIDER_PAGECOUNT": 5}
    )
    assert run.returncode == 0, run.describe()
    assert_clean_log(run)
    assert run.stats.get("finish_reason") == "'closespider_pagecount'"
    fetched = requested_urls(run.server_log)
    assert 5 <= len(fetched) < 100
    with run.connect() as conn:
        table = url_rows(conn)
    assert len(run.items) >= 5
    assert set(table) == {i["url"] for i in run.items} <= set(fetched)


# =========================================================================== settings


def test_store_setting_precedence(webserver: WebServer, tmp_path: Path) -> None:
    """SPITAG_STORE from the environment is used when no -s is given; -s wins over it."""
    webserver.add_site("prefs.test", DictSite({"/": "<html><body>one page</body></html>"}))
    env_store, cli_store, unused_env_store = (tmp_path / n for n in ("env.db", "cli.db", "unused.db"))

    run = run_crawl(
        webserver, tmp_path / "env", "http://prefs.test/", store=None,
        env={"SPITAG_STORE": f"sqlite:///{env_store}"},
    )
    assert run.returncode == 0, run.describe()
    run.store = env_store
    with run.connect() as conn:
        assert list(url_rows(conn)) == ["http://prefs.test/"]

    run = run_crawl(
        webserver, tmp_path / "cli", "http://prefs.test/", store=cli_store,
        env={"SPITAG_STORE": f"sqlite:///{unused_env_store}"},
    )
    assert run.returncode == 0, run.describe()
    with run.connect() as conn:
        assert list(url_rows(conn)) == ["http://prefs.test/"]
    assert not unused_env_store.exists()
