"""Escapes, entities and special characters in every format: the engine reads the text
they stand for, and the file that comes back says the same, read by an independent library.

Each test translates with ``letters`` (every ASCII letter changed, nothing else): the
output, read by its own library and mapped back (``BACK``), must say exactly what the
source said, and the identity translation must give the source back.
"""

from __future__ import annotations

import io
import json

import docx
import lxml.html
import openpyxl
import polib
import pptx
import pytest
import srt
import yaml
from lxml import etree
from markdown_it import MarkdownIt
from odf import teletype
from odf.opendocument import OpenDocumentText, load
from odf.text import P

from dragoman.formats import FORMATS
from tests.formats.helpers import BACK, letters, run, units

TRICKY = 'Fish & chips <b> "quoted" it\'s'


def test_html_escaped_markup_stays_text() -> None:
    data = b"<p>Fish &amp; chips &lt;b&gt; are good.</p>"
    fmt = FORMATS["html"]
    assert [u.plain for u in units(fmt, data)] == ["Fish & chips <b> are good."]
    assert run(fmt, data) == data
    assert run(fmt, data, segmentation=False) == data
    out = run(fmt, data, letters)
    root = lxml.html.fromstring(out.decode())
    assert root.find(".//b") is None
    assert root.text_content().translate(BACK) == "Fish & chips <b> are good."


def test_html_attribute_references_are_text_and_stay_escaped() -> None:
    data = b'<p><img alt="Tom &amp; &quot;Jerry&quot; &lt;3" src="x.png">Hi</p>'
    fmt = FORMATS["html"]
    assert [u.plain for u in units(fmt, data)] == ["Hi", 'Tom & "Jerry" <3']
    out = run(fmt, data, letters)
    img = lxml.html.fromstring(out.decode()).find(".//img")
    assert img is not None and (img.get("alt") or "").translate(BACK) == 'Tom & "Jerry" <3'


def test_markdown_backslash_escapes_inline_html_and_code_are_kept() -> None:
    data = (
        b"Use \\*stars\\* and \\_under\\_, `a <b> & c` code, <kbd>Ctrl</kbd> keys "
        b"and &lt;b&gt; text.\n\n```\n<b> & \\* kept\n```\n\n<div>Block &amp; html</div>\n"
    )
    fmt = FORMATS["markdown"]
    assert run(fmt, data) == data
    out = run(fmt, data, letters)
    md = MarkdownIt("commonmark")
    assert md.render(out.decode()).translate(BACK) == md.render(data.decode())
    assert b"\\\\*" not in out and out.count(b"\\*") == data.count(b"\\*")


def test_xliff_entities_and_cdata_come_back_as_the_same_text() -> None:
    data = b"""<?xml version="1.0" encoding="UTF-8"?>
<xliff version="1.2" xmlns="urn:oasis:names:tc:xliff:document:1.2">
<file original="a" source-language="en" target-language="es" datatype="plaintext"><body>
<trans-unit id="1"><source>Fish &amp; chips &lt;b&gt; "q" it's</source></trans-unit>
<trans-unit id="2"><source><![CDATA[Raw <b> & text]]></source></trans-unit>
</body></file></xliff>
"""
    ns = {"x": "urn:oasis:names:tc:xliff:document:1.2"}
    out = run(FORMATS["xliff"], data, letters)
    root = etree.fromstring(out)
    sources = ["".join(s.itertext()) for s in root.iterfind(".//x:source", ns)]
    targets = ["".join(t.itertext()).translate(BACK) for t in root.iterfind(".//x:target", ns)]
    assert targets == sources == ['Fish & chips <b> "q" it\'s', "Raw <b> & text"]


def test_po_escapes_come_back_as_the_same_text() -> None:
    data = b'msgid ""\nmsgstr "Content-Type: text/plain; charset=UTF-8\\n"\n\n'
    data += b'msgid "Say \\"hi\\"\\n\\tback\\\\slash"\nmsgstr ""\n'
    out = run(FORMATS["po"], data, letters)
    entry = polib.pofile(out.decode()).find('Say "hi"\n\tback\\slash')
    assert entry is not None and entry.msgstr.translate(BACK) == entry.msgid


def test_po_header_with_non_ascii_names_is_read() -> None:
    data = 'msgid ""\nmsgstr ""\n"Content-Type: text/plain; charset=UTF-8\\n"\n"Ünïcode: x\\n"\n'
    data += '\nmsgid "Hello"\nmsgstr ""\n'
    out = run(FORMATS["po"], data.encode(), letters)
    assert polib.pofile(out.decode()).metadata["Ünïcode"] == "x"


def test_json_escapes_come_back_as_the_same_text() -> None:
    data = b'{"a": "Say \\"hi\\"\\n caf\\u00e9 back\\\\slash\\ttab </b>"}\n'
    assert run(FORMATS["json"], data) == data
    out = run(FORMATS["json"], data, letters)
    assert json.loads(out)["a"].translate(BACK) == json.loads(data)["a"]


@pytest.mark.parametrize(
    "line",
    [
        "a: 'it''s: \"quoted\" # not a comment'",
        'a: "tab\\there \\"q\\" caf\\u00e9"',
        "a: plain & <b> text",
        "a: |\n  Line one: yes\n  line #two\n",
    ],
)
def test_yaml_quoting_comes_back_as_the_same_text(line: str) -> None:
    data = f"{line}\n".encode()
    assert run(FORMATS["yaml"], data) == data
    out = run(FORMATS["yaml"], data, letters)
    assert yaml.safe_load(out)["a"].translate(BACK) == yaml.safe_load(data)["a"]


def test_android_escapes_come_back_as_the_same_text() -> None:
    data = b"""<?xml version="1.0" encoding="utf-8"?>
<resources><string name="a">Don\\'t say \\"hi\\" &amp; &lt;b&gt;\\nnow</string></resources>
"""
    assert run(FORMATS["android"], data) == data
    out = run(FORMATS["android"], data, letters)
    assert (etree.fromstring(out)[0].text or "").translate(BACK) == etree.fromstring(data)[0].text


def test_srt_special_characters_come_back_as_the_same_text() -> None:
    data = b'1\n00:00:01,000 --> 00:00:02,000\nFish & chips <b>big</b> \\N "q"\nline two\n\n'
    out = run(FORMATS["srt"], data, letters)
    (before,), (after,) = srt.parse(data.decode()), srt.parse(out.decode())
    assert after.content.translate(BACK) == before.content


def _docx() -> bytes:
    document = docx.Document()
    paragraph = document.add_paragraph(f"{TRICKY}\tafter tab")
    paragraph.add_run().add_break()
    paragraph.add_run("next line")
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def _xlsx() -> bytes:
    book = openpyxl.Workbook()
    sheet = book.active
    assert sheet is not None
    sheet["A1"] = f"{TRICKY}\tand\nline"
    out = io.BytesIO()
    book.save(out)
    return out.getvalue()


def _pptx() -> bytes:
    deck = pptx.Presentation()
    slide = deck.slides.add_slide(deck.slide_layouts[5])
    assert slide.shapes.title is not None
    slide.shapes.title.text_frame.text = f"{TRICKY}\tand\vline"
    out = io.BytesIO()
    deck.save(out)
    return out.getvalue()


def _odt() -> bytes:
    document = OpenDocumentText()
    paragraph = P()
    teletype.addTextToElement(paragraph, f"{TRICKY}\tand  two\nline")
    document.text.addElement(paragraph)
    out = io.BytesIO()
    document.write(out)
    return out.getvalue()


def _docx_text(data: bytes) -> str:
    return "|".join(p.text for p in docx.Document(io.BytesIO(data)).paragraphs)


def _xlsx_text(data: bytes) -> str:
    sheet = openpyxl.load_workbook(io.BytesIO(data)).active
    assert sheet is not None
    return str(sheet["A1"].value)


def _pptx_text(data: bytes) -> str:
    deck = pptx.Presentation(io.BytesIO(data))
    return "|".join(s.text_frame.text for s in deck.slides[0].shapes if s.has_text_frame)


def _odt_text(data: bytes) -> str:
    return "|".join(teletype.extractText(p) for p in load(io.BytesIO(data)).getElementsByType(P))


@pytest.mark.parametrize(
    ("name", "make", "read"),
    [
        ("docx", _docx, _docx_text),
        ("xlsx", _xlsx, _xlsx_text),
        ("pptx", _pptx, _pptx_text),
        ("odt", _odt, _odt_text),
    ],
)
def test_office_special_characters_come_back_as_the_same_text(
    name: str, make: object, read: object
) -> None:
    assert callable(make) and callable(read)
    data = make()
    out = run(FORMATS[name], data, letters)
    assert read(out) != read(data)
    assert read(out).translate(BACK) == read(data)
    assert read(run(FORMATS[name], data)) == read(data)
