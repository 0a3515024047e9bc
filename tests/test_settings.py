"""The settings table (spitag.options): each setting declared once, and what comes of it —
where a value may come from and which wins, its check, the refusal of a name that is
not declared, and the reference in docs/settings.md."""

from __future__ import annotations

from pathlib import Path

import pytest
from scrapy.settings import Settings

from spitag import options as table
from spitag.errors import BadInputError
from spitag.options import SETTINGS, Options, reference
from spitag.spider import SpitagSpider

REPO = Path(__file__).resolve().parents[1]


def crawl_settings(module: dict | None = None, custom: dict | None = None, cmdline: dict | None = None) -> Settings:
    """Settings as a crawl of a spider derived from SpiTag's has them: the project's
    module, the spider's ``custom_settings``, ``-s``."""
    s = Settings()
    s.setmodule("settings", priority="project")
    s.setdict(module or {}, priority="project")
    spider = type("Mine", (SpitagSpider,), {"name": "mine", "custom_settings": custom or {}})
    spider.update_settings(s)
    s.setdict(cmdline or {}, priority="cmdline")
    return s


def test_every_default_is_a_valid_value() -> None:
    options = Options(crawl_settings(), environ={})
    assert options.store == "sqlite:///spitag.db" and options.frontier == "sqlite:///spitag-frontier.db"
    assert options.max_unscored == 64  # empty: twice CONCURRENT_REQUESTS (SpiTag's 32)
    assert options.max_depth is None and options.page_budget is None
    assert options.host_delay == 1.0  # empty: DOWNLOAD_DELAY, SpiTag's polite default for the real web
    for setting in SETTINGS:
        assert setting.name.startswith("SPITAG_") and setting.help and setting.kind.takes


def test_command_line_then_spider_then_environment_then_project_then_default() -> None:
    name = "SPITAG_STORE_BATCH"
    assert Options(crawl_settings(), environ={}).store_batch == 200
    assert Options(crawl_settings(module={name: 7}), environ={}).store_batch == 7
    assert Options(crawl_settings(module={name: 7}), environ={name: "8"}).store_batch == 8
    assert Options(crawl_settings(module={name: 7}, custom={name: 9}), environ={name: "8"}).store_batch == 9
    assert Options(crawl_settings(custom={name: 9}, cmdline={name: "10"}), environ={name: "8"}).store_batch == 10


def test_every_setting_can_come_from_the_environment(monkeypatch) -> None:
    monkeypatch.setenv("SPITAG_SCOPE", "host")
    monkeypatch.setenv("SPITAG_FRONTIER", "redis://127.0.0.1:1/0")
    options = Options(crawl_settings())
    assert (options.scope, options.frontier) == ("host", "redis://127.0.0.1:1/0")
    for setting in SETTINGS:  # (each, from the environment alone, as its default reads)
        if setting.default not in (None, ""):
            Options(crawl_settings(), environ={setting.name: str(setting.default)})


def test_redis_url_is_the_frontier_when_spitag_frontier_is_not_given() -> None:
    assert Options(crawl_settings(), environ={"REDIS_URL": "redis://h:1/2"}).frontier == "redis://h:1/2"
    assert Options(crawl_settings(cmdline={"REDIS_URL": "redis://h:1/3"}), environ={}).frontier == "redis://h:1/3"
    given = {"SPITAG_FRONTIER": "sqlite:///f.db", "REDIS_URL": "redis://h:1/2"}
    assert Options(crawl_settings(), environ=given).frontier == "sqlite:///f.db"


@pytest.mark.parametrize("where", ["cmdline", "module", "custom", "environment"])
def test_an_unknown_name_is_refused_with_the_name_it_resembles(where: str) -> None:
    typo = {"SPITAG_STRATEGEY": "bfs"}
    settings = crawl_settings(**{where: typo}) if where != "environment" else crawl_settings()
    with pytest.raises(BadInputError, match=r"SPITAG_STRATEGEY \(did you mean SPITAG_STRATEGY\?\)"):
        Options(settings, environ=typo if where == "environment" else {})
    with pytest.raises(BadInputError, match="unknown setting SPITAG_NOTHING_LIKE_IT .*docs/settings.md"):
        Options(crawl_settings(cmdline={"SPITAG_NOTHING_LIKE_IT": "1"}), environ={})
    Options(crawl_settings(), environ={"SPITAG_CORPUS": "/x"})  # the tests' own variable


def test_a_removed_setting_is_named_with_what_replaced_it(monkeypatch) -> None:
    monkeypatch.setitem(table.REMOVED, "SPITAG_OLD_KNOB", "replaced by SPITAG_HOST_K")
    with pytest.raises(BadInputError, match="SPITAG_OLD_KNOB is no longer read: replaced by SPITAG_HOST_K"):
        Options(crawl_settings(cmdline={"SPITAG_OLD_KNOB": "1"}), environ={})


@pytest.mark.parametrize("name, value, message", [
    ("SPITAG_STORE_BATCH", "0", "must be at least 1"),
    ("SPITAG_STORE_BATCH", "many", "is not a whole number"),
    ("SPITAG_LEASE_SECONDS", "inf", "is not a finite number"),
    ("SPITAG_KEEP_DATA", "2", "is not a boolean"),
    ("SPITAG_SCOPE", "planet", "is not one of: domain, host, any"),
    ("SPITAG_STORE", "  ", "must be a non-empty string"),
    ("SPITAG_PROGRESS_INTERVAL", "0.1", "0 \\(no progress line\\) or at least 0.5"),
    ("SPITAG_RECRAWL_MIN_INTERVAL", "1e9", "above SPITAG_RECRAWL_MAX_INTERVAL"),
    ("SPITAG_EXTRACT_PROCESSES", "lots", "auto or a whole number"),
])
def test_a_bad_value_names_its_setting(name: str, value: str, message: str) -> None:
    with pytest.raises(BadInputError, match=f"{name}.*{message}|{message}"):
        Options(crawl_settings(cmdline={name: value}), environ={})


def test_the_reference_in_the_docs_is_the_table() -> None:
    """docs/settings.md is generated: ``python -m spitag.options > docs/settings.md``."""
    assert (REPO / "docs" / "settings.md").read_text(encoding="utf-8") == reference()
