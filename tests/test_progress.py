"""Seeing a crawl: the periodic progress line, the live display forced on without a
terminal, Ctrl-C as pause, and ``scrapy frontier`` against a SQLite frontier after a
crawl and against a Redis frontier (its numbers are the frontier's own)."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from spitag.frontier import open_frontier
from testbed.sites import tree_site
from testbed.webserver import WebServer

REPO = Path(__file__).resolve().parents[1]
HOST = "slow.test"
LINE = re.compile(
    r"\[spitag\.progress\] INFO: progress: (?P<pages>[\d,]+) pages \((?P<rate>[\d,.]+) pages/min\),"
    r" (?P<stored>[\d,]+) stored, (?P<queued>[\d,]+) queued, (?P<leased>[\d,]+) leased,"
    r" (?P<done>[\d,]+) done,(?: (?P<retrying>[\d,]+) retrying,)? (?P<hosts>[\d,]+) hosts,"
    r" (?P<per_page>[\d.]+) semantic items/page"
)
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
TOP_LINE = re.compile(r"^\s+(\d+)\s+(\S+)\s+(\d+)\s+(https?://\S+)$")


def env(server: WebServer | None = None, **extra: str) -> dict[str, str]:
    out = {k: v for k, v in os.environ.items() if not k.startswith("SPITAG_") and k.lower() not in (
        "http_proxy", "https_proxy", "no_proxy")}
    if server is not None:
        out["http_proxy"] = out["https_proxy"] = server.proxy_url
    out.update(extra)
    return out


def crawl_cmd(tmp: Path, frontier: str, *extra: str, crawl: str = "slow") -> list[str]:
    return [
        sys.executable, "-m", "scrapy", "crawl", "spitag", "-a", f"seeds=http://{HOST}/", "-a", f"crawl={crawl}",
        "-s", f"SPITAG_STORE=sqlite:///{tmp}/store.db", "-s", f"SPITAG_FRONTIER={frontier}",
        "-s", "CONCURRENT_REQUESTS=2", *extra,
    ]


def run_crawl(tmp: Path, server: WebServer, frontier: str, *extra: str, **variables: str) -> str:
    log = tmp / "crawl.log"
    with log.open("wb") as err:  # a file: stderr is not a terminal
        proc = subprocess.run(crawl_cmd(tmp, frontier, *extra), cwd=REPO, env=env(server, **variables),
                              stdout=subprocess.DEVNULL, stderr=err, timeout=180)
    text = log.read_text(errors="replace")
    assert proc.returncode == 0, text[-3000:]
    assert "Traceback" not in text, text[-3000:]
    return text


def frontier_cmd(frontier: str, crawl: str, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "scrapy", "frontier", "-a", f"crawl={crawl}", *extra,
         "-s", f"SPITAG_FRONTIER={frontier}"],
        cwd=REPO, env=env(), capture_output=True, text=True, timeout=60,
    )


def progress_lines(text: str) -> list[dict[str, float]]:
    return [
        {k: float((v or "0").replace(",", "")) for k, v in m.groupdict().items()}
        for m in LINE.finditer(ANSI.sub("", text))
    ]


@pytest.fixture
def slow_site() -> WebServer:
    with WebServer() as server:
        server.add_site(HOST, tree_site(80, delay=0.1))
        yield server


def test_periodic_progress_line(slow_site: WebServer, tmp_path: Path) -> None:
    text = run_crawl(tmp_path, slow_site, f"sqlite:///{tmp_path}/frontier.db", "-s", "SPITAG_PROGRESS_INTERVAL=1")
    lines = progress_lines(text)
    assert lines, text[-3000:]
    fetched = sum(e.path != "/robots.txt" for e in slow_site.log)
    for line in lines:
        assert 0 <= line["stored"] <= line["pages"] <= fetched
        assert line["queued"] + line["leased"] + line["done"] <= 80
        assert line["hosts"] <= 1
        # tree_site pages carry one JSON-LD object and one og:title each
        assert line["pages"] == 0 or line["per_page"] == 2.0
    assert [line["pages"] for line in lines] == sorted(line["pages"] for line in lines)
    close = re.search(r"progress at close: ([\d,]+) pages .* ([\d,]+) stored, 1 hosts, 2\.00 semantic items/page", text)
    assert close and int(close.group(1).replace(",", "")) == fetched == 80
    assert "Ctrl-C: pause" not in text  # auto, and stderr is a file: no live display


def test_live_display_forced_on_without_a_terminal(slow_site: WebServer, tmp_path: Path) -> None:
    text = run_crawl(tmp_path, slow_site, f"sqlite:///{tmp_path}/frontier.db",
                     "-s", "SPITAG_PROGRESS_INTERVAL=1", SPITAG_PROGRESS="on")
    assert "Ctrl-C: pause" in text  # the display was drawn
    assert progress_lines(text), "log lines still reach stderr above the display"
    assert "Spider closed (finished)" in ANSI.sub("", text)


def test_ctrl_c_pauses_and_frontier_shows_what_is_left(slow_site: WebServer, tmp_path: Path) -> None:
    frontier_url = f"sqlite:///{tmp_path}/frontier.db"
    log = tmp_path / "run.log"
    proc = subprocess.Popen(crawl_cmd(tmp_path, frontier_url, "-s", "SPITAG_PROGRESS_INTERVAL=1"), cwd=REPO,
                            env=env(slow_site), stdout=subprocess.DEVNULL, stderr=log.open("wb"))
    try:
        deadline = time.monotonic() + 60
        while sum(e.path != "/robots.txt" for e in slow_site.log) < 15:
            assert proc.poll() is None and time.monotonic() < deadline, "crawl ended too early"
            time.sleep(0.02)
        proc.send_signal(signal.SIGINT)
        assert proc.wait(60) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(30)
    text = log.read_text()
    assert "crawl slow paused (shutdown): run the same command again to resume" in text
    check_frontier_command(frontier_url, "slow", expect_queued=True)


def test_frontier_command_after_a_crawl(slow_site: WebServer, tmp_path: Path) -> None:
    frontier_url = f"sqlite:///{tmp_path}/frontier.db"
    run_crawl(tmp_path, slow_site, frontier_url, "-s", "CLOSESPIDER_PAGECOUNT=20")
    check_frontier_command(frontier_url, "slow", expect_queued=True)


def test_frontier_command_on_redis(slow_site: WebServer, tmp_path: Path, redis_url: str) -> None:
    run_crawl(tmp_path, slow_site, redis_url, "-s", "CLOSESPIDER_PAGECOUNT=20")
    check_frontier_command(redis_url, "slow", expect_queued=True)


def test_frontier_command_errors(tmp_path: Path) -> None:
    missing = frontier_cmd(f"sqlite:///{tmp_path}/none.db", "slow")
    assert missing.returncode == 2 and "no frontier at" in missing.stderr
    assert not (tmp_path / "none.db").exists()
    unreachable = frontier_cmd("redis://127.0.0.1:1/0", "slow")
    assert unreachable.returncode == 3 and "spitag: error:" in unreachable.stderr


def check_frontier_command(frontier_url: str, crawl: str, expect_queued: bool) -> None:
    """``scrapy frontier`` (text and JSON) shows the frontier's own numbers."""
    own = open_frontier(frontier_url, crawl)
    try:
        counts, hosts, top = own.queue.counts(), own.queue.hosts(20), own.queue.top(7)
    finally:
        own.close()
    if expect_queued:
        assert counts.queued > 0 and counts.done > 0
    run = frontier_cmd(frontier_url, crawl, "-a", "top=7", "-a", "format=json")
    assert run.returncode == 0, run.stderr
    data = json.loads(run.stdout)
    assert (data["queued"], data["leased"], data["done"]) == (counts.queued, counts.leased, counts.done)
    assert [(h["host"], h["queued"], h["leased"], h["done"]) for h in data["hosts"]] == [
        (h.host, h.queued, h.leased, h.done) for h in hosts
    ]
    assert [(e["url"], e["priority"], e["depth"]) for e in data["top"]] == [(e.url, e.priority, e.depth) for e in top]
    for entry in data["top"]:
        reason = entry["reason"]
        assert reason["strategy"] == "spitag" and reason["parent"].startswith(f"http://{HOST}/")
        assert reason["parent_score"] == 2.0

    text = frontier_cmd(frontier_url, crawl, "-a", "top=7")
    assert text.returncode == 0, text.stderr
    out = text.stdout
    assert f"queued {counts.queued:,} · leased {counts.leased:,} · done {counts.done:,}" in out
    host_row = next(line for line in out.splitlines() if line.strip().startswith(HOST))
    assert host_row.split()[1:4] == [f"{hosts[0].queued:,}", f"{hosts[0].leased:,}", f"{hosts[0].done:,}"]
    rows = [m.groups() for m in map(TOP_LINE.match, out.splitlines()) if m]
    assert [r[3] for r in rows] == [e.url for e in top]
    assert [int(r[0]) for r in rows] == list(range(1, len(top) + 1))
    assert out.count("why: spitag · linked from http://") == len(top)
    assert "(semantic score 2)" in out
    # the host's places, where workers share them (none running once the crawl is over)
    shared = frontier_url.startswith("redis")
    assert [(h["downloading"], h["waiting"]) for h in data["hosts"]] == [(0, 0) if shared else (None, None)] * len(hosts)
    assert ("downloading" in out) == shared
    typo = frontier_cmd(frontier_url, crawl + "-typo")  # a crawl the frontier does not have
    assert typo.returncode == 2 and typo.stdout == "", typo.stderr
    assert f"spitag: error: crawl '{crawl}-typo' has nothing in frontier" in typo.stderr


@pytest.mark.parametrize("name, value", [("SPITAG_PROGRESS", "sometimes"), ("SPITAG_PROGRESS_INTERVAL", "0.01")])
def test_a_bad_progress_setting_stops_a_crawler_built_in_python_before_it_crawls(name: str, value: str) -> None:
    """``scrapy crawl`` refuses these values before it starts; a crawler built in Python
    (which runs no such check) fails when its parts are built, naming the setting,
    before any request: the settings are read once, for every part."""
    from scrapy.utils.test import get_crawler

    from spitag.errors import BadInputError
    from spitag.progress import Progress

    with pytest.raises(BadInputError, match=name):
        Progress.from_crawler(get_crawler(settings_dict={name: value}))
    chosen = Progress.from_crawler(get_crawler(settings_dict={"SPITAG_PROGRESS": "off", "SPITAG_PROGRESS_INTERVAL": "5"}))
    assert (chosen.mode, chosen.interval) == ("off", 5.0)


def test_progress_asks_a_frontier_back_from_an_outage_within_seconds(tmp_path: Path) -> None:
    """The frontier counts of the progress line after Redis restarted: asked again after
    the crawl's outage back-off (0.25 s, then twice that…), not frozen for long."""
    from scrapy.utils.test import get_crawler

    from spitag.frontier import Entry
    from spitag.progress import Progress
    from testbed.redisserver import RedisServer

    with RedisServer() as server:
        frontier = open_frontier(server.url, "progress")
        frontier.queue.push([Entry("http://a.test/1", "a.test", 0, 1.0)], "max")
        progress = Progress(get_crawler(), "off", 0.0)
        progress.queue = frontier.queue
        assert progress.frontier_counts(0.0).queued == 1
        server.stop()
        stale = progress.frontier_counts(0.0)  # the try during the outage fails ...
        assert stale is not None and stale.queued == 1  # ... and the last numbers stay
        server.start()  # (no persistence: the crawl's keys are gone, its counts 0)
        time.sleep(1.2)
        assert progress.frontier_counts(0.0).queued == 0  # asked again, a second later
        frontier.close()
