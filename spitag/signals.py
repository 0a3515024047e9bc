"""SpiTag's own signals (sent through ``crawler.signals``)."""

from __future__ import annotations

#: A store batch was committed. Arguments: ``urls`` (list[str]), ``spider``.
#: The scheduler acknowledges those URLs in the frontier only then.
batch_stored = object()

#: A request ended without an item to store (e.g. forbidden by robots.txt).
#: Arguments: ``url`` (str), ``spider``. The scheduler acknowledges it at once.
url_settled = object()

#: A request was not sent: its host is down (``spitag.politeness.HostDown``).
#: Arguments: ``url`` (str), ``spider``. The scheduler hands its lease back: the URL
#: stays queued, for when the host is tried again.
url_set_aside = object()

#: A request failed and its URL waits, still leased, to be tried again later
#: (``spitag.retry``). Arguments: ``url`` (str), ``seconds`` (until it is due). The
#: scheduler stops renewing its lease and leaves it to the frontier, which queues it
#: again when the lease runs out.
url_retry_later = object()

#: The scheduler opened its frontier. Arguments: ``frontier``. Components that need
#: it (the politeness middleware) keep a reference.
frontier_opened = object()
