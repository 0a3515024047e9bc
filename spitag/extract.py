"""The semantic profile of one page: how much structured data of each syntax it carries.

Every page goes through here, so the work is bounded and shared: the body is cut at
``MAX_BYTES``, decoded once, parsed once by lxml (extruct's DOM-flavoured HTML parser,
so pyRdfa can walk the same tree), and every syntax runs on that one tree, each in its
own ``try`` so that one failing syntax never costs the others (its name goes to
``Profile.errors``). extruct's top-level ``extract()`` is not used: it parses again per
call and loses a whole syntax on the first error.

Counts (``Profile.counts``; ``total`` is the sum of the eight):

* ``json-ld``: every ``<script type="application/ld+json">`` (type compared
  case-insensitively, parameters ignored) is decoded on its own. Lists are flattened
  (recursively); each non-empty top-level object counts 1, except that an object with
  ``@graph`` counts its graph members instead (each member counted by the same rule,
  so nested graphs flatten too), plus 1 for itself only if it has its own ``@type``.
  Decoding is lenient like extruct (``json.loads(strict=False)``, then jstyleson after
  dropping a leading HTML/JS comment line) and a bit more: leading/trailing
  ``<!-- -->`` and ``<![CDATA[ ]]>`` wrappers, trailing ``;`` and several JSON values
  in a row are accepted. A blank script is nothing (no error); a script nothing can be
  read from puts ``"json-ld"`` in ``errors`` while the other scripts still count.
* ``microdata``: number of top-level items of extruct's MicrodataExtractor
  (items that are not the value of another item's property).
* ``rdfa``: number of subject nodes of extruct's RDFaExtractor (pyRdfa) that carry
  an ``@type`` or at least one *own* RDFa property. Not own: properties in the XHTML
  vocabulary (``rel="license"``, ``role=...``), ``rdfa:usesVocabulary``, OpenGraph /
  Facebook / Twitter namespaces (counted under opengraph/twitter already), WordPress'
  ``<link rel="https://api.w.org/">`` discovery links, and unresolved CURIEs such as
  ``al:ios:url`` (IRIs whose scheme is not http/https). So a page with no RDFa, or
  with only OpenGraph ``<meta property>`` tags, counts 0.
* ``opengraph``: number of (property, content) pairs extruct's OpenGraphExtractor
  reports: ``<meta property content>`` children of ``<head>`` in the og, article,
  book, profile, music, video, product namespaces or a namespace declared in a
  ``prefix`` attribute (e.g. ``fb:``).
* ``twitter``: ``<meta>`` tags whose ``name`` or ``property`` starts with
  ``twitter:`` (case-insensitive) and whose ``content`` is not blank.
* ``dublincore``: elements + terms of extruct's DublinCoreExtractor whose ``name``
  (meta) or ``rel`` (link) is namespaced Dublin Core: the part before the first ``.``
  is ``dc``, ``dcterms`` or a prefix declared by ``<link rel="schema.X"
  href="http://purl.org/dc/...">`` (``DC.title``, ``dcterms.modified``,
  ``DC.date.issued``). extruct also reports bare ``<meta name="description">`` etc.;
  those are plain meta here.
* ``meta``: other ``<meta>`` tags with a non-blank ``content`` and a key (the first of
  ``name``, ``property``, ``http-equiv``, ``itemprop``) that does not start with
  ``og:``, ``fb:``, ``article:``, ``book:``, ``profile:``, ``music:``, ``video:``,
  ``product:``, ``twitter:`` or a Dublin Core prefix and ``.`` (``dc.``, ``dcterms.``,
  declared ones); a ``twitter:`` name or property anywhere on the tag makes it
  twitter. ``<meta charset>`` alone does not count. An OpenGraph-looking tag the
  OpenGraph extractor does not take (``fb:app_id`` without a ``prefix``
  declaration, ``<meta name="og:...">``) counts nowhere.
* ``microformat``: number of top-level items mf2py (via extruct's
  MicroformatExtractor) returns: mf2 ``h-*`` roots and classic roots (hentry,
  vcard, vevent, hreview, ...).

``Profile.properties`` (detail): json-ld, property values (keys not starting with
``@``; a list value counts each element) over all objects, nested objects included;
microdata / microformat, property values over all items, nested items included;
rdfa, own property values of the counted nodes; opengraph, twitter, meta, dublincore,
same as the count.

Shortcuts (only pages without the syntax skip work; tests/test_extract_corpus.py checks
that counts equal those derived from plain extruct on the 600-page corpus):

* pyRdfa runs only when some element has ``typeof`` or ``vocab``, or a
  ``property``/``rel``/``rev`` token is an http(s) IRI outside the ignored namespaces
  or a CURIE whose prefix resolves (RDFa initial context, ``prefix`` or ``xmlns:``
  declarations) to a namespace outside them: OpenGraph-only pages pay nothing. It then
  walks only the subtrees that carry RDFa attributes (``_prune_for_rdfa``).
* mf2py runs only when some ``class`` token is an mf2py root (its ``h-*`` pattern or a
  classic root name), and reads only the outermost roots (``microformat_document``),
  not the whole page. mf2py's classic-root rule is patched to copy lazily
  (``_patch_mf2py``: identical output, ~6x faster on WordPress ``hentry`` pages).
  The tree keeps comments (as extruct's does), so ``e-*`` HTML keeps them too.
* The Dublin Core extractor runs only when a ``<meta name>`` or ``<link rel>`` has a
  Dublin Core prefix (``dc.``, ``dcterms.``, or one declared by a ``schema.X`` link).

Bounds: bodies are cut at ``MAX_BYTES`` (10 MB) before parsing; libxml2's huge-tree
mode keeps pages deeper than 256 levels (up to its 2048 limit) instead of dropping
their rest. Microdata or microformat items nested more than ``MAX_ITEM_NESTING``
deep are not extracted (the syntax goes to ``errors``): extruct's microdata is about
n^4 and mf2py's classic rules quadratic in that depth. pyRdfa stops with a
RecursionError on trees deeper than Python's stack (an "rdfa" error).

profile_tree writes into the tree it is given (the RDFa step removes the subtrees
without RDFa and pyRdfa rewrites attributes, the Dublin Core extractor adds ``URI``
attributes; both run last): profile a tree nobody reads afterwards.
"""

from __future__ import annotations

import json
import logging
import re
import time
import warnings
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urljoin, urlsplit

import jstyleson
import lxml.etree
import lxml.html
from extruct.dublincore import DublinCoreExtractor
from extruct.jsonld import HTML_OR_JS_COMMENTLINE
from extruct.microformat import MicroformatExtractor
from extruct.opengraph import OpenGraphExtractor
from extruct.rdfa import RDFaExtractor
from extruct.w3cmicrodata import MicrodataExtractor
from extruct.xmldom import DomHtmlMixin, XmlDomHTMLParser
from pyRdfa.initialcontext import initial_context
from w3lib.encoding import html_to_unicode, resolve_encoding

from spitag import compat, cutoff

try:  # mf2py hands our HTML to BeautifulSoup, which warns about XHTML pages
    from bs4 import MarkupResemblesLocatorWarning, XMLParsedAsHTMLWarning

    warnings.filterwarnings("ignore", category=XMLParsedAsHTMLWarning)
    warnings.filterwarnings("ignore", category=MarkupResemblesLocatorWarning)
except ImportError:  # pragma: no cover - bs4 comes with mf2py
    pass

logger = logging.getLogger(__name__)

SYNTAXES = ("json-ld", "microdata", "rdfa", "opengraph", "twitter", "meta", "microformat", "dublincore")
COUNT_KEYS = SYNTAXES + ("total",)

MAX_BYTES = 10 * 1024 * 1024  # longer bodies are cut before parsing (the caller flags it)
PATCH_MF2PY = True  # see spitag.compat.patch_mf2py
ROOTS_MARK = "data-spitag-roots"  # on microformat_document's <body>: see compat.patch_mf2py
CLASSIC_MAP = compat.mf2py_classic_map()  # mf2py's classic root classes (hentry, vcard, …)
MAX_ITEM_NESTING = 32  # deeper microdata / microformat item nesting is not extracted (error)


@dataclass
class Profile:
    """What one page carries. ``counts`` has exactly COUNT_KEYS; ``properties`` and
    ``data`` are per syntax (see the module docstring); ``errors`` lists the syntaxes
    whose extraction failed; ``text`` is the visible text (whitespace collapsed);
    ``links`` are (absolute http(s) URL without fragment, lower-cased rel or "") of
    every ``<a href>`` / ``<area href>`` in document order; ``refresh`` and
    ``canonical`` are absolute; ``seconds`` is the time the profile took; ``skipped``
    lists the syntaxes left out because the page's extraction budget was spent, ``cut``
    those interrupted while running past it or past the memory bound (``cut_by``:
    "time" or "memory"); ``rss`` the resident bytes of the process after the profile."""

    counts: dict[str, int]
    properties: dict[str, int]
    data: dict[str, Any] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    title: str | None = None
    text: str = ""
    links: list[tuple[str, str]] = field(default_factory=list)
    refresh: str | None = None
    robots: str = ""
    canonical: str | None = None
    seconds: float = 0.0
    skipped: list[str] = field(default_factory=list)
    cut: list[str] = field(default_factory=list)
    cut_by: str | None = None
    rss: int = 0
    normalized: bool = False  # links, refresh and canonical normalized (spitag.profile_worker.ProfileJob)
    md5dia: str | None = None  # of ``text``, when computed with the profile

    @property
    def incomplete(self) -> list[str]:
        """The syntaxes not fully extracted: skipped or cut, in extraction order."""
        return [s for s in COSTLY if s in self.skipped or s in self.cut]


def empty_profile() -> Profile:
    """All-zero profile: what an empty or unparsable body gets."""
    return Profile(counts=dict.fromkeys(COUNT_KEYS, 0), properties=dict.fromkeys(SYNTAXES, 0))


# --------------------------------------------------------------------------- parsing

_XML_DECL = re.compile(r"\s*<\?xml[^>]*>", re.I)


def _parser() -> XmlDomHTMLParser:
    """A parser for one document. Not reused: extruct's DOM parser keeps every document
    it parsed alive (a crawl grew ~125 KB per page); a new one costs ~2 µs."""
    # huge_tree: without it libxml2 stops at depth 256 and drops the rest of the page.
    return XmlDomHTMLParser(huge_tree=True, remove_pis=True)


def _decode(body: bytes, encoding: str | None) -> str:
    """Bytes to text: the caller's encoding if Python knows it, else BOM / <meta charset> / UTF-8."""
    codec = resolve_encoding(encoding) if encoding else None
    if codec:
        try:
            return body.decode(codec, "replace")
        except (LookupError, UnicodeError, ValueError):
            pass
    return html_to_unicode(None, body)[1]


def _prepare(body: bytes | str | None, encoding: str | None, max_bytes: int) -> str:
    if not body:
        return ""
    if isinstance(body, (bytes, bytearray, memoryview)):
        text = _decode(bytes(body[:max_bytes]), encoding)
    else:
        text = str(body)[:max_bytes]
        if not text.isascii():
            try:
                text.encode("utf-8")
            except UnicodeEncodeError:  # lone surrogates: lxml would silently drop text
                text = text.encode("utf-8", "replace").decode("utf-8")
    if text.startswith("\ufeff"):
        text = text[1:]
    m = _XML_DECL.match(text)  # lxml refuses str input with an encoding declaration
    if m:
        text = text[m.end():]
    return text


def _parse_text(text: str) -> lxml.html.HtmlElement | None:
    if not text or text.isspace():
        return None
    try:
        root = lxml.etree.fromstring(text, _parser())
    except (ValueError, UnicodeError):  # e.g. lone surrogates
        try:
            root = lxml.etree.fromstring(text.encode("utf-8", "replace").decode("utf-8"), _parser())
        except Exception:
            return None
    except Exception:
        return None
    return root


def parse_html(
    body: bytes | str, encoding: str | None = None, *, max_bytes: int = MAX_BYTES
) -> lxml.html.HtmlElement | None:
    """One lxml parse of the (cut) body; None for empty/unparsable documents; never raises."""
    try:
        return _parse_text(_prepare(body, encoding, max_bytes))
    except Exception:
        logger.debug("parse_html failed", exc_info=True)
        return None


# --------------------------------------------------------------------------- helpers

_OG_PREFIXES = ("og:", "fb:", "article:", "book:", "profile:", "music:", "video:", "product:")
_DC_NAMESPACES = ("http://purl.org/dc/terms/", "http://purl.org/dc/elements/1.1/")  # as extruct
_HTTP = ("http://", "https://")
_URL_WS = re.compile(r"[\t\n\r]")
_REFRESH = re.compile(r"\s*(?:\d+(?:\.\d*)?|\.\d+)?\s*[;,]?\s*(?:url\s*=\s*)?(.*)", re.I | re.S)
_HIDDEN = frozenset(("script", "style", "template", "noscript"))
# Elements whose start/end separate words in rendered text ("<p>a</p><p>b</p>" is "a b").
_BLOCK = frozenset(
    "address article aside blockquote br dd details dialog div dl dt fieldset figcaption figure "
    "footer form h1 h2 h3 h4 h5 h6 header hr li main nav ol p pre section summary table tbody "
    "td tfoot th thead tr ul title option select textarea button label body html head".split()
)


def _collapse(text: str) -> str:
    return " ".join(text.split())


class _Resolver:
    """``urljoin`` against one base for many hrefs: the common shapes (absolute, ``//host``,
    ``/path``) by hand, the rest by urljoin, each distinct href once (a 10 MB page can
    hold 300,000 links). Gives absolute http(s) URLs without fragment, or None."""

    def __init__(self, base: str) -> None:
        self.base = base
        self.scheme = self.origin = ""
        try:
            parts = urlsplit(base)
            if parts.scheme.lower() in ("http", "https") and parts.netloc:
                self.scheme = parts.scheme.lower()
                self.origin = f"{self.scheme}://{parts.netloc}"
        except ValueError:
            pass
        self.cache: dict[str, str | None] = {}

    def __call__(self, href: str) -> str | None:
        try:
            return self.cache[href]
        except KeyError:
            url = self.cache[href] = self._resolve(href)
            return url

    def _resolve(self, href: str) -> str | None:
        href = href.strip()
        if "\t" in href or "\n" in href or "\r" in href:  # browsers drop them anywhere
            href = _URL_WS.sub("", href)
        if "/." in href:  # dot segments: leave them to urljoin
            url = None
        elif href[:8].lower().startswith(_HTTP):
            url = href
        elif href.startswith("//") and self.scheme:
            url = f"{self.scheme}:{href}"
        elif href.startswith("/") and self.origin:
            url = self.origin + href
        else:
            url = None
        if url is None:
            try:
                url = urljoin(self.base, href)
            except ValueError:
                return None
            if not url[:8].lower().startswith(_HTTP):
                return None
        return url.partition("#")[0]


def _visible_text(root: Any) -> str:
    """Text and tails outside hidden elements, a space at block boundaries.

    One iterative walk (no recursion, so any depth is fine); measured faster than an
    XPath with ancestor tests on the corpus.
    """
    parts: list[str] = []
    append = parts.append
    hidden = 0
    for event, el in lxml.etree.iterwalk(root, events=("start", "end", "comment")):
        tag = el.tag
        if event == "comment":  # not text, but its tail is
            if not hidden and el.tail:
                append(el.tail)
        elif event == "start":
            if tag in _HIDDEN:
                hidden += 1
            elif not hidden:
                if tag in _BLOCK:
                    append(" ")
                if el.text and isinstance(tag, str):  # not a comment's text
                    append(el.text)
        else:
            if tag in _HIDDEN:
                hidden -= 1
            if not hidden:
                if tag in _BLOCK:
                    append(" ")
                if el.tail and el is not root:
                    append(el.tail)
    return _collapse("".join(parts))


def _refresh_target(content: str, resolve: _Resolver) -> str | None:
    m = _REFRESH.match(content)
    target = m.group(1).strip() if m else ""
    if target[:1] in ("'", '"'):
        target = target[1:].split(target[0], 1)[0]
    if not target:
        return None
    return resolve(target)


def _jsonable(value: Any) -> Any:
    """Plain JSON types only: tuples to lists, odd scalars and keys to str."""
    if value is None or isinstance(value, (bool, int, float)):
        return value
    if isinstance(value, str):
        return str(value)  # drops lxml's smart-string subclasses
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    return str(value)


def _count_values(items: list[Any], container: str) -> int:
    """Property values over items and nested items: microdata ("properties" dict of value
    or list) and mf2 ("properties" dict of lists, plus "children")."""
    total = 0
    stack = list(items)
    while stack:
        item = stack.pop()
        if not isinstance(item, dict):
            continue
        props = item.get(container)
        if isinstance(props, dict):
            for value in props.values():
                values = value if isinstance(value, list) else [value]
                total += len(values)
                stack.extend(v for v in values if isinstance(v, dict))
        children = item.get("children")
        if isinstance(children, list):
            stack.extend(children)
    return total


# --------------------------------------------------------------------------- JSON-LD

_JSONLD_TYPE = "application/ld+json"
_DECODER = json.JSONDecoder(strict=False)
_WRAPPERS = re.compile(r"^\s*(?://\s*)?(?:<!--|<!\[CDATA\[)|(?://\s*)?(?:-->|\]\]>)\s*$")


def _loads_lenient(text: str) -> tuple[list[Any], bool]:
    """(decoded values, fully read?) for one script; never raises."""
    try:
        return [json.loads(text, strict=False)], True
    except (ValueError, RecursionError):
        pass
    try:  # extruct's own fallback: a leading comment line, then jstyleson
        return [jstyleson.loads(HTML_OR_JS_COMMENTLINE.sub("", text), strict=False)], True
    except Exception:
        pass
    cleaned = _WRAPPERS.sub("", _WRAPPERS.sub("", text))
    try:
        cleaned = jstyleson.dispose(cleaned)  # comments and trailing commas
    except Exception:
        pass
    values: list[Any] = []
    i, n = 0, len(cleaned)
    while True:
        while i < n and (cleaned[i].isspace() or cleaned[i] in ";,"):
            i += 1
        if i >= n:
            return values, bool(values)
        try:
            value, i = _DECODER.raw_decode(cleaned, i)
        except (ValueError, RecursionError):
            return values, False
        values.append(value)


def _flatten_objects(values: Any) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    stack = [values]
    while stack:
        value = stack.pop()
        if isinstance(value, list):
            stack.extend(reversed(value))
        elif isinstance(value, dict) and value:
            out.append(value)
    return out


def _jsonld_count(obj: dict[str, Any]) -> int:
    if "@graph" not in obj:
        return 1
    members = _flatten_objects(obj["@graph"])
    return sum(_jsonld_count(m) for m in members) + (1 if obj.get("@type") else 0)


def _jsonld_values(objects: list[Any]) -> int:
    total = 0
    stack: list[Any] = list(objects)
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            for key, sub in value.items():
                if not isinstance(key, str) or not key.startswith("@"):
                    total += len(sub) if isinstance(sub, list) else 1
                    stack.append(sub)
                elif key == "@graph":
                    stack.append(sub)
        elif isinstance(value, list):
            stack.extend(value)
    return total


def jsonld_counts(objects: list[Any]) -> tuple[int, int]:
    """(count, property values) of extruct-style JSON-LD output (a list of objects)."""
    flat = _flatten_objects(objects)
    return sum(_jsonld_count(o) for o in flat), _jsonld_values(flat)


def _extract_jsonld(root: Any) -> tuple[list[dict[str, Any]], bool]:
    objects: list[dict[str, Any]] = []
    broken = False
    for script in root.iter("script"):
        kind = script.get("type")
        if not kind or kind.split(";", 1)[0].strip().lower() != _JSONLD_TYPE:
            continue
        text = script.text
        if not text or text.isspace():
            continue
        values, ok = _loads_lenient(text)
        broken = broken or not ok
        objects.extend(_flatten_objects(values))
    return objects, broken


# --------------------------------------------------------------------------- RDFa

_RDFA_IGNORED_NS = (
    "http://www.w3.org/1999/xhtml/vocab#",
    "http://www.w3.org/ns/rdfa#",
    "http://ogp.me/ns",
    "https://ogp.me/ns",
    "http://opengraphprotocol.org/schema",
    "http://opengraph.org/schema",
    "http://www.facebook.com/2008/fbml",
    "https://www.facebook.com/2008/fbml",
    "https://dev.twitter.com/cards",
    "https://api.w.org/",
    "https://github.com/WP-API/",
)
# extruct.rdfa (imported above) has added its og/fb/twitter prefixes to this context.
_RDFA_CONTEXT_NS = dict(initial_context["http://www.w3.org/2011/rdfa-context/rdfa-1.1"].ns)
# Separate paths, not one union: libxml2 merges a union's node sets pairwise, checking
# every node of one against every node of the other (5 MB of RDFa nodes: 10 s in C,
# where no budget can stop it).
_RDFA_TYPED = lxml.etree.XPath("boolean(//*[@typeof or @vocab])")
_RDFA_HINTS = [lxml.etree.XPath(path) for path in ("//@property", "//@rel[contains(., ':')]", "//@rev[contains(., ':')]")]
_RDFA_DECLS = lxml.etree.XPath("//@prefix | //@*[starts-with(name(), 'xmlns:')]")
_PREFIX_DECL = re.compile(r"([^\s:]+):\s+(\S+)")


def _own_rdfa_property(key: str) -> bool:
    return not key.startswith("@") and key.startswith(_HTTP) and not key.startswith(_RDFA_IGNORED_NS)


def rdfa_counts(nodes: list[Any]) -> tuple[list[dict[str, Any]], int]:
    """(counted nodes with only own properties kept, property values) of RDFa output."""
    kept: list[dict[str, Any]] = []
    values = 0
    for node in nodes:
        if not isinstance(node, dict):
            continue
        own = {k: v for k, v in node.items() if _own_rdfa_property(k)}
        if own or node.get("@type"):
            values += sum(len(v) if isinstance(v, list) else 1 for v in own.values())
            keep = {k: v for k, v in node.items() if k in ("@id", "@type")}
            keep.update(own)
            kept.append(keep)
    return kept, values


def _rdfa_worth_running(root: Any) -> bool:
    if _RDFA_TYPED(root):
        return True
    declared: dict[str, str] | None = None
    for attr in (attr for hints in _RDFA_HINTS for attr in hints(root)):
        for token in attr.split():
            prefix, colon, rest = token.partition(":")
            if not colon:
                continue
            if rest.startswith("//"):  # an absolute IRI
                if token.startswith(_HTTP) and not token.startswith(_RDFA_IGNORED_NS):
                    return True
                continue
            if declared is None:
                declared = {}
                for decl in _RDFA_DECLS(root):
                    if decl.attrname == "prefix":
                        declared.update((p.lower(), ns) for p, ns in _PREFIX_DECL.findall(decl))
                    else:
                        declared[decl.attrname[6:].lower()] = str(decl)
            prefix = prefix.lower()
            ns = declared.get(prefix) or _RDFA_CONTEXT_NS.get(prefix)
            if ns and not ns.startswith(_RDFA_IGNORED_NS):
                return True
    return False


_RDFA_ATTRS = (
    "@about or @resource or @typeof or @property or @rel or @rev or @inlist or @datatype"
    " or @content or @vocab or @prefix or @role"
)
_RDFA_MARKED = lxml.etree.XPath(f"//*[{_RDFA_ATTRS}] | //base")
# An element with @rel/@rev and no object of its own: a descendant's @href/@src/@data
# completes its triples ("hanging rel"), so those count as RDFa attributes too.
_HANGING_REL = lxml.etree.XPath("boolean(//*[(@rel or @rev) and not(@href or @src or @resource or @data)])")
_RDFA_MARKED_HANGING = lxml.etree.XPath(f"//*[{_RDFA_ATTRS} or @href or @src or @data] | //base")
_KEEP_ALWAYS = frozenset(("head", "body"))


def _prune_for_rdfa(root: Any) -> None:
    """Drop the subtrees pyRdfa would walk for nothing: no RDFa attribute anywhere in
    them and no @property above them (whose literal their text would be part of).

    pyRdfa builds an evaluation context for every element (~30 µs each), and on most
    pages RDFa marks a few dozen elements of a thousand. A subtree without RDFa
    attributes adds no triple and changes no context but its own descendants', so the
    triples are the same (tests/test_extract_corpus.py; the 48 corpus pages that run
    pyRdfa were checked node for node); pyRdfa runs last and nothing reads the tree
    after it.
    """
    marked = (_RDFA_MARKED_HANGING if _HANGING_REL(root) else _RDFA_MARKED)(root)
    keep: set[Any] = set()  # elements with an RDFa attribute in their subtree
    for el in marked:
        while el is not None and el not in keep:
            keep.add(el)
            el = el.getparent()
    for el in keep:
        if el.get("property") is not None or any(a.get("property") is not None for a in el.iterancestors()):
            continue  # a literal: all its text and markup count
        for child in el:
            if isinstance(child.tag, str) and child not in keep and child.tag not in _KEEP_ALWAYS:
                el.remove(child)  # its tail goes too: text no @property reads


def _dom_root(root: Any) -> Any:
    """pyRdfa needs extruct's DOM-flavoured elements; re-parse a tree that lacks them."""
    if isinstance(root, DomHtmlMixin):
        return root
    return _parse_text(lxml.html.tostring(root, encoding="unicode"))


# --------------------------------------------------------------------------- others

_CLASS_VALUES = lxml.etree.XPath("//@class", smart_strings=False)
# A class token that makes an element an mf2py root: mf2py's own h-* pattern (its
# "(:?" typos included) or a classic root name; tokens are whitespace-separated.
_MF_ROOT_TOKEN = re.compile(
    r"(?<!\S)(?:h-(:?[a-z0-9]+-)?[a-z]+(:?-[a-z]+)*|"
    + "|".join(re.escape(name) for name in sorted(CLASSIC_MAP, key=len, reverse=True))
    + r")(?!\S)"
)


def _has_mf_root(root: Any) -> bool:
    return _MF_ROOT_TOKEN.search("\n".join(_CLASS_VALUES(root))) is not None  # used by tests


class _TooDeep(Exception):
    """Items nested deeper than MAX_ITEM_NESTING: the extractor would take minutes."""


_ITEMSCOPES = lxml.etree.XPath("count(//*[@itemscope])")
_DEEP_ITEMSCOPE = lxml.etree.XPath("boolean(//*[@itemscope][count(ancestor::*[@itemscope]) >= $limit])")


def _microdata_nesting_ok(root: Any) -> bool:
    """extruct's microdata costs ~n^4 in the nesting depth n of items (400 nested: 13 s)."""
    if _ITEMSCOPES(root) <= MAX_ITEM_NESTING:
        return True
    return not _DEEP_ITEMSCOPE(root, limit=MAX_ITEM_NESTING)


def _mf_nesting_ok(root: Any, roots: int) -> bool:
    """mf2py copies each classic root's subtree per nested root (200 nested hentry: 1 s).
    ``roots``: number of root class tokens on the page (a bound on the nesting)."""
    if roots <= MAX_ITEM_NESTING:
        return True
    open_roots: list[bool] = []
    depth = 0
    for event, el in lxml.etree.iterwalk(root, events=("start", "end")):
        if event == "start":
            classes = el.get("class")
            is_root = bool(classes) and _MF_ROOT_TOKEN.search(classes) is not None
            open_roots.append(is_root)
            if is_root:
                depth += 1
                if depth > MAX_ITEM_NESTING:
                    return False
        elif open_roots.pop():
            depth -= 1
    return True


def _dc_key(entry: dict[str, Any]) -> str:
    return str(entry.get("name") or entry.get("rel") or "").strip().lower()


def dublincore_counts(items: list[Any]) -> tuple[list[dict[str, Any]], int]:
    """(kept items, count) of extruct's Dublin Core output: namespaced names only."""
    out: list[dict[str, Any]] = []
    count = 0
    for item in items:
        namespaces = item.get("namespaces") or {}
        prefixes = {"dc", "dcterms"} | {str(k).lower() for k in namespaces}
        kept: dict[str, Any] = {"namespaces": namespaces}
        for part in ("elements", "terms"):
            kept[part] = [
                e
                for e in item.get(part, [])
                if "." in _dc_key(e) and _dc_key(e).split(".", 1)[0] in prefixes
            ]
            count += len(kept[part])
        if kept["elements"] or kept["terms"]:
            out.append(kept)
    return out, count


def opengraph_count(items: list[Any]) -> int:
    return sum(len(item.get("properties", [])) for item in items if isinstance(item, dict))


def counts_from_extruct(syntax: str, items: list[Any]) -> tuple[int, int]:
    """(count, property values) by this module's definitions, from extruct's own output
    for one syntax (``extruct.extract(...)[syntax]``): for comparisons with extruct."""
    if syntax == "json-ld":
        return jsonld_counts(items)
    if syntax == "microdata":
        return len(items), _count_values(items, "properties")
    if syntax == "microformat":
        return len(items), _count_values(items, "properties")
    if syntax == "rdfa":
        nodes, values = rdfa_counts(items)
        return len(nodes), values
    if syntax == "opengraph":
        count = opengraph_count(items)
        return count, count
    if syntax == "dublincore":
        count = dublincore_counts(items)[1]
        return count, count
    raise ValueError(f"extruct has no syntax {syntax!r}")


# mf2py's classic-microformat rules, made cheaper (same output): spitag.compat
ORIGINAL_MF2PY_CLASSES_RULE = compat.original_mf2py_classes_rule()
if PATCH_MF2PY:
    compat.patch_mf2py(ROOTS_MARK)

_MICRODATA = MicrodataExtractor()
_OPENGRAPH = OpenGraphExtractor()
_MICROFORMAT = MicroformatExtractor()
_DUBLINCORE = DublinCoreExtractor()
_RDFA = RDFaExtractor()


# --------------------------------------------------------------------------- profile


def profile_tree(
    tree: Any, url: str, *, keep_data: bool = True, budget: float | None = None, max_memory: int | None = None
) -> Profile:
    """Profile of an already parsed page (see the module docstring); never raises.

    ``budget`` (seconds): the costly syntaxes (microdata, microformats, RDFa: their
    extractors walk the whole tree in Python, or parse it again) do not start once the
    page has taken that long (listed in ``skipped``), and one running then is cut off
    (``cut``, ``spitag.cutoff``), so that no page holds a worker for long.
    ``max_memory`` (bytes): a costly syntax running while this process' resident
    memory grows past it is cut off too, and the later ones are skipped."""
    return _profile(tree, url, keep_data, time.perf_counter(), budget, max_memory)


def profile_html(
    body: bytes | str,
    url: str,
    *,
    encoding: str | None = None,
    keep_data: bool = True,
    max_bytes: int = MAX_BYTES,
    budget: float | None = None,
    max_memory: int | None = None,
) -> Profile:
    """Parse (once) and profile; an empty or unparsable body gives an all-zero Profile.
    ``budget`` and ``max_memory`` as for ``profile_tree`` (the parse counts against the
    budget)."""
    started = time.perf_counter()
    try:
        root = _parse_text(_prepare(body, encoding, max_bytes))
    except Exception:
        logger.debug("profile_html: parse failed for %s", url, exc_info=True)
        root = None
    return _profile(root, url, keep_data, started, budget, max_memory)


def _profile(
    tree: Any, url: str, keep_data: bool, started: float, budget: float | None = None,
    max_memory: int | None = None,
) -> Profile:
    profile = empty_profile()
    deadline = started + budget if budget else None
    try:
        if tree is not None:
            root = tree.getroot() if isinstance(tree, lxml.etree._ElementTree) else tree.getroottree().getroot()
            _fill(profile, root, url or "", keep_data, deadline, max_memory)
    except Exception:  # each part has its own guard: this is a last resort
        logger.exception("profile failed for %s", url)
    profile.counts["total"] = sum(profile.counts[s] for s in SYNTAXES)
    profile.seconds = time.perf_counter() - started
    profile.rss = cutoff.resident_bytes()
    return profile


COSTLY = ("microdata", "microformat", "rdfa")  # skipped or cut once a page's budget is spent


def _fill(
    p: Profile, root: Any, url: str, keep_data: bool, deadline: float | None = None,
    max_memory: int | None = None,
) -> None:
    """Order matters: readers first, then the extractors that write into the tree."""
    dc_hint = False
    try:
        dc_hint = _page_facts(p, root, url, keep_data)
    except Exception:
        logger.warning("page facts failed for %s", url, exc_info=True)
    try:
        p.text = _visible_text(root)
    except Exception:
        logger.warning("visible text failed for %s", url, exc_info=True)
    steps = (
        ("json-ld", _jsonld_step, True),
        ("microdata", _microdata_step, True),
        ("opengraph", _opengraph_step, True),
        ("microformat", _microformat_step, True),
        ("dublincore", _dublincore_step, dc_hint),  # writes URI attributes
        ("rdfa", _rdfa_step, True),  # pyRdfa rewrites attributes
    )
    for syntax, step, wanted in steps:
        if not wanted:
            continue
        costly = syntax in COSTLY
        if costly and (p.cut_by == "memory" or (deadline is not None and time.perf_counter() > deadline)):
            p.skipped.append(syntax)
            continue
        try:
            if costly:
                with cutoff.limits(deadline, max_memory):
                    count, values, items, broken = step(root, url)
            else:
                count, values, items, broken = step(root, url)
        except cutoff.Cut as cut:
            p.cut.append(syntax)
            p.cut_by = cut.reason
            logger.info("%s extraction of %s cut off (%s)", syntax, url, cut.reason)
            continue
        except Exception:
            logger.debug("%s extraction failed for %s", syntax, url, exc_info=True)
            p.errors.append(syntax)
            continue
        if broken:
            p.errors.append(syntax)
        p.counts[syntax], p.properties[syntax] = count, values
        if keep_data and count and items:
            try:
                p.data[syntax] = _jsonable(items)
            except Exception:  # e.g. RecursionError on absurdly nested JSON-LD: counts stay
                logger.debug("%s data not kept for %s", syntax, url, exc_info=True)


def _page_facts(p: Profile, root: Any, url: str, keep_data: bool) -> bool:
    """base, title, <meta> (twitter, meta, robots, refresh), <link>, <a>/<area>.

    Returns whether a Dublin Core name or schema link was seen."""
    counts, dc_hint = p.counts, False
    base = url
    for el in root.iter("base"):
        href = el.get("href")
        if href and href.strip():
            try:
                base = urljoin(url, href.strip())
            except ValueError:
                pass
            break
    resolve = _Resolver(base)
    title = next(root.iter("title"), None)
    if title is not None:
        p.title = _collapse(title.text_content())

    # <link>: canonical, and Dublin Core prefixes declared by <link rel="schema.X" href=DC>
    dc_prefixes = {"dc", "dcterms"}
    dotted_rels: list[str] = []
    for el in root.iter("link"):
        rel = el.get("rel")
        if not rel:
            continue
        lrel = rel.strip().lower()
        if lrel.startswith("schema.") and (el.get("href") or "").strip() in _DC_NAMESPACES:
            dc_prefixes.add(lrel[7:])
            dc_hint = True
        elif "." in lrel:
            dotted_rels.append(lrel)
        if p.canonical is None and "canonical" in lrel.split():
            href = el.get("href")
            if href is not None:
                p.canonical = resolve(href)
    if any(rel.split(".", 1)[0] in dc_prefixes for rel in dotted_rels):  # <link rel="DC.relation">
        dc_hint = True

    twitter: dict[str, str] = {}
    meta: dict[str, str] = {}
    robots: list[str] = []
    for el in root.iter("meta"):
        attrib = el.attrib
        name = attrib.get("name")
        content = attrib.get("content")
        if name:
            lname = name.strip().lower()
            if lname == "robots" and content and content.strip():
                robots.append(content.strip().lower())
            if "." in lname and lname.split(".", 1)[0] in dc_prefixes:
                dc_hint = True
        equiv = attrib.get("http-equiv")
        if (
            equiv
            and content
            and p.refresh is None
            and equiv.strip().lower() == "refresh"
            and next(el.iterancestors("noscript"), None) is None  # as Scrapy's MetaRefresh
        ):
            p.refresh = _refresh_target(content, resolve)
        if not content or content.isspace():
            continue
        prop = attrib.get("property")
        key = (name or prop or equiv or attrib.get("itemprop") or "").strip().lower()
        if not key:
            continue
        lprop = prop.strip().lower() if prop else ""
        if key.startswith("twitter:") or lprop.startswith("twitter:"):
            counts["twitter"] += 1
            twitter.setdefault(key if key.startswith("twitter:") else lprop, str(content))
        elif not key.startswith(_OG_PREFIXES) and not ("." in key and key.split(".", 1)[0] in dc_prefixes):
            counts["meta"] += 1
            meta.setdefault(key, str(content))
    p.robots = ", ".join(robots)
    p.properties["twitter"], p.properties["meta"] = counts["twitter"], counts["meta"]
    if keep_data and twitter:
        p.data["twitter"] = twitter
    if keep_data and meta:
        p.data["meta"] = meta

    links = p.links
    for el in root.iter("a", "area"):
        href = el.get("href")
        if href is None:
            continue
        absolute = resolve(href)
        if absolute is not None:
            rel = el.get("rel")
            links.append((absolute, rel.strip().lower() if rel else ""))
    return dc_hint


# Each step: (root, url) -> (count, property values, items, broken?)
_Step = tuple[int, int, Any, bool]


def _jsonld_step(root: Any, url: str) -> _Step:
    objects, broken = _extract_jsonld(root)
    count, values = jsonld_counts(objects)
    return count, values, objects, broken


def _microdata_step(root: Any, url: str) -> _Step:
    if not _microdata_nesting_ok(root):
        raise _TooDeep("microdata")
    items = _MICRODATA.extract_items(root, url)
    return len(items), _count_values(items, "properties"), items, False


def _opengraph_step(root: Any, url: str) -> _Step:
    items = list(_OPENGRAPH.extract_items(root))
    count = opengraph_count(items)
    return count, count, items, False


def _microformat_step(root: Any, url: str) -> _Step:
    roots = len(_MF_ROOT_TOKEN.findall("\n".join(_CLASS_VALUES(root))))
    if not roots:
        return 0, 0, None, False
    if not _mf_nesting_ok(root, roots):
        raise _TooDeep("microformat")
    # mf2py builds its own (BeautifulSoup) tree of the text it gets: give it only the
    # outermost roots, not the whole page (see microformat_document)
    items = list(_MICROFORMAT.extract_items(microformat_document(root), base_url=url))
    return len(items), _count_values(items, "properties"), items, False


def microformat_document(root: Any) -> str:
    """The part of a page mf2py reads: the outermost microformat roots in document
    order, in a document that keeps the page's ``<html lang>`` and ``<base href>``.

    mf2py's items come from the roots' subtrees alone (their properties, implied
    properties, nested items, ``e-*`` HTML), resolved against the base URL and
    inheriting the document language; so parsing this instead of the whole page
    (often ten times larger: a WordPress post's ``hentry`` is its article) gives the
    same items for much less; a page whose ``<html>`` or ``<body>`` is a root is handed
    over whole. The subtrees are written out by ``_write_html``, which
    keeps attribute values as they were parsed (lxml's own HTML serializer escapes
    URLs and minimizes boolean attributes, and mf2py would report those changes).
    """
    outer = []
    inside: Any = None  # the outermost root being walked
    for event, el in lxml.etree.iterwalk(root, events=("start", "end")):
        if inside is None and event == "start":
            classes = el.get("class")
            if classes and _MF_ROOT_TOKEN.search(classes):
                inside = el
                outer.append(el)
        elif event == "end" and el is inside:
            inside = None
    if any(el.tag in ("html", "body") for el in outer):
        # a root on <html> or <body> holds the whole page (a theme's <body class="hfeed">):
        # mf2py must see it as a root, with everything inside it
        parts: list[str] = []
        _write_html(root, parts)
        return "".join(parts)
    parts = ["<html"]
    lang = root.get("lang")
    if lang is not None:
        parts.append(f' lang="{_attr(lang)}"')
    parts.append("><head>")
    base = next((el.get("href") for el in root.iter("base") if el.get("href")), None)
    if base:
        parts.append(f'<base href="{_attr(base)}">')
    parts.append(f"</head><body {ROOTS_MARK}>")
    for el in outer:
        _write_html(el, parts)
    parts.append("</body></html>")
    return "".join(parts)



# Elements libxml2's HTML parser never gives content (its list, not HTML5's: <source>,
# <track>, <wbr>, <embed> take an end tag, or what follows would become their content).
_VOID = frozenset("area base basefont br col frame hr img input isindex link meta param".split())
_RAW_TEXT = frozenset(("script", "style"))  # libxml2 reads their content as is


def _attr(value: str) -> str:
    return value.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;").replace(">", "&gt;")


def _text(value: str) -> str:
    return value.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _write_html(top: Any, out: list[str]) -> None:
    """``top`` and its subtree (not its tail) as HTML that parses back to the same tree."""
    raw = 0
    for event, el in lxml.etree.iterwalk(top, events=("start", "end", "comment")):
        tag = el.tag
        if event == "comment":  # no end event (processing instructions are dropped)
            out.append(f"<!--{el.text or ''}-->")
            if el.tail:
                out.append(el.tail if raw else _text(el.tail))
        elif event == "start":
            out.append("<" + tag)
            for name, value in el.attrib.items():
                out.append(f' {name}="{_attr(value)}"')
            out.append(">")
            if tag in _RAW_TEXT:
                raw += 1
            if el.text:
                out.append(el.text if raw else _text(el.text))
        else:
            if tag in _RAW_TEXT:
                raw -= 1
            if tag not in _VOID:
                out.append(f"</{tag}>")
            if el.tail and el is not top:
                out.append(el.tail if raw else _text(el.tail))


def _dublincore_step(root: Any, url: str) -> _Step:
    items, count = dublincore_counts(list(_DUBLINCORE.extract_items(root)))
    return count, count, items, False


def _rdfa_step(root: Any, url: str) -> _Step:
    if not _rdfa_worth_running(root):
        return 0, 0, None, False
    dom = _dom_root(root)
    if dom is None:
        return 0, 0, None, False
    _prune_for_rdfa(dom)
    nodes, values = rdfa_counts(_RDFA.extract_items(dom, base_url=url))
    return len(nodes), values, nodes, False
