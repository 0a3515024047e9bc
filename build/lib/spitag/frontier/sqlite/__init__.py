"""The embedded frontier: one SQLite file (``sqlite/db.py``), the five contracts over it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from spitag.frontier import Frontier
from spitag.frontier.sqlite.db import SQLiteDB
from spitag.frontier.sqlite.gate import SQLiteGate
from spitag.frontier.sqlite.learning import SQLiteLearning
from spitag.frontier.sqlite.queue import SQLiteQueue
from spitag.frontier.sqlite.registry import SQLiteRegistry
from spitag.frontier.sqlite.robots import SQLiteRobots


def open_sqlite(url: str, path: Path, crawl: str, owner: str, **options: Any) -> Frontier:
    db = SQLiteDB(url, path, crawl, owner, **options)
    return Frontier(url, crawl, owner, SQLiteQueue(db), SQLiteGate(db), SQLiteRobots(db), SQLiteRegistry(db),
                    SQLiteLearning(db), db.close)
