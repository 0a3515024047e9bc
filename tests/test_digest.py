from __future__ import annotations

import re

from spitag.digest import md5_hex, md5dia_hex, strip_diacritics


def test_md5_of_empty_body_is_still_32_hex() -> None:
    assert re.fullmatch(r"[0-9a-f]{32}", md5_hex(b""))
    assert md5_hex(b"") == "d41d8cd98f00b204e9800998ecf8427e"


def test_md5dia_ignores_accents_and_whitespace() -> None:
    assert strip_diacritics("Příliš  žluťoučký\n kůň") == "Prilis zlutoucky kun"
    assert md5dia_hex("Příliš žluťoučký kůň") == md5dia_hex("Prilis   zlutoucky kun")
    assert md5dia_hex("Příliš") != md5dia_hex("Prilis kun")


def test_md5dia_survives_lone_surrogates() -> None:
    assert re.fullmatch(r"[0-9a-f]{32}", md5dia_hex("bad \udcff text"))
