"""The Lua scripts of the Redis frontier, loaded from ``lua/`` at start.

Each script is one atomic operation. A file may begin with ``--! uses: a b c``: the
shared fragments (``lua/a.lua`` …) put before it, in that order — ``common`` (the key
prefix, Redis' clock, priority codes, a host's buckets, parents and records), ``rank``
(the crawl's host ranking), ``fn_host`` (a host's place in the pop order), and the
``fn_*`` helpers a few scripts share.
"""

from __future__ import annotations

from functools import cache
from importlib import resources

USES = "--! uses:"


@cache
def source(name: str) -> str:
    """The whole text of script ``name``: its fragments, then its own lines."""
    text = resources.files(__package__).joinpath("lua", f"{name}.lua").read_text(encoding="utf-8")
    parts = []
    for line in text.splitlines():
        if line.startswith(USES):
            parts += [source(fragment) for fragment in line[len(USES):].split()]
    return "\n".join(parts + [text])
