"""Pages profiled in worker processes (spitag.offload, SPITAG_EXTRACT_PROCESSES): the
same items as a crawl that profiles in its own process, and nothing lost when a
worker dies mid-crawl. Real crawls of real pages on a local server."""

from __future__ import annotations

import json
import os
import random
import re
import signal
import subprocess
import time
from dataclasses import replace
from pathlib import Path

import pytest

from spitag.errors import BadInputError
from spitag.extract import profile_html
from spitag.offload import ProfilePool, processes_setting
from spitag.profile_worker import ProfileJob, run
from spitag.urls import normalize_url
from testbed.corpus import real_pages, real_pages_site, ring_links
from tests.support.crawl import (
    REPO,
    CrawlRun,
    crawl_command,
    proxy_env,
    requested_urls,
    robots_meta,
    run_crawl,
    url_rows,
)
from testbed.webserver import WebServer

VARYING = {"fetched_at", "expires"}  # when the answer came: differs between two crawls
BNODE = re.compile(r"_:N[0-9a-f]{32}")


def comparable(item: dict) -> dict:
    """The item without what differs between two crawls of the same pages: the times,
    and pyRdfa's blank-node names (random: _:N + 32 hex digits), which also order its nodes."""
    same = {k: v for k, v in item.items() if k not in VARYING}
    rdfa = (same.get("data") or {}).get("rdfa")
    if rdfa:
        nodes = (BNODE.sub("_:b", json.dumps(node, sort_keys=True)) for node in rdfa)
        same["data"] = {**same["data"], "rdfa": sorted(nodes)}
    return same


def ring(
    real_pages_dir: Path, webserver: WebServer, tmp: Path, n: int, seed: int, delay: float = 0.0
) -> tuple[list, dict, dict]:
    """``n`` real pages under their own hosts, page i linking to page i+1; the crawl's
    settings keep it to exactly those pages (their own links stay unrequested)."""
    # URLs already normalized (the crawl requests exactly what is served), pages that
    # let their links be followed
    usable = [
        p for p in real_pages(real_pages_dir)
        if normalize_url(p.served_url) == p.served_url and "nofollow" not in robots_meta(p.read())
    ]
    pages = random.Random(seed).sample(usable, n)
    sites = real_pages_site(pages, ring_links(len(pages)))
    if delay:
        for site in sites.values():
            for target in site.targets():
                site.add(target, replace(site.respond(target), delay=delay))
    webserver.add_sites(sites)
    rules = tmp / "ring-rules.txt"
    rules.write_text("".join(f"+^{re.escape(p.served_url)}$\n" for p in pages), encoding="utf-8")
    settings = {
        "SPITAG_SCOPE": "any",
        "SPITAG_REGEX_RULES": f"@{rules}",
        "SPITAG_MAX_LINKS_PER_PAGE": 100_000,  # the ring's link comes last
        "RETRY_TIMES": 0,
    }
    return pages, sites, settings


def test_processes_setting() -> None:
    assert processes_setting("auto", cores=1) == 0  # one core: profiled in the crawler process
    assert processes_setting("auto", cores=2) == 2
    assert processes_setting(" AUTO ", cores=8) == 8
    assert processes_setting("0") == 0
    assert processes_setting(3) == 3
    for bad in ("-1", "two", "", "1.5", None):
        with pytest.raises(BadInputError, match="SPITAG_EXTRACT_PROCESSES"):
            processes_setting(bad)


def test_pool_workers_come_from_a_forkserver_that_stops_with_the_pool(real_pages_dir: Path) -> None:
    """The workers are forked by one forkserver (the extractors imported once); a job
    gives profile_html's counts; closing the last pool stops and reaps the forkserver."""
    page = real_pages(real_pages_dir)[0]
    pool = ProfilePool(2)
    pool.start()
    try:
        job = ProfileJob(page.read(), page.served_url, "utf-8", True, 10 * 2**20, None)
        profile = pool._pool().submit(run, job).result(timeout=60)
        assert profile.counts == profile_html(page.read(), page.served_url, encoding="utf-8").counts
        servers = _forkservers(os.getpid())
        assert len(servers) == 1
        deadline = time.monotonic() + 30
        while len(_children(servers[0])) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(_children(servers[0])) == 2  # both workers, forked by it
    finally:
        pool.close()
    assert _forkservers(os.getpid()) == []
    assert not _running(servers[0])


def test_a_worker_dead_halfway_through_a_result_holds_no_page(real_pages_dir: Path) -> None:
    """A worker killed while it sent a result (the executor alone would wait for the
    rest for ever): the pool's check breaks and drops the pool, the job's future fails
    (its page is then profiled in the crawler process), and a new pool takes the next."""
    from concurrent.futures.process import BrokenProcessPool

    from tests.support.dying import die_halfway_through_the_result

    page = real_pages(real_pages_dir)[0]
    pool = ProfilePool(1)
    try:
        executor = pool._pool()
        future = executor.submit(die_halfway_through_the_result)
        deadline = time.monotonic() + 30
        while pool._executor is executor and time.monotonic() < deadline:
            pool.check_workers()
            time.sleep(0.05)
        assert pool._executor is None
        assert isinstance(future.exception(timeout=30), BrokenProcessPool)
        job = ProfileJob(page.read(), page.served_url, "utf-8", True, 10 * 2**20, None)
        profile = pool._pool().submit(run, job).result(timeout=60)
        assert profile.counts == profile_html(page.read(), page.served_url, encoding="utf-8").counts
    finally:
        pool.close()


def test_bad_setting_stops_the_crawl(webserver: WebServer, tmp_path: Path) -> None:
    run = run_crawl(webserver, tmp_path, "http://site.test/", settings={"SPITAG_EXTRACT_PROCESSES": "many"})
    assert run.returncode == 2, run.describe()
    assert len(run.error_lines()) == 1 and "SPITAG_EXTRACT_PROCESSES" in run.error_lines()[0]
    assert requested_urls(run.server_log) == []


def test_workers_give_the_items_of_the_crawler_process(
    real_pages_dir: Path, webserver: WebServer, tmp_path: Path
) -> None:
    pages, _, settings = ring(real_pages_dir, webserver, tmp_path, n=16, seed=3)
    runs: dict[int, CrawlRun] = {}
    for processes in (0, 2):
        runs[processes] = run_crawl(
            webserver, tmp_path / str(processes), pages[0].served_url,
            settings={**settings, "SPITAG_EXTRACT_PROCESSES": processes}, name="ring",
        )
        assert runs[processes].returncode == 0, runs[processes].describe()
        assert "Spider error processing" not in runs[processes].stderr
    inline, pooled = runs[0].items_by_url, runs[2].items_by_url
    assert set(inline) == set(pooled)
    served = {normalize_url(p.served_url) for p in pages}
    assert served == set(inline)
    for url, item in inline.items():
        assert comparable(item) == comparable(pooled[url]), url
    rich = [u for u in served if inline[u]["semantic"]["total"] > 0 and inline[u]["links"]]
    assert len(rich) >= 12  # the comparison covered pages with data and links
    assert "spitag/extract/pool_failures" not in runs[2].stats
    assert "spitag/extract/pool_restarts" not in runs[2].stats


def _children(pid: int) -> list[int]:
    children: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            children += [int(c) for c in (task / "children").read_text().split()]
        except OSError:
            continue
    return children


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def _forkservers(pid: int) -> list[int]:
    """The crawl's multiprocessing forkserver (its workers' parent), if it runs one."""
    return [c for c in _children(pid) if b"forkserver" in _cmdline(c)]


def _pool_workers(pid: int) -> list[int]:
    """The crawl's worker processes: forked by its forkserver (or spawned by it)."""
    spawned = [c for c in _children(pid) if b"spawn_main" in _cmdline(c)]
    return spawned + [w for server in _forkservers(pid) for w in _children(server)]


def test_a_killed_worker_loses_nothing(real_pages_dir: Path, webserver: WebServer, tmp_path: Path) -> None:
    """kill -9 of the only profile worker after a few pages: the crawl goes on (the page
    it held is profiled in the crawler process, a new worker takes the next ones) and
    every page is stored with the counts profile_html gives."""
    pages, sites, settings = ring(real_pages_dir, webserver, tmp_path, n=30, seed=5, delay=0.1)
    out, store = tmp_path / "ring.jsonl", tmp_path / "ring.db"
    cmd = crawl_command(
        pages[0].served_url, out, store=store, frontier=tmp_path / "frontier.db",
        settings={**settings, "SPITAG_EXTRACT_PROCESSES": 1},
    )
    webserver.clear_log()
    proc = subprocess.Popen(
        cmd, cwd=REPO, env=proxy_env(webserver), stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )
    try:
        killed: list[int] = []
        deadline = time.monotonic() + 60
        while not killed and time.monotonic() < deadline and proc.poll() is None:
            if len(requested_urls(webserver.log)) >= 5:
                for worker in _pool_workers(proc.pid):
                    os.kill(worker, signal.SIGKILL)
                    killed.append(worker)
            time.sleep(0.05)
        assert killed, "no worker process found to kill"
        _, err = proc.communicate(timeout=240)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    run = CrawlRun(cmd, proc.returncode, err.decode("utf-8", "replace"), out, store, webserver.log)
    assert run.returncode == 0, run.describe()
    # a worker killed while it profiled a page or while it waited for one: the pool is
    # started again either way (its page, if it held one, counted in pool_failures)
    assert int(run.stats.get("spitag/extract/pool_restarts", "0")) >= 1, run.describe()
    assert len(requested_urls(run.server_log)) > 5  # it went on after the kill
    with run.connect() as conn:
        table = url_rows(conn)
    for page in pages:
        url = normalize_url(page.served_url)
        assert table[url]["status"] == 200 and table[url]["page_id"] is not None, url
        expected = profile_html(sites[page.host].respond(page.path).body, url).counts
        assert run.items_by_url[url]["semantic"] == expected, url


def test_workers_exit_when_the_crawl_is_killed(real_pages_dir: Path, webserver: WebServer, tmp_path: Path) -> None:
    """kill -9 of the crawl's process leaves no profile worker behind."""
    pages, _, settings = ring(real_pages_dir, webserver, tmp_path, n=20, seed=7, delay=0.2)
    cmd = crawl_command(
        pages[0].served_url, tmp_path / "ring.jsonl", store=tmp_path / "ring.db",
        frontier=tmp_path / "frontier.db", settings={**settings, "SPITAG_EXTRACT_PROCESSES": 2},
    )
    log = tmp_path / "crawl.log"
    proc = subprocess.Popen(
        cmd, cwd=REPO, env=proxy_env(webserver), stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL, stderr=log.open("wb"),
    )
    try:
        workers: list[int] = []
        deadline = time.monotonic() + 60
        # (a ProcessPoolExecutor starts a worker when no idle one can take a job: a
        # crawl of one page at a time may need only one of its two)
        while not workers and time.monotonic() < deadline and proc.poll() is None:
            if len(requested_urls(webserver.log)) >= 3:
                workers = _pool_workers(proc.pid)
            time.sleep(0.05)
        assert workers, f"no worker started: {log.read_text()[-3000:]}"
        workers += _forkservers(proc.pid)
        proc.kill()
        proc.wait(timeout=10)
        deadline = time.monotonic() + 10
        while any(_running(w) for w in workers) and time.monotonic() < deadline:
            time.sleep(0.1)
        # (a dead worker may stay a zombie of init for a moment: look at its state)
        alive = [w for w in workers if _running(w)]
        assert alive == [], f"workers or forkserver still running after the crawl was killed: {alive}"
    finally:
        if proc.poll() is None:
            proc.kill()


def _running(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"
