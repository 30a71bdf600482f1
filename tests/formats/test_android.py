"""Android string resources: strings, string arrays and plurals are translated, with
Android's escaping; every other byte of the file is kept."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest
from lxml import etree

from dragoman.errors import InvalidFile
from dragoman.formats.android import FORMAT
from dragoman.formats.markup import Marked, Token
from tests.formats.helpers import cpu_growth, pseudo, pseudo_text, run, units

DATA = Path(__file__).parent.parent / "data" / "formats" / "android"
STRINGS = (DATA / "strings.xml").read_bytes()
TRANSLATED = re.compile(rb"(<(?:string|item)\b[^>]*>)(.*?)(</(?:string|item)>)", re.S)
KEPT = {
    "app_name": "Dragoman",
    "alias": "@string/welcome",
    "accent": "#FF4081",
    "margin": "16dp",
}


def skeleton(data: bytes) -> bytes:
    """The file with every string's and item's content replaced by a marker."""
    return TRANSLATED.sub(rb"\1#\3", data)


def masked(unit: Marked) -> str:
    return re.sub(r"[^<>]+(?=<|$)", "#", unit.stored())


def texts(tokens: dict[str, str]) -> Callable[[Marked], Marked]:
    """A translation replacing whole text tokens, codes where they were."""

    def translate(unit: Marked) -> Marked:
        out: list[Token] = [tokens.get(t, t) if isinstance(t, str) else t for t in unit.tokens]
        return Marked.of(out)

    return translate


def by_name(data: bytes) -> dict[str, etree._Element]:
    root = etree.fromstring(data)
    return {e.get("name") or "": e for e in root if isinstance(e.tag, str)}


def test_format_attributes() -> None:
    assert FORMAT.name == "android"
    assert FORMAT.extensions == (".xml",)
    assert FORMAT.media_type == "application/xml"


def test_units_unescape_android_and_code_markup() -> None:
    assert [u.stored() for u in units(FORMAT, STRINGS)] == [
        "Welcome back, <g1>dear</g1> friend!",
        "Hello, <x1/>! You have <x2/> new messages.",
        'Don\'t forget to say "thanks".',
        "First line<x1/>Second line",
        "<x1/>  It's spaced out  <x2/>",
        "Starts in <x1/> from now.",
        "Read the <g1>terms &amp; conditions</g1> first.",
        "Loading<x1/>",
        "@home is where you are",
        "<x1/> Read this notice.",
        "Mercury",
        "Venus",
        "<x1/> song found.",
        "<x1/> songs found.",
    ]


@pytest.mark.parametrize("segmentation", [True, False])
def test_identity_round_trip_is_byte_exact(segmentation: bool) -> None:
    assert run(FORMAT, STRINGS, segmentation=segmentation) == STRINGS
    crlf = b"\xef\xbb\xbf" + STRINGS.replace(b"\n", b"\r\n")
    assert run(FORMAT, crlf, segmentation=segmentation) == crlf


@pytest.mark.parametrize("segmentation", [True, False])
def test_pseudo_changes_every_unit_and_nothing_else(segmentation: bool) -> None:
    out = run(FORMAT, STRINGS, pseudo, segmentation=segmentation)
    before, after = units(FORMAT, STRINGS), units(FORMAT, out)
    assert len(after) == len(before)
    for source, target in zip(before, after, strict=True):
        assert target.plain != source.plain
        assert masked(target) == masked(source)
    assert skeleton(out) == skeleton(STRINGS)
    assert out.count(b"\n") == STRINGS.count(b"\n")


def test_output_reads_back_with_the_same_structure() -> None:
    out = run(FORMAT, STRINGS, pseudo, segmentation=False)
    source, target = etree.fromstring(STRINGS), etree.fromstring(out)
    assert [(e.tag, dict(e.attrib)) for e in target.iter()] == [
        (e.tag, dict(e.attrib)) for e in source.iter()
    ]
    names = by_name(out)
    for name, text in KEPT.items():
        assert names[name].text == text
    assert [i.text for i in names["codes"]] == ["EN"]
    assert [i.text for i in names["planets"]] == [pseudo_text("Mercury"), pseudo_text("Venus")]
    assert [i.get("quantity") for i in names["songs"]] == ["one", "other"]
    assert names["welcome"][0].tag == "b"
    assert names["welcome"][0].text == pseudo_text("dear")


def test_comments_tools_attributes_and_untranslatable_are_kept_verbatim() -> None:
    out = run(FORMAT, STRINGS, pseudo)
    for line in (
        b"<!-- Strings of the main screen. -->",
        b"<!-- Lists and plurals. -->",
        b'<string name="app_name" translatable="false">Dragoman</string>',
        b'<string name="alias">@string/welcome</string>',
        b'<string-array name="codes" translatable="false">\n        <item>EN</item>',
        b'<string name="greeting" tools:ignore="MissingTranslation">',
        b'<xliff:g id="time" example="5 minutes">%1$s</xliff:g>',
        b'<a href="https://example.com/terms">',
        b"<![CDATA[<p>Legal</p>]]>",
        b"%1$s",
        b"%2$d",
        b"\\n",
        b"\\u2026",
    ):
        assert line in out, line


def test_translated_text_is_escaped_for_android_and_xml() -> None:
    translate = texts(
        {
            "Mercury": 'L\'an "Mercure" & <co> \\ fin',
            "Venus": "@Vénus ?",
            "  It's spaced out  ": '  C\'est "espacé"  ',
            'Don\'t forget to say "thanks".': "N'oublie pas de dire « merci ».",
            "@home is where you are": "?maison",
        }
    )
    out = run(FORMAT, STRINGS, translate, segmentation=False)
    assert b'<item>L\\\'an \\"Mercure\\" &amp; &lt;co&gt; \\\\ fin</item>' in out
    assert b"<item>\\@V\xc3\xa9nus ?</item>" in out
    assert b'<string name="quoted">"  C\'est \\"espac\xc3\xa9\\"  "</string>' in out
    assert '<string name="dont">N\\\'oublie pas de dire « merci ».</string>'.encode() in out
    assert b'<string name="at">\\?maison</string>' in out
    assert [u.plain for u in units(FORMAT, out)][10:12] == [
        'L\'an "Mercure" & <co> \\ fin',
        "@Vénus ?",
    ]


def test_partial_translates_the_first_unit_only() -> None:
    out = run(FORMAT, STRINGS, pseudo, partial=1, segmentation=False)
    welcome = f'<string name="welcome">{pseudo_text("Welcome back, ")}<b>'
    assert welcome.encode() in out
    assert skeleton(out) == skeleton(STRINGS)
    assert [u.stored() for u in units(FORMAT, out)][1:] == [
        u.stored() for u in units(FORMAT, STRINGS)
    ][1:]


def test_utf16_with_bom_is_written_back_in_utf16() -> None:
    data = STRINGS.replace(b'encoding="utf-8"', b'encoding="utf-16"').decode().encode("utf-16")
    assert run(FORMAT, data) == data
    out = run(FORMAT, data, pseudo)
    assert out[:2] == data[:2]
    assert by_name(out)["planets"][0].text == pseudo_text("Mercury")


def test_a_file_that_is_not_android_resources_is_refused() -> None:
    with pytest.raises(InvalidFile, match=r"pom\.xml: not an Android string resource file"):
        FORMAT.extract(b"<project><name>Demo</name></project>", filename="pom.xml")


def test_malformed_xml_names_the_file_and_line() -> None:
    broken = b'<?xml version="1.0"?>\n<resources>\n<string name="a">Hi</strin>\n</resources>'
    with pytest.raises(InvalidFile, match=r"strings\.xml: malformed XML at line 3"):
        FORMAT.extract(broken, filename="strings.xml")


def test_an_encoding_other_than_utf8_is_refused() -> None:
    latin = '<?xml version="1.0" encoding="ISO-8859-1"?>\n<resources>\n'
    latin += '<string name="a">Café</string>\n</resources>\n'
    with pytest.raises(InvalidFile, match=r"l\.xml: line 3 is not UTF-8"):
        FORMAT.extract(latin.encode("latin-1"), filename="l.xml")


@pytest.mark.parametrize(
    "doctype",
    [
        '<!DOCTYPE resources [<!ENTITY xxe SYSTEM "file:///etc/hostname">]>',
        '<!DOCTYPE resources [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;">]>',
    ],
)
def test_entities_are_refused(doctype: str) -> None:
    ref = "&xxe;" if "xxe" in doctype else "&b;"
    evil = f'<?xml version="1.0"?>\n{doctype}\n<resources><string name="a">{ref}</string>'
    with pytest.raises(InvalidFile, match=r"evil\.xml") as caught:
        FORMAT.extract(f"{evil}</resources>".encode(), filename="evil.xml")
    assert "aaaa" not in caught.value.message


def _strings(count: int) -> bytes:
    body = "".join(
        f'    <string name="s{i}">Line {i} of <b>many</b>.</string>\n' for i in range(count)
    )
    return f"<resources>\n{body}</resources>\n".encode()


def test_a_large_file_is_read_and_written_in_linear_time() -> None:
    outputs: dict[int, bytes] = {}

    def work(count: int) -> None:
        outputs[count] = run(FORMAT, _strings(count), pseudo, segmentation=False)

    # Four times the strings, about four times the work (sixteen if it were quadratic).
    growth = cpu_growth(work, 2000)
    assert growth < 9, f"4x the strings took {growth:.1f}x the CPU time"
    assert outputs[8000].count(b"<b>") == 8000
    assert pseudo_text("many").encode() in outputs[8000]
