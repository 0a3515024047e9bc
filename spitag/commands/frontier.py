"""``scrapy frontier -a crawl=NAME [-a top=N] [-a hosts=N] [-a format=json]``: what a
crawl's frontier holds, running or not (without a name: the crawls there are).

Queued / leased / done counts (and how many of them failed and wait for another try),
on Redis the workers by their heartbeat (running, or silent: killed or cut off; a
worker of this machine whose process is gone is silent at once), the
hosts set aside as down (``SPITAG_HOST_FAILURES``) with the URLs waiting on them,
per-host counts with each host's next-allowed time and delay (and, on Redis, its
downloads running and requests waiting for a place, every worker's together), and the
``top`` best waiting URLs with their priority and why they got it (the parent URL, the
parent's semantic score, the crawl's strategy). Works on either backend:
``SPITAG_FRONTIER`` (or ``REDIS_URL``) as for the crawl.
"""

from __future__ import annotations

import json
import time
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from scrapy.commands import ScrapyCommand
from scrapy.exceptions import UsageError

from spitag.commands._common import (
    add_crawl_option,
    frontier_for,
    reader_may_leave,
    report_error,
    spider_args,
    unknown_crawl,
)
from spitag.errors import BackendUnavailableError, SpitagError
from spitag.frontier.owners import is_gone, short_name
from spitag.options import Options
from spitag.urls import redact

if TYPE_CHECKING:
    import argparse

    from spitag.frontier import Counts, Entry, Frontier, HostState


class Command(ScrapyCommand):
    requires_project = True
    requires_crawler_process = False

    def syntax(self) -> str:
        return "-a crawl=NAME [-a top=N] [-a hosts=N] [-a format=text|json]"

    def short_desc(self) -> str:
        return "Show a crawl's frontier: counts, hosts, the best waiting URLs and why"

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        super().add_options(parser)
        add_crawl_option(parser)

    def run(self, args: list[str], opts: argparse.Namespace) -> None:
        spargs = spider_args(opts)
        crawl = spargs.get("crawl", "").strip()
        if not crawl:  # which crawls there are (scrapy crawls)
            from spitag.commands.crawls import list_crawls, render_text as render_crawls

            try:
                crawls = list_crawls(Options(self.settings))
            except SpitagError as exc:
                self.exitcode = report_error(exc)
                return
            with reader_may_leave():
                print(render_crawls(crawls))
                print("\nname one: scrapy frontier -a crawl=NAME")
            return
        top = _count(spargs, "top", 20)
        host_limit = _count(spargs, "hosts", 20)
        fmt = spargs.get("format", "text").strip().lower()
        if fmt not in ("text", "json"):
            raise UsageError("-a format= takes text or json", print_help=False)
        try:
            frontier = self._open(crawl)
        except SpitagError as exc:
            self.exitcode = report_error(exc)
            return
        try:
            state = snapshot(frontier, top, host_limit, Options(self.settings).host_delay)
        except BackendUnavailableError as exc:
            self.exitcode = report_error(exc)
            return
        finally:
            frontier.close()
        if not (state["queued"] or state["leased"] or state["done"]):
            self.exitcode = report_error(unknown_crawl(self.settings, crawl))
            return
        with reader_may_leave():
            print(json.dumps(state, indent=1) if fmt == "json" else render_text(state))

    def _open(self, crawl: str) -> Frontier:
        return frontier_for(self.settings, crawl)


def _count(spargs: dict[str, str], name: str, default: int) -> int:
    raw = spargs.get(name, str(default)).strip()
    if not raw.isdigit():
        raise UsageError(f"-a {name}= takes a whole number, not {raw!r}", print_help=False)
    return int(raw)


def snapshot(frontier: Frontier, top: int, host_limit: int, default_delay: float) -> dict[str, Any]:
    """The frontier's own numbers, as plain data (``-a format=json`` prints this)."""
    queue = frontier.queue
    counts: Counts = queue.counts()
    hosts: list[HostState] = queue.hosts(host_limit) if host_limit else []
    best: list[Entry] = queue.top(top) if top else []
    down = frontier.gate.down()
    workers = frontier.registry.workers()
    strategy = frontier.registry.setup().get("strategy")
    now = time.time()
    return {
        "crawl": frontier.crawl,
        "frontier": redact(frontier.url),
        "strategy": strategy,
        "queued": counts.queued,
        "leased": counts.leased,
        "done": counts.done,
        "retrying": counts.retrying,
        "workers": None if workers is None else [
            {"worker": short_name(w.owner), "owner": w.owner, "machine": w.machine,
             "silent_seconds": w.silent_seconds, "alive": w.alive and not is_gone(w.owner)}
            for w in workers
        ],
        "hosts_down": [
            {"host": host, "seconds_left": left, "waiting": waiting, "until": _iso(now + left)}
            for host, left, waiting in down
        ],
        "hosts": [
            {
                "host": h.host, "queued": h.queued, "leased": h.leased, "done": h.done,
                "best": h.best, "next_allowed": _iso(h.next_allowed) if h.next_allowed else None,
                "wait_seconds": max(h.next_allowed - now, 0.0),
                "delay": default_delay if h.delay is None else h.delay,
                "own_delay": h.delay is not None, "mean_score": h.mean_score,
                "downloading": h.downloading, "waiting": h.waiting,
            }
            for h in hosts
        ],
        "top": [
            {"url": e.url, "host": e.host, "depth": e.depth, "priority": e.priority,
             "reason": {"strategy": strategy, **e.about()} if e.about() else None}
            for e in best
        ],
    }


def render_text(state: dict[str, Any]) -> str:
    known = state["queued"] + state["leased"] + state["done"]
    lines = [
        f"crawl {state['crawl']!r} in frontier {state['frontier']}",
        f"  queued {state['queued']:,} · leased {state['leased']:,} · done {state['done']:,}"
        f" · known {known:,}",
    ]
    if state["retrying"]:
        lines.append(f"  {state['retrying']:,} of the queued and leased failed and wait for another try"
                     " (SPITAG_RETRY_DELAY), or are being tried again")
    lines.append("")
    workers = state["workers"]
    if workers is not None:
        alive = sum(w["alive"] for w in workers)
        lines.append(f"workers: {alive} running" + (f", {len(workers) - alive} silent" if len(workers) > alive else "")
                     + (" (by their heartbeat, every second)" if workers else ""))
        width = max((len(w["worker"]) for w in workers), default=0)
        for w in workers:
            lines.append(f"  {w['worker']:<{width}}  {'running' if w['alive'] else 'silent '}  last heartbeat"
                         f" {w['silent_seconds']:.1f} s ago  machine {w['machine']}")
        lines.append("")
    down = state["hosts_down"]
    if down:
        lines.append(f"hosts down ({len(down)}: they failed SPITAG_HOST_FAILURES downloads in a row;"
                     " their URLs wait, a later run tries them again):")
        for d in down:
            lines.append(f"  {d['host']}  {d['waiting']:,} URLs waiting  until {d['until']}")
        lines.append("")
    hosts = state["hosts"]
    if hosts:
        lines.append(f"hosts (the {len(hosts)} with most URLs queued):")
        width = max(len("host"), *(len(h["host"]) for h in hosts))
        shared = any(h.get("downloading") is not None for h in hosts)  # places shared (Redis)
        lines.append(
            f"  {'host':<{width}}  {'queued':>8}  {'leased':>6}  {'done':>8}  {'best':>10}"
            f"  {'next allowed':<13}  {'delay s':>7}  {'mean score':>10}"
            + (f"  {'downloading':>11}  {'in line':>7}" if shared else "")
        )
        for h in hosts:
            wait = "ready" if h["wait_seconds"] <= 0 else f"in {h['wait_seconds']:.1f} s"
            delay = f"{h['delay']:.2f}" + ("*" if h["own_delay"] else "")
            lines.append(
                f"  {h['host']:<{width}}  {h['queued']:>8,}  {h['leased']:>6,}  {h['done']:>8,}"
                f"  {_num(h['best']):>10}  {wait:<13}  {delay:>7}  {_num(h['mean_score']):>10}"
                + (f"  {h['downloading'] or 0:>11,}  {h['waiting'] or 0:>7,}" if shared else "")
            )
        lines.append("  (delay* = the host's own, from robots.txt Crawl-delay; best = its best queued priority)")
        if shared:
            lines.append("  (downloading: the host's places held by every worker together, at most"
                         " CONCURRENT_REQUESTS_PER_DOMAIN; in line: requests waiting for one)")
        lines.append("")
    top = state["top"]
    if top:
        lines.append(f"top {len(top)} waiting URLs (best priority first):")
        lines.append(f"  {'#':>3}  {'priority':>10}  {'depth':>5}  url")
        for i, e in enumerate(top, 1):
            lines.append(f"  {i:>3}  {_num(e['priority']):>10}  {e['depth']:>5}  {e['url']}")
            lines.append(f"  {'':>3}  {'':>10}  {'':>5}  why: {why(e['reason'], state['strategy'])}")
    else:
        lines.append("no URL waiting")
    return "\n".join(lines)


def why(reason: dict[str, Any] | None, strategy: str | None) -> str:
    """A reason in words: strategy, parent URL, parent's semantic score, and what the
    strategy's estimate was learnt from."""
    if not reason:
        return "seed"
    parts = [str(reason.get("strategy") or strategy or "?")]
    if reason.get("redirect_from"):
        parts.append(f"redirect from {reason['redirect_from']}")
    if reason.get("parent"):
        score = reason.get("parent_score")
        parts.append(f"linked from {reason['parent']}"
                     + (f" (semantic score {score:g})" if isinstance(score, (int, float)) else ""))
    learnt = reason.get("learnt")
    if learnt == "unseen site":
        parts.append("a site not fetched yet: worth exploring")
    elif learnt:
        parts.append(f"expected from {reason.get('pages', 0):,} pages of its {learnt}")
    return " · ".join(parts)


def _num(value: float | None) -> str:
    return "—" if value is None else f"{value:.4g}"


def _iso(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")
