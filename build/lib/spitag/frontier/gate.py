"""The per-host gate: politeness that holds for every worker of a crawl.

* ``acquire(host, delay)`` — the hard gate, taken just before a download: 0.0 and the
  host is taken for ``delay`` seconds, or the seconds to wait before asking again. Two
  requests to one host are never less than its delay apart, whichever workers send them.
* ``set_delay(host, delay)`` / ``delays()`` — a host's own delay (robots.txt
  Crawl-delay), for every worker.
* ``pause(host, seconds)`` — the host asked to be left alone (``Retry-After``): no URL
  of it is popped, its hard gate stays shut and, where places are shared, none is
  given, for ``seconds``. A later time already set stays.
* ``back_off(host, sent_ago, base, cap)`` — a refusal without ``Retry-After`` of a
  request sent ``sent_ago`` seconds ago: pause the host ``base · 2^(n−1)`` seconds (at
  most ``cap``), n the refusals in a row, counted for every worker; a request sent
  before the last back-off ended was in flight when it began and answers 0 (no new
  pause). ``end_back_off(host, sent_ago)`` — a request sent after it ended was served:
  the count goes.
* ``enter(host, token, limit, hold)`` / ``leave`` / ``hold`` — a place among the
  ``limit`` downloads to the host that every worker together may have at once (where
  workers share places, ``shares_places``): 0, the place is ``token``'s for ``hold``
  seconds; n > 0, ``token`` is n-th in the host's line (ask again soon: a request that
  stops asking for ``turn_seconds`` loses its turn); n < 0, the host is paused, ask
  again in -n milliseconds. Places go in turn, longest waiting first.
* ``failed(host, limit, seconds)`` — a download of the host got no answer: the
  failures in a row are counted for every worker, and the ``limit``-th sets the host
  down for ``seconds`` (the first, if it was set down before and has not answered
  since); ``answered(host)`` — it answered: the count and that mark go; ``failing()``
  — the hosts with either.
* ``set_down(host, seconds)`` — none of the host's URLs is popped, and its queued and
  leased URLs do not keep the crawl going, for ``seconds``; ``down()`` — (host,
  seconds left, URLs waiting) of the hosts down now; ``clear_down()`` — a new run:
  every host gets another try, the failures in a row start over.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence

from spitag.frontier.records import HostFailure


class HostGate(ABC):
    # Workers share the hosts' places (enter/leave/hold); where one process owns the
    # frontier its own limit is the whole limit, and these calls cost nothing.
    shares_places = False
    turn_seconds = 2.0

    @abstractmethod
    def acquire(self, host: str, delay: float) -> float: ...

    @abstractmethod
    def set_delay(self, host: str, delay: float) -> None: ...

    @abstractmethod
    def delays(self) -> dict[str, float]: ...

    @abstractmethod
    def pause(self, host: str, seconds: float) -> None: ...

    @abstractmethod
    def back_off(self, host: str, sent_ago: float, base: float, cap: float) -> float: ...

    @abstractmethod
    def end_back_off(self, host: str, sent_ago: float) -> bool: ...

    def enter(self, host: str, token: str, limit: int, hold: float) -> int:
        return 0

    def leave(self, host: str, token: str) -> None:
        """Give back the place ``token`` holds, or its turn in the host's line."""

    def hold(self, places: Sequence[tuple[str, str]], hold: float) -> None:
        """Renew the (host, token) places still held for another ``hold`` seconds."""

    @abstractmethod
    def failed(self, host: str, limit: int, seconds: float) -> HostFailure: ...

    @abstractmethod
    def answered(self, host: str) -> None: ...

    @abstractmethod
    def failing(self) -> list[str]: ...

    @abstractmethod
    def set_down(self, host: str, seconds: float) -> None: ...

    @abstractmethod
    def down(self) -> list[tuple[str, float, int]]: ...

    @abstractmethod
    def clear_down(self) -> int: ...
