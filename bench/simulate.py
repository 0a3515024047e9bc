"""Offline, deterministic replay of the focus benchmark's crawls (issue 3).

    python bench/simulate.py [--seed 0] [--strategies bfs,opic,spitag] [--set NAME=VALUE ...]
        [web parameters as bench/focus.py] [--k 100,300,1000]

A real crawl of ``bench/focus.py`` takes ~80 s per strategy; this replays one in well
under a second, on the same graph (``bench/webgen.py``, same seed and parameters, the
same true counts), with the same strategy classes (``spitag.scoring``) and the
frontier's semantics, so that strategies can be compared over many seeds and web
variants. ``bench/simulate_eval.py`` runs those sweeps.

What is modelled (the defaults are the project's settings and what the real crawls
showed, see ``bench/README.md``):

* **The frontier** (``spitag.frontier.sqlite``): push combines a waiting URL's
  priority with the strategy's rule (sum / max), a leased or done URL is ignored; a
  pop takes up to ``pop_batch`` (16) URLs from the hosts of best *rank*, at most
  ``per_host`` (4, ``CONCURRENT_REQUESTS_PER_DOMAIN``) per host and pop, each host's
  URLs by priority. Ties as SQLite breaks them (its query plans): hosts popped
  longest ago first, then the host seen first; a host's URL inserted last first.
  The host rank is one of ``RANKERS``, chosen by the strategy's ranking
  (``spitag.ranking``): ``current`` (its ``blend``) or ``posterior`` (``SPITAG_HOST_K``),
  fed with what the backends store per host (best queued priority, score sum, pages
  learnt).
  ``SPITAG_HOST_PROBE`` (on by default, as in the crawler): a host not learnt yet
  gives one URL per pop, and none while that page is in flight (until it is parsed:
  the crawler's frontier, until it is learnt or leaves its lease).
* **The crawler** (Scrapy + ``spitag.scheduler``), as a discrete-event model in
  seconds: at most ``concurrency`` (32) requests in the downloader, at most
  ``per_host`` downloading from one host at a time; the engine asks for a request
  only while the scraper holds less than 5 MB of responses
  (``SCRAPER_SLOT_MAX_ACTIVE_SIZE``), and the scheduler gives one only while fewer
  pages than its limit are downloading, waiting or being parsed, popping only when
  half that fits: ``spitag.pace.UnscoredLimit`` itself, fed with the simulated
  answers (``max_backlog`` 16, ``SPITAG_MAX_BACKLOG``, within the cap ``max_unscored``
  64, ``SPITAG_MAX_UNSCORED`` = 2 × CONCURRENT_REQUESTS); it serves a buffer of popped
  entries and pops again (after writing its buffered pushes) when it is empty, and
  also writes pushes and learnt scores every 0.2 s. A download takes
  ``latency`` (the bodies come from 127.0.0.1); the server logs it when it answers
  (the arrival order the metric uses). Parsing takes ``cpus`` (2: the profile pool on
  this machine) pages at once, first come first served,
  ``parse_base + bytes · parse_per_mb`` seconds a page: the crawl is CPU-bound, so a
  page's outlinks become visible to the frontier only once the responses queued
  before it are parsed (tens of pages later). That lag is what separates a real
  crawl from a textbook best-first.
* **Reference strategies**: ``truth`` (every outlink gets its page's true count:
  the oracle's knowledge through the crawler's mechanics, the ceiling of any
  strategy) and ``parent`` (best-first on the parent's score alone).
* **Dead links**: flink's links to other hosts (the server answers 404, or refuses
  ``CONNECT`` for https, three attempts) cost a request each and yield nothing; they
  count in the page budget (responses) but not in harvest@K (pages answered 200).

Everything is seeded; the same inputs give the same numbers.
"""

from __future__ import annotations

import functools

import argparse
import heapq
import json
import math
import os
import pickle
import random
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

REPO_ROOT = Path(__file__).resolve().parents[1]
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

from scrapy.settings import Settings

from bench.harvest import harvest, oracle_order
from bench.webgen import (
    WebParams,
    build_counted_web,
    corpus_dir,
    corpus_pages,
    corpus_stamp,
    page_links,
)
from spitag.options import Options
from spitag.pace import UnscoredLimit
from spitag.ranking import HostRanking
from spitag.scoring import Parent, Strategy, strategy_from_options

DEFAULT_WORK = Path(os.environ.get("TMPDIR", "/tmp")) / "spitag-bench"


# ============================================================================ the graph


@dataclass
class SimGraph:
    """What the simulation needs of a web: per URL its host, true count, body size,
    links in the graph (200 pages), and dead links (any other URL a page links to)."""

    params: dict[str, Any]
    urls: list[str]
    host: list[str]
    count: list[int]
    size: list[int]
    links: list[list[int]]  # node ids, graph order
    dead: list[list[str]]  # URLs that are not pages (404 / refused)
    seeds: list[int]
    hosts_used: list[str]

    @property
    def n(self) -> int:
        return len(self.urls)

    def oracle(self, limit: int) -> list[int]:
        links = {self.urls[i]: [self.urls[j] for j in self.links[i]] for i in range(self.n)}
        counts = {self.urls[i]: self.count[i] for i in range(self.n)}
        order = oracle_order(links, counts, [self.urls[s] for s in self.seeds], limit)
        index = {u: i for i, u in enumerate(self.urls)}
        return [self.count[index[u]] for u in order]


def build_graph(
    params: WebParams,
    work: Path = DEFAULT_WORK,
    corpus: Path | None = None,
    hosts: Sequence[str] | None = None,
    cache: bool = True,
) -> SimGraph:
    """The web of ``bench/webgen.py`` for ``params`` as a SimGraph (cached in ``work``).
    ``hosts``: build it from the real pages of these hosts only (hold-out webs)."""
    corpus = corpus_dir(corpus, params.flink)
    shape = {k: v for k, v in asdict(params).items() if v or k not in ("popularity", "homophily")}
    key = json.dumps([shape, sorted(hosts) if hosts is not None else None,  # (keys of uniform webs kept)
                      corpus_stamp(corpus, params.flink)], sort_keys=True)
    import hashlib

    digest = hashlib.sha1(key.encode()).hexdigest()[:16]
    path = work / "sim-graphs" / f"{digest}.pickle"
    if cache and path.is_file():
        with open(path, "rb") as f:
            return SimGraph(**pickle.load(f))
    pages, flink_dir = corpus_pages(corpus, work, params.flink, hosts)
    web, _ = build_counted_web(pages, flink_dir, params, work / "true-counts.json", workers=1)
    urls = list(web.nodes)
    index = {u: i for i, u in enumerate(urls)}
    flink_dead: dict[str, list[str]] = {}
    sizes = []
    for u in urls:
        node = web.nodes[u]
        if node.template is None:
            response = web.flink().respond(node.path)
            body = response.body
            every = page_links(body, u, response.content_type)
            flink_dead[u] = [v for v in every if v not in index]
            sizes.append(len(body))
        else:
            t = web.templates[node.template]
            sizes.append(len(t.body) + 40 * len(node.links))
    graph = SimGraph(
        params=asdict(params),
        urls=urls,
        host=[web.nodes[u].host for u in urls],
        count=[web.node_count(u) for u in urls],
        size=sizes,
        links=[[index[v] for v in web.nodes[u].links] for u in urls],
        dead=[flink_dead.get(u, []) for u in urls],
        seeds=[index[s] for s in web.seeds],
        hosts_used=sorted(web.site_templates),
    )
    if cache:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        with open(tmp, "wb") as f:
            pickle.dump(asdict(graph), f)  # a dict: loadable whoever runs this module
        tmp.replace(path)
    return graph


# ============================================================================ host ranking

# A ranker maps (best queued priority, score sum, pages learnt, knobs) → rank. Only what
# every frontier backend stores per host, so that any of them can be ported.
Ranker = Callable[[float, float, int, dict[str, float]], float]


@functools.cache
def _ranking(mode: str, k: float = 0.25, weight: float = 0.0, half: float = 60.0, prior: float = 0.0) -> HostRanking:
    return HostRanking(mode, k, weight, half, prior)


def rank_current(best: float, total: float, pages: int, k: dict[str, float]) -> float:
    """The ``blend`` of ``spitag.ranking`` (σ of the host's mean and the squashed best)."""
    if k.get("host_weight", 0.0) <= 0:
        return best
    return _ranking("blend", weight=k["host_weight"], half=k.get("half", 60.0), prior=k.get("prior", 0.0)).rank(
        best, total, pages)


def rank_best(best: float, total: float, pages: int, k: dict[str, float]) -> float:
    """No host learning: the host's best queued priority (every other strategy)."""
    return best


def rank_posterior(best: float, total: float, pages: int, k: dict[str, float]) -> float:
    """Posterior mean of the host's page score: the learnt sum plus the best waiting
    priority counted as ``k`` pseudo-pages, ``(S + k · best) / (n + k)``.

    With no page fetched it is ``best`` (what the links promise); after n pages the
    observations dominate (n ≫ k). ``best`` must then be in score units (the strategy's
    estimate of a page's semantic score), which the ``spitag`` strategy gives.
    """
    return _ranking("posterior", k.get("host_k", 0.25)).rank(best, total, pages)


RANKERS: dict[str, Ranker] = {"current": rank_current, "best": rank_best, "posterior": rank_posterior}
# A strategy's ranking picks its ranker: "posterior" (``spitag``) or "blend" (``current``).


# ============================================================================ the simulation


@dataclass
class SimConfig:
    budget: int = 2000  # responses (CLOSESPIDER_PAGECOUNT)
    concurrency: int = 32  # CONCURRENT_REQUESTS
    per_host: int = 4  # CONCURRENT_REQUESTS_PER_DOMAIN: pop limit and download slots
    pop_batch: int = 16  # SPITAG_POP_BATCH
    scraper_bytes: int = 5_000_000  # SCRAPER_SLOT_MAX_ACTIVE_SIZE
    max_unscored: int = 64  # SPITAG_MAX_UNSCORED (2 × CONCURRENT_REQUESTS): downloading + waiting + parsing (0: no limit)
    max_backlog: int = 16  # SPITAG_MAX_BACKLOG: the limit adapts below the cap (spitag.pace; 0: the cap, fixed)
    cpus: int = 2  # pages parsed at once (SPITAG_EXTRACT_PROCESSES: one per core, 2 here)
    min_pop: int = 0  # pop only when this many fit under the limit (0: half of it, as the scheduler)
    latency: float = 0.004  # seconds to the server's answer
    bandwidth: float = 0.0  # bytes / second after the answer (0: instant; local, the CPU is the bottleneck)
    parse_base: float = 0.008  # seconds of CPU per page
    parse_per_mb: float = 0.18  # … plus per MB of body
    dead_seconds: float = 0.002  # CPU of a dead link's item
    flush_interval: float = 0.2  # the scheduler's push/learn flush
    jitter: float = 0.0  # relative random jitter of latencies and parse times (0: none)
    jitter_seed: int = 0
    start_limit: int = 0  # the unscored limit before 16 answers (0: spitag.pace's, 2 · backlog + 1; 64: the crawler before)


@dataclass
class HostQ:
    queued: dict[int, tuple[float, int]] = field(default_factory=dict)  # url id → (priority, seq)
    total: float = 0.0
    pages: int = 0
    seq: int = 0  # insertion order of the host row (ties)
    popped_at: int = 0  # pop number of its last pop (ties: next_allowed, then rowid)
    leased: int = 0  # popped, not parsed yet (probe mode)
    estimate: float | None = None  # the strategy's latest estimate while not learnt (rescore)


class Frontier:
    """The SQLite frontier's pop/push semantics, in memory."""

    def __init__(self, ranker: Ranker, knobs: dict[str, float], learns: bool) -> None:
        self.hosts: dict[str, HostQ] = {}
        self.state: dict[Any, int] = {}  # url key → 0 queued, 1 leased/done
        self.host_of: dict[Any, str] = {}
        self.ranker = ranker
        self.knobs = knobs
        self.learns = learns
        self.tick = 0
        self.hseq = 0
        self.pops = 0

    def _host(self, host: str) -> HostQ:
        h = self.hosts.get(host)
        if h is None:
            self.hseq += 1
            h = self.hosts[host] = HostQ(seq=self.hseq)
        return h

    def push(self, entries: Sequence[tuple[Any, str, float]], combine: str) -> None:
        for url, host, prio in entries:
            st = self.state.get(url)
            if st is None:
                self.state[url] = 0
                self.tick += 1
                self._host(host).queued[url] = (prio, self.tick)
            elif st == 0:
                h = self.hosts[host]
                old, seq = h.queued[url]
                new = old + prio if combine == "sum" else max(old, prio)
                if not math.isfinite(new):
                    new = old
                h.queued[url] = (new, seq)

    def settle(self, host: str) -> None:
        h = self.hosts.get(host)
        if h is not None and h.leased > 0:
            h.leased -= 1

    def learn(self, observations: Sequence[tuple[str, float]]) -> None:
        for host, score in observations:
            h = self._host(host)
            h.total += score
            h.pages += 1

    def rescore(self, estimates: Sequence[tuple[str, float]]) -> None:
        for host, value in estimates:
            h = self.hosts.get(host)
            if h is not None and h.pages == 0:
                h.estimate = value

    def rank(self, h: HostQ, best: float) -> float:
        if not self.learns:
            return best
        if h.pages == 0 and h.estimate is not None:
            best = h.estimate  # a host not learnt yet: the strategy's latest estimate
        return self.ranker(best, h.total, h.pages, self.knobs)

    def pop(self, n: int, per_host: int) -> list[tuple[Any, str, float]]:
        self.pops += 1
        ranked = []
        probe = self.learns and self.knobs.get("probe", 0) > 0
        for name, h in self.hosts.items():
            if h.queued:
                best = max(p for p, _ in h.queued.values())
                if probe and h.pages == 0 and h.leased > 0:
                    continue  # probe: a host never learnt, with a page on its way, waits for it
                ranked.append((-self.rank(h, best), h.popped_at, h.seq, name))
        ranked.sort()
        out: list[tuple[Any, str, float]] = []
        for *_, name in ranked[:n]:
            if len(out) >= n:
                break
            h = self.hosts[name]
            take = min(1 if probe and h.pages == 0 else per_host, n - len(out))
            h.leased += min(len(h.queued), take)
            h.popped_at = self.pops
            items = heapq.nlargest(take, h.queued.items(), key=lambda kv: kv[1])
            for url, (prio, _) in items:
                del h.queued[url]
                self.state[url] = 1
                out.append((url, name, prio))
        return out


class Truth(Strategy):
    """``truth``: every outlink gets its page's true count (best-first, max) — the
    oracle's knowledge run through the crawler's mechanics (lag, pops, per-host
    limits): the ceiling of any strategy under those mechanics."""

    name = "truth"
    combine = "max"

    def __init__(self, graph: SimGraph) -> None:
        self.counts = dict(zip(graph.urls, graph.count))

    def seed(self) -> float:
        return 1e9

    def contribution(self, parent: Parent, url: str) -> float:
        return float(self.counts.get(url, 0))


class ParentScore(Strategy):
    """``parent``: best-first on the parent's semantic score alone (max), no host
    learning — the textbook focused crawler the issue compares with."""

    name = "parent"
    combine = "max"

    def seed(self) -> float:
        return 1e9

    def contribution(self, parent: Parent, url: str) -> float:
        return parent.score


@dataclass
class Fetch:
    url: Any  # node id, or a dead URL (str)
    host: str
    depth: int
    priority: float


def simulate(
    graph: SimGraph,
    settings: dict[str, Any],
    config: SimConfig | None = None,
    ranker: str | None = None,
    knobs: dict[str, float] | None = None,
    trace: bool = False,
) -> dict[str, Any]:
    """One crawl of ``graph``; returns the counts of the pages answered 200 in arrival
    order (``counts``), and with ``trace`` the fetch log."""
    cfg = config or SimConfig()
    s = Settings()
    s.setmodule("settings", priority="project")
    s.setdict(settings, priority="cmdline")
    name = s.get("SPITAG_STRATEGY")
    if name in ("truth", "parent"):  # the simulator's own: SpiTag's settings read as for spitag
        s.set("SPITAG_STRATEGY", "spitag", priority="cmdline")
    options = Options(s, environ={})
    strategy = Truth(graph) if name == "truth" else ParentScore() if name == "parent" else strategy_from_options(options)
    learns = strategy.learns_hosts
    k = {"host_weight": options.host_weight, "half": options.score_half, "prior": options.host_prior,
         "host_k": options.host_k, "probe": float(options.host_probe)}
    k.update(knobs or {})
    if ranker is None:
        ranker = "posterior" if strategy.ranking.mode == "posterior" else "current"
    frontier = Frontier(RANKERS[ranker], k, learns)
    rescore_seconds = options.rescore_seconds if hasattr(strategy, "estimates") and learns else 0.0
    rescored = -1  # the strategy's refits at the last rescore
    rescored_at = -math.inf
    seed_hosts = {graph.host[sid] for sid in graph.seeds}

    def rescore() -> None:
        """The scheduler's ``_rescore``, before a pop."""
        nonlocal rescored, rescored_at
        if rescore_seconds > 0 and strategy.refits != rescored and now - rescored_at >= rescore_seconds:
            rescored = strategy.refits
            estimates = [(h, v) for h, v in strategy.estimates(2000) if h not in seed_hosts]
            if estimates:
                rescored_at = now
                frontier.rescore(estimates)

    rng = random.Random(cfg.jitter_seed)
    unscored = UnscoredLimit(cfg.max_unscored, cfg.max_backlog, start=cfg.start_limit or None)

    def jit(x: float) -> float:
        return x * (1.0 + cfg.jitter * (2 * rng.random() - 1)) if cfg.jitter else x

    # The spider: seeds at the strategy's seed priority, combine max.
    pending: list[tuple[tuple[Any, str, float], str]] = []
    learnt: list[tuple[str, float]] = []
    for sid in graph.seeds:
        pending.append(((sid, graph.host[sid], strategy.seed()), "max"))
    depth_of: dict[Any, int] = {sid: 0 for sid in graph.seeds}

    events: list[tuple[float, int, str, Any]] = []  # (time, seq, kind, payload)
    seq = 0

    def at(t: float, kind: str, payload: Any = None) -> None:
        nonlocal seq
        seq += 1
        heapq.heappush(events, (t, seq, kind, payload))

    ready: list[tuple[Any, str, float]] = []
    in_downloader = 0
    host_active: dict[str, int] = {}
    host_waiting: dict[str, list[Fetch]] = {}
    scraper: list[tuple[Fetch, int]] = []  # responses waiting for a CPU
    scraper_bytes = 0  # of the responses waiting or being parsed
    cpu_busy = 0  # pages being parsed
    responses = 0
    stopping = False
    arrivals: list[Any] = []  # fetch log: (time, url, status)
    counts: list[int] = []
    fetched_ids: set[int] = set()
    now = 0.0

    def flush() -> None:
        by: dict[str, list[tuple[Any, str, float]]] = {}
        for e, c in pending:
            by.setdefault(c, []).append(e)
        for c, es in by.items():
            frontier.push(es, c)
        pending.clear()
        if learnt:
            frontier.learn(learnt)
            learnt.clear()

    def next_request() -> Fetch | None:
        if not ready:
            flush()
            cap = unscored.limit()
            room = cap - in_downloader - len(scraper) - cpu_busy if cap else cfg.pop_batch
            want = min(cfg.pop_batch, room)
            if want < min(cfg.pop_batch, cfg.min_pop or max(cap // 2, 1)):
                return None  # held back (the scheduler's SPITAG_MAX_UNSCORED)
            rescore()
            popped = frontier.pop(want, cfg.per_host)
            if not popped:
                return None
            ready.extend(reversed(popped))
        url, host, prio = ready.pop()
        return Fetch(url, host, depth_of.get(url, 0), prio)

    def start_download(f: Fetch, t: float) -> None:
        host_active[f.host] = host_active.get(f.host, 0) + 1
        size = graph.size[f.url] if isinstance(f.url, int) else 600
        answer = t + jit(cfg.latency)
        at(answer, "answer", (f, t))
        at(answer + (size / cfg.bandwidth if cfg.bandwidth else 0.0), "downloaded", (f, size))

    def engine(t: float) -> None:
        nonlocal in_downloader
        while not stopping and in_downloader < cfg.concurrency and scraper_bytes <= cfg.scraper_bytes:
            f = next_request()
            if f is None:
                return
            in_downloader += 1
            if host_active.get(f.host, 0) < cfg.per_host:
                start_download(f, t)
            else:
                host_waiting.setdefault(f.host, []).append(f)

    def run_cpu(t: float) -> None:
        nonlocal cpu_busy
        while cpu_busy < cfg.cpus and scraper:
            f, size = scraper.pop(0)
            cost = cfg.parse_base + size / 1e6 * cfg.parse_per_mb if isinstance(f.url, int) else cfg.dead_seconds
            cpu_busy += 1
            at(t + jit(cost), "parsed", (f, size))

    def parsed(f: Fetch) -> None:
        frontier.settle(f.host)
        if not isinstance(f.url, int):
            return
        i = f.url
        score = float(graph.count[i])
        learnt.append((f.host, score))
        outs = graph.links[i]
        dead = graph.dead[i]
        n_out = len(outs) + len(dead)
        if n_out == 0:
            return
        parent = Parent(url=graph.urls[i], depth=f.depth, priority=f.priority, score=score, outlinks=n_out)
        combine = strategy.combine
        for j in outs:
            prio = strategy.priority(parent, graph.urls[j])
            if j not in depth_of:
                depth_of[j] = f.depth + 1
            pending.append(((j, graph.host[j], prio), combine))
        for u in dead:
            prio = strategy.priority(parent, u)
            if u not in depth_of:
                depth_of[u] = f.depth + 1
            pending.append(((u, urlsplit(u).hostname or "", prio), combine))

    engine(0.0)
    at(cfg.flush_interval, "flush")
    while events:
        now, _, kind, payload = heapq.heappop(events)
        if kind == "flush":
            flush()
            engine(now)
            if events:
                at(now + cfg.flush_interval, "flush")
            continue
        if kind == "answer":
            f, started = payload
            unscored.answered(now, now - started)
            if isinstance(f.url, int):
                if f.url not in fetched_ids:
                    fetched_ids.add(f.url)
                    counts.append(graph.count[f.url])
                responses += 1
                if trace:
                    arrivals.append((now, graph.urls[f.url], 200, f.priority))
            else:
                attempts = 3 if str(f.url).startswith("https") else 1
                responses += 0 if attempts == 3 else 1
                if trace:
                    arrivals.append((now, f.url, 405 if attempts == 3 else 404, f.priority))
            if responses >= cfg.budget:
                stopping = True
            continue
        if kind == "downloaded":
            f, size = payload
            in_downloader -= 1
            host_active[f.host] -= 1
            waiting = host_waiting.get(f.host)
            if waiting:
                start_download(waiting.pop(0), now)
            scraper.append((f, size))
            scraper_bytes += size
            run_cpu(now)
            engine(now)
            continue
        if kind == "parsed":
            f, size = payload
            scraper_bytes -= size
            cpu_busy -= 1
            parsed(f)
            run_cpu(now)
            engine(now)
            if stopping and in_downloader == 0:
                break
            continue
    return {"counts": counts, "responses": responses, "seconds": now, "log": arrivals if trace else None}


# ============================================================================ reports


def harvests(counts: Sequence[int], ks: Sequence[int]) -> dict[int, float | None]:
    return {k: harvest(counts, k) for k in ks}


def parse_sets(items: Sequence[str]) -> dict[str, str]:
    out = {}
    for item in items:
        name, _, value = item.partition("=")
        out[name.strip()] = value.strip()
    return out


def main(argv: Sequence[str] | None = None) -> int:
    d = WebParams()
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--strategies", default="bfs,opic,spitag-legacy,spitag")
    p.add_argument("--k", default="100,300,1000")
    p.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                   help="a crawler setting for the spitag strategy (repeatable)")
    p.add_argument("--ranker", default=None, choices=sorted(RANKERS),
                   help="host ranking of the frontier for learning strategies")
    p.add_argument("--work", type=Path, default=DEFAULT_WORK)
    p.add_argument("--corpus", type=Path, default=None)
    p.add_argument("--sites", type=int, default=None)
    p.add_argument("--size-median", type=float, default=d.size_median)
    p.add_argument("--size-sigma", type=float, default=d.size_sigma)
    p.add_argument("--fanout", type=int, default=d.fanout)
    p.add_argument("--intra-links", type=float, default=d.intra_links)
    p.add_argument("--inter-links", type=float, default=d.inter_links)
    p.add_argument("--inter-home", type=float, default=d.inter_home)
    p.add_argument("--popularity", type=float, default=d.popularity)
    p.add_argument("--homophily", type=float, default=d.homophily)
    p.add_argument("--pages-budget", type=int, default=2000)
    p.add_argument("--jitter", type=float, default=0.0)
    args = p.parse_args(argv)
    ks = [int(k) for k in args.k.split(",")]
    params = WebParams(seed=args.seed, sites=args.sites, size_median=args.size_median,
                       size_sigma=args.size_sigma, fanout=args.fanout, intra_links=args.intra_links,
                       inter_links=args.inter_links, inter_home=args.inter_home,
                       popularity=args.popularity, homophily=args.homophily)
    started = time.monotonic()
    graph = build_graph(params, args.work, args.corpus)
    oracle = graph.oracle(max(ks))
    cfg = SimConfig(budget=args.pages_budget, jitter=args.jitter)
    extra = parse_sets(args.set)
    rows = {"oracle": harvests(oracle, ks)}
    for name in args.strategies.split(","):
        settings = {"SPITAG_STRATEGY": name, **(extra if name.startswith("spitag") else {})}
        got = simulate(graph, settings, cfg, ranker=args.ranker if name.startswith("spitag") else None)
        rows[name] = harvests(got["counts"], ks)
    head = f"{'':<14}" + "".join(f"| K={k:<5} items  ×oracle ×bfs  ×opic " for k in ks)
    print(head)
    for name, row in rows.items():
        line = f"{name:<14}"
        for k in ks:
            v = row[k]
            cells = [f"{v / rows[b][k]:.2f}" if v and b in rows and rows[b][k] else "—" for b in ("oracle", "bfs", "opic")]
            line += f"| {v if v is None else round(v, 2)!s:>12}  {cells[0]:>6} {cells[1]:>5} {cells[2]:>5} "
        print(line)
    print(f"({time.monotonic() - started:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
