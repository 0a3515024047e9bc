"""The store's tables: RAINBOW's Page / URL / Link, plus what a crawl needs.

* ``page``  — one row per distinct content (``md5`` unique in the store): ``md5dia``,
  ``type``, ``data`` (the content decoded to UTF-8, or raw bytes for binary types;
  zlib-compressed when ``data_format`` = ``zlib``, NULL when ``none``), ``modified``,
  plus the original ``encoding``, ``size``, ``truncated``, ``title``, the semantic
  profile (``semantic`` JSON counts, ``semantic_total``, ``score``; ``incomplete``, the
  syntaxes the extraction budget or memory bound left out, comma-separated, NULL when
  none) and the extracted ``structured`` data (JSON).
* ``url``   — one row per requested URL and crawl: ``page_id`` (many URLs may serve one
  page), ``fetched`` (first download), ``checked`` (last check), ``expires`` (when it
  is due again), ``status``, plus ``error``, ``depth``, ``priority``, ``reason``,
  ``redirect_to``, and what a recrawl needs (``spitag.recrawl``): ``etag`` and
  ``last_modified`` (the validators of the last answer) and ``revisit_interval``
  (seconds, adaptive).
  Its key is ``(crawl, url_md5)``, ``url_md5`` = MD5 hex of the URL's UTF-8 bytes
  (``spitag.store.base.url_md5``): a B-tree entry must fit in a third of a page
  (PostgreSQL: ~2700 bytes), and a URL may be 10,000 characters long.
* ``link``  — ``(source, target)`` page ids: the link graph between stored pages.
* ``outlink`` — every link seen, URL to URL, per crawl: links whose target is not a page
  yet wait here and become ``link`` rows when the target is stored. Keyed by
  ``(crawl, source_md5, target_md5)`` for the same reason; the graph queries walk it.
* ``edition`` — which pages a URL served and when: ``(crawl, url_md5, page_id)`` with
  ``first_seen`` and ``last_seen``, a row per distinct content a URL answered with
  (a recrawl that finds new content adds one; the same content moves ``last_seen``).
* ``spitag_meta`` — ``schema_version``.

The same DDL serves SQLite and PostgreSQL; ``{blob}``/``{serial}``/``{ts}`` are filled
per dialect, and so are ``{key}`` (an MD5 hex) and ``{name}`` (a crawl's name): on
PostgreSQL they compare bytewise (``COLLATE "C"``), not by the database's locale —
keys are compared on every index descent, and their order means nothing. Texts that come from the web (content types, encodings) are TEXT: a
VARCHAR limit would reject on PostgreSQL what SQLite accepts.

Version 2: URL keys by MD5 (``url_md5``, ``source_md5``, ``target_md5``), TEXT types.
Version 3: the recrawl columns of ``url``. Version 4: what a crawl's item says of its
URL besides (``canonical``, ``robots``, ``changed``, ``outlinks``) and each outlink's
``position`` on its page, so that ``scrapy export`` writes the crawl's own fields.
Version 5: ``page.incomplete``. Version 6: ``edition``, which pages a URL
served and when, and ``outlink_into`` (links into a URL with their sources, replacing
``outlink_target``) (a version 5 store gets one row per URL with a page, seen from its
first fetch to its last check). An older store is migrated in place (``MIGRATIONS``:
columns and tables added, nothing rewritten; statements formatted with the backend's
types as ``TABLES`` are).
"""

from __future__ import annotations

SCHEMA_VERSION = 6

# which pages a URL served and when: one row per (URL, page), first and last seen
EDITION = """CREATE TABLE IF NOT EXISTS edition (
        crawl {name} NOT NULL,
        url_md5 {key} NOT NULL,
        page_id BIGINT NOT NULL REFERENCES page (id),
        first_seen {ts} NOT NULL,
        last_seen {ts} NOT NULL,
        PRIMARY KEY (crawl, url_md5, page_id)
    )"""

TABLES = [
    """CREATE TABLE IF NOT EXISTS spitag_meta (
        key VARCHAR(64) PRIMARY KEY,
        value TEXT NOT NULL
    )""",
    """CREATE TABLE IF NOT EXISTS page (
        id {serial},
        md5 {key} NOT NULL UNIQUE,
        md5dia {key} NOT NULL,
        type TEXT,
        data {blob},
        data_format VARCHAR(8) NOT NULL,
        encoding TEXT,
        size BIGINT NOT NULL,
        truncated BOOLEAN NOT NULL,
        title TEXT,
        semantic TEXT NOT NULL,
        semantic_total INTEGER NOT NULL,
        score DOUBLE PRECISION NOT NULL,
        incomplete TEXT,
        structured TEXT,
        modified {ts} NOT NULL
    )""",
    "CREATE INDEX IF NOT EXISTS page_md5dia ON page (md5dia)",
    """CREATE TABLE IF NOT EXISTS url (
        crawl {name} NOT NULL,
        url_md5 {key} NOT NULL,
        url TEXT NOT NULL,
        page_id BIGINT REFERENCES page (id),
        fetched {ts},
        checked {ts} NOT NULL,
        expires {ts},
        status INTEGER,
        error TEXT,
        content_type TEXT,
        depth INTEGER NOT NULL,
        priority DOUBLE PRECISION,
        reason TEXT,
        redirect_to TEXT,
        etag TEXT,
        last_modified TEXT,
        revisit_interval DOUBLE PRECISION,
        canonical TEXT,
        robots TEXT,
        changed BOOLEAN,
        outlinks INTEGER,
        PRIMARY KEY (crawl, url_md5)
    )""",
    "CREATE INDEX IF NOT EXISTS url_page ON url (page_id)",
    "CREATE INDEX IF NOT EXISTS url_expires ON url (crawl, expires)",
    """CREATE TABLE IF NOT EXISTS link (
        source BIGINT NOT NULL REFERENCES page (id),
        target BIGINT NOT NULL REFERENCES page (id),
        PRIMARY KEY (source, target)
    )""",
    "CREATE INDEX IF NOT EXISTS link_target ON link (target)",
    """CREATE TABLE IF NOT EXISTS outlink (
        crawl {name} NOT NULL,
        source_md5 {key} NOT NULL,
        target_md5 {key} NOT NULL,
        source TEXT NOT NULL,
        target TEXT NOT NULL,
        position INTEGER,
        PRIMARY KEY (crawl, source_md5, target_md5)
    )""",
    # covering for a walk backwards (links into a URL): their sources without the table
    "CREATE INDEX IF NOT EXISTS outlink_into ON outlink (crawl, target_md5, source_md5)",
    EDITION,
]

# From version N to N + 1: statements run in one transaction, under the schema lock.
MIGRATIONS = {
    2: [
        "ALTER TABLE url ADD COLUMN etag TEXT",
        "ALTER TABLE url ADD COLUMN last_modified TEXT",
        "ALTER TABLE url ADD COLUMN revisit_interval DOUBLE PRECISION",
        "CREATE INDEX IF NOT EXISTS url_expires ON url (crawl, expires)",
    ],
    3: [
        "ALTER TABLE url ADD COLUMN canonical TEXT",
        "ALTER TABLE url ADD COLUMN robots TEXT",
        "ALTER TABLE url ADD COLUMN changed BOOLEAN",
        "ALTER TABLE url ADD COLUMN outlinks INTEGER",
        "ALTER TABLE outlink ADD COLUMN position INTEGER",
    ],
    4: ["ALTER TABLE page ADD COLUMN incomplete TEXT"],
    5: [
        EDITION,
        "DROP INDEX IF EXISTS outlink_target",
        "CREATE INDEX IF NOT EXISTS outlink_into ON outlink (crawl, target_md5, source_md5)",
        "INSERT INTO edition (crawl, url_md5, page_id, first_seen, last_seen)"
        " SELECT crawl, url_md5, page_id, COALESCE(fetched, checked), checked FROM url WHERE page_id IS NOT NULL",
    ],
}
