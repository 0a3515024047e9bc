"""The SpiTag thesis' figures for the focus benchmark's crawls (issue 3).

The thesis compared SpiTag with Nutch by what each crawl stored at each depth: meta
tags per depth (sum, mean, max), and SpiTag against Nutch, the difference of the sums
per level (in items and in %), of the means in %, and each kind of tag at the last
level both reached. ``scrapy report -a against=B`` draws exactly that from a store
(``spitag.report``); here the same figures, read by the same code, for each
strategy's first crawl, with ``spitag`` against each baseline that ran (``opic`` is
Nutch's scoring). A crawl of several workers has one store per worker: their depths
are added up.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, TextIO

from spitag.extract import SYNTAXES
from spitag.report import queries, write_reports
from spitag.store import open_store

FOCUS = "spitag"
BASELINES = ("opic", "bfs", "importance", "parent")  # the first that ran is the thesis' Nutch


def load_crawl(stores: Sequence[Path], crawl: str) -> list[queries.CrawlReport]:
    """The report of ``crawl`` in each store that has it (one per worker)."""
    reports = []
    for path in stores:
        store = open_store(f"sqlite:///{path}", body_format="none")
        try:
            report = queries.load(store, crawl)
        finally:
            store.close()
        if report is not None:
            reports.append(report)
    return reports


def merged_depths(reports: Sequence[queries.CrawlReport]) -> list[queries.Depth]:
    """The per-depth rows of one crawl's stores as one: sums and pages added, maxima
    over all, means over every page."""
    rows: dict[int, queries.Depth] = {}
    for report in reports:
        for d in report.depths:
            m = rows.get(d.depth)
            if m is None:
                rows[d.depth] = dataclasses.replace(d, syntaxes=dict(d.syntaxes))
                continue
            m.urls += d.urls
            m.pages += d.pages
            m.semantic_sum += d.semantic_sum
            m.meta_sum += d.meta_sum
            m.semantic_max = max(m.semantic_max, d.semantic_max)
            m.meta_max = max(m.meta_max, d.meta_max)
            for s, n in d.syntaxes.items():
                m.syntaxes[s] = m.syntaxes.get(s, 0) + n
    for m in rows.values():
        m.semantic_mean = m.semantic_sum / m.pages if m.pages else 0.0
        m.meta_mean = m.meta_sum / m.pages if m.pages else 0.0
    return [rows[k] for k in sorted(rows)]


def depth_record(depths: Sequence[queries.Depth]) -> dict[int, dict[str, Any]]:
    """focus.json's ``per_depth`` of a crawl: per depth with pages, the pages (``n``),
    the sum, mean and max of semantic items, and the same of meta tags."""
    return {
        d.depth: {"n": d.pages, "sum": d.semantic_sum, "mean": d.semantic_mean, "max": d.semantic_max,
                  "meta_sum": d.meta_sum, "meta_mean": d.meta_mean, "meta_max": d.meta_max}
        for d in depths if d.pages
    }


def as_report(reports: Sequence[queries.CrawlReport]) -> queries.CrawlReport:
    """One crawl's report for ``queries.compare``: the depths and syntaxes of all its
    stores (the other figures are those of the first store)."""
    first = reports[0]
    if len(reports) == 1:
        return first
    syntaxes = {s: sum(r.syntaxes.get(s, 0) for r in reports) for s in SYNTAXES}
    return dataclasses.replace(
        first, depths=merged_depths(reports), syntaxes=syntaxes,
        pages=sum(r.pages for r in reports), urls=sum(r.urls for r in reports),
        semantic_items=sum(r.semantic_items for r in reports), meta_tags=sum(r.meta_tags for r in reports),
    )


def _pct(x: float | None) -> str:
    return "—" if x is None else f"{x:+.0f}%"


def _diff(x: int | None) -> str:
    """A difference of counts; none at a depth only one of the crawls reached."""
    return "—" if x is None else f"{x:+d}"


def print_figures(reports: Mapping[str, Sequence[queries.CrawlReport]], out: TextIO) -> dict[str, Any]:
    """Per strategy, semantic items and meta tags per depth; then ``spitag`` against
    each baseline that ran, as the thesis compared SpiTag with Nutch. Returns the
    comparisons (``queries.compare``'s), by baseline."""
    crawls = {s: as_report(r) for s, r in reports.items() if r}
    for key, title in (("semantic", "semantic items"), ("meta", "meta tags (OpenGraph, Twitter, Dublin Core, "
                                                                "other <meta>)")):
        print(f"\n{title} per depth (crawler's counts, 2xx pages, run 1): depth: pages / sum / mean / max",
              file=out)
        for strategy, report in crawls.items():
            cells = "  ".join(
                f"{d.depth}: {d.pages}/{getattr(d, key + '_sum')}/{getattr(d, key + '_mean'):.1f}/"
                f"{getattr(d, key + '_max')}" for d in report.depths if d.pages)
            print(f"  {strategy:<11}{cells}", file=out)
    comparisons = {}
    if FOCUS in crawls:
        for base in BASELINES:
            if base not in crawls:
                continue
            c = queries.compare(crawls[FOCUS], crawls[base])
            comparisons[base] = c
            note = " (Nutch's scoring, the thesis' baseline)" if base == "opic" else ""
            print(f"\n{FOCUS} against {base}{note}, meta tags per depth, run 1: depth: {FOCUS} − {base}"
                  " sum (% of its sum), mean per page (%)", file=out)
            print("  " + "  ".join(
                f"{row['depth']}: {_diff(row['meta_diff'])} ({_pct(row['meta_diff_pct'])}),"
                f" {_pct(row['meta_mean_diff_pct'])}" for row in c["depths"]), file=out)
            if c["last_level"] is not None:
                print(f"  per syntax at depth {c['last_level']}, the last both reached: " + ", ".join(
                    f"{row['syntax']} {row['diff']:+d}" for row in c["last_level_syntaxes"]), file=out)
    return comparisons


def write_comparisons(reports: Mapping[str, Sequence[queries.CrawlReport]], folder: Path) -> list[Path]:
    """``scrapy report``'s HTML comparison of spitag's first crawl against each
    baseline's, in ``folder/report-spitag-vs-<baseline>/`` (crawls of one store each:
    the harvest curves of several workers' stores cannot be put back in one order)."""
    written = []
    focus = reports.get(FOCUS) or []
    for base in BASELINES:
        other = reports.get(base) or []
        if len(focus) == 1 and len(other) == 1:
            target = folder / f"report-{FOCUS}-vs-{base}"
            write_reports([focus[0], other[0]], target)
            written.append(target / "index.html")
    return written
