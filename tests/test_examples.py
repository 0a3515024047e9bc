"""The example project (examples/recipes): a Scrapy project of its own that extends
SpiTag's spider with its own callback, items and pipeline. Crawled end to end over a
local site of real recipe pages, with an async and a sync override of the callback
(the sync one iterates ``super().parse`` with a plain ``for``) and profile workers on."""

from __future__ import annotations

import csv
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from lxml import html as lxml_html

from testbed.webserver import DictSite, Response, WebServer
from tests.support.crawl import REPO, log_records, parse_stats, proxy_env, read_jsonl, sqlite_url

EXAMPLE = REPO / "examples" / "recipes"
RECIPE_PAGES = ["flawlessfood.co.uk.olive.html", "elavegan.com-Peanut.html", "chefkoch.de.mandarinen.html"]
OTHER_PAGE = "nestle-family-com-chicken.html"  # under /about/: not sent to the recipe callback

SYNC_SPIDER = '''
from recipes.items import RecipeItem
from recipes.spiders.recipes import RecipeSpider, recipes_in
from spitag.items import is_page_record
from spitag.spider import SpitagSpider


class Mine(SpitagSpider):
    """The first subclass a Scrapy user writes."""
    name = "mine"

    def parse(self, response):
        for output in super().parse(response):
            yield output


class SyncRecipeSpider(RecipeSpider):
    name = "recipes-sync"

    def parse_recipe(self, response):
        for output in super().parse(response):
            yield output
            if is_page_record(output):
                for recipe in recipes_in(output.get("data") or {}):
                    yield RecipeItem(url=output["url"], name=recipe.get("name"),
                                     ingredients=len(recipe.get("recipeIngredient") or []),
                                     total_time=recipe.get("totalTime"))
'''


def jsonld_recipes(body: bytes) -> list[dict]:
    """The test's own reading of a page's recipes: every JSON-LD script, parsed."""
    found = []
    for script in lxml_html.fromstring(body).xpath('//script[@type="application/ld+json"]/text()'):
        try:
            data = json.loads(script)
        except ValueError:
            continue
        for node in data if isinstance(data, list) else [data]:
            for thing in node.get("@graph", [node]) if isinstance(node, dict) else []:
                kinds = thing.get("@type") if isinstance(thing, dict) else None
                if kinds == "Recipe" or (isinstance(kinds, list) and "Recipe" in kinds):
                    found.append(thing)
    return found


@pytest.fixture(scope="module")
def installed_spitag(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``pip install .`` of this folder (the package ``spitag`` alone, no dependencies:
    the test's environment has them) into a folder of its own."""
    source = tmp_path_factory.mktemp("source")  # (a build writes build/ and *.egg-info beside its source)
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy(REPO / name, source / name)
    shutil.copytree(REPO / "spitag", source / "spitag", ignore=shutil.ignore_patterns("__pycache__"))
    target = tmp_path_factory.mktemp("site-packages")
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target", str(target), str(source)],
                   check=True, stdin=subprocess.DEVNULL, timeout=600)
    return target


def test_pip_installs_spitag_alone(installed_spitag: Path) -> None:
    from spitag import __version__

    names = {p.name for p in installed_spitag.iterdir() if not p.name.endswith(".dist-info")}
    assert names == {"spitag"}  # the project's settings/, spiders/, pipelines/ stay here
    assert (installed_spitag / f"spitag-{__version__}.dist-info").is_dir()
    lua = {p.name for p in (installed_spitag / "spitag" / "frontier" / "redis" / "lua").glob("*.lua")}
    assert lua == {p.name for p in (REPO / "spitag" / "frontier" / "redis" / "lua").glob("*.lua")} and lua


@pytest.mark.parametrize("spider", ["recipes", "recipes-sync", "mine"])
def test_the_example_project_extends_spitag(spider: str, real_pages_dir: Path, webserver: WebServer,
                                            tmp_path: Path, installed_spitag: Path) -> None:
    project = tmp_path / "recipes"
    shutil.copytree(EXAMPLE, project)
    (project / "recipes" / "spiders" / "sync_recipes.py").write_text(SYNC_SPIDER, encoding="utf-8")
    bodies = {f"/recipes/{i}.html": (real_pages_dir / name).read_bytes() for i, name in enumerate(RECIPE_PAGES)}
    bodies["/about/chicken.html"] = (real_pages_dir / OTHER_PAGE).read_bytes()
    home = "".join(f'<a href="{path}">{path}</a> ' for path in bodies)
    site = DictSite({"/": Response.html(f"<html><head><title>Recipes</title></head><body>{home}</body></html>")})
    for path, body in bodies.items():
        site.add(path, Response.html(body))
    webserver.add_site("recipes.test", site)
    rules = tmp_path / "rules.txt"  # the home page and these pages, none of their own links
    rules.write_text("+^http://recipes\\.test/$\n" + "".join(
        f"+^http://recipes\\.test{path.replace('.', '[.]')}$\n" for path in bodies), encoding="utf-8")
    out, csv_path, store = tmp_path / "out.jsonl", tmp_path / "recipes.csv", tmp_path / "store.db"
    cmd = [sys.executable, "-m", "scrapy", "crawl", spider, "-a", "seeds=http://recipes.test/", "-O", str(out),
           "-s", f"SPITAG_STORE={sqlite_url(store)}", "-s", f"SPITAG_FRONTIER={sqlite_url(tmp_path / 'f.db')}",
           "-s", f"SPITAG_REGEX_RULES=@{rules}", "-s", "SPITAG_EXTRACT_PROCESSES=1",
           "-s", f"RECIPES_CSV={csv_path}", "-s", "RETRY_TIMES=0",
           "-s", "CONCURRENT_REQUESTS_PER_DOMAIN=4", "-s", "DOWNLOAD_DELAY=0"]  # (a local site)
    # SpiTag as installed by pip, not this folder: the project finds it on its path
    env = proxy_env(webserver, {"PYTHONPATH": str(installed_spitag), "SCRAPY_SETTINGS_MODULE": None})
    run = subprocess.run(cmd, cwd=project, env=env, stdin=subprocess.DEVNULL, capture_output=True,
                         text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    records = log_records(run.stderr)
    assert not [r for r in records if " ERROR: " in r.splitlines()[0]], run.stderr[-3000:]
    from spitag import __version__

    assert f"started (bot: recipes, SpiTag {__version__})" in records[0], records[0]

    items = read_jsonl(out)
    pages = {item["url"]: item for item in items if "crawl" in item}
    recipes = [item for item in items if "crawl" not in item]
    assert set(pages) == {"http://recipes.test/"} | {f"http://recipes.test{path}" for path in bodies}
    assert all(page["status"] == 200 for page in pages.values())
    expected = sorted(
        (f"http://recipes.test{path}", recipe.get("name"), len(recipe.get("recipeIngredient") or []))
        for path, body in bodies.items() if path.startswith("/recipes/") for recipe in jsonld_recipes(body)
    ) if spider != "mine" else []
    assert spider == "mine" or len(expected) >= len(RECIPE_PAGES)
    assert sorted((r["url"], r["name"], r["ingredients"]) for r in recipes) == expected
    assert not jsonld_recipes(bodies["/about/chicken.html"]) or all(
        r["url"] != "http://recipes.test/about/chicken.html" for r in recipes)  # own callback only for /recipes/
    with csv_path.open(encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert sorted((r["url"], r["name"], int(r["ingredients"])) for r in rows) == expected

    stats = parse_stats(run.stderr)
    assert stats["spitag/store/pages_new"] == str(len(pages))
    assert stats.get("spitag/store/other_items", "0") == str(len(recipes))
    closing = [line for line in log_records(run.stderr) if "progress at close" in line]
    assert closing and f"{len(pages)} pages" in closing[-1], closing
