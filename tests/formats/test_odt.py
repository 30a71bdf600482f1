"""ODT: paragraphs and headings of the body, tables, frames, notes, and the page headers
and footers in styles.xml are translated; spans and links stay on their words; the
package (``mimetype`` first and stored) is otherwise kept."""

from __future__ import annotations

import io
import zipfile

import pytest
from lxml import etree
from odf import teletype
from odf.draw import Frame, Image, TextBox
from odf.opendocument import OpenDocumentText, load
from odf.style import Footer, Header, MasterPage, PageLayout, Style, TextProperties
from odf.table import Table, TableColumn, TableRow
from odf.table import TableCell as Cell
from odf.text import A, H, Note, NoteBody, NoteCitation, P, Span

from dragoman.errors import InvalidFile
from dragoman.formats import FORMATS
from tests.formats.helpers import pseudo, pseudo_text, run, units
from tests.formats.test_docx import c14n, masked, png, replace_member, same_package, upper

FMT = FORMATS["odt"]
TEXT = "urn:oasis:names:tc:opendocument:xmlns:text:1.0"
NS = {"text": TEXT}
PARTS = ("content.xml", "styles.xml")


def paragraph(*content: object) -> P:
    p = P()
    for item in content:
        if isinstance(item, str):
            teletype.addTextToElement(p, item)
        else:
            p.addElement(item)
    return p


def sample() -> bytes:
    doc = OpenDocumentText()
    bold = Style(name="T1", family="text")
    bold.addElement(TextProperties(fontweight="bold"))
    doc.automaticstyles.addElement(bold)
    layout = PageLayout(name="pm1")
    doc.automaticstyles.addElement(layout)
    master = MasterPage(name="Standard", pagelayoutname=layout)
    header, footer = Header(), Footer()
    header.addElement(P(text="Company confidential"))
    footer.addElement(P(text="Printed on recycled paper"))
    master.addElement(header)
    master.addElement(footer)
    doc.masterstyles.addElement(master)
    body = doc.text
    body.addElement(H(outlinelevel=1, text="Annual report"))
    body.addElement(paragraph("The results were ", Span(stylename=bold, text="excellent"), " now."))
    body.addElement(paragraph("Total:\tforty  two"))
    note = Note(id="ftn1", noteclass="footnote")
    note.addElement(NoteCitation(text="1"))
    note_body = NoteBody()
    note_body.addElement(P(text="Source: internal figures."))
    note.addElement(note_body)
    link = A(href="https://example.org/", text="website")
    body.addElement(paragraph("See the note", note, " and the ", link, "."))
    box = Frame(width="4cm", height="2cm", anchortype="as-char")
    text_box = TextBox()
    text_box.addElement(P(text="Text in a box"))
    box.addElement(text_box)
    body.addElement(paragraph("See the box ", box))
    table = Table(name="Figures")
    table.addElement(TableColumn(numbercolumnsrepeated=2))
    for r in range(2):
        row = TableRow()
        for c in range(2):
            cell = Cell()
            cell.addElement(P(text=f"Cell number {2 * r + c}"))
            row.addElement(cell)
        table.addElement(row)
    body.addElement(table)
    picture = Frame(width="1cm", height="1cm", anchortype="as-char")
    picture.addElement(Image(href=doc.addPicture("Pictures/dot.png", "image/png", png())))
    body.addElement(paragraph(picture))  # no text: not a unit
    out = io.BytesIO()
    doc.write(out)
    return out.getvalue()


def member(data: bytes, name: str) -> bytes:
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        return z.read(name)


def texts(data: bytes) -> list[str]:
    doc = load(io.BytesIO(data))
    found = [doc.text.getElementsByType(kind) for kind in (H, P)]
    return [teletype.extractText(p) for group in found for p in group]


@pytest.mark.parametrize("segmentation", [True, False])
def test_identity_round_trip(segmentation: bool) -> None:
    data = sample()
    same_package(run(FMT, data, segmentation=segmentation), data)


def test_units() -> None:
    assert [u.stored() for u in units(FMT, sample())] == [
        "Annual report",
        "The results were <g1>excellent</g1> now.",
        "Total:<x1/>forty <x2/>two",
        "See the note<x1/> and the <g2>website</g2>.",
        "Source: internal figures.",  # the note's body: a unit of its own
        "See the box <x1/>",
        "Text in a box",
        *(f"Cell number {i}" for i in range(4)),
        "Company confidential",
        "Printed on recycled paper",
    ]


def test_rewriting_changes_only_the_text() -> None:
    data = sample()
    out = run(FMT, data, upper)
    for part in PARTS:
        original = etree.fromstring(member(data, part))
        for p in original.iter(f"{{{TEXT}}}p", f"{{{TEXT}}}h", f"{{{TEXT}}}span", f"{{{TEXT}}}a"):
            p.text = p.text.upper() if p.text else None
            for child in p:
                child.tail = child.tail.upper() if child.tail else None
        assert c14n(member(out, part)) == c14n(etree.tostring(original)), part


def skeleton(xml: bytes) -> bytes:
    tree = etree.fromstring(xml)
    for p in tree.xpath("//text:p[not(ancestor::text:p)]|//text:h", namespaces=NS):
        p.text = None
        for child in list(p):
            p.remove(child)
    return c14n(etree.tostring(tree))


def test_pseudo_changes_every_unit_and_nothing_else() -> None:
    data = sample()
    out = run(FMT, data, pseudo)
    before, after = units(FMT, data), units(FMT, out)
    assert len(after) == len(before)
    for source, target in zip(before, after, strict=True):
        assert target.plain != source.plain
        assert masked(target) == masked(source)
    for name in zipfile.ZipFile(io.BytesIO(data)).namelist():
        if name in PARTS:
            assert skeleton(member(out, name)) == skeleton(member(data, name)), name
        else:
            assert member(out, name) == member(data, name), name


def test_what_writers_expect_after_pseudo() -> None:
    out = run(FMT, sample(), pseudo, segmentation=False)
    infos = zipfile.ZipFile(io.BytesIO(out)).infolist()
    assert (infos[0].filename, infos[0].compress_type) == ("mimetype", zipfile.ZIP_STORED)
    assert member(out, "mimetype") == b"application/vnd.oasis.opendocument.text"
    assert member(out, "Pictures/dot.png") == png()
    doc = load(io.BytesIO(out))
    spans = [teletype.extractText(s) for s in doc.text.getElementsByType(Span)]
    assert spans == [pseudo_text("excellent")]
    links = doc.text.getElementsByType(A)
    assert [teletype.extractText(a) for a in links] == [pseudo_text("website")]
    assert links[0].getAttribute("href") == "https://example.org/"
    found = texts(out)
    assert pseudo_text("Source: internal figures.") in found
    assert pseudo_text("Text in a box") in found
    assert [pseudo_text(f"Cell number {i}") for i in range(4)] == found[-5:-1]
    content = etree.fromstring(member(out, "content.xml"))
    assert content.xpath("//text:p[text:s]//text()", namespaces=NS) == [
        pseudo_text("Total:"),
        pseudo_text("forty "),
        pseudo_text("two"),
    ]
    header = [teletype.extractText(p) for p in doc.masterstyles.getElementsByType(P)]
    assert header == [pseudo_text("Company confidential"), pseudo_text("Printed on recycled paper")]


def test_partial_translates_the_first_unit_only() -> None:
    data = sample()
    out = texts(run(FMT, data, pseudo, partial=1))
    assert out[0] == pseudo_text("Annual report")
    assert out[1:] == texts(data)[1:]


def test_not_a_zip() -> None:
    with pytest.raises(InvalidFile, match=r"memo\.odt: not a zip"):
        FMT.extract(b"<office:document/>", filename="memo.odt")


def test_zip_without_content() -> None:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        z.writestr("mimetype", "application/vnd.oasis.opendocument.text")
    with pytest.raises(InvalidFile, match=r"x\.odt: no content\.xml"):
        FMT.extract(out.getvalue(), filename="x.odt")


def test_bomb_and_too_many_members() -> None:
    bomb, many = io.BytesIO(), io.BytesIO()
    with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("content.xml", bytes(20 * 2**20))
    with zipfile.ZipFile(many, "w") as z:
        for i in range(5001):
            z.writestr(f"Pictures/{i}.png", b"")
    with pytest.raises(InvalidFile, match=r"b\.odt: content\.xml is compressed suspiciously"):
        FMT.extract(bomb.getvalue(), filename="b.odt")
    with pytest.raises(InvalidFile, match="more than 5000 members"):
        FMT.extract(many.getvalue(), filename="m.odt")


def test_malformed_styles_names_the_part_and_line() -> None:
    data = sample()
    broken = member(data, "styles.xml").replace(b"</style:header>", b"\n</style:heade>")
    with pytest.raises(InvalidFile, match=r"bad\.odt: styles\.xml: malformed XML at line 3"):
        FMT.extract(replace_member(data, "styles.xml", broken), filename="bad.odt")


def test_entities_are_refused() -> None:
    data = sample()
    evil = (
        member(data, "content.xml")
        .replace(b"?>\n", b'?>\n<!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/hostname">]>\n', 1)
        .replace(b"Annual report", b"&e;")
    )
    with pytest.raises(InvalidFile, match=r"evil\.odt: content\.xml: a DTD"):
        FMT.extract(replace_member(data, "content.xml", evil), filename="evil.odt")
