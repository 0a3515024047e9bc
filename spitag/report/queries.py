"""What a report says of a crawl, read from the store (SQLite or PostgreSQL).

Every figure of ``scrapy report`` comes from here, so the tests can check them against
their own SQL. The SQL is plain and portable (``?`` placeholders, ``CASE``,
``COALESCE``, no JSON functions); the ``semantic`` JSON counts are parsed in Python.

Units and conventions:

* a *URL* is one ``url`` row of the crawl (one requested URL, whatever came back);
  a *page* is a URL whose response was 2xx (it has a ``page_id``). A URL counts the
  semantic items of the content it served, so two URLs serving the same bytes both
  count them (that is what each fetch brought).
* *semantic items* = ``page.semantic_total``, all eight syntaxes
  (``spitag.extract.SYNTAXES``); *meta tags* = the items carried by ``<meta>``
  elements: OpenGraph, Twitter cards, Dublin Core and the other ``<meta>`` tags
  (``META_SYNTAXES``).
* per-depth *mean* = sum over the depth's pages / number of pages at that depth;
  *max* = the richest page there.
* the *harvest curve*: after the k-th URL in fetch order (``url.checked``, then the
  URL), the semantic items collected so far.
"""

from __future__ import annotations

import json
import math
from collections import Counter, defaultdict
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from spitag.extract import SYNTAXES

if TYPE_CHECKING:
    from spitag.store import Store

META_SYNTAXES = ("opengraph", "twitter", "dublincore", "meta")

SUMMARY_SQL = (
    "SELECT COUNT(*), COUNT(u.page_id),"
    " SUM(CASE WHEN u.status IS NULL OR u.status >= 400 THEN 1 ELSE 0 END),"
    " SUM(CASE WHEN u.status >= 300 AND u.status < 400 THEN 1 ELSE 0 END),"
    " COALESCE(SUM(p.semantic_total), 0),"
    " SUM(CASE WHEN p.semantic_total > 0 THEN 1 ELSE 0 END),"
    " MAX(u.depth), MIN(u.checked), MAX(u.checked)"
    " FROM url u LEFT JOIN page p ON p.id = u.page_id WHERE u.crawl = ?"
)

DEPTH_SQL = (
    "SELECT u.depth, COUNT(*), COUNT(u.page_id), COALESCE(SUM(p.semantic_total), 0),"
    " COALESCE(MAX(p.semantic_total), 0)"
    " FROM url u LEFT JOIN page p ON p.id = u.page_id WHERE u.crawl = ?"
    " GROUP BY u.depth ORDER BY u.depth"
)

# One row per URL in fetch order: the harvest curve, the syntaxes, hosts, priorities.
ROWS_SQL = (
    "SELECT u.url, u.depth, u.status, u.priority, u.reason, u.page_id,"
    " p.semantic_total, p.score, p.semantic"
    " FROM url u LEFT JOIN page p ON p.id = u.page_id WHERE u.crawl = ?"
    " ORDER BY u.checked, u.url"
)

@dataclass
class Depth:
    depth: int
    urls: int
    pages: int
    semantic_sum: int
    semantic_mean: float
    semantic_max: int
    meta_sum: int = 0
    meta_mean: float = 0.0
    meta_max: int = 0
    syntaxes: dict[str, int] = field(default_factory=dict)  # items per syntax at this depth


@dataclass
class Host:
    host: str
    pages: int
    items: int
    mean: float  # semantic items per page


@dataclass
class CrawlReport:
    """Everything the report shows of one crawl (``asdict`` is its report.json part)."""

    crawl: str
    strategies: dict[str, int]  # strategy named in the URLs' reasons → URLs
    urls: int
    pages: int
    failed: int  # no response, or status >= 400
    redirects: int
    semantic_items: int
    meta_tags: int
    rich_pages: int  # pages with at least one semantic item
    max_depth: int
    first_checked: str | None
    last_checked: str | None
    hosts_count: int  # distinct hosts among the URLs
    depths: list[Depth]
    syntaxes: dict[str, int]  # items per syntax, whole crawl
    syntax_pages: dict[str, int]  # pages carrying each syntax
    harvest: list[int]  # cumulative semantic items after each URL, fetch order
    harvest_points: dict[str, int]  # items after 10 %, 25 %, 50 %, 75 %, 100 % of the URLs
    priorities: list[float]  # priority each fetched URL but the seeds was ordered by
    scores: list[float]  # semantic score of each page
    hosts: list[Host]  # by richness, best first

    @property
    def strategy(self) -> str:
        return ", ".join(s for s, _ in Counter(self.strategies).most_common()) or "unknown"

    @property
    def mean_items(self) -> float:
        return self.semantic_items / self.pages if self.pages else 0.0

    @property
    def mean_meta(self) -> float:
        return self.meta_tags / self.pages if self.pages else 0.0

    def depth(self, level: int) -> Depth | None:
        return next((d for d in self.depths if d.depth == level), None)

    def to_json(self, curves: bool = True) -> dict[str, Any]:
        data = asdict(self)
        data["strategy"] = self.strategy
        data["mean_items_per_page"] = self.mean_items
        data["mean_meta_tags_per_page"] = self.mean_meta
        data["items_after_half"] = self.harvest_points.get("50%")
        data["duration_seconds"] = _seconds_between(self.first_checked, self.last_checked)
        if not curves:
            for key in ("harvest", "priorities", "scores"):
                data.pop(key)
        return data


def load(store: Store, crawl: str, top_hosts: int = 15) -> CrawlReport | None:
    """The report of one crawl, or None when the store has no URL of it."""
    row = store.query(SUMMARY_SQL, (crawl,))[0]
    urls = int(row[0] or 0)
    if urls == 0:
        return None
    pages, failed, redirects, items, rich, max_depth = (int(v or 0) for v in row[1:7])
    depths = {
        int(d): Depth(
            depth=int(d), urls=int(n), pages=int(p), semantic_sum=int(s),
            semantic_mean=int(s) / int(p) if p else 0.0, semantic_max=int(m),
        )
        for d, n, p, s, m in store.query(DEPTH_SQL, (crawl,))
    }
    syntaxes: Counter[str] = Counter({s: 0 for s in SYNTAXES})
    syntax_pages: Counter[str] = Counter({s: 0 for s in SYNTAXES})
    by_depth: dict[int, Counter[str]] = defaultdict(Counter)
    meta_max: dict[int, int] = defaultdict(int)
    hosts: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    all_hosts: set[str] = set()
    strategies: Counter[str] = Counter()
    harvest: list[int] = []
    priorities: list[float] = []
    scores: list[float] = []
    collected = 0
    for url, depth, _status, priority, reason, page_id, total, score, semantic in store.query(
        ROWS_SQL, (crawl,)
    ):
        all_hosts.add(_host(url))
        name = _strategy(reason)
        if name:
            strategies[name] += 1
        if priority is not None and math.isfinite(float(priority)) and depth:  # (a seed's is apart)
            priorities.append(float(priority))
        if page_id is not None:
            total = int(total or 0)
            collected += total
            counts = _counts(semantic)
            depth = int(depth)
            by_depth[depth].update(counts)
            meta = sum(counts.get(s, 0) for s in META_SYNTAXES)
            meta_max[depth] = max(meta_max[depth], meta)
            for syntax, n in counts.items():
                if n:
                    syntaxes[syntax] += n
                    syntax_pages[syntax] += 1
            scores.append(float(score or 0.0))
            stats = hosts[_host(url)]
            stats[0] += 1
            stats[1] += total
        harvest.append(collected)
    for level, d in depths.items():
        counts = by_depth.get(level, Counter())
        d.syntaxes = {s: int(counts.get(s, 0)) for s in SYNTAXES}
        d.meta_sum = sum(d.syntaxes[s] for s in META_SYNTAXES)
        d.meta_mean = d.meta_sum / d.pages if d.pages else 0.0
        d.meta_max = meta_max.get(level, 0)
    ranked = sorted(
        (Host(h, p, i, i / p) for h, (p, i) in hosts.items()),
        key=lambda h: (-h.mean, -h.items, h.host),
    )
    return CrawlReport(
        crawl=crawl,
        strategies=dict(strategies.most_common()),
        urls=urls,
        pages=pages,
        failed=failed,
        redirects=redirects,
        semantic_items=items,
        meta_tags=sum(syntaxes[s] for s in META_SYNTAXES),
        rich_pages=rich,
        max_depth=max_depth,
        first_checked=_text(row[7]),
        last_checked=_text(row[8]),
        hosts_count=len(all_hosts),
        depths=[depths[k] for k in sorted(depths)],
        syntaxes={s: int(syntaxes[s]) for s in SYNTAXES},
        syntax_pages={s: int(syntax_pages[s]) for s in SYNTAXES},
        harvest=harvest,
        harvest_points=harvest_points(harvest),
        priorities=priorities,
        scores=scores,
        hosts=ranked[:top_hosts],
    )


def harvest_points(harvest: list[int]) -> dict[str, int]:
    """Items collected after 10/25/50/75/100 % of the URLs: ``harvest[ceil(n·q) − 1]``."""
    n = len(harvest)
    if not n:
        return {}
    return {f"{int(q * 100)}%": harvest[max(math.ceil(n * q), 1) - 1] for q in (0.1, 0.25, 0.5, 0.75, 1.0)}


# -- two crawls side by side (the SpiTag thesis' comparison) ---------------------------


def pct(a: float, b: float) -> float | None:
    """``(a − b) / b · 100``: how much A is above (or below) B, in % of B; None if B = 0."""
    return (a - b) / b * 100.0 if b else None


def compare(a: CrawlReport, b: CrawlReport) -> dict[str, Any]:
    """A against B: per depth, per syntax at the last level both reached, and overall.

    * per depth: summed meta tags (and semantic items) of A and B, ``Δ = A − B`` and
      ``Δ% = (A − B) / B · 100``; the per-depth means and ``Δmean% = (mean_A − mean_B)
      / mean_B · 100``;
    * ``last_level`` = the deepest depth both crawls reached; per syntax there: A, B,
      Δ and Δ%.
    """
    levels = sorted({d.depth for d in a.depths} | {d.depth for d in b.depths})
    rows = []
    for level in levels:
        da, db = a.depth(level), b.depth(level)
        # a depth one crawl never reached has no value (None: "n/a"), not 0
        row: dict[str, Any] = {"depth": level, "pages_a": da.pages if da else None, "pages_b": db.pages if db else None}
        for key in ("meta", "semantic"):
            sa = getattr(da, f"{key}_sum") if da else None
            sb = getattr(db, f"{key}_sum") if db else None
            ma = getattr(da, f"{key}_mean") if da else None
            mb = getattr(db, f"{key}_mean") if db else None
            both = da is not None and db is not None
            row.update({
                f"{key}_a": sa, f"{key}_b": sb, f"{key}_diff": sa - sb if both else None,
                f"{key}_diff_pct": pct(sa, sb) if both else None,
                f"{key}_mean_a": ma, f"{key}_mean_b": mb, f"{key}_mean_diff_pct": pct(ma, mb) if both else None,
            })
        rows.append(row)
    common = [d.depth for d in a.depths if b.depth(d.depth) is not None]
    last = max(common) if common else None
    per_syntax = []
    if last is not None:
        la, lb = a.depth(last), b.depth(last)
        for s in SYNTAXES:
            va, vb = la.syntaxes.get(s, 0), lb.syntaxes.get(s, 0)
            per_syntax.append({"syntax": s, "a": va, "b": vb, "diff": va - vb, "diff_pct": pct(va, vb)})
    overall = [
        {"syntax": s, "a": a.syntaxes[s], "b": b.syntaxes[s], "diff": a.syntaxes[s] - b.syntaxes[s],
         "diff_pct": pct(a.syntaxes[s], b.syntaxes[s])}
        for s in SYNTAXES
    ]
    return {
        "a": a.crawl,
        "b": b.crawl,
        "headline": headline(a, b),
        "depths": rows,
        "last_level": last,
        "last_level_syntaxes": per_syntax,
        "syntaxes": overall,
        "semantic_items": {"a": a.semantic_items, "b": b.semantic_items,
                           "diff": a.semantic_items - b.semantic_items,
                           "diff_pct": pct(a.semantic_items, b.semantic_items)},
        "meta_tags": {"a": a.meta_tags, "b": b.meta_tags, "diff": a.meta_tags - b.meta_tags,
                      "diff_pct": pct(a.meta_tags, b.meta_tags)},
    }


SIZES_DIFFER = 0.10  # URL counts further apart than this: the totals compare unequal crawls


def headline(a: CrawlReport, b: CrawlReport) -> dict[str, Any]:
    """Which crawl found more semantic items at equal URLs fetched (the first ``urls`` of
    each, ``urls`` = the smaller crawl's count), by how much; and whether the crawls
    differ in size, so that their totals compare unequal amounts."""
    n = min(len(a.harvest), len(b.harvest))
    items_a = a.harvest[n - 1] if n else 0
    items_b = b.harvest[n - 1] if n else 0
    bigger = max(len(a.harvest), len(b.harvest))
    return {
        "urls": n, "items_a": items_a, "items_b": items_b, "diff_pct": pct(items_a, items_b),
        "more": "a" if items_a > items_b else "b" if items_b > items_a else None,
        "urls_a": len(a.harvest), "urls_b": len(b.harvest),
        "sizes_differ": bool(bigger) and (bigger - n) / bigger > SIZES_DIFFER,
    }


# -- helpers --------------------------------------------------------------------------


def _counts(semantic: Any) -> dict[str, int]:
    if not semantic:
        return {}
    data = json.loads(semantic) if isinstance(semantic, (str, bytes)) else semantic
    return {s: int(data.get(s) or 0) for s in SYNTAXES}


def _strategy(reason: Any) -> str | None:
    if not reason:
        return None
    try:
        data = json.loads(reason) if isinstance(reason, (str, bytes)) else reason
    except ValueError:
        return None
    return data.get("strategy") if isinstance(data, dict) else None


def _host(url: str) -> str:
    try:
        return urlsplit(url).hostname or url
    except ValueError:
        return url


def _text(value: Any) -> str | None:
    if value is None:
        return None
    return value.isoformat() if hasattr(value, "isoformat") else str(value)


def _seconds_between(first: str | None, last: str | None) -> float | None:
    """Seconds from the first fetch to the last (ISO 8601 times), None when unknown."""
    from datetime import datetime

    try:
        start = datetime.fromisoformat(str(first).replace("Z", "+00:00"))
        end = datetime.fromisoformat(str(last).replace("Z", "+00:00"))
    except (TypeError, ValueError):
        return None
    return (end - start).total_seconds()
