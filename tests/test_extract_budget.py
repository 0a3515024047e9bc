"""The per-page extraction budget: past it, the costly syntaxes are skipped and counted."""

from __future__ import annotations

from pathlib import Path

from spitag.extract import profile_html
from tests.support.crawl import run_crawl
from testbed.webserver import DictSite, WebServer

PAGE = """<html prefix="dc: http://purl.org/dc/terms/"><head><title>T</title>
<script type="application/ld+json">{"@context": "https://schema.org", "@type": "Article", "name": "A"}</script>
</head><body>
<div class="h-card"><span class="p-name">Ada</span></div>
<div vocab="https://schema.org/" typeof="Person"><span property="name">Grace</span></div>
</body></html>"""


def test_past_the_budget_microformats_and_rdfa_are_skipped() -> None:
    full = profile_html(PAGE, "http://a.test/")
    assert full.counts["json-ld"] == 1 and full.counts["microformat"] >= 1 and full.counts["rdfa"] >= 1
    assert full.skipped == []
    assert profile_html(PAGE, "http://a.test/", budget=30.0).counts == full.counts
    cut = profile_html(PAGE, "http://a.test/", budget=1e-9)
    assert cut.skipped == ["microformat", "rdfa"]
    assert (cut.counts["json-ld"], cut.counts["microformat"], cut.counts["rdfa"]) == (1, 0, 0)
    assert cut.counts["total"] == full.counts["total"] - full.counts["microformat"] - full.counts["rdfa"]


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
