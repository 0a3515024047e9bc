"""The store contract and the SQL both backends share.

A store receives batches of records (PageItem dicts with their ``body``) and writes
each batch in one transaction. Writes are idempotent on natural keys — ``md5`` for a
page, ``(crawl, url)`` for a URL (stored as ``(crawl, url_md5)``), the pair for a
link — so a batch replayed after a crash or a re-leased request never duplicates a row.

Several writers may share one database (PostgreSQL workers). Each transaction takes
its row locks in one global order — pages by md5, then URLs by (crawl, url_md5), then
outlinks by key, then links by (source, target) — so two writers can wait for each
other but never deadlock. Links are filled in by a second, short transaction after
the first commits: of two writers that store the two ends of a link at once, the one
that commits last then sees both ends and writes the link.

A record that cannot be stored (a value the database refuses) must not sink its
batch: a batch that fails with a data error is split in halves and retried until the
bad record stands alone; that record is logged, counted in ``WriteResult.rejected``
and skipped. Any other error (connection lost, disk full) fails the whole batch, which
the caller retries.
"""

from __future__ import annotations

import json
import logging
import zlib
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from spitag.digest import md5_hex
from spitag.errors import BadInputError
from spitag.store.schema import MIGRATIONS, SCHEMA_VERSION, TABLES
from spitag.urls import redact

logger = logging.getLogger(__name__)

BODY_FORMATS = ("plain", "zlib", "none")
_CHUNK = 400  # parameters per IN (...) list: below SQLite's oldest limit (999)
_T = TypeVar("_T")

PAGE_COLUMNS = (
    "md5, md5dia, type, data, data_format, encoding, size, truncated, title, semantic,"
    " semantic_total, score, incomplete, structured, modified"
)
URL_COLUMNS = (
    "crawl, url_md5, url, page_id, fetched, checked, expires, status, error, content_type,"
    " depth, priority, reason, redirect_to, etag, last_modified, revisit_interval,"
    " canonical, robots, changed, outlinks"
)
_URL_DEPTH, _URL_FETCHED, _URL_CHECKED = 10, 4, 5  # positions in a url row
# A revisit that brought no new content — a 304, or no answer at all (the error is
# recorded) — leaves the URL's page, status and validators as they were.
_KEEP_PAGE = "(excluded.status = 304 OR excluded.status IS NULL) AND url.page_id IS NOT NULL"


def clean_text(value: str | None) -> str | None:
    """Text any SQL engine accepts: NUL bytes dropped, lone surrogates replaced."""
    if value is None:
        return None
    if not isinstance(value, str):
        value = str(value)
    if "\x00" in value:
        value = value.replace("\x00", "")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        value = value.encode("utf-8", "replace").decode("utf-8")
    return value


def url_md5(url: str) -> str:
    """The key of a URL in the store: MD5 hex of its cleaned text in UTF-8.

    B-tree keys are bounded (PostgreSQL: about 2700 bytes) and URLs are not."""
    return md5_hex(clean_text(url).encode("utf-8"))


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
    """What one batch did: counts for stats, and the URLs now settled.

    ``urls`` holds every record's URL, the rejected ones too: the frontier may forget
    them all (retrying a record the store refuses would fail again, forever)."""

    urls: list[str] = field(default_factory=list)
    pages_new: int = 0
    pages_seen: int = 0
    links_new: int = 0
    rejected: list[str] = field(default_factory=list)


@dataclass
class _Rows:
    """One record as table rows: texts cleaned, keys computed, types checked."""

    url: str
    page: tuple | None  # a page row (md5 first) when the record is a 2xx with a digest
    url_row: list[Any]  # URL_COLUMNS; page_id (index 3) holds the md5 until resolved
    outlinks: list[tuple[str, str, str, str, str]]  # (crawl, source_md5, target_md5, source, target)


CRAWLS_SQL = "SELECT crawl, COUNT(*) FROM url GROUP BY crawl ORDER BY crawl"
# whether a URL is in a crawl's link graph: parameters (crawl, key, crawl, key)
KNOWS_SQL = ("SELECT 1 FROM url WHERE crawl = ? AND url_md5 = ?"
             " UNION ALL SELECT 1 FROM outlink WHERE crawl = ? AND target_md5 = ?")


class Store(ABC):
    """A Page/URL/Link store. Methods block: callers run them off the reactor thread."""

    url: str

    @abstractmethod
    def write(self, records: Sequence[dict[str, Any]]) -> WriteResult:
        """Write one batch; idempotent; returns when committed. Records the database
        refuses are skipped and listed in ``rejected``; any other failure raises."""

    @abstractmethod
    def iter_urls(self, crawl: str) -> Iterator[dict[str, Any]]:
        """Every URL row of a crawl joined with its page, as item-like dicts, in fetch order."""

    @abstractmethod
    def iter_due(self, crawl: str, now: str) -> Iterator[dict[str, Any]]:
        """URLs of a crawl due for a revisit by ``now`` (``spitag.recrawl``)."""

    @abstractmethod
    def page_body(self, page_id: int) -> bytes | None:
        """The stored content of a page (decompressed), or None."""

    @abstractmethod
    def links(self, crawl: str, url: str, depth: int, reverse: bool = False) -> list[tuple[str, str, int]]:
        """Edges of the URL graph (``outlink``, unfetched targets included) within
        ``depth`` hops of ``url``: ``(source, target, distance)``, distance 1 for the
        links of ``url`` itself; with ``reverse``, the links leading to ``url`` (distance 1
        for the pages linking to it). Each edge once, at its shortest distance, sorted."""

    @abstractmethod
    def query(self, sql: str, params: Sequence[Any] = ()) -> list[tuple]:
        """Run one statement written with ``?`` placeholders (committed); its rows."""

    def crawls(self) -> list[tuple[str, int]]:
        """Every crawl of the store with its number of URLs (for a helpful error)."""
        return [(str(c), int(n)) for c, n in self.query(CRAWLS_SQL)]

    def knows(self, crawl: str, url: str) -> bool:
        """Whether ``url`` is in the crawl's link graph: a URL it requested, or the
        target of a link it saw."""
        key = url_md5(url)
        return bool(self.query(KNOWS_SQL, (crawl, key, crawl, key)))

    def failed(self, crawl: str, urls: Sequence[str]) -> list[str]:
        """Those of ``urls`` whose last answer in the crawl was none (a network error, a
        host that did not resolve) or a server's error (5xx, 429)."""
        found: list[str] = []
        for chunk in _chunks(list(urls)):
            found += [str(u) for (u,) in self.query(
                f"SELECT url FROM url WHERE crawl = ? AND url_md5 IN ({_marks(chunk)})"
                " AND (status IS NULL OR status >= 500 OR status = 429)",
                (crawl, *(url_md5(u) for u in chunk)),
            )]
        return found

    @abstractmethod
    def forget(self, crawl: str) -> tuple[int, int]:
        """Delete the crawl's URL rows and the links it saw, and the pages no other
        crawl's URL holds (with their page links); ``(URLs, pages)`` deleted."""

    @abstractmethod
    def close(self) -> None:
        """Release the connection."""


class SQLStore(Store):
    """The shared SQL of both backends; subclasses supply the connection and dialect."""

    placeholder = "?"
    blob_type = "BLOB"
    serial_type = "INTEGER PRIMARY KEY AUTOINCREMENT"
    ts_type = "TEXT"
    key_type = "CHAR(32)"
    name_type = "VARCHAR(255)"
    key_cast = "CAST(? AS CHAR(32))"  # a key parameter, typed as the key columns
    # a URL's links, in page order, as one text (URLs hold no newline): SQLite's
    # group_concat keeps the order of the subquery it reads
    links_sql = (
        "(SELECT group_concat(target, char(10)) FROM (SELECT o.target FROM outlink o"
        " WHERE o.crawl = u.crawl AND o.source_md5 = u.url_md5 ORDER BY o.position, o.target))"
    )
    page_rows_per_statement = 50  # page rows carry bodies: keep statements small
    rows_per_statement = 500
    in_chunk = _CHUNK  # values per IN (…) list

    def __init__(self, url: str, body_format: str = "plain") -> None:
        if body_format not in BODY_FORMATS:
            raise ValueError(f"SPITAG_STORE_BODY must be one of {', '.join(BODY_FORMATS)}")
        self.url = url
        self.body_format = body_format
        self.conn: Any = None
        self.conn = self._connect()
        try:
            self._create_schema()
        except BaseException:
            self.close()
            raise

    # -- dialect hooks -------------------------------------------------------------
    @abstractmethod
    def _connect(self) -> Any: ...

    def _sql(self, sql: str) -> str:
        return sql if self.placeholder == "?" else sql.replace("?", self.placeholder)

    def _binary(self, data: bytes | None) -> Any:
        return data

    def _insert_many(self, cur: Any, head: str, rows: list[tuple], tail: str = "", per: int = 0) -> int:
        """``head VALUES (…) tail`` for every row, in order; the number of rows written."""
        marks = ", ".join("?" * len(rows[0]))
        cur.executemany(self._sql(f"{head} VALUES ({marks}) {tail}"), rows)
        return max(cur.rowcount, 0)

    def _is_data_error(self, exc: BaseException) -> bool:
        """The database refused a value (not the connection): one record is to blame."""
        return isinstance(exc, (ValueError, TypeError, OverflowError))

    def _is_broken(self, exc: BaseException) -> bool:
        """The connection is unusable after ``exc``: open a new one next time."""
        return False

    def _table_exists(self, cur: Any, name: str) -> bool:
        raise NotImplementedError

    def _lock_schema(self, cur: Any) -> None:
        """Serialize first-time schema creation between processes."""

    def _tune_tables(self, cur: Any) -> None:
        """Engine-specific settings of the new tables (none on SQLite)."""

    def _read_cursor(self) -> Any:
        """A cursor for a long read (PostgreSQL streams it from the server)."""
        return self._cursor()

    # -- connection ----------------------------------------------------------------
    def _cursor(self) -> Any:
        if self.conn is None:
            self.conn = self._connect()
        return self.conn.cursor()

    def _rollback(self) -> None:
        if self.conn is None:
            return
        try:
            self.conn.rollback()
        except Exception:  # a broken connection: the real error is the one being raised
            logger.debug("rollback on %s failed", redact(self.url), exc_info=True)

    def _discard_connection(self) -> None:
        conn, self.conn = self.conn, None
        if conn is not None:
            try:
                conn.close()
            except Exception:
                logger.debug("closing %s failed", redact(self.url), exc_info=True)

    def _transaction(self, work: Callable[[Any], _T]) -> _T:
        """Run ``work(cursor)`` and commit; roll back (and drop a broken connection) on error."""
        cur = self._cursor()
        try:
            out = work(cur)
            self.conn.commit()
            return out
        except BaseException as exc:
            self._rollback()
            if self._is_broken(exc):
                self._discard_connection()
            raise

    # -- schema --------------------------------------------------------------------
    def _stored_version(self, cur: Any) -> str | None:
        if not self._table_exists(cur, "spitag_meta"):
            return None
        cur.execute("SELECT value FROM spitag_meta WHERE key = 'schema_version'")
        row = cur.fetchone()
        return None if row is None else str(row[0])

    def _create_schema(self) -> None:
        """Tables made on first use (under a lock: two workers may start at once);
        a store of another schema version is refused, never altered."""
        version = self._transaction(self._stored_version)
        if version is None:
            version = self._transaction(self._create_tables)
        if version != str(SCHEMA_VERSION) and version.isdigit() and int(version) in MIGRATIONS:
            version = self._transaction(self._migrate)
        if version != str(SCHEMA_VERSION):
            raise BadInputError(
                f"store {redact(self.url)} has schema version {version}, this SpiTag uses "
                f"{SCHEMA_VERSION}: use a new store or migrate it"
            )

    def _create_tables(self, cur: Any) -> str:
        self._lock_schema(cur)
        version = self._stored_version(cur)  # another process may have made them meanwhile
        if version is not None:
            return version
        for ddl in TABLES:
            cur.execute(self._ddl(ddl))
        self._tune_tables(cur)
        cur.execute(
            self._sql(
                "INSERT INTO spitag_meta (key, value) VALUES ('schema_version', ?)"
                " ON CONFLICT (key) DO NOTHING"
            ),
            (str(SCHEMA_VERSION),),
        )
        return str(SCHEMA_VERSION)

    def _ddl(self, statement: str) -> str:
        """A schema statement with this backend's types in its ``{…}`` fields."""
        return statement.format(blob=self.blob_type, serial=self.serial_type, ts=self.ts_type,
                                key=self.key_type, name=self.name_type)

    def _migrate(self, cur: Any) -> str:
        """Bring an older schema up to date, step by step (``schema.MIGRATIONS``)."""
        self._lock_schema(cur)
        version = self._stored_version(cur) or ""
        start = version
        while version.isdigit() and int(version) in MIGRATIONS:
            for statement in MIGRATIONS[int(version)]:
                cur.execute(self._ddl(statement))
            version = str(int(version) + 1)
        if version != start:
            cur.execute(
                self._sql("UPDATE spitag_meta SET value = ? WHERE key = 'schema_version'"), (version,)
            )
            logger.info("store %s migrated from schema version %s to %s", redact(self.url), start, version)
        return version

    # -- writing -------------------------------------------------------------------
    def write(self, records: Sequence[dict[str, Any]]) -> WriteResult:
        result = WriteResult()
        if not records:
            return result
        rows: list[_Rows] = []
        for record in records:
            try:
                rows.append(self._rows(record))
            except Exception as exc:  # a malformed record: skip it, keep the others
                self._reject(_url_of(record), exc, result)
        written = self._write_isolating(rows, result)
        if written:
            result.links_new = self._transaction(lambda cur: self._write_links(cur, written))
        result.urls = [u for u in map(_url_of, records) if u is not None]
        return result

    def _reject(self, url: str | None, exc: BaseException, result: WriteResult) -> None:
        result.rejected.append(url if url is not None else "")
        logger.error(
            "store %s: record %s rejected, skipped: %s: %s",
            redact(self.url), (url or "?")[:300], type(exc).__name__, " ".join(str(exc).split())[:500],
        )

    def _write_isolating(self, rows: list[_Rows], result: WriteResult) -> list[_Rows]:
        """Write ``rows`` in one transaction; on a data error, halves, recursively, until
        the culprit stands alone (about 2·log2(n) extra transactions per bad record)."""
        if not rows:
            return []
        try:
            pages_new, pages_seen = self._transaction(lambda cur: self._write_rows(cur, rows))
        except Exception as exc:
            if not self._is_data_error(exc):
                raise
            if len(rows) == 1:
                self._reject(rows[0].url, exc, result)
                return []
            logger.warning(
                "store %s: a batch of %d records hit a data error (%s); splitting it",
                redact(self.url), len(rows), " ".join(str(exc).split())[:200],
            )
            middle = len(rows) // 2
            return self._write_isolating(rows[:middle], result) + self._write_isolating(rows[middle:], result)
        result.pages_new += pages_new
        result.pages_seen += pages_seen
        return rows

    def _rows(self, r: dict[str, Any]) -> _Rows:
        crawl = clean_text(r["crawl"])
        url = clean_text(r["url"])
        if not crawl or not url:
            raise ValueError("a record needs a crawl and a url")
        status = None if r.get("status") is None else int(r["status"])
        md5 = clean_text(r.get("md5")) or None
        page = None
        if md5 and is_page(r):
            semantic = r.get("semantic") or {}
            page = (
                md5,
                clean_text(r["md5dia"]),
                clean_text(r.get("content_type")),
                self._binary(encode_body(r.get("body"), self.body_format)),
                self.body_format,
                clean_text(r.get("encoding")),
                int(r.get("size") or 0),
                bool(r.get("truncated")),
                clean_text(r.get("title")),
                json.dumps(semantic, sort_keys=True, default=str),
                int(semantic.get("total", 0)),
                float(r.get("score") or 0.0),
                ",".join(r["incomplete"]) if r.get("incomplete") else None,
                clean_text(json.dumps(r["data"], ensure_ascii=False, default=str)) if r.get("data") else None,
                clean_text(r["fetched_at"]),
            )
        checked = clean_text(r["fetched_at"])
        url_row = [
            crawl,
            url_md5(url),
            url,
            md5 if page is not None else None,  # replaced by the page id
            checked if status is not None else None,
            checked,
            clean_text(r.get("expires")),
            status,
            clean_text(r.get("error")),
            clean_text(r.get("content_type")),
            int(r.get("depth") or 0),
            None if r.get("priority") is None else float(r["priority"]),
            clean_text(json.dumps(r["reason"], default=str)) if r.get("reason") else None,
            clean_text(r.get("redirect_to")),
            clean_text(r.get("etag")),
            clean_text(r.get("last_modified")),
            None if r.get("revisit_interval") is None else float(r["revisit_interval"]),
            clean_text(r.get("canonical")),
            ",".join(r["robots"]) if r.get("robots") else None,
            None if r.get("changed") is None else bool(r["changed"]),
            None if r.get("outlinks") is None else int(r["outlinks"]),
        ]
        source_md5 = url_row[1]
        outlinks = []
        for position, target in enumerate(r.get("links") or ()):
            target = clean_text(target)
            if target:
                outlinks.append((crawl, source_md5, url_md5(target), url, target, position))
        return _Rows(str(r["url"]), page, url_row, outlinks)

    def _write_rows(self, cur: Any, rows: list[_Rows]) -> tuple[int, int]:
        """Pages, then URLs, then outlinks, each sorted by key (the lock order)."""
        pages: dict[str, tuple] = {}
        for row in rows:
            if row.page is not None:
                pages.setdefault(row.page[0], row.page)
        # Pages already stored are not sent again (their bodies are the bulk of a batch);
        # ON CONFLICT covers those another writer stores meanwhile.
        page_ids = self._ids_by_md5(cur, sorted(pages)) if pages else {}
        new = sorted(md5 for md5 in pages if md5 not in page_ids)
        pages_new = 0
        if new:
            pages_new = self._insert_many(
                cur, f"INSERT INTO page ({PAGE_COLUMNS})", [pages[md5] for md5 in new],
                "ON CONFLICT (md5) DO NOTHING", self.page_rows_per_statement,
            )
            page_ids.update(self._ids_by_md5(cur, new))
        urls: dict[tuple[str, str], list[Any]] = {}
        for row in rows:
            url_row = list(row.url_row)
            url_row[3] = page_ids.get(url_row[3]) if url_row[3] else None
            key = (url_row[0], url_row[1])
            earlier = urls.get(key)
            if earlier is not None:  # one URL twice in a batch: as the upsert would merge them
                url_row[_URL_DEPTH] = min(url_row[_URL_DEPTH], earlier[_URL_DEPTH])
                url_row[_URL_FETCHED] = earlier[_URL_FETCHED] or url_row[_URL_FETCHED]
            urls[key] = url_row
        self._insert_many(
            cur, f"INSERT INTO url ({URL_COLUMNS})", [tuple(urls[k]) for k in sorted(urls)],
            "ON CONFLICT (crawl, url_md5) DO UPDATE SET"
            " url = excluded.url,"
            f" page_id = CASE WHEN {_KEEP_PAGE} THEN url.page_id ELSE excluded.page_id END,"
            " fetched = COALESCE(url.fetched, excluded.fetched),"
            " checked = excluded.checked, expires = excluded.expires,"
            f" status = CASE WHEN {_KEEP_PAGE} THEN url.status ELSE excluded.status END,"
            " error = excluded.error,"
            f" content_type = CASE WHEN {_KEEP_PAGE} THEN url.content_type ELSE excluded.content_type END,"
            " depth = CASE WHEN excluded.depth < url.depth THEN excluded.depth ELSE url.depth END,"
            " priority = excluded.priority, reason = excluded.reason,"
            f" redirect_to = CASE WHEN {_KEEP_PAGE} THEN url.redirect_to ELSE excluded.redirect_to END,"
            f" etag = CASE WHEN {_KEEP_PAGE} THEN COALESCE(excluded.etag, url.etag) ELSE excluded.etag END,"
            f" last_modified = CASE WHEN {_KEEP_PAGE} THEN COALESCE(excluded.last_modified, url.last_modified)"
            " ELSE excluded.last_modified END,"
            " revisit_interval = COALESCE(excluded.revisit_interval, url.revisit_interval),"
            f" canonical = CASE WHEN {_KEEP_PAGE} THEN url.canonical ELSE excluded.canonical END,"
            f" robots = CASE WHEN {_KEEP_PAGE} THEN url.robots ELSE excluded.robots END,"
            " changed = excluded.changed,"
            f" outlinks = CASE WHEN {_KEEP_PAGE} THEN url.outlinks ELSE excluded.outlinks END",
            self.rows_per_statement,
        )
        editions = {(u[0], u[1], u[3]): u[_URL_CHECKED] for u in urls.values() if u[3] is not None}
        if editions:  # which page this URL served, and when
            self._insert_many(
                cur, "INSERT INTO edition (crawl, url_md5, page_id, first_seen, last_seen)",
                [(c, k, page, seen, seen) for (c, k, page), seen in sorted(editions.items())],
                "ON CONFLICT (crawl, url_md5, page_id) DO UPDATE SET last_seen = CASE"
                " WHEN excluded.last_seen > edition.last_seen THEN excluded.last_seen ELSE edition.last_seen END",
                self.rows_per_statement,
            )
        outlinks = {o[:3]: o for row in rows for o in row.outlinks}
        if outlinks:  # a page fetched again mostly links where it did: send only what's new
            sources: dict[str, set[str]] = {}
            for crawl, source, _ in outlinks:
                sources.setdefault(crawl, set()).add(source)
            for crawl, md5s in sources.items():
                for source, target in self._select_in(
                    cur, "SELECT source_md5, target_md5 FROM outlink WHERE crawl = ? AND source_md5 IN ({})",
                    [crawl], sorted(md5s),
                ):
                    outlinks.pop((crawl, source, target), None)
        if outlinks:
            self._insert_many(
                cur, "INSERT INTO outlink (crawl, source_md5, target_md5, source, target, position)",
                [outlinks[k] for k in sorted(outlinks)],
                "ON CONFLICT (crawl, source_md5, target_md5) DO NOTHING", self.rows_per_statement,
            )
        return pages_new, len(pages) - pages_new

    def _ids_by_md5(self, cur: Any, md5s: list[str]) -> dict[str, int]:
        return dict(self._select_in(cur, "SELECT md5, id FROM page WHERE md5 IN ({})", [], md5s))

    def _write_links(self, cur: Any, rows: list[_Rows]) -> int:
        """Link rows between pages, for these URLs as sources (their outlinks to pages
        already stored) and as targets (stored pages' outlinks to them).

        Plain key lookups rather than one join: their plans don't hang on the
        planner's statistics, which lag behind a growing crawl."""
        keys: dict[str, set[str]] = {}
        for row in rows:
            keys.setdefault(row.url_row[0], set()).add(row.url_row[1])
        pairs: set[tuple[int, int]] = set()
        for crawl, md5s in keys.items():
            edges: set[tuple[str, str]] = set()
            for column in ("source_md5", "target_md5"):
                edges.update(self._select_in(
                    cur, f"SELECT source_md5, target_md5 FROM outlink WHERE crawl = ? AND {column} IN ({{}})",
                    [crawl], sorted(md5s),
                ))
            if not edges:
                continue
            page_of = dict(self._select_in(
                cur, "SELECT url_md5, page_id FROM url WHERE crawl = ? AND page_id IS NOT NULL"
                " AND url_md5 IN ({})", [crawl], sorted({m for edge in edges for m in edge}),
            ))
            pairs.update(
                (int(page_of[s]), int(page_of[t])) for s, t in edges if s in page_of and t in page_of
            )
        if not pairs:
            return 0
        return self._insert_many(
            cur, "INSERT INTO link (source, target)", sorted(pairs),
            "ON CONFLICT (source, target) DO NOTHING", self.rows_per_statement,
        )

    def _select_in(self, cur: Any, sql: str, params: list[Any], values: list[Any]) -> list[tuple]:
        """Rows of ``sql`` whose ``IN ({})`` takes ``values``, a chunk at a time."""
        found: list[tuple] = []
        for chunk in _chunks(values, self.in_chunk):
            cur.execute(self._sql(sql.format(_marks(chunk))), [*params, *chunk])
            found.extend(cur.fetchall())
        return found

    # -- reading -------------------------------------------------------------------
    def iter_urls(self, crawl: str) -> Iterator[dict[str, Any]]:
        """The crawl's items as its ``-O`` file had them (``PageItem``'s fields, in its
        order): a row written by an older schema lacks what it did not keep."""
        names = (
            "url status error depth priority reason fetched_at content_type encoding size"
            " truncated md5 md5dia title semantic incomplete score data outlinks links redirect_to canonical"
            " robots expires revisit_interval changed etag last_modified"
        ).split()
        sql = (
            "SELECT u.url, u.status, u.error, u.depth, u.priority, u.reason, u.checked,"
            " u.content_type, p.encoding, p.size, p.truncated, p.md5, p.md5dia, p.title,"
            " p.semantic, p.incomplete, p.score, p.structured,"
            " COALESCE(u.outlinks, (SELECT COUNT(*) FROM outlink o WHERE o.crawl = u.crawl AND o.source_md5 = u.url_md5)),"
            f" {self.links_sql}, u.redirect_to, u.canonical, u.robots, u.expires, u.revisit_interval, u.changed,"
            " u.etag, u.last_modified"
            " FROM url u LEFT JOIN page p ON p.id = u.page_id"
            " WHERE u.crawl = ? ORDER BY u.checked, u.url_md5"
        )
        for row in self._stream(sql, (crawl,), names):
            item = {"crawl": crawl, **row}
            for key in ("semantic", "data"):
                if item[key]:
                    item[key] = json.loads(item[key])
            for key in ("truncated", "changed"):
                if item[key] is not None:
                    item[key] = bool(item[key])
            item["links"] = item["links"].split("\n") if item["links"] else []
            item["robots"] = item["robots"].split(",") if item["robots"] else None
            item["incomplete"] = item["incomplete"].split(",") if item["incomplete"] else None
            yield item

    def iter_due(self, crawl: str, now: str) -> Iterator[dict[str, Any]]:
        """URLs of ``crawl`` whose ``expires`` has come by ``now`` (ISO 8601 UTC), with
        what their revisit needs; a row without ``expires`` (an older schema's) is due."""
        names = "url depth priority reason status expires etag last_modified revisit_interval md5".split()
        sql = (
            "SELECT u.url, u.depth, u.priority, u.reason, u.status, u.expires, u.etag,"
            " u.last_modified, u.revisit_interval, p.md5"
            " FROM url u LEFT JOIN page p ON p.id = u.page_id"
            " WHERE u.crawl = ? AND (u.expires IS NULL OR u.expires <= ?)"
        )
        yield from self._stream(sql, (crawl, now), names)

    def _stream(self, sql: str, params: Sequence[Any], names: list[str]) -> Iterator[dict[str, Any]]:
        """Rows of a long read as dicts (``reason`` decoded), one read transaction."""
        cur = self._read_cursor()
        try:
            cur.execute(self._sql(sql), params)
            for row in cur:
                item = dict(zip(names, row))
                if item.get("reason"):
                    item["reason"] = json.loads(item["reason"])
                yield item
        finally:
            try:
                cur.close()
            except Exception:
                logger.debug("closing a cursor of %s failed", redact(self.url), exc_info=True)
            self._rollback()  # end the read transaction

    def page_body(self, page_id: int) -> bytes | None:
        rows = self.query("SELECT data, data_format FROM page WHERE id = ?", (page_id,))
        return decode_body(rows[0][0], rows[0][1]) if rows else None

    def links(self, crawl: str, url: str, depth: int, reverse: bool = False) -> list[tuple[str, str, int]]:
        depth = int(depth)
        if depth < 0:
            raise ValueError(f"depth must be 0 or more, not {depth}")
        if depth == 0:
            return []
        rows = self.query(link_walk_sql(self.key_cast, reverse), (url_md5(url), crawl, depth, crawl))
        return sorted(((s, t, int(d)) for s, t, d in rows), key=lambda e: (e[2], e[0], e[1]))

    def forget(self, crawl: str) -> tuple[int, int]:
        def run(cur: Any) -> tuple[int, int]:
            # the crawl's pages, now or in an earlier edition, that no other crawl has
            cur.execute(self._sql(
                "SELECT u.page_id FROM url u WHERE u.crawl = ? AND u.page_id IS NOT NULL"
                " UNION SELECT e.page_id FROM edition e WHERE e.crawl = ?"), (crawl, crawl))
            mine = sorted(int(row[0]) for row in cur.fetchall())
            shared: set[int] = set()
            for chunk in _chunks(mine, self.in_chunk):
                marks = _marks(chunk)
                cur.execute(self._sql(
                    f"SELECT page_id FROM url WHERE crawl <> ? AND page_id IN ({marks})"
                    f" UNION SELECT page_id FROM edition WHERE crawl <> ? AND page_id IN ({marks})"),
                    (crawl, *chunk, crawl, *chunk))
                shared.update(int(row[0]) for row in cur.fetchall())
            alone = [page for page in mine if page not in shared]
            for chunk in _chunks(alone, self.in_chunk):
                marks = _marks(chunk)
                cur.execute(self._sql(f"DELETE FROM link WHERE source IN ({marks}) OR target IN ({marks})"),
                            (*chunk, *chunk))
            cur.execute(self._sql("DELETE FROM outlink WHERE crawl = ?"), (crawl,))
            cur.execute(self._sql("DELETE FROM edition WHERE crawl = ?"), (crawl,))
            cur.execute(self._sql("DELETE FROM url WHERE crawl = ?"), (crawl,))
            urls = cur.rowcount
            for chunk in _chunks(alone, self.in_chunk):
                cur.execute(self._sql(f"DELETE FROM page WHERE id IN ({_marks(chunk)})"), tuple(chunk))
            return urls, len(alone)

        return self._transaction(run)

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[tuple]:
        def run(cur: Any) -> list[tuple]:
            cur.execute(self._sql(sql), tuple(params))
            return cur.fetchall() if cur.description is not None else []

        return self._transaction(run)

    def close(self) -> None:
        self._discard_connection()


def link_walk_sql(key_cast: str, reverse: bool = False) -> str:
    """SQL of the links within a number of hops of one URL (``reverse``: into it):
    parameters (the URL's key, crawl, hops, crawl), rows (source, target, distance),
    nearest first, then by source and target.

    walk(node, dist): the URLs reached in dist hops, dist < hops. UNION drops repeated
    (node, dist) pairs, so cycles end at the bound. Every edge that leaves a reached node
    is then an answer, at distance dist + 1 (the shortest). CROSS JOIN: the walk first,
    then each reached URL's links by index (SQLite keeps the order written; left to
    itself it read every link of the crawl instead)."""
    near, far = ("target_md5", "source_md5") if reverse else ("source_md5", "target_md5")
    return (
        "WITH RECURSIVE walk (node, dist) AS ("
        f" SELECT {key_cast}, 0"
        " UNION"
        f" SELECT o.{far}, w.dist + 1 FROM walk w CROSS JOIN outlink o WHERE o.crawl = ? AND o.{near} = w.node"
        " AND w.dist + 1 < ?"
        ")"
        " SELECT o.source, o.target, MIN(w.dist) + 1 AS d FROM walk w"
        f" CROSS JOIN outlink o WHERE o.crawl = ? AND o.{near} = w.node"
        " GROUP BY o.crawl, o.source_md5, o.target_md5, o.source, o.target ORDER BY d, o.source, o.target"
    )


def _url_of(record: Any) -> str | None:
    try:
        url = record.get("url")
    except AttributeError:
        return None
    return None if url is None else str(url)


def _chunks(values: list[Any], size: int = _CHUNK) -> Iterable[list[Any]]:
    for start in range(0, len(values), size):
        yield values[start : start + size]


def _marks(values: list[Any]) -> str:
    return ", ".join("?" * len(values))
