"""The web service's routes: a read-only JSON API over a crawl's store and frontier.

FastAPI (on Starlette, served by uvicorn) because it checks every parameter against its
declared type and bounds before a route runs (a clear 422 naming the parameter) and
writes the OpenAPI description from the same declarations; its documentation page
is served with the assets of the ``swagger-ui-bundle`` package, so it works with no
network. Routes are plain functions: FastAPI runs them in its thread pool, each thread
with its own read-only connection (``spitag.serve.reader``). (No ``from __future__ import
annotations`` here: FastAPI reads the routes' annotations as objects.)
"""

import base64
import binascii
import hmac
import html
import json
import logging
import re
from collections.abc import Iterator
from datetime import datetime, timezone
from typing import Annotated, Any

from fastapi import Depends, FastAPI, HTTPException, Path, Query, Request
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import FileResponse, HTMLResponse, JSONResponse, RedirectResponse, StreamingResponse
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from fastapi.staticfiles import StaticFiles

from spitag import __version__
from spitag.errors import BackendUnavailableError
from spitag.extract import SYNTAXES
from spitag.serve import queries
from spitag.serve.live import LIVE_SECONDS, PAGE, Reports, live_state
from spitag.serve.queries import Filters
from spitag.serve.reader import QueryTimeout, StoreReader
from spitag.urls import try_normalize

logger = logging.getLogger(__name__)

MAX_LIMIT = 1000  # rows a list returns at most
MAX_DEPTH = 5  # hops a link walk follows at most
MAX_PATH = 4  # links a path has at most
MAX_PATHS = 100
_HOST = re.compile(r"^[a-z0-9]([a-z0-9.-]{0,252})(:[0-9]{1,5})?$")
_TYPE = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,99}$")
_KEY = re.compile(r"^[0-9a-f]{32}$")


def make_app(reader: StoreReader, frontier_state: Any = None, only_crawl: str | None = None,
             token: str | None = None) -> FastAPI:
    """The application. ``frontier_state(crawl, top, hosts)`` gives a crawl's frontier
    snapshot (``scrapy frontier``'s) or None; ``only_crawl`` hides every other crawl;
    ``token``: the bearer token every API call must bring."""
    app = FastAPI(
        title="SpiTag", version=__version__, docs_url=None, redoc_url=None,
        description="Read-only access to a SpiTag crawl's store (Page / URL / Link tables) and frontier.",
    )
    recent = reader.recent  # the live data and summaries, made at most every LIVE_SECONDS
    bearer = HTTPBearer(auto_error=False, description="SPITAG_SERVE_TOKEN, when the server has one")

    def authorized(credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)]) -> None:
        if token is None:
            return
        given = credentials.credentials if credentials is not None else ""
        if not hmac.compare_digest(given.encode(), token.encode()):
            raise HTTPException(401, "a valid bearer token is needed (Authorization: Bearer …)",
                                headers={"WWW-Authenticate": "Bearer"})

    api = [Depends(authorized)]

    @app.exception_handler(QueryTimeout)
    def timed_out(request: Request, exc: QueryTimeout) -> JSONResponse:
        return JSONResponse({"detail": f"{exc}: narrow the query"}, status_code=503)

    @app.exception_handler(BackendUnavailableError)
    def unavailable(request: Request, exc: BackendUnavailableError) -> JSONResponse:
        logger.warning("store unavailable: %s", exc)
        return JSONResponse({"detail": "the store cannot be reached now"}, status_code=503)

    @app.exception_handler(Exception)
    def failed(request: Request, exc: Exception) -> JSONResponse:
        logger.error("%s %s failed", request.method, request.url.path, exc_info=exc)
        return JSONResponse({"detail": "internal error (the server's log has it)"}, status_code=500)

    def known_crawl(crawl: str) -> str:
        if only_crawl is not None and crawl != only_crawl:
            raise HTTPException(404, f"this server serves crawl {only_crawl!r} only")
        if not reader.rows("SELECT 1 FROM url WHERE crawl = ? LIMIT 1", [crawl]):
            raise HTTPException(404, f"the store has no URL of crawl {crawl!r}")
        return crawl

    Crawl = Annotated[str, Depends(known_crawl)]

    # -- the crawls ---------------------------------------------------------------
    @app.get("/api/crawls", dependencies=api, summary="The crawls the store holds")
    def list_crawls() -> list[dict[str, Any]]:
        return [c for c in queries.crawls(reader) if only_crawl is None or c["crawl"] == only_crawl]

    @app.get("/api/crawls/{crawl}", dependencies=api, summary="One crawl: counts, seeds and strategy")
    def crawl_summary(crawl: Crawl) -> dict[str, Any]:
        def fresh() -> dict[str, Any]:
            out = queries.summary(reader, crawl)
            state = frontier_state(crawl, 0, 0) if frontier_state else None
            out["strategy"] = state.get("strategy") if state else None
            out["seeds"] = state.get("seeds") if state else None
            out["frontier"] = {k: state[k] for k in ("queued", "leased", "done", "retrying")} if state else None
            return out

        return recent.get(("summary", crawl), LIVE_SECONDS, fresh)  # it reads every URL of the crawl

    # -- URLs and pages -------------------------------------------------------------
    def filters(
        host: Annotated[str | None, Query(max_length=260, description="host name (and :port) of the URL")] = None,
        status: Annotated[int | None, Query(ge=100, le=599, description="HTTP status")] = None,
        content_type: Annotated[str | None, Query(max_length=100, description="Content-Type prefix: text/html")] = None,
        syntax: Annotated[str | None, Query(description="a syntax the page carries: " + ", ".join(SYNTAXES))] = None,
        schema_type: Annotated[str | None, Query(alias="type", description="a schema.org type the page carries: Recipe")] = None,
        min_score: Annotated[float | None, Query(ge=0, le=1e12, description="semantic score at least")] = None,
        max_score: Annotated[float | None, Query(ge=0, le=1e12, description="semantic score at most")] = None,
        since: Annotated[str | None, Query(max_length=40, description="fetched at or after (ISO 8601)")] = None,
    ) -> Filters:
        if host is not None and not _HOST.match(host.lower()):
            raise HTTPException(422, "host: a host name, with an optional :port")
        if syntax is not None and syntax not in SYNTAXES:
            raise HTTPException(422, f"syntax: one of {', '.join(SYNTAXES)}")
        if schema_type is not None and not _TYPE.match(schema_type):
            raise HTTPException(422, "type: a schema.org type name (letters and digits: Recipe, NewsArticle)")
        if min_score is not None and max_score is not None and min_score > max_score:
            raise HTTPException(422, "min_score is more than max_score")
        return Filters(host=host.lower() if host else None, status=status, content_type=content_type,
                       syntax=syntax, schema_type=schema_type, min_score=min_score, max_score=max_score,
                       since=_iso_utc(since) if since else None)

    Limit = Annotated[int, Query(ge=1, le=MAX_LIMIT, description=f"rows, at most {MAX_LIMIT}")]
    Cursor = Annotated[str | None, Query(max_length=64, description="the next_cursor of the page before")]

    def listing(crawl: str, f: Filters, limit: int, cursor: str | None) -> dict[str, Any]:
        rows, after = queries.list_urls(reader, crawl, f, limit, _decode_cursor(cursor))
        return {"crawl": crawl, "items": rows, "next_cursor": _encode_cursor(after)}

    @app.get("/api/crawls/{crawl}/urls", dependencies=api, summary="The crawl's URLs, filtered, a page at a time")
    def list_urls(crawl: Crawl, f: Annotated[Filters, Depends(filters)], limit: Limit = 100,
                  cursor: Cursor = None) -> dict[str, Any]:
        return listing(crawl, f, limit, cursor)

    @app.get("/api/crawls/{crawl}/pages", dependencies=api, summary="The crawl's URLs that have a stored page")
    def list_pages(crawl: Crawl, f: Annotated[Filters, Depends(filters)], limit: Limit = 100,
                   cursor: Cursor = None) -> dict[str, Any]:
        return listing(crawl, Filters(**{**f.__dict__, "pages_only": True}), limit, cursor)

    @app.get("/api/crawls/{crawl}/export.jsonl", dependencies=api,
             summary="Every URL the filters keep, as JSON lines, streamed")
    def export(crawl: Crawl, f: Annotated[Filters, Depends(filters)]) -> StreamingResponse:
        def lines() -> Iterator[bytes]:
            for row in queries.stream_urls(reader, crawl, f):
                yield (json.dumps(row, ensure_ascii=False, default=str) + "\n").encode()

        return StreamingResponse(lines(), media_type="application/x-ndjson")

    Url = Annotated[str, Query(max_length=2048, description="an absolute http(s) URL")]

    def stored_url(crawl: str, url: str) -> str:
        """``url`` as the crawl stored it (normalized), or a 404."""
        for candidate in dict.fromkeys((url, try_normalize(url))):
            if candidate and queries.knows(reader, crawl, candidate):
                return candidate
        raise HTTPException(404, f"{url} is neither a URL of crawl {crawl!r} nor a link it saw")

    @app.get("/api/crawls/{crawl}/page", dependencies=api,
             summary="One URL: its row, its page's semantic profile and structured data")
    def one_page(crawl: Crawl, url: Url) -> dict[str, Any]:
        found = queries.page(reader, crawl, stored_url(crawl, url))
        if found is None:
            raise HTTPException(404, f"{url} is a link of crawl {crawl!r}, never fetched")
        return found

    @app.get("/api/crawls/{crawl}/editions", dependencies=api,
             summary="The pages a URL served across recrawls, and when")
    def editions(crawl: Crawl, url: Url) -> dict[str, Any]:
        stored = stored_url(crawl, url)
        return {"crawl": crawl, "url": stored, "editions": queries.editions(reader, crawl, stored)}

    @app.get("/api/crawls/{crawl}/links", dependencies=api, summary="Links out of (or into) a URL, within N hops")
    def links(crawl: Crawl, url: Url,
              direction: Annotated[str, Query(pattern="^(out|in)$", description="out: its links; in: links to it")] = "out",
              depth: Annotated[int, Query(ge=1, le=MAX_DEPTH)] = 1, limit: Limit = 1000) -> dict[str, Any]:
        start = stored_url(crawl, url)
        edges = queries.links(reader, crawl, start, depth, reverse=direction == "in", limit=limit)
        return {"crawl": crawl, "url": start, "direction": direction, "depth": depth, "links": edges,
                "complete": len(edges) < limit}

    @app.get("/api/crawls/{crawl}/paths", dependencies=api, summary="Link paths from one URL to another")
    def paths(crawl: Crawl, source: Url, target: Url,
              max_length: Annotated[int, Query(ge=1, le=MAX_PATH, description="links in a path")] = 3,
              limit: Annotated[int, Query(ge=1, le=MAX_PATHS)] = 10) -> dict[str, Any]:
        start, goal = stored_url(crawl, source), stored_url(crawl, target)
        if start == goal:
            raise HTTPException(422, "source and target are the same URL")
        found, cut = queries.paths(reader, crawl, start, goal, max_length, limit)
        return {"crawl": crawl, "source": start, "target": goal, "max_length": max_length, "paths": found,
                "complete": not cut}

    # -- the frontier -------------------------------------------------------------
    @app.get("/api/crawls/{crawl}/frontier", dependencies=api,
             summary="The frontier: queued, leased, done, workers, hosts and their delays, the best URLs and why")
    def frontier(crawl: str, top: Annotated[int, Query(ge=0, le=MAX_LIMIT)] = 20,
                 hosts: Annotated[int, Query(ge=0, le=MAX_LIMIT)] = 20) -> dict[str, Any]:
        if only_crawl is not None and crawl != only_crawl:
            raise HTTPException(404, f"this server serves crawl {only_crawl!r} only")
        state = frontier_state(crawl, top, hosts) if frontier_state else None
        if state is None:
            raise HTTPException(404, f"the frontier has nothing of crawl {crawl!r}")
        return state

    # -- a running crawl, live; its report ----------------------------------------------
    @app.get("/api/crawls/{crawl}/live", dependencies=api,
             summary="What the live page shows: progress, pages/s, items per page over time, harvest, workers, hosts")
    def live_data(crawl: Crawl, against: Annotated[str | None, Query(max_length=255, description="a baseline crawl")] = None,
                  hosts: Annotated[int, Query(ge=0, le=MAX_LIMIT)] = 50) -> dict[str, Any]:
        if against is not None:
            known_crawl(against)

        def fresh() -> dict[str, Any]:
            state = frontier_state(crawl, 0, hosts) if frontier_state else None
            return live_state(reader, crawl, state, against)

        return recent.get((crawl, against, hosts), LIVE_SECONDS, fresh)

    @app.get("/crawls/{crawl}/live", include_in_schema=False)
    def live_page(crawl: Crawl) -> HTMLResponse:
        script_safe = json.dumps(crawl).replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
        return HTMLResponse(PAGE.replace("__CRAWL_JSON__", script_safe).replace("__CRAWL__", html.escape(crawl)))

    reports = Reports(reader)
    app.state.reports = reports  # closed by whoever runs the app (its temporary folder)

    @app.get("/crawls/{crawl}/report/", dependencies=api, include_in_schema=False)
    def report_page(crawl: Crawl, against: Annotated[str | None, Query(max_length=255)] = None) -> RedirectResponse:
        """``scrapy report``'s page of the crawl (against a baseline), made now (at most
        every 30 s), at an address of its own that its figures sit beside."""
        if against is not None:
            known_crawl(against)
        return RedirectResponse(f"/reports/{reports.folder(crawl, against).name}/index.html", status_code=303)

    @app.get("/reports/{key}/{name}", dependencies=api, include_in_schema=False)
    def report_file(key: Annotated[str, Path(pattern=r"^[0-9a-f]{32}$")],
                    name: Annotated[str, Path(pattern=r"^[a-z0-9-]{1,40}\.(png|json|html)$")]) -> FileResponse:
        file = reports.root / key / name
        if not file.is_file():
            raise HTTPException(404, "no such report file (open /crawls/NAME/report/ first)")
        return FileResponse(file)

    # -- documentation, with no network -------------------------------------------------
    from swagger_ui_bundle import swagger_ui_path

    app.mount("/static/swagger", StaticFiles(directory=swagger_ui_path), name="swagger")

    @app.get("/docs", include_in_schema=False)
    def docs() -> HTMLResponse:
        return get_swagger_ui_html(
            openapi_url="/openapi.json", title="SpiTag API",
            swagger_js_url="/static/swagger/swagger-ui-bundle.js", swagger_css_url="/static/swagger/swagger-ui.css",
            swagger_favicon_url="/static/swagger/favicon-32x32.png",
        )

    return app


def _iso_utc(text: str) -> str:
    """An ISO 8601 time as the store writes it: UTC, milliseconds, a Z."""
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise HTTPException(422, "since: an ISO 8601 time, 2026-01-31T12:00:00Z") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return moment.astimezone(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _encode_cursor(key: str | None) -> str | None:
    return None if key is None else base64.urlsafe_b64encode(bytes.fromhex(key)).decode().rstrip("=")


def _decode_cursor(cursor: str | None) -> str | None:
    if cursor is None:
        return None
    try:
        key = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).hex()
    except (binascii.Error, ValueError):
        key = ""
    if not _KEY.match(key):
        raise HTTPException(422, "cursor: not a cursor this API gave")
    return key
