"""The shared store: PostgreSQL through psycopg2, for several workers and big crawls.

Same tables and behaviour as SQLite (``spitag.store.base``); what differs:

* Many rows per round trip: ``psycopg2.extras.execute_values`` sends one
  ``INSERT … VALUES (…), (…), … ON CONFLICT …`` per chunk instead of one per row.
* Timestamps are TIMESTAMPTZ; they read back as the ISO 8601 strings items carry
  (``2026-11-30T10:00:00.000Z``), as on SQLite.
* First-time schema creation holds an advisory lock, so workers may start together.
* A lost connection (server restarted, network cut) is dropped; the failed batch
  raises BackendUnavailableError, the pipeline retries it with backoff, and the next
  attempt connects again. Writes are idempotent, so a batch whose COMMIT was cut off
  may be written twice without harm.
"""

from __future__ import annotations

import logging
import re
import uuid
from datetime import datetime, timezone
from typing import Any, Sequence

import psycopg2
import psycopg2.extensions
import psycopg2.extras

from spitag.errors import BackendUnavailableError, BadInputError
from spitag.store.base import SQLStore, WriteResult, _chunks
from spitag.store.schema import MIGRATIONS, SCHEMA_VERSION
from spitag.urls import redact

logger = logging.getLogger(__name__)

CONNECT_TIMEOUT = 10
# Dead peers are noticed by TCP keepalives: idle 30 s, then 3 probes 10 s apart.
KEEPALIVES = {"keepalives": 1, "keepalives_idle": 30, "keepalives_interval": 10, "keepalives_count": 3}
# SQLSTATE classes that blame a value, not the server: 21 cardinality, 22 data
# exception, 23 integrity constraint, 54 program limit (e.g. an index row too big).
DATA_ERROR_CLASSES = ("21", "22", "23", "54")
SCHEMA_LOCK = 0x5317A6  # pg_advisory_xact_lock key of first-time schema creation
TIMESTAMPTZ_OID = 1184

_TOKENS = re.compile(r"'(?:[^']|'')*'|\?|%")


def _pyformat(sql: str) -> str:
    """``?`` placeholders → ``%s``, literal ``%`` → ``%%`` (quoted ``?`` left alone)."""

    def swap(match: re.Match[str]) -> str:
        token = match.group(0)
        if token == "?":
            return "%s"
        return token.replace("%", "%%")

    return _TOKENS.sub(swap, sql)


def _one_line(exc: BaseException) -> str:
    return redact(" ".join(str(exc).split()))


def _iso_timestamp(value: str | None, cur: Any) -> str | None:
    """TIMESTAMPTZ as items write it: UTC, milliseconds, a Z (infinity as is)."""
    if value is None:
        return None
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        return value
    return moment.astimezone(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


ISO_TIMESTAMPTZ = psycopg2.extensions.new_type((TIMESTAMPTZ_OID,), "SPITAG_TIMESTAMPTZ", _iso_timestamp)


def connect(url: str, timeout: float = CONNECT_TIMEOUT) -> Any:
    """A psycopg2 connection; BackendUnavailableError (password-free, one line) if none."""
    try:
        conn = psycopg2.connect(url, connect_timeout=max(int(timeout), 1), application_name="spitag", **KEEPALIVES)
    except psycopg2.Error as exc:
        raise BackendUnavailableError(f"store {redact(url)}: PostgreSQL unreachable: {_one_line(exc)}") from None
    psycopg2.extensions.register_type(ISO_TIMESTAMPTZ, conn)
    return conn


def ping(url: str) -> None:
    """Reach PostgreSQL once, writing nothing: BackendUnavailableError if it can't be
    reached, BadInputError if it holds a store of another schema version."""
    conn = connect(url, timeout=5)
    try:
        cur = conn.cursor()
        cur.execute("SELECT to_regclass('spitag_meta') IS NOT NULL")
        if cur.fetchone()[0]:
            cur.execute("SELECT value FROM spitag_meta WHERE key = 'schema_version'")
            row = cur.fetchone()
            migrates = row is not None and str(row[0]).isdigit() and int(row[0]) in MIGRATIONS  # (at open)
            if row is not None and str(row[0]) != str(SCHEMA_VERSION) and not migrates:
                raise BadInputError(
                    f"store {redact(url)} has schema version {row[0]}, this SpiTag uses "
                    f"{SCHEMA_VERSION}: use a new store or migrate it"
                )
        conn.rollback()
    except psycopg2.Error as exc:
        raise BackendUnavailableError(f"store {redact(url)}: PostgreSQL error: {_one_line(exc)}") from None
    finally:
        conn.close()


class PostgresStore(SQLStore):
    """``postgresql://user:password@host:port/database`` (an existing database; the
    tables are created on first use)."""

    placeholder = "%s"
    blob_type = "BYTEA"
    serial_type = "BIGSERIAL PRIMARY KEY"
    ts_type = "TIMESTAMPTZ"
    key_type = 'CHAR(32) COLLATE "C"'
    name_type = 'VARCHAR(255) COLLATE "C"'
    key_cast = 'CAST(? AS CHAR(32)) COLLATE "C"'
    links_sql = (
        "(SELECT string_agg(o.target, E'\\n' ORDER BY o.position, o.target) FROM outlink o"
        " WHERE o.crawl = u.crawl AND o.source_md5 = u.url_md5)"
    )
    in_chunk = 5000  # psycopg2 inlines values: no parameter limit, fewer round trips

    def _connect(self) -> Any:
        return connect(self.url)

    def _sql(self, sql: str) -> str:
        return _pyformat(sql)

    def _binary(self, data: bytes | None) -> Any:
        return None if data is None else psycopg2.Binary(data)

    def _insert_many(self, cur: Any, head: str, rows: list[tuple], tail: str = "", per: int = 0) -> int:
        sql = f"{self._sql(head)} VALUES %s {self._sql(tail)}"
        written = 0
        for chunk in _chunks(rows, per or self.rows_per_statement):
            psycopg2.extras.execute_values(cur, sql, chunk, page_size=len(chunk))
            written += max(cur.rowcount, 0)
        return written

    def _is_data_error(self, exc: BaseException) -> bool:
        if isinstance(exc, psycopg2.Error):
            return (exc.pgcode or "")[:2] in DATA_ERROR_CLASSES
        # psycopg2 refuses some values before sending them (a NUL in a string)
        return super()._is_data_error(exc)

    def _is_broken(self, exc: BaseException) -> bool:
        # closed by libpq, or an error from no statement (pgcode None: the socket), a
        # connection exception (08…) or the server going away (57P01 admin shutdown…).
        # A deadlock (40P01) or a data error leaves the connection usable.
        if self.conn is None or self.conn.closed:
            return True
        if isinstance(exc, psycopg2.InterfaceError):
            return True
        return isinstance(exc, psycopg2.OperationalError) and (exc.pgcode or "08")[:2] in ("08", "57")

    def _table_exists(self, cur: Any, name: str) -> bool:
        cur.execute("SELECT to_regclass(%s) IS NOT NULL", (name,))
        return bool(cur.fetchone()[0])

    def _lock_schema(self, cur: Any) -> None:
        cur.execute("SELECT pg_advisory_xact_lock(%s)", (SCHEMA_LOCK,))

    def _tune_tables(self, cur: Any) -> None:
        # lz4 (PostgreSQL 14+, when built with it) compresses bodies faster than the
        # default pglz to about the same size: page inserts of the bench's real pages took
        # ~40 % less time. A server without it keeps its default.
        cur.execute("SAVEPOINT spitag_lz4")
        try:
            cur.execute("ALTER TABLE page ALTER COLUMN data SET COMPRESSION lz4")
        except psycopg2.Error:
            cur.execute("ROLLBACK TO SAVEPOINT spitag_lz4")
        else:
            cur.execute("RELEASE SAVEPOINT spitag_lz4")

    def _read_cursor(self) -> Any:
        if self.conn is None:
            self.conn = self._connect()
        cur = self.conn.cursor(name=f"spitag_read_{uuid.uuid4().hex[:12]}")
        cur.itersize = 1000
        return cur

    def write(self, records: Sequence[dict[str, Any]]) -> WriteResult:
        try:
            return super().write(records)
        except psycopg2.Error as exc:
            if self.conn is None:  # dropped as broken: the next write connects again
                raise BackendUnavailableError(
                    f"store {redact(self.url)}: connection lost: {_one_line(exc)}"
                ) from None
            raise
