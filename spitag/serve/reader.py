"""Read-only access to a store for the web service: nothing it runs can write.

SQLite is opened ``mode=ro`` (and ``query_only``), PostgreSQL with
``default_transaction_read_only``, so that no request, whatever a bug lets through,
changes the tables a crawl writes. Every statement has a time limit (``TIMEOUT``): a
request cannot hold the database. Values always travel as parameters (``?`` here, the
PostgreSQL driver's ``%s`` there); the few SQL differences between the two live in
``Dialect``.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from spitag.errors import BackendUnavailableError, BadInputError
from spitag.store import sqlite_path
from spitag.store.base import CRAWLS_SQL
from spitag.store.schema import MIGRATIONS, SCHEMA_VERSION
from spitag.urls import redact

TIMEOUT = 5.0  # seconds a statement may run


class QueryTimeout(Exception):
    """A statement ran past ``TIMEOUT``."""


@dataclass(frozen=True)
class Dialect:
    """What the SQL of the two stores does differently."""

    name: str
    # a page's count of one syntax, from its ``semantic`` JSON; the parameter is the key path
    syntax_count: str
    syntax_path: str  # how the syntax name becomes that parameter ("{}" is the name)
    key_cast: str  # a URL key parameter, typed as the key columns (their index is used)
    minute: str  # the minute (UTC, ISO: 2026-12-07T12:34) a URL was checked


SQLITE = Dialect("sqlite", "CAST(json_extract(p.semantic, ?) AS INTEGER)", '$."{}"', "CAST(? AS CHAR(32))",
                 "substr(u.checked, 1, 16)")
POSTGRES = Dialect("postgresql", "CAST(CAST(p.semantic AS json) ->> ? AS INTEGER)", "{}",
                   'CAST(? AS CHAR(32)) COLLATE "C"',
                   "to_char(u.checked AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI')")


class Recent:
    """Answers kept a while: what reads every URL of a crawl (its live data, its
    summary, its size) is made once per ``seconds``, however many clients ask."""

    def __init__(self) -> None:
        self.kept: dict[Any, tuple[float, Any]] = {}
        self.lock = threading.Lock()

    def get(self, key: Any, seconds: float, make: Any) -> Any:
        with self.lock:
            made, value = self.kept.get(key, (-seconds - 1.0, None))
            if time.monotonic() - made < seconds:
                return value
            value = make()
            if len(self.kept) > 1000:  # crawls asked about: few; keep it bounded anyway
                self.kept.clear()
            self.kept[key] = (time.monotonic(), value)
            return value


class StoreReader:
    """A read-only view of the store named by ``url`` (``SPITAG_STORE``'s syntax)."""

    def __init__(self, url: str) -> None:
        self.url = url
        scheme = urlsplit(url).scheme.lower()
        self._local = threading.local()
        self.recent = Recent()  # numbers that may lag a little: a crawl's size, summary, live data
        if scheme == "sqlite":
            self.path = sqlite_path(url).resolve()
            if not self.path.is_file():
                raise BadInputError(f"no store at {url} (set SPITAG_STORE as for the crawl)")
            self.dialect = SQLITE
        elif scheme in ("postgresql", "postgres"):
            self.path = None
            self.dialect = POSTGRES
        else:
            raise BadInputError(f"unknown store URL {url!r}: SPITAG_STORE takes sqlite:///path.db or postgresql://…")
        try:  # reachable, and a SpiTag store of this version (migrating is a write: not ours)
            version = self.rows("SELECT value FROM spitag_meta WHERE key = 'schema_version'")
        except BackendUnavailableError as exc:
            if "no such table" in str(exc) or "does not exist" in str(exc):
                raise BadInputError(f"{redact(url)} holds no SpiTag store") from None
            raise
        if not version or str(version[0][0]) != str(SCHEMA_VERSION):
            found = version[0][0] if version else "none"
            raise BadInputError(
                f"store {redact(url)} has schema version {found}, this SpiTag serves {SCHEMA_VERSION}"
                + (": `scrapy crawls` (or a crawl) migrates it in place" if str(found).isdigit()
                   and int(found) in MIGRATIONS else ""))

    # -- connections ------------------------------------------------------------------
    def _connect(self) -> Any:
        if self.path is not None:
            try:
                conn = sqlite3.connect(f"file:{self.path}?mode=ro", uri=True, timeout=TIMEOUT,
                                       check_same_thread=False)
                conn.execute("PRAGMA query_only = ON")
            except sqlite3.Error as exc:
                raise BackendUnavailableError(f"store {self.url}: cannot open {self.path}: {exc}") from None
            return conn
        from spitag.store.postgres import connect

        conn = connect(self.url)
        conn.set_session(readonly=True, autocommit=True)
        with conn.cursor() as cur:
            cur.execute("SET statement_timeout = %s", (int(TIMEOUT * 1000),))
        return conn

    def _connection(self) -> Any:
        """One connection per thread (the server answers requests in a thread pool)."""
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = self._local.conn = self._connect()
        return conn

    def _drop(self) -> None:
        conn = getattr(self._local, "conn", None)
        self._local.conn = None
        if conn is not None:
            try:
                conn.close()
            except Exception:
                pass

    @contextmanager
    def cursor(self) -> Iterator[Any]:
        """A cursor whose statements stop at ``TIMEOUT`` (QueryTimeout); a store that
        went away is BackendUnavailableError, and the next call connects again."""
        conn = self._connection()
        if self.path is not None:
            deadline = time.monotonic() + TIMEOUT
            conn.set_progress_handler(lambda: int(time.monotonic() > deadline), 10_000)
        cur = conn.cursor()
        try:
            yield _Cursor(cur, self.path is None)
        except sqlite3.OperationalError as exc:
            if "interrupted" in str(exc):
                raise QueryTimeout(f"a query ran past {TIMEOUT:g} s") from None
            self._drop()
            raise BackendUnavailableError(f"store {self.url}: {exc}") from None
        except Exception as exc:
            if self.path is None and _is_pg_error(exc):
                if getattr(exc, "pgcode", None) == "57014":  # query_canceled: statement_timeout
                    raise QueryTimeout(f"a query ran past {TIMEOUT:g} s") from None
                self._drop()
                raise BackendUnavailableError(
                    f"store {redact(self.url)}: {' '.join(str(exc).split())[:200]}") from None
            raise
        finally:
            try:
                cur.close()
                if self.path is not None:
                    conn.set_progress_handler(None, 0)
            except Exception:  # dropped above
                pass

    def rows(self, sql: str, params: Sequence[Any] = ()) -> list[tuple]:
        with self.cursor() as cur:
            cur.execute(sql, params)
            return cur.fetchall()

    def dicts(self, sql: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
        with self.cursor() as cur:
            cur.execute(sql, params)
            names = [d[0] for d in cur.description]
            return [dict(zip(names, row)) for row in cur.fetchall()]

    # what ``spitag.report`` reads of a Store
    def query(self, sql: str, params: Sequence[Any] = ()) -> list[tuple]:
        return self.rows(sql, params)

    def crawls(self) -> list[tuple[str, int]]:
        return [(c, n) for c, n in self.rows(CRAWLS_SQL)]

    def close(self) -> None:
        self._drop()


def _is_pg_error(exc: BaseException) -> bool:
    try:
        import psycopg2
    except ImportError:  # pragma: no cover - psycopg2 is a requirement
        return False
    return isinstance(exc, psycopg2.Error)


class _Cursor:
    """A DB-API cursor taking ``?`` placeholders on either store."""

    def __init__(self, cur: Any, pyformat: bool) -> None:
        self._cur = cur
        self._pyformat = pyformat

    def execute(self, sql: str, params: Sequence[Any] = ()) -> None:
        if self._pyformat:
            from spitag.store.postgres import _pyformat

            sql = _pyformat(sql)
        self._cur.execute(sql, tuple(params))

    def fetchall(self) -> list[tuple]:
        return self._cur.fetchall()

    def fetchone(self) -> tuple | None:
        return self._cur.fetchone()

    @property
    def description(self) -> Any:
        return self._cur.description
