"""spitag.extract on small hand-written pages: every count computed by hand, and the
inputs a crawler meets that must never raise."""

from __future__ import annotations

from html import escape
import json
import os
import random

import lxml.html
import pytest
from extruct.jsonld import JsonLdExtractor
from mf2py.backcompat import _CLASSIC_MAP
from mf2py.mf2_classes import _mf2_roots_re

from spitag import extract
from spitag.extract import (
    COUNT_KEYS,
    SYNTAXES,
    Profile,
    empty_profile,
    parse_html,
    profile_html,
    profile_tree,
)

URL = "https://example.org/dir/page.html"

# Hand counts are in the comments: one line, one reason.
PAGE = """<!DOCTYPE html>
<html lang="en" prefix="og: http://ogp.me/ns#">
<head>
<meta charset="utf-8">                                              <!-- nothing: no content -->
<title>  A   test
 page </title>
<base href="https://example.org/base/">
<meta name="description" content="A page">                          <!-- meta 1 -->
<meta name="viewport" content="width=device-width">                 <!-- meta 2 -->
<meta http-equiv="X-UA-Compatible" content="IE=edge">               <!-- meta 3 -->
<meta name="robots" content="NOINDEX, Follow">                      <!-- meta 4 -->
<meta name="keywords" content="">                                   <!-- nothing: blank -->
<meta property="og:title" content="OG title">                       <!-- og 1 -->
<meta property="og:type" content="article">                         <!-- og 2 -->
<meta property="og:image" content="https://example.org/i.png">      <!-- og 3 -->
<meta property="article:author" content="Ann">                      <!-- og 4 -->
<meta property="fb:app_id" content="123">                           <!-- nothing: fb not declared -->
<meta name="twitter:card" content="summary">                        <!-- twitter 1 -->
<meta property="twitter:site" content="@ex">                        <!-- twitter 2 -->
<meta name="twitter:creator" content=" ">                           <!-- nothing: blank -->
<meta name="DC.title" content="DC title">                           <!-- dublincore 1 -->
<meta name="dcterms.created" content="2020-01-01">                  <!-- dublincore 2 -->
<meta name="DC.unknownthing" content="x">                           <!-- nothing: no DC element -->
<link rel="schema.DC" href="http://purl.org/dc/elements/1.1/">
<link rel="canonical" href="/canon#top">
<script type="application/ld+json">{"@context": "https://schema.org", "@type": "Article", "headline": "H",
 "author": {"@type": "Person", "name": "Ann"}}</script>             <!-- json-ld 1; values: headline, author, name -->
</head>
<body>
<article class="h-entry"><h2 class="p-name">Post</h2><a class="u-url" href="/post">link</a></article>
<div itemscope itemtype="https://schema.org/Product">               <!-- microdata 1 -->
  <span itemprop="name">Widget</span>                               <!-- value 1 -->
  <div itemprop="offers" itemscope itemtype="https://schema.org/Offer"> <!-- value 2 (nested item) -->
    <meta itemprop="price" content="9.99">                          <!-- value 3; and meta 5 -->
    <span itemprop="priceCurrency">EUR</span>                       <!-- value 4 -->
  </div>
</div>
<div itemscope itemtype="https://schema.org/Person">                <!-- microdata 2 -->
  <span itemprop="name">Bob</span></div>                            <!-- value 5 -->
<div vocab="https://schema.org/" typeof="Event">
  <span property="name">Concert</span> <span property="location">Hall</span></div>
<p>Hello <b>big</b>world<script>var hidden = 1;</script><style>.x{}</style></p>
<noscript>no js</noscript><template><p>tpl</p></template>
<ul><li>one</li><li>two&nbsp;&nbsp;three</li></ul>
<a href="/a#frag" rel="NoFollow Noopener">A</a>
<a href="b.html">B</a>
<a href="mailto:x@example.org">M</a>
<a href="javascript:void(0)">J</a>
<a href="//cdn.example.net/x">C</a>
<a href="#top">T</a>
<a>no href</a>
<map name="m"><area href="/area" alt="x"></map>
<a href="/a#frag">A again</a>
</body>
</html>
"""

PAGE_COUNTS = {
    "json-ld": 1,
    "microdata": 2,
    "rdfa": 1,  # the Event node; rdfa:usesVocabulary and og: triples are not own RDFa
    "opengraph": 4,
    "twitter": 2,
    "meta": 5,
    "microformat": 1,
    "dublincore": 2,
    "total": 18,
}
PAGE_PROPERTIES = {
    "json-ld": 3,
    "microdata": 5,
    "rdfa": 2,  # name, location
    "opengraph": 4,
    "twitter": 2,
    "meta": 5,
    "microformat": 2,  # name, url
    "dublincore": 2,
}


def ld(*scripts: str, head: str = "") -> str:
    """A page with these JSON-LD script bodies."""
    tags = "".join(f'<script type="application/ld+json">{s}</script>' for s in scripts)
    return f"<html><head>{head}{tags}</head><body><p>x</p></body></html>"


def assert_shape(p: Profile) -> None:
    assert isinstance(p, Profile)
    assert tuple(p.counts) == COUNT_KEYS
    assert p.counts["total"] == sum(p.counts[s] for s in SYNTAXES)
    assert tuple(p.properties) == SYNTAXES
    assert set(p.data) <= set(SYNTAXES)
    json.dumps(p.data)
    assert set(p.errors) <= set(SYNTAXES)
    assert p.seconds >= 0
    for url, rel in p.links:
        assert url.startswith(("http://", "https://")) and "#" not in url
        assert rel == rel.lower()


# --------------------------------------------------------------------------- the rich page


@pytest.fixture(scope="module")
def page() -> Profile:
    return profile_html(PAGE.encode("utf-8"), URL)


def test_counts_of_every_syntax(page: Profile) -> None:
    assert_shape(page)
    assert page.counts == PAGE_COUNTS
    assert page.properties == PAGE_PROPERTIES
    assert page.errors == []


def test_data_per_syntax(page: Profile) -> None:
    data = page.data
    assert set(data) == set(SYNTAXES)
    assert data["json-ld"][0]["headline"] == "H"
    assert [item["type"] for item in data["microdata"]] == ["https://schema.org/Product", "https://schema.org/Person"]
    assert data["microdata"][0]["properties"]["offers"]["properties"]["price"] == "9.99"
    assert data["rdfa"][0]["@type"] == ["https://schema.org/Event"]
    assert data["opengraph"][0]["properties"][0] == ["og:title", "OG title"]
    assert data["twitter"] == {"twitter:card": "summary", "twitter:site": "@ex"}
    assert data["meta"] == {
        "description": "A page",
        "viewport": "width=device-width",
        "x-ua-compatible": "IE=edge",
        "robots": "NOINDEX, Follow",
        "price": "9.99",
    }
    assert data["microformat"][0]["type"] == ["h-entry"]
    assert data["microformat"][0]["properties"]["url"] == ["https://example.org/post"]  # <base> applied
    names = [e["name"] for item in data["dublincore"] for part in ("elements", "terms") for e in item[part]]
    assert names == ["DC.title", "dcterms.created"]


def test_page_facts(page: Profile) -> None:
    assert page.title == "A test page"
    # title is not hidden markup; script, style, noscript, template are; blocks separate words
    assert page.text == (
        "A test page Post link Widget EUR Bob Concert Hall Hello bigworld one two three A B M J C T no href A again"
    )
    assert page.links == [
        ("https://example.org/post", ""),
        ("https://example.org/a", "nofollow noopener"),
        ("https://example.org/base/b.html", ""),
        ("https://cdn.example.net/x", ""),
        ("https://example.org/base/", ""),
        ("https://example.org/area", ""),
        ("https://example.org/a", ""),  # duplicates are kept
    ]
    assert page.canonical == "https://example.org/canon"
    assert page.robots == "noindex, follow"
    assert page.refresh is None


def test_keep_data_false_same_counts(page: Profile) -> None:
    lean = profile_html(PAGE, URL, keep_data=False)
    assert lean.data == {}
    assert lean.counts == page.counts and lean.properties == page.properties
    assert lean.links == page.links and lean.text == page.text


def test_profile_tree_matches_profile_html(page: Profile) -> None:
    ours = profile_tree(parse_html(PAGE), URL)
    assert ours.counts == page.counts and ours.data.keys() == page.data.keys()
    # a tree from plain lxml.html (no DOM classes): RDFa re-parses, microformats serialize
    plain = profile_tree(lxml.html.document_fromstring(PAGE), URL)
    assert plain.counts == page.counts
    assert plain.links == page.links


# --------------------------------------------------------------------------- JSON-LD


def test_jsonld_one_broken_script_does_not_lose_the_others() -> None:
    html = ld(
        '{"@type": "Organization", "name": "O"}',
        '{"@type": "Thing", "name": "oops" ,,, }}',
        '[{"@type": "WebSite"}]',
    )
    with pytest.raises(ValueError):  # what extruct 0.18 does with the same page
        JsonLdExtractor().extract(html)
    p = profile_html(html, URL)
    assert p.counts["json-ld"] == 2
    assert p.errors == ["json-ld"]
    assert [o["@type"] for o in p.data["json-ld"]] == ["Organization", "WebSite"]


@pytest.mark.parametrize(
    ("scripts", "count", "values"),
    [
        # @graph members instead of the container (which has no @type)
        (['{"@context": "https://schema.org", "@graph": [{"@type": "WebSite", "name": "S"}, {"@type": "Org"}]}'], 2, 1),
        # a typed container counts too; graph lists flatten; nested graphs flatten
        (['{"@type": "ItemList", "@graph": [[{"@type": "A"}], {"@graph": [{"@type": "B"}, {"@type": "C"}]}]}'], 4, 0),
        # top-level lists flatten; empty objects and scalars do not count
        (['[{"@type": "A"}, [{"@type": "B", "x": [1, 2]}], {}, "s", 3]'], 2, 2),
        # one object per script, nested values counted
        (['{"@type": "A", "a": {"@type": "B", "b": 1}}', '{"@type": "C", "c": [{"d": 1}, 2]}'], 2, 5),
    ],
)
def test_jsonld_counting(scripts: list[str], count: int, values: int) -> None:
    p = profile_html(ld(*scripts), URL)
    assert (p.counts["json-ld"], p.properties["json-ld"]) == (count, values)
    assert p.errors == []


@pytest.mark.parametrize(
    "script",
    [
        '<!-- {"@type": "A"} -->',
        '//<![CDATA[\n{"@type": "A"}\n//]]>',
        '<![CDATA[{"@type": "A"}]]>',
        '{"@type": "A"};',
        '// a comment\n{"@type": "A"}',
        '{"@type": "A", /* comment */ "name": "n",}',
        '{"@type": "A", "text": "line\nbreak"}',  # raw control characters (strict=False)
    ],
)
def test_jsonld_lenient(script: str) -> None:
    p = profile_html(ld(script), URL)
    assert p.counts["json-ld"] == 1
    assert p.errors == []


def test_jsonld_several_values_in_one_script() -> None:
    p = profile_html(ld('{"@type": "A"}\n{"@type": "B"}'), URL)
    assert p.counts["json-ld"] == 2 and p.errors == []


def test_jsonld_blank_script_is_nothing_and_garbage_is_an_error() -> None:
    assert profile_html(ld("", "  \n "), URL).errors == []
    garbage = profile_html(ld("Musik und Sport\n5\n1"), URL)
    assert garbage.counts["json-ld"] == 0 and garbage.errors == ["json-ld"]


def test_jsonld_type_attribute_case_and_parameters() -> None:
    html = (
        '<script type="Application/LD+JSON">{"@type": "A"}</script>'
        '<script type="application/ld+json; charset=utf-8">{"@type": "B"}</script>'
        '<script type="application/json">{"@type": "C"}</script>'
        '<script>{"@type": "D"}</script>'
    )
    assert profile_html(html, URL).counts["json-ld"] == 2


# --------------------------------------------------------------------------- the other syntaxes


def test_rdfa_is_zero_without_rdfa() -> None:
    """OpenGraph <meta property>, XHTML rel terms and role attributes make pyRdfa emit
    document nodes; none of that is own RDFa."""
    html = (
        '<html prefix="og: http://ogp.me/ns#"><head><meta property="og:title" content="T">'
        '<meta property="al:ios:url" content="app://x"><link rel="stylesheet" href="s.css">'
        '<link rel="https://api.w.org/" href="/wp-json/"></head>'
        '<body role="main"><div role="navigation" id="n">x</div><a rel="license" href="/l">l</a></body></html>'
    )
    p = profile_html(html, URL)
    assert p.counts["rdfa"] == 0 and "rdfa" not in p.data and p.errors == []
    # the same page through pyRdfa directly does return nodes: the filter is what makes 0
    nodes = extract._RDFA.extract_items(parse_html(html), base_url=URL)
    assert nodes and extract.rdfa_counts(nodes) == ([], 0)


def test_rdfa_prefixed_properties_without_vocab() -> None:
    html = (
        '<html><body><div about="/post" typeof="sioc:Post">'
        '<h1 property="dc:title">T</h1><span property="foaf:name">N</span></div>'
        '<p property="dc:description">only a property, no typeof</p></body></html>'
    )
    p = profile_html(html, URL)
    assert p.counts["rdfa"] == 2  # /post (typed) and the page (dc:description)
    assert p.properties["rdfa"] == 3


def test_opengraph_declared_prefix_counts() -> None:
    head = (
        '<meta property="og:title" content="T"><meta property="fb:app_id" content="1">'
        '<meta property="music:duration" content="3">'
    )
    assert profile_html(f"<html><head>{head}</head></html>", URL).counts["opengraph"] == 2
    declared = f'<html><head prefix="fb: http://ogp.me/ns/fb#">{head}</head></html>'
    assert profile_html(declared, URL).counts["opengraph"] == 3


def test_twitter_and_meta_rules() -> None:
    head = (
        '<meta name="Twitter:Card" content="summary">'  # twitter (case-insensitive)
        '<meta property="twitter:title" content="T">'  # twitter
        '<meta name="twitter:image" content="">'  # nothing
        '<meta name="og:title" content="x">'  # nothing: og name, not an OpenGraph property
        '<meta name="dcterms.bogus" content="x">'  # nothing: dc namespace, no DC term
        '<meta name="generator" content="WordPress">'  # meta
        '<meta http-equiv="content-type" content="text/html; charset=utf-8">'  # meta
        '<meta charset="utf-8">'  # nothing
        '<meta itemprop="name" content="N">'  # meta
        '<meta content="orphan">'  # nothing: no key
    )
    p = profile_html(f"<html><head>{head}</head></html>", URL)
    assert (p.counts["twitter"], p.counts["meta"], p.counts["opengraph"], p.counts["dublincore"]) == (2, 3, 0, 0)
    assert p.data["twitter"] == {"twitter:card": "summary", "twitter:title": "T"}


def test_dublincore_needs_a_namespace() -> None:
    """extruct's extractor reports bare <meta name="description">; only DC.* / dcterms.*
    (or a schema.X-declared prefix) are Dublin Core here."""
    head = (
        '<meta name="description" content="d"><meta name="language" content="en">'
        '<link rel="schema.DCX" href="http://purl.org/dc/terms/">'
        '<meta name="DCX.modified" content="2020"><meta name="DC.date.issued" content="2019">'
        '<meta name="dc.Creator" content="Ann"><link rel="DC.relation" href="/rel">'
    )
    p = profile_html(f"<html><head>{head}</head></html>", URL)
    assert p.counts["dublincore"] == 4
    assert p.counts["meta"] == 2  # description, language


def test_microformats_classic_and_nested() -> None:
    html = (
        '<div class="hentry"><h2 class="entry-title">T</h2><div class="entry-content"><p>c</p></div>'
        '<div class="vcard author"><span class="fn">Ann</span></div></div>'
        '<div class="h-card"><span class="p-name">Bob</span><div class="p-org h-card">Org</div></div>'
        '<div class="search-box header-main">not a microformat</div>'
    )
    p = profile_html(html, URL)
    assert p.counts["microformat"] == 2  # hentry (vcard nested in it) and the outer h-card
    assert p.data["microformat"][0]["type"] == ["h-entry"]


def test_microformat_root_pattern_agrees_with_mf2py() -> None:
    tokens = ["h-entry", "h-card", "h-x-y", "h-2x-entry", "h-entry2", "H-entry", "h-", "xh-entry",
              "search-box", "hentry", "vcard", "hreview-aggregate", "vcards", "geo", "adr", "h-:a-b"]
    for token in tokens:
        expected = bool(_mf2_roots_re.match(token)) or token in _CLASSIC_MAP
        assert extract._has_mf_root(parse_html(f'<p class="x {token} y">t</p>')) is expected, token


def test_mf2py_lazy_copy_patch_keeps_output() -> None:
    """The patched classic rule gives the same items as mf2py's own (e-content keeps
    the authored HTML)."""
    import mf2py
    import mf2py.backcompat as backcompat

    html = (
        '<article class="hentry"><h1 class="entry-title">T</h1>'
        '<div class="entry-content"><p>Hello <b>you</b></p>'
        '<div class="vcard"><a class="url fn" href="/ann">Ann</a></div></div>'
        '<span class="author vcard"><span class="fn">Bob</span></span><a rel="tag" href="/tag/x">x</a>'
        '<abbr class="published" title="2020-01-02">Jan 2</abbr></article>'
    )
    patched = mf2py.parse(html, url=URL, html_parser="lxml")
    current = backcompat._make_classes_rule
    backcompat._make_classes_rule = extract.ORIGINAL_MF2PY_CLASSES_RULE
    try:
        original = mf2py.parse(html, url=URL, html_parser="lxml")
    finally:
        backcompat._make_classes_rule = current
    assert current is not extract.ORIGINAL_MF2PY_CLASSES_RULE  # the patch is active
    assert json.dumps(patched, sort_keys=True) == json.dumps(original, sort_keys=True)
    assert patched["items"][0]["properties"]["content"][0]["html"].startswith("<p>Hello <b>you</b></p>")


# --------------------------------------------------------------------------- page facts


@pytest.mark.parametrize(
    ("content", "target"),
    [
        ("0; url=/next#x", "https://example.org/next"),
        ("5;URL='https://other.example/p'", "https://other.example/p"),
        ('3, url="rel.html"', "https://example.org/dir/rel.html"),
        ("0;https://x.example/", "https://x.example/"),
        ("30", None),
        ("0; url=javascript:alert(1)", None),
    ],
)
def test_refresh(content: str, target: str | None) -> None:
    p = profile_html(f'<html><head><meta http-equiv="Refresh" content="{escape(content)}"></head></html>', URL)
    assert p.refresh == target


def test_refresh_inside_noscript_is_ignored() -> None:
    html = '<head><noscript><meta http-equiv="refresh" content="0;url=/nojs"></noscript></head><body>x</body>'
    assert profile_html(html, URL).refresh is None


def test_links_canonical_robots_without_base() -> None:
    html = (
        '<html><head><link rel="Canonical" href="other.html"><meta name="ROBOTS" content="NoFollow">'
        '<meta name="robots" content="noarchive"></head><body>'
        '<a href=" /x y\n#f ">1</a><a href="HTTP://Up.Example/A">2</a><a href="?q=1">3</a>'
        '<a href="../up/./z">4</a><a href="">5</a><a href="tel:123">6</a><a href="http://[::1">7</a></body></html>'
    )
    p = profile_html(html, URL)
    assert p.canonical == "https://example.org/dir/other.html"
    assert p.robots == "nofollow, noarchive"
    assert p.links == [
        ("https://example.org/x y", ""),
        ("HTTP://Up.Example/A", ""),
        ("https://example.org/dir/page.html?q=1", ""),
        ("https://example.org/up/z", ""),
        ("https://example.org/dir/page.html", ""),
        ("http://[::1", ""),  # kept as written; URL normalization rejects it later
    ]


def test_non_http_page_url_keeps_only_absolute_links() -> None:
    p = profile_html('<a href="/rel">r</a><a href="https://abs.example/">a</a>', "hard::page.html")
    assert p.links == [("https://abs.example/", "")]


def test_text_is_collapsed_and_visible_only() -> None:
    html = (
        "<html><head><title>T</title><style>p {}</style><script>var s = 1;</script></head>"
        "<body>\n\t<h1>Big\u00a0 title</h1><div>a<span>b</span>c</div><!-- hidden comment -->"
        "<noscript><p>enable js</p></noscript><template><b>t</b></template><p>d<br>e</p>  </body></html>"
    )
    assert profile_html(html, URL).text == "T Big title abc d e"


def test_title_absent_and_empty() -> None:
    assert profile_html("<p>x</p>", URL).title is None
    assert profile_html("<title></title><p>x</p>", URL).title == ""


# --------------------------------------------------------------------------- hostile input


@pytest.mark.parametrize("body", [b"", "", b"   \n\t", None])
def test_empty_body_is_all_zero(body: bytes | str | None) -> None:
    p = profile_html(body, URL)  # type: ignore[arg-type]
    assert p.counts == dict.fromkeys(COUNT_KEYS, 0)
    assert (p.title, p.text, p.links, p.data, p.errors) == (None, "", [], {}, [])
    assert parse_html(body) is None  # type: ignore[arg-type]


def test_empty_profile() -> None:
    p = empty_profile()
    assert p.counts == dict.fromkeys(COUNT_KEYS, 0) and p.properties == dict.fromkeys(SYNTAXES, 0)
    assert (p.refresh, p.robots, p.canonical, p.seconds) == (None, "", None, 0.0)


def test_binary_junk() -> None:
    rng = random.Random(7)
    for size in (1, 100, 100_000):
        assert_shape(profile_html(bytes(rng.getrandbits(8) for _ in range(size)), URL))
    assert_shape(profile_html(os.urandom(300_000), URL))
    assert_shape(profile_html(b"\x00" * 5000, URL))
    assert_shape(profile_html(b"\xff\xd8\xff\xe0JFIF" + bytes(range(256)) * 50, URL))


def test_invalid_utf8_and_encodings() -> None:
    body = '<html><head><title>Caf\u00e9 \u2013 ok</title></head><body><p>x</p></body></html>'.encode()
    broken = body.replace(b"ok", b"\xff\xfe\xc3(")
    p = profile_html(broken, URL)
    assert p.title is not None and p.title.startswith("Café")
    assert profile_html(broken, URL, encoding="utf-8").title == p.title
    assert profile_html("<p>caf\u00e9</p>".encode("cp1252"), URL, encoding="windows-1252").text == "café"
    assert profile_html("<p>caf\u00e9</p>".encode("cp1252"), URL, encoding="no-such-codec").text  # falls back
    assert profile_html("<p>h\u00e9</p>".encode("utf-16"), URL).text == "hé"  # BOM
    assert profile_html('<meta charset="iso-8859-2"><p>\xb1</p>'.encode("latin-1"), URL).text == "ą"
    assert profile_html("<p>\ud800 lone surrogate</p>", URL).text == "? lone surrogate"
    xml = '<?xml version="1.0" encoding="utf-8"?><html><body><a href="/x">x</a></body></html>'
    assert profile_html(xml, URL).links == [("https://example.org/x", "")]


def test_deep_nesting() -> None:
    for body in (
        "<div>" * 100_000 + "x" + "</div>" * 100_000,
        "<b>x" * 100_000,
        '<div itemscope itemprop="p">' * 100_000,
        '<div class="hentry"><span class="entry-title">x</span>' * 100_000,
        '<div class="h-entry">' * 100_000,
        '<div vocab="http://schema.org/" typeof="Thing"><span property="name">x</span>' * 100_000,
        '<script type="application/ld+json">' + "[" * 100_000 + "]" * 100_000 + "</script>",
        '<script type="application/ld+json">' + '{"a":' * 100_000 + "1" + "}" * 100_000 + "</script>",
    ):
        p = profile_html(body, URL)
        assert_shape(p)
    # items nested past MAX_ITEM_NESTING are reported, not extracted
    deep_md = profile_html('<div itemscope itemprop="p">' * 100_000, URL)
    assert deep_md.errors == ["microdata"] and deep_md.counts["microdata"] == 0
    fine = profile_html('<div itemscope itemprop="p">' * 10, URL)
    assert fine.errors == [] and fine.counts["microdata"] == 1


def test_deep_page_keeps_its_rest() -> None:
    """Past libxml2's default 256 levels the rest of a page would vanish; huge_tree keeps it."""
    body = "<title>t</title>" + "<div>" * 600 + "x" + "</div>" * 600 + '<a href="/after">after</a>'
    p = profile_html(body, URL)
    assert p.links == [("https://example.org/after", "")]
    assert p.text.endswith("after")


def test_max_bytes_cuts_before_parsing() -> None:
    body = "<html><body>" + "<p>filler</p>" * 100 + ld('{"@type": "A"}')
    assert profile_html(body, URL).counts["json-ld"] == 1
    assert profile_html(body, URL, max_bytes=200).counts["json-ld"] == 0
    assert profile_html(body.encode(), URL, max_bytes=200).counts["json-ld"] == 0
    assert extract.MAX_BYTES == 10 * 1024 * 1024


def test_parse_html_returns_an_html_root() -> None:
    root = parse_html(b"<p>x</p>")
    assert root is not None and root.tag == "html"
    assert parse_html(b"\x00\x01") is not None
    assert parse_html(b"") is None


def test_mf2py_copies_classic_roots_except_in_microformat_document() -> None:
    """The in-place classic rules (extract._patch_mf2py) apply only to the outermost
    roots of microformat_document: a document someone else hands mf2py stays as it was,
    and both ways give the same items."""
    import mf2py
    from bs4 import BeautifulSoup

    from spitag.extract import _parse_text, microformat_document

    page = (
        '<html lang="en"><body><p>intro</p><div class="hentry"><h1 class="entry-title">T</h1>'
        '<div class="entry-content"><p>x <a href="/a">a</a></p><div class="vcard">'
        '<span class="fn">Ann</span></div></div></div><div class="vcard"><span class="fn">Bob</span>'
        "</div></body></html>"
    )
    soup = BeautifulSoup(page, "lxml")
    before = str(soup)
    theirs = mf2py.parse(doc=soup, html_parser="lxml", url="http://example.com/p")["items"]
    assert str(soup) == before  # the caller's tree: not rewritten
    ours = mf2py.parse(microformat_document(_parse_text(page)), html_parser="lxml", url="http://example.com/p")
    assert ours["items"] == theirs
    assert [item["type"] for item in theirs] == [["h-entry"], ["h-card"]]
    assert theirs[0]["properties"]["content"][0]["html"].count('class="vcard"') == 1  # the original HTML
