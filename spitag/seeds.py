"""The ``seeds`` argument: a comma-separated list of URLs, or the path of a seed file.

A value without ``://`` is a file with one URL per line; blank lines and ``#`` comments
are skipped. Every seed is normalized; the first bad one stops the crawl before it
starts, with a message that names it (and its line in a seed file).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from spitag.errors import BadInputError
from spitag.urls import BadURLError, host_of, normalize_url, redact


def raw_seeds(value: str | None) -> list[str]:
    """The seed texts as given (for the credentials some carry), before normalization."""
    if value is None or not value.strip():
        return []
    value = value.strip()
    if "://" in value:
        return [part.strip() for part in value.split(",") if part.strip()]
    try:
        return [text for _, text in _read_seed_file(Path(value)) if text.strip()]
    except BadInputError:
        return []


def load_seeds(value: str | None) -> list[str]:
    """Normalized, de-duplicated seed URLs in the order given; BadInputError otherwise."""
    if value is None or not value.strip():
        raise BadInputError("no seeds: pass -a seeds=URL1,URL2 or -a seeds=path/to/seeds.txt")
    value = value.strip()
    if "://" in value:
        entries = [(None, part) for part in value.split(",")]
        where = "seed"
    else:
        entries = list(_read_seed_file(Path(value)))
        where = f"seed file {value}"
    seeds: list[str] = []
    for line_no, raw in entries:
        text = raw.strip()
        if not text:
            if line_no is None:
                raise BadInputError(f"empty seed in the list {value!r} (two commas in a row?)")
            continue
        try:
            url = normalize_url(text)
        except BadURLError as exc:
            place = f"{where}, line {line_no}" if line_no else where
            raise BadInputError(redact(f"bad {place}: {exc}")) from None
        if url not in seeds:
            seeds.append(url)
    if not seeds:
        raise BadInputError(f"no seeds found in {where}")
    return seeds


def _read_seed_file(path: Path):
    try:
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise BadInputError(
            f"seed file not found: {path} (a seeds value without '://' is read as a file)"
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise BadInputError(f"cannot read seed file {path}: {exc}") from None
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if stripped.startswith("#"):
            continue
        yield number, stripped.split(" #", 1)[0]


def default_crawl_id(seeds: list[str]) -> str:
    """A stable name for a crawl from its seeds: first seed's host + digest of them all."""
    digest = hashlib.md5("\n".join(sorted(seeds)).encode(), usedforsecurity=False).hexdigest()
    return f"{host_of(seeds[0])}-{digest[:8]}"
