"""``scrapy report``: a crawl (or two, side by side) as an HTML page with PNG figures.

``queries`` reads the numbers from the store, ``plots`` draws them, ``html`` lays them
out; ``write_report`` puts ``index.html``, the PNGs and ``report.json`` in one folder.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from spitag.report import html, plots, queries

if TYPE_CHECKING:
    from spitag.store import Store

logger = logging.getLogger(__name__)

FIGURE_FILES = ("depth.png", "depth-b.png", "syntax.png", "harvest.png", "distribution.png", "hosts.png",
                "compare-depth.png", "compare-syntax.png")


class MissingCrawlError(LookupError):
    """The store has no URL of the named crawl."""


def write_report(store: Store, crawl: str, out_dir: Path, against: str | None = None,
                 store_url: str = "") -> dict[str, Any]:
    """Write ``out_dir/index.html``, its PNGs and ``report.json``; return the JSON data."""
    names = [crawl] + ([against] if against else [])
    reports = []
    for name in names:
        report = queries.load(store, name)
        if report is None:
            known = ", ".join(f"{c} ({n} URLs)" for c, n in store.crawls()) or "none"
            raise MissingCrawlError(f"crawl {name!r} has no URL in the store; crawls there: {known}")
        reports.append(report)
    return write_reports(reports, out_dir, store_url)


def write_reports(reports: list[queries.CrawlReport], out_dir: Path, store_url: str = "") -> dict[str, Any]:
    """``write_report`` for crawls already loaded (one, or two side by side: A against
    B), wherever they were stored."""
    names = [r.crawl for r in reports]
    comparison = queries.compare(reports[0], reports[1]) if len(reports) > 1 else None
    out_dir.mkdir(parents=True, exist_ok=True)
    for stale in FIGURE_FILES:  # a folder reused: no figure of an earlier report lingers
        (out_dir / stale).unlink(missing_ok=True)
    figures: dict[str, str] = {}

    def draw(role: str, file: str, figure: Any) -> None:
        plots.save(figure, out_dir / file)
        figures[role] = file

    for i, report in enumerate(reports):
        draw(f"depth:{i}", "depth.png" if i == 0 else "depth-b.png", plots.depth_figure(report))
    draw("syntax", "syntax.png", plots.syntax_figure(reports))
    draw("harvest", "harvest.png", plots.harvest_figure(reports))
    draw("distribution", "distribution.png", plots.distribution_figure(reports))
    draw("hosts", "hosts.png", plots.hosts_figure(reports))
    logger.debug("figures of %s written to %s", ", ".join(names), out_dir)
    if comparison is not None:
        draw("compare-depth", "compare-depth.png", plots.compare_depth_figure(comparison, *reports))
        draw("compare-syntax", "compare-syntax.png", plots.compare_syntax_figure(comparison, *reports))
    page = html.render(reports, figures, comparison, store_url)
    (out_dir / "index.html").write_text(page, encoding="utf-8")
    data = {
        "crawls": [r.to_json() for r in reports],
        "comparison": comparison,
        "figures": figures,
        "definitions": {
            "meta_tags": list(queries.META_SYNTAXES),
            "harvest": "cumulative semantic items after each URL, in fetch order (url.checked, url)",
            "diff_pct": "(A - B) / B * 100, null when B is 0",
        },
    }
    (out_dir / "report.json").write_text(json.dumps(data, indent=1, default=str), encoding="utf-8")
    return data
