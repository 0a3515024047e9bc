"""The report's figures: matplotlib ``Figure`` objects saved as PNG (Agg, no pyplot).

No global state (pyplot's figure manager) and no display: each function builds one
``Figure`` and ``save`` writes it. Colours stay the same across figures: the first
crawl blue, the second orange; semantic items blue-ish, meta tags teal.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from spitag.extract import SYNTAXES

if TYPE_CHECKING:
    from spitag.report.queries import CrawlReport

logger = logging.getLogger(__name__)

CRAWL_COLOURS = ("#2b6cb0", "#dd6b20", "#2f855a", "#805ad5")
SEMANTIC = "#2b6cb0"
META = "#319795"
MAX_COLOUR = "#c53030"
DPI = 110
SYNTAX_LABELS = {
    "json-ld": "JSON-LD", "microdata": "Microdata", "rdfa": "RDFa", "opengraph": "OpenGraph",
    "twitter": "Twitter cards", "meta": "other <meta>", "microformat": "Microformats",
    "dublincore": "Dublin Core",
}


def save(fig: Figure, path: Path) -> Path:
    fig.savefig(path, dpi=DPI, facecolor="white")
    logger.debug("wrote %s", path)
    return path


def _figure(width: float, height: float) -> Figure:
    fig = Figure(figsize=(width, height), layout="constrained")
    return fig


def _style(ax: Any) -> None:
    ax.spines["top"].set_visible(False)
    ax.spines["right"].set_visible(False)
    ax.grid(axis="y", color="#e2e8f0", linewidth=0.8)
    ax.set_axisbelow(True)


def _empty(ax: Any, text: str) -> None:
    ax.text(0.5, 0.5, text, ha="center", va="center", transform=ax.transAxes, color="#718096")
    ax.set_xticks([])
    ax.set_yticks([])


def _label(crawl: str, strategy: str) -> str:
    return f"{crawl} ({strategy})"


# -- one crawl ------------------------------------------------------------------------


def depth_figure(report: CrawlReport) -> Figure:
    """Per depth, for semantic items and for meta tags: the sum over the depth's pages
    (bars, top row), the mean per page and the richest page (lines, bottom row)."""
    fig = _figure(11, 6.4)
    axes = fig.subplots(2, 2, sharex="col", height_ratios=(1.4, 1))
    depths = [d for d in report.depths if d.pages]
    for col, (key, title, colour) in enumerate((
        ("semantic", "All semantic items", SEMANTIC),
        ("meta", "Meta tags (OpenGraph, Twitter, Dublin Core, other <meta>)", META),
    )):
        top, bottom = axes[0][col], axes[1][col]
        if not depths:
            _empty(top, "no pages fetched")
            _empty(bottom, "")
            continue
        xs = list(range(len(depths)))
        sums = [getattr(d, f"{key}_sum") for d in depths]
        means = [getattr(d, f"{key}_mean") for d in depths]
        maxes = [getattr(d, f"{key}_max") for d in depths]
        bars = top.bar(xs, sums, color=colour, alpha=0.85, width=0.6)
        top.bar_label(bars, labels=[f"{v:,}" for v in sums], fontsize=8, padding=2)
        top.set_ylim(0, max(max(sums), 1) * 1.15)
        top.set_ylabel("items, summed over\nthe depth's pages")
        top.set_title(title, fontsize=10)
        bottom.plot(xs, maxes, "v:", color=MAX_COLOUR, label="max on one page")
        bottom.plot(xs, means, "o-", color="#1a202c", label="mean per page")
        for x, m in zip(xs, means):
            bottom.annotate(f"{m:.2f}", (x, m), textcoords="offset points", xytext=(0, -13), ha="center",
                            fontsize=8)
        bottom.set_ylim(0, max(max(maxes), 1) * 1.2)
        bottom.set_ylabel("items per page")
        if len(depths) <= 8:
            bottom.set_xticks(xs, [f"{d.depth}\n{d.pages:,} pages" for d in depths], fontsize=8)
            bottom.set_xlabel("depth (links from a seed) and pages fetched there")
        else:  # (the pages per depth are in the table below the figure)
            bottom.set_xticks(xs, [str(d.depth) for d in depths], fontsize=8)
            bottom.set_xlabel("depth (links from a seed)")
        bottom.legend(fontsize=8, loc="lower right", frameon=False, ncols=2)
        for ax in (top, bottom):
            _style(ax)
    fig.suptitle(f"Semantic content per depth — crawl {report.crawl}", fontsize=12)
    return fig


def syntax_figure(reports: list[CrawlReport]) -> Figure:
    """Items per syntax (bars, one per crawl) with the share of pages carrying it."""
    fig = _figure(11, 4.6)
    ax = fig.subplots()
    n = len(reports)
    height = 0.8 / n
    ys = list(range(len(SYNTAXES)))
    top = max((max(r.syntaxes.values()) for r in reports), default=0)
    for i, report in enumerate(reports):
        values = [report.syntaxes[s] for s in SYNTAXES]
        pos = [y - 0.4 + height * (i + 0.5) for y in ys]
        bars = ax.barh(pos, values, height=height * 0.92, color=CRAWL_COLOURS[i % 4],
                       label=_label(report.crawl, report.strategy))
        labels = [
            f"{v:,}  ({report.syntax_pages[s] / report.pages:.0%} of pages)" if report.pages else f"{v:,}"
            for v, s in zip(values, SYNTAXES)
        ]
        ax.bar_label(bars, labels=labels, fontsize=8, padding=3)
    ax.set_yticks(ys, [SYNTAX_LABELS[s] for s in SYNTAXES])
    ax.invert_yaxis()
    ax.set_xlim(0, max(top, 1) * 1.35)
    ax.set_xlabel("semantic items found (all pages of the crawl)")
    ax.grid(axis="x", color="#e2e8f0", linewidth=0.8)
    ax.set_axisbelow(True)
    ax.spines["top"].set_visible(False)
    ax.spines["right"].set_visible(False)
    ax.legend(fontsize=8, loc="lower right", frameon=False)
    ax.set_title("Semantic items per syntax", fontsize=12)
    return fig


def harvest_figure(reports: list[CrawlReport]) -> Figure:
    """Cumulative semantic items against URLs fetched, and the harvest rate so far
    (items collected / URLs fetched): how soon the crawl reached the rich pages."""
    fig = _figure(11, 6.2)
    top, bottom = fig.subplots(2, 1, sharex=True, height_ratios=(2.2, 1))
    for i, report in enumerate(reports):
        ys = report.harvest
        xs = list(range(1, len(ys) + 1))
        colour = CRAWL_COLOURS[i % 4]
        top.plot(xs, ys, color=colour, linewidth=2, label=_label(report.crawl, report.strategy))
        if ys:
            top.annotate(f"{ys[-1]:,}", (xs[-1], ys[-1]), textcoords="offset points", xytext=(4, 0),
                         fontsize=8, color=colour, va="center")
        # harvest rate so far: items collected / URLs fetched, after each URL
        bottom.plot(xs, [y / x for x, y in zip(xs, ys)], color=colour, linewidth=1.5, label=report.crawl)
    top.set_ylabel("semantic items collected\n(cumulative)")
    top.set_title("Harvest: semantic items collected as the crawl proceeds", fontsize=12)
    top.legend(fontsize=9, loc="upper left", frameon=False)
    top.yaxis.set_major_locator(MaxNLocator(integer=True))
    bottom.set_ylabel("items per URL\nso far (mean)")
    bottom.set_xlabel("URLs fetched, in fetch order")
    bottom.legend(fontsize=8, loc="lower right", frameon=False, ncols=len(reports))
    for ax in (top, bottom):
        _style(ax)
        ax.set_xlim(left=0)
        ax.set_ylim(bottom=0)
    return fig


def distribution_figure(reports: list[CrawlReport]) -> Figure:
    """Histograms: semantic score of the pages, and the priority URLs (but the seeds) were
    fetched with: one panel per crawl when their strategies differ, each on its own
    strategy's scale."""
    apart = len({r.strategy for r in reports}) > 1
    panels: list[tuple[str, str, str, list[int]]] = [
        ("scores", "semantic score of a page (Σ weight · count)", "Page scores", list(range(len(reports))))]
    if apart:
        panels += [("priorities", f"priority ({r.strategy}'s scale)", f"Frontier priorities — {r.crawl}", [i])
                   for i, r in enumerate(reports)]
    else:
        panels.append(("priorities", "priority a URL was fetched with (the strategy's scale)",
                       "Frontier priorities (seeds apart)", list(range(len(reports)))))
    fig = _figure(11 if len(panels) == 2 else 14, 4.2)
    axes = fig.subplots(1, len(panels))
    for ax, (attr, xlabel, title, which) in zip(axes, panels):
        values = [v for i in which for v in getattr(reports[i], attr)]
        if not values:
            _empty(ax, "no values")
            continue
        lo, hi = min(values), max(values)
        bins: Any = 30 if hi > lo else [lo - 0.5, lo + 0.5]
        for i in which:
            report = reports[i]
            data = getattr(report, attr)
            if data:
                ax.hist(data, bins=bins, range=(lo, hi) if hi > lo else None, histtype="stepfilled",
                        alpha=0.35 if len(which) > 1 else 0.8, color=CRAWL_COLOURS[i % 4],
                        edgecolor=CRAWL_COLOURS[i % 4], label=_label(report.crawl, report.strategy))
        ax.set_xlabel(xlabel, fontsize=9)
        ax.set_ylabel("pages" if attr == "scores" else "URLs")
        ax.set_title(title, fontsize=11)
        ax.legend(fontsize=8, frameon=False)
        _style(ax)
    return fig


def hosts_figure(reports: list[CrawlReport]) -> Figure:
    """Top hosts by semantic richness (mean items per page), one panel per crawl."""
    rows = max((len(r.hosts) for r in reports), default=1)
    fig = _figure(11 if len(reports) == 1 else 13, max(3.0, 0.42 * rows + 1.4))
    axes = fig.subplots(1, len(reports), squeeze=False)[0]
    for i, (ax, report) in enumerate(zip(axes, reports)):
        if not report.hosts:
            _empty(ax, "no pages fetched")
            continue
        names = [h.host for h in report.hosts]
        means = [h.mean for h in report.hosts]
        bars = ax.barh(range(len(names)), means, color=CRAWL_COLOURS[i % 4], alpha=0.85)
        ax.bar_label(bars, labels=[f"{h.mean:.1f}  ({h.pages:,} pages, {h.items:,} items)" for h in report.hosts],
                     fontsize=8, padding=3)
        ax.set_yticks(range(len(names)), names, fontsize=8)
        ax.invert_yaxis()
        ax.set_xlim(0, max(max(means), 1) * 1.6)
        ax.set_xlabel("semantic items per page (mean)")
        ax.set_title(f"{report.crawl}", fontsize=10)
        ax.grid(axis="x", color="#e2e8f0", linewidth=0.8)
        ax.set_axisbelow(True)
        ax.spines["top"].set_visible(False)
        ax.spines["right"].set_visible(False)
    fig.suptitle("Top hosts by semantic richness", fontsize=12)
    return fig


# -- two crawls -----------------------------------------------------------------------


def compare_depth_figure(cmp: dict[str, Any], a: CrawlReport, b: CrawlReport) -> Figure:
    """Meta tags and semantic items per depth, A beside B: sums (with Δ%) and means."""
    fig = _figure(12, 7.4)
    axes = fig.subplots(2, 2)
    rows = cmp["depths"]
    xs = list(range(len(rows)))
    for r, (key, what) in enumerate((("meta", "meta tags"), ("semantic", "semantic items"))):
        ax_sum, ax_mean = axes[r]
        # a depth one crawl never reached: no bar, no point, "n/a" (not a 0)
        sa = [row[f"{key}_a"] for row in rows]
        sb = [row[f"{key}_b"] for row in rows]
        ax_sum.bar([x - 0.2 for x, v in zip(xs, sa) if v is not None], [v for v in sa if v is not None], 0.4,
                   color=CRAWL_COLOURS[0], label=_label(a.crawl, a.strategy))
        ax_sum.bar([x + 0.2 for x, v in zip(xs, sb) if v is not None], [v for v in sb if v is not None], 0.4,
                   color=CRAWL_COLOURS[1], label=_label(b.crawl, b.strategy))
        for x, row in zip(xs, rows):
            d = row[f"{key}_diff_pct"]
            values = [v for v in (row[f"{key}_a"], row[f"{key}_b"]) if v is not None]
            top = max(values, default=0)
            text = ("none" if top == 0 and len(values) == 2 else "n/a") if d is None else f"{d:+.0f} %"
            ax_sum.annotate(text, (x, top), textcoords="offset points", xytext=(0, 3), ha="center", fontsize=8,
                            color="#2d3748")
        ax_sum.set_ylim(0, max([v for v in sa + sb if v is not None] + [1]) * 1.18)
        ax_sum.set_ylabel(f"{what} (sum)")
        ax_sum.set_title(f"Summed {what} per depth (labels: (A − B) / B)", fontsize=10)
        ma = [row[f"{key}_mean_a"] for row in rows]
        mb = [row[f"{key}_mean_b"] for row in rows]
        ax_mean.plot([x for x, v in zip(xs, ma) if v is not None], [v for v in ma if v is not None], "o-",
                     color=CRAWL_COLOURS[0], label=a.crawl)
        ax_mean.plot([x for x, v in zip(xs, mb) if v is not None], [v for v in mb if v is not None], "s--",
                     color=CRAWL_COLOURS[1], label=b.crawl)
        ax_mean.set_ylabel(f"{what} per page (mean)")
        ax_mean.set_title(f"Mean {what} per page, per depth", fontsize=10)
        ax_mean.set_ylim(bottom=0, top=max([v for v in ma + mb if v is not None] + [1]) * 1.15)
        for ax in (ax_sum, ax_mean):
            ax.set_xticks(xs, [str(row["depth"]) for row in rows])
            ax.set_xlabel("depth")
            ax.legend(fontsize=8, frameon=False)
            _style(ax)
    fig.suptitle(f"{a.crawl} (A) against {b.crawl} (B), per depth", fontsize=12)
    return fig


def compare_syntax_figure(cmp: dict[str, Any], a: CrawlReport, b: CrawlReport) -> Figure:
    """Items per syntax at the last level both crawls reached, A beside B, with Δ%."""
    fig = _figure(11, 4.4)
    ax = fig.subplots()
    rows = cmp["last_level_syntaxes"]
    if not rows:
        _empty(ax, "the crawls share no depth")
        return fig
    xs = list(range(len(rows)))
    va = [row["a"] for row in rows]
    vb = [row["b"] for row in rows]
    ax.bar([x - 0.2 for x in xs], va, 0.4, color=CRAWL_COLOURS[0], label=_label(a.crawl, a.strategy))
    ax.bar([x + 0.2 for x in xs], vb, 0.4, color=CRAWL_COLOURS[1], label=_label(b.crawl, b.strategy))
    for x, row in zip(xs, rows):
        d = row["diff_pct"]
        text = ("none" if row["a"] == row["b"] == 0 else "n/a") if d is None else f"{d:+.0f} %"
        ax.annotate(text, (x, max(row["a"], row["b"])), textcoords="offset points", xytext=(0, 3),
                    ha="center", fontsize=8)
    ax.set_xticks(xs, [SYNTAX_LABELS[row["syntax"]] for row in rows], fontsize=9)
    ax.set_ylim(0, max(va + vb + [1]) * 1.18)
    ax.set_ylabel("semantic items (sum)")
    ax.set_title(f"Per syntax at depth {cmp['last_level']}, the last level both crawls reached"
                 " (labels: (A − B) / B)", fontsize=11)
    ax.legend(fontsize=8, frameon=False)
    _style(ax)
    return fig
