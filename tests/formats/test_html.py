from __future__ import annotations

from pathlib import Path

import lxml.html
import pytest
from lxml import etree

from dragoman.errors import InvalidFile
from dragoman.formats import by_name, for_file
from dragoman.formats.html import FORMAT
from dragoman.formats.markup import Code, Marked
from tests.formats.helpers import BACK, changed_runs, letters, pseudo, run, units

DATA = Path(__file__).parent.parent / "data" / "formats" / "html"
PAGE = (DATA / "page.html").read_bytes()
FRAGMENT = (DATA / "fragment.html").read_bytes()

TRANSLATED_WORDS = (
    "A small demo page Demo test Welcome home Helpful tip Hello big world Visit Read docs our "
    "fine docs today Prices EUR caf b not a tag Second line here Direct text stays Inner block "
    "First item Small icon Second item Table caption Name Value cell Run now Your name "
    "Type here Send now"
)


def test_registered() -> None:
    assert by_name("html") is FORMAT
    assert for_file("index.htm") is FORMAT and for_file("page.xhtml") is FORMAT
    assert FORMAT.media_type == "text/html"


@pytest.mark.parametrize("segmentation", [True, False])
@pytest.mark.parametrize("data", [PAGE, FRAGMENT])
def test_identity_round_trip_is_byte_exact(data: bytes, segmentation: bool) -> None:
    out = run(FORMAT, data, segmentation=segmentation)
    assert out == data.replace(b'<html lang="en">', b'<html lang="es">')


def test_an_ascii_page_given_other_characters_says_it_is_utf_8() -> None:
    def spanish(unit: Marked) -> Marked:
        tokens = tuple(
            t.replace("house", "casa ñ") if isinstance(t, str) else t for t in unit.tokens
        )
        return Marked(tokens)

    page = b"<html><head><title>The house</title></head><body><p>A house.</p></body></html>"
    out = run(FORMAT, page, spanish)
    assert out.startswith(b'<html><head><meta charset="utf-8"><title>')
    assert lxml.html.fromstring(out).findtext(".//title") == "The casa ñ"
    declared = page.replace(b"<head>", b'<head><meta charset="utf-8">')
    assert run(FORMAT, declared, spanish).count(b"charset") == 1  # declared already
    assert b"charset" not in run(FORMAT, page)  # still ASCII: nothing to say
    assert b"charset" not in run(FORMAT, b"<p>A house.</p>", spanish)  # no head: a fragment


def test_only_the_translatable_text_changes() -> None:
    out = run(FORMAT, PAGE, letters).decode()
    # Character references reach the engine as the text they stand for and come back
    # escaped where HTML needs it: ``&#233;`` is written ``é``, ``&amp;`` stays ``&amp;``.
    source = PAGE.decode().replace('lang="en"', 'lang="es"').replace("&#233;", "é")
    assert out.translate(BACK) == source
    assert changed_runs(source, out) == TRANSLATED_WORDS


def test_pseudo_translation_changes_every_unit_and_keeps_its_codes() -> None:
    before = units(FORMAT, PAGE)
    out = run(FORMAT, PAGE, pseudo)
    after = units(FORMAT, out)
    assert len(after) == len(before)
    for source, target in zip(before, after, strict=True):
        assert target.plain != source.plain
        assert target.codes == source.codes


def _skeleton(data: bytes) -> list[tuple[object, ...]]:
    root = lxml.html.fromstring(data)
    kept = ("title", "alt", "placeholder", "content", "lang")
    return [
        (
            el.tag,
            sorted((k, v) for k, v in el.attrib.items() if k not in kept),
            el.text if el.tag in ("script", "style", "pre", "code", "textarea") else None,
        )
        for el in root.iter()
    ]


def test_output_parses_to_the_same_structure() -> None:
    out = run(FORMAT, PAGE, pseudo)
    assert _skeleton(out) == _skeleton(PAGE)
    root = lxml.html.fromstring(out)
    assert root.get("lang") == "es"
    assert root.findtext(".//title") == "ŧḗşŧ & Ḋḗḿǿ"
    assert next(root.iter("img")).get("alt") == "īċǿƞ Şḿȧŀŀ"
    meta = root.xpath('//meta[@name="description"]')[0]
    assert meta.get("content") == 'ƥȧġḗ "ḋḗḿǿ" şḿȧŀŀ Ȧ'


def test_what_html_authors_expect_is_kept() -> None:
    out = run(FORMAT, PAGE, pseudo).decode()
    for kept in (
        '<script>if (a < b && c > d) { document.write("<b>Keep script</b>"); }</script>',
        "<style>p > b { color: red; } /* Keep me */</style>",
        "<!-- Keep this comment -->",
        "<body class=\"main\" data-info='x > y'>",
        '<a href="/docs?a=1&amp;b=2" title="ḋǿċş Řḗȧḋ">',
        "<pre>Keep   preformatted</pre>",
        "<code>keep --code</code>",
        '<p translate="no">Keep untranslated</p>',
        '<span class="notranslate">KeepBrand</span>',
        "<textarea>Keep textarea</textarea>",
        "&nbsp;ŧȧġ.",
        "&amp; ḖŬŘ",
        "ċȧƒé",
        "&lt;ƀ&gt;",
    ):
        assert kept in out
    assert "<ƀ>" not in out and "<b>ƀ</b>" not in out


def test_a_bold_word_keeps_one_pair_of_tags() -> None:
    out = run(FORMAT, b"<p>Hello <b>big</b> world.</p>", pseudo)
    assert out == "<p>Ħḗŀŀǿ <b>ƀīġ</b> ẇǿřŀḋ.</p>".encode()
    assert out.count(b"<b>") == 1 and out.count(b"</b>") == 1


def test_nested_inline_tags_stay_well_formed() -> None:
    def swap(unit: Marked) -> Marked:  # moves the inner pair out of the outer one
        tokens = [t for t in unit.tokens if not (isinstance(t, Code) and t.id == 2)]
        return Marked.of([*tokens, Code("open", 2), "moved", Code("close", 2)])

    out = run(FORMAT, FRAGMENT, swap, segmentation=False)
    parser = etree.XMLParser()
    first = out.decode().splitlines()[0]
    root = etree.fromstring(first, parser)  # well formed, or this raises
    assert etree.tostring(root).count(b"<i>") == 1


def test_translated_text_is_escaped() -> None:
    def hostile(unit: Marked) -> Marked:
        return Marked.of([*unit.tokens, ' <script>x="a&b"</script>'])

    out = run(FORMAT, b'<p title="Tip">Hi</p>', hostile, segmentation=False).decode()
    assert out == (
        '<p title="Tip &lt;script&gt;x=&quot;a&amp;b&quot;&lt;/script&gt;">'
        'Hi &lt;script&gt;x="a&amp;b"&lt;/script&gt;</p>'
    )


def test_unquoted_and_single_quoted_attributes_stay_valid() -> None:
    def quote(unit: Marked) -> Marked:
        return Marked.of([*unit.tokens, ' it\'s "ok"'])

    out = run(FORMAT, b"<img alt=Logo><img alt='Pic'>", quote, segmentation=False).decode()
    assert out == '<img alt="Logo it\'s &quot;ok&quot;"><img alt=\'Pic it&#39;s "ok"\'>'
    assert [img.get("alt") for img in lxml.html.fromstring(out).iter("img")] == [
        'Logo it\'s "ok"',
        'Pic it\'s "ok"',
    ]


def test_lang_is_set_only_when_something_is_translated() -> None:
    data = b'<html lang="en"><body><p>Hello</p></body></html>'
    assert b'lang="fr"' in run(FORMAT, data, pseudo, target_lang="fr")
    assert run(FORMAT, data, pseudo, partial=0) == data


def test_placeholders_are_codes() -> None:
    assert [u.stored() for u in units(FORMAT, FRAGMENT)][1] == "Written by <x1/> on <x2/>."
    out = run(FORMAT, FRAGMENT, pseudo).decode()
    assert "%s" in out and "{date}" in out


def test_partial_translates_the_first_unit_only() -> None:
    out = run(FORMAT, FRAGMENT, pseudo, partial=1)
    lines = out.decode().splitlines()
    assert lines[0] != FRAGMENT.decode().splitlines()[0]
    assert lines[1] == FRAGMENT.decode().splitlines()[1]
    assert len(lxml.html.fragments_fromstring(out)) == 2


def test_non_utf8_byte_is_refused_with_its_line() -> None:
    with pytest.raises(InvalidFile, match=r"page\.html: line 3 is not UTF-8"):
        FORMAT.extract(b"<p>a</p>\n<p>b</p>\n<p>caf\xe9</p>", filename="page.html")


def test_a_declared_legacy_charset_is_refused() -> None:
    data = b'<html><head>\n<meta charset="iso-8859-1"></head><p>x</p></html>'
    with pytest.raises(InvalidFile, match=r"x\.html: line 2: declares charset 'iso-8859-1'"):
        FORMAT.extract(data, filename="x.html")
    legacy = b'<meta http-equiv="Content-Type" content="text/html; charset=windows-1252">'
    with pytest.raises(InvalidFile, match="windows-1252"):
        FORMAT.extract(legacy, filename="x.html")
    assert units(FORMAT, b'<meta charset="UTF-8"><p>ok</p>')[0].plain == "ok"


def test_utf16_with_bom_round_trips() -> None:
    data = "<p>Hello <b>world</b></p>".encode("utf-16")
    assert run(FORMAT, data) == data
    assert run(FORMAT, data, pseudo).decode("utf-16") == "<p>Ħḗŀŀǿ <b>ẇǿřŀḋ</b></p>"


def test_broken_markup_is_kept_not_translated() -> None:
    for tail in (b"<p title='Open", b"<!-- Never closed"):
        assert run(FORMAT, b"<p>Fine</p>" + tail, pseudo) == "<p>Ƒīƞḗ</p>".encode() + tail
    assert units(FORMAT, b"<p>a</b>c")[0].stored() == "a<x1/>c"
    assert run(FORMAT, b"<p>a</b>c", pseudo) == "<p>ȧ</b>ċ".encode()


@pytest.mark.timeout(120)  # a hang, not a speed: fails only far beyond its normal time
def test_a_megabyte_on_one_line_does_not_hang() -> None:
    data = b"<p>" + b"Some <b>bold</b> words &amp; more. " * 30_000 + b"</p>"
    assert len(data) > 1_000_000
    out = run(FORMAT, data, pseudo)
    assert out.count(b"<b>") == 30_000 and "Şǿḿḗ".encode() in out


def test_entity_declarations_are_never_expanded() -> None:
    data = b'<!DOCTYPE html [<!ENTITY x SYSTEM "file:///etc/passwd">]>\n<p>See &x; here</p>'
    out = run(FORMAT, data, pseudo)
    assert b"&x;" in out and b"root" not in out
    assert out.startswith(data.split(b"\n")[0])
