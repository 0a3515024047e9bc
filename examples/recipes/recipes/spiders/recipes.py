"""SpiTag's spider, extended: its own callback for recipe pages, its own items.

    scrapy crawl recipes -a seeds=https://example.org/ -O pages-and-recipes.jsonl

Every page still gets SpiTag's page record (stored, scored, its links followed in
SpiTag's order): ``super().parse(response)`` gives it. Recipe pages also give a
``RecipeItem`` for each schema.org Recipe in their JSON-LD.
"""

from spitag.items import is_page_record
from spitag.spider import SpitagSpider

from recipes.items import RecipeItem


class RecipeSpider(SpitagSpider):
    name = "recipes"

    def frontier_request(self, entry, combine=None):
        """Each request is built here from the frontier's entry (also after a resume, on
        any worker): pages under /recipes/ go to this spider's own callback."""
        request = super().frontier_request(entry, combine)
        if "/recipes/" in entry.url:
            return request.replace(callback=self.parse_recipe)
        return request

    async def parse_recipe(self, response):
        # ``async for``: the page is profiled in SpiTag's worker processes; a plain
        # ``for`` works too (the page is then profiled in this process).
        async for output in super().parse(response):
            yield output
            if is_page_record(output):
                for recipe in recipes_in(output.get("data") or {}):
                    yield RecipeItem(
                        url=output["url"],
                        name=recipe.get("name"),
                        ingredients=len(recipe.get("recipeIngredient") or []),
                        total_time=recipe.get("totalTime"),
                    )


def recipes_in(data):
    """The schema.org Recipe objects of a page's JSON-LD (top level or in an @graph)."""
    for node in data.get("json-ld") or []:
        for thing in node.get("@graph", [node]) if isinstance(node, dict) else []:
            kinds = thing.get("@type") if isinstance(thing, dict) else None
            if kinds == "Recipe" or (isinstance(kinds, list) and "Recipe" in kinds):
                yield thing
