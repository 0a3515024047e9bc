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
  ``product:``, ``twitter:``, ``dc.`` or ``dcterms.`` (a ``twitter:`` name or property
  anywhere on the tag makes it twitter). ``<meta charset>`` alone does not count.
* ``microformat``: number of top-level items mf2py (via extruct's
  MicroformatExtractor) returns: mf2 ``h-*`` roots and classic roots (hentry,
  vcard, vevent, hreview, ...).

``Profile.properties`` (detail): json-ld, property values (keys not starting with
``@``; a list value counts each element) over all objects, nested objects included;
microdata / microformat, property values over all items, nested items included;
rdfa, own property values of the counted nodes; opengraph, twitter, meta, dublincore,
same as the count.

Shortcuts (only pages without the syntax skip work; tests compare with extruct on the
600-page corpus): pyRdfa runs only when some element has ``typeof`` or ``vocab``, or a
``property``/``rel``/``rev`` token is an http(s) IRI outside the ignored namespaces or
a CURIE whose prefix resolves (RDFa initial context or declared on the page) outside
them. mf2py runs only when some ``class`` token is an mf2 root (``h-*``) or a classic
root. The Dublin Core extractor runs only when a ``<meta name>`` or ``<link rel>``
holds a ``.``. mf2py parses the decoded body text when profile_html has it (else the
tree is serialized once); pyRdfa and the Dublin Core extractor write attributes into
the tree, so they run last.
"""

from __future__ import annotations

import copy
import json
import logging
import re
import threading
import time
import warnings
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urljoin

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
from mf2py import backcompat as _mf2_backcompat
from mf2py.backcompat import _CLASSIC_MAP
from mf2py.mf2_classes import has_embedded_class as _mf2_has_embedded_class
from pyRdfa.initialcontext import initial_context
from w3lib.encoding import html_to_unicode, resolve_encoding

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
PATCH_MF2PY = True  # see _patch_mf2py


@dataclass
class Profile:
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


def empty_profile() -> Profile:
    """All-zero profile: what an empty or unparsable body gets."""
    return Profile(counts=dict.fromkeys(COUNT_KEYS, 0), properties=dict.fromkeys(SYNTAXES, 0))


# --------------------------------------------------------------------------- parsing

_local = threading.local()  # lxml parsers must not be shared between threads
_XML_DECL = re.compile(r"\s*<\?xml[^>]*>", re.I)


def _parser() -> XmlDomHTMLParser:
    parser = getattr(_local, "parser", None)
    if parser is None:
        # huge_tree: without it libxml2 stops at depth 256 and drops the rest of the page.
        parser = XmlDomHTMLParser(huge_tree=True, remove_comments=True, remove_pis=True)
        _local.parser = parser
    return parser


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

_ROBOTS = "robots"
_OG_PREFIXES = ("og:", "fb:", "article:", "book:", "profile:", "music:", "video:", "product:")
_DC_PREFIXES = ("dc.", "dcterms.")
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


def _absolute(href: str, base: str) -> str | None:
    """Absolute http(s) URL without fragment, or None."""
    href = href.strip()
    if "\t" in href or "\n" in href or "\r" in href:
        href = _URL_WS.sub("", href)
    if href[:8].lower().startswith(_HTTP):
        url = href
    else:
        try:
            url = urljoin(base, href)
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
    for event, el in lxml.etree.iterwalk(root, events=("start", "end")):
        tag = el.tag
        if event == "start":
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


def _refresh_target(content: str, base: str) -> str | None:
    m = _REFRESH.match(content)
    target = m.group(1).strip() if m else ""
    if target[:1] in ("'", '"'):
        target = target[1:].split(target[0], 1)[0]
    if not target:
        return None
    return _absolute(target, base)


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
_RDFA_HINTS = lxml.etree.XPath(
    "//@typeof | //@vocab | //@property | //@rel[contains(., ':')] | //@rev[contains(., ':')]"
)
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
    hints = _RDFA_HINTS(root)
    if not hints:
        return False
    declared: dict[str, str] | None = None
    for attr in hints:
        name = attr.attrname
        if name in ("typeof", "vocab"):
            return True
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
    + "|".join(re.escape(name) for name in sorted(_CLASSIC_MAP, key=len, reverse=True))
    + r")(?!\S)"
)


def _has_mf_root(root: Any) -> bool:
    return _MF_ROOT_TOKEN.search("\n".join(_CLASS_VALUES(root))) is not None


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


def _patch_mf2py() -> None:
    """Make mf2py's classic-microformat rules copy lazily; same output, ~6x faster.

    mf2py 2.0's backcompat rule deep-copies every descendant of a classic root (hentry,
    vcard, ...) once per rule just in case an ``e-*`` property needs the original HTML,
    which makes a WordPress post (``<article class="hentry">``) cost up to 2 s. The
    replacement takes the same copy, at the same moment (before the class change), only
    when it is kept. Identical items on the corpus (tests/test_extract_corpus.py
    compares with the original rule).
    """
    if getattr(_mf2_backcompat, "_spitag_lazy_copy", False):
        return

    def make_classes_rule(old_classes: list[str], new_classes: list[str]) -> Any:
        def rule(child: Any, **kwargs: Any) -> None:
            child_classes = child.get("class", [])[:]
            if all(cl in child_classes for cl in old_classes):
                child_classes.extend([cl for cl in new_classes if cl not in child_classes])
                if _mf2_has_embedded_class(child_classes) and child.original is None:
                    child.original = copy.copy(child)
                child["class"] = child_classes

        return rule

    _mf2_backcompat._spitag_original_rule = _mf2_backcompat._make_classes_rule
    _mf2_backcompat._make_classes_rule = make_classes_rule
    _mf2_backcompat._spitag_lazy_copy = True


# the unpatched rule, for tests that compare with plain extruct
ORIGINAL_MF2PY_CLASSES_RULE = getattr(
    _mf2_backcompat, "_spitag_original_rule", getattr(_mf2_backcompat, "_make_classes_rule", None)
)
if PATCH_MF2PY and hasattr(_mf2_backcompat, "_make_classes_rule"):
    _patch_mf2py()

_MICRODATA = MicrodataExtractor()
_OPENGRAPH = OpenGraphExtractor()
_MICROFORMAT = MicroformatExtractor()
_DUBLINCORE = DublinCoreExtractor()
_RDFA = RDFaExtractor()


# --------------------------------------------------------------------------- profile


def profile_tree(tree: Any, url: str, *, keep_data: bool = True) -> Profile:
    """Profile of an already parsed page (see the module docstring); never raises."""
    return _profile(tree, url, keep_data, None, time.perf_counter())


def profile_html(
    body: bytes | str,
    url: str,
    *,
    encoding: str | None = None,
    keep_data: bool = True,
    max_bytes: int = MAX_BYTES,
) -> Profile:
    """Parse (once) and profile; an empty or unparsable body gives an all-zero Profile."""
    started = time.perf_counter()
    try:
        text = _prepare(body, encoding, max_bytes)
        root = _parse_text(text)
    except Exception:
        logger.debug("profile_html: parse failed for %s", url, exc_info=True)
        text, root = "", None
    return _profile(root, url, keep_data, text, started)


def _profile(tree: Any, url: str, keep_data: bool, source: str | None, started: float) -> Profile:
    profile = empty_profile()
    try:
        if tree is not None:
            _fill(profile, tree.getroottree().getroot(), url or "", keep_data, source)
    except Exception:  # the per-syntax guards should make this unreachable
        logger.exception("profile failed for %s", url)
    profile.counts["total"] = sum(profile.counts[s] for s in SYNTAXES)
    profile.seconds = time.perf_counter() - started
    return profile


def _fill(p: Profile, root: Any, url: str, keep_data: bool, source: str | None) -> None:
    counts, props, data = p.counts, p.properties, p.data

    def failed(syntax: str) -> None:
        logger.debug("%s extraction failed for %s", syntax, url, exc_info=True)
        if syntax not in p.errors:
            p.errors.append(syntax)

    # -- page facts: base, title, meta (twitter, meta, robots, refresh), link, a/area, text
    base = url
    for el in root.iter("base"):
        href = el.get("href")
        if href and href.strip():
            try:
                base = urljoin(url, href.strip())
            except ValueError:
                pass
            break
    title = next(root.iter("title"), None)
    if title is not None:
        p.title = _collapse(title.text_content())

    twitter: dict[str, str] = {}
    meta: dict[str, str] = {}
    robots: list[str] = []
    dc_hint = False
    for el in root.iter("meta"):
        attrib = el.attrib
        name = attrib.get("name")
        prop = attrib.get("property")
        content = attrib.get("content")
        if name:
            lname = name.strip().lower()
            if lname == _ROBOTS and content and content.strip():
                robots.append(content.strip().lower())
            if lname.startswith(_DC_PREFIXES):
                dc_hint = True
        equiv = attrib.get("http-equiv")
        if (
            equiv
            and p.refresh is None
            and content
            and equiv.strip().lower() == "refresh"
            and next(el.iterancestors("noscript"), None) is None
        ):
            p.refresh = _refresh_target(content, base)
        if not content or content.isspace():
            continue
        key = (name or prop or equiv or attrib.get("itemprop") or "").strip().lower()
        if not key:
            continue
        lprop = prop.strip().lower() if prop else ""
        if key.startswith("twitter:") or lprop.startswith("twitter:"):
            counts["twitter"] += 1
            twitter.setdefault(key if key.startswith("twitter:") else lprop, content)
        elif not key.startswith(_OG_PREFIXES) and not key.startswith(_DC_PREFIXES):
            counts["meta"] += 1
            meta.setdefault(key, content)
    p.robots = ", ".join(robots)
    props["twitter"], props["meta"] = counts["twitter"], counts["meta"]
    if keep_data and twitter:
        data["twitter"] = _jsonable(twitter)
    if keep_data and meta:
        data["meta"] = _jsonable(meta)

    for el in root.iter("link"):
        rel = el.get("rel")
        if not rel:
            continue
        if "schema." in rel.lower():  # <link rel="schema.DC" href=...> declares a DC prefix
            dc_hint = True
        if p.canonical is None and "canonical" in rel.lower().split():
            href = el.get("href")
            if href is not None:
                p.canonical = _absolute(href, base)

    links = p.links
    for el in root.iter("a", "area"):
        href = el.get("href")
        if href is None:
            continue
        absolute = _absolute(href, base)
        if absolute is not None:
            rel = el.get("rel")
            links.append((absolute, rel.strip().lower() if rel else ""))

    try:
        p.text = _visible_text(root)
    except Exception:
        logger.debug("visible text failed for %s", url, exc_info=True)

    # -- JSON-LD: one script at a time
    try:
        objects, broken = _extract_jsonld(root)
        if broken:
            failed("json-ld")
        counts["json-ld"], props["json-ld"] = jsonld_counts(objects)
        if keep_data and objects:
            data["json-ld"] = objects
    except Exception:
        failed("json-ld")

    # -- microdata
    try:
        items = _MICRODATA.extract_items(root, url)
        counts["microdata"] = len(items)
        props["microdata"] = _count_values(items, "properties")
        if keep_data and items:
            data["microdata"] = _jsonable(items)
    except Exception:
        failed("microdata")

    # -- OpenGraph
    try:
        items = list(_OPENGRAPH.extract_items(root))
        counts["opengraph"] = props["opengraph"] = opengraph_count(items)
        if keep_data and counts["opengraph"]:
            data["opengraph"] = _jsonable(items)
    except Exception:
        failed("opengraph")

    # -- microformats (mf2py wants text: the body we parsed, else one serialization)
    try:
        if _has_mf_root(root):
            html = source if source is not None else lxml.html.tostring(root, encoding="unicode")
            items = list(_MICROFORMAT.extract_items(html, base_url=url))
            counts["microformat"] = len(items)
            props["microformat"] = _count_values(items, "properties")
            if keep_data and items:
                data["microformat"] = _jsonable(items)
    except Exception:
        failed("microformat")

    # -- Dublin Core (writes a URI attribute into matching tags: after the readers above)
    try:
        if dc_hint:
            items, count = dublincore_counts(list(_DUBLINCORE.extract_items(root)))
            counts["dublincore"] = props["dublincore"] = count
            if keep_data and items:
                data["dublincore"] = _jsonable(items)
    except Exception:
        failed("dublincore")

    # -- RDFa (pyRdfa rewrites attributes of the tree: last)
    try:
        if _rdfa_worth_running(root):
            dom = _dom_root(root)
            if dom is not None:
                nodes, values = rdfa_counts(_RDFA.extract_items(dom, base_url=url))
                counts["rdfa"], props["rdfa"] = len(nodes), values
                if keep_data and nodes:
                    data["rdfa"] = nodes
    except Exception:
        failed("rdfa")
