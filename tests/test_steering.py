"""Steering a crawl against real local servers: traps, robots directives, limits, budget."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from collections import Counter
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

from tests.support.crawl import parse_stats
from testbed.sites import tree_paths, tree_site
from testbed.webserver import DictSite, Response, WebServer

REPO = Path(__file__).resolve().parents[1]


def crawl(tmp: Path, server: WebServer, seeds: str, *settings: str, crawl_name: str = "c",
          out: str = "out.jsonl") -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "scrapy", "crawl", "spitag", "-a", f"seeds={seeds}", "-a", f"crawl={crawl_name}",
           "-O", str(tmp / out), "-s", f"SPITAG_STORE=sqlite:///{tmp}/store.db",
           "-s", f"SPITAG_FRONTIER=sqlite:///{tmp}/frontier.db"]
    for setting in settings:
        cmd += ["-s", setting]
    env = {**os.environ, "http_proxy": server.proxy_url, "https_proxy": server.proxy_url}
    env.pop("no_proxy", None)
    run = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    assert "Spider error processing" not in run.stderr and "Traceback" not in run.stderr
    return run


def fetched(server: WebServer, host: str) -> Counter:
    return Counter(e.path for e in server.log if e.host == host and e.path != "/robots.txt")


class Calendar:
    """An infinite calendar: every month links to the next and the previous one."""

    def respond(self, target: str) -> Response:
        q = parse_qs(urlsplit(target).query)
        month = int(q.get("m", ["0"])[0])
        return Response.html(
            f'<html><head><title>Month {month}</title></head><body>'
            f'<a href="/cal?m={month + 1}">next</a> <a href="/cal?m={month - 1}">previous</a></body></html>'
        )


class Sessions:
    """Every link carries a fresh session id, in the query and in the path."""

    def __init__(self) -> None:
        self.n = 0

    def respond(self, target: str) -> Response:
        self.n += 1
        page = urlsplit(target).path.split(";")[0]
        links = "".join(
            f'<a href="/page{i};jsessionid={self.n}x{i}?sessionid={self.n}{i}&amp;PHPSESSID=z{self.n}">p{i}</a>'
            for i in range(3)
        )
        return Response.html(f"<html><body><h1>{page}</h1>{links}</body></html>")


class Growing:
    """A relative link that makes every path longer: /a/ → /a/a/ → /a/a/a/ …"""

    def respond(self, target: str) -> Response:
        return Response.html('<html><body><a href="a/">deeper</a> <a href="b/">other</a></body></html>')


def test_traps_are_bounded_and_a_large_ordinary_site_is_crawled_whole(tmp_path: Path) -> None:
    with WebServer() as server:
        server.add_site("cal.test", Calendar())
        server.add_site("sess.test", Sessions())
        server.add_site("grow.test", Growing())
        server.add_site("big.test", tree_site(5000, fanout=40))
        run = crawl(tmp_path, server, "http://cal.test/cal?m=0,http://sess.test/,http://grow.test/a/,http://big.test/",
                    "SPITAG_STRATEGY=bfs")
        cal, sess, grow, big = (fetched(server, h) for h in ("cal.test", "sess.test", "grow.test", "big.test"))
    assert 20 <= len(cal) <= 70, len(cal)  # ~ the chain limit (30) in each direction
    assert set(sess) == {"/", "/page0", "/page1", "/page2"}  # session ids removed: 4 pages
    assert max(max(Counter(p.strip("/").split("/")).values()) for p in grow) <= 2 and len(grow) <= 16
    assert set(big) == tree_paths(5000)  # every one of 5,000 numbered pages
    stats = run.stderr
    assert "'spitag/filtered/trap_chain'" in stats and "'spitag/filtered/trap_repeat'" in stats


def _alike_site(pages: int, links: int, seed: int = 7) -> tuple[DictSite, dict[str, int]]:
    """A site whose pages all score alike, each linking ``links`` random others of it
    (many paths to every page, most of them long); and the shortest depth of every
    path reachable from /."""
    import random

    rng = random.Random(seed)
    site = DictSite()
    out = {i: rng.sample(range(1, pages), links) for i in range(pages)}
    for i, targets in out.items():
        body = "".join(f'<a href="/a/{t}.html">a {t}</a> ' for t in targets)
        response = Response.html(
            f'<html><head><title>A {i}</title><meta property="og:title" content="A"></head>'
            f"<body>{body}</body></html>"
        )
        site.add("/" if i == 0 else f"/a/{i}.html", response)
    depth, todo = {0: 0}, [0]
    for i in todo:  # breadth-first: todo grows as it is read
        for t in out[i]:
            if t not in depth:
                depth[t] = depth[i] + 1
                todo.append(t)
    return site, {("/" if i == 0 else f"/a/{i}.html"): d for i, d in depth.items()}


@pytest.mark.parametrize("strategy", ["spitag", "importance"])
def test_a_site_of_alike_pages_is_crawled_shallowest_first_and_whole(tmp_path: Path, strategy: str) -> None:
    """A best-first strategy on pages whose links all get one priority: ties go to the
    shallowest link (``Strategy.ties_shallowest``, spitag.scoring.depth_discount), so
    paths stay short and a tight trap guard (a shape may go 5 layers below its first
    depth; the deepest page is 4 below) drops none of the pages, only some of the longer
    paths to them. With DEPTH_TIE = 0 the ties go depth-first: ``spitag`` fetched pages
    10–11 layers deep (the shortest paths are 5 at most) and lost pages to
    ``trap_chain`` in some runs; ``importance`` (all links /a/N.html, one slash count)
    lost a page in 3 runs of 4."""
    site, shortest = _alike_site(300, 6)
    with WebServer() as server:
        server.add_site("alike.test", site)
        crawl(tmp_path, server, "http://alike.test/", "SPITAG_TRAP_MAX_CHAIN=5",
              "CONCURRENT_REQUESTS_PER_DOMAIN=8", f"SPITAG_STRATEGY={strategy}")
        got = fetched(server, "alike.test")
    assert set(got) == set(shortest) and len(shortest) > 250
    items = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert max(item["depth"] for item in items) <= max(shortest.values()) + 1


def test_robots_directives_and_nofollow_links(tmp_path: Path) -> None:
    site = DictSite()
    site.add("/", Response.html(
        '<html><body><a href="/meta">m</a> <a href="/header">h</a> <a href="/noidx">n</a>'
        ' <a rel="nofollow" href="/sponsored">s</a> <a href="/ok">ok</a></body></html>'))
    site.add("/meta", Response.html(
        '<html><head><meta name="robots" content="NOFOLLOW"></head><body><a href="/from-meta">x</a></body></html>'))
    site.add("/header", Response.html('<html><body><a href="/from-header">x</a></body></html>',
                                      headers={"X-Robots-Tag": "googlebot: none"}))
    site.add("/noidx", Response.html(
        '<html><head><meta name="robots" content="noindex"><script type="application/ld+json">'
        '{"@type": "Thing"}</script></head><body><a href="/from-noindex">x</a></body></html>'))
    for path in ("/ok", "/from-meta", "/from-header", "/from-noindex", "/sponsored"):
        site.add(path, Response.html(f"<html><body>{path}</body></html>"))
    with WebServer() as server:
        server.add_site("robots.test", site)
        crawl(tmp_path, server, "http://robots.test/")
        got = set(fetched(server, "robots.test"))
    assert got == {"/", "/meta", "/header", "/noidx", "/ok", "/from-noindex"}
    items = {json.loads(line)["url"]: json.loads(line) for line in (tmp_path / "out.jsonl").open()}
    assert items["http://robots.test/meta"]["robots"] == ["nofollow"]
    assert items["http://robots.test/header"]["robots"] == ["nofollow", "noindex"]
    noindex = items["http://robots.test/noidx"]
    assert noindex["robots"] == ["noindex"] and noindex["data"] == {}
    with sqlite3.connect(tmp_path / "store.db") as conn:
        data, structured = conn.execute(
            "SELECT p.data, p.structured FROM url u JOIN page p ON p.id = u.page_id WHERE u.url = ?",
            ("http://robots.test/noidx",)).fetchone()
    assert data is None and structured is None


def test_depth_and_host_limits(tmp_path: Path) -> None:
    with WebServer() as server:
        server.add_site("deep.test", tree_site(200, fanout=4))
        server.add_site("wide.test", tree_site(200, fanout=50))
        run = crawl(tmp_path, server, "http://deep.test/", "SPITAG_MAX_DEPTH=2", crawl_name="d")
        crawl(tmp_path, server, "http://wide.test/", "SPITAG_MAX_PAGES_PER_HOST=10", crawl_name="w")
        deep, wide = fetched(server, "deep.test"), fetched(server, "wide.test")
    # every link of layer 2 is one too deep: 16 pages × (4 children + the home link)
    assert int(parse_stats(run.stderr)["spitag/filtered/depth"]) == 16 * 5
    assert set(deep) == {"/"} | {f"/p/{i}.html" for i in range(1, 21)}  # layers 0, 1, 2
    assert len(wide) == 10  # the seed and 9 more: 10 URLs of the host in the frontier


def test_page_budget_survives_resumes(tmp_path: Path) -> None:
    with WebServer() as server:
        server.add_site("budget.test", tree_site(300))
        crawl(tmp_path, server, "http://budget.test/", "SPITAG_PAGE_BUDGET=40", out="run1.jsonl")
        first = sum(fetched(server, "budget.test").values())
        crawl(tmp_path, server, "http://budget.test/", "SPITAG_PAGE_BUDGET=40", out="run2.jsonl")
        second = sum(fetched(server, "budget.test").values())
        crawl(tmp_path, server, "http://budget.test/", "SPITAG_PAGE_BUDGET=60", out="run3.jsonl")
        third = fetched(server, "budget.test")
    assert first == 40 and second == 40  # the rerun finds the budget spent
    assert sum(third.values()) == 60 and max(third.values()) == 1


def test_sitemaps_from_robots_seed_the_crawl(tmp_path: Path) -> None:
    import gzip

    site = DictSite()
    site.add("/", Response.html("<html><body>no links at all</body></html>"))
    site.add("/robots.txt", Response.text("User-agent: *\nAllow: /\nSitemap: http://map.test/sitemap-index.xml\n"))
    site.add("/sitemap-index.xml", Response(
        body=b'<?xml version="1.0"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
             b"<sitemap><loc>http://map.test/a.xml.gz</loc></sitemap></sitemapindex>",
        content_type="application/xml"))
    urlset = ('<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
              + "".join(f"<url><loc>http://map.test/page{i}</loc></url>" for i in range(5))
              + "<url><loc>http://elsewhere.test/out</loc></url></urlset>")
    site.add("/a.xml.gz", Response(body=gzip.compress(urlset.encode()), content_type="application/x-gzip"))
    for i in range(5):
        site.add(f"/page{i}", Response.html(f"<html><body>page {i}</body></html>"))
    with WebServer() as server:
        server.add_site("map.test", site)
        crawl(tmp_path, server, "http://map.test/", crawl_name="off", out="off.jsonl")
        without = set(fetched(server, "map.test"))
        server.clear_log()
        crawl(tmp_path, server, "http://map.test/", "SPITAG_SITEMAPS=True", crawl_name="on")
        got = set(fetched(server, "map.test"))
        assert "/out" not in {e.path for e in server.log if e.host == "elsewhere.test"}  # scope holds
    assert without == {"/"}
    assert got == {"/", "/sitemap-index.xml", "/a.xml.gz"} | {f"/page{i}" for i in range(5)}


def test_canonical_url_is_recorded_and_not_fetched_again(tmp_path: Path) -> None:
    site = DictSite()
    site.add("/", Response.html('<html><body><a href="/item?ref=home">item</a></body></html>'))
    site.add("/item?ref=home", Response.html(
        '<html><head><link rel="canonical" href="http://canon.test/item"></head>'
        '<body><a href="/other">other</a></body></html>'))
    site.add("/other", Response.html('<html><body><a href="/item">the item again</a></body></html>'))
    site.add("/item", Response.html("<html><body>the item</body></html>"))
    with WebServer() as server:
        server.add_site("canon.test", site)
        crawl(tmp_path, server, "http://canon.test/", "SPITAG_STRATEGY=bfs")
        got = set(fetched(server, "canon.test"))
    assert got == {"/", "/item?ref=home", "/other"}
    items = {json.loads(line)["url"]: json.loads(line) for line in (tmp_path / "out.jsonl").open()}
    assert items["http://canon.test/item?ref=home"]["canonical"] == "http://canon.test/item"


def test_a_download_that_is_not_html_is_stopped_at_its_headers(tmp_path: Path) -> None:
    """An archive (8 MB) and a signature linked from a page are not downloaded whole:
    their headers are enough for their URL rows (status, type, length), and no page row
    is made of them. A page without a type, or served as text/plain, may be HTML: its
    body is read (and sniffed, as Scrapy does)."""
    archive = b"\x1f\x8b" + bytes(8 * 2**20)
    site = DictSite({
        "/": '<html><body><a href="/release-1.0.tgz.part">a</a> <a href="/release.asc">s</a>'
             ' <a href="/plain">p</a></body></html>',
        "/release-1.0.tgz.part": Response(200, archive, content_type="application/x-tar"),
        "/release.asc": Response(200, b"-----BEGIN PGP SIGNATURE-----", content_type="application/pgp-signature"),
        "/plain": Response(200, b"<html><head><title>plain</title></head><body>hi</body></html>",
                           content_type="text/plain"),
    })
    with WebServer() as server:
        server.add_site("files.test", site)
        run = crawl(tmp_path, server, "http://files.test/")
    items = {i["url"]: i for i in map(json.loads, (tmp_path / "out.jsonl").open())}
    tar = items["http://files.test/release-1.0.tgz.part"]
    assert (tar["status"], tar["content_type"], tar["size"], tar["md5"]) == (200, "application/x-tar", len(archive), None)
    assert items["http://files.test/release.asc"]["md5"] is None
    assert items["http://files.test/plain"]["md5"] is not None  # read: it may be HTML
    stats = parse_stats(run.stderr)
    assert stats["spitag/pages/headers_only"] == "2"
    assert int(stats["downloader/response_bytes"]) < 2**20  # not the archive's 8 MB
    with sqlite3.connect(tmp_path / "store.db") as conn:
        paged = {u for (u,) in conn.execute("SELECT url FROM url WHERE page_id IS NOT NULL")}
    assert paged == {"http://files.test/", "http://files.test/plain"}


def test_polite_defaults_for_the_real_web(tmp_path: Path) -> None:
    """Out of the box (the project's own settings, not the tests' local speed): one
    request at a time to a site, a second apart."""
    from testbed.sites import CountingSite

    site = CountingSite(pages=4)
    with WebServer() as server:
        server.add_site("polite.test", site)
        env = {**os.environ, "http_proxy": server.proxy_url, "https_proxy": server.proxy_url,
               "SCRAPY_SETTINGS_MODULE": "settings"}
        env.pop("no_proxy", None)
        run = subprocess.run(
            [sys.executable, "-m", "scrapy", "crawl", "spitag", "-a", "seeds=http://polite.test/", "-a", "crawl=p",
             "-O", str(tmp_path / "out.jsonl"), "-s", f"SPITAG_STORE=sqlite:///{tmp_path}/store.db",
             "-s", f"SPITAG_FRONTIER=sqlite:///{tmp_path}/frontier.db"],
            cwd=REPO, env=env, capture_output=True, text=True, timeout=300,
        )
        arrivals = sorted(e.arrived for e in server.log if e.host == "polite.test" and e.path != "/robots.txt")
    assert run.returncode == 0, run.stderr[-3000:]
    assert len(arrivals) == 5 and site.most == 1  # the home and its 4 pages, one at a time
    gaps = [b - a for a, b in zip(arrivals, arrivals[1:])]
    assert min(gaps) >= 0.9, gaps  # DOWNLOAD_DELAY 1 s (the gate's clock and the server's differ a little)


def test_the_contact_goes_into_spitags_user_agent() -> None:
    from scrapy.utils.test import get_crawler

    from spitag import __version__
    from spitag.spider import SpitagSpider

    crawler = get_crawler(SpitagSpider, {"SPITAG_CONTACT": "https://example.org/our-crawler",
                                         "SPITAG_EXTRACT_PROCESSES": 0})
    spider = SpitagSpider.from_crawler(crawler, seeds="http://a.test/")
    assert spider.user_agent == f"SpiTag/{__version__} (+https://example.org/our-crawler; semantic focused crawler)"
    own = get_crawler(SpitagSpider, {"SPITAG_CONTACT": "https://example.org/", "USER_AGENT": "mine/1",
                                     "SPITAG_EXTRACT_PROCESSES": 0})
    assert not hasattr(SpitagSpider.from_crawler(own, seeds="http://a.test/"), "user_agent")  # the user's wins
