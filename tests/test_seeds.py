from __future__ import annotations

from pathlib import Path

import pytest

from spitag.errors import BadInputError
from spitag.seeds import load_seeds


def test_comma_list_is_normalized_and_deduplicated() -> None:
    assert load_seeds("HTTP://A.example/,http://a.example:80/, https://b.example/x#y") == [
        "http://a.example/",
        "https://b.example/x",
    ]


def test_seed_file_skips_blanks_and_comments(tmp_path: Path) -> None:
    path = tmp_path / "seeds.txt"
    path.write_text("# my seeds\n\nhttp://a.example/\n  https://b.example/  # inline\n")
    assert load_seeds(str(path)) == ["http://a.example/", "https://b.example/"]


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (None, "no seeds"),
        ("", "no seeds"),
        ("ftp://a.example/", "ftp://a.example/"),
        ("http://a.example/,,http://b.example/", "empty seed"),
        ("http://a.example/,javascript://x", "javascript://x"),
        ("http://:80/", "http://:80/"),
    ],
)
def test_bad_seeds_are_named(value: str | None, message: str) -> None:
    with pytest.raises(BadInputError, match=message.replace("/", "/")):
        load_seeds(value)


def test_bad_line_in_seed_file_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "seeds.txt"
    path.write_text("http://a.example/\n\nnot a url\n")
    with pytest.raises(BadInputError, match="line 3"):
        load_seeds(str(path))


def test_missing_or_empty_seed_file(tmp_path: Path) -> None:
    with pytest.raises(BadInputError, match="not found"):
        load_seeds(str(tmp_path / "nope.txt"))
    empty = tmp_path / "empty.txt"
    empty.write_text("# nothing\n\n")
    with pytest.raises(BadInputError, match="no seeds"):
        load_seeds(str(empty))
