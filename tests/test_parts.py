"""SpiTag's parts come with SpiTag's spider (spitag.parts): a spider derived from it keeps
them whatever its own custom_settings say, another spider of the project is plain
Scrapy, and a command line that would drop one is refused before the crawl."""

from __future__ import annotations

import pytest
from scrapy import Spider
from scrapy.crawler import Crawler
from scrapy.settings import Settings
from scrapy.utils.misc import load_object

from spitag import parts
from spitag.errors import BadInputError
from spitag.pipeline import StorePipeline
from spitag.preflight import check_input
from spitag.spider import SpitagSpider


USERS = "scrapy.pipelines.files.FilesPipeline"


class Plain(Spider):
    name = "plain"


class Mine(SpitagSpider):
    name = "mine"
    custom_settings = {
        "ITEM_PIPELINES": {USERS: 400},  # (a pipeline of the user's)
        "USER_AGENT": "mine/1.0",
        "CONCURRENT_REQUESTS_PER_DOMAIN": 2,
    }


def project(cmdline: dict | None = None) -> Settings:
    settings = Settings()
    settings.setmodule("settings", priority="project")
    settings.setdict(cmdline or {}, priority="cmdline")
    return settings


def components(settings: Settings, name: str) -> dict:
    return {load_object(k) if isinstance(k, str) else k: v for k, v in settings.getwithbase(name).items()}


def test_another_spider_of_the_project_is_plain_scrapy() -> None:
    settings = Crawler(Plain, project()).settings
    assert settings["SCHEDULER"] == "scrapy.core.scheduler.Scheduler"
    assert dict(settings.getwithbase("ITEM_PIPELINES")) == {}
    assert settings["USER_AGENT"].startswith("Scrapy/") and settings.getbool("REDIRECT_ENABLED")
    extensions = {getattr(c, "__module__", c) for c in components(settings, "EXTENSIONS")}
    assert not any(str(m).startswith("spitag") for m in extensions)


def test_spitags_spider_brings_its_parts() -> None:
    settings = Crawler(SpitagSpider, project()).settings
    assert settings["SCHEDULER"] == "spitag.scheduler.FrontierScheduler"
    assert components(settings, "ITEM_PIPELINES") == {StorePipeline: 300}
    assert not settings.getbool("REDIRECT_ENABLED") and settings.getbool("HTTPERROR_ALLOW_ALL")
    assert settings["USER_AGENT"].startswith("SpiTag/") and settings.getint("CONCURRENT_REQUESTS") == 32
    middlewares = components(settings, "DOWNLOADER_MIDDLEWARES")
    assert middlewares[load_object("scrapy.downloadermiddlewares.retry.RetryMiddleware")] is None
    assert middlewares[load_object("spitag.politeness.PolitenessMiddleware")] == 990


def test_a_derived_spider_keeps_them_beside_its_own_custom_settings() -> None:
    settings = Crawler(Mine, project()).settings
    assert components(settings, "ITEM_PIPELINES") == {StorePipeline: 300, load_object(USERS): 400}
    assert settings["SCHEDULER"] == "spitag.scheduler.FrontierScheduler"
    assert settings["USER_AGENT"] == "mine/1.0" and settings.getint("CONCURRENT_REQUESTS_PER_DOMAIN") == 2
    # the project's settings win over SpiTag's defaults, not over its required parts
    settings = Crawler(Mine, project({"CONCURRENT_REQUESTS": 7, "REDIRECT_ENABLED": True})).settings
    assert settings.getint("CONCURRENT_REQUESTS") == 7 and settings.getbool("REDIRECT_ENABLED")


def test_a_command_line_that_drops_a_part_is_refused() -> None:
    """``scrapy crawl`` applies ``-s`` once more after the spider merged its parts: a
    component list given there replaces SpiTag's, and the crawl is refused before it
    starts instead of running without them."""
    seeds = {"seeds": "http://a.test/"}
    check_input(parts.as_crawled(project(), SpitagSpider), seeds)
    with pytest.raises(BadInputError, match="ITEM_PIPELINES must keep spitag.pipeline.StorePipeline"):
        check_input(parts.as_crawled(project({"ITEM_PIPELINES": {}}), SpitagSpider), seeds)
    dropped = project({"DOWNLOADER_MIDDLEWARES": {"scrapy.downloadermiddlewares.cookies.CookiesMiddleware": 700}})
    with pytest.raises(BadInputError, match="DOWNLOADER_MIDDLEWARES given on the command line.*PolitenessMiddleware"):
        check_input(parts.as_crawled(dropped, SpitagSpider), seeds)
    kept = {"ITEM_PIPELINES": {"spitag.pipeline.StorePipeline": 300, USERS: 400}}
    check_input(parts.as_crawled(project(kept), SpitagSpider), seeds)
