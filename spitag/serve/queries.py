"""The questions the web service answers, as SQL over a read-only store.

Every value a caller gives goes in as a parameter; what is put together into SQL are
fixed fragments chosen by which filters are set. Lists are paged by the URL key
(``url_md5``, the second column of ``url``'s primary key): a cursor is the last key a
page returned, so pages stay stable while a crawl adds URLs (a new URL appears on a
later page or an earlier one, never twice). A request reads one slice of the key space
holding about ``SCAN_ROWS`` of the crawl's URLs (MD5 keys are spread evenly), so a
filter that few URLs pass costs a bounded time: its page can be short, and its cursor
says where the next one starts (``null`` only at the end). The schema.org type filter
narrows with ``LIKE`` and then checks the page's structured data itself (a JSON-LD
``@type`` or a microdata / RDFa type URL).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from spitag.serve.reader import StoreReader
from spitag.store.base import KNOWS_SQL, link_walk_sql, url_md5

SCAN_ROWS = 5000  # URLs of the crawl a list request reads, about
KEYS = 1 << 128  # URL keys: MD5s
LINK_ROWS = 10_000  # links a walk returns at most
PATH_NODES = 20_000  # URLs a path search visits at most
_IN = 500  # keys per IN (…) list

URL_FIELDS = (
    "url", "status", "error", "content_type", "depth", "priority", "reason", "fetched", "checked",
    "redirect_to", "canonical", "md5", "title", "semantic", "semantic_total", "score", "incomplete", "size",
)
_SELECT = (
    "SELECT u.url_md5, u.url, u.status, u.error, u.content_type, u.depth, u.priority, u.reason, u.fetched,"
    " u.checked, u.redirect_to, u.canonical, p.md5, p.title, p.semantic, p.semantic_total, p.score,"
    " p.incomplete, p.size{extra} FROM url u LEFT JOIN page p ON p.id = u.page_id"
)


@dataclass(frozen=True)
class Filters:
    """What a list of URLs is narrowed to; None: not filtered on."""

    host: str | None = None
    status: int | None = None
    content_type: str | None = None
    syntax: str | None = None  # a page carrying at least one item of this syntax
    schema_type: str | None = None  # a schema.org type name: Recipe, Event, …
    min_score: float | None = None
    max_score: float | None = None
    since: str | None = None  # ISO UTC: checked at or after
    pages_only: bool = False  # URLs that have a stored page


def like_escaped(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def _where(reader: StoreReader, crawl: str, f: Filters, after: str | None) -> tuple[str, list[Any]]:
    sql, params = ["u.crawl = ?"], [crawl]
    if after is not None:
        sql.append("u.url_md5 > ?")
        params.append(after)
    if f.pages_only:
        sql.append("u.page_id IS NOT NULL")
    if f.host is not None:
        sql.append("(u.url LIKE ? ESCAPE '\\' OR u.url LIKE ? ESCAPE '\\')")
        params += [f"http://{like_escaped(f.host)}/%", f"https://{like_escaped(f.host)}/%"]
    if f.status is not None:
        sql.append("u.status = ?")
        params.append(f.status)
    if f.content_type is not None:
        sql.append("u.content_type LIKE ? ESCAPE '\\'")
        params.append(like_escaped(f.content_type) + "%")
    if f.syntax is not None:
        sql.append(f"{reader.dialect.syntax_count} > 0")
        params.append(reader.dialect.syntax_path.format(f.syntax))
    if f.schema_type is not None:
        sql.append("p.structured LIKE ? ESCAPE '\\'")
        params.append(f"%{like_escaped(f.schema_type)}%")
    if f.min_score is not None:
        sql.append("p.score >= ?")
        params.append(f.min_score)
    if f.max_score is not None:
        sql.append("p.score <= ?")
        params.append(f.max_score)
    if f.since is not None:
        sql.append("u.checked >= ?")
        params.append(f.since)
    return " AND ".join(sql), params


def _url_row(row: tuple) -> dict[str, Any]:
    out = dict(zip(URL_FIELDS, row[1:1 + len(URL_FIELDS)]))
    out["semantic"] = json.loads(out["semantic"]) if out["semantic"] else None
    out["incomplete"] = out["incomplete"].split(",") if out["incomplete"] else None
    out["reason"] = _json_or_text(out["reason"])
    return out


def _json_or_text(value: str | None) -> Any:
    if not value:
        return None
    try:
        return json.loads(value)
    except ValueError:
        return value


def has_type(structured: str | None, name: str) -> bool:
    """Whether structured data (the store's JSON) holds an item of schema.org type
    ``name``: a JSON-LD ``@type`` equal to it, or a type URL ending in ``/name`` or ``#name``."""
    if not structured:
        return False
    try:
        data = json.loads(structured)
    except ValueError:
        return False
    wanted = (f"/{name}", f"#{name}")
    stack = [data]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            for key, value in node.items():
                if key in ("@type", "type", "typeof"):
                    for t in value if isinstance(value, list) else [value]:
                        if isinstance(t, str) and (t == name or t.endswith(wanted) or t == f"schema:{name}"):
                            return True
                if isinstance(value, (dict, list)):
                    stack.append(value)
        elif isinstance(node, list):
            stack.extend(node)
    return False


def crawl_size(reader: StoreReader, crawl: str) -> int:
    """The crawl's URLs, counted at most every 10 s."""
    return reader.recent.get(("size", crawl), 10.0, lambda: reader.rows(
        "SELECT COUNT(*) FROM url WHERE crawl = ?", [crawl])[0][0])


def list_urls(reader: StoreReader, crawl: str, f: Filters, limit: int,
              after: str | None = None) -> tuple[list[dict[str, Any]], str | None]:
    """Up to ``limit`` URLs of ``crawl`` after the key ``after``, by key, from one slice
    of the key space; and the key the next page starts after (None: there is no more)."""
    out: list[dict[str, Any]] = []
    extra = ", p.structured" if f.schema_type else ""
    low = int(after, 16) + 1 if after else 0
    high = min(low + max(KEYS * SCAN_ROWS // max(crawl_size(reader, crawl), 1), 1), KEYS)
    cursor = after
    while True:
        batch = limit - len(out) if not f.schema_type else max(limit, 200)
        where, params = _where(reader, crawl, f, cursor)
        if high < KEYS:
            where += " AND u.url_md5 < ?"
            params.append(format(high, "032x"))
        rows = reader.rows(f"{_SELECT.format(extra=extra)} WHERE {where} ORDER BY u.url_md5 LIMIT ?",
                           [*params, batch])
        for row in rows:
            cursor = row[0]
            if f.schema_type and not has_type(row[-1], f.schema_type):
                continue
            out.append(_url_row(row))
            if len(out) >= limit:
                return out, cursor
        if len(rows) < batch:  # the slice is read: the next page starts after it
            return out, (None if high >= KEYS else format(high - 1, "032x"))


def stream_urls(reader: StoreReader, crawl: str, f: Filters, after: str | None = None) -> Iterator[dict[str, Any]]:
    """Every URL the filters keep, page after page (for an export)."""
    while True:
        rows, after = list_urls(reader, crawl, f, 1000, after)
        yield from rows
        if after is None:
            return


def crawls(reader: StoreReader) -> list[dict[str, Any]]:
    rows = reader.rows(
        "SELECT crawl, COUNT(*), SUM(CASE WHEN page_id IS NOT NULL THEN 1 ELSE 0 END), MAX(checked)"
        " FROM url GROUP BY crawl ORDER BY crawl")
    return [{"crawl": c, "urls": n, "pages": int(p or 0), "last_checked": last} for c, n, p, last in rows]


def summary(reader: StoreReader, crawl: str) -> dict[str, Any] | None:
    """One crawl's numbers from the store; None when the store has no URL of it."""
    head = reader.rows(
        "SELECT COUNT(*), SUM(CASE WHEN u.page_id IS NOT NULL THEN 1 ELSE 0 END),"
        " SUM(CASE WHEN u.error IS NOT NULL THEN 1 ELSE 0 END), MAX(u.depth), MIN(u.fetched), MAX(u.checked),"
        " SUM(p.semantic_total), AVG(p.score), SUM(CASE WHEN p.incomplete IS NOT NULL THEN 1 ELSE 0 END)"
        " FROM url u LEFT JOIN page p ON p.id = u.page_id WHERE u.crawl = ?", [crawl])[0]
    if not head[0]:
        return None
    statuses = reader.rows("SELECT status, COUNT(*) FROM url WHERE crawl = ? GROUP BY status ORDER BY status", [crawl])
    urls, pages, errors, depth, first, last, items, mean_score, incomplete = head
    return {
        "crawl": crawl, "urls": urls, "pages": int(pages or 0), "errors": int(errors or 0),
        "statuses": {("none" if s is None else str(s)): n for s, n in statuses},
        "max_depth": depth, "first_fetched": first, "last_checked": last,
        "semantic_items": int(items or 0), "items_per_page": (int(items or 0) / pages) if pages else None,
        "mean_score": mean_score, "incomplete_pages": int(incomplete or 0),
    }


def page(reader: StoreReader, crawl: str, url: str) -> dict[str, Any] | None:
    """One URL of the crawl: its row, its page's profile and structured data, and how
    many links it has and how many of the crawl's pages link to it."""
    rows = reader.rows(f"{_SELECT.format(extra=', p.structured')} WHERE u.crawl = ? AND u.url_md5 = ?",
                       [crawl, url_md5(url)])
    if not rows:
        return None
    out = _url_row(rows[0])
    out["structured"] = _json_or_text(rows[0][-1])
    key = url_md5(url)
    out["links_out"] = reader.rows("SELECT COUNT(*) FROM outlink WHERE crawl = ? AND source_md5 = ?", [crawl, key])[0][0]
    out["links_in"] = reader.rows("SELECT COUNT(*) FROM outlink WHERE crawl = ? AND target_md5 = ?", [crawl, key])[0][0]
    return out


def editions(reader: StoreReader, crawl: str, url: str) -> list[dict[str, Any]]:
    """The pages ``url`` served across the crawl's recrawls, the first seen first."""
    rows = reader.rows(
        "SELECT p.md5, p.title, p.semantic, p.semantic_total, p.score, p.size, e.first_seen, e.last_seen"
        " FROM edition e JOIN page p ON p.id = e.page_id WHERE e.crawl = ? AND e.url_md5 = ?"
        " ORDER BY e.first_seen, p.md5", [crawl, url_md5(url)])
    return [{"md5": md5, "title": title, "semantic": json.loads(sem) if sem else None, "semantic_total": total,
             "score": score, "size": size, "first_seen": first, "last_seen": last}
            for md5, title, sem, total, score, size, first, last in rows]


def knows(reader: StoreReader, crawl: str, url: str) -> bool:
    """Whether ``url`` is a URL of the crawl or a link one of its pages has."""
    key = url_md5(url)
    return bool(reader.rows(KNOWS_SQL, [crawl, key, crawl, key]))


def links(reader: StoreReader, crawl: str, url: str, depth: int, reverse: bool = False,
          limit: int = LINK_ROWS) -> list[dict[str, Any]]:
    """The links within ``depth`` hops of ``url`` (``reverse``: into it), nearest
    first: the recursive walk of ``scrapy links``, at most ``limit`` of them."""
    rows = reader.rows(link_walk_sql(reader.dialect.key_cast, reverse) + " LIMIT ?",
                       [url_md5(url), crawl, depth, crawl, limit])
    return [{"distance": int(d), "source": s, "target": t} for s, t, d in rows]


def paths(reader: StoreReader, crawl: str, source: str, target: str, max_length: int,
          limit: int) -> tuple[list[list[str]], bool]:
    """Up to ``limit`` link paths from ``source`` to ``target`` of at most
    ``max_length`` links, shortest first (no URL twice in a path); and whether the
    search stopped at ``PATH_NODES`` URLs before it had looked at every path."""
    start, goal = url_md5(source), url_md5(target)
    # layer by layer from the source: each URL's links, and the URLs they reach
    succ: dict[str, list[str]] = {}
    names: dict[str, str] = {start: source, goal: target}
    dist = {start: 0}
    layer = [start]
    cut = False
    for hop in range(max_length):
        if not layer:
            break
        nxt: list[str] = []
        for i in range(0, len(layer), _IN):
            chunk = layer[i:i + _IN]
            marks = ",".join("?" * len(chunk))
            for s, t, s_url, t_url in reader.rows(
                    f"SELECT source_md5, target_md5, source, target FROM outlink WHERE crawl = ? AND source_md5 IN ({marks})",
                    [crawl, *chunk]):
                succ.setdefault(s, []).append(t)
                names.setdefault(s, s_url)
                names.setdefault(t, t_url)
                if t not in dist:
                    dist[t] = hop + 1
                    nxt.append(t)
        if len(dist) > PATH_NODES:
            cut = True
            break
        layer = [n for n in nxt if n != goal]
    if goal not in dist:
        return [], cut
    # the URLs that can still reach the goal within the links left
    pred: dict[str, list[str]] = {}
    for s, ts in succ.items():
        for t in ts:
            pred.setdefault(t, []).append(s)
    to_goal = {goal: 0}
    frontier = [goal]
    for hop in range(1, max_length + 1):
        nxt = []
        for n in frontier:
            for s in pred.get(n, ()):
                if s not in to_goal:
                    to_goal[s] = hop
                    nxt.append(s)
        frontier = nxt
    found: list[list[str]] = []
    for length in range(1, max_length + 1):  # shortest first
        stack = [(start, [start])]
        while stack and len(found) < limit:
            node, path = stack.pop()
            if node == goal and len(path) - 1 == length:
                found.append([names[n] for n in path])
                continue
            left = length - (len(path) - 1)
            if node == goal or left <= 0:
                continue
            for t in reversed(succ.get(node, ())):
                if t not in path and to_goal.get(t, max_length + 1) <= left - 1:
                    stack.append((t, [*path, t]))
        if len(found) >= limit:
            break
    return found, cut
