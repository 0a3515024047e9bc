"""One encoding for every page: the text of a body, even when its label lies.

Scrapy decodes a body by its HTTP header, BOM, or ``<meta charset>``, in that order,
replacing undecodable bytes. Two common lies are corrected:

* the body is valid UTF-8 (with multi-byte characters) but labelled as a single-byte
  encoding (ISO-8859-1, windows-1252…): valid UTF-8 is almost never an accident, so
  it is decoded as UTF-8;
* the label (usually the header) does not decode the body, but the page's own
  ``<meta charset>`` does: the page is trusted.

What cannot be decided from the bytes is left as Scrapy decoded it.
"""

from __future__ import annotations

import codecs
from typing import TYPE_CHECKING

from w3lib.encoding import html_body_declared_encoding, resolve_encoding

if TYPE_CHECKING:
    from scrapy.http import TextResponse

SINGLE_BYTE = {"latin-1", "iso8859-1", "cp1252", "iso8859-15", "ascii"}
REPLACEMENT = "\ufffd"


def _name(encoding: str | None) -> str:
    if not encoding:
        return ""
    try:
        return codecs.lookup(resolve_encoding(encoding) or encoding).name
    except LookupError:
        return encoding.lower()


def _strict(body: bytes, encoding: str) -> str | None:
    try:
        return body.decode(encoding)
    except (UnicodeDecodeError, LookupError):
        return None


def decode_text(response: TextResponse) -> tuple[str, str]:
    """(text, encoding) of a text response, correcting a mislabelled encoding."""
    body = response.body
    text, encoding = response.text, response.encoding
    if not body or body.isascii():
        return text, encoding
    current = _name(encoding)
    if current != "utf-8" and current in SINGLE_BYTE:
        utf8 = _strict(body, "utf-8")
        if utf8 is not None:
            return utf8, "utf-8"
    if REPLACEMENT in text and REPLACEMENT.encode() not in body:
        declared = html_body_declared_encoding(body)
        for candidate in (declared, "utf-8"):
            if candidate and _name(candidate) != current:
                decoded = _strict(body, resolve_encoding(candidate) or candidate)
                if decoded is not None:
                    return decoded, _name(candidate)
    return text, encoding
