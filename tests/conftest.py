"""Shared fixtures: the real corpus (unpacked once per session) and a loopback web server."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterator

import pytest

from testbed.corpus import FLINK_ARCHIVE, PAGES_ARCHIVE, unpack
from testbed.pgserver import PgServer
from testbed.redisserver import RedisServer
from testbed.webserver import WebServer

REPO_ROOT = Path(__file__).resolve().parents[1]

# Crawls of the tests' local webs run at local speed, not with SpiTag's polite defaults
# for the real web (testbed/local_settings.py); every crawl a test starts inherits this.
os.environ["SCRAPY_SETTINGS_MODULE"] = "testbed.local_settings"


@pytest.fixture(scope="session")
def corpus_root() -> Path:
    """<repo>/../shared/corpus, or $SPITAG_CORPUS. Missing means a broken checkout: fail."""
    env = os.environ.get("SPITAG_CORPUS")
    root = Path(env) if env else REPO_ROOT.parent / "shared" / "corpus"
    missing = [name for name in (FLINK_ARCHIVE, PAGES_ARCHIVE) if not (root / name).is_file()]
    if missing:
        pytest.fail(
            f"test corpus not found: {', '.join(missing)} missing in {root} "
            "(expected shared/corpus beside the repository, or set SPITAG_CORPUS)",
            pytrace=False,
        )
    return root


@pytest.fixture(scope="session")
def flink_root(corpus_root: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The unpacked flink.apache.org site folder (has index.html)."""
    return unpack(corpus_root / FLINK_ARCHIVE, tmp_path_factory.mktemp("flink"))


@pytest.fixture(scope="session")
def real_pages_dir(corpus_root: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The unpacked pages/ folder (600 saved pages and manifest.jsonl)."""
    return unpack(corpus_root / PAGES_ARCHIVE, tmp_path_factory.mktemp("real-pages"))


@pytest.fixture
def webserver() -> Iterator[WebServer]:
    """A started WebServer with no sites yet; stopped at teardown."""
    with WebServer() as server:
        yield server


@pytest.fixture(scope="session")
def redis_server() -> Iterator[RedisServer]:
    """One real redis-server for the session (127.0.0.1, a free port, a temp folder)."""
    server = RedisServer().start()
    yield server
    server.cleanup()


@pytest.fixture
def redis_url(redis_server: RedisServer) -> str:
    """The session's Redis, emptied for this test."""
    import redis

    client = redis.Redis.from_url(redis_server.url)
    client.flushall()
    client.close()
    return redis_server.url


@pytest.fixture(scope="session")
def pg_server() -> Iterator[PgServer]:
    """One real PostgreSQL for the session (127.0.0.1, a free port, a temp folder)."""
    server = PgServer().start()
    yield server
    server.cleanup()


@pytest.fixture
def pg_url(pg_server: PgServer) -> Iterator[str]:
    """A new empty database on the session's PostgreSQL (its URL has a password);
    dropped after the test."""
    url = pg_server.create_database()
    yield url
    pg_server.drop_database(url.rsplit("/", 1)[1])
