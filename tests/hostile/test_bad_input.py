"""Bad user input: one clear message before the crawl starts, a non-zero exit, nothing
written, nothing requested — and credentials never reach logs or items."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.crawl import REPO, crawl_command, proxy_env, run_crawl
from testbed.webserver import DictSite, WebServer

CASES = [
    # id, seeds, settings, exit code, words the one error line must hold
    ("unknown-strategy", "http://bad.test/", {"SPITAG_STRATEGY": "pagerank"}, 2, ["SPITAG_STRATEGY", "pagerank"]),
    ("negative-delay", "http://bad.test/", {"DOWNLOAD_DELAY": "-2"}, 2, ["DOWNLOAD_DELAY", "-2"]),
    ("frontier-scheme", "http://bad.test/", {"SPITAG_FRONTIER": "memcached://x"}, 2, ["SPITAG_FRONTIER", "memcached"]),
    ("frontier-port", "http://bad.test/", {"SPITAG_FRONTIER": "redis://h:99999/0"}, 2, ["SPITAG_FRONTIER"]),
    ("sqlite-url", "http://bad.test/", {"SPITAG_FRONTIER": "sqlite://relative.db"}, 2, ["SPITAG_FRONTIER"]),
    ("store-no-host", "http://bad.test/", {"SPITAG_STORE": "postgresql:///"}, 2, ["SPITAG_STORE", "no host"]),
    ("seed-file-is-a-folder", "{tmp}", {}, 2, ["cannot read seed file"]),
    ("body-format", "http://bad.test/", {"SPITAG_STORE_BODY": "gzip"}, 2, ["SPITAG_STORE_BODY", "gzip"]),
    ("boolean", "http://bad.test/", {"SPITAG_KEEP_DATA": "maybe"}, 2, ["SPITAG_KEEP_DATA", "maybe"]),
    ("negative-depth", "http://bad.test/", {"SPITAG_MAX_DEPTH": "-1"}, 2, ["SPITAG_MAX_DEPTH"]),
    ("rule-file", "http://bad.test/", {"SPITAG_REGEX_RULES": "@/nonexistent/rules.txt"}, 2, ["rule file"]),
    ("host-k", "http://bad.test/", {"SPITAG_HOST_K": "-1"}, 2, ["SPITAG_HOST_K"]),
    ("removed-setting", "http://bad.test/", {"SPITAG_HOST_WEIGHT": "0.7"}, 2, ["SPITAG_HOST_WEIGHT", "no longer read"]),
    ("lease", "http://bad.test/", {"SPITAG_LEASE_SECONDS": "0"}, 2, ["SPITAG_LEASE_SECONDS"]),
    ("robots-ttl", "http://bad.test/", {"SPITAG_ROBOTS_TTL": "-5"}, 2, ["SPITAG_ROBOTS_TTL", "-5"]),
    ("retry-after", "http://bad.test/", {"SPITAG_MAX_RETRY_AFTER": "soon"}, 2, ["SPITAG_MAX_RETRY_AFTER", "soon"]),
    ("refusal-retries", "http://bad.test/", {"SPITAG_REFUSAL_RETRIES": "-1"}, 2, ["SPITAG_REFUSAL_RETRIES"]),
    ("skip-extensions", "http://bad.test/", {"SPITAG_SKIP_EXTENSIONS": "pdf, a b"}, 2, ["SPITAG_SKIP_EXTENSIONS"]),
    ("host-failures", "http://bad.test/", {"SPITAG_HOST_FAILURES": "five"}, 2, ["SPITAG_HOST_FAILURES"]),
    ("host-down-seconds", "http://bad.test/", {"SPITAG_HOST_DOWN_SECONDS": "0"}, 2, ["SPITAG_HOST_DOWN_SECONDS"]),
    ("retry-delay", "http://bad.test/", {"SPITAG_RETRY_DELAY": "-1"}, 2, ["SPITAG_RETRY_DELAY"]),
    ("host-delay", "http://bad.test/", {"SPITAG_HOST_DELAY": "abc"}, 2, ["SPITAG_HOST_DELAY", "abc"]),
    ("negative-host-delay", "http://bad.test/", {"SPITAG_HOST_DELAY": "-5"}, 2, ["SPITAG_HOST_DELAY", "-5"]),
    ("follow-nofollow", "http://bad.test/", {"SPITAG_FOLLOW_NOFOLLOW": "maybe"}, 2, ["SPITAG_FOLLOW_NOFOLLOW"]),
    ("progress", "http://bad.test/", {"SPITAG_PROGRESS": "loud"}, 2, ["SPITAG_PROGRESS", "loud"]),
    ("progress-interval", "http://bad.test/", {"SPITAG_PROGRESS_INTERVAL": "-1"}, 2, ["SPITAG_PROGRESS_INTERVAL"]),
    ("explore-pages-bfs", "http://bad.test/", {"SPITAG_STRATEGY": "bfs", "SPITAG_EXPLORE_PAGES": "x"}, 2,
     ["SPITAG_EXPLORE_PAGES"]),
    ("explore-pages-low", "http://bad.test/", {"SPITAG_EXPLORE_PAGES": "0.5"}, 2, ["SPITAG_EXPLORE_PAGES"]),
    ("legacy-strategy", "http://bad.test/", {"SPITAG_STRATEGY": "spitag-legacy"}, 2, ["SPITAG_STRATEGY", "not one of"]),
    ("depth-limit", "http://bad.test/", {"DEPTH_LIMIT": "-1"}, 2, ["DEPTH_LIMIT"]),
    ("infinite-host-delay", "http://bad.test/", {"SPITAG_HOST_DELAY": "inf"}, 2, ["SPITAG_HOST_DELAY", "finite"]),
    ("infinite-delay", "http://bad.test/", {"DOWNLOAD_DELAY": "inf"}, 2, ["DOWNLOAD_DELAY", "finite"]),
    ("nan-flush", "http://bad.test/", {"SPITAG_STORE_FLUSH_SECONDS": "nan"}, 2, ["SPITAG_STORE_FLUSH_SECONDS"]),
    ("extract-processes", "http://bad.test/", {"SPITAG_EXTRACT_PROCESSES": "100000"}, 2, ["SPITAG_EXTRACT_PROCESSES"]),
    ("syntax-weights", "http://bad.test/", {"SPITAG_SYNTAX_WEIGHTS": "{bad"}, 2, ["SPITAG_SYNTAX_WEIGHTS", "JSON"]),
    ("negative-weight", "http://bad.test/", {"SPITAG_SYNTAX_WEIGHTS": '{"json-ld": -5}'}, 2,
     ["SPITAG_SYNTAX_WEIGHTS", "negative"]),
    ("trap-repeats", "http://bad.test/", {"SPITAG_TRAP_MAX_REPEATS": "1"}, 2, ["SPITAG_TRAP_MAX_REPEATS"]),
    ("in-memory-store", "http://bad.test/", {"SPITAG_STORE": "sqlite:///:memory:"}, 2, ["SPITAG_STORE", "memory"]),
    ("redis-db", "http://bad.test/", {"SPITAG_FRONTIER": "redis://127.0.0.1:1/abc"}, 2, ["SPITAG_FRONTIER", "database"]),
    ("unix-no-path", "http://bad.test/", {"SPITAG_FRONTIER": "unix://"}, 2, ["SPITAG_FRONTIER", "socket"]),
    ("autothrottle", "http://bad.test/", {"AUTOTHROTTLE_ENABLED": "True", "AUTOTHROTTLE_TARGET_CONCURRENCY": "0"},
     2, ["AUTOTHROTTLE_TARGET_CONCURRENCY"]),
    ("password-in-bad-seed", "http://bob:hunter2@bad.test:0/", {}, 2, ["bad.test"]),
    # Scrapy's own LOG_LEVEL: Scrapy failed on it with a traceback while setting up its log
    ("log-level", "http://bad.test/", {"LOG_LEVEL": "BOGUS"}, 2, ["LOG_LEVEL", "BOGUS"]),
    ("log-level-lowercase", "http://bad.test/", {"LOG_LEVEL": "info"}, 2, ["LOG_LEVEL", "info"]),
    # a whole number that is no boolean: Scrapy's getbool takes 2 as true
    ("boolean-number", "http://bad.test/", {"SPITAG_KEEP_DATA": "2"}, 2, ["SPITAG_KEEP_DATA", "2"]),
    ("allowed-domain-url", "http://bad.test/", {"SPITAG_ALLOWED_DOMAINS": "http://bad.test/path"}, 2,
     ["SPITAG_ALLOWED_DOMAINS", "not a domain name"]),
    ("forbidden-domain-port", "http://bad.test/", {"SPITAG_FORBIDDEN_DOMAINS": "bad.test:8080"}, 2,
     ["SPITAG_FORBIDDEN_DOMAINS", "not a domain name"]),
    ("progress-flood", "http://bad.test/", {"SPITAG_PROGRESS_INTERVAL": "0.001"}, 2, ["SPITAG_PROGRESS_INTERVAL"]),
    # another strategy's knob is checked whatever the strategy (here the default, spitag)
    ("importance-factor", "http://bad.test/", {"SPITAG_IMPORTANCE_FACTOR": "3"}, 2, ["SPITAG_IMPORTANCE_FACTOR"]),
    ("max-link-num", "http://bad.test/", {"SPITAG_STRATEGY": "bfs", "SPITAG_MAX_LINK_NUM": "0"}, 2,
     ["SPITAG_MAX_LINK_NUM"]),
    # Scrapy's own settings that a crawl depends on: tracebacks, or a crawl that never ends
    ("concurrent-requests", "http://bad.test/", {"CONCURRENT_REQUESTS": "abc"}, 2, ["CONCURRENT_REQUESTS", "abc"]),
    ("per-domain-zero", "http://bad.test/", {"CONCURRENT_REQUESTS_PER_DOMAIN": "0"}, 2,
     ["CONCURRENT_REQUESTS_PER_DOMAIN", "at least 1"]),
    ("retry-times", "http://bad.test/", {"RETRY_TIMES": "abc"}, 2, ["RETRY_TIMES", "abc"]),
    ("download-timeout", "http://bad.test/", {"DOWNLOAD_TIMEOUT": "abc"}, 2, ["DOWNLOAD_TIMEOUT", "abc"]),
    ("closespider", "http://bad.test/", {"CLOSESPIDER_PAGECOUNT": "abc"}, 2, ["CLOSESPIDER_PAGECOUNT", "abc"]),
    ("log-file-folder", "http://bad.test/", {"LOG_FILE": "{tmp}/no/such/folder/crawl.log"}, 2,
     ["LOG_FILE", "does not exist"]),
    ("no-store-pipeline", "http://bad.test/", {"ITEM_PIPELINES": "{}"}, 2, ["ITEM_PIPELINES", "StorePipeline"]),
]


@pytest.mark.parametrize("seeds, settings, code, words", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_input_fails_before_the_crawl(
    webserver: WebServer, tmp_path: Path, seeds: str, settings: dict, code: int, words: list[str]
) -> None:
    webserver.add_site("bad.test", DictSite({"/": "<html><body>never asked</body></html>"}))
    crawl_dir = tmp_path / "crawl"
    seeds = seeds.replace("{tmp}", str(tmp_path))
    settings = {name: value.replace("{tmp}", str(tmp_path)) for name, value in settings.items()}
    run = run_crawl(webserver, crawl_dir, seeds, store=crawl_dir / "store.db", settings=settings, name="bad")
    assert run.returncode == code, run.describe()
    errors = run.error_lines()
    assert len(errors) == 1, run.describe()
    for word in words:
        assert word in errors[0], errors[0]
    assert run.stderr.splitlines()[0] == errors[0], run.describe()  # before any line of Scrapy's
    assert "Traceback" not in run.stderr and "hunter2" not in run.stderr
    assert run.server_log == []
    assert sorted(p.name for p in crawl_dir.iterdir() if p.name != "bad.log") == []


@pytest.mark.parametrize("setting", ["SPITAG_STORE", "SPITAG_FRONTIER"])
def test_a_file_that_is_not_a_database_is_refused_and_left_alone(
    webserver: WebServer, tmp_path: Path, setting: str
) -> None:
    """A setting naming an existing file that is no SQLite database (a typo, the wrong
    file): one error line, exit 2, the file untouched; a folder there likewise."""
    webserver.add_site("bad.test", DictSite({"/": "<html><body>never asked</body></html>"}))
    notes = tmp_path / "notes.txt"
    notes.write_bytes(b"my notes, not a database\n" * 100)
    for target in (notes, tmp_path):
        crawl_dir = tmp_path / f"crawl-{target.name}"
        run = run_crawl(webserver, crawl_dir, "http://bad.test/", store=crawl_dir / "store.db",
                        settings={setting: f"sqlite:///{target}"}, name="bad")
        assert run.returncode == 2, run.describe()
        errors = run.error_lines()
        assert len(errors) == 1 and setting in errors[0] and str(target) in errors[0], run.describe()
        assert "Traceback" not in run.stderr and run.server_log == []
        assert sorted(p.name for p in crawl_dir.iterdir() if p.name != "bad.log") == []
    assert notes.read_bytes() == b"my notes, not a database\n" * 100


def test_a_bad_log_level_or_redis_database_is_refused(webserver: WebServer, tmp_path: Path, redis_url: str) -> None:
    """Two that are checked elsewhere: the log level from the environment (read before
    SpiTag's checks: the settings module refuses it), and a Redis database the server
    does not have (bad input, exit 2, not an unreachable server)."""
    webserver.add_site("bad.test", DictSite({"/": "<html><body>never asked</body></html>"}))
    for case, settings, env, words in (
        ("log", {}, {"SPITAG_LOG_LEVEL": "LOUD"}, ["SPITAG_LOG_LEVEL", "LOUD"]),
        ("db", {"SPITAG_FRONTIER": redis_url.rsplit("/", 1)[0] + "/99"}, {}, ["frontier", "no such Redis database"]),
    ):
        crawl_dir = tmp_path / case
        run = run_crawl(webserver, crawl_dir, "http://bad.test/", store=crawl_dir / "store.db",
                        settings=settings, env=env, name="bad")
        assert run.returncode == 2, run.describe()
        errors = run.error_lines()
        assert len(errors) == 1 and all(w in errors[0] for w in words), run.describe()
        assert "Traceback" not in run.stderr and run.server_log == []
        assert sorted(p.name for p in crawl_dir.iterdir() if p.name != "bad.log") == []


def test_overlong_crawl_name_is_refused(webserver: WebServer, tmp_path: Path) -> None:
    run = run_crawl(webserver, tmp_path / "crawl", "http://bad.test/", crawl="x" * 300, name="bad")
    assert run.returncode == 2 and "crawl name" in run.error_lines()[0]
    assert run.server_log == []


def test_credentials_in_seeds_are_used_but_never_shown(webserver: WebServer, tmp_path: Path) -> None:
    site = DictSite({"/": '<html><body><a href="/private">p</a></body></html>',
                     "/private": "<html><body>members only</body></html>"})
    webserver.add_site("auth.test", site)
    run = run_crawl(webserver, tmp_path, "http://alice:s3cr3t@auth.test/", name="auth")
    assert run.returncode == 0, run.describe()
    assert "s3cr3t" not in run.stderr
    assert "s3cr3t" not in (tmp_path / "auth.jsonl").read_text()
    assert "s3cr3t" not in (tmp_path / "auth.db").read_bytes().decode("latin-1")
    urls = {json.loads(line)["url"] for line in (tmp_path / "auth.jsonl").open()}
    assert urls == {"http://auth.test/", "http://auth.test/private"}
    # the credentials were sent, to that host only, as HTTP basic authentication
    assert webserver.headers_for("auth.test", "/")["Authorization"].startswith("Basic ")


def test_an_output_file_that_cannot_be_written_is_refused(webserver: WebServer, tmp_path: Path) -> None:
    """``-O`` into a file taken for a folder, or onto a folder: Scrapy failed on every
    item (a traceback each) and exited 0. Now one error line, exit 2, nothing written."""
    webserver.add_site("bad.test", DictSite({"/": "<html><body>never asked</body></html>"}))
    (tmp_path / "afile").write_text("a file, not a folder")
    (tmp_path / "afolder.jsonl").mkdir()
    for out, words in ((tmp_path / "afile" / "x.jsonl", ["afile is a file, not a folder"]),
                       (tmp_path / "afolder.jsonl", ["afolder.jsonl is a folder, not a file"])):
        crawl_dir = tmp_path / f"crawl-{out.name}"
        crawl_dir.mkdir()
        cmd = crawl_command("http://bad.test/", out, store=crawl_dir / "store.db", frontier=crawl_dir / "f.db")
        run = subprocess.run(cmd, cwd=REPO, env=proxy_env(webserver), stdin=subprocess.DEVNULL,
                             capture_output=True, text=True, timeout=120)
        assert run.returncode == 2, run.stderr[-3000:]
        errors = [line for line in run.stderr.splitlines() if line.startswith("spitag: error:")]
        assert len(errors) == 1 and all(w in errors[0] for w in words), run.stderr[-3000:]
        assert "Traceback" not in run.stderr
        assert list(crawl_dir.iterdir()) == []
    assert webserver.log == []


def test_commands_refuse_a_frontier_or_crawl_that_does_not_exist(webserver: WebServer, tmp_path: Path) -> None:
    """``scrapy stop`` and ``inject`` on a SQLite frontier file that is not there (a typo,
    another folder) created an empty one and said they had done it; ``stop`` of a crawl
    the frontier does not have said so too. ``inject`` may start a new crawl, and says so."""
    def command(*args: str, frontier: Path) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "scrapy", *args, "-s", f"SPITAG_FRONTIER=sqlite:///{frontier}"],
                              cwd=REPO, env=proxy_env(webserver), stdin=subprocess.DEVNULL,
                              capture_output=True, text=True, timeout=120)

    missing = tmp_path / "typo-frontier.db"
    for args in (("stop", "-a", "crawl=c"), ("inject", "-a", "crawl=c", "http://bad.test/")):
        run = command(*args, frontier=missing)
        assert run.returncode == 2 and "spitag: error: no frontier at" in run.stderr, run.stderr[-2000:]
        assert not missing.exists()
    webserver.add_site("bad.test", DictSite({"/": "<html><body>a page</body></html>"}))
    crawled = run_crawl(webserver, tmp_path / "crawl", "http://bad.test/", crawl="real")
    assert crawled.returncode == 0, crawled.describe()
    frontier = tmp_path / "crawl" / "crawl-frontier.db"
    run = command("stop", "-a", "crawl=raal", frontier=frontier)
    assert run.returncode == 2 and "crawl 'raal' has nothing in frontier" in run.stderr, run.stderr[-2000:]
    run = command("inject", "-a", "crawl=raal", "http://bad.test/other", frontier=frontier)
    assert run.returncode == 0 and "the seeds start a new crawl" in run.stderr, run.stderr[-2000:]
    run = command("inject", "-a", "crawl=real", "http://bad.test/other", frontier=frontier)
    assert run.returncode == 0 and "new crawl" not in run.stderr, run.stderr[-2000:]
