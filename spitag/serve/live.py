"""A running crawl, live: its numbers as JSON, a page that polls them, and its report.

``live_state`` gathers what the page shows from the store (pages, semantic items, pages
per second over the last minute, items per page minute by minute, the harvest curve of
the crawl and of a baseline crawl) and from the frontier (queued, leased, done, workers
and their heartbeats, hosts busy, waiting and down: ``scrapy frontier``'s snapshot, so
several workers on one Redis are seen as one crawl). The page (``PAGE``) asks for them
every two seconds; it is plain HTML and a little JavaScript drawing SVG, nothing
fetched from elsewhere. ``scrapy report``'s HTML is served beside it, made on demand.
"""

from __future__ import annotations

import hashlib
import json
import tempfile
import threading
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from spitag.serve.reader import StoreReader

HARVEST_POINTS = 200  # points of a harvest curve sent to the page
HARVEST_ROWS = 200_000  # URLs a harvest curve reads at most
TIMELINE_MINUTES = 120  # minutes of items per page shown
REPORT_SECONDS = 30.0  # a report is made again at most this often
LIVE_SECONDS = 2.0  # live data is made again at most this often, however many ask


def iso(moment: datetime) -> str:
    return moment.astimezone(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def harvest(reader: StoreReader, crawl: str) -> list[list[float]]:
    """(URLs answered, semantic items found so far), in the order they were checked,
    at most ``HARVEST_POINTS`` points."""
    values = [v or 0 for (v,) in reader.rows(
        "SELECT p.semantic_total FROM url u LEFT JOIN page p ON p.id = u.page_id"
        " WHERE u.crawl = ? AND u.status IS NOT NULL ORDER BY u.checked, u.url_md5 LIMIT ?",
        [crawl, HARVEST_ROWS])]
    step = max(1, -(-len(values) // HARVEST_POINTS))
    points, total = [], 0
    for i, value in enumerate(values, 1):
        total += value
        if i % step == 0 or i == len(values):
            points.append([i, total])
    return points


def live_state(reader: StoreReader, crawl: str, frontier: dict[str, Any] | None,
               against: str | None = None) -> dict[str, Any]:
    now = datetime.now(timezone.utc)
    urls, pages, items, last = reader.rows(
        "SELECT COUNT(*), COUNT(u.page_id), SUM(p.semantic_total), MAX(u.checked)"
        " FROM url u LEFT JOIN page p ON p.id = u.page_id WHERE u.crawl = ?", [crawl])[0]
    recent, first = reader.rows("SELECT COUNT(*), MIN(checked) FROM url WHERE crawl = ? AND checked >= ?",
                                [crawl, iso(now - timedelta(seconds=60))])[0]
    # over the last minute, or over the seconds since the first of them (a crawl just begun)
    window = 60.0
    if first:
        window = min(window, max((now - datetime.fromisoformat(first.replace("Z", "+00:00"))).total_seconds(), 1.0))
    minute = reader.dialect.minute
    timeline = reader.rows(
        f"SELECT {minute}, COUNT(u.page_id), AVG(p.semantic_total) FROM url u LEFT JOIN page p ON p.id = u.page_id"
        f" WHERE u.crawl = ? AND u.checked >= ? GROUP BY {minute} ORDER BY 1",
        [crawl, iso(now - timedelta(minutes=TIMELINE_MINUTES))])
    hosts = frontier["hosts"] if frontier else []
    return {
        "crawl": crawl, "at": iso(now),
        "store": {"urls": urls, "pages": pages, "semantic_items": int(items or 0),
                  "items_per_page": (int(items or 0) / pages) if pages else None, "last_checked": last},
        "pages_per_second": recent / window,
        "timeline": [{"minute": m, "pages": n, "items_per_page": mean} for m, n, mean in timeline],
        "harvest": {crawl: harvest(reader, crawl), **({against: harvest(reader, against)} if against else {})},
        "frontier": None if frontier is None else {
            k: frontier[k] for k in ("strategy", "queued", "leased", "done", "retrying", "workers", "hosts_down")},
        "hosts": {
            "busy": [h for h in hosts if h.get("leased") or h.get("downloading")],
            "waiting": [h for h in hosts if h.get("queued") and h.get("wait_seconds", 0) > 0],
            "down": frontier["hosts_down"] if frontier else [],
        },
    }


class Reports:
    """``scrapy report``'s folder for a crawl (and a baseline), made on demand into a
    temporary folder and made again when asked after ``REPORT_SECONDS``."""

    def __init__(self, reader: StoreReader) -> None:
        self.reader = reader
        self.root = Path(tempfile.mkdtemp(prefix="spitag-serve-reports-"))
        self.made: dict[tuple[str, str | None], float] = {}
        self.lock = threading.Lock()

    def folder(self, crawl: str, against: str | None) -> Path:
        from spitag.report import write_report

        out = self.root / hashlib.md5(json.dumps([crawl, against]).encode()).hexdigest()
        with self.lock:  # one report made at a time: it is CPU-heavy (matplotlib)
            if time.monotonic() - self.made.get((crawl, against), -REPORT_SECONDS) >= REPORT_SECONDS:
                write_report(self.reader, crawl, out, against, "")
                self.made[(crawl, against)] = time.monotonic()
        return out

    def close(self) -> None:
        import shutil

        shutil.rmtree(self.root, ignore_errors=True)


PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>SpiTag · __CRAWL__ · live</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222;max-width:1100px}
h1{font-size:1.4em;margin:0 0 .2em} .muted{color:#777}
.cards{display:flex;flex-wrap:wrap;gap:.8em;margin:1em 0}
.card{border:1px solid #ddd;border-radius:6px;padding:.6em .9em;min-width:8em}
.card b{display:block;font-size:1.5em}
table{border-collapse:collapse;margin:.5em 0 1.2em} td,th{padding:.15em .7em;border-bottom:1px solid #eee;text-align:right}
td:first-child,th:first-child{text-align:left}
svg{border:1px solid #eee;background:#fcfcfc} .bad{color:#b00} .good{color:#080}
</style></head><body>
<h1>Crawl <span id="crawl">__CRAWL__</span></h1>
<div class="muted">updated <span id="at">…</span> · strategy <span id="strategy">…</span>
 · <a id="report" href="report/">report</a> · <a href="/docs">API</a></div>
<div class="cards">
 <div class="card">queued<b id="queued">–</b></div><div class="card">leased<b id="leased">–</b></div>
 <div class="card">done<b id="done">–</b></div><div class="card">pages stored<b id="pages">–</b></div>
 <div class="card">pages/s (last minute)<b id="rate">–</b></div>
 <div class="card">semantic items<b id="items">–</b></div><div class="card">items per page<b id="ipp">–</b></div>
</div>
<h2>Harvest</h2><div class="muted">semantic items found against URLs answered<span id="against"></span></div>
<svg id="harvest" width="1000" height="260"></svg>
<h2>Items per page, minute by minute</h2><svg id="timeline" width="1000" height="160"></svg>
<h2>Workers</h2><table id="workers"></table>
<h2>Hosts</h2><div class="muted">busy: a download running · waiting: URLs queued, its politeness delay not over · down: set aside after failures</div>
<table id="hosts"></table><table id="down"></table>
<script>
const crawl = __CRAWL_JSON__;
const params = new URLSearchParams(location.search);
const against = params.get("against");
const token = new URLSearchParams(location.hash.slice(1)).get("token");
const fmt = (x, d = 0) => x == null ? "–" : Number(x).toLocaleString("en", {maximumFractionDigits: d});
const esc = s => String(s).replace(/[&<>"]/g, c => ({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;"}[c]));
if (against) { document.getElementById("against").textContent = " — against " + against;
               document.getElementById("report").href = "report/?against=" + encodeURIComponent(against); }
function line(svg, series, colors) {
  const W = svg.width.baseVal.value, H = svg.height.baseVal.value, pad = 40;
  const pts = series.flat(); if (!pts.length) { svg.innerHTML = ""; return; }
  const mx = Math.max(...pts.map(p => p[0]), 1), my = Math.max(...pts.map(p => p[1]), 1);
  const X = x => pad + (W - 2 * pad) * x / mx, Y = y => H - pad + (2 * pad - H) * y / my;
  let out = `<line x1="${pad}" y1="${H - pad}" x2="${W - pad}" y2="${H - pad}" stroke="#999"/>` +
            `<line x1="${pad}" y1="${pad}" x2="${pad}" y2="${H - pad}" stroke="#999"/>` +
            `<text x="${W - pad}" y="${H - pad + 15}" text-anchor="end">${fmt(mx)}</text>` +
            `<text x="${pad - 4}" y="${pad}" text-anchor="end">${fmt(my)}</text>`;
  series.forEach((s, i) => { out += `<polyline fill="none" stroke-width="2" stroke="${colors[i]}" points="` +
                              s.map(p => X(p[0]) + "," + Y(p[1])).join(" ") + `"/>`; });
  svg.innerHTML = out;
}
function bars(svg, rows) {
  const W = svg.width.baseVal.value, H = svg.height.baseVal.value, pad = 40;
  if (!rows.length) { svg.innerHTML = ""; return; }
  const my = Math.max(...rows.map(r => r.value), 1), w = (W - 2 * pad) / rows.length;
  svg.innerHTML = `<line x1="${pad}" y1="${H - pad}" x2="${W - pad}" y2="${H - pad}" stroke="#999"/>` +
    `<text x="${pad - 4}" y="${pad}" text-anchor="end">${fmt(my, 1)}</text>` +
    rows.map((r, i) => `<rect x="${pad + i * w + 1}" y="${H - pad - (H - 2 * pad) * r.value / my}" width="${Math.max(w - 2, 1)}"` +
                       ` height="${(H - 2 * pad) * r.value / my}" fill="#2e7d32"><title>${esc(r.label)}: ${fmt(r.value, 2)}</title></rect>`).join("") +
    `<text x="${pad}" y="${H - pad + 15}">${esc(rows[0].label)}</text>` +
    `<text x="${W - pad}" y="${H - pad + 15}" text-anchor="end">${esc(rows[rows.length - 1].label)}</text>`;
}
function table(el, head, rows, none) {
  el.innerHTML = rows.length ? "<tr>" + head.map(h => `<th>${h}</th>`).join("") + "</tr>" +
    rows.map(r => "<tr>" + r.map(c => `<td>${c}</td>`).join("") + "</tr>").join("") :
    (none ? `<tr><td class="muted">${none}</td></tr>` : "");
}
async function refresh() {
  const headers = token ? {Authorization: "Bearer " + token} : {};
  const url = `/api/crawls/${encodeURIComponent(crawl)}/live` + (against ? "?against=" + encodeURIComponent(against) : "");
  try {
    const r = await fetch(url, {headers}); if (!r.ok) throw new Error(r.status + " " + (await r.text()));
    const s = await r.json(), f = s.frontier || {};
    const set = (id, v) => document.getElementById(id).textContent = v;
    set("at", s.at); set("strategy", f.strategy || "–"); set("queued", fmt(f.queued)); set("leased", fmt(f.leased));
    set("done", fmt(f.done)); set("pages", fmt(s.store.pages)); set("rate", fmt(s.pages_per_second, 1));
    set("items", fmt(s.store.semantic_items)); set("ipp", fmt(s.store.items_per_page, 2));
    const names = Object.keys(s.harvest);
    line(document.getElementById("harvest"), names.map(n => s.harvest[n]), ["#1565c0", "#999"]);
    bars(document.getElementById("timeline"), s.timeline.map(t => ({label: t.minute.slice(11) + " UTC", value: t.items_per_page || 0})));
    table(document.getElementById("workers"), ["worker", "state", "last heartbeat", "machine"],
          (f.workers || []).map(w => [esc(w.worker), w.alive ? '<span class="good">running</span>' : '<span class="bad">silent</span>',
                                     fmt(w.silent_seconds, 1) + " s ago", esc(w.machine)]), "no worker has a heartbeat");
    const busy = s.hosts.busy.map(h => [esc(h.host), "busy", fmt(h.queued), fmt(h.leased), fmt(h.done), fmt(h.delay, 2)]);
    const waiting = s.hosts.waiting.map(h => [esc(h.host), "waiting " + fmt(h.wait_seconds, 1) + " s", fmt(h.queued),
                                             fmt(h.leased), fmt(h.done), fmt(h.delay, 2)]);
    table(document.getElementById("hosts"), ["host", "state", "queued", "leased", "done", "delay s"], busy.concat(waiting),
          "no host busy or waiting");
    table(document.getElementById("down"), ["host down", "URLs waiting", "until"],
          s.hosts.down.map(d => [esc(d.host), fmt(d.waiting), esc(d.until)]));
  } catch (e) { document.getElementById("at").textContent = "not reachable: " + e.message; }
}
refresh(); setInterval(refresh, 2000);
</script></body></html>
"""
