"""``scrapy links``: the stored link graph around a URL, on both stores."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from spitag.store import open_store
from testbed.pgserver import free_port
from testbed.sites import tree_site
from testbed.webserver import WebServer
from tests.test_store_contract import GRAPH, record

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(params=["sqlite", "postgresql"])
def backend_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "postgresql":
        return request.getfixturevalue("pg_url")
    return f"sqlite:///{tmp_path}/store.db"


def links(store_url: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "scrapy", "links", *args, "-s", f"SPITAG_STORE={store_url}"],
        cwd=REPO, capture_output=True, text=True, timeout=120,
    )


def edges(run: subprocess.CompletedProcess) -> list[tuple[int, str, str]]:
    assert run.returncode == 0, run.stderr[-2000:]
    header, *lines = run.stdout.splitlines()
    assert header == "distance\tsource\ttarget"
    return [(int(d), s, t) for d, s, t in (line.split("\t") for line in lines)]


def test_links_command_prints_the_graph_both_ways(backend_url: str) -> None:
    store = open_store(backend_url)
    store.write([record(u, f"<p>{u}</p>", links=t) for u, t in GRAPH.items()])
    store.close()
    a, b, c, d, e = (f"http://g.example/{n}" for n in "abcde")
    run = links(backend_url, "-a", "crawl=c1", "--from", a, "--depth", "2")
    assert edges(run) == [(1, a, b), (1, a, c), (2, b, d), (2, c, "http://x.example/")]
    assert "4 link(s) within 2 hop(s) from http://g.example/a in crawl 'c1'" in run.stderr
    assert edges(links(backend_url, "-a", "crawl=c1", "--from", a, "--reverse")) == [(1, d, a), (1, e, a)]
    # written as a user would: normalized to the stored spelling
    assert edges(links(backend_url, "-a", "crawl=c1", "--from", "HTTP://G.Example:80/a")) == [(1, a, b), (1, a, c)]
    leaf = links(backend_url, "-a", "crawl=c1", "--from", "http://x.example/")  # a link target, never fetched
    assert edges(leaf) == [] and "0 link(s)" in leaf.stderr
    nothing = links(backend_url, "-a", "crawl=c1", "--from", "http://g.example/none")  # not the crawl's
    assert nothing.returncode == 2 and nothing.stdout == ""
    assert "spitag: error: http://g.example/none is neither a URL of crawl 'c1' nor a link it saw" in nothing.stderr
    # a reader that leaves early (| head): no traceback
    head = subprocess.run(
        f"{sys.executable} -m scrapy links -a crawl=c1 --from {a} --depth 3 -s SPITAG_STORE={backend_url} | head -1",
        shell=True, cwd=REPO, capture_output=True, text=True, timeout=120,
    )
    assert head.stdout == "distance\tsource\ttarget\n" and "Traceback" not in head.stderr, head.stderr
    typo = links(backend_url, "-a", "crawl=other", "--from", a)  # a crawl the store does not have
    assert typo.returncode == 2 and "spitag: error: crawl 'other' has no URL in the store; crawls there: c1" in typo.stderr


def test_links_command_refuses_bad_input(tmp_path: Path) -> None:
    store = f"sqlite:///{tmp_path}/s.db"
    run = links(store, "-a", "crawl=c1", "--from", "http://a.test/")  # no store there: not a new one
    assert run.returncode == 2 and "no store at" in run.stderr and not (tmp_path / "s.db").exists()
    for args in (["--from", "http://a.test/"], ["-a", "crawl=c1"], ["-a", "crawl=c1", "--from", "http://a.test/", "--depth", "0"]):
        run = links(store, *args)
        assert run.returncode == 2 and "Traceback" not in run.stderr, run.stderr
    dead = f"postgresql://spitag:t0p-secret@127.0.0.1:{free_port()}/db"
    run = links(dead, "-a", "crawl=c1", "--from", "http://a.test/")
    assert run.returncode == 3 and "PostgreSQL unreachable" in run.stderr
    assert "t0p-secret" not in run.stderr and "Traceback" not in run.stderr


def tree_edges(pages: int, fanout: int, host: str, depth: int) -> list[tuple[int, str, str]]:
    """What ``links --from http://host/ --depth N`` shows after crawling tree_site:
    page i links to its children and to ``/`` (page 0 is known as ``/`` only)."""
    def url(i: int) -> str:
        return f"http://{host}/" if i == 0 else f"http://{host}/p/{i}.html"

    def out(i: int) -> list[int]:
        return [c for c in range(fanout * i + 1, fanout * i + fanout + 1) if c < pages] + [0]

    found: dict[tuple[str, str], int] = {}
    frontier, seen = [0], {0}
    for distance in range(1, depth + 1):
        reached = []
        for i in frontier:
            for j in out(i):
                found.setdefault((url(i), url(j)), distance)
                if j not in seen:
                    seen.add(j)
                    reached.append(j)
        frontier = reached
    return sorted(((d, s, t) for (s, t), d in found.items()), key=lambda e: (e[0], e[1], e[2]))


def test_links_of_a_real_crawl(backend_url: str, tmp_path: Path) -> None:
    with WebServer() as server:
        server.add_site("graph.test", tree_site(60, fanout=4))
        env = {**os.environ, "http_proxy": server.proxy_url, "https_proxy": server.proxy_url}
        env.pop("no_proxy", None)
        crawl = subprocess.run(
            [sys.executable, "-m", "scrapy", "crawl", "spitag", "-a", "seeds=http://graph.test/",
             "-a", "crawl=g", "-s", f"SPITAG_STORE={backend_url}",
             "-s", f"SPITAG_FRONTIER=sqlite:///{tmp_path}/f.db"],
            cwd=REPO, env=env, capture_output=True, text=True, timeout=180,
        )
        assert crawl.returncode == 0, crawl.stderr[-3000:]
    shown = edges(links(backend_url, "-a", "crawl=g", "--from", "http://graph.test/", "--depth", "3"))
    assert shown == tree_edges(60, 4, "graph.test", 3)
    back = edges(links(backend_url, "-a", "crawl=g", "--from", "http://graph.test/p/22.html", "--reverse", "--depth", "2"))
    # 22's parent is 5, whose parent is 1
    assert back == [(1, "http://graph.test/p/5.html", "http://graph.test/p/22.html"),
                    (2, "http://graph.test/p/1.html", "http://graph.test/p/5.html")]
