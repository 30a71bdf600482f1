"""PPTX: the text of slides (shapes, tables) and of speaker notes is translated; bold stays
on its words, line breaks and fields stay codes, layouts, masters and media are kept."""

from __future__ import annotations

import io
import zipfile
from collections.abc import Callable

import pptx
import pytest
from lxml import etree
from pptx.oxml import parse_xml as pptx_xml
from pptx.util import Inches

from dragoman.errors import InvalidFile
from dragoman.formats import FORMATS
from tests.formats.helpers import pseudo, pseudo_text, run, units
from tests.formats.test_docx import c14n, masked, png, replace_member, same_package, upper

FMT = FORMATS["pptx"]
A = "http://schemas.openxmlformats.org/drawingml/2006/main"
NS = {"a": A}

# As PowerPoint writes a sentence that was edited: the same properties but for the
# language, spell-check and "dirty" flags, one word in a run of its own; a slide number.
NOISY = (
    f'<a:p xmlns:a="{A}"><a:r><a:rPr lang="en-US" dirty="0"/><a:t>Costs fell </a:t></a:r>'
    '<a:r><a:rPr lang="en-GB" dirty="0" err="1"/><a:t>sharpley</a:t></a:r>'
    '<a:r><a:rPr lang="en-US"/><a:t> on slide </a:t></a:r>'
    '<a:fld id="{B6F15528-21DE-4FAA-801E-634DDDAF4B2B}" type="slidenum"><a:rPr lang="en-US"/>'
    '<a:t>2</a:t></a:fld><a:endParaRPr lang="en-US" dirty="0"/></a:p>'
)


def sample() -> bytes:
    deck = pptx.Presentation()
    first = deck.slides.add_slide(deck.slide_layouts[0])
    first.shapes.title.text = "Quarterly results"
    first.placeholders[1].text_frame.text = "Prepared by the finance team"
    second = deck.slides.add_slide(deck.slide_layouts[1])
    second.shapes.title.text = "Highlights"
    body = second.placeholders[1].text_frame
    body.text = "Sales grew "
    bold = body.paragraphs[0].add_run()
    bold.text = "strongly"
    bold.font.bold = True
    body.paragraphs[0].add_run().text = " in spring. Margins held. See "
    link = body.paragraphs[0].add_run()
    link.text = "the report"
    link.hyperlink.address = "https://example.org/report"
    body.add_paragraph().text = "Line one\vline two"
    body._txBody.append(pptx_xml(NOISY))
    table = second.shapes.add_table(2, 2, Inches(1), Inches(4), Inches(4), Inches(1)).table
    for i, cell in enumerate(c for row in table.rows for c in row.cells):
        cell.text = f"Region {i}"
    second.shapes.add_picture(io.BytesIO(png()), Inches(6), Inches(1))
    second.notes_slide.notes_text_frame.text = "Pause here for questions."
    out = io.BytesIO()
    deck.save(out)
    return out.getvalue()


PARTS = ("ppt/slides/slide1.xml", "ppt/slides/slide2.xml", "ppt/notesSlides/notesSlide1.xml")


def member(data: bytes, name: str) -> bytes:
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        return z.read(name)


def texts(data: bytes) -> list[str]:
    deck = pptx.Presentation(io.BytesIO(data))
    return [
        p.text
        for slide in deck.slides
        for shape in slide.shapes
        if shape.has_text_frame
        for p in shape.text_frame.paragraphs
    ]


@pytest.mark.parametrize("segmentation", [True, False])
def test_identity_round_trip(segmentation: bool) -> None:
    data = sample()
    same_package(run(FMT, data, segmentation=segmentation), data)


def test_units() -> None:
    assert [u.stored() for u in units(FMT, sample())] == [
        "Quarterly results",
        "Prepared by the finance team",
        "Highlights",
        "Sales grew <g1>strongly</g1> in spring. Margins held. See <g2>the report</g2>",
        "Line one<x1/>line two",
        "Costs fell sharpley on slide <x1/>",  # lang, err, dirty are not formatting
        *(f"Region {i}" for i in range(4)),
        "Pause here for questions.",
    ]


def test_rewriting_minimal_runs_changes_only_their_text() -> None:
    data = sample()
    out = run(FMT, data, upper)
    for part in PARTS[:1] + PARTS[2:]:
        original = etree.fromstring(member(data, part))
        for t in original.iter(f"{{{A}}}t"):
            t.text = (t.text or "").upper()
        assert c14n(member(out, part)) == c14n(etree.tostring(original)), part


def skeleton(xml: bytes) -> bytes:
    tree = etree.fromstring(xml)
    for p in tree.iter(f"{{{A}}}p"):
        for child in list(p):
            if child.tag not in (f"{{{A}}}pPr", f"{{{A}}}endParaRPr"):
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
    names = zipfile.ZipFile(io.BytesIO(data)).namelist()
    assert zipfile.ZipFile(io.BytesIO(out)).namelist() == names
    for name in names:
        if name in PARTS:
            assert skeleton(member(out, name)) == skeleton(member(data, name)), name
        else:
            assert member(out, name) == member(data, name), name


def test_what_presenters_expect_after_pseudo() -> None:
    out = run(FMT, sample(), pseudo, segmentation=False)
    deck = pptx.Presentation(io.BytesIO(out))
    slide = deck.slides[1]
    body = slide.placeholders[1].text_frame.paragraphs
    assert [r.text for r in body[0].runs if r.font.bold] == [pseudo_text("strongly")]
    linked = [(r.text, r.hyperlink.address) for r in body[0].runs if r.hyperlink.address]
    assert linked == [(pseudo_text("the report"), "https://example.org/report")]
    assert body[1].text == pseudo_text("Line one") + "\v" + pseudo_text("line two")
    table = next(s for s in slide.shapes if s.has_table).table
    cells = [c.text for row in table.rows for c in row.cells]
    assert cells == [pseudo_text(f"Region {i}") for i in range(4)]
    assert slide.notes_slide.notes_text_frame.text == pseudo_text("Pause here for questions.")
    picture = next(s for s in slide.shapes if s.shape_type == 13)
    assert picture.image.blob == png()
    noisy = etree.fromstring(member(out, "ppt/slides/slide2.xml")).xpath(
        "//a:p[a:fld]", namespaces=NS
    )[0]
    assert noisy.xpath("a:r/a:rPr/@lang", namespaces=NS) == ["en-US"]  # left as it was
    assert noisy.xpath("a:fld/a:t/text()", namespaces=NS) == ["2"]
    assert noisy.xpath("a:endParaRPr/@lang", namespaces=NS) == ["en-US"]


def test_layouts_and_masters_are_kept() -> None:
    data = sample()
    out = run(FMT, data, pseudo)
    for name in zipfile.ZipFile(io.BytesIO(data)).namelist():
        if name.startswith(("ppt/slideLayouts/", "ppt/slideMasters/")):
            assert member(out, name) == member(data, name)


def test_partial_translates_the_first_unit_only() -> None:
    data = sample()
    out = texts(run(FMT, data, pseudo, partial=1))
    assert out[0] == pseudo_text("Quarterly results")
    assert out[1:] == texts(data)[1:]


def test_not_a_zip() -> None:
    with pytest.raises(InvalidFile, match=r"deck\.pptx: not a zip"):
        FMT.extract(b"slide one\n", filename="deck.pptx")


def test_a_word_document_is_not_a_presentation() -> None:
    from tests.formats.test_docx import sample as word

    with pytest.raises(InvalidFile, match=r"w\.pptx: no ppt/presentation\.xml"):
        FMT.extract(word(), filename="w.pptx")


def test_compressed_suspiciously_well() -> None:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("ppt/presentation.xml", "<p/>")
        z.writestr("ppt/media/zeros.bin", bytes(20 * 2**20))
    with pytest.raises(InvalidFile, match=r"bomb\.pptx: ppt/media/zeros\.bin is compressed"):
        FMT.extract(out.getvalue(), filename="bomb.pptx")


def test_too_many_members() -> None:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        for i in range(5001):
            z.writestr(f"ppt/media/{i}.bin", b"")
    with pytest.raises(InvalidFile, match="more than 5000 members"):
        FMT.extract(out.getvalue(), filename="many.pptx")


@pytest.mark.parametrize(
    ("mangle", "message"),
    [
        (lambda x: x.replace(b"</p:sld>", b""), r"slide2\.xml: malformed XML at line 2"),
        (
            lambda x: x.replace(
                b"?>\n", b'?>\n<!DOCTYPE p:sld [<!ENTITY e SYSTEM "file:///etc/hostname">]>', 1
            ).replace(b"Highlights", b"&e;"),
            r"slide2\.xml: a DTD that declares entities is refused",
        ),
    ],
)
def test_bad_slide_xml(mangle: Callable[[bytes], bytes], message: str) -> None:
    data = sample()
    bad = replace_member(data, PARTS[1], mangle(member(data, PARTS[1])))
    with pytest.raises(InvalidFile, match=rf"bad\.pptx: ppt/slides/{message}"):
        FMT.extract(bad, filename="bad.pptx")
