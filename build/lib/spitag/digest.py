"""Content digests of the RAINBOW Page table.

* ``md5``: MD5 of the body bytes as received (after content decoding): exact copies.
* ``md5dia``: MD5 of the visible text after Unicode NFKD with combining marks dropped
  and whitespace collapsed: copies that differ only in accents, encoding or markup.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata


def md5_hex(data: bytes) -> str:
    """32 lower-case hex digits; an empty body has a digest too."""
    return hashlib.md5(data, usedforsecurity=False).hexdigest()


def strip_diacritics(text: str) -> str:
    """NFKD, combining marks dropped, whitespace collapsed: 'Příliš  žluťoučký' → 'Prilis zlutoucky'."""
    if not text.isascii():
        # Only the non-ASCII runs need decomposing (ASCII is its own NFKD and has no
        # combining marks): one '©' no longer sends the whole page through a loop.
        text = _NON_ASCII.sub(_bare, text)
    return " ".join(text.split())


_NON_ASCII = re.compile(r"[^\x00-\x7f]+")


def _bare(match: re.Match[str]) -> str:
    decomposed = unicodedata.normalize("NFKD", match.group(0))
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


def md5dia_hex(visible_text: str) -> str:
    """Digest of the visible text without diacritics (surrogates dropped, never raises)."""
    return md5_hex(strip_diacritics(visible_text).encode("utf-8", "ignore"))
