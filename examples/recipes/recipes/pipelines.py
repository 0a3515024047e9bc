"""The project's own pipeline, after SpiTag's store: recipes into a CSV file.

SpiTag's store takes its page records and passes everything else on; this pipeline
takes the recipes and passes everything on (to the feed export too)."""

import csv

from recipes.items import RecipeItem


class RecipeCsvPipeline:
    FIELDS = ["url", "name", "ingredients", "total_time"]

    def __init__(self, path):
        self.path = path
        self.file = None
        self.writer = None

    @classmethod
    def from_crawler(cls, crawler):
        return cls(crawler.settings.get("RECIPES_CSV", "recipes.csv"))

    def open_spider(self, spider=None):
        self.file = open(self.path, "w", newline="", encoding="utf-8")
        self.writer = csv.DictWriter(self.file, fieldnames=self.FIELDS)
        self.writer.writeheader()

    def close_spider(self, spider=None):
        self.file.close()

    def process_item(self, item, spider=None):
        if isinstance(item, RecipeItem):
            self.writer.writerow({field: item.get(field) for field in self.FIELDS})
        return item
