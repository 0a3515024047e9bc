"""The PostgreSQL store beyond the contract: faults, several writers, a restart mid-crawl.

Every test runs a real PostgreSQL (testbed/pgserver.py); those that stop or
restart it get a server of their own, so the session's server stays up for the rest.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import random
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Iterator

import psycopg2
import pytest

from spitag.digest import md5_hex
from spitag.errors import BackendUnavailableError, BadInputError
from spitag.store import open_store
from spitag.store.postgres import ping
from spitag.store.schema import SCHEMA_VERSION
from testbed.pgserver import PgServer, free_port
from testbed.sites import tree_paths, tree_site
from testbed.webserver import WebServer
from tests.test_store_contract import record

REPO = Path(__file__).resolve().parents[1]
FORK = multiprocessing.get_context("fork")


@pytest.fixture
def own_pg() -> Iterator[PgServer]:
    """A PostgreSQL of this test's own, free to stop and restart; stopped at teardown."""
    server = PgServer().start()
    try:
        yield server
    finally:
        server.cleanup()


# -- unreachable, wrong password, wrong schema -------------------------------------------


def test_ping_names_the_problem_without_the_password(pg_server: PgServer, pg_url: str) -> None:
    ping(pg_url)  # reachable, empty database: fine, and nothing written
    assert not public_tables(pg_url)
    dead = f"postgresql://spitag:hunter2@127.0.0.1:{free_port()}/db"
    with pytest.raises(BackendUnavailableError, match="PostgreSQL unreachable") as refused:
        ping(dead)
    assert "hunter2" not in str(refused.value) and "\n" not in str(refused.value)
    with pytest.raises(BackendUnavailableError, match="password authentication failed") as denied:
        ping(pg_server.url(pg_url.rsplit("/", 1)[1], password="wrong-pw"))
    assert "wrong-pw" not in str(denied.value)


def public_tables(url: str) -> list[str]:
    conn = psycopg2.connect(url)
    try:
        cur = conn.cursor()
        cur.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")
        return [t for (t,) in cur.fetchall()]
    finally:
        conn.close()


def test_other_schema_version_is_refused_by_ping_and_open(pg_url: str) -> None:
    store = open_store(pg_url)
    store.query("UPDATE spitag_meta SET value = '1' WHERE key = 'schema_version'")
    store.close()
    with pytest.raises(BadInputError, match=f"schema version 1, this SpiTag uses {SCHEMA_VERSION}"):
        ping(pg_url)
    with pytest.raises(BadInputError, match="schema version 1") as refused:
        open_store(pg_url)
    assert "pg-secret-pw" not in str(refused.value)


def test_unreachable_at_start_is_one_clear_line_and_exit_3(tmp_path: Path) -> None:
    url = f"postgresql://spitag:s3cret-pw@127.0.0.1:{free_port()}/spitag"
    run = subprocess.run(
        [sys.executable, "-m", "scrapy", "crawl", "spitag", "-a", "seeds=http://x.test/",
         "-O", str(tmp_path / "out.jsonl"), "-s", f"SPITAG_STORE={url}",
         "-s", f"SPITAG_FRONTIER=sqlite:///{tmp_path}/f.db"],
        cwd=REPO, capture_output=True, text=True, timeout=120,
    )
    assert run.returncode == 3, run.stderr[-2000:]
    errors = [line for line in run.stderr.splitlines() if line.startswith("spitag: error:")]
    assert len(errors) == 1, run.stderr[-2000:]
    assert "PostgreSQL unreachable" in errors[0] and "Traceback" not in run.stderr
    assert "s3cret-pw" not in run.stderr + run.stdout
    assert not (tmp_path / "out.jsonl").exists() and not (tmp_path / "f.db").exists()


# -- what PostgreSQL refuses and SQLite takes: isolated, counted, skipped ----------------


def test_values_postgresql_refuses_cost_only_their_record(pg_url: str) -> None:
    store = open_store(pg_url)
    try:
        batch = [record(f"http://a.example/{i}", f"<p>{i}</p>") for i in range(10)]
        batch[1] = record("http://a.example/1", "<p>1</p>", fetched_at="yesterday-ish")
        batch[4] = record("http://a.example/4", "<p>4</p>", status=2**40)  # no INTEGER holds it
        batch[7] = record("http://a.example/7", "<p>7</p>", crawl="c" * 300)  # VARCHAR(255)
        batch[8] = record("http://a.example/8", "<p>8</p>", expires="not a time either")
        result = store.write(batch)
        assert sorted(result.rejected) == [f"http://a.example/{i}" for i in (1, 4, 7, 8)]
        assert len(result.urls) == 10
        stored = {u for (u,) in store.query("SELECT url FROM url")}
        assert stored == {f"http://a.example/{i}" for i in (0, 2, 3, 5, 6, 9)}
        assert store.write(batch).rejected == result.rejected  # a replay: same verdict, no dupes
        assert store.query("SELECT COUNT(*) FROM url") == [(6,)]
    finally:
        store.close()


def test_timestamps_are_typed_and_read_back_as_written(pg_url: str) -> None:
    store = open_store(pg_url)
    try:
        store.write([
            record("http://a.example/late", "<p>l</p>", fetched_at="2026-11-30T10:00:01.250Z",
                   expires="2026-12-01T10:00:00.000Z"),
            record("http://a.example/early", "<p>e</p>", fetched_at="2026-11-30T09:59:59.999Z"),
        ])
        types = dict(store.query(
            "SELECT column_name, data_type FROM information_schema.columns WHERE table_name = 'url'"
        ))
        assert types["checked"] == "timestamp with time zone"
        assert [i["url"] for i in store.iter_urls("c1")] == ["http://a.example/early", "http://a.example/late"]
        assert store.query("SELECT checked, expires FROM url WHERE url LIKE '%late'") == [
            ("2026-11-30T10:00:01.250Z", "2026-12-01T10:00:00.000Z")
        ]
    finally:
        store.close()


# -- several processes, one database ---------------------------------------------------

POOL_URLS = 160
POOL_BODIES = 70


def pool_record(i: int, crawl: str = "shared") -> dict[str, Any]:
    """URL i always serves body i % POOL_BODIES (so many URLs share a page) and links
    to three other pool URLs."""
    targets = [f"http://w.example/{(i * 7 + k) % POOL_URLS}" for k in (1, 2, 3)]
    return record(f"http://w.example/{i}", f"<p>body {i % POOL_BODIES}</p>", crawl=crawl, links=targets)


def writer(url: str, seed: int, rounds: int, start: Any, errors: Any) -> None:
    """One worker: many overlapping batches, in an order of its own."""
    try:
        start.wait(30)
        store = open_store(url)
        rng = random.Random(seed)
        for _ in range(rounds):
            picks = rng.sample(range(POOL_URLS), 100)
            store.write([pool_record(i) for i in picks])
        store.close()
    except BaseException as exc:  # report to the parent, whatever it is
        errors.put(f"{type(exc).__name__}: {exc}")
        raise


def test_concurrent_writers_share_pages_and_never_deadlock(pg_url: str) -> None:
    open_store(pg_url).close()  # schema made beforehand: this test is about writes
    start, errors = FORK.Event(), FORK.Queue()
    procs = [FORK.Process(target=writer, args=(pg_url, seed, 60, start, errors)) for seed in (1, 2)]
    for p in procs:
        p.start()
    start.set()
    for p in procs:
        p.join(300)
    failures = [errors.get() for _ in range(errors.qsize())]
    assert [p.exitcode for p in procs] == [0, 0], failures
    store = open_store(pg_url)
    try:
        urls = {u for (u,) in store.query("SELECT url FROM url")}
        written = {int(u.rsplit("/", 1)[1]) for u in urls}
        assert len(urls) == store.query("SELECT COUNT(*) FROM url")[0][0]
        bodies = {i % POOL_BODIES for i in written}
        assert store.query("SELECT COUNT(*) FROM page") == [(len(bodies),)]  # one row per md5
        assert store.query("SELECT COUNT(DISTINCT md5) FROM page") == [(len(bodies),)]
        # every link whose two ends were stored exists, even when both were written at once
        md5 = {i: md5_hex(f"<p>body {i % POOL_BODIES}</p>".encode()) for i in written}
        expected = {
            (md5[i], md5[t])
            for i in written
            for t in ((i * 7 + k) % POOL_URLS for k in (1, 2, 3))
            if t in written
        }
        links = set(store.query(
            "SELECT s.md5, t.md5 FROM link l JOIN page s ON s.id = l.source JOIN page t ON t.id = l.target"
        ))
        assert links == expected
        assert store.query("SELECT COUNT(*) FROM outlink") == [(3 * len(written),)]
    finally:
        store.close()


def opener(url: str, start: Any, errors: Any) -> None:
    try:
        start.wait(30)
        open_store(url).close()
    except BaseException as exc:
        errors.put(f"{type(exc).__name__}: {exc}")
        raise


def test_first_time_schema_creation_by_several_processes(pg_server: PgServer) -> None:
    for _ in range(3):  # a race is a matter of luck: several fresh databases
        url = pg_server.create_database()
        start, errors = FORK.Event(), FORK.Queue()
        procs = [FORK.Process(target=opener, args=(url, start, errors)) for _ in range(4)]
        for p in procs:
            p.start()
        start.set()
        for p in procs:
            p.join(120)
        failures = [errors.get() for _ in range(errors.qsize())]
        assert [p.exitcode for p in procs] == [0] * 4, failures
        store = open_store(url)
        assert store.query("SELECT key, value FROM spitag_meta") == [("schema_version", str(SCHEMA_VERSION))]
        store.close()


# -- restarts --------------------------------------------------------------------------


def test_store_reconnects_after_a_restart(own_pg: PgServer) -> None:
    url = own_pg.create_database()
    store = open_store(url)
    try:
        store.write([record("http://a.example/1", "<p>1</p>")])
        own_pg.restart()  # pg_ctl restart -m fast: our connection is cut
        batch = [record("http://a.example/2", "<p>2</p>", links=["http://a.example/1"])]
        with pytest.raises(BackendUnavailableError, match="connection lost") as lost:
            store.write(batch)
        assert "pg-secret-pw" not in str(lost.value)
        assert store.write(batch).urls == ["http://a.example/2"]  # a new connection
        own_pg.stop()
        with pytest.raises(BackendUnavailableError):
            store.write([record("http://a.example/3", "<p>3</p>")])
        with pytest.raises(BackendUnavailableError, match="PostgreSQL unreachable"):
            store.write([record("http://a.example/3", "<p>3</p>")])  # still down
        own_pg.start()
        store.write([record("http://a.example/3", "<p>3</p>")])
        assert store.query("SELECT COUNT(*) FROM url") == [(3,)]
        assert store.query("SELECT COUNT(*) FROM link") == [(1,)]
    finally:
        store.close()


def test_crawl_survives_a_postgresql_restart_and_loses_nothing(own_pg: PgServer, tmp_path: Path) -> None:
    url = own_pg.create_database()
    pages = 400
    with WebServer() as server:
        server.add_site("pg.test", tree_site(pages, delay=0.02))
        env = {**os.environ, "http_proxy": server.proxy_url, "https_proxy": server.proxy_url}
        env.pop("no_proxy", None)
        log = tmp_path / "crawl.log"
        proc = subprocess.Popen(
            [sys.executable, "-m", "scrapy", "crawl", "spitag", "-a", "seeds=http://pg.test/",
             "-a", "crawl=pgcrawl", "-s", f"SPITAG_STORE={url}",
             "-s", f"SPITAG_FRONTIER=sqlite:///{tmp_path}/f.db", "-s", "CONCURRENT_REQUESTS=4",
             "-s", "SPITAG_STORE_BATCH=50", "-s", "SPITAG_STORE_FLUSH_SECONDS=0.2"],
            cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=log.open("wb"),
        )
        try:
            deadline = time.monotonic() + 120
            while sum(e.path != "/robots.txt" for e in server.log) < 100:
                assert proc.poll() is None, log.read_text()[-3000:]
                assert time.monotonic() < deadline, "crawl too slow to reach the restart point"
                time.sleep(0.02)
            own_pg.restart()
            assert proc.wait(300) == 0, log.read_text()[-3000:]
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait(30)
        served = {e.path for e in server.log if e.host == "pg.test" and e.path != "/robots.txt"}
    assert served == tree_paths(pages)
    store = open_store(url)
    try:
        stored = [u for (u,) in store.query("SELECT url FROM url WHERE crawl = 'pgcrawl'")]
        assert sorted(stored) == sorted(f"http://pg.test{p}" for p in served)  # each once, none lost
        assert store.query("SELECT COUNT(*) FROM page") == [(pages,)]
    finally:
        store.close()
    text = log.read_text()
    assert "connection lost" in text  # the restart was felt…
    assert re.search(r"'spitag/store/retries': [1-9]", text)  # …the batch was retried…
    assert "Traceback" not in text and "pg-secret-pw" not in text  # …and nothing else went wrong
    export = subprocess.run(
        [sys.executable, "-m", "scrapy", "export", "-a", "crawl=pgcrawl", "-O", str(tmp_path / "all.jsonl"),
         "-s", f"SPITAG_STORE={url}"],
        cwd=REPO, capture_output=True, text=True, timeout=120,
    )
    assert export.returncode == 0, export.stderr[-2000:]
    exported = [json.loads(line) for line in (tmp_path / "all.jsonl").read_text().splitlines()]
    assert sorted(i["url"] for i in exported) == sorted(stored)
    assert all(i["fetched_at"].endswith("Z") and i["semantic"]["json-ld"] == 1 for i in exported)
