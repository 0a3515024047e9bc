"""Pathological pages for the extraction budget: megabytes of markup the costly
extractors walk item by item (pyRdfa, extruct's microdata), to show that a page is
cut off at ``SPITAG_EXTRACT_BUDGET`` / ``SPITAG_EXTRACT_MEMORY`` instead of holding a
profile worker for minutes and a gigabyte."""

from __future__ import annotations

MB = 2**20


def _page(head: str, unit: str, size: int, open_tag: str = "<div>") -> str:
    start = f"<!doctype html><html><head><title>heavy</title>{head}</head><body>{open_tag}"
    end = "</div></body></html>"
    n = max((size - len(start) - len(end)) // len(unit.format(i=99999)), 1)
    return start + "".join(unit.format(i=i) for i in range(n)) + end


def rdfa_page(size: int = 5 * MB) -> str:
    """``size`` bytes of sibling RDFa nodes, each a typed subject with two properties."""
    return _page(
        "", '<div typeof="Thing" resource="#n{i}"><span property="name">node {i}</span>'
            '<span property="description">the {i}th node</span></div>',
        size, '<div vocab="https://schema.org/">',
    )


def microdata_page(size: int = 5 * MB) -> str:
    """``size`` bytes of sibling microdata items, each with two properties."""
    return _page(
        "", '<div itemscope itemtype="https://schema.org/Thing"><span itemprop="name">item {i}</span>'
            '<span itemprop="description">the {i}th item</span></div>',
        size,
    )
