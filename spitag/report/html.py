"""The report page: one self-contained ``index.html`` (inline CSS, no script) that shows
the PNG figures beside it, each with a short explanation and the numbers behind it.

Summary cells carry ``data-crawl`` and ``data-key`` attributes (the report.json key) so
that a test, or a script, can read a figure back without parsing prose.
"""

from __future__ import annotations

from datetime import datetime, timezone
from html import escape
from typing import TYPE_CHECKING, Any

from spitag.extract import SYNTAXES
from spitag.report.plots import SYNTAX_LABELS
from spitag.report.queries import META_SYNTAXES

if TYPE_CHECKING:
    from spitag.report.queries import CrawlReport

CSS = """
body { font: 15px/1.5 -apple-system, "Segoe UI", "DejaVu Sans", Helvetica, Arial, sans-serif;
       color: #1a202c; background: #f7fafc; margin: 0; }
main { max-width: 1180px; margin: 0 auto; padding: 24px 32px 48px; background: #fff; }
h1 { font-size: 26px; margin: 0 0 4px; }
h2 { font-size: 20px; margin: 36px 0 6px; padding-top: 8px; border-top: 1px solid #e2e8f0; }
h3 { font-size: 16px; margin: 20px 0 6px; }
.sub { color: #4a5568; margin: 0 0 16px; }
p.why { color: #2d3748; max-width: 900px; margin: 4px 0 12px; }
nav { font-size: 14px; margin: 8px 0 16px; }
nav a { margin-right: 14px; color: #2b6cb0; text-decoration: none; }
table { border-collapse: collapse; margin: 8px 0 16px; font-size: 14px; }
th, td { padding: 4px 12px; border-bottom: 1px solid #e2e8f0; text-align: right; }
th { background: #edf2f7; font-weight: 600; }
td.l, th.l { text-align: left; }
tr:nth-child(even) td { background: #fafcfe; }
td.better { color: #276749; } td.worse { color: #9b2c2c; }
p.headline { font-size: 18px; margin: 12px 0 4px; }
p.warn { background: #fffbea; border-left: 4px solid #d69e2e; padding: 6px 12px; max-width: 900px; }
table.summary td:first-child { text-align: left; color: #2d3748; }
img { max-width: 100%; border: 1px solid #e2e8f0; margin: 6px 0; }
.note { font-size: 13px; color: #4a5568; }
code { background: #edf2f7; padding: 0 4px; border-radius: 3px; font-size: 13px; }
"""


def _n(value: Any) -> str:
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        return f"{value:,.2f}"
    return escape(str(value))


def _na(value: Any) -> str:
    """A value of a depth the crawl never reached is "n/a", not a 0."""
    return "n/a" if value is None else _n(value)


def _duration(seconds: float | None) -> str:
    if seconds is None:
        return "—"
    whole = int(round(seconds))
    return f"{whole // 3600}:{whole % 3600 // 60:02d}:{whole % 60:02d}"


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value:+.1f} %"


LOWER_IS_BETTER = {"failed", "redirects"}  # summary rows where less is the better crawl


def _tone(value: float | None, key: str = "") -> str:
    """The cell's class: ``better`` or ``worse`` for A (not the sign: fewer failures is better)."""
    if value is None or value == 0:
        return ""
    return "better" if (value > 0) != (key in LOWER_IS_BETTER) else "worse"


def _signed(value: int | None) -> str:
    return "n/a" if value is None else f"{value:+,}"


def _figure(name: str, alt: str) -> str:
    return f'<img src="{escape(name)}" alt="{escape(alt)}" width="1100">'


SUMMARY_ROWS = (
    ("strategy", "scoring strategy (from the URLs' reasons)"),
    ("urls", "URLs requested"),
    ("pages", "pages fetched (2xx)"),
    ("failed", "failed (no response or status ≥ 400)"),
    ("redirects", "redirects (3xx)"),
    ("hosts_count", "hosts"),
    ("max_depth", "deepest level reached"),
    ("semantic_items", "semantic items"),
    ("mean_items_per_page", "semantic items per page (mean)"),
    ("meta_tags", "meta tags"),
    ("mean_meta_tags_per_page", "meta tags per page (mean)"),
    ("rich_pages", "pages with any semantic markup"),
    ("items_after_half", "semantic items after the first half of the URLs"),
    ("first_checked", "first fetch"),
    ("last_checked", "last fetch"),
    ("duration_seconds", "first to last fetch"),
)


def render(
    reports: list[CrawlReport],
    figures: dict[str, str],
    comparison: dict[str, Any] | None,
    store_url: str,
) -> str:
    """The whole page; ``figures`` maps a figure's role to its PNG file name."""
    a = reports[0]
    title = f"SpiTag crawl report — {a.crawl}" + (f" against {reports[1].crawl}" if comparison else "")
    when = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{escape(title)}</title><style>{CSS}</style></head><body><main>",
        f"<h1>{escape(title)}</h1>",
        f'<p class="sub">Store <code>{escape(store_url)}</code> · generated {when} · numbers also in '
        '<a href="report.json">report.json</a></p>',
        _nav(comparison is not None),
        _headline(reports, comparison),
        '<h2 id="harvest">Harvest curve</h2>',
        '<p class="why">Cumulative semantic items after each URL, in fetch order (the store\'s '
        "<code>url.checked</code>). The steeper the curve early on, the sooner the crawl reached "
        "the rich pages: with a page budget, the higher curve wins. The lower panel is the harvest "
        "rate so far: items collected divided by URLs fetched.</p>",
        _figure(figures["harvest"], "harvest curve"),
        _harvest_table(reports),
        '<h2 id="summary">Summary</h2>',
        '<p class="why">A <em>URL</em> is one requested address; a <em>page</em> is a URL that answered '
        "2xx. <em>Semantic items</em> count every syntax SpiTag reads (JSON-LD objects, microdata and "
        "microformat items, RDFa nodes, OpenGraph properties, Twitter cards, Dublin Core and other "
        "<code>&lt;meta&gt;</code> tags); <em>meta tags</em> are those carried by "
        "<code>&lt;meta&gt;</code> elements: OpenGraph, Twitter cards, Dublin Core and the other "
        "<code>&lt;meta&gt;</code> tags.</p>",
        _summary(reports, comparison),
    ]
    if comparison:
        parts += _comparison(comparison, reports[0], reports[1], figures)
    parts += [
        '<h2 id="depth">Semantic content per depth</h2>',
        '<p class="why">Depth is the number of links from a seed. Top: the items summed over the '
        "depth's pages (it grows with the number of pages fetched there). Bottom: the mean per page "
        "(black) and the richest single page (red, dotted). A focused crawl keeps the mean high as it "
        "goes deeper.</p>",
    ]
    for i, report in enumerate(reports):
        parts += [
            f"<h3>{escape(report.crawl)}</h3>" if len(reports) > 1 else "",
            _figure(figures[f"depth:{i}"], f"per-depth figure of {report.crawl}"),
            _depth_table(report),
        ]
    parts += [
        '<h2 id="syntax">Syntaxes</h2>',
        '<p class="why">How many items of each syntax the crawl found, and the share of fetched pages '
        "that carry at least one.</p>",
        _figure(figures["syntax"], "semantic items per syntax"),
        _syntax_table(reports),
        '<h2 id="distribution">Scores and priorities</h2>',
        '<p class="why">Left: the semantic score of each fetched page (the weighted sum of its items, '
        "<code>SPITAG_SYNTAX_WEIGHTS</code>, by default the item count). Right: the priority each URL "
        "had when the frontier gave it out (the seeds' apart: theirs is the strategy's seed value); its "
        "scale is the strategy's own (<code>bfs</code>: −depth; <code>opic</code>: cash that adds up "
        "across parents), so two strategies get a panel each.</p>",
        _figure(figures["distribution"], "score and priority histograms"),
        '<h2 id="hosts">Top hosts by semantic richness</h2>',
        '<p class="why">Hosts ranked by the mean semantic items per fetched page (ties: more items '
        "first). A host with a single rich page may rank high: read its page count too.</p>",
        _figure(figures["hosts"], "top hosts"),
    ]
    for report in reports:
        parts.append(_hosts_table(report, len(reports) > 1))
    parts += [
        '<p class="note">Made by <code>scrapy report</code>. Per-depth means divide by the pages '
        "(2xx) of that depth; percentages compare A with B as (A − B) / B · 100, “n/a” when B is 0.</p>",
        "</main></body></html>",
    ]
    return "\n".join(p for p in parts if p)


def _headline(reports: list[CrawlReport], comparison: dict[str, Any] | None) -> str:
    """The report's first words: which crawl found more, by how much, at equal URLs
    fetched (two crawls), or what one crawl found; and a warning when two crawls differ
    in size, so that their totals compare unequal amounts."""
    if comparison is None:
        r = reports[0]
        data = r.to_json(curves=False)
        richest = f"; the richest host: {escape(r.hosts[0].host)} ({r.hosts[0].mean:,.1f} items a page)" if r.hosts else ""
        return (f'<p class="headline" data-headline="one"><b>{escape(r.crawl)}</b> ({escape(r.strategy)}) fetched '
                f"{_n(data.get('urls'))} URLs ({_n(data.get('pages'))} pages) and found {_n(data.get('semantic_items'))} "
                f"semantic items, {_n(data.get('mean_items_per_page'))} a page{richest}.</p>")
    h = comparison["headline"]
    a, b = reports
    if h["more"] is None:
        words = f"<b>{escape(a.crawl)}</b> and <b>{escape(b.crawl)}</b> found as many semantic items"
    else:
        more, less = (a, b) if h["more"] == "a" else (b, a)
        ratio = (h["items_a"] / h["items_b"] if h["more"] == "a" else h["items_b"] / h["items_a"]) \
            if min(h["items_a"], h["items_b"]) else None
        by = f"{ratio:.2f}× as many" if ratio else "more"
        words = (f"<b>{escape(more.crawl)}</b> ({escape(more.strategy)}) found {by} semantic items as "
                 f"<b>{escape(less.crawl)}</b> ({escape(less.strategy)})")
    parts = [f'<p class="headline" data-headline="two">{words} in the first {h["urls"]:,} URLs each '
             f'({h["items_a"]:,} against {h["items_b"]:,}).</p>']
    if h["sizes_differ"]:
        parts.append(f'<p class="warn" data-warning="sizes">The crawls differ in size: {escape(a.crawl)} fetched '
                     f'{h["urls_a"]:,} URLs, {escape(b.crawl)} {h["urls_b"]:,}. Totals, per-depth sums and the '
                     "summary compare unequal amounts; the headline and the harvest curve compare them at equal "
                     "URLs fetched.</p>")
    return "\n".join(parts)


def _nav(compare: bool) -> str:
    links = [("harvest", "Harvest"), ("summary", "Summary")]
    if compare:
        links.append(("compare", "A against B"))
    links += [("depth", "Per depth"), ("syntax", "Syntaxes"),
              ("distribution", "Scores &amp; priorities"), ("hosts", "Hosts")]
    return "<nav>" + "".join(f'<a href="#{k}">{v}</a>' for k, v in links) + "</nav>"


def _summary(reports: list[CrawlReport], comparison: dict[str, Any] | None) -> str:
    head = "".join(f'<th>{escape(r.crawl)}{" (A)" if comparison and i == 0 else ""}'
                   f'{" (B)" if comparison and i == 1 else ""}</th>' for i, r in enumerate(reports))
    if comparison:
        head += "<th>A vs B</th>"
    rows = []
    data = [r.to_json(curves=False) for r in reports]
    for key, label in SUMMARY_ROWS:
        cells = "".join(
            f'<td data-crawl="{escape(r.crawl)}" data-key="{key}">'
            f'{_duration(d.get(key)) if key == "duration_seconds" else _n(d.get(key))}</td>'
            for r, d in zip(reports, data)
        )
        if comparison:
            va, vb = data[0].get(key), data[1].get(key)
            if key == "duration_seconds":
                cells += "<td></td>"
            elif isinstance(va, (int, float)) and isinstance(vb, (int, float)) and not isinstance(va, bool):
                d = (va - vb) / vb * 100 if vb else None
                cells += f'<td class="{_tone(d, key)}">{_pct(d)}</td>'
            else:
                cells += "<td></td>"
        rows.append(f"<tr><td>{escape(label)}</td>{cells}</tr>")
    return f'<table class="summary"><tr><th class="l">measure</th>{head}</tr>{"".join(rows)}</table>'


def _depth_table(report: CrawlReport) -> str:
    head = (
        "<tr><th>depth</th><th>URLs</th><th>pages</th>"
        "<th>semantic items: sum</th><th>mean</th><th>max</th>"
        "<th>meta tags: sum</th><th>mean</th><th>max</th></tr>"
    )
    rows = "".join(
        f'<tr data-crawl="{escape(report.crawl)}" data-depth="{d.depth}"><td>{d.depth}</td><td>{_n(d.urls)}</td>'
        f"<td>{_n(d.pages)}</td><td>{_n(d.semantic_sum)}</td><td>{_n(d.semantic_mean)}</td>"
        f"<td>{_n(d.semantic_max)}</td><td>{_n(d.meta_sum)}</td><td>{_n(d.meta_mean)}</td>"
        f"<td>{_n(d.meta_max)}</td></tr>"
        for d in report.depths
    )
    return f"<table>{head}{rows}</table>"


def _syntax_table(reports: list[CrawlReport]) -> str:
    head = "<tr><th class='l'>syntax</th>" + "".join(
        f"<th>{escape(r.crawl)}: items</th><th>pages with it</th>" for r in reports
    ) + "</tr>"
    rows = []
    for s in SYNTAXES:
        cells = "".join(
            f'<td data-crawl="{escape(r.crawl)}" data-syntax="{s}">{_n(r.syntaxes[s])}</td>'
            f"<td>{_n(r.syntax_pages[s])}"
            f"{f' ({r.syntax_pages[s] / r.pages:.0%})' if r.pages else ''}</td>"
            for r in reports
        )
        meta = " (meta tag)" if s in META_SYNTAXES else ""
        rows.append(f"<tr><td class='l'>{escape(SYNTAX_LABELS[s])}{meta}</td>{cells}</tr>")
    return f"<table>{head}{''.join(rows)}</table>"


def _harvest_table(reports: list[CrawlReport]) -> str:
    keys = list(reports[0].harvest_points) or ["100%"]
    head = "<tr><th class='l'>items collected after … of the URLs</th>" + "".join(
        f"<th>{escape(k)}</th>" for k in keys
    ) + "</tr>"
    rows = "".join(
        f"<tr><td class='l'>{escape(r.crawl)} ({escape(r.strategy)})</td>"
        + "".join(f"<td>{_n(r.harvest_points.get(k))}</td>" for k in keys)
        + "</tr>"
        for r in reports
    )
    return f"<table>{head}{rows}</table>"


def _hosts_table(report: CrawlReport, titled: bool) -> str:
    caption = f"<h3>{escape(report.crawl)}</h3>" if titled else ""
    rows = "".join(
        f"<tr><td class='l'>{escape(h.host)}</td><td>{_n(h.pages)}</td><td>{_n(h.items)}</td>"
        f"<td>{_n(h.mean)}</td></tr>"
        for h in report.hosts
    )
    return (
        f"{caption}<table><tr><th class='l'>host</th><th>pages</th><th>semantic items</th>"
        f"<th>per page</th></tr>{rows}</table>"
    )


def _comparison(cmp: dict[str, Any], a: CrawlReport, b: CrawlReport, figures: dict[str, str]) -> list[str]:
    parts = [
        '<h2 id="compare">A against B</h2>',
        f'<p class="why">The SpiTag thesis\' comparison of two crawls: <b>A</b> = {escape(a.crawl)} '
        f"({escape(a.strategy)}), <b>B</b> = {escape(b.crawl)} ({escape(b.strategy)}). Per depth, the "
        "summed meta tags and their difference, absolute (A − B) and relative ((A − B) / B), and the "
        "difference of the mean per page; then each syntax at the last level both crawls reached. "
        "Positive: A found more.</p>",
        _figure(figures["compare-depth"], "A against B per depth"),
    ]
    for key, what in (("meta", "Meta tags"), ("semantic", "All semantic items")):
        head = (
            f"<tr><th>depth</th><th>pages A</th><th>pages B</th><th>{what}: A</th><th>B</th>"
            "<th>A − B</th><th>(A − B) / B</th><th>mean A</th><th>mean B</th><th>mean: (A − B) / B</th></tr>"
        )
        rows = "".join(
            f'<tr data-compare="{key}" data-depth="{r["depth"]}"><td>{r["depth"]}</td>'
            f"<td>{_na(r['pages_a'])}</td><td>{_na(r['pages_b'])}</td>"
            f"<td>{_na(r[f'{key}_a'])}</td><td>{_na(r[f'{key}_b'])}</td>"
            f"<td class='{_tone(r[f'{key}_diff'])}'>{_signed(r[f'{key}_diff'])}</td>"
            f"<td class='{_tone(r[f'{key}_diff_pct'])}'>{_pct(r[f'{key}_diff_pct'])}</td>"
            f"<td>{_na(r[f'{key}_mean_a'])}</td><td>{_na(r[f'{key}_mean_b'])}</td>"
            f"<td class='{_tone(r[f'{key}_mean_diff_pct'])}'>{_pct(r[f'{key}_mean_diff_pct'])}</td></tr>"
            for r in cmp["depths"]
        )
        parts += [f"<h3>{what} per depth</h3>", f"<table>{head}{rows}</table>"]
    level = cmp["last_level"]
    parts += [
        f"<h3>Per syntax at depth {level if level is not None else '—'} (the last level both reached)</h3>",
        _figure(figures["compare-syntax"], "per syntax at the last level"),
    ]
    head = "<tr><th class='l'>syntax</th><th>A</th><th>B</th><th>A − B</th><th>(A − B) / B</th></tr>"
    rows = "".join(
        f"<tr data-compare='last-level' data-syntax='{r['syntax']}'><td class='l'>{escape(SYNTAX_LABELS[r['syntax']])}</td>"
        f"<td>{_n(r['a'])}</td><td>{_n(r['b'])}</td><td class='{_tone(r['diff'])}'>{r['diff']:+,}</td>"
        f"<td class='{_tone(r['diff_pct'])}'>{_pct(r['diff_pct'])}</td></tr>"
        for r in cmp["last_level_syntaxes"]
    )
    parts.append(f"<table>{head}{rows}</table>")
    return parts
