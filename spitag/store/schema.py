"""The store's tables: RAINBOW's Page / URL / Link, plus what a crawl needs.

* ``page``  — one row per distinct content (``md5`` unique in the store): ``md5dia``,
  ``type``, ``data`` (the content decoded to UTF-8, or raw bytes for binary types;
  zlib-compressed when ``data_format`` = ``zlib``, NULL when ``none``), ``modified``,
  plus the original ``encoding``, ``size``, ``truncated``, ``title``, the semantic
  profile (``semantic`` JSON counts, ``semantic_total``, ``score``) and the extracted
  ``structured`` data (JSON).
* ``url``   — one row per requested URL and crawl: ``page_id`` (many URLs may serve one
  page), ``fetched`` (first download), ``checked`` (last check), ``expires``,
  ``status``, plus ``error``, ``depth``, ``priority``, ``reason``, ``redirect_to``.
* ``link``  — ``(source, target)`` page ids: the link graph between stored pages.
* ``outlink`` — every link seen, URL to URL, per crawl: links whose target is not a page
  yet wait here and become ``link`` rows when the target is stored.
* ``spitag_meta`` — ``schema_version``.

The same DDL serves SQLite and PostgreSQL; ``{blob}``/``{serial}``/``{ts}`` are filled
per dialect.
"""

from __future__ import annotations

SCHEMA_VERSION = 1

TABLES = [
    """CREATE TABLE IF NOT EXISTS spitag_meta (
        key VARCHAR(64) PRIMARY KEY,
        value TEXT NOT NULL
    )""",
    """CREATE TABLE IF NOT EXISTS page (
        id {serial},
        md5 CHAR(32) NOT NULL UNIQUE,
        md5dia CHAR(32) NOT NULL,
        type VARCHAR(255),
        data {blob},
        data_format VARCHAR(8) NOT NULL,
        encoding VARCHAR(64),
        size BIGINT NOT NULL,
        truncated BOOLEAN NOT NULL,
        title TEXT,
        semantic TEXT NOT NULL,
        semantic_total INTEGER NOT NULL,
        score DOUBLE PRECISION NOT NULL,
        structured TEXT,
        modified {ts} NOT NULL
    )""",
    "CREATE INDEX IF NOT EXISTS page_md5dia ON page (md5dia)",
    """CREATE TABLE IF NOT EXISTS url (
        crawl VARCHAR(255) NOT NULL,
        url TEXT NOT NULL,
        page_id BIGINT REFERENCES page (id),
        fetched {ts},
        checked {ts} NOT NULL,
        expires {ts},
        status INTEGER,
        error TEXT,
        content_type VARCHAR(255),
        depth INTEGER NOT NULL,
        priority DOUBLE PRECISION,
        reason TEXT,
        redirect_to TEXT,
        PRIMARY KEY (crawl, url)
    )""",
    "CREATE INDEX IF NOT EXISTS url_page ON url (page_id)",
    """CREATE TABLE IF NOT EXISTS link (
        source BIGINT NOT NULL REFERENCES page (id),
        target BIGINT NOT NULL REFERENCES page (id),
        PRIMARY KEY (source, target)
    )""",
    "CREATE INDEX IF NOT EXISTS link_target ON link (target)",
    """CREATE TABLE IF NOT EXISTS outlink (
        crawl VARCHAR(255) NOT NULL,
        source TEXT NOT NULL,
        target TEXT NOT NULL,
        PRIMARY KEY (crawl, source, target)
    )""",
    "CREATE INDEX IF NOT EXISTS outlink_target ON outlink (crawl, target)",
]
