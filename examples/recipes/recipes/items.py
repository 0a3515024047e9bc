"""The project's own item: one recipe found on a page SpiTag crawled."""

import scrapy


class RecipeItem(scrapy.Item):
    url = scrapy.Field()          # the page it was found on
    name = scrapy.Field()
    ingredients = scrapy.Field()  # how many the recipe lists
    total_time = scrapy.Field()   # as the page wrote it (ISO 8601 duration), or None
