"""The frontier contract: what the scheduler may expect of every backend.

A frontier holds one crawl's URLs in three states — *queued*, *leased*, *done* — and
per-host politeness state. It is shared by every worker of a crawl (Redis) or owned by
one (SQLite); the contract is the same:

* ``push(entries, combine)`` — insert each URL as queued; a URL already queued gets the
  new priority combined with its own (``"sum"``: added, for cash-like strategies;
  ``"max"``: the larger, for best-first ones). A leased or done URL is left alone: seen
  is not done, but done is done (never fetched twice in one crawl).
* ``pop(n)`` — up to ``n`` of the best queued URLs among hosts that are *ready* (their
  next-allowed time has come), each **leased** to this owner for ``lease_seconds``. A
  host with a delay gives one URL per pop and is then not ready for ``delay`` seconds;
  a host without one gives at most ``per_host`` URLs per pop. Hosts are taken in order
  of their *rank* (their best queued priority, plus what the crawl learnt of the host
  when ``host_weight`` > 0: see ``host_rank``), and each host's URLs in order of
  priority. ``host_ranking`` says how the learnt yield enters the rank: ``"blend"``
  (the σ blend, ``spitag-legacy``) or ``"posterior"`` (``spitag``: the posterior mean
  ``(S + k · best) / (n + k)`` of the host's page score, S and n the score sum and
  count of its fetched pages, k = ``host_k``, ``SPITAG_HOST_K``).
  With ``probe`` (``SPITAG_HOST_PROBE``; strategies that learn hosts), a host with no
  URL done and no page learnt yet gives one URL per pop and is then not ready until
  that page is learnt or the URL leaves its lease (acked, released or reaped); it is
  ready again at once, or when its hard politeness gate (``acquire``) opens. So the
  crawl does not commit several downloads to a site before its first page has shown
  what the site is worth.
* ``ack(urls)`` — leased → done, once the page is stored (or finally failed).
* ``mark_done(entries)`` — unknown or queued → done, never fetched (a canonical URL
  whose page was fetched under another URL).
* ``revive(entries)`` — done → queued again with the entry's priority, depth, reason
  and ``revisit`` data (a recrawl of an expired page); a queued or leased URL is left
  alone; an unknown URL is inserted as queued (as by ``push``). Returns how many became
  queued. Once popped and acked, a revived URL is done again (and may be revived again).
* ``release(urls)`` — leased → queued, for work handed back unfinished.
* ``renew(urls)`` — extend this owner's leases while downloads are still running.
* ``reap()`` — expired leases (a dead worker's, or retries whose time has come: below)
  → queued. Nothing popped is ever lost.
* ``recover()`` — at a worker's start, the leases of workers known to be gone → queued
  at once, without waiting for them to expire: a process of this machine's process
  table that ended (``owners.is_gone``), and on a shared frontier a worker that closed
  (its failed URLs waiting for another try) or whose ``heartbeat`` stopped (asked once
  more ``recover_again`` seconds later, when a worker of another machine or container
  killed just before the start is known to be gone).
* ``workers()`` — the crawl's workers known by their heartbeat: each one's machine,
  the seconds since it last beat, and whether it counts as alive; ``None`` where the
  backend keeps no heartbeat (one worker: SQLite). ``others_alive()`` counts the live
  ones but this owner.
* ``retry_later(url, retries, seconds)`` — this owner's download of a leased URL got no
  usable answer: its failures are counted with the URL (every worker's, every run's),
  and up to ``retries`` of them it stays leased, renewed by nobody, for ``seconds ·
  2^(n−1)`` (n its failures so far): then ``reap`` queues it again, for any worker. It
  keeps the crawl going meanwhile (``has_work``) unless its host is down, and a probe
  of its host ends. Past ``retries`` the count goes and the failure stands (the caller
  stores it and acks).
* ``has_work()`` — anything leased (by anyone) or queued on a host that is not down:
  the crawl is not over.
* ``next_ready()`` — seconds until some host with queued URLs is ready (0 if one is),
  ``None`` when nothing is queued.
* ``set_host_down(host, seconds)`` — the host stopped answering (``SPITAG_HOST_FAILURES``
  failures in a row): none of its URLs is popped for ``seconds``, and its queued URLs
  (and its leased ones: failed URLs waiting to be tried again) do not keep the crawl
  going (``has_work``); they stay where they are, for when the time is up or for a
  later run. ``hosts_down()`` — (host, seconds left, URLs waiting: queued or leased)
  of the hosts down now. ``clear_down()`` — a new run starts: every host gets another try,
  and the failures in a row below start over.
  ``host_failed(host, limit, seconds)`` — a download of the host got no answer: the
  failures in a row are counted for every worker, and the ``limit``-th sets the host
  down (the first, if it was set down before and has not answered since);
  ``host_answered(host)`` — it answered: the count and that mark go;
  ``failing_hosts()`` — the hosts with either.
* ``counts()`` / ``hosts()`` / ``top()`` — queued, leased, done (and, of the first two,
  retrying: failed, to be tried again); per host; best waiting.
* ``acquire(host, delay)`` — the hard politeness gate, taken just before a download:
  two requests to one host are never less than its delay apart, whichever workers
  send them. ``pause_host(host, seconds)`` — the host asked to be left alone
  (``Retry-After``); ``back_off(host, sent_ago, base, cap)`` / ``end_back_off(host,
  sent_ago)`` — a refusal without one: pauses that double while refusals go on, counted
  for every worker. ``request_stop()`` / ``stop_requested()`` — ``scrapy stop``.
* ``record_setup(setup)`` — what this worker crawls with (name → value: its strategy, a
  digest of its seeds) becomes the crawl's; returns the one recorded before (empty the
  first time), so that a worker can say when it differs from the others' or an
  earlier run's.
* ``learn(observations, links)`` — the semantic scores of pages fetched, (host, score):
  the host ranking's S and n; and the *link evidence* the strategy found for hosts it
  had not fetched yet, ``(host, Σ log(1 + linking page's score), links, mask of linking
  hosts)`` (``spitag.linkevidence``): summed per host, masks OR-ed. ``learnt(since)`` —
  what the crawl learnt that this owner's strategy has not seen, in ``Learnt``
  batches: ``since=None`` gives every host's totals so far, pages and links (a resumed
  crawl's strategy starts from them) and a cursor; a cursor gives what *other* owners
  learnt after it, batch by batch in the order learnt (several workers' strategies
  learn from every worker's pages and links).
* ``rescore(estimates)`` — (host, value) pairs: what the strategy now expects a page
  of a host it has not learnt yet to be worth (``SiteLearning.estimates``). Until the
  host's first page is learnt, it ranks by its latest estimate instead of its best
  queued priority, which holds what its links were worth when they were found (the
  URLs' own priorities, and their order within the host, stay). A host with learnt
  pages is left alone. Returns how many hosts with queued URLs were re-ranked.
* ``heartbeat()`` — this owner is alive; returns how many live owners of the crawl
  run on its machine (``machine``, ``spitag.machine``; by default the owner's host
  name), itself included: they share its CPUs.
"""

from __future__ import annotations

import json
import math
import time
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from spitag.frontier.owners import host_of
from spitag.linkevidence import MASK  # link evidence: the mask of linking hosts

QUEUED, LEASED, DONE = 0, 1, 2
COMBINES = ("sum", "max")
HOST_RANKINGS = ("blend", "posterior")


FAILING_HOSTS = 65536  # hosts with failures in a row kept in a process before a clean-up
BACK_OFF_KEEP = 60.0  # seconds a host's refusals in a row are remembered after its back-off ends
RETRY_MAX_SECONDS = 86400.0  # the longest wait before a failed URL's next try
BACK_OFF_HOSTS = 4096  # hosts with a back-off count kept in a process before a clean-up


def back_off_seconds(refusals: int, base: float, cap: float) -> float:
    """The pause after ``refusals`` refusals (or failures) in a row: ``base · 2^(refusals−1)``,
    at most ``cap``; also the wait before a failed URL's next try (``retry_later``)."""
    return min(base * 2.0 ** min(refusals - 1, 30), cap)


class HostFailure(NamedTuple):
    """What one failed download did (``Frontier.host_failed``)."""

    count: int  # the host's failures in a row, this one included; 0: it was down already
    down: float  # seconds it is set down for from now (0: not down)
    again: bool  # set down at its first failure: down before, and no answer since


class Retry(NamedTuple):
    """What ``Frontier.retry_later`` did with one failed download."""

    tries: int  # the URL's failed downloads, this one included
    seconds: float  # until it is queued again; 0: its retries are used up, the failure stands


class FailureCounts:
    """Failures in a row per host, and whether each was set down before, kept in one
    process: the frontier's own where one worker owns it, and politeness's while a
    shared frontier is unreachable. ``failed`` is ``Frontier.host_failed``'s rule
    (without the frontier's ``set_host_down``)."""

    def __init__(self) -> None:
        self.rows: dict[str, list[Any]] = {}  # host → [failures in a row, down before, down until]

    def failed(self, host: str, limit: int, seconds: float) -> HostFailure:
        now = time.monotonic()
        row = self.rows.get(host)
        if row is not None and row[2] > now:
            return HostFailure(0, row[2] - now, False)  # down already: nothing counted
        if row is None:
            if len(self.rows) >= FAILING_HOSTS:  # (forgetting only sets a host down later)
                self.rows = {h: r for h, r in self.rows.items() if r[2] > now}
            row = self.rows[host] = [0, False, 0.0]
        row[0] += 1
        count, before = row[0], row[1]
        if count < limit and not before:
            return HostFailure(count, 0.0, False)
        row[:] = [0, True, now + seconds]
        return HostFailure(count, seconds, before)

    def answered(self, host: str) -> None:
        self.rows.pop(host, None)

    def failing(self) -> list[str]:
        return list(self.rows)


@dataclass(slots=True)
class Entry:
    """What the frontier keeps of a request: enough to rebuild it, nothing pickled."""

    url: str
    host: str
    depth: int
    priority: float
    reason: dict[str, Any] | None = None
    # Validators of a recrawl (etag, last_modified, interval, md5): set by ``revive``,
    # returned by ``pop``/``top``; ``push`` ignores it.
    revisit: dict[str, Any] | None = None

    def reason_json(self) -> str | None:
        return json.dumps(self.reason, separators=(",", ":"), default=str) if self.reason else None

    @staticmethod
    def parse_reason(text: str | bytes | None) -> dict[str, Any] | None:
        return json.loads(text) if text else None


@dataclass
class Counts:
    queued: int = 0
    leased: int = 0
    done: int = 0
    # of the queued and leased: URLs whose download failed and that wait for another
    # try, or are being tried again (``retry_later``)
    retrying: int = 0


@dataclass
class HostState:
    host: str
    queued: int
    leased: int
    done: int
    best: float | None
    next_allowed: float
    delay: float | None
    mean_score: float | None  # mean semantic score of the host's fetched pages
    # Where workers share the host's places (enter_host): the downloads to it running
    # now, and the requests waiting in its line; None where nothing is shared.
    downloading: int | None = None
    waiting: int | None = None


@dataclass(frozen=True)
class Worker:
    """A worker of a crawl as its heartbeat shows it (``Frontier.workers``)."""

    owner: str  # host:pid:space:start:random (spitag.frontier.owners)
    machine: str  # whose CPUs it shares (spitag.machine)
    silent_seconds: float  # since its last heartbeat
    alive: bool  # it beat lately enough to count as running


@dataclass
class PushResult:
    new: int = 0
    raised: int = 0  # waiting URLs whose priority the push raised
    ignored: int = 0  # leased or done already
    hosts: set[str] = field(default_factory=set)


@dataclass
class Learnt:
    """One batch of what the crawl learnt (``learnt``): pages fetched, as (host, score
    sum, pages), and link evidence, as (host, Σ log(1 + score), links, mask); a strategy
    takes the links first (they were found before the pages they predict)."""

    pages: list[tuple[str, float, int]] = field(default_factory=list)
    links: list[tuple[str, float, int, int]] = field(default_factory=list)


def link_rows(rows: Sequence[Sequence[Any]]) -> dict[str, list[Any]]:
    """Link evidence rows summed per host (masks OR-ed); rows not of the shape are
    dropped (they come from another process: not ours to crash on)."""
    out: dict[str, list[Any]] = {}
    for row in rows:
        try:
            host, log_sum, links, mask = row
            log_sum, links, mask = float(log_sum), int(links), int(mask) & MASK
        except (TypeError, ValueError):
            continue
        if not isinstance(host, str) or not host or not math.isfinite(log_sum) or log_sum < 0 or links <= 0:
            continue
        total = out.setdefault(host, [0.0, 0, 0])
        total[0] += log_sum
        total[1] += links
        total[2] |= mask
    return out


@dataclass(frozen=True)
class Politeness:
    """Per-host pacing. ``delay`` is the default seconds between two requests to a host
    (``DOWNLOAD_DELAY``; a robots.txt Crawl-delay overrides it per host)."""

    delay: float = 0.0
    per_host: int = 4


def host_rank(
    best: float,
    mean_score: float | None,
    host_weight: float,
    half: float,
    prior: float = 0.0,
    *,
    score_sum: float = 0.0,
    pages: int = 0,
    mode: str = "blend",
    k: float = 0.25,
) -> float:
    """A host's place in the pop order (higher first).

    Without host learning (``host_weight`` = 0, every strategy but the ``spitag`` ones)
    it is the host's best queued priority.

    ``mode="posterior"`` (``spitag``): the posterior mean of the host's page score,
    ``rank = (S + k · best) / (n + k)`` — S = ``score_sum`` and n = ``pages`` of the
    host's fetched pages, ``best`` its best queued priority (in score units) counted as
    k pseudo-pages (``SPITAG_HOST_K``). k ≤ 0: the host's mean once it has pages, else
    ``best``. Same formula as ``spitag.scoring.host_posterior`` (and Redis' ``rank()``).

    ``mode="blend"`` (``spitag-legacy``): the priority is first squashed into [0, 1) —
    ``link = best / (best + 1)`` — and blended with what the host's fetched pages have
    shown: ``rank = W · σ(mean) + (1 − W) · link``, ``σ(m) = m / (m + half)``, W =
    ``host_weight`` (``SPITAG_HOST_WEIGHT``). A host not fetched yet is taken to be as
    rich as ``prior`` (``SPITAG_HOST_PRIOR``, a semantic score): optimism about the
    unknown, so that the crawl keeps discovering hosts instead of settling on the first
    fair ones; it is ranked by ``link`` alone when the prior is 0.
    """
    if host_weight <= 0:
        return best
    if mode == "posterior":
        return posterior_rank(best, score_sum, pages, k)
    link = best / (best + 1.0) if best > 0 else 0.0
    if mean_score is None:
        if prior <= 0:
            return link
        mean_score = prior
    sigma = mean_score / (mean_score + half) if mean_score > 0 else 0.0
    return host_weight * sigma + (1.0 - host_weight) * link


def posterior_rank(best: float, score_sum: float, pages: int, k: float) -> float:
    """``(S + k · best) / (n + k)``; k ≤ 0: S / n, or ``best`` when n = 0. The frontier's
    copy of ``spitag.scoring.host_posterior`` (scoring imports the extractor; the
    frontier stays light): tests hold the two equal."""
    if k <= 0:
        return score_sum / pages if pages else best
    return (score_sum + k * best) / (pages + k)


class Frontier(ABC):
    """One crawl's frontier; see the module docstring for the contract."""

    def __init__(
        self,
        url: str,
        crawl: str,
        owner: str,
        *,
        lease_seconds: float = 60.0,
        politeness: Politeness | None = None,
        host_weight: float = 0.0,
        score_half: float = 10.0,
        host_prior: float = 0.0,
        strategy: str | None = None,
        host_ranking: str = "blend",
        host_k: float = 0.25,
        machine: str | None = None,
        probe: bool = False,
    ) -> None:
        if not 0 < lease_seconds <= 3600:
            raise ValueError("lease_seconds must be in (0, 3600]")
        self.url = url
        self.crawl = crawl
        self.owner = owner
        self.lease_seconds = lease_seconds
        self.politeness = politeness or Politeness()
        self.host_weight = host_weight
        self.score_half = score_half
        self.host_prior = host_prior
        if host_ranking not in HOST_RANKINGS:
            raise ValueError(f"host_ranking must be one of {HOST_RANKINGS}, not {host_ranking!r}")
        self.host_ranking = host_ranking
        self.host_k = float(host_k)
        self.strategy = strategy  # named in the reasons a compact backend rebuilds
        # whose CPUs this owner shares (spitag.machine); default: the owner's host name
        self.machine = machine or host_of(owner)
        self.probe = probe  # a host with nothing done or learnt: one URL, then a wait (see pop)
        self._back_offs: dict[str, tuple[int, float]] = {}  # host → (refusals, end): back_off
        self._failures = FailureCounts()  # host_failed, where one worker owns the frontier

    def rank(self, best: float, score_sum: float = 0.0, pages: int = 0, estimate: float | None = None) -> float:
        """The rank of a host whose best queued priority is ``best`` and whose fetched
        pages scored ``score_sum`` in all over ``pages`` pages; ``estimate``: its latest
        ``rescore``, which stands for ``best`` until a page is learnt."""
        if not pages and estimate is not None:
            best = estimate
        mean = score_sum / pages if pages else None
        return host_rank(
            best, mean, self.host_weight, self.score_half, self.host_prior,
            score_sum=score_sum, pages=pages, mode=self.host_ranking, k=self.host_k,
        )

    @abstractmethod
    def push(self, entries: Sequence[Entry], combine: str) -> PushResult: ...

    @abstractmethod
    def pop(self, n: int, busy: Mapping[str, int] | None = None) -> list[Entry]:
        """``busy``: per host, the caller's requests already on their way to a download
        (handed to the downloader, not yet out of it); a host gives at most ``per_host``
        minus that, so that requests a host cannot take yet do not fill the downloader."""

    @abstractmethod
    def ack(self, urls: Sequence[str]) -> int: ...

    @abstractmethod
    def mark_done(self, entries: Sequence[Entry]) -> int:
        """Record URLs as done without fetching them (the canonical URL of a page just
        fetched under another spelling): unknown or queued → done; leased stays."""

    @abstractmethod
    def revive(self, entries: Sequence[Entry]) -> int:
        """Recrawl: done → queued with the entry's priority, depth, reason and revisit
        data; queued or leased stays as it is; unknown → queued (as ``push``). Returns
        how many became queued."""

    @abstractmethod
    def release(self, urls: Sequence[str]) -> int: ...

    @abstractmethod
    def renew(self, urls: Sequence[str]) -> int: ...

    @abstractmethod
    def reap(self) -> int: ...

    @abstractmethod
    def retry_later(self, url: str, retries: int, seconds: float) -> Retry | None:
        """A download of ``url``, leased by this owner, got no usable answer: count the
        failure with the URL; up to ``retries`` failures, keep it leased (renewed by
        nobody) for ``back_off_seconds(n, seconds, RETRY_MAX_SECONDS)``, after which
        ``reap`` queues it again, and end a probe of its host; past them, forget the
        count and change nothing (``Retry.seconds`` 0: the caller stores the failure and
        acks). ``None`` when
        the URL is not leased by this owner (it was reaped, or is not a frontier
        URL): the caller retries in its own way."""

    @abstractmethod
    def recover(self) -> int:
        """At start: hand back at once the leases of workers known to be gone (see the
        module docstring), and return how many. A live worker's stay its own."""

    @abstractmethod
    def has_work(self) -> bool: ...

    @abstractmethod
    def next_ready(self) -> float | None: ...

    @abstractmethod
    def set_host_delay(self, host: str, delay: float) -> None: ...

    @abstractmethod
    def host_delay(self, host: str) -> float:
        """The host's delay: its own (robots.txt Crawl-delay) or the default."""

    @abstractmethod
    def host_delays(self) -> dict[str, float]:
        """Every host's own delay (the overrides of the default)."""

    @abstractmethod
    def acquire(self, host: str, delay: float) -> float:
        """Hard politeness, at download time: 0.0 and the host is taken for ``delay``
        seconds, or the seconds to wait before asking again. Shared by all workers."""

    @abstractmethod
    def set_host_down(self, host: str, seconds: float) -> None:
        """The host stopped answering: pop none of its URLs for ``seconds`` from now, for
        every worker, and let its queued and leased URLs (which stay so) not keep the
        crawl going (``has_work``). A later time already set stays. The hard gate and the
        shared places are left alone: requests already past the frontier go out."""

    @abstractmethod
    def hosts_down(self) -> list[tuple[str, float, int]]:
        """The hosts down now: (host, seconds until it is tried again, URLs queued)."""

    @abstractmethod
    def clear_down(self) -> int:
        """A new run: every host down is tried again (its pop time reset too). Returns
        how many were down."""

    def host_failed(self, host: str, limit: int, seconds: float) -> HostFailure:
        """A download of ``host`` got no answer (``SPITAG_HOST_FAILURES``): count it
        among the host's failures in a row, every worker's together, and set the host
        down (``set_host_down``) for ``seconds`` at the ``limit``-th, or at the first if
        it was set down before and has not answered since (``host_answered``): a host
        that stays dead costs one download per down time. A failure while the host is
        down counts nothing (the downloads that were out when it went down) and says
        how long it stays down. This default keeps the counts in the process (a
        frontier one worker owns); a shared frontier keeps them for all its workers."""
        failure = self._failures.failed(host, limit, seconds)
        if failure.count and failure.down:
            self.set_host_down(host, seconds)
        return failure

    def host_answered(self, host: str) -> None:
        """``host`` answered: its failures in a row, and its mark of having been set
        down, go."""
        self._failures.answered(host)

    def failing_hosts(self) -> list[str]:
        """The hosts with failures in a row or the mark of having been set down: those
        whose answer ``host_answered`` must hear of."""
        return self._failures.failing()

    @abstractmethod
    def pause_host(self, host: str, seconds: float) -> None:
        """The host asked for a pause (HTTP 429 or 503 with ``Retry-After``): no URL of
        it is popped, its hard gate (``acquire``) stays shut and, where places are
        shared, none is given (``enter_host``), for ``seconds`` from now, for every
        worker. A later time already set stays."""

    def back_off(self, host: str, sent_ago: float, base: float, cap: float) -> float:
        """A request sent ``sent_ago`` seconds ago was refused with no word on how long
        to wait (HTTP 429 or 503 without ``Retry-After``): pause the host
        (``pause_host``) for ``base · 2^(n−1)`` seconds, at most ``cap``, n the refusals
        in a row, counted for every worker; return those seconds. A request sent before
        the last back-off ended was in flight when it began: its refusal is part of
        that episode, and answers 0 (no new pause, n unchanged), so that a burst of
        refusals of the downloads then running does not double the pause once each.
        The count is forgotten ``BACK_OFF_KEEP`` seconds after the pause ends. This
        default keeps it in the process (a frontier one worker owns); a shared
        frontier keeps it for all its workers."""
        now = time.monotonic()
        refusals, end = self._back_offs.get(host, (0, 0.0))
        if refusals and now - sent_ago < end:
            return 0.0
        if now > end + BACK_OFF_KEEP:  # no refusal for long: this one starts over
            refusals = 0
        seconds = back_off_seconds(refusals + 1, base, cap)
        if len(self._back_offs) >= BACK_OFF_HOSTS:  # forget the hosts whose count has lapsed
            self._back_offs = {h: v for h, v in self._back_offs.items() if v[1] + BACK_OFF_KEEP > now}
        self._back_offs[host] = (refusals + 1, now + seconds)
        self.pause_host(host, seconds)
        return seconds

    def end_back_off(self, host: str, sent_ago: float) -> bool:
        """A request to ``host`` sent ``sent_ago`` seconds ago was served: if it was sent
        after the host's last back-off ended, the refusals in a row are forgotten (the
        next one starts at ``base`` again). True when the host has no count left."""
        entry = self._back_offs.get(host)
        if entry is None:
            return True
        if time.monotonic() - sent_ago < entry[1]:
            return False
        del self._back_offs[host]
        return True

    # Seconds after a worker's start when ``recover`` is worth calling once more: on a
    # shared frontier a worker killed just before this one started is not known to be
    # gone until its heartbeat is that old. 0: once at start is enough.
    recover_again = 0.0

    # Shared per-host concurrency: ``CONCURRENT_REQUESTS_PER_DOMAIN`` for all workers
    # together (spitag.politeness). A frontier that one process uses has nothing to
    # share, and its worker's own limit is the whole limit: these defaults.
    shares_hosts = False
    # A request waiting in a host's line that has not asked again for this long has
    # gone (its worker died or gave up) and loses its turn; politeness asks at least
    # every 0.5 s while it waits.
    turn_seconds = 2.0

    def enter_host(self, host: str, token: str, limit: int, hold: float) -> int:
        """A place among the ``limit`` downloads to ``host`` that every worker of the
        crawl together may have at once. 0: the place is ``token``'s for ``hold``
        seconds (``hold_hosts`` renews it, ``leave_host`` gives it back; a dead
        worker's places free themselves when their hold runs out); asked again, a
        place held is renewed. n > 0: every free place is promised, and ``token`` is
        n-th in the host's line: ask again soon (a request that stops asking for
        ``turn_seconds`` loses its turn). n < 0: the host asked for a pause
        (``pause_host``): no place for anyone, ask again in -n milliseconds. Places
        are handed out in turn, longest
        waiting first, whichever worker frees them, so that no worker keeps a busy
        host to itself by asking first each time a place of its own comes free."""
        return 0

    def leave_host(self, host: str, token: str) -> None:
        """Give back the place ``token`` holds, or its turn in the host's line (nothing
        if it has neither)."""

    def hold_hosts(self, places: Sequence[tuple[str, str]], hold: float) -> None:
        """Renew the (host, token) places still held for another ``hold`` seconds."""

    @abstractmethod
    def robots(self, netloc: str) -> bytes | None:
        """The robots.txt blob kept for ``netloc`` (``host[:port]``) by any worker or
        earlier run of the crawl, or None: none kept, or its time to live is over."""

    @abstractmethod
    def keep_robots(self, netloc: str, blob: bytes, ttl: float) -> None:
        """Keep ``netloc``'s robots.txt blob (spitag.robots: compressed) ``ttl`` seconds."""

    @abstractmethod
    def record_setup(self, setup: dict[str, str]) -> dict[str, str]:
        """Record ``setup`` as the crawl's; return the one recorded before ({} if none)."""

    @abstractmethod
    def request_stop(self) -> None:
        """Ask every worker of the crawl to stop gracefully (``scrapy stop``)."""

    @abstractmethod
    def stop_requested(self) -> bool: ...

    @abstractmethod
    def clear_stop(self) -> None:
        """Forget a stop request (a crawl started again resumes)."""

    @abstractmethod
    def learn(
        self, observations: Sequence[tuple[str, float]], links: Sequence[tuple[str, float, int, int]] = ()
    ) -> None:
        """Record the semantic scores of pages fetched, as (host, score) pairs (host
        ranking), and the link evidence found (see the module docstring); one round
        trip for the whole batch."""

    @abstractmethod
    def learnt(self, since: str | None) -> tuple[str, list[Learnt]]:
        """(cursor, batches): with ``since=None`` one batch of every host's totals so
        far (pages and links); with a cursor from an earlier call, the batches *other*
        owners learnt after it, in order (this owner's strategy saw its own first hand)."""

    @abstractmethod
    def rescore(self, estimates: Sequence[tuple[str, float]]) -> int:
        """Rank each host not learnt yet by its estimate (see the module docstring);
        one round trip; how many hosts with queued URLs were re-ranked."""

    def heartbeat(self) -> int:
        """Mark this owner alive (every second or so); how many live owners of the
        crawl share its machine, itself included. One, unless the backend is shared."""
        return 1

    def workers(self) -> list[Worker] | None:
        """The crawl's workers by their heartbeat (see the module docstring)."""
        return None

    def others_alive(self) -> int | None:
        """How many workers of the crawl but this one are alive; None: cannot tell."""
        workers = self.workers()
        return None if workers is None else sum(w.alive and w.owner != self.owner for w in workers)

    @abstractmethod
    def counts(self) -> Counts: ...

    @abstractmethod
    def hosts(self, limit: int = 50) -> list[HostState]: ...

    @abstractmethod
    def top(self, n: int = 20) -> list[Entry]: ...

    @abstractmethod
    def close(self) -> None: ...


def combine_priority(old: float, new: float, combine: str) -> float:
    total = old + new if combine == "sum" else max(old, new)
    return total if math.isfinite(total) else old
