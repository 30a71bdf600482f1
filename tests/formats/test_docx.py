"""DOCX: paragraphs of the body, tables, text boxes, headers, footers and footnotes are
translated; formatting stays on the words that carried it; everything else is kept."""

from __future__ import annotations

import io
import re
import struct
import zipfile
import zlib
from collections.abc import Callable

import docx
import pytest
from docx.oxml import parse_xml as docx_xml
from docx.text.paragraph import Paragraph
from lxml import etree

from dragoman.errors import InvalidFile
from dragoman.formats import FORMATS
from dragoman.formats.markup import Marked, Token
from tests.formats.helpers import pseudo, pseudo_text, run, units

FMT = FORMATS["docx"]
W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
NS = {"w": W}
DECLS = (
    f'xmlns:w="{W}" xmlns:v="urn:schemas-microsoft-com:vml" '
    'xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"'
)


def png() -> bytes:
    def chunk(kind: bytes, body: bytes) -> bytes:
        crc = zlib.crc32(kind + body)
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", crc)

    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(b"\0\xff\0\0"))
        + chunk(b"IEND", b"")
    )


def upper(unit: Marked) -> Marked:
    tokens: list[Token] = [t.upper() if isinstance(t, str) else t for t in unit.tokens]
    return Marked.of(tokens)


def masked(unit: Marked) -> str:
    return re.sub(r"[^<>]+(?=<|$)", "#", unit.stored())


def same_package(out: bytes, original: bytes, translated: tuple[str, ...] = ()) -> None:
    """Same members in the same order; XML parts C14N-equal, every other member, and each
    part not in ``translated``, byte-equal."""
    with zipfile.ZipFile(io.BytesIO(out)) as a, zipfile.ZipFile(io.BytesIO(original)) as b:
        assert [i.filename for i in a.infolist()] == [i.filename for i in b.infolist()]
        assert [i.compress_type for i in a.infolist()] == [i.compress_type for i in b.infolist()]
        for name in b.namelist():
            if name in translated:
                assert c14n(a.read(name)) == c14n(b.read(name)), name
            else:
                assert a.read(name) == b.read(name), name


def c14n(xml: bytes) -> bytes:
    out: bytes = etree.tostring(etree.fromstring(xml), method="c14n")
    return out


def replace_member(data: bytes, name: str, content: bytes) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as src, zipfile.ZipFile(out, "w") as dst:
        for info in src.infolist():
            dst.writestr(info, content if info.filename == name else src.read(info))
    return out.getvalue()


def add_part(data: bytes, name: str, xml: str, rel_type: str, content_type: str) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as src, zipfile.ZipFile(out, "w") as dst:
        for info in src.infolist():
            body = src.read(info)
            if info.filename == "[Content_Types].xml":
                override = f'<Override PartName="/{name}" ContentType="{content_type}"/>'
                body = body.replace(b"</Types>", override.encode() + b"</Types>")
            elif info.filename == "word/_rels/document.xml.rels":
                rel = f'<Relationship Id="rIdX" Type="{rel_type}" Target="{name[5:]}"/>'
                body = body.replace(b"</Relationships>", rel.encode() + b"</Relationships>")
            dst.writestr(info, body, zipfile.ZIP_DEFLATED)
        dst.writestr(name, xml, zipfile.ZIP_DEFLATED)
    return out.getvalue()


FOOTNOTES = f"""<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<w:footnotes {DECLS}>
<w:footnote w:type="separator" w:id="-1"><w:p><w:r><w:separator/></w:r></w:p></w:footnote>
<w:footnote w:id="1"><w:p><w:r><w:t>Source: internal figures.</w:t></w:r></w:p></w:footnote>
</w:footnotes>"""

BODY_XML = [
    f'<w:p {DECLS}><w:r><w:t xml:space="preserve">Read the notes in </w:t></w:r>'
    '<w:hyperlink w:anchor="_Top"><w:r><w:rPr><w:u w:val="single"/></w:rPr>'
    "<w:t>the summary</w:t></w:r></w:hyperlink><w:r><w:t>, then decide.</w:t></w:r>"
    '<w:r><w:rPr><w:vertAlign w:val="superscript"/></w:rPr>'
    '<w:footnoteReference w:id="1"/></w:r></w:p>',
    f'<w:p {DECLS}><w:r><w:t xml:space="preserve">See the box </w:t></w:r><w:r><w:pict>'
    '<v:shape id="box"><v:textbox><w:txbxContent><w:p><w:r><w:t>Text in a box</w:t></w:r>'
    "</w:p></w:txbxContent></v:textbox></v:shape></w:pict></w:r></w:p>",
]


def sample() -> bytes:
    doc = docx.Document()
    doc.add_heading("Annual report", level=1)
    p = doc.add_paragraph("The results were ")
    p.add_run("excellent").bold = True
    p.add_run(" this year and ")
    p.add_run("surprising").italic = True
    p.add_run(" to all. A second sentence ends here.")
    doc.add_paragraph("Total:\tforty-two")
    table = doc.add_table(rows=2, cols=2)
    for i, cell in enumerate(table._cells):
        cell.text = f"Cell number {i}"
    doc.add_picture(io.BytesIO(png()))
    doc.add_paragraph()  # empty: not a unit
    for xml in BODY_XML:
        doc.element.body.insert(len(doc.element.body) - 1, docx_xml(xml))
    section = doc.sections[0]
    section.header.paragraphs[0].text = "Company confidential"
    section.footer.paragraphs[0].text = "Printed on recycled paper"
    out = io.BytesIO()
    doc.save(out)
    return add_part(
        out.getvalue(),
        "word/footnotes.xml",
        FOOTNOTES,
        "http://schemas.openxmlformats.org/officeDocument/2006/relationships/footnotes",
        "application/vnd.openxmlformats-officedocument.wordprocessingml.footnotes+xml",
    )


# Word split this sentence over runs as it was typed: revision marks (rsid) on every run,
# spell-check marks around a typo, the bold word in two runs; and a PAGE field.
SPLIT = f"""<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<w:document {DECLS}><w:body>
<w:p w:rsidR="00A1" w:rsidRDefault="00B2"><w:pPr><w:jc w:val="center"/></w:pPr>
<w:r w:rsidR="001"><w:t xml:space="preserve">The quick </w:t></w:r>
<w:proofErr w:type="spellStart"/><w:r w:rsidRPr="002"><w:t>brwn</w:t></w:r>
<w:proofErr w:type="spellEnd"/><w:r w:rsidR="003"><w:t xml:space="preserve"> fox </w:t></w:r>
<w:r w:rsidR="004"><w:rPr><w:b/></w:rPr><w:t>jum</w:t></w:r>
<w:r w:rsidR="005"><w:rPr><w:b/></w:rPr><w:lastRenderedPageBreak/><w:t>ps</w:t></w:r>
<w:r w:rsidR="006"><w:t xml:space="preserve"> over the </w:t></w:r>
<w:r w:rsidR="007"><w:t>lazy dog.</w:t></w:r></w:p>
<w:p><w:r><w:t xml:space="preserve">Page </w:t></w:r><w:r><w:fldChar w:fldCharType="begin"/></w:r>
<w:r><w:instrText xml:space="preserve"> PAGE </w:instrText></w:r>
<w:r><w:fldChar w:fldCharType="separate"/></w:r><w:r><w:t>1</w:t></w:r>
<w:r><w:fldChar w:fldCharType="end"/></w:r></w:p>
<w:p><w:r w:rsidR="008"><w:t xml:space="preserve">Visit https://exa</w:t></w:r>
<w:r w:rsidR="009"><w:t>mple.org/a today.</w:t></w:r></w:p>
<w:sectPr/></w:body></w:document>"""


def package(document: str | bytes, extra: dict[str, bytes] | None = None) -> bytes:
    types = (
        '<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/'
        'package/2006/content-types"><Default Extension="rels" ContentType="application/'
        'vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" '
        'ContentType="application/xml"/><Override PartName="/word/document.xml" ContentType='
        '"application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/>'
        "</Types>"
    )
    rels = (
        '<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.'
        'openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://'
        "schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument"
        '" Target="word/document.xml"/></Relationships>'
    )
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("[Content_Types].xml", types)
        z.writestr("_rels/.rels", rels)
        z.writestr("word/document.xml", document)
        for name, content in (extra or {}).items():
            z.writestr(name, content)
    return out.getvalue()


def chars(paragraph: Paragraph) -> list[tuple[str, bool, bool]]:
    return [(c, bool(r.bold), bool(r.italic)) for r in paragraph.runs for c in r.text]


XML_PARTS = ("word/document.xml", "word/header1.xml", "word/footer1.xml", "word/footnotes.xml")


@pytest.mark.parametrize("segmentation", [True, False])
def test_identity_round_trip(segmentation: bool) -> None:
    data = sample()
    same_package(run(FMT, data, segmentation=segmentation), data)
    split = package(SPLIT)
    assert run(FMT, split, segmentation=segmentation) == split


def test_units_merge_runs_and_keep_formatting_as_codes() -> None:
    stored = [u.stored() for u in units(FMT, sample())]
    assert stored == [
        "Annual report",
        "The results were <g1>excellent</g1> this year and <g2>surprising</g2> to all. "
        "A second sentence ends here.",
        "Total:<x1/>forty-two",
        *(f"Cell number {i}" for i in range(4)),
        "Read the notes in <g1><g2>the summary</g2></g1>, then decide.<x3/>",
        "See the box <x1/>",
        "Text in a box",  # its own unit, not in the paragraph holding the box
        "Company confidential",
        "Printed on recycled paper",
        "Source: internal figures.",
    ]
    assert [u.stored() for u in units(FMT, package(SPLIT))] == [
        "The quick brwn fox <g1>jumps</g1> over the lazy dog.",
        "Page <x1/><x2/><x3/>1<x4/>",
        "Visit <x1/> today.",  # the URL, split over two runs, is still one placeholder
    ]


def test_rewriting_minimal_runs_changes_only_their_text() -> None:
    data = sample()
    out = run(FMT, data, upper)
    for part in XML_PARTS:
        original = etree.fromstring(zipfile.ZipFile(io.BytesIO(data)).read(part))
        for t in original.iter(f"{{{W}}}t"):
            t.text = (t.text or "").upper()
        rewritten = etree.fromstring(zipfile.ZipFile(io.BytesIO(out)).read(part))
        assert c14n(etree.tostring(rewritten)) == c14n(etree.tostring(original)), part


def test_rewriting_split_runs_keeps_formatting_per_character() -> None:
    # Word's split runs are merged, so the XML differs; what the reader sees does not.
    data = package(SPLIT)
    before = docx.Document(io.BytesIO(data)).paragraphs
    after = docx.Document(io.BytesIO(run(FMT, data, upper))).paragraphs
    assert chars(after[0]) == [(c.upper(), b, i) for c, b, i in chars(before[0])]
    assert after[0].alignment == before[0].alignment
    body = etree.fromstring(zipfile.ZipFile(io.BytesIO(run(FMT, data, upper))).read(XML_PARTS[0]))
    assert [t.text for t in body.iter(f"{{{W}}}t")][:3] == [
        "THE QUICK BRWN FOX ",
        "JUMPS",
        " OVER THE LAZY DOG.",
    ]
    assert [t.text for t in body.iter(f"{{{W}}}instrText")] == [" PAGE "]
    assert [p.text for p in after][2] == "VISIT https://example.org/a TODAY."
    assert not list(body.iter(f"{{{W}}}proofErr"))


def skeleton(xml: bytes) -> bytes:
    tree = etree.fromstring(xml)
    for p in tree.xpath("//w:p[not(ancestor::w:p)]", namespaces=NS):
        for child in list(p):
            if child.tag != f"{{{W}}}pPr":
                p.remove(child)
    return c14n(etree.tostring(tree))


@pytest.mark.parametrize("make", [sample, lambda: package(SPLIT)])
def test_pseudo_changes_every_unit_and_nothing_else(make: Callable[[], bytes]) -> None:
    data = make()
    out = run(FMT, data, pseudo)
    before, after = units(FMT, data), units(FMT, out)
    assert len(after) == len(before)
    for source, target in zip(before, after, strict=True):
        assert target.plain != source.plain
        assert masked(target) == masked(source)
    src, dst = zipfile.ZipFile(io.BytesIO(data)), zipfile.ZipFile(io.BytesIO(out))
    assert dst.namelist() == src.namelist()
    for name in src.namelist():
        if name in XML_PARTS:
            assert skeleton(dst.read(name)) == skeleton(src.read(name)), name
        else:
            assert dst.read(name) == src.read(name), name


def test_what_word_users_expect_after_pseudo() -> None:
    data = sample()
    out = run(FMT, data, pseudo, segmentation=False)
    doc = docx.Document(io.BytesIO(out))
    bold = [r.text for p in doc.paragraphs for r in p.runs if r.bold]
    italic = [r.text for p in doc.paragraphs for r in p.runs if r.italic]
    assert bold == [pseudo_text("excellent")]
    assert italic == [pseudo_text("surprising")]
    cells = [c.text for c in doc.tables[0]._cells]
    assert cells == [pseudo_text(f"Cell number {i}") for i in range(4)]
    section = doc.sections[0]
    assert section.header.paragraphs[0].text == pseudo_text("Company confidential")
    assert section.footer.paragraphs[0].text == pseudo_text("Printed on recycled paper")
    notes = etree.fromstring(zipfile.ZipFile(io.BytesIO(out)).read("word/footnotes.xml"))
    note = notes.xpath("//w:footnote[@w:id='1']//w:t/text()", namespaces=NS)
    assert note == [pseudo_text("Source: internal figures.")]
    body = etree.fromstring(zipfile.ZipFile(io.BytesIO(out)).read("word/document.xml"))
    box = body.xpath("//w:txbxContent//w:t", namespaces=NS)
    assert [t.text for t in box] == [pseudo_text("Text in a box")]
    link = body.xpath("//w:hyperlink", namespaces=NS)[0]
    assert link.get(f"{{{W}}}anchor") == "_Top"
    assert "".join(link.itertext()) == pseudo_text("the summary")
    assert body.xpath("//w:footnoteReference/@w:id", namespaces=NS) == ["1"]
    assert len(doc.paragraphs) == len(docx.Document(io.BytesIO(data)).paragraphs)
    assert len(doc.inline_shapes) == 1
    assert zipfile.ZipFile(io.BytesIO(out)).read("word/media/image1.png") == png()


def test_partial_translates_the_first_unit_only() -> None:
    data = sample()
    out = run(FMT, data, pseudo, partial=1)
    texts = [p.text for p in docx.Document(io.BytesIO(out)).paragraphs]
    original = [p.text for p in docx.Document(io.BytesIO(data)).paragraphs]
    assert texts[0] == pseudo_text("Annual report")
    assert texts[1:] == original[1:]


def test_not_a_zip() -> None:
    with pytest.raises(InvalidFile, match=r"report\.docx: not a zip"):
        FMT.extract(b"Dear all,\nplease translate this.\n", filename="report.docx")


def test_a_zip_that_is_not_a_word_document() -> None:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        z.writestr("readme.txt", "hello")
    with pytest.raises(InvalidFile, match=r"x\.docx: no word/document\.xml"):
        FMT.extract(out.getvalue(), filename="x.docx")


@pytest.mark.timeout(30)  # a hang, not a speed: fails only far beyond its normal time
def test_zip_bomb_is_refused_quickly() -> None:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("word/document.xml", SPLIT)
        with z.open("word/media/zeros.bin", "w", force_zip64=True) as member:
            block = bytes(2**20)
            for _ in range(300):
                member.write(block)
    with pytest.raises(InvalidFile, match=r"bomb\.docx"):
        FMT.extract(out.getvalue(), filename="bomb.docx")


def test_too_many_members() -> None:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        z.writestr("word/document.xml", SPLIT)
        for i in range(5001):
            z.writestr(f"word/media/{i}.bin", b"")
    with pytest.raises(InvalidFile, match="more than 5000 members"):
        FMT.extract(out.getvalue(), filename="many.docx")


def test_malformed_document_names_the_part_and_line() -> None:
    broken = f'<?xml version="1.0"?>\n<w:document {DECLS}>\n<w:body><w:p></w:body>'
    with pytest.raises(InvalidFile, match=r"bad\.docx: word/document\.xml: .*line 3"):
        FMT.extract(package(broken), filename="bad.docx")


def test_wrong_encoding_is_refused() -> None:
    latin = SPLIT.replace("quick", "quick café").encode("latin-1")
    with pytest.raises(InvalidFile, match=r"word/document\.xml: malformed XML at line 4"):
        FMT.extract(package(latin), filename="latin.docx")


@pytest.mark.parametrize(
    "doctype",
    [
        '<!DOCTYPE w:document [<!ENTITY xxe SYSTEM "file:///etc/hostname">]>',
        '<!DOCTYPE w:document [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;">]>',
    ],
)
def test_entities_are_refused(doctype: str) -> None:
    ref = "&xxe;" if "xxe" in doctype else "&b;"
    evil = SPLIT.replace("?>\n", f"?>\n{doctype}\n", 1).replace("lazy dog.", ref)
    with pytest.raises(InvalidFile, match=r"evil\.docx: word/document\.xml") as caught:
        FMT.extract(package(evil), filename="evil.docx")
    assert "aaaa" not in caught.value.message


def test_strict_open_xml_is_refused_not_passed_through() -> None:
    strict = SPLIT.replace(W, "http://purl.oclc.org/ooxml/wordprocessingml/main")
    with pytest.raises(InvalidFile, match=r"s\.docx: word/document\.xml is Strict Open XML"):
        FMT.extract(package(strict), filename="s.docx")
