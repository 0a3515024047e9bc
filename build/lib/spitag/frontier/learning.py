"""What the crawl learns for its strategy, shared by its workers and runs.

* ``learn(observations, links)`` — the semantic scores of pages fetched, (host, score)
  pairs: the host ranking's S and n (``spitag.ranking``); and the *link evidence* the
  strategy found for hosts not fetched yet, ``(host, Σ log(1 + linking page's score),
  links, mask of linking hosts)`` (``spitag.linkevidence``): summed per host, masks
  OR-ed. One round trip for the batch.
* ``learnt(since)`` — what the crawl learnt that this owner's strategy has not seen,
  in ``Learnt`` batches: ``since=None`` gives every host's totals so far (a resumed
  crawl's strategy starts from them) and a cursor; a cursor gives what *other* owners
  learnt after it, in the order learnt.
* ``rescore(estimates)`` — (host, value): what the strategy now expects a page of a
  host it has not learnt yet to be worth. Until the host's first page is learnt, it
  ranks by its latest estimate instead of its best queued priority (which holds what
  its links were worth when they were found). Returns how many hosts with queued URLs
  were re-ranked.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence

from spitag.frontier.records import Learnt


class LearningLog(ABC):
    @abstractmethod
    def learn(
        self, observations: Sequence[tuple[str, float]], links: Sequence[tuple[str, float, int, int]] = ()
    ) -> None: ...

    @abstractmethod
    def learnt(self, since: str | None) -> tuple[str, list[Learnt]]: ...

    @abstractmethod
    def rescore(self, estimates: Sequence[tuple[str, float]]) -> int: ...
