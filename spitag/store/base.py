"""The store contract and the SQL both backends share.

A store receives batches of records (PageItem dicts with their ``body``) and writes
each batch in one transaction. Writes are idempotent on natural keys — ``md5`` for a
page, ``(crawl, url)`` for a URL, the pair for a link — so a batch replayed after a
crash or a re-leased request never duplicates a row.
"""

from __future__ import annotations

import json
import logging
import zlib
from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from spitag.store.schema import SCHEMA_VERSION, TABLES

logger = logging.getLogger(__name__)

BODY_FORMATS = ("plain", "zlib", "none")
_CHUNK = 400  # parameters per IN (...) list: far below both engines' limits


def clean_text(value: str | None) -> str | None:
    """Text any SQL engine accepts: NUL bytes dropped, lone surrogates replaced."""
    if value is None:
        return None
    if "\x00" in value:
        value = value.replace("\x00", "")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        value = value.encode("utf-8", "replace").decode("utf-8")
    return value


def is_page(record: dict[str, Any]) -> bool:
    """Only a successful (2xx) response becomes a Page row; errors and redirects are URL rows."""
    status = record.get("status")
    return status is not None and 200 <= status < 300


def encode_body(body: str | bytes | None, body_format: str) -> bytes | None:
    """The ``page.data`` value: UTF-8 text (or raw bytes for binary), maybe zlib-compressed."""
    if body is None or body_format == "none":
        return None
    data = body.encode("utf-8", "replace") if isinstance(body, str) else bytes(body)
    return zlib.compress(data, 6) if body_format == "zlib" else data


def decode_body(data: bytes | None, body_format: str) -> bytes | None:
    """Inverse of encode_body: the stored bytes, decompressed."""
    if data is None:
        return None
    data = bytes(data)
    return zlib.decompress(data) if body_format == "zlib" else data


@dataclass
class WriteResult:
    """What one batch did: counts for stats, and the URLs now safely committed."""

    urls: list[str] = field(default_factory=list)
    pages_new: int = 0
    pages_seen: int = 0
    links_new: int = 0


class Store(ABC):
    """A Page/URL/Link store. Methods block: callers run them off the reactor thread."""

    url: str

    @abstractmethod
    def write(self, records: Sequence[dict[str, Any]]) -> WriteResult:
        """Write one batch in one transaction; idempotent; returns when committed."""

    @abstractmethod
    def iter_urls(self, crawl: str) -> Iterator[dict[str, Any]]:
        """Every URL row of a crawl joined with its page, as item-like dicts, in fetch order."""

    @abstractmethod
    def page_body(self, page_id: int) -> bytes | None:
        """The stored content of a page (decompressed), or None."""

    @abstractmethod
    def query(self, sql: str, params: Sequence[Any] = ()) -> list[tuple]:
        """Run a read-only query written with ``?`` placeholders."""

    @abstractmethod
    def close(self) -> None:
        """Release the connection."""


class SQLStore(Store):
    """The shared SQL of both backends; subclasses supply the connection and dialect."""

    placeholder = "?"
    blob_type = "BLOB"
    serial_type = "INTEGER PRIMARY KEY AUTOINCREMENT"
    ts_type = "TEXT"

    def __init__(self, url: str, body_format: str = "plain") -> None:
        if body_format not in BODY_FORMATS:
            raise ValueError(f"SPITAG_STORE_BODY must be one of {', '.join(BODY_FORMATS)}")
        self.url = url
        self.body_format = body_format
        self.conn = self._connect()
        self._create_schema()

    # -- dialect hooks -------------------------------------------------------------
    @abstractmethod
    def _connect(self) -> Any: ...

    def _sql(self, sql: str) -> str:
        return sql if self.placeholder == "?" else sql.replace("?", self.placeholder)

    def _binary(self, data: bytes | None) -> Any:
        return data

    # -- schema --------------------------------------------------------------------
    def _create_schema(self) -> None:
        cur = self.conn.cursor()
        for ddl in TABLES:
            cur.execute(ddl.format(blob=self.blob_type, serial=self.serial_type, ts=self.ts_type))
        cur.execute("SELECT value FROM spitag_meta WHERE key = 'schema_version'")
        row = cur.fetchone()
        if row is None:
            cur.execute(
                self._sql("INSERT INTO spitag_meta (key, value) VALUES ('schema_version', ?)"),
                (str(SCHEMA_VERSION),),
            )
        elif int(row[0]) != SCHEMA_VERSION:
            self.conn.rollback()
            from spitag.errors import BadInputError

            raise BadInputError(
                f"store {self.url} has schema version {row[0]}, this SpiTag uses "
                f"{SCHEMA_VERSION}: use a new store or migrate it"
            )
        self.conn.commit()

    # -- writing -------------------------------------------------------------------
    def write(self, records: Sequence[dict[str, Any]]) -> WriteResult:
        result = WriteResult()
        if not records:
            return result
        cur = self.conn.cursor()
        try:
            page_ids = self._write_pages(cur, records, result)
            self._write_urls(cur, records, page_ids)
            self._write_links(cur, records, result)
            self.conn.commit()
        except BaseException:
            self.conn.rollback()
            raise
        result.urls = [r["url"] for r in records]
        return result

    def _write_pages(self, cur: Any, records: Sequence[dict], result: WriteResult) -> dict[str, int]:
        rows: dict[str, tuple] = {}
        for r in records:
            md5 = r.get("md5")
            if not md5 or not is_page(r) or md5 in rows:
                continue
            rows[md5] = (
                md5,
                r["md5dia"],
                clean_text(r.get("content_type")),
                self._binary(encode_body(r.get("body"), self.body_format)),
                self.body_format,
                clean_text(r.get("encoding")),
                int(r.get("size") or 0),
                bool(r.get("truncated")),
                clean_text(r.get("title")),
                json.dumps(r.get("semantic") or {}, sort_keys=True),
                int((r.get("semantic") or {}).get("total", 0)),
                float(r.get("score") or 0.0),
                clean_text(json.dumps(r["data"], ensure_ascii=False, default=str))
                if r.get("data")
                else None,
                r["fetched_at"],
            )
        if not rows:
            return {}
        existing = self._ids_by_md5(cur, list(rows))
        new_rows = [row for md5, row in rows.items() if md5 not in existing]
        if new_rows:
            cur.executemany(
                self._sql(
                    "INSERT INTO page (md5, md5dia, type, data, data_format, encoding, size,"
                    " truncated, title, semantic, semantic_total, score, structured, modified)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
                    " ON CONFLICT (md5) DO NOTHING"
                ),
                new_rows,
            )
            existing = self._ids_by_md5(cur, list(rows))
        result.pages_new = len(new_rows)
        result.pages_seen = len(rows) - len(new_rows)
        return existing

    def _ids_by_md5(self, cur: Any, md5s: list[str]) -> dict[str, int]:
        found: dict[str, int] = {}
        for chunk in _chunks(md5s):
            cur.execute(
                self._sql(f"SELECT md5, id FROM page WHERE md5 IN ({_marks(chunk)})"), chunk
            )
            found.update(cur.fetchall())
        return found

    def _write_urls(self, cur: Any, records: Sequence[dict], page_ids: dict[str, int]) -> None:
        rows = []
        for r in records:
            fetched = r["fetched_at"] if r.get("status") is not None else None
            rows.append(
                (
                    clean_text(r["crawl"]),
                    clean_text(r["url"]),
                    page_ids.get(r.get("md5")) if is_page(r) else None,
                    fetched,
                    r["fetched_at"],
                    r.get("expires"),
                    r.get("status"),
                    clean_text(r.get("error")),
                    clean_text(r.get("content_type")),
                    int(r.get("depth") or 0),
                    r.get("priority"),
                    clean_text(json.dumps(r["reason"], default=str)) if r.get("reason") else None,
                    clean_text(r.get("redirect_to")),
                )
            )
        cur.executemany(
            self._sql(
                "INSERT INTO url (crawl, url, page_id, fetched, checked, expires, status, error,"
                " content_type, depth, priority, reason, redirect_to)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
                " ON CONFLICT (crawl, url) DO UPDATE SET"
                " page_id = excluded.page_id,"
                " fetched = COALESCE(url.fetched, excluded.fetched),"
                " checked = excluded.checked, expires = excluded.expires,"
                " status = excluded.status, error = excluded.error,"
                " content_type = excluded.content_type,"
                " depth = CASE WHEN excluded.depth < url.depth THEN excluded.depth ELSE url.depth END,"
                " priority = excluded.priority, reason = excluded.reason,"
                " redirect_to = excluded.redirect_to"
            ),
            rows,
        )

    def _write_links(self, cur: Any, records: Sequence[dict], result: WriteResult) -> None:
        crawl_urls: dict[str, list[str]] = {}
        outlinks = []
        for r in records:
            crawl = clean_text(r["crawl"])
            source = clean_text(r["url"])
            crawl_urls.setdefault(crawl, []).append(source)
            for target in r.get("links") or ():
                outlinks.append((crawl, source, clean_text(target)))
        if outlinks:
            cur.executemany(
                self._sql(
                    "INSERT INTO outlink (crawl, source, target) VALUES (?, ?, ?)"
                    " ON CONFLICT (crawl, source, target) DO NOTHING"
                ),
                outlinks,
            )
        # A link row appears once both ends are pages: for this batch's URLs as sources
        # (their outlinks to pages already stored) and as targets (pending outlinks to them).
        for crawl, urls in crawl_urls.items():
            for column in ("source", "target"):
                for chunk in _chunks(urls):
                    cur.execute(
                        self._sql(
                            "INSERT INTO link (source, target)"
                            " SELECT DISTINCT s.page_id, t.page_id FROM outlink o"
                            " JOIN url s ON s.crawl = o.crawl AND s.url = o.source"
                            " JOIN url t ON t.crawl = o.crawl AND t.url = o.target"
                            f" WHERE o.crawl = ? AND o.{column} IN ({_marks(chunk)})"
                            " AND s.page_id IS NOT NULL AND t.page_id IS NOT NULL"
                            " ON CONFLICT (source, target) DO NOTHING"
                        ),
                        [crawl, *chunk],
                    )
                    result.links_new += max(cur.rowcount, 0)

    # -- reading -------------------------------------------------------------------
    def iter_urls(self, crawl: str) -> Iterator[dict[str, Any]]:
        cur = self.conn.cursor()
        cur.execute(
            self._sql(
                "SELECT u.url, u.status, u.error, u.depth, u.priority, u.reason, u.checked,"
                " u.content_type, p.encoding, p.size, p.truncated, p.md5, p.md5dia, p.title,"
                " p.semantic, p.score, p.structured, u.redirect_to, u.expires,"
                " (SELECT COUNT(*) FROM outlink o WHERE o.crawl = u.crawl AND o.source = u.url)"
                " FROM url u LEFT JOIN page p ON p.id = u.page_id"
                " WHERE u.crawl = ? ORDER BY u.checked, u.url"
            ),
            (crawl,),
        )
        names = (
            "url status error depth priority reason fetched_at content_type encoding size"
            " truncated md5 md5dia title semantic score data redirect_to expires outlinks"
        ).split()
        for row in cur:
            item = dict(zip(names, row))
            item["crawl"] = crawl
            for key in ("reason", "semantic", "data"):
                if item[key]:
                    item[key] = json.loads(item[key])
            if item["truncated"] is not None:
                item["truncated"] = bool(item["truncated"])
            yield item

    def page_body(self, page_id: int) -> bytes | None:
        rows = self.query("SELECT data, data_format FROM page WHERE id = ?", (page_id,))
        return decode_body(rows[0][0], rows[0][1]) if rows else None

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[tuple]:
        cur = self.conn.cursor()
        cur.execute(self._sql(sql), tuple(params))
        rows = cur.fetchall()
        self.conn.commit()
        return rows

    def close(self) -> None:
        try:
            self.conn.close()
        except Exception:  # closing a broken connection must not hide the real error
            logger.debug("closing %s failed", self.url, exc_info=True)


def _chunks(values: list[Any], size: int = _CHUNK) -> Iterable[list[Any]]:
    for start in range(0, len(values), size):
        yield values[start : start + size]


def _marks(values: list[Any]) -> str:
    return ", ".join("?" * len(values))
