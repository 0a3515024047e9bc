"""Which discovered URLs a crawl follows: scope, domain lists, Nutch-style rules, limits
and the spider-trap guard. Every rejection has a reason, counted in the stats as
``spitag/filtered/<reason>``.

Rules, in the order they are applied (the first that rejects gives the reason):

* ``url_length`` — longer than ``SPITAG_MAX_URL_LENGTH``;
* ``forbidden_domain`` / ``not_allowed_domain`` — ``SPITAG_FORBIDDEN_DOMAINS`` and
  ``SPITAG_ALLOWED_DOMAINS`` (a domain covers its subdomains; when allowed domains are
  given they replace the seed-derived scope);
* ``scope`` — outside ``SPITAG_SCOPE`` (domain / host / any) of the seeds;
* ``suffix`` — the path ends with a suffix of ``SPITAG_SUFFIX_RULES`` (e.g. ``.zip``);
* ``extension`` — the path ends with an extension of ``SPITAG_SKIP_EXTENSIONS``: by
  default Scrapy's ``IGNORED_EXTENSIONS`` (images, audio, video, office documents,
  PDFs, archives, scripts, style sheets: what its link extractors leave out), files
  with no HTML, so no semantic markup, that would cost downloads and page budget;
* ``prefix`` — ``SPITAG_PREFIX_RULES`` lists the prefixes a URL must start with;
* ``regex`` — ``SPITAG_REGEX_RULES``, Nutch's regex-urlfilter: ``+pattern`` accepts,
  ``-pattern`` rejects, the first matching line wins, a URL no line matches is rejected;
* ``depth`` — deeper than ``SPITAG_MAX_DEPTH``;
* ``trap_repeat`` / ``trap_chain`` — the trap guard (see ``TrapGuard``).

Rule values are lists, comma-separated strings or ``@path`` of a file (one rule per
line, ``#`` comments).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from scrapy.linkextractors import IGNORED_EXTENSIONS

from spitag.errors import BadInputError
from spitag.urls import Scope, host_of

if TYPE_CHECKING:
    from spitag.options import Options

_DIGITS = re.compile(r"\d+")


def read_rules(setting: str, value: Any) -> list[str]:
    """A rule list from a list, a comma-separated string or ``@path`` to a file."""
    if value is None or value == "":
        return []
    if isinstance(value, (list, tuple)):
        lines = [str(v) for v in value]
    elif isinstance(value, str) and value.startswith("@"):
        try:
            lines = Path(value[1:]).read_text(encoding="utf-8").splitlines()
        except OSError as exc:
            raise BadInputError(f"{setting}: cannot read rule file {value[1:]}: {exc}") from None
    elif isinstance(value, str):
        lines = value.split(",")
    else:
        raise BadInputError(f"{setting} must be a list, a comma-separated string or @file")
    return [line.strip() for line in lines if line.strip() and not line.strip().startswith("#")]


def domain_rules(setting: str, value: Any) -> list[str]:
    """A domain list (``read_rules``) in which each rule is a bare host or domain name:
    a URL (``http://example.com/``) or a port would never match a host, and so would
    allow nothing, or forbid nothing, without a word."""
    names = []
    for rule in read_rules(setting, value):
        if rule.startswith("[") and rule.endswith("]"):  # an IPv6 address, as in a URL
            names.append(rule[1:-1])
        elif any(c in "/?#@:\\" or c.isspace() for c in rule):
            raise BadInputError(f"{setting}: {rule!r} is not a domain name (write example.com, not a URL)")
        else:
            names.append(rule)
    return names


def skip_extensions(value: Any) -> frozenset[str]:
    """``SPITAG_SKIP_EXTENSIONS`` as dotted, lower-case extensions: a rule list
    (``pdf, .zip`` or ``@file``) in which ``default`` stands for Scrapy's
    ``IGNORED_EXTENSIONS``; ``none`` or empty: no extension is skipped."""
    found: set[str] = set()
    for rule in read_rules("SPITAG_SKIP_EXTENSIONS", value):
        word = rule.lower().lstrip(".")
        if word == "default":
            found.update(IGNORED_EXTENSIONS)
        elif word == "none":
            continue
        elif not word or "/" in word or any(c.isspace() for c in word):
            raise BadInputError(f"SPITAG_SKIP_EXTENSIONS: {rule!r} is not a file extension")
        else:
            found.add(word)
    return frozenset(f".{word}" for word in found)


# -- readers of the settings (spitag.options) ------------------------------------------
def rules_setting(name: str, raw: Any, _: Any = None) -> list[str]:
    return read_rules(name, raw)


def domains_setting(name: str, raw: Any, _: Any = None) -> list[str]:
    return domain_rules(name, raw)


def extensions_setting(name: str, raw: Any, _: Any = None) -> frozenset[str]:
    return skip_extensions(raw)


def regex_setting(name: str, raw: Any, _: Any = None) -> list[str]:
    rules = read_rules(name, raw)
    for rule in rules:
        compile_rule(rule)
    return rules


def compile_rule(rule: str) -> tuple[bool, re.Pattern[str]]:
    """A Nutch regex rule: ``+pattern`` accepts, ``-pattern`` rejects."""
    if rule[0] not in "+-":
        raise BadInputError(f"SPITAG_REGEX_RULES: a rule starts with + or -, not {rule!r}")
    try:
        return rule[0] == "+", re.compile(rule[1:])
    except re.error as exc:
        raise BadInputError(f"SPITAG_REGEX_RULES: bad pattern {rule[1:]!r}: {exc}") from None


def _domain_matches(host: str, domains: frozenset[str]) -> bool:
    parts = host.split(".")
    return any(".".join(parts[i:]) in domains for i in range(len(parts)))


@dataclass
class TrapGuard:
    """Bounded pages for spider traps, none lost on an ordinary large site.

    * ``trap_repeat``: a path segment repeated ``max_repeats`` times or more
      (``/a/a/a/…``, ``/x/y/x/y/x/y``: ever-growing relative links).
    * ``trap_chain``: a *URL shape* (host + path and query with every number written
      ``0``: ``/cal?m=0&y=0``) reached at a depth more than ``max_chain`` layers below
      the first depth it was seen at. An infinite calendar is one chain of ever deeper
      pages of one shape; a site of numbered pages (``/p/1.html`` … ``/p/5000.html``)
      linked from index pages stays within a few layers, however many there are.

    Session ids in links are removed by normalization (``SPITAG_SESSION_PARAMS``).
    """

    max_repeats: int = 3
    max_chain: int = 30
    first_depth: dict[tuple[str, str], int] = field(default_factory=dict)

    def reason(self, url: str, depth: int) -> str | None:
        parts = urlsplit(url)
        segments = [s for s in parts.path.split("/") if s]
        if segments and Counter(segments).most_common(1)[0][1] >= self.max_repeats:
            return "trap_repeat"
        shape = (parts.netloc, _DIGITS.sub("0", f"{parts.path}?{parts.query}"))
        first = self.first_depth.setdefault(shape, depth)
        if depth < first:
            self.first_depth[shape] = depth
        elif depth - first > self.max_chain:
            return "trap_chain"
        return None


class UrlFilter:
    """Decides whether a discovered URL is followed; see the module docstring."""

    def __init__(
        self,
        scope: Scope,
        *,
        max_url_length: int = 2048,
        allowed_domains: list[str] = (),
        forbidden_domains: list[str] = (),
        suffixes: list[str] = (),
        extensions: frozenset[str] = frozenset(),
        prefixes: list[str] = (),
        regex_rules: list[str] = (),
        max_depth: int | None = None,
        traps: TrapGuard | None = None,
    ) -> None:
        self.scope = scope
        self.max_url_length = max_url_length
        self.allowed = frozenset(d.lower().lstrip(".") for d in allowed_domains)
        self.forbidden = frozenset(d.lower().lstrip(".") for d in forbidden_domains)
        self.suffixes = tuple(s.lower() for s in suffixes)
        self.extensions = tuple(extensions)  # dotted: ".pdf", ".tar.gz"
        self.prefixes = tuple(prefixes)
        self.regex = [compile_rule(rule) for rule in regex_rules]
        self.max_depth = max_depth
        self.traps = traps or TrapGuard()

    @classmethod
    def from_options(cls, options: Options, scope: Scope) -> UrlFilter:
        return cls(
            scope,
            max_url_length=options.max_url_length,
            allowed_domains=options.allowed_domains,
            forbidden_domains=options.forbidden_domains,
            suffixes=options.suffix_rules,
            extensions=options.skip_extensions,
            prefixes=options.prefix_rules,
            regex_rules=options.regex_rules,
            max_depth=options.max_depth,
            traps=TrapGuard(max_repeats=options.trap_max_repeats, max_chain=options.trap_max_chain),
        )

    def reason(self, url: str, depth: int) -> str | None:
        """None when ``url`` (normalized, found at ``depth``) may be followed, else why not."""
        if len(url) > self.max_url_length:
            return "url_length"
        host = host_of(url)
        if self.forbidden and _domain_matches(host, self.forbidden):
            return "forbidden_domain"
        if self.allowed:
            if not _domain_matches(host, self.allowed):
                return "not_allowed_domain"
        elif not self.scope.allows(url):
            return "scope"
        if self.suffixes or self.extensions:
            path = urlsplit(url).path.lower()
            if self.suffixes and path.endswith(self.suffixes):
                return "suffix"
            if self.extensions and path.endswith(self.extensions):
                return "extension"
        if self.prefixes and not url.startswith(self.prefixes):
            return "prefix"
        if self.regex:
            for accept, pattern in self.regex:
                if pattern.search(url):
                    if not accept:
                        return "regex"
                    break
            else:
                return "regex"
        if self.max_depth is not None and depth > self.max_depth:
            return "depth"
        trap = self.traps.reason(url, depth)
        if trap:
            return trap
        return None
