"""The frontier's per-host gate as this worker reaches it.

Every part of politeness asks the gate through one ``GateLink``: no gate before the
frontier opens or after it closes, and ``None`` for an answer while the frontier is
unreachable (``spitag.outage``): each part then holds what this worker alone knows.
Places given back while it was out are given back first once it answers again.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from spitag.errors import FrontierUnavailableError
from spitag.outage import Outage

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

    from spitag.frontier import HostGate


class GateLink:
    def __init__(self, crawler: Crawler) -> None:
        self.outage = Outage.of(crawler, "frontier")
        self.gate: HostGate | None = None
        self.owner = ""
        self.unreleased: list[tuple[str, str]] = []  # (host, token): places to give back

    @property
    def shares_places(self) -> bool:
        return self.gate is not None and self.gate.shares_places

    def ask(self, method: str, *args: Any) -> Any:
        """``gate.<method>(*args)``; None without a gate or while the frontier is out."""
        if self.gate is None or not self.outage.ready():
            return None
        try:
            while self.unreleased:  # places given back while it was out: first, really
                self.gate.leave(*self.unreleased[-1])
                self.unreleased.pop()
            result = getattr(self.gate, method)(*args)
        except FrontierUnavailableError as exc:
            self.outage.failed(exc)
            return None
        self.outage.answered()
        return result
