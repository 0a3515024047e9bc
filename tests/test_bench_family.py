"""The focus family's web of real websites (bench/realweb.py) and one tiny run of
bench/family.py through the whole chain, on an archive of four small sites made here."""

from __future__ import annotations

import json
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from bench.realweb import LinkModel, RealWeb, manifest, split_sites, unpack, with_links
from testbed.webserver import DictSite, WebServer

REPO = Path(__file__).resolve().parents[1]

POST = """<html><head><title>{title}</title>
<meta property="og:title" content="{title}"><meta name="description" content="d">
<script type="application/ld+json">{{"@context": "https://schema.org", "@type": "BlogPosting", "headline": "{title}"}}</script>
</head><body><h1>{title}</h1><a href="/tags/food/">food</a> <a href="/">home</a></body></html>"""
LIST = """<html><head><title>{title}</title></head><body><h1>{title}</h1>
<a href="/posts/one/">one</a> <a href="/posts/two/">two</a> <a href="/tags/food/">food</a>
<a href="/posts">all</a></body></html>"""


def make_site(top: Path, host: str, rich: bool) -> dict:
    root = top / host
    pages = {"index.html": LIST.format(title=f"{host} home"), "tags/food/index.html": LIST.format(title="tag food"),
             "posts/index.html": LIST.format(title="all posts")}
    for slug in ("one", "two"):
        pages[f"posts/{slug}/index.html"] = (POST if rich else LIST).format(title=f"post {slug} of {host}")
    for rel, html in pages.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(html)
    return {"host": host, "base_path": "/", "site_dir": host, "pages": len(pages),
            "jsonld_pages": 2 if rich else 0, "microdata_pages": 0}


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    build = tmp_path_factory.mktemp("sites")
    top = build / "sites-train"
    entries = [make_site(top, h, rich) for h, rich in
               [("rich-a.test", True), ("rich-b.test", True), ("poor-a.test", False), ("poor-b.test", False)]]
    (top / "manifest.jsonl").write_text("".join(json.dumps(e) + "\n" for e in entries))
    folder = tmp_path_factory.mktemp("corpus")
    with tarfile.open(folder / "real-sites.tar.xz", "w:xz") as tar:
        tar.add(top, arcname="sites-train")
    return folder


def test_split_is_fixed_and_keeps_rich_and_poor_sites_in_both_parts(corpus: Path, tmp_path: Path) -> None:
    top = unpack(corpus, tmp_path)
    parts = split_sites(manifest(top))
    assert parts == split_sites(list(reversed(manifest(top))))  # order of the manifest does not matter
    assert sorted(parts["tune"] + parts["eval"]) == sorted(e["host"] for e in manifest(top))
    for part in parts.values():
        assert sum(h.startswith("rich") for h in part) == 1 and sum(h.startswith("poor") for h in part) == 1


def test_web_links_sites_and_counts_their_pages(corpus: Path, tmp_path: Path) -> None:
    top = unpack(corpus, tmp_path)
    hosts = ["rich-a.test", "poor-a.test"]
    web = RealWeb(top, hosts, LinkModel(seed=3, roll=1, inline=0.0, locality=0.0), tmp_path / "counts.json",
                  workers=1)
    # the blogroll: every page of a site links to the other site's home
    body = web.sites["rich-a.test"].respond("/posts/one/").body
    assert b'<a href="http://poor-a.test/">' in body and body.rstrip().endswith(b"</html>")
    # the added links are no items: a post counts its JSON-LD, OpenGraph and meta tags
    post = web.detail["rich-a.test", "/posts/one/index.html"]
    assert post["json-ld"] == 1 and post["opengraph"] == 1
    assert web.count_of("rich-a.test", "/posts/one/") == web.count_of("rich-a.test", "/posts/one/index.html") > 0
    assert web.count_of("rich-a.test", "/posts/one/", {"json-ld": 1.0, "opengraph": 0.0, "meta": 0.0,
                                                        "twitter": 0.0}) == 1.0
    assert web.count_of("rich-a.test", "/posts") is None  # a redirect (to /posts/), not a page
    assert web.count_of("rich-a.test", "/nothing/") is None
    # the oracle's graph follows the redirect and both sites are reached from either seed
    graph = web.graph()
    assert "http://rich-a.test/posts/" in graph["http://rich-a.test/"]
    assert {u.split("/")[2] for u in graph} == set(hosts)
    # locality 1: links drawn within the linking site's class only
    near = RealWeb(top, ["rich-a.test", "rich-b.test", "poor-a.test", "poor-b.test"],
                   LinkModel(seed=1, roll=1, inline=2.0, locality=1.0), tmp_path / "counts.json", workers=1)
    rich = {"rich-a.test", "rich-b.test"}
    for host in near.hosts:
        targets = {u.split("/")[2] for links in near.outlinks[host].values() for u, _ in links}
        assert targets and targets <= (rich if host in rich else set(near.hosts) - rich) - {host}


def test_opaque_web_serves_every_page_at_a_path_that_says_nothing(corpus: Path, tmp_path: Path) -> None:
    top = unpack(corpus, tmp_path)
    hosts = ["rich-a.test", "poor-a.test"]
    model = LinkModel(seed=3, roll=1, inline=1.0)
    plain = RealWeb(top, hosts, model, tmp_path / "counts.json", workers=1)
    web = RealWeb(top, hosts, model, tmp_path / "counts.json", workers=1, opaque=True)
    graph = web.graph()
    # the same pages, reached from the same seeds (homes keep their paths)
    assert web.seeds == plain.seeds and len(graph) == len(plain.graph())
    post = web.opaque["rich-a.test", "/posts/one/index.html"]
    assert post in graph and "posts" not in post and post.endswith(".html")
    assert web.count_of("rich-a.test", post[len("http://rich-a.test"):]) == plain.count_of("rich-a.test", "/posts/one/")
    # no page is served at its original path, and no page links to one
    assert web.count_of("rich-a.test", "/posts/one/") is None
    assert web.sites["rich-a.test"].respond("/posts/one/").status == 404
    for url in graph:
        body = web.sites[url.split("/")[2]].respond("/" + url.split("/", 3)[3]).body
        assert b"/posts/" not in body and b"/tags/" not in body, url
    # the blend of values is unchanged: same values in the same multiset
    assert sorted(web.values(list(graph), None).values()) == sorted(plain.values(list(plain.graph()), None).values())


def test_with_links_goes_before_the_last_body_end() -> None:
    assert with_links(b"<body>x</body></html>", [("http://b.test/", "B & co")]) == (
        b'<body>x<div><a href="http://b.test/">B &amp; co</a> </div></body></html>')
    assert with_links(b"no body", [("http://b.test/", "b")]).startswith(b"no body<div>")
    assert with_links(b"<body></body>", []) == b"<body></body>"


def test_family_run_end_to_end(corpus: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    cmd = [sys.executable, "bench/family.py", "--corpus", str(corpus), "--work", str(tmp_path / "work"),
           "--out", str(out), "--part", "eval", "--webs", "eval-l6", "--runs", "1", "--strategies", "bfs,parent",
           "--budget", "30", "--k", "2,4"]
    done = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "eval part, total" in done.stdout and "eval part, structured" in done.stdout
    record = json.loads((out / "family-eval.json").read_text())
    web = record["webs"]["eval-l6"]
    assert set(web["summary"]["site_means"]) == set(record["split"]["eval"])
    crawls = web["crawls"]
    assert {(c["strategy"], c["objective"]) for c in crawls} == {
        (s, o) for s in ("bfs", "parent") for o in ("total", "structured")}
    for c in crawls:
        assert c["returncode"] == 0 and c["pages_200"] >= 4 and c["unknown_200"] == 0
    # the structured objective leaves out meta tags: no page is worth more than in total
    assert max(web["oracle"]["structured"]) < max(web["oracle"]["total"])
    for objective in ("total", "structured"):
        rows = record["results"][objective]["eval-l6"]
        for s in ("bfs", "parent"):  # a strategy against itself: 1, or none when it harvested nothing yet
            assert rows[s]["4"][f"x{s}"] == (1.0 if rows[s]["4"]["harvest"] else None)
        assert rows["oracle"]["4"]["harvest"] >= max(rows[s]["4"]["harvest"] for s in ("bfs", "parent"))


def test_web_server_serves_the_web(corpus: Path, tmp_path: Path) -> None:
    top = unpack(corpus, tmp_path)
    web = RealWeb(top, ["rich-b.test", "poor-b.test"], LinkModel(seed=2), tmp_path / "counts.json", workers=1)
    import urllib.request

    with WebServer(default_site=DictSite()) as server:
        server.add_sites(web.sites)
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({"http": server.proxy_url}))
        with opener.open("http://rich-b.test/posts/two/", timeout=10) as answer:
            assert b"BlogPosting" in answer.read()
