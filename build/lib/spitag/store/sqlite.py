"""The embedded store: one SQLite file (WAL), safe to stop at any moment."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from spitag.errors import BackendUnavailableError
from spitag.store.base import SQLStore


class SQLiteStore(SQLStore):
    """``sqlite:///relative/path.db`` or ``sqlite:////absolute/path.db``."""

    def __init__(self, url: str, path: Path, body_format: str = "plain") -> None:
        self.path = path
        super().__init__(url, body_format)

    def _connect(self) -> Any:
        if not self.path.parent.is_dir():
            raise BackendUnavailableError(
                f"store {self.url}: folder {self.path.parent} does not exist"
            )
        try:
            conn = sqlite3.connect(self.path, timeout=30, check_same_thread=False)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute("PRAGMA foreign_keys=ON")
        except sqlite3.Error as exc:
            raise BackendUnavailableError(f"store {self.url}: cannot open {self.path}: {exc}") from None
        return conn

    def _table_exists(self, cur: Any, name: str) -> bool:
        cur.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (name,))
        return cur.fetchone() is not None

    def _lock_schema(self, cur: Any) -> None:
        cur.execute("BEGIN IMMEDIATE")  # the write lock, before reading the version again

    def _is_data_error(self, exc: BaseException) -> bool:
        # NOT NULL / foreign key (IntegrityError), a value too big (DataError), a value
        # that cannot be bound; "database is locked" and I/O errors are not the record's fault.
        if isinstance(exc, (sqlite3.IntegrityError, sqlite3.DataError)):
            return True
        if isinstance(exc, (sqlite3.InterfaceError, sqlite3.ProgrammingError)):
            return "binding parameter" in str(exc)
        return super()._is_data_error(exc)
