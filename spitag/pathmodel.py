"""What a link's URL path says of the page behind it, learnt per site during the crawl.

Pages of one site differ by kind, and the kind shows in the path: a blog's posts
(``/posts/<slug>/``, ``/2019/05/<slug>/``) carry BlogPosting JSON-LD, its tag, category
and pagination pages (``/tags/<tag>/``, ``/page/3/``) little or none; an events site's
event pages many items, its list pages few. The site's own pages fetched so far show
which paths are worth what, so the crawl learns it per site, from every page it
fetches, and predicts a link's value from the nearest level that has seen pages:

* the **site**: the mean score of its pages (given by the caller: for a link found
  on the site itself, ``spitag.scoring`` weighs the linking page in, the thesis'
  propagation from the parent);
* the path's **section**: its first segment (``posts``, ``tags``, ``2019``→``#``);
* the path's **shape**: every segment after the first generalized (digits ``#``, any
  other word ``*``), and whether it ends with a slash: ``tags/*/``, ``page/#/``,
  ``#/#/*/``.

Each level is the mean of the pages seen there, shrunk towards the level above by
``SHRINK`` pseudo-pages: ``(S + SHRINK · above) / (n + SHRINK)``. A section or shape
never seen predicts what the level above does.

Memory is bounded: at most ``MAX_KEYS`` sections and shapes are kept (a few MB); past
that, new ones are not learnt (they predict from the level above).
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

SHRINK = 2.0  # pseudo-pages of the level above in each level's mean
MAX_KEYS = 200_000
_NUMBER = re.compile(r"^\d+$")
_INDEX = re.compile(r"^index\.html?$", re.I)


def path_keys(url: str) -> tuple[str, str, str]:
    """(host, section, shape) of a URL: see the module's docstring."""
    try:
        parts = urlsplit(url)
        host = (parts.hostname or "").lower()
    except ValueError:
        return "", "", ""
    segments = [s for s in parts.path.split("/") if s and not _INDEX.match(s)]
    if not segments:
        return host, "", ""
    first = "#" if _NUMBER.match(segments[0]) else segments[0].lower()
    rest = ["#" if _NUMBER.match(s) else "*" for s in segments[1:]]
    trailing = "/" if parts.path.endswith("/") or _INDEX.search(parts.path.rsplit("/", 1)[-1]) else ""
    return host, first, "/".join([first, *rest]) + trailing


class PathModel:
    """Per site, the mean score of its pages by section and by shape of their paths."""

    def __init__(self) -> None:
        self.levels: dict[tuple[str, str, str], list[float]] = {}  # (host, level, key) → [Σ score, pages]

    def learn(self, url: str, score: float) -> None:
        """A page of ``url`` scored ``score``."""
        host, section, shape = path_keys(url)
        for key in ((host, "section", section), (host, "shape", shape)):
            entry = self.levels.get(key)
            if entry is None:
                if len(self.levels) >= MAX_KEYS:
                    continue
                entry = self.levels[key] = [0.0, 0]
            entry[0] += score
            entry[1] += 1

    def predict(self, url: str, site_value: float) -> float:
        """The score expected of the page at ``url``, whose site is worth ``site_value``."""
        return self.estimate(url, site_value)[0]

    def estimate(self, url: str, site_value: float) -> tuple[float, str | None, int]:
        """``predict``, and the level it came from: the deepest level (``section``,
        ``shape``) that has seen pages and how many; (value, None, 0) from the site's."""
        host, section, shape = path_keys(url)
        value, level, pages = site_value, None, 0
        for key in ((host, "section", section), (host, "shape", shape)):
            entry = self.levels.get(key)
            if entry is not None:
                value = (entry[0] + SHRINK * value) / (entry[1] + SHRINK)
                level, pages = key[1], int(entry[1])
        return value, level, pages
