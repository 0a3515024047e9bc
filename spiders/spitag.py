"""The project's ``spitag`` spider: SpiTag's, as it comes (``spitag.spider``).

    scrapy crawl spitag -a seeds=URL1,URL2 [-a crawl=NAME] -O pages.jsonl
"""

from spitag.spider import SpitagSpider as _SpitagSpider


class SpitagSpider(_SpitagSpider):
    name = "spitag"
