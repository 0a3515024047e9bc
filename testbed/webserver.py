"""A loopback web server that is an origin server and a forward HTTP proxy at once.

End-to-end tests crawl real sites (flink.apache.org, real pages under their own
hosts) without any network: the crawler runs with ``http_proxy`` pointing here and
sends ``GET http://flink.apache.org/path HTTP/1.1``; we route by the URI's host.
Plain requests to ``http://127.0.0.1:PORT/path`` are routed by the Host header.
The server never opens an outgoing connection: an unknown host gets a fast 404 and
``CONNECT`` (what a client sends for https through a proxy) gets a fast 405.
"""

from __future__ import annotations

import logging
import mimetypes
import os
import re
import socket
import sys
import threading
import time
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from html import escape
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterable, Mapping, NamedTuple, Protocol, Union
from urllib.parse import unquote, urlsplit

if TYPE_CHECKING:
    from types import TracebackType

logger = logging.getLogger(__name__)

HTML_UTF8 = "text/html; charset=utf-8"
HeadersLike = Union[Mapping[str, str], Iterable[tuple[str, str]]]

__all__ = [
    "DictSite",
    "DirectorySite",
    "LogEntry",
    "Response",
    "Site",
    "WebServer",
    "https_rewriter",
]


@dataclass(frozen=True)
class Response:
    """One canned answer. ``headers`` may repeat a name (e.g. two Set-Cookie).

    ``content_type`` is sent unless ``headers`` has its own Content-Type; None sends
    none. ``delay`` seconds are slept before answering (slow-server cases).
    """

    status: int = 200
    body: bytes = b""
    headers: tuple[tuple[str, str], ...] = ()
    content_type: str | None = HTML_UTF8
    delay: float = 0.0

    def __post_init__(self) -> None:
        if isinstance(self.body, str):
            object.__setattr__(self, "body", self.body.encode("utf-8"))
        items = self.headers.items() if isinstance(self.headers, Mapping) else self.headers
        object.__setattr__(self, "headers", tuple((str(k), str(v)) for k, v in items))

    @classmethod
    def html(cls, body: str | bytes, status: int = 200, headers: HeadersLike = (),
             delay: float = 0.0) -> Response:
        return cls(status, body, headers, HTML_UTF8, delay)  # type: ignore[arg-type]

    @classmethod
    def text(cls, body: str | bytes, status: int = 200, headers: HeadersLike = (),
             delay: float = 0.0) -> Response:
        return cls(status, body, headers, "text/plain; charset=utf-8", delay)  # type: ignore[arg-type]

    @classmethod
    def redirect(cls, location: str, status: int = 301, headers: HeadersLike = (),
                 delay: float = 0.0) -> Response:
        """A 301/302/303/307/308 to ``location`` (absolute, or relative to the request)."""
        more = headers.items() if isinstance(headers, Mapping) else headers
        body = f'<html><body><a href="{escape(location)}">moved</a></body></html>'
        return cls.html(body, status, (("Location", location), *more), delay)

    @classmethod
    def not_found(cls) -> Response:
        return cls.text("not found\n", status=404)

    def header(self, name: str) -> str | None:
        """The first value of header ``name`` (case-insensitive), else None."""
        name = name.lower()
        return next((v for k, v in self.headers if k.lower() == name), None)


class Site(Protocol):
    """What the server asks a site: the answer for one request target.

    ``target`` is the path with its query, as sent (percent-encoded), e.g.
    ``/a/b?x=1``; never None, never empty. Must be thread-safe.
    """

    def respond(self, target: str) -> Response: ...


def https_rewriter(hosts: Iterable[str]) -> Callable[[bytes], bytes]:
    """Return f(body) turning ``https://<host>`` into ``http://<host>`` for ``hosts``.

    Only whole host names match (``flink.apache.org.evil`` is left alone), so the
    crawl of a served site stays on ``http://`` and thus on the proxy.
    """
    names = sorted({h.lower() for h in hosts}, key=len, reverse=True)
    if not names:
        return lambda body: body
    alternatives = b"|".join(re.escape(n.encode("ascii")) for n in names)
    pattern = re.compile(rb"https://(" + alternatives + rb")(?![\w.-])", re.IGNORECASE)
    return lambda body: pattern.sub(rb"http://\1", body)


class DirectorySite:
    """Serves the files under ``root``, as a static host would.

    ``/x/`` serves ``/x/index.html``; ``/x`` naming a folder redirects (301) to
    ``/x/``; a missing file is 404 (so is ``/robots.txt`` unless the folder has one).
    The file list is read once, here; file bodies are cached after the first read.
    In files ending in ``rewrite_suffixes``, ``https://<host>`` links for
    ``rewrite_hosts`` become ``http://<host>``.
    """

    def __init__(
        self,
        root: str | os.PathLike[str],
        rewrite_hosts: Iterable[str] = (),
        *,
        html_content_type: str = HTML_UTF8,
        rewrite_suffixes: Iterable[str] = (".html", ".htm", ".xml"),
    ) -> None:
        self.root = Path(root)
        if not self.root.is_dir():
            raise FileNotFoundError(f"DirectorySite root is not a folder: {self.root}")
        self.html_content_type = html_content_type
        self._rewrite = https_rewriter(rewrite_hosts)
        self._rewrite_suffixes = tuple(s.lower() for s in rewrite_suffixes)
        self._files: dict[str, Path] = {}
        self._dirs: set[str] = {"/"}
        for dirpath, _dirnames, filenames in os.walk(self.root):
            rel = Path(dirpath).relative_to(self.root).as_posix()
            prefix = "/" if rel == "." else f"/{rel}/"
            self._dirs.add(prefix)
            for name in filenames:
                self._files[prefix + name] = Path(dirpath, name)
        self._cache: dict[str, Response] = {}
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._files)

    def paths(self) -> list[str]:
        """Every URL path with a file behind it (index.html files also as ``/x/``)."""
        out = set(self._files)
        out.update(p[: -len("index.html")] for p in self._files if p.endswith("/index.html"))
        return sorted(out)

    def file_key(self, target: str) -> str | None:
        """The file a request target is answered 200 with (``/x/`` → ``/x/index.html``),
        or None (a redirect or a 404)."""
        parts = urlsplit(target)
        for path in dict.fromkeys((unquote(parts.path), parts.path)):
            key = path + "index.html" if path.endswith("/") else path
            if key in self._files:
                return key
        return None

    def respond(self, target: str) -> Response:
        parts = urlsplit(target)
        for path in dict.fromkeys((unquote(parts.path), parts.path)):
            key = path + "index.html" if path.endswith("/") else path
            if key in self._files:
                return self._file_response(key)
            if path + "/" in self._dirs:
                query = f"?{parts.query}" if parts.query else ""
                return Response.redirect(path + "/" + query, 301)
        return Response.not_found()

    def _file_response(self, key: str) -> Response:
        cached = self._cache.get(key)
        if cached is not None:
            return cached
        body = self._files[key].read_bytes()
        if key.lower().endswith(self._rewrite_suffixes):
            body = self._rewrite(body)
        response = Response(200, body, content_type=self._content_type(key))
        with self._lock:
            self._cache[key] = response
        return response

    def _content_type(self, key: str) -> str:
        lower = key.lower()
        if lower.endswith((".html", ".htm")):
            return self.html_content_type
        guessed, _ = mimetypes.guess_type(lower)
        if lower.endswith(".xml"):
            guessed = "application/xml"
        guessed = guessed or "application/octet-stream"
        if guessed.startswith("text/") or guessed in {"application/xml", "application/json",
                                                      "application/javascript"}:
            guessed += "; charset=utf-8"
        return guessed


class DictSite:
    """Hand-made pages: ``{target: Response}``.

    A request matches a key by its full target (path and query) first, then by the
    percent-decoded target, then by its path without the query. Anything else is
    ``not_found``.
    """

    def __init__(
        self,
        pages: Mapping[str, Response | str | bytes] | None = None,
        *,
        not_found: Response | None = None,
    ) -> None:
        self._pages: dict[str, Response] = {}
        self._decoded: dict[str, Response] = {}
        self.not_found = not_found or Response.not_found()
        for target, response in (pages or {}).items():
            self.add(target, response)

    def add(self, target: str, response: Response | str | bytes) -> DictSite:
        """Serve ``response`` (a str/bytes body means a 200 HTML page) at ``target``."""
        if not isinstance(response, Response):
            response = Response.html(response)
        if not target.startswith("/"):
            raise ValueError(f"DictSite target must start with '/': {target!r}")
        self._pages[target] = response
        self._decoded[unquote(target)] = response
        return self

    def redirect(self, target: str, location: str, status: int = 301) -> DictSite:
        """Answer ``target`` with a redirect to ``location`` (absolute or relative)."""
        return self.add(target, Response.redirect(location, status))

    def __contains__(self, target: str) -> bool:
        return target in self._pages

    def targets(self) -> list[str]:
        return list(self._pages)

    def respond(self, target: str) -> Response:
        found = self._pages.get(target) or self._decoded.get(unquote(target))
        if found is None:
            path = urlsplit(target).path
            found = self._pages.get(path) or self._decoded.get(unquote(path))
        return found or self.not_found


class LogEntry(NamedTuple):
    """One answered request. ``time`` is when it was answered and ``arrived`` when the
    request came in (monotonic seconds: two requests overlapped when each arrived
    before the other was answered); ``host`` is the routed host name (lower case, no
    port); ``path`` the request target's path and query (for CONNECT: ``host:port``);
    ``bytes`` the body bytes sent."""

    time: float
    host: str
    path: str
    status: int
    bytes: int
    arrived: float = 0.0


_LOOPBACK_NAMES = {"127.0.0.1", "localhost", "::1", "[::1]"}
_QUIET_ERRORS = (ConnectionError, TimeoutError, socket.timeout)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128

    def __init__(self, owner: WebServer, address: tuple[str, int]) -> None:
        self.owner = owner
        self.connections: set[socket.socket] = set()
        self.connections_lock = threading.Lock()
        super().__init__(address, _Handler)

    def handle_error(self, request: object, client_address: object) -> None:
        # A client hanging up mid-answer is normal in crawls; anything else is a bug.
        if isinstance(sys.exc_info()[1], _QUIET_ERRORS):
            return
        logger.exception("test web server: error answering %s", client_address)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive: every answer carries Content-Length
    server_version = "SpiTagTestServer/1"
    timeout = 30  # an idle kept-alive connection is closed after this many seconds
    server: _Server

    def setup(self) -> None:
        super().setup()
        with self.server.connections_lock:
            self.server.connections.add(self.connection)

    def finish(self) -> None:
        with self.server.connections_lock:
            self.server.connections.discard(self.connection)
        try:
            super().finish()
        except _QUIET_ERRORS:
            pass

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002
        pass  # quiet: the request log is WebServer.log

    def do_GET(self) -> None:
        self._serve(head=False)

    def do_HEAD(self) -> None:
        self._serve(head=True)

    def do_CONNECT(self) -> None:
        # https through the proxy: refuse at once rather than tunnel anywhere.
        host = self.path.rsplit(":", 1)[0].strip("[]").lower()
        self.close_connection = True
        self._send(Response.text("CONNECT is not supported\n", status=405),
                   head=False, host=host, target=self.path, close=True)

    def _serve(self, head: bool) -> None:
        arrived = time.monotonic()
        host, target, site = self.server.owner._route(self.path, self.headers.get("Host"))
        self.server.owner._remember_headers(host, target, dict(self.headers.items()))
        response = site.respond(target) if site is not None else Response.not_found()
        if _not_modified(response, self.headers):
            response = Response(status=304, headers=tuple(
                (name, value) for name, value in response.headers
                if name.lower() in ("etag", "last-modified", "cache-control", "expires", "date")
            ), content_type=None)
        self._send(response, head=head, host=host, target=target, arrived=arrived)

    def _send(self, response: Response, *, head: bool, host: str, target: str,
              close: bool = False, arrived: float | None = None) -> None:
        if response.delay > 0:
            time.sleep(response.delay)
        body = response.body
        self.send_response(response.status)
        if response.content_type and response.header("Content-Type") is None:
            self.send_header("Content-Type", response.content_type)
        for name, value in response.headers:
            self.send_header(name, value)
        if response.status >= 200 and response.status not in (204, 304):
            self.send_header("Content-Length", str(len(body)))
        else:
            body = b""
        if close:
            self.send_header("Connection", "close")
        sent = 0 if head else len(body)
        # Logged before the client can see the answer, so a test reading the log
        # right after its request finds it there.
        self.server.owner._record(host, target, response.status, sent, arrived)
        self.end_headers()
        if sent:
            self.wfile.write(body)


def _not_modified(response: Response, request_headers: Mapping[str, str]) -> bool:
    """A conditional GET answered as a real server would (RFC 9110 §13): a 200 whose
    ETag matches ``If-None-Match`` (weak comparison), or, without that header, whose
    Last-Modified is not after ``If-Modified-Since``."""
    if response.status != 200:
        return False
    none_match = request_headers.get("If-None-Match")
    etag = response.header("ETag")
    if none_match is not None:
        if etag is None:
            return False
        tags = {t.strip().removeprefix("W/") for t in none_match.split(",")}
        return "*" in tags or etag.strip().removeprefix("W/") in tags
    since = request_headers.get("If-Modified-Since")
    modified = response.header("Last-Modified")
    if since is None or modified is None:
        return False
    try:
        return parsedate_to_datetime(modified) <= parsedate_to_datetime(since)
    except (TypeError, ValueError):
        return False


class WebServer:
    """An HTTP/1.1 server on 127.0.0.1 (ephemeral port), run in a background thread.

    Routing of GET/HEAD:
    * absolute URI (proxy request, ``GET http://h/p``): the site added for host
      ``h``; a loopback ``h`` (127.0.0.1, localhost) means the default site; any
      other host is 404.
    * origin request (``GET /p``): the site for the Host header's name, else the
      default site, else 404.
    The default site is ``default_site``, or the one added with ``default=True``,
    or else the first site added.
    """

    def __init__(self, default_site: Site | None = None, *, bind: str = "127.0.0.1") -> None:
        self._bind = bind
        self._sites: dict[str, Site] = {}
        self._default: Site | None = default_site
        self._explicit_default = default_site is not None
        self._log: list[LogEntry] = []
        self._headers: dict[tuple[str, str], dict[str, str]] = {}
        self._log_lock = threading.Lock()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    # -- sites ---------------------------------------------------------------------

    def add_site(self, host: str, site: Site, *, default: bool = False) -> WebServer:
        """Serve ``site`` for host name ``host`` (case-insensitive, port ignored)."""
        self._sites[_host_name(host)] = site
        if default or (self._default is None and not self._explicit_default):
            self._default = site
            self._explicit_default = self._explicit_default or default
        return self

    def add_sites(self, sites: Mapping[str, Site]) -> WebServer:
        for host, site in sites.items():
            self.add_site(host, site)
        return self

    @property
    def hosts(self) -> list[str]:
        return list(self._sites)

    # -- life cycle ----------------------------------------------------------------

    def start(self) -> WebServer:
        if self._server is not None:
            return self
        self._server = _Server(self, (self._bind, 0))
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05},
            name=f"test-webserver-{self.port}", daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop accepting, close kept-alive connections, release the port."""
        server, self._server = self._server, None
        if server is None:
            return
        server.shutdown()
        with server.connections_lock:
            open_connections = list(server.connections)
        for conn in open_connections:
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> WebServer:
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()

    # -- addresses -----------------------------------------------------------------

    @property
    def port(self) -> int:
        if self._server is None:
            raise RuntimeError("WebServer is not started")
        return self._server.server_address[1]

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT``: the origin address (default site)."""
        return f"http://{self._bind}:{self.port}"

    @property
    def proxy_url(self) -> str:
        """Value for ``http_proxy`` (the same socket serves both roles)."""
        return self.base_url

    def url_for(self, host: str | None = None, path: str = "/") -> str:
        """URL of ``path`` on virtual host ``host`` as a proxied client requests it
        (``http://host/path``); with host None, the origin URL on 127.0.0.1:PORT."""
        if not path.startswith("/"):
            path = "/" + path
        if host is None:
            return self.base_url + path
        return f"http://{_host_name(host)}{path}"

    # -- request log ---------------------------------------------------------------

    @property
    def log(self) -> list[LogEntry]:
        """A snapshot of answered requests, in the order they were answered."""
        with self._log_lock:
            return list(self._log)

    def clear_log(self) -> None:
        with self._log_lock:
            self._log.clear()

    def requested(self, host: str | None = None) -> list[str]:
        """Paths requested (in order), optionally only those for ``host``."""
        wanted = None if host is None else _host_name(host)
        return [e.path for e in self.log if wanted is None or e.host == wanted]

    def headers_for(self, host: str, path: str) -> dict[str, str]:
        """The headers of the last request for ``path`` on ``host``."""
        with self._log_lock:
            return dict(self._headers[(host, path)])

    def _remember_headers(self, host: str, target: str, headers: dict[str, str]) -> None:
        with self._log_lock:
            self._headers[(host, target)] = headers

    def _record(self, host: str, target: str, status: int, sent: int, arrived: float | None = None) -> None:
        now = time.monotonic()
        with self._log_lock:
            self._log.append(LogEntry(now, host, target, status, sent, now if arrived is None else arrived))

    # -- routing -------------------------------------------------------------------

    def _route(self, request_target: str, host_header: str | None) -> tuple[str, str, Site | None]:
        """Return (host name, origin-form target, site or None)."""
        if "://" in request_target and not request_target.startswith("/"):
            parts = urlsplit(request_target)
            host = (parts.hostname or "").lower()
            target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
            site = self._sites.get(host)
            if site is None and host in _LOOPBACK_NAMES:
                site = self._default
            return host, target, site
        host = _host_name(host_header or "")
        return host, request_target, self._sites.get(host, self._default)


def _host_name(host: str) -> str:
    """``Example.COM:80`` → ``example.com``; ``[::1]:8080`` → ``::1``."""
    host = host.strip().lower()
    if host.startswith("["):
        return host[1:].split("]", 1)[0]
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host
