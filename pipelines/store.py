"""The store pipeline of SpiTag's crawls (``spitag.pipeline``; SpiTag's spider brings it)."""

from spitag.pipeline import StorePipeline, is_page_record

__all__ = ["StorePipeline", "is_page_record"]
