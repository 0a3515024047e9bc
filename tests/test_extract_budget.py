"""The per-page extraction budget and the profile workers' memory bound: past them, the
costly syntaxes are cut off or skipped, the page is stored with what was finished and
flagged, and the crawl goes on."""

from __future__ import annotations

import json
import subprocess
import sys
from contextlib import closing
from pathlib import Path

from spitag.extract import parse_html, profile_html, profile_tree
from tests.support.crawl import REPO, run_crawl
from testbed.heavy import microdata_page, rdfa_page
from testbed.webserver import DictSite, WebServer

PAGE = """<html prefix="dc: http://purl.org/dc/terms/"><head><title>T</title>
<script type="application/ld+json">{"@context": "https://schema.org", "@type": "Article", "name": "A"}</script>
</head><body>
<div class="h-card"><span class="p-name">Ada</span></div>
<div vocab="https://schema.org/" typeof="Person"><span property="name">Grace</span></div>
<div itemscope itemtype="https://schema.org/Thing"><span itemprop="name">Box</span></div>
</body></html>"""


def test_past_the_budget_microdata_microformats_and_rdfa_are_skipped() -> None:
    full = profile_html(PAGE, "http://a.test/")
    assert full.counts["json-ld"] == 1 and full.counts["microdata"] == 1
    assert full.counts["microformat"] >= 1 and full.counts["rdfa"] >= 1
    assert full.skipped == [] and full.cut == [] and full.incomplete == []
    assert profile_html(PAGE, "http://a.test/", budget=30.0).counts == full.counts
    cut = profile_html(PAGE, "http://a.test/", budget=1e-9)
    assert cut.skipped == ["microdata", "microformat", "rdfa"] == cut.incomplete
    assert (cut.counts["json-ld"], cut.counts["microformat"], cut.counts["rdfa"]) == (1, 0, 0)
    costly = sum(full.counts[s] for s in ("microdata", "microformat", "rdfa"))
    assert cut.counts["total"] == full.counts["total"] - costly


def test_a_step_running_past_the_budget_is_cut_off() -> None:
    """5 MB of RDFa nodes (pyRdfa alone would run for minutes) and 5 MB of sibling
    microdata items: the step running when the budget is spent is interrupted, the later
    costly ones are skipped, and what came before stays. (The trees are parsed first, so
    that the 3 s are the profile's, well past the steps before the costly one.)"""
    rdfa = profile_tree(parse_html(rdfa_page()), "http://h.test/", budget=3.0)
    assert (rdfa.cut, rdfa.cut_by, rdfa.skipped) == (["rdfa"], "time", [])
    assert rdfa.counts["rdfa"] == 0 and rdfa.counts["microdata"] == 0 and rdfa.title == "heavy"
    microdata = profile_tree(parse_html(microdata_page()), "http://h.test/", budget=3.0)
    assert (microdata.cut, microdata.cut_by) == (["microdata"], "time")
    assert microdata.skipped == ["microformat", "rdfa"] and microdata.incomplete == ["microdata", "microformat", "rdfa"]


MEMORY_BOUND = r"""
import json, sys
from spitag.cutoff import resident_bytes
from spitag.extract import profile_html
from testbed.heavy import rdfa_page
page = rdfa_page()
bound = resident_bytes() + 80 * 2**20
p = profile_html(page, "http://h.test/", max_memory=bound)
json.dump({"cut": p.cut, "cut_by": p.cut_by, "bound": bound, "rss": p.rss}, sys.stdout)
"""


def test_a_step_growing_past_the_memory_bound_is_cut_off() -> None:
    """With no time budget, pyRdfa on 5 MB of RDFa nodes is cut off once the process
    holds 80 MB more than before it started (run in a process of its own, whose
    memory is the page's)."""
    done = subprocess.run([sys.executable, "-c", MEMORY_BOUND], cwd=REPO, capture_output=True, text=True,
                          check=True, timeout=600)
    result = json.loads(done.stdout)
    assert (result["cut"], result["cut_by"]) == (["rdfa"], "memory")
    assert result["rss"] > result["bound"] - 80 * 2**20


def test_huge_pages_are_cut_the_worker_replaced_and_the_crawl_goes_on(tmp_path: Path) -> None:
    """A site whose home links to a 5 MB page of RDFa nodes, one of 5 MB of microdata
    items and three ordinary pages, crawled with one profile worker: the RDFa page is
    cut off for memory (a bound of 300 MB, no time budget to speak of) and its worker
    replaced; every page is stored, the cut ones flagged ``incomplete`` (in the JSON
    lines and the store) with what was finished, the others complete."""
    pages = {f"/p{i}": PAGE for i in range(3)}
    pages["/rdfa"] = rdfa_page()
    pages["/microdata"] = microdata_page()
    home = "".join(f'<a href="{path}">{path}</a>' for path in pages)
    pages["/"] = f"<html><head><title>home</title></head><body>{home}</body></html>"
    with WebServer() as server:
        server.add_site("heavy.test", DictSite(pages))
        run = run_crawl(server, tmp_path, "http://heavy.test/", settings={
            "SPITAG_EXTRACT_PROCESSES": 1, "SPITAG_EXTRACT_BUDGET": 120, "SPITAG_EXTRACT_MEMORY": 300,
        })
    assert run.returncode == 0, run.describe()
    items = {item["url"].rsplit("/", 1)[1]: item for item in run.items}
    assert sorted(items) == sorted(p.lstrip("/") for p in pages), run.describe()
    assert items["rdfa"]["incomplete"] == ["rdfa"] and items["rdfa"]["title"] == "heavy"
    assert items["microdata"]["incomplete"][0] == "microdata"
    for name in ("", "p0", "p1", "p2"):
        assert items[name]["incomplete"] is None
    assert items["p0"]["semantic"]["microdata"] == 1 and items["p0"]["semantic"]["rdfa"] >= 1
    assert run.stats["spitag/extract/cut_by/memory"] == "2", run.describe()
    assert int(run.stats["spitag/extract/workers_replaced"]) == 2, run.describe()
    assert "spitag/extract/pool_failures" not in run.stats
    with closing(run.connect()) as db:
        stored = dict(db.execute("SELECT u.url, p.incomplete FROM url u JOIN page p ON p.id = u.page_id"))
    assert stored["http://heavy.test/rdfa"] == "rdfa" and stored["http://heavy.test/p0"] is None


def test_a_crawl_counts_what_its_budget_skipped(tmp_path: Path) -> None:
    with WebServer() as server:
        server.add_site("budget.test", DictSite({"/": PAGE}))
        run = run_crawl(server, tmp_path, "http://budget.test/", settings={"SPITAG_EXTRACT_BUDGET": 1e-9})
        assert run.returncode == 0, run.describe()
        (item,) = run.items
        assert item["semantic"]["json-ld"] == 1 and item["semantic"]["microformat"] == 0
        assert run.stats["spitag/extract/skipped/microformat"] == "1"
        assert run.stats["spitag/extract/skipped/rdfa"] == "1"
        default = run_crawl(server, tmp_path / "default", "http://budget.test/")
        assert default.items[0]["semantic"]["microformat"] >= 1
        assert "spitag/extract/skipped/microformat" not in default.stats
