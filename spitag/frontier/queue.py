"""The URL queue: what the scheduler may expect of every backend.

It holds one crawl's URLs in three states — *queued*, *leased*, *done* — shared by
every worker of a crawl (Redis) or owned by one (SQLite); the contract is the same:

* ``push(entries, combine)`` — insert each URL as queued; a URL already queued gets the
  new priority combined with its own (``"sum"``: added, for cash-like strategies;
  ``"max"``: the larger, for best-first ones) and keeps the lower depth. A leased or
  done URL is left alone: seen is not done, but done is done (never fetched twice in
  one crawl).
* ``pop(n, busy)`` — up to ``n`` of the best queued URLs among hosts that are *ready*
  (their next-allowed time has come), each **leased** to this owner for
  ``lease_seconds``. A host with a delay gives one URL per pop and is then not ready
  for ``delay`` seconds; a host without one gives at most ``per_host`` URLs per pop,
  less the caller's requests to it already on their way to a download (``busy``).
  Hosts are taken by rank (``spitag.ranking``), each host's URLs by priority.
* ``ack(urls)`` — leased → done, once the page is stored (or finally failed).
* ``release(urls)`` — this owner's leased → queued, for work handed back unfinished.
* ``renew(urls)`` — extend this owner's leases while downloads are still running.
* ``reap()`` — expired leases (a dead worker's, or failed URLs whose wait is over) →
  queued. Nothing popped is ever lost.
* ``recover()`` — at a worker's start, the leases of workers known to be gone → queued
  at once: a process of this machine's process table that ended (``owners.is_gone``),
  and on a shared frontier a worker that closed or whose heartbeat stopped (asked once
  more ``recover_again`` seconds later, when a worker of another machine or container
  killed just before the start is known to be gone).
* ``retry_later(url, retries, seconds)`` — this owner's download of a leased URL got no
  usable answer: its failures are counted with the URL (every worker's, every run's),
  and up to ``retries`` of them it stays leased, renewed by nobody, for ``seconds ·
  2^(n−1)``: then ``reap`` queues it again, for any worker. Past ``retries`` the count
  goes and the failure stands (``Retry.seconds`` 0: the caller stores it and acks).
  None when the URL is not leased by this owner.
* ``mark_done(entries)`` — unknown or queued → done, never fetched (a canonical URL
  whose page was fetched under another URL).
* ``revive(entries)`` — done → queued again with the entry's priority, depth, parent
  and ``revisit`` data (a recrawl); queued or leased is left alone; unknown → queued.
* ``has_work()`` — anything leased (by anyone) or queued on a host that is not down:
  the crawl is not over.
* ``next_ready()`` — seconds until some host with queued URLs is ready (0 if one is),
  ``None`` when nothing is queued.
* ``counts()`` / ``hosts()`` / ``top()`` — queued, leased, done (and of the first two,
  retrying); per host; the best waiting.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence

from spitag.frontier.records import Counts, Entry, HostState, PushResult, Retry


class UrlQueue(ABC):
    crawl: str
    owner: str
    lease_seconds: float
    # Seconds after a worker's start when ``recover`` is worth calling once more (see
    # above); 0: once at start is enough (a frontier one worker owns).
    recover_again = 0.0

    @abstractmethod
    def push(self, entries: Sequence[Entry], combine: str) -> PushResult: ...

    @abstractmethod
    def pop(self, n: int, busy: Mapping[str, int] | None = None) -> list[Entry]: ...

    @abstractmethod
    def ack(self, urls: Sequence[str]) -> int: ...

    @abstractmethod
    def release(self, urls: Sequence[str]) -> int: ...

    @abstractmethod
    def renew(self, urls: Sequence[str]) -> int: ...

    @abstractmethod
    def reap(self) -> int: ...

    @abstractmethod
    def recover(self) -> int: ...

    @abstractmethod
    def retry_later(self, url: str, retries: int, seconds: float) -> Retry | None: ...

    @abstractmethod
    def mark_done(self, entries: Sequence[Entry]) -> int: ...

    @abstractmethod
    def revive(self, entries: Sequence[Entry]) -> int: ...

    @abstractmethod
    def has_work(self) -> bool: ...

    @abstractmethod
    def next_ready(self) -> float | None: ...

    @abstractmethod
    def counts(self) -> Counts: ...

    @abstractmethod
    def hosts(self, limit: int = 50) -> list[HostState]: ...

    @abstractmethod
    def top(self, n: int = 20) -> list[Entry]: ...
