"""SpiTag's own signals (sent through ``crawler.signals``)."""

from __future__ import annotations

#: A store batch was committed. Arguments: ``urls`` (list[str]), ``spider``.
#: The scheduler acknowledges those URLs in the frontier only then.
batch_stored = object()

#: A request ended without an item to store (e.g. forbidden by robots.txt).
#: Arguments: ``url`` (str), ``spider``. The scheduler acknowledges it at once.
url_settled = object()

#: The scheduler opened its frontier. Arguments: ``frontier``. Components that need
#: it (the politeness middleware) keep a reference.
frontier_opened = object()
