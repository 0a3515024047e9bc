"""What the frontier's contracts pass around: plain records, and the small rules two
backends share (how priorities combine, how long a back-off lasts)."""

from __future__ import annotations

import json
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from spitag.linkevidence import MASK  # link evidence: the mask of linking hosts

QUEUED, LEASED, DONE = 0, 1, 2
COMBINES = ("sum", "max")
RETRY_MAX_SECONDS = 86400.0  # the longest wait before a failed URL's next try
BACK_OFF_KEEP = 60.0  # seconds a host's refusals in a row are remembered after its back-off ends
FAILING_HOSTS = 65536  # hosts with failures in a row kept in a process before a clean-up
BACK_OFF_HOSTS = 4096  # hosts with a back-off count kept in a process before a clean-up


@dataclass(slots=True)
class Entry:
    """What the frontier keeps of a request: enough to rebuild it, nothing pickled.

    ``parent`` and ``parent_score`` are the page whose link queued the URL and its
    semantic score (kept compactly: many URLs share a parent); ``note`` is anything
    else its finder wants kept with it (a redirect's origin), opaque to the frontier.
    ``revisit`` holds a recrawl's validators: set by ``revive``, returned by ``pop`` and
    ``top``; ``push`` ignores it."""

    url: str
    host: str
    depth: int
    priority: float
    parent: str | None = None
    parent_score: float | None = None
    note: dict[str, Any] | None = None
    revisit: dict[str, Any] | None = None

    def about(self) -> dict[str, Any] | None:
        """Parent, its score and note as one JSON-able dict (None if nothing)."""
        about: dict[str, Any] = {}
        if self.parent is not None:
            about["parent"] = self.parent
        if self.parent_score is not None:
            about["parent_score"] = self.parent_score
        if self.note:
            about.update(self.note)
        return about or None

    def about_json(self) -> str | None:
        about = self.about()
        return json.dumps(about, separators=(",", ":"), default=str) if about else None

    @staticmethod
    def from_about(url: str, host: str, depth: int, priority: float, about: Any,
                   revisit: dict[str, Any] | None = None) -> Entry:
        """The reverse of ``about``; also reads a reason an earlier SpiTag stored (its
        ``strategy`` key is dropped: the crawl's strategy names it)."""
        data = dict(json.loads(about) if isinstance(about, (str, bytes)) else about or {})
        data.pop("strategy", None)
        parent, score = data.pop("parent", None), data.pop("parent_score", None)
        return Entry(url, host, depth, priority, parent, score, data or None, revisit)


@dataclass
class Counts:
    queued: int = 0
    leased: int = 0
    done: int = 0
    # of the queued and leased: URLs whose download failed and that wait for another
    # try, or are being tried again (``UrlQueue.retry_later``)
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
    # Where workers share the host's places (HostGate.enter): the downloads to it
    # running now, and the requests waiting in its line; None where nothing is shared.
    downloading: int | None = None
    waiting: int | None = None


@dataclass(frozen=True)
class Worker:
    """A worker of a crawl as its heartbeat shows it (``CrawlRegistry.workers``)."""

    owner: str  # host:pid:space:start:random (spitag.frontier.owners)
    machine: str  # whose CPUs it shares (spitag.machine)
    silent_seconds: float  # since its last heartbeat
    alive: bool  # it beat lately enough to count as running


@dataclass
class PushResult:
    new: int = 0
    raised: int = 0  # waiting URLs whose priority the push raised
    ignored: int = 0  # leased or done already
    over: int = 0  # new, but their host has as many URLs as the crawl's per-host limit
    hosts: set[str] = field(default_factory=set)


@dataclass
class Learnt:
    """One batch of what the crawl learnt (``LearningLog.learnt``): pages fetched, as
    (host, score sum, pages), and link evidence, as (host, Σ log(1 + score), links,
    mask); a strategy takes the links first (they were found before the pages they
    predict)."""

    pages: list[tuple[str, float, int]] = field(default_factory=list)
    links: list[tuple[str, float, int, int]] = field(default_factory=list)


class Retry(NamedTuple):
    """What ``UrlQueue.retry_later`` did with one failed download."""

    tries: int  # the URL's failed downloads, this one included
    seconds: float  # until it is queued again; 0: its retries are used up, the failure stands


class HostFailure(NamedTuple):
    """What one failed download did (``HostGate.failed``)."""

    count: int  # the host's failures in a row, this one included; 0: it was down already
    down: float  # seconds it is set down for from now (0: not down)
    again: bool  # set down at its first failure: down before, and no answer since


@dataclass(frozen=True)
class Limits:
    """What the whole crawl may take, every worker and run together: ``pages`` URLs done
    or leased at most (``SPITAG_PAGE_BUDGET``: ``pop`` takes no more), ``per_host`` URLs
    of one host at most (``SPITAG_MAX_PAGES_PER_HOST``: ``push`` refuses the next ones).
    None: no limit."""

    pages: int | None = None
    per_host: int | None = None


@dataclass(frozen=True)
class Politeness:
    """Per-host pacing. ``delay`` is the default seconds between two requests to a host
    (``SPITAG_HOST_DELAY``; a robots.txt Crawl-delay overrides it per host); a host
    without a delay gives at most ``per_host`` URLs per pop."""

    delay: float = 0.0
    per_host: int = 4


def combine_priority(old: float, new: float, combine: str) -> float:
    total = old + new if combine == "sum" else max(old, new)
    return total if math.isfinite(total) else old


def back_off_seconds(refusals: int, base: float, cap: float) -> float:
    """The pause after ``refusals`` refusals (or failures) in a row: ``base · 2^(refusals−1)``,
    at most ``cap``; also the wait before a failed URL's next try (``retry_later``)."""
    return min(base * 2.0 ** min(refusals - 1, 30), cap)


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


class FailureCounts:
    """Failures in a row per host, and whether each was set down before, kept in one
    process: by the gate of a frontier one worker owns, and by politeness while a
    shared frontier is unreachable. ``failed`` is ``HostGate.failed``'s rule (without
    setting the host down in the frontier)."""

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


class BackOffs:
    """Refusals in a row per host and when the last back-off ends, kept in one process
    (the gate of a frontier one worker owns): ``HostGate.back_off``'s rule."""

    def __init__(self) -> None:
        self.rows: dict[str, tuple[int, float]] = {}  # host → (refusals, end)

    def refused(self, host: str, sent_ago: float, base: float, cap: float) -> float:
        now = time.monotonic()
        refusals, end = self.rows.get(host, (0, 0.0))
        if refusals and now - sent_ago < end:
            return 0.0
        if now > end + BACK_OFF_KEEP:  # no refusal for long: this one starts over
            refusals = 0
        seconds = back_off_seconds(refusals + 1, base, cap)
        if len(self.rows) >= BACK_OFF_HOSTS:  # forget the hosts whose count has lapsed
            self.rows = {h: v for h, v in self.rows.items() if v[1] + BACK_OFF_KEEP > now}
        self.rows[host] = (refusals + 1, now + seconds)
        return seconds

    def served(self, host: str, sent_ago: float) -> bool:
        entry = self.rows.get(host)
        if entry is None:
            return True
        if time.monotonic() - sent_ago < entry[1]:
            return False
        del self.rows[host]
        return True
