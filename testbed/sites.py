"""Generated local sites for crawl tests (served by testbed.webserver)."""

from __future__ import annotations

import threading
import time

from testbed.webserver import DictSite, Response

HEAD = (
    '<title>{title}</title><meta property="og:title" content="{title}">'
    '<script type="application/ld+json">{{"@type": "WebPage", "name": "{title}"}}</script>'
)


def tree_site(pages: int, fanout: int = 8, delay: float = 0.0, away: str = "") -> DictSite:
    """Pages ``/p/0.html`` … ``/p/{pages-1}.html`` in a tree: page i links to its
    children ``fanout·i+1 … fanout·i+fanout`` and back to the root. ``/`` is page 0.
    With ``away`` (a host name), page i also links to ``http://{i}.{away}/``."""
    site = DictSite()
    for i in range(pages):
        children = [c for c in range(fanout * i + 1, fanout * i + fanout + 1) if c < pages]
        links = "".join(f'<a href="/p/{c}.html">page {c}</a> ' for c in children)
        if away:
            links += f'<a href="http://{i}.{away}/">elsewhere</a> '
        body = (
            f"<html><head>{HEAD.format(title=f'Page {i}')}</head><body><h1>Page {i}</h1>"
            f'{links}<a href="/">home</a></body></html>'
        )
        response = Response.html(body, delay=delay)
        site.add(f"/p/{i}.html", response)
        if i == 0:
            site.add("/", response)
    return site


def tree_paths(pages: int) -> set[str]:
    """Every path a whole crawl of tree_site(pages) requests (robots.txt aside);
    page 0 is only ever reached as ``/``."""
    return {"/"} | {f"/p/{i}.html" for i in range(1, pages)}


class CountingSite:
    """A site of slow pages (0.3 s) that counts its downloads running at once (the
    most, and on average from the first page's start to the last one's end); its home
    links to ``pages`` of them, and it has a robots.txt."""

    def __init__(self, pages: int = 40) -> None:
        self.pages = pages
        self.running = 0
        self.most = 0
        self.busy = 0.0  # seconds of pages served, summed
        self.first: float | None = None
        self.last = 0.0
        self.lock = threading.Lock()

    @property
    def mean(self) -> float:
        """Pages served at once, on average, from the first page's start to the last one's end."""
        return self.busy / (self.last - self.first) if self.first is not None else 0.0

    def respond(self, target: str) -> Response:
        if target == "/robots.txt":
            return Response.text("User-agent: *\nAllow: /\n")
        if target == "/":
            links = " ".join(f'<a href="/{i}">{i}</a>' for i in range(self.pages))
            return Response.html(f"<html><body>{links}</body></html>")
        with self.lock:
            self.running += 1
            self.most = max(self.most, self.running)
            start = time.monotonic()
            self.first = start if self.first is None else self.first
        time.sleep(0.3)
        with self.lock:
            self.running -= 1
            self.last = time.monotonic()
            self.busy += self.last - start
        return Response.html('<html><head><meta name="description" content="slow"></head><body>x</body></html>')


def home_or_robots(target: str, pages: int) -> Response | None:
    """The home of a site of ``pages`` pages ``/0`` … (a page linking them all), or its
    robots.txt (none: 404); None for any other path."""
    if target == "/":
        links = " ".join(f'<a href="/{i}">{i}</a>' for i in range(pages))
        return Response.html(f"<html><body>{links}</body></html>")
    if target == "/robots.txt":
        return Response.not_found()
    return None


class RefusingSite:
    """Pages of ``delay`` seconds; the ``refuse``-th page asked for (and the ``burst`` − 1
    after it) is refused with ``status`` (429 Too Many Requests, or 503) and
    ``Retry-After: {retry_after}`` unless None, ``times`` times in a row, and served on
    any later request. With ``episodes`` > 1, the first request that comes after 90 % of
    the pause a doubling back-off owes the last refusal (0.9 s after the first, 1.8 s
    after the second...) is refused too (once), until there have been that many: a
    request sent before the crawler read that refusal, and late on a loaded machine,
    is served and does not take an episode."""

    PAGE = '<html><head><meta name="description" content="x"></head><body>x</body></html>'

    def __init__(self, pages: int, refuse: int = 3, delay: float = 0.2,
                 retry_after: str | None = "3", times: int = 1, status: int = 429, burst: int = 1,
                 episodes: int = 1) -> None:
        self.pages = pages
        self.refuse = refuse
        self.burst = burst
        self.delay = delay
        self.status = status
        self.headers = [("Retry-After", retry_after)] if retry_after is not None else []
        self.times = times
        self.left: dict[str, int] = {}  # refused path → refusals still to come
        self.asked = 0
        self.refused: str | None = None  # the first page refused
        self.episodes = episodes
        self.last_refusal: float | None = None
        self.owed = 0.9  # seconds after the last refusal that the next episode waits for
        self.lock = threading.Lock()

    def respond(self, target: str) -> Response:
        home = home_or_robots(target, self.pages)
        if home is not None:
            return home
        with self.lock:
            self.asked += 1
            if self.refuse <= self.asked < self.refuse + self.burst:
                self.refused = self.refused or target
                self.left.setdefault(target, self.times)
            now = time.monotonic()
            if self.episodes > 1 and self.last_refusal is not None and now - self.last_refusal >= self.owed:
                self.episodes -= 1
                self.owed *= 2
                self.left[target] = self.left.get(target, 0) + 1
            if self.left.get(target, 0) > 0:
                self.left[target] -= 1
                self.last_refusal = now
                return Response.html("slow down", status=self.status, headers=self.headers)
        return Response.html(self.PAGE, delay=self.delay)


class DeadSite:
    """A host that does not answer: each request hangs ``hang`` seconds (longer than
    the crawl's DOWNLOAD_TIMEOUT) before a late answer, or, with ``status``, gets that
    status at once (a gateway's 502). ``asked`` records each request as it arrives
    (the server's log has only answers). ``alive = True`` makes it serve ``page``."""

    PAGE = '<html><head><meta name="description" content="x"></head><body>x</body></html>'

    def __init__(self, hang: float = 3.0, status: int | None = None) -> None:
        self.hang = hang
        self.status = status
        self.alive = False
        self.asked: list[str] = []
        self.lock = threading.Lock()

    def respond(self, target: str) -> Response:
        with self.lock:
            self.asked.append(target)
        if self.alive:
            return Response.html(self.PAGE)
        if self.status is not None:
            return Response.html("bad gateway", status=self.status)
        return Response.html("too late", delay=self.hang)


class FlakySite:
    """A site whose pages fail for a while: every page but the home answers ``status``
    (a gateway's 502) until ``down_for`` seconds after it was first asked for, then
    serves. A server restarting, or a proxy losing its upstream for a moment."""

    PAGE = '<html><head><meta name="description" content="x"></head><body>back</body></html>'

    def __init__(self, pages: int, down_for: float = 2.0, status: int = 502) -> None:
        self.pages = pages
        self.down_for = down_for
        self.status = status
        self.first: dict[str, float] = {}
        self.lock = threading.Lock()

    def respond(self, target: str) -> Response:
        home = home_or_robots(target, self.pages)
        if home is not None:
            return home
        with self.lock:
            first = self.first.setdefault(target, time.monotonic())
        if time.monotonic() - first < self.down_for:
            return Response.html("bad gateway", status=self.status)
        return Response.html(self.PAGE)
