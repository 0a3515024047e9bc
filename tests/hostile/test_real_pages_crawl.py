"""Every one of the 600 real pages, crawled: the crawl goes on, exits 0, and every page
ends as a URL row (with a page and its profile), with no spider error in the log."""

from __future__ import annotations

import json
import resource
import sqlite3
from pathlib import Path

from urllib.parse import urlsplit

from spitag.urls import try_normalize
from testbed.corpus import real_pages, real_pages_site
from tests.support.crawl import run_crawl
from testbed.webserver import DictSite, Response, WebServer


def test_all_600_real_pages(real_pages_dir: Path, tmp_path: Path) -> None:
    pages = real_pages(real_pages_dir)  # the 578 with an http(s) URL, under their own hosts
    served = {p.file.name for p in pages}
    others = DictSite()  # the rest ("hard::…" in the manifest) under one made-up host
    other_urls = []
    for line in (real_pages_dir / "manifest.jsonl").open():
        name = json.loads(line)["file"]
        if name not in served:
            others.add(f"/{name}", Response(body=(real_pages_dir / name).read_bytes(), content_type="text/html"))
            other_urls.append(f"http://hard-pages.test/{name}")
    seeds = tmp_path / "seeds.txt"
    seeds.write_text("\n".join([p.served_url for p in pages] + other_urls) + "\n")
    sites = real_pages_site(pages)
    for page in pages:
        # SpiTag asks for a page under its normalized URL (session ids dropped, query
        # sorted, dot segments resolved): serve it there too, as its site would.
        normalized = urlsplit(try_normalize(page.served_url))
        target = normalized.path + (f"?{normalized.query}" if normalized.query else "")
        if target not in sites[page.host]:
            sites[page.host].add(target, sites[page.host].respond(page.path))
    with WebServer() as server:
        server.add_sites(sites)
        server.add_site("hard-pages.test", others)
        run = run_crawl(server, tmp_path / "crawl", str(seeds), name="real",
                        settings={"SPITAG_MAX_DEPTH": 0, "RETRY_TIMES": 0}, timeout=900)
    peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(f"600 real pages: peak RSS {peak_mb:.0f} MB")
    assert run.returncode == 0, run.describe()
    assert "Spider error processing" not in run.stderr and "Traceback" not in run.stderr
    assert len(pages) + len(other_urls) == 600
    with sqlite3.connect(tmp_path / "crawl" / "real.db") as conn:
        rows = conn.execute(
            "SELECT u.status, p.semantic FROM url u LEFT JOIN page p ON p.id = u.page_id WHERE u.depth = 0"
        ).fetchall()
    assert len(rows) == 600
    assert all(status == 200 and semantic for status, semantic in rows)
    with_jsonld = sum(json.loads(semantic)["json-ld"] > 0 for _, semantic in rows)
    assert with_jsonld >= 250  # about half the pages carry JSON-LD
