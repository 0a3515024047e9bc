"""The disk of the SQLite store fills up: the crawl waits with a clear message (pages
stay in memory, their leases unacknowledged), the store stays consistent, and once
there is room again the crawl finishes by itself with nothing lost."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from testbed.webserver import DictSite, Response, WebServer

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def small_disk(tmp_path: Path):
    """A 1 MB tmpfs (the tests run as root, as CI does)."""
    mount = tmp_path / "disk"
    mount.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(mount)], check=True)
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def site(pages: int) -> DictSite:
    s = DictSite()
    filler = "<p>" + "semantic web " * 1500 + "</p>"  # ~20 KB a page
    for i in range(pages):
        links = "".join(f'<a href="/p{j}">{j}</a>' for j in range(i * 5 + 1, min(i * 5 + 6, pages)))
        s.add("/" if i == 0 else f"/p{i}", Response.html(f"<html><body><h1>{i}</h1>{filler}{links}</body></html>"))
    return s


def test_disk_full_waits_then_finishes_when_there_is_room(tmp_path: Path, small_disk: Path) -> None:
    pages = 150
    log_path = tmp_path / "crawl.log"
    with WebServer() as server:
        server.add_site("full.test", site(pages))
        env = {**os.environ, "http_proxy": server.proxy_url}
        proc = subprocess.Popen(
            [sys.executable, "-m", "scrapy", "crawl", "spitag", "-a", "seeds=http://full.test/", "-a", "crawl=full",
             "-s", f"SPITAG_STORE=sqlite:///{small_disk}/store.db",
             "-s", f"SPITAG_FRONTIER=sqlite:///{tmp_path}/frontier.db"],
            cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=log_path.open("wb"),
        )
        try:
            deadline = time.monotonic() + 120
            while "database or disk is full" not in log_path.read_text():
                assert proc.poll() is None, log_path.read_text()[-2000:]
                assert time.monotonic() < deadline, "the disk never filled up"
                time.sleep(0.2)
            time.sleep(2)
            assert proc.poll() is None  # it waits: nothing is dropped, nothing is lost
            with sqlite3.connect(small_disk / "store.db") as conn:
                assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
                assert conn.execute("SELECT COUNT(*) FROM url").fetchone()[0] < pages
            subprocess.run(["mount", "-o", "remount,size=64m", str(small_disk)], check=True)
            assert proc.wait(120) == 0
        finally:
            if proc.poll() is None:
                proc.kill()
        served = {e.path for e in server.log if e.host == "full.test" and e.path != "/robots.txt"}
    log = log_path.read_text()
    assert "retrying with backoff, nothing is lost" in log and "is back after" in log
    with sqlite3.connect(small_disk / "store.db") as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        urls = {u for (u,) in conn.execute("SELECT url FROM url WHERE crawl = 'full'")}
    assert len(served) == pages
    assert urls == {f"http://full.test{p}" for p in served}  # every page served is stored
