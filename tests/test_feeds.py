"""Feeds of SpiTag's items in every format Scrapy offers, and ``scrapy export``.

A page's markup puts keys such as ``twitter:card``, ``og:title`` and ``@context`` into
the item: Scrapy's XML exporter made them element names and wrote XML that does not
parse; its CSV exporter wrote dictionaries as Python's repr and an empty ``body``
column. ``scrapy export`` wrote JSON lines whatever the file's name, and an empty file
(exit 0) for a crawl the store does not have."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.support.crawl import REPO, run_crawl, sqlite_url
from testbed.webserver import DictSite, WebServer

PAGE = """<html><head><title>rich \x0b page</title>
<meta property="og:title" content="An OpenGraph title">
<meta name="twitter:card" content="summary">
<script type="application/ld+json">{"@context": "https://schema.org", "@type": "Article",
 "headline": "A <b>headline</b> & more", "description": "a vertical\\u000btab"}</script></head>
<body><a href="/other">other</a></body></html>"""


@pytest.fixture
def crawled(webserver: WebServer, tmp_path: Path) -> Path:
    """One crawl of a small rich site, fed to XML and CSV."""
    webserver.add_site("feed.test", DictSite({"/": PAGE, "/other": PAGE.replace("/other", "/")}))
    run = run_crawl(webserver, tmp_path, "http://feed.test/", crawl="feeds",
                    settings={"FEEDS": json.dumps({str(tmp_path / "pages.xml"): {"format": "xml"},
                                                   str(tmp_path / "pages.csv"): {"format": "csv"}})})
    assert run.returncode == 0, run.describe()
    assert len(run.items) == 2
    return tmp_path


def field(item: ET.Element, name: str) -> str | None:
    """The text of ``<field name="NAME">``: a key that is no XML name."""
    for element in item.iter("field"):
        if element.get("name") == name:
            return "".join(element.itertext()).strip()
    return None


def check_xml(path: Path) -> None:
    root = ET.parse(path).getroot()  # raised "not well-formed" before
    items = root.findall("item")
    assert len(items) == 2
    for item in items:
        assert item.findtext("url", "").startswith("http://feed.test/")
        assert field(item, "twitter:card") == "summary"
        assert field(item, "@context") == "https://schema.org"
        headline = [e for e in item.iter("headline")]
        assert headline and headline[0].text == "A <b>headline</b> & more"
        assert item.findtext(".//description") == "a verticaltab"  # (no character XML forbids)


def check_csv(path: Path) -> None:
    with path.open(newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 2
    assert "body" not in rows[0]
    for row in rows:
        semantic = json.loads(row["semantic"])  # JSON, not Python's repr
        assert semantic["opengraph"] >= 1 and semantic["json-ld"] == 1
        assert json.loads(row["data"])["opengraph"]


def test_crawl_feeds_in_xml_and_csv_parse(crawled: Path) -> None:
    check_xml(crawled / "pages.xml")
    check_csv(crawled / "pages.csv")


def export(tmp: Path, *args: str, store: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "scrapy", "export", *args, "-s", f"SPITAG_STORE={sqlite_url(store or tmp / 'crawl.db')}"],
        cwd=REPO, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL,
    )


def test_scrapy_export_writes_the_format_its_file_names(crawled: Path) -> None:
    for name in ("all.xml", "all.csv", "all.jsonl", "all.json"):
        run = export(crawled, "-a", "crawl=feeds", "-O", str(crawled / name))
        assert run.returncode == 0, run.stderr[-3000:]
    check_xml(crawled / "all.xml")
    check_csv(crawled / "all.csv")
    lines = [json.loads(line) for line in (crawled / "all.jsonl").open()]
    assert json.loads((crawled / "all.json").read_text()) == lines and len(lines) == 2


def test_scrapy_export_refuses_a_crawl_or_store_that_does_not_exist(crawled: Path) -> None:
    run = export(crawled, "-a", "crawl=nosuch", "-O", str(crawled / "none.jsonl"))
    assert run.returncode == 2, run.stderr[-3000:]
    assert "spitag: error: crawl 'nosuch' has no URL in the store; crawls there: feeds (2 URLs)" in run.stderr
    assert not (crawl_file := crawled / "none.jsonl").exists(), crawl_file
    missing = crawled / "typo.db"
    run = export(crawled, "-a", "crawl=feeds", "-O", str(crawled / "none.jsonl"), store=missing)
    assert run.returncode == 2 and "no store at" in run.stderr, run.stderr[-3000:]
    assert not missing.exists() and not (crawled / "none.jsonl").exists()
    (crawled / "afile").write_text("a file")
    run = export(crawled, "-a", "crawl=feeds", "-O", str(crawled / "afile" / "x.jsonl"))
    assert run.returncode == 2 and "is a file, not a folder" in run.stderr and "Traceback" not in run.stderr


def test_scrapy_export_appends_with_small_o_and_writes_standard_output_with_a_dash(crawled: Path) -> None:
    once = crawled / "once.jsonl"
    twice = crawled / "twice.jsonl"
    assert export(crawled, "-a", "crawl=feeds", "-O", str(once)).returncode == 0
    for _ in range(2):
        run = export(crawled, "-a", "crawl=feeds", "-o", str(twice))
        assert run.returncode == 0, run.stderr[-3000:]
    lines = [json.loads(line) for line in once.open()]
    assert [json.loads(line) for line in twice.open()] == lines + lines  # -o appends
    assert export(crawled, "-a", "crawl=feeds", "-O", str(twice)).returncode == 0
    assert [json.loads(line) for line in twice.open()] == lines  # -O overwrites
    run = export(crawled, "-a", "crawl=feeds", "-O", "-")
    assert run.returncode == 0, run.stderr[-3000:]
    assert [json.loads(line) for line in run.stdout.splitlines()] == lines  # JSON lines on stdout
    assert "exported 2 URL(s) of crawl 'feeds' to -" in run.stderr


def test_scrapy_export_to_a_reader_that_leaves_early(tmp_path: Path) -> None:
    """``scrapy export … -O - | head -1``: 3,000 URLs (far more than a pipe holds), one
    line read; the export ends quietly, with no traceback."""
    from spitag.store import open_store
    from tests.test_store_contract import record

    store_path = tmp_path / "big.db"
    store = open_store(sqlite_url(store_path))
    store.write([record(f"http://big.example/{i}", f"<p>page {i}</p>") for i in range(3000)])
    store.close()
    run = subprocess.run(
        f"{sys.executable} -m scrapy export -a crawl=c1 -O - -s SPITAG_STORE={sqlite_url(store_path)} | head -1",
        shell=True, cwd=REPO, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL,
    )
    assert json.loads(run.stdout)["url"].startswith("http://big.example/")
    assert "Traceback" not in run.stderr and "BrokenPipe" not in run.stderr, run.stderr[-3000:]


def test_scrapy_export_writes_what_the_crawl_wrote(crawled: Path) -> None:
    """The same fields, in the same order, with the same values as the crawl's ``-O``
    file (its items were stored; ``export`` reads them back)."""
    run = export(crawled, "-a", "crawl=feeds", "-O", str(crawled / "all.jsonl"))
    assert run.returncode == 0, run.stderr[-3000:]
    exported = {i["url"]: i for i in map(json.loads, (crawled / "all.jsonl").open())}
    crawled_items = {i["url"]: i for i in map(json.loads, (crawled / "crawl.jsonl").open())}
    assert set(exported) == set(crawled_items) and len(exported) == 2
    for url, item in crawled_items.items():
        assert list(exported[url]) == list(item), url
        assert exported[url] == item, url
