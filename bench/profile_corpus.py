"""How the 600 real pages look to spitag.extract, and what a profile costs.

    python bench/profile_corpus.py [--pages-dir DIR] [--corpus DIR] [--no-extruct]

Unpacks ``real-pages.tar.gz`` (from --corpus, $SPITAG_CORPUS or <repo>/../shared/corpus)
into a temporary folder unless --pages-dir points at an unpacked ``pages/``. Prints:

* the distribution: pages with each syntax (count > 0), with no structured syntax at
  all (``meta`` aside), and with nothing;
* the time of ``profile_html`` per page (decode + one parse + every syntax; its own
  ``Profile.seconds``): median, p95, p99, max, total; also with ``keep_data=False``;
* the same for plain ``extruct.extract(body, base_url, errors="ignore")`` with all its
  syntaxes (mf2py unpatched, as extruct users run it) and the ratio extruct / ours.

Pages are profiled one after the other in this process; the machine's load shows in
the figures (run it on an idle machine to compare runs).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
import tarfile
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterator

REPO_ROOT = Path(__file__).resolve().parents[1]
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

import extruct  # noqa: E402
import mf2py.backcompat  # noqa: E402

from spitag import extract  # noqa: E402
from spitag.extract import SYNTAXES, profile_html  # noqa: E402

LABELS = {
    "json-ld": "JSON-LD",
    "opengraph": "OpenGraph",
    "twitter": "Twitter",
    "microdata": "microdata",
    "microformat": "microformats",
    "rdfa": "RDFa",
    "dublincore": "Dublin Core",
    "meta": "other <meta>",
}


def pages_folder(args: argparse.Namespace, stack: list[Any]) -> Path:
    if args.pages_dir:
        return Path(args.pages_dir)
    corpus = Path(args.corpus or os.environ.get("SPITAG_CORPUS") or REPO_ROOT.parent / "shared" / "corpus")
    archive = corpus / "real-pages.tar.gz"
    if not archive.is_file():
        sys.exit(f"corpus not found: {archive} (use --corpus, $SPITAG_CORPUS or --pages-dir)")
    tmp = tempfile.TemporaryDirectory(prefix="spitag-pages-")
    stack.append(tmp)
    with tarfile.open(archive) as tar:
        tar.extractall(tmp.name, filter="data")
    return Path(tmp.name) / "pages"


def percentile(sorted_values: list[float], q: float) -> float:
    """Nearest-rank percentile of an ascending list."""
    index = max(0, min(len(sorted_values) - 1, math.ceil(q * len(sorted_values)) - 1))
    return sorted_values[index]


def timing_line(name: str, seconds: list[float]) -> str:
    s = sorted(seconds)
    return (
        f"{name:<28} median {statistics.median(s) * 1000:7.1f} ms   p95 {percentile(s, 0.95) * 1000:7.1f} ms"
        f"   p99 {percentile(s, 0.99) * 1000:7.1f} ms   max {s[-1] * 1000:7.1f} ms   total {sum(s):6.1f} s"
    )


@contextmanager
def mf2py_unpatched() -> Iterator[None]:
    """Plain extruct as its users run it: mf2py without spitag's lazy-copy patch."""
    patched = mf2py.backcompat._make_classes_rule
    mf2py.backcompat._make_classes_rule = extract.ORIGINAL_MF2PY_CLASSES_RULE
    try:
        yield
    finally:
        mf2py.backcompat._make_classes_rule = patched


def timed(fn: Callable[[], Any]) -> float:
    started = time.perf_counter()
    fn()
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages-dir", help="an unpacked pages/ folder (has manifest.jsonl)")
    parser.add_argument("--corpus", help="folder holding real-pages.tar.gz")
    parser.add_argument("--no-extruct", action="store_true", help="skip the plain extruct timing")
    args = parser.parse_args()
    stack: list[Any] = []
    folder = pages_folder(args, stack)
    with open(folder / "manifest.jsonl", encoding="utf-8") as lines:
        entries = [json.loads(line) for line in lines if line.strip()]
    pages = [(e["file"], e["url"], (folder / e["file"]).read_bytes()) for e in entries]
    n = len(pages)
    print(f"{n} pages, {sum(len(b) for _, _, b in pages) / 1e6:.1f} MB, from {folder}")

    profiles = [profile_html(body, url) for _, url, body in pages]
    ours = [p.seconds for p in profiles]
    lean = [profile_html(body, url, keep_data=False).seconds for _, url, body in pages]

    print("\npages with (count > 0):")
    for syntax in ("json-ld", "opengraph", "twitter", "microdata", "microformat", "rdfa", "dublincore", "meta"):
        having = sum(1 for p in profiles if p.counts[syntax] > 0)
        items = sum(p.counts[syntax] for p in profiles)
        print(f"  {LABELS[syntax]:<18} {having:4d}  {having / n:6.1%}   ({items} in all)")
    structured = [s for s in SYNTAXES if s != "meta"]
    no_structured = sum(1 for p in profiles if not any(p.counts[s] for s in structured))
    nothing = sum(1 for p in profiles if p.counts["total"] == 0)
    print(f"  {'none (meta aside)':<18} {no_structured:4d}  {no_structured / n:6.1%}")
    print(f"  {'nothing at all':<18} {nothing:4d}  {nothing / n:6.1%}")
    errors = [(f, p.errors) for (f, _, _), p in zip(pages, profiles) if p.errors]
    print(f"  pages with errors: {len(errors)} {errors}")

    print("\ntime per page:")
    print(timing_line("spitag profile_html", ours))
    print(timing_line("  keep_data=False", lean))
    if not args.no_extruct:
        with mf2py_unpatched():
            naive = [
                timed(lambda body=body, url=url: extruct.extract(body, base_url=url, errors="ignore"))
                for _, url, body in pages
            ]
        print(timing_line("plain extruct.extract()", naive))
        print(
            f"extruct / ours: median x{statistics.median(naive) / statistics.median(ours):.1f}, "
            f"p95 x{percentile(sorted(naive), 0.95) / percentile(sorted(ours), 0.95):.1f}, "
            f"total x{sum(naive) / sum(ours):.1f}"
        )
    for tmp in stack:
        tmp.cleanup()


if __name__ == "__main__":
    main()
