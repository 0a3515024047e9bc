"""The focus benchmark's parts: the web generator's invariants, the true counts, the
oracle's order, the arrival-order metric, and one tiny crawl through the whole chain."""

from __future__ import annotations

import dataclasses
import json
import random
import re
import sqlite3
import subprocess
import sys
import tarfile
from pathlib import Path
from urllib.parse import urlsplit

import lxml.html
import pytest

from bench.focus import (
    agreement,
    arrival_pages,
    choice_lag,
    crawl_command,
    cumulative,
    harvest,
    oracle_order,
    run_crawl,
)
from bench.webgen import (
    REPO_ROOT,
    LinkTargets,
    WebParams,
    build_counted_web,
    build_web,
    compute_counts,
    corpus_hosts,
    hold_halves,
    load_web,
    neutralize,
    page_links,
    semantic_counts,
    served_hosts,
    site_values,
    split_hosts,
    verify_sample,
)
from testbed.corpus import FLINK_HOST, PAGES_ARCHIVE, RealPage, real_pages
from testbed.webserver import DictSite, LogEntry, WebServer

TINY = WebParams(seed=7, sites=8, size_median=4, size_sigma=0.6, size_min=3, size_max=8, seeds=2, flink=False)


@pytest.fixture(scope="module")
def handful(real_pages_dir: Path) -> list[RealPage]:
    """A dozen real pages (a dozen hosts), the same on every run."""
    return real_pages(real_pages_dir, n=12, seed=3)


@pytest.fixture(scope="module")
def tiny(handful: list[RealPage]):
    web = build_web(handful, None, TINY)
    compute_counts(web)
    return web


def graph(web) -> dict[str, tuple[str | None, tuple[str, ...]]]:
    return {u: (n.template, tuple(n.links)) for u, n in web.nodes.items()}


# ---------------------------------------------------------------------------- generator


def test_generator_is_seeded(handful: list[RealPage]) -> None:
    a, b = build_web(handful, None, TINY), build_web(handful, None, TINY)
    assert graph(a) == graph(b) and a.seeds == b.seeds
    c = build_web(handful, None, dataclasses.replace(TINY, seed=8))
    assert graph(c) != graph(a)


def test_site_shape(tiny) -> None:
    assert len(tiny.site_templates) == 8
    for host, urls in tiny.site_pages.items():
        assert TINY.size_min <= len(urls) <= TINY.size_max
        assert urls[0] == f"http://{host}/"
        assert urls[1:] == [f"http://{host}/p/{i}.html" for i in range(1, len(urls))]
        home = urls[0]
        for i, url in enumerate(urls):
            links = tiny.nodes[url].links
            assert url not in links
            if i:
                assert home in links  # every page links home
                assert urls[(i - 1) // TINY.fanout] in links  # and its tree parent
            for child in range(TINY.fanout * i + 1, min(TINY.fanout * i + TINY.fanout, len(urls) - 1) + 1):
                assert urls[child] in links
    assert len(tiny.seeds) == TINY.seeds
    assert all(s == tiny.site_pages[s.split("/")[2]][0] for s in tiny.seeds)


def test_every_page_is_reachable_from_the_seeds(tiny) -> None:
    assert tiny.reachable() == set(tiny.nodes)


def test_sites_with_several_real_pages_cycle_through_them(real_pages_dir: Path) -> None:
    pages = [p for p in real_pages(real_pages_dir) if p.host in ("web.archive.org", "www.chip.de")]
    web = build_web(pages, None, dataclasses.replace(TINY, sites=None, size_min=12, size_max=12, seeds=1))
    for host, keys in web.site_templates.items():
        assert len(keys) > 1
        assert [web.nodes[u].template for u in web.site_pages[host]] == [keys[i % len(keys)] for i in range(12)]
    assert web.reachable() == set(web.nodes)


def test_link_targets_follow_popularity_and_homophily() -> None:
    rng = random.Random(0)
    poor_and_rich = {**{f"p{i}.test": 0.0 for i in range(9)}, "rich.test": 99.0}
    popular = LinkTargets(sorted(poor_and_rich), poor_and_rich, WebParams(popularity=1.0))
    picks = [popular.pick(rng, "p0.test") for _ in range(4000)]
    assert "p0.test" not in picks
    assert 0.90 < picks.count("rich.test") / len(picks) < 0.95  # weight 100 against 8 × 1
    from_rich = [popular.pick(rng, "rich.test") for _ in range(900)]  # the others, alike
    assert "rich.test" not in from_rich and min(from_rich.count(f"p{i}.test") for i in range(9)) > 60
    ladder = {f"s{i:02}.test": float(i) for i in range(40)}  # window: one site on each side
    alike = LinkTargets(sorted(ladder), ladder, WebParams(homophily=1.0))
    assert {alike.pick(rng, "s10.test") for _ in range(200)} == {"s09.test", "s11.test"}
    assert {alike.pick(rng, "s00.test") for _ in range(50)} == {"s01.test"}
    with pytest.raises(ValueError, match="no value"):
        LinkTargets(["a.test", "b.test"], {"a.test": 1.0}, WebParams(homophily=0.5))


def test_a_web_linked_by_value(handful: list[RealPage], tiny) -> None:
    linked = dataclasses.replace(TINY, popularity=1.0, homophily=0.5)
    with pytest.raises(ValueError, match="build_counted_web"):
        build_web(handful, None, linked)
    values = site_values(tiny)
    assert set(values) == set(tiny.site_templates)
    # the uniform web's draws do not depend on values being at hand
    assert graph(build_web(handful, None, TINY, values)) == graph(tiny)
    web, _ = build_counted_web(handful, None, linked)
    assert web.counts == tiny.counts
    assert {u: n.template for u, n in web.nodes.items()} == {u: n.template for u, n in tiny.nodes.items()}
    assert graph(web) != graph(tiny)
    assert web.reachable() == set(web.nodes)
    hosts = served_hosts(web)
    assert all(v.split("/")[2] in hosts for n in web.nodes.values() for v in n.links)


def test_served_pages_link_only_where_the_graph_says(tiny) -> None:
    """No original href survives: the a/area hrefs of every served page are exactly
    its generated links, all to served hosts, each answered 200."""
    sites = tiny.sites()
    hosts = served_hosts(tiny)
    for url, node in tiny.nodes.items():
        response = sites[node.host].respond(node.path)
        assert response.status == 200
        root = lxml.html.document_fromstring(response.body)
        hrefs = [el.get("href") for el in root.iter("a", "area") if el.get("href") is not None]
        assert hrefs == node.links
        assert page_links(response.body, url, response.content_type) == node.links
        for link in node.links:
            host = link.split("/")[2]
            assert host in hosts
            assert sites[host].respond(link.split(host, 1)[1]).status == 200
    assert sites[next(iter(hosts))].respond("/robots.txt").status == 404


def test_neutralize_renames_every_way_out() -> None:
    html = (
        b'<html><head><meta name="robots" content="noindex, nofollow">'
        b'<meta http-equiv="refresh" content="0; url=http://away.example/">'
        b'<link rel="canonical" href="http://keep.example/"></head><body>'
        b'<a title="a > b" href="http://a.example/">1</a>'
        b"<A\nHREF='http://b.example/'>2</A>"
        b'<a rel="noopener  class="x" href="http://c.example/">3</a>'
        b'<a href="http://d.example/"" target="">4</a>'
        b"<map><area shape=rect href=http://e.example/></map>"
        b'<a data-href="kept" title="href=here">5</a></body></html>'
    )
    out = neutralize(html)
    root = lxml.html.document_fromstring(out)
    assert [el.get("href") for el in root.iter("a", "area") if el.get("href") is not None] == []
    assert page_links(out, "http://x.example/", "text/html; charset=utf-8") == []
    assert b'href="http://keep.example/"' in out  # <link> is not a link a crawler follows
    assert b'data-href="kept"' in out  # (the quote-naive pass may rename "href=" in values too)
    # renamed metas still count as plain meta tags
    assert semantic_counts(out, "http://x.example/", None)[0]["meta"] == 2


# ---------------------------------------------------------------------------- true counts


def test_semantic_counts_of_a_hand_made_page() -> None:
    page = b"""<html><head>
    <title>t</title>
    <meta name="description" content="d"><meta name="empty" content=" ">
    <meta property="og:title" content="T"><meta property="og:type" content="article">
    <meta name="twitter:card" content="summary">
    <link rel="schema.DC" href="http://purl.org/dc/elements/1.1/"><meta name="DC.title" content="T">
    <script type="Application/LD+JSON; charset=utf-8">
      {"@context": "https://schema.org", "@type": "WebSite",
       "@graph": [{"@type": "Person", "name": "a"}, {"@type": "Place", "name": "b"}]}
    </script>
    <script type="application/ld+json"><!-- {"@type": "Thing", "name": "c"} --></script>
    </head><body>
    <div itemscope itemtype="https://schema.org/Book"><span itemprop="name">B</span>
      <div itemprop="author" itemscope itemtype="https://schema.org/Person"><span itemprop="name">A</span></div></div>
    <div vocab="https://schema.org/" typeof="Event"><span property="name">E</span></div>
    <div class="h-card"><span class="p-name">C</span></div>
    </body></html>"""
    counts, errors = semantic_counts(page, "http://x.example/", "text/html; charset=utf-8")
    assert errors == []
    assert counts == {
        "json-ld": 4,  # graph members 2 + the graph's own @type 1 + the commented one 1
        "microdata": 1,  # the nested Person is not top-level
        "rdfa": 1,
        "opengraph": 2,
        "twitter": 1,
        "meta": 1,
        "microformat": 1,
        "dublincore": 1,
        "total": 12,
    }


def test_generated_pages_count_as_their_template(tiny) -> None:
    checked = verify_sample(tiny, 4, seed=1)
    assert len(checked) == 4 and all(c["equal"] for c in checked), checked
    assert all(tiny.count_of(n.host, n.path) is not None for n in tiny.nodes.values())
    assert tiny.count_of(next(iter(tiny.site_templates)), "/p/999.html") is None


# ---------------------------------------------------------------------------- metrics


def test_oracle_fetches_the_richest_discovered_page_first() -> None:
    links = {"A": ["B", "C", "X"], "B": ["E"], "C": ["D", "F"], "D": [], "E": [], "F": []}
    counts = {"A": 0, "B": 1, "C": 5, "D": 10, "E": 100, "F": 5}  # X: not a page (404)
    assert oracle_order(links, counts, ["A"], 10) == ["A", "C", "D", "F", "B", "E"]
    assert oracle_order(links, counts, ["A"], 3) == ["A", "C", "D"]
    # ties: the first discovered first; several seeds
    assert oracle_order({"S": [], "T": []}, {"S": 1, "T": 1}, ["T", "S"], 5) == ["T", "S"]


def test_oracle_on_the_tiny_web_is_best_first(tiny) -> None:
    counts = {u: tiny.node_count(u) for u in tiny.nodes}
    order = oracle_order({u: n.links for u, n in tiny.nodes.items()}, counts, tiny.seeds, 10_000)
    assert sorted(order) == sorted(tiny.nodes)  # everything reachable gets fetched
    assert set(order[: len(tiny.seeds)]) <= set(tiny.seeds) | set(order)
    # every fetch was the best page available at that moment
    discovered, fetched = set(tiny.seeds), set()
    for url in order:
        assert counts[url] == max(counts[u] for u in discovered - fetched)
        fetched.add(url)
        discovered.update(tiny.nodes[url].links)


def test_arrival_order_metric_on_a_hand_made_log() -> None:
    log = [
        LogEntry(1.0, "a.test", "/", 200, 10),
        LogEntry(1.1, "a.test", "/missing", 404, 5),
        LogEntry(1.2, "secure.test", "secure.test:443", 405, 3),
        LogEntry(1.3, "a.test", "/", 200, 10),  # the same URL again: counted once
        LogEntry(1.4, "b.test", "/p/1.html", 200, 10),
        LogEntry(1.5, "a.test", "/redirect", 301, 0),
        LogEntry(1.6, "c.test", "/odd", 200, 10),  # not in the web: 0, flagged
        LogEntry(1.7, "b.test", "/", 200, 10),
    ]
    truth = {("a.test", "/"): 10, ("b.test", "/p/1.html"): 20, ("b.test", "/"): 30}
    pages = arrival_pages(log, lambda host, path: truth.get((host, path)))
    assert [(p["host"], p["path"], p["count"], p["known"]) for p in pages] == [
        ("a.test", "/", 10, True),
        ("b.test", "/p/1.html", 20, True),
        ("c.test", "/odd", 0, False),
        ("b.test", "/", 30, True),
    ]
    counts = [p["count"] for p in pages]
    assert harvest(counts, 2) == 15.0
    assert harvest(counts, 4) == 15.0
    assert harvest(counts, 5) is None
    assert cumulative(counts) == [10, 30, 30, 60]


def test_choice_lag_on_a_hand_made_order() -> None:
    """Pages between a parent's arrival and its first child's, over the first k."""
    order = ["/", "/a", "/b", "/c", "/d", "/e", "/f", "/g"]
    pages = [{"host": "x.test", "path": path} for path in order]
    key = lambda path: ("x.test", path)  # noqa: E731
    parents = {
        key("/a"): key("/"), key("/c"): key("/"),  # / at 0: first child at 1 → 1
        key("/e"): key("/a"), key("/g"): key("/a"),  # /a at 1: first child at 5 → 4
        key("/d"): key("/b"),  # /b at 2: first child at 4 → 2
        key("/f"): key("/e"),  # /e at 5: beyond k = 5, not counted
        key("/b"): key("/elsewhere"),  # a parent never answered 200: not counted
    }
    assert choice_lag(pages, parents, 5) == {"parents": 3, "p10": 1, "median": 2}  # 1, 2, 4
    assert choice_lag(pages, parents, 8) == {"parents": 4, "p10": 1, "median": 1}  # 1, 1, 2, 4
    assert choice_lag(pages, {key("/a"): key("/"), key("/g"): key("/b")}, 8) == {"parents": 2, "p10": 1, "median": 1}
    assert choice_lag(pages, {key("/g"): key("/b"), key("/f"): key("/")}, 8) == {"parents": 2, "p10": 5, "median": 5}
    assert choice_lag(pages, {}, 8) == {"parents": 0, "p10": None, "median": None}


# ---------------------------------------------------------------------------- one tiny crawl


def test_tiny_crawl_through_the_proxy(tiny, tmp_path: Path) -> None:
    """The whole chain on ≤ 40 pages: serve, crawl (bfs), read the log, score it."""
    budget = 20
    with WebServer(default_site=DictSite()) as server:
        server.add_sites(tiny.sites())
        cmd = crawl_command(tiny.seeds, "tiny", "bfs", budget, tmp_path)
        got = run_crawl(server, cmd, tmp_path, timeout=120)
    assert got["returncode"] == 0 and not got["timed_out"], (tmp_path / "crawl.log").read_text()[-3000:]
    pages = arrival_pages(got["log"], tiny.count_of)
    assert budget <= len(pages) <= len(tiny.nodes)
    assert all(p["known"] for p in pages)
    assert {e.host for e in got["log"]} <= served_hosts(tiny)
    assert {f"http://{p['host']}{p['path']}" for p in pages[: len(tiny.seeds)]} == set(tiny.seeds)
    check = agreement(tmp_path / "store.db", "tiny", tiny)
    assert check["differ"] == 0 and check["unknown"] == 0 and check["same"] >= budget, check


def test_flink_keeps_its_own_structure(handful: list[RealPage], flink_root: Path) -> None:
    web = build_web(handful, flink_root, dataclasses.replace(TINY, flink=True, inter_links=3.0))
    flink = [n for n in web.nodes.values() if n.host == FLINK_HOST]
    assert web.seeds[-1] == f"http://{FLINK_HOST}/"
    assert len(flink) > 300 and all(n.template is None for n in flink)
    assert web.reachable() == set(web.nodes)
    site = web.flink()
    assert all(site.respond(n.path).status == 200 for n in flink)
    into_flink = [v for n in web.nodes.values() if n.template for v in n.links if FLINK_HOST in v]
    assert into_flink and all(web.count_key(FLINK_HOST, web.nodes[v].path).startswith("flink:") for v in into_flink)


# ---------------------------------------------------------------------------- another corpus


TINY_OTHER = WebParams(seed=3, size_median=3, size_max=5, seeds=2, flink=False)


def _pack_pages(pages: list[RealPage], folder: Path) -> Path:
    """``folder/real-pages.tar.gz`` holding these pages in the corpus' format."""
    src = folder / "src" / "pages"
    src.mkdir(parents=True)
    with open(src / "manifest.jsonl", "w", encoding="utf-8") as manifest:
        for i, page in enumerate(pages):
            body = page.read()
            (src / f"{i}.html").write_bytes(body)
            manifest.write(json.dumps({"file": f"{i}.html", "url": page.url, "bytes": len(body)}) + "\n")
    archive = folder / PAGES_ARCHIVE
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(src, arcname="pages")
    return archive


def test_focus_runs_on_another_corpus_without_flink(real_pages_dir: Path, tmp_path: Path) -> None:
    """The benchmark as its owner will rerun it: other real pages, no flink archive."""
    others = real_pages(real_pages_dir, n=10, seed=11)
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    _pack_pages(others, corpus)
    work, out = tmp_path / "work", tmp_path / "out"
    with pytest.raises(FileNotFoundError, match="--no-flink"):
        load_web(dataclasses.replace(TINY_OTHER, flink=True), corpus, work)
    web = load_web(TINY_OTHER, corpus, work)
    assert set(web.site_templates) == {p.host for p in others}

    p = TINY_OTHER
    cmd = [sys.executable, str(REPO_ROOT / "bench" / "focus.py"), "--corpus", str(corpus), "--no-flink",
           "--work", str(work), "--out", str(out), "--seed", str(p.seed), "--size-median", str(p.size_median),
           "--size-max", str(p.size_max), "--seeds", str(p.seeds), "--pages-budget", "30", "--k", "5,10",
           "--strategies", "bfs,spitag", "--workers", "1", "--verify", "2",
           "--set", "SPITAG_RESCORE_SECONDS=0.001"]  # every pop after a refit re-ranks, however fast the crawl
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=600, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    web_line = next(line for line in done.stdout.splitlines() if line.startswith("web: "))
    assert web_line.startswith(f"web: {len(web.site_templates)} generated sites") and "flink" not in web_line
    result = json.loads((out / "focus.json").read_text())
    for strategy in ("bfs", "spitag"):
        assert result["table"][strategy]["10"]["harvest"] > 0, result["table"]
        crawl = next(c for c in result["crawls"] if c["strategy"] == strategy)
        assert sum(row["n"] for row in crawl["per_depth"].values()) == crawl["pages_200"]
        with sqlite3.connect(out / "run1" / strategy / "store.db") as conn:  # meta tags, counted here
            stored = [json.loads(v) for (v,) in conn.execute(
                "SELECT p.semantic FROM url u JOIN page p ON p.id = u.page_id WHERE u.depth = 1")]
        meta = sum(c.get(k, 0) for c in stored for k in ("opengraph", "twitter", "dublincore", "meta"))
        assert crawl["per_depth"]["1"]["meta_sum"] == meta > 0
    # the blind reference of this very web: its sites' true counts, probed in random orders
    blind = result["table"]["blind"]["10"]
    assert blind["harvest"] == result["blind"]["by_k"]["10"]["harvest"] > 0
    assert blind["x_oracle"] == pytest.approx(blind["harvest"] / result["table"]["oracle"]["10"]["harvest"])
    assert any(line.startswith("blind ") for line in done.stdout.splitlines())
    assert "blind = what a strategy that learns a site's value only from its own pages" in done.stdout
    # spitag gave the hosts it had not fetched yet its latest estimates, as they moved
    log = (out / "run1" / "spitag" / "crawl.log").read_text()
    given = re.search(r"'spitag/strategy/estimates_given': (\d+)", log)
    assert given and int(given.group(1)) > 0, log[-3000:]
    # spitag against bfs, as the thesis compared SpiTag with Nutch: per depth, and the
    # HTML comparison scrapy report writes
    versus = result["depth_vs"]["bfs"]
    assert versus["a"] == "focus-spitag-r1" and versus["b"] == "focus-bfs-r1"
    assert versus["depths"][0]["depth"] == 0 and versus["depths"][0]["meta_diff"] == 0  # the same seeds
    assert "meta tags (OpenGraph, Twitter, Dublin Core, other <meta>) per depth" in done.stdout
    assert "spitag against bfs, meta tags per depth" in done.stdout
    assert (out / "depth.png").stat().st_size > 0
    assert "focus-bfs-r1" in (out / "report-spitag-vs-bfs" / "index.html").read_text()
    assert (out / "report-spitag-vs-bfs" / "compare-depth.png").stat().st_size > 0

    # Another version of the archive (other pages, same name) is unpacked anew.
    _pack_pages(real_pages(real_pages_dir, n=6, seed=12), tmp_path / "v2")
    (corpus / PAGES_ARCHIVE).write_bytes((tmp_path / "v2" / PAGES_ARCHIVE).read_bytes())
    web2 = load_web(TINY_OTHER, corpus, work)
    assert set(web2.site_templates) != set(web.site_templates)


def test_hold_out_webs_are_built_from_one_half_of_the_hosts(real_pages_dir: Path, tmp_path: Path) -> None:
    """``--hold a|b``: the corpus' hosts split in two seeded halves, and a web built from
    one half serves that half's sites only (the other half's pages are never seen)."""
    pages = real_pages(real_pages_dir, n=10, seed=11)
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    _pack_pages(pages, corpus)
    work = tmp_path / "work"
    hosts = corpus_hosts(corpus, work)
    assert hosts == sorted({p.host for p in pages}) and len(hosts) == 10

    halves = split_hosts(hosts, seed=5)
    assert halves == split_hosts(reversed(hosts), seed=5)  # seeded, whatever the order given
    assert len(halves["a"]) == len(halves["b"]) == 5 and set(halves["a"]) | set(halves["b"]) == set(hosts)
    assert {tuple(split_hosts(hosts, seed=s)["b"]) for s in range(6)} != {tuple(halves["b"])}
    assert split_hosts([*hosts, FLINK_HOST], seed=5) == halves  # flink is never a generated site
    assert hold_halves(corpus, work, seed=5) == halves  # what --hold takes

    for half in ("a", "b"):
        web = load_web(TINY_OTHER, corpus, work, hosts=halves[half])
        assert set(web.site_templates) == set(halves[half])
        assert {urlsplit(u).hostname for u in web.nodes} == set(halves[half])
        assert {urlsplit(s).hostname for s in web.seeds} <= set(halves[half])
    with pytest.raises(ValueError, match="none of the 1 hosts"):
        load_web(TINY_OTHER, corpus, work, hosts=["not-in-the.corpus"])


def test_focus_with_workers_on_one_redis_frontier(real_pages_dir: Path, tmp_path: Path) -> None:
    """``--redis-workers 2``: each crawl is two workers at once on one real Redis; both
    fetch, no page is fetched twice, and the harvest is the whole crawl's."""
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    _pack_pages(real_pages(real_pages_dir, n=10, seed=11), corpus)
    out, p = tmp_path / "out", TINY_OTHER
    cmd = [sys.executable, str(REPO_ROOT / "bench" / "focus.py"), "--corpus", str(corpus), "--no-flink",
           "--work", str(tmp_path / "work"), "--out", str(out), "--seed", str(p.seed),
           "--size-median", str(p.size_median), "--size-max", str(p.size_max), "--seeds", str(p.seeds),
           "--pages-budget", "30", "--k", "5,10", "--strategies", "spitag", "--workers", "1",
           "--verify", "2", "--redis-workers", "2"]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=600, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    assert "2 workers, one Redis frontier" in done.stdout
    result = json.loads((out / "focus.json").read_text())
    crawl = result["crawls"][0]
    assert crawl["returncode"] == 0 and crawl["refetched"]["urls"] == 0
    assert result["table"]["spitag"]["10"]["harvest"] > 0
    folder = out / "run1" / "spitag"
    per_worker = []
    for i in (0, 1):
        with sqlite3.connect(folder / f"store-w{i}.db") as conn:
            per_worker.append(conn.execute("SELECT COUNT(*) FROM url WHERE status = 200").fetchone()[0])
    assert min(per_worker) > 0, per_worker  # both workers took pages from the shared frontier
    assert sum(per_worker) == crawl["pages_200"] == sum(r["n"] for r in crawl["per_depth"].values())


def test_depths_of_several_stores_add_up() -> None:
    """bench/depth_figures.py: one crawl's per-depth rows from two workers' stores (the
    report's own rows), added up, with the means over every page."""
    from bench.depth_figures import depth_record, merged_depths
    from spitag.report.queries import Depth

    def depth(level: int, pages: int, sem: int, sem_max: int, meta: int, meta_max: int, og: int) -> Depth:
        return Depth(depth=level, urls=pages + 1, pages=pages, semantic_sum=sem, semantic_mean=sem / pages,
                     semantic_max=sem_max, meta_sum=meta, meta_mean=meta / pages, meta_max=meta_max,
                     syntaxes={"opengraph": og, "meta": meta - og})

    class Worker:  # what merged_depths reads of a CrawlReport
        def __init__(self, *depths: Depth) -> None:
            self.depths = list(depths)

    w0 = Worker(depth(0, 2, 20, 15, 10, 8, 4), depth(1, 1, 3, 3, 1, 1, 0))
    w1 = Worker(depth(1, 3, 30, 12, 12, 6, 6), depth(2, 1, 7, 7, 5, 5, 5))
    merged = merged_depths([w0, w1])
    assert [d.depth for d in merged] == [0, 1, 2]
    one = merged[1]
    assert (one.pages, one.urls, one.semantic_sum, one.semantic_max, one.meta_sum, one.meta_max) == (4, 6, 33, 12, 13, 6)
    assert one.semantic_mean == 33 / 4 and one.meta_mean == 13 / 4
    assert one.syntaxes == {"opengraph": 6, "meta": 7}
    assert w0.depths[1].pages == 1 and w0.depths[1].syntaxes == {"opengraph": 0, "meta": 1}  # inputs untouched
    record = depth_record(merged)
    assert record[1] == {"n": 4, "sum": 33, "mean": 33 / 4, "max": 12, "meta_sum": 13, "meta_mean": 13 / 4,
                         "meta_max": 6}
    assert sum(r["n"] for r in record.values()) == 7


def test_depth_figures_print_a_depth_only_one_crawl_reached() -> None:
    """spitag against a baseline that stopped a layer higher: that layer has no
    difference to print ("—"), and the figures are still printed."""
    import io

    from bench.depth_figures import print_figures
    from spitag.extract import SYNTAXES
    from spitag.report.queries import CrawlReport, Depth

    def report(name: str, *levels: int) -> CrawlReport:
        depths = [Depth(depth=d, urls=2, pages=2, semantic_sum=4, semantic_mean=2.0, semantic_max=3, meta_sum=2,
                        meta_mean=1.0, meta_max=1, syntaxes={"meta": 2}) for d in levels]
        return CrawlReport(crawl=name, strategies={name: 2 * len(levels)}, urls=2 * len(levels),
                           pages=2 * len(levels), failed=0, redirects=0, semantic_items=4 * len(levels),
                           meta_tags=2 * len(levels), rich_pages=2 * len(levels), max_depth=max(levels),
                           first_checked=None, last_checked=None, hosts_count=1, depths=depths,
                           syntaxes={s: 2 * len(levels) if s == "meta" else 0 for s in SYNTAXES},
                           syntax_pages={}, harvest=[4] * len(levels), harvest_points={}, priorities=[],
                           scores=[], hosts=[])

    out = io.StringIO()
    comparisons = print_figures({"spitag": [report("spitag", 0, 1, 2)], "bfs": [report("bfs", 0, 1)]}, out)
    assert [row["meta_diff"] for row in comparisons["bfs"]["depths"]] == [0, 0, None]
    assert "2: — (—), —" in out.getvalue()


def test_focus_compare_on_hand_made_runs(tmp_path: Path) -> None:
    """bench/focus_compare.py: the stratified difference, its exact permutation p and
    the webs left out, on focus.json records made by hand (K = 2, oracle 10 a page)."""
    from bench.focus_compare import main

    def record(name: str, seed: int, ratios: list[float], strategy: str = "spitag") -> Path:
        crawls = [{"strategy": strategy, "counts": [round(10 * r)] * 2} for r in ratios]
        data = {"web": {"params": {"seed": seed, "popularity": 0.0}}, "oracle": {"counts": [10, 10, 3]},
                "crawls": crawls}
        (tmp_path / name).mkdir()
        (tmp_path / name / "focus.json").write_text(json.dumps(data))
        return tmp_path / name

    a = [record(f"a{s}", s, [0.9, 0.8]) for s in range(3)]
    b = [record(f"b{s}", s, [0.5, 0.4]) for s in range(3)] + [record("b9", 9, [0.1])]  # seed 9: B only
    out = tmp_path / "result.json"
    assert main(["--a", *map(str, a), "--b", *map(str, b), "--k", "2", "--json", str(out)]) == 0
    result = json.loads(out.read_text())
    assert result["compared"] == 3 and result["difference"] == pytest.approx(0.4)
    # 6 labellings of each web's 4 crawls, 216 in all; only the observed one and its
    # mirror image are as far from 0 as 0.4
    assert (result["labellings"], result["exact"]) == (216, True)
    assert result["p"] == pytest.approx(2 / 216)
    assert result["interval90"] == pytest.approx([0.3, 0.5], abs=0.051)
    assert [w["web"] for w in result["webs"] if not w["a"]] == ["seed 9"]
    # no difference at all: every labelling is as extreme, p = 1
    same = [record(f"c{s}", s, [0.5, 0.5]) for s in range(2)]
    assert main(["--a", *map(str, same), "--b", *map(str, same), "--k", "2", "--json", str(out)]) == 0
    assert json.loads(out.read_text())["p"] == 1.0
