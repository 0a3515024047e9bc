"""Scrapy's own settings that a crawl depends on, checked before it starts.

Scrapy reads them where it uses them: ``CONCURRENT_REQUESTS=abc`` or
``RETRY_TIMES=abc`` stops a crawl with a traceback after it has begun,
``CONCURRENT_REQUESTS_PER_DOMAIN=0`` makes it wait for ever, a ``LOG_FILE`` or an
``-O`` file in a folder that cannot exist fails at start-up or page after page. Here
each is a ``BadInputError`` naming the setting, before anything is written.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import unquote, urlsplit

from scrapy.utils.misc import load_object

from spitag.options import FLAG, number
from spitag.errors import BadInputError

if TYPE_CHECKING:
    from scrapy.settings import BaseSettings

# name → (kind, minimum): what Scrapy would take, with a floor that lets a crawl run
NUMBERS: dict[str, tuple[type, float]] = {
    "CONCURRENT_REQUESTS": (int, 1),
    "CONCURRENT_REQUESTS_PER_DOMAIN": (int, 1),
    "CONCURRENT_REQUESTS_PER_IP": (int, 0),
    "CONCURRENT_ITEMS": (int, 1),
    "DOWNLOAD_TIMEOUT": (float, 0.001),
    "DOWNLOAD_MAXSIZE": (int, 0),
    "DOWNLOAD_WARNSIZE": (int, 0),
    "RETRY_TIMES": (int, 0),
    "DEPTH_LIMIT": (int, 0),
    "CLOSESPIDER_TIMEOUT": (float, 0),
    "CLOSESPIDER_TIMEOUT_NO_ITEM": (float, 0),
    "CLOSESPIDER_ITEMCOUNT": (int, 0),
    "CLOSESPIDER_PAGECOUNT": (int, 0),
    "CLOSESPIDER_PAGECOUNT_NO_ITEM": (int, 0),
    "CLOSESPIDER_ERRORCOUNT": (int, 0),
}
STORE_PIPELINE = "spitag.pipeline.StorePipeline"


def check_scrapy_settings(settings: BaseSettings) -> None:
    for name, (kind, minimum) in NUMBERS.items():
        if settings.get(name) is not None:
            number(name, settings.get(name), kind, minimum)
    number("DOWNLOAD_DELAY", settings.get("DOWNLOAD_DELAY", 0), float, 0)
    if FLAG.parse("AUTOTHROTTLE_ENABLED", settings.get("AUTOTHROTTLE_ENABLED"), settings):
        # (Scrapy would turn AutoThrottle off without a word)
        number("AUTOTHROTTLE_TARGET_CONCURRENCY", settings.get("AUTOTHROTTLE_TARGET_CONCURRENCY"), float, 0.01)
        number("AUTOTHROTTLE_START_DELAY", settings.get("AUTOTHROTTLE_START_DELAY"), float, 0)
        number("AUTOTHROTTLE_MAX_DELAY", settings.get("AUTOTHROTTLE_MAX_DELAY"), float, 0)
    log_file = settings.get("LOG_FILE")
    if log_file:
        check_output_path("LOG_FILE", Path(str(log_file)))
    for uri in settings.getdict("FEEDS"):
        path = local_feed_path(str(uri))
        if path is not None:
            check_output_path(f"feed {uri}", path, make_folders=True)
    check_store_pipeline(settings)
    key = settings.get("REDIS_START_URLS_KEY")
    try:
        key % {"name": "spitag", "crawl": "crawl"}
    except (KeyError, ValueError, TypeError):
        raise BadInputError(
            f"setting REDIS_START_URLS_KEY={key!r} may name %(name)s and %(crawl)s, nothing else"
        ) from None


def check_output_path(what: str, path: Path, *, make_folders: bool = False) -> None:
    """A file that may be written: not a folder, in a writable folder. With
    ``make_folders`` (Scrapy's feed storage makes the missing ones) the nearest
    existing parent must be a writable folder; without (a log file), the file's own."""
    path = path.expanduser()
    if path.is_dir():
        raise BadInputError(f"{what}: {path} is a folder, not a file")
    if path.exists():
        if not os.access(path, os.W_OK):
            raise BadInputError(f"{what}: {path} is not writable")
        return
    parent = path.absolute().parent
    if not make_folders and not parent.exists():
        raise BadInputError(f"{what}: folder {parent} does not exist")
    check_output_folder(what, parent)


def check_output_folder(what: str, path: Path) -> None:
    """A folder that may be written into: one already, or one that can be made (the
    nearest existing parent is a writable folder)."""
    nearest = path.expanduser().absolute()
    while not nearest.exists():
        nearest = nearest.parent
    if not nearest.is_dir():
        raise BadInputError(f"{what}: {nearest} is a file, not a folder")
    if not os.access(nearest, os.W_OK):
        raise BadInputError(f"{what}: folder {nearest} is not writable")


def local_feed_path(uri: str) -> Path | None:
    """The file a feed URI names on this machine (a path or ``file://``), its
    placeholders (``%(name)s``, ``%(time)s``) cut off with what follows them; None for
    another storage (``s3://``, ``ftp://``, ``stdout:``)."""
    if "%(" in uri:
        uri = uri[: uri.index("%(")]
        uri = uri[: uri.rfind("/") + 1] + "placeholder"
    parts = urlsplit(uri)
    if parts.scheme == "file":
        return Path(unquote(parts.path))
    if parts.scheme and len(parts.scheme) > 1:  # (a Windows drive letter is not a scheme)
        return None
    return Path(uri)


def check_store_pipeline(settings: BaseSettings) -> None:
    """The frontier acknowledges a page once the store pipeline has committed it: a
    crawl without it would hold every lease until it expired, and fetch it again."""
    for path, order in settings.getwithbase("ITEM_PIPELINES").items():
        if order is None:
            continue
        try:
            cls = load_object(path) if isinstance(path, str) else path
        except (ImportError, NameError, ValueError, AttributeError) as exc:
            raise BadInputError(f"ITEM_PIPELINES: cannot load {path!r}: {exc}") from None
        if isinstance(cls, type) and issubclass(cls, load_object(STORE_PIPELINE)):
            return
    raise BadInputError(
        f"ITEM_PIPELINES must keep {STORE_PIPELINE} (or a subclass): the frontier"
        " acknowledges a page once it is stored"
    )
