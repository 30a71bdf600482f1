"""XLSX: shared strings, inline strings and comments are translated, rich text keeps its
formatting; formulas, numbers, sheet names and every other member are kept."""

from __future__ import annotations

import io
import re
import zipfile
from collections.abc import Callable, Mapping

import openpyxl
import pytest
from lxml import etree
from openpyxl.cell.rich_text import CellRichText, TextBlock
from openpyxl.cell.text import InlineFont
from openpyxl.comments import Comment

from dragoman.errors import InvalidFile
from dragoman.formats.markup import Marked
from dragoman.formats.xlsx import FORMAT
from tests.formats.helpers import pseudo, pseudo_text, run, units

S = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
R = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
PKG = "http://schemas.openxmlformats.org/package/2006/relationships"
OFFICE = "application/vnd.openxmlformats-officedocument.spreadsheetml"

SHARED = f"""<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<sst xmlns="{S}" count="7" uniqueCount="6">
<si><t>Quarterly budget</t></si>
<si><t xml:space="preserve">Total for %1$s: see https://example.com/help </t></si>
<si><r><t xml:space="preserve">Revenue was </t></r><r><rPr><b/><sz val="11"/>\
<rFont val="Calibri"/></rPr><t>higher</t></r><r><t xml:space="preserve"> than planned.</t>\
</r></si>
<si><t>Tokyo office</t><rPh sb="0" eb="5"><t>トウキョウ</t></rPh><phoneticPr fontId="1"/></si>
<si><t>First line_x000D_
Second line</t></si>
<si><t>1234</t></si>
</sst>"""

SHEET1 = f"""<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<worksheet xmlns="{S}" xmlns:r="{R}"><sheetData>
<row r="1"><c r="A1" t="s"><v>0</v></c><c r="B1" t="inlineStr"><is><t>Inline note</t></is></c>\
</row>
<row r="2"><c r="A2" t="s"><v>1</v></c><c r="B2"><v>1234.5</v></c><c r="C2" t="b"><v>1</v></c>\
</row>
<row r="3"><c r="A3" t="s"><v>2</v></c><c r="B3" t="str"><f>CONCATENATE("Hello"," world")</f>\
<v>Hello world</v></c></row>
<row r="4"><c r="A4" t="s"><v>3</v></c><c r="B4"><f>SUM(Sales!B2:B3)</f><v>1234.5</v></c></row>
<row r="5"><c r="A5" t="s"><v>4</v></c><c r="B5" t="s"><v>0</v></c><c r="C5" t="e">\
<v>#DIV/0!</v></c><c r="D5" t="s"><v>5</v></c></row>
</sheetData><legacyDrawing r:id="rId2"/></worksheet>"""

SHEET2 = f"""<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<worksheet xmlns="{S}"><sheetData><row r="1"><c r="A1" t="inlineStr"><is><r><rPr><i/></rPr>\
<t>Sales</t></r><r><t xml:space="preserve"> by region</t></r></is></c></row></sheetData>\
</worksheet>"""

COMMENTS = f"""<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<comments xmlns="{S}"><authors><author>Ann</author></authors><commentList>
<comment ref="B2" authorId="0"><text><r><rPr><b/><sz val="9"/><rFont val="Tahoma"/></rPr>\
<t>Ann:</t></r><r><rPr><sz val="9"/><rFont val="Tahoma"/></rPr><t xml:space="preserve">
Check this value with the sales team.</t></r></text></comment></commentList></comments>"""

WORKBOOK = f"""<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<workbook xmlns="{S}" xmlns:r="{R}"><sheets><sheet name="Summary" sheetId="1" r:id="rId1"/>\
<sheet name="Sales" sheetId="2" r:id="rId2"/></sheets><definedNames>\
<definedName name="Total">Summary!$B$2</definedName></definedNames></workbook>"""


def rels(*targets: tuple[str, str]) -> str:
    body = "".join(
        f'<Relationship Id="rId{i}" Type="{R}/{kind}" Target="{target}"/>'
        for i, (kind, target) in enumerate(targets, 1)
    )
    return (
        f'<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="{PKG}">{body}</Relationships>'
    )


def content_types() -> str:
    parts = {
        "/xl/workbook.xml": "sheet.main+xml",
        "/xl/worksheets/sheet1.xml": "worksheet+xml",
        "/xl/worksheets/sheet2.xml": "worksheet+xml",
        "/xl/sharedStrings.xml": "sharedStrings+xml",
        "/xl/comments1.xml": "comments+xml",
    }
    overrides = "".join(
        f'<Override PartName="{name}" ContentType="{OFFICE}.{kind}"/>'
        for name, kind in parts.items()
    )
    return (
        '<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/'
        'package/2006/content-types"><Default Extension="rels" ContentType="application/'
        'vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" '
        'ContentType="application/xml"/><Default Extension="vml" ContentType="application/'
        f'vnd.openxmlformats-officedocument.vmlDrawing"/>{overrides}</Types>'
    )


MEMBERS = {
    "[Content_Types].xml": content_types(),
    "_rels/.rels": rels(("officeDocument", "xl/workbook.xml")),
    "xl/workbook.xml": WORKBOOK,
    "xl/_rels/workbook.xml.rels": rels(
        ("worksheet", "worksheets/sheet1.xml"),
        ("worksheet", "worksheets/sheet2.xml"),
        ("sharedStrings", "sharedStrings.xml"),
    ),
    "xl/worksheets/sheet1.xml": SHEET1,
    "xl/worksheets/_rels/sheet1.xml.rels": rels(
        ("comments", "../comments1.xml"), ("vmlDrawing", "../drawings/vmlDrawing1.vml")
    ),
    "xl/worksheets/sheet2.xml": SHEET2,
    "xl/sharedStrings.xml": SHARED,
    "xl/comments1.xml": COMMENTS,
    "xl/drawings/vmlDrawing1.vml": '<xml xmlns:v="urn:schemas-microsoft-com:vml"></xml>',
}
TRANSLATED_PARTS = (
    "xl/sharedStrings.xml",
    "xl/worksheets/sheet1.xml",
    "xl/worksheets/sheet2.xml",
    "xl/comments1.xml",
)


def package(members: Mapping[str, str] | None = None) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        for name, content in (members or dict(MEMBERS)).items():
            z.writestr(name, content)
    return out.getvalue()


def with_openpyxl() -> bytes:
    wb = openpyxl.Workbook()
    ws = wb.active
    assert ws is not None
    ws.title = "Budget"
    ws["A1"] = "Hello world"
    ws["A2"] = 42
    ws["A3"] = "=SUM(A2:A2)"
    ws["B1"] = CellRichText("Plain then ", TextBlock(InlineFont(b=True), "bold"), " end.")
    ws["C1"].comment = Comment("Check this value", "Ann")
    out = io.BytesIO()
    wb.save(out)
    return out.getvalue()


def read(data: bytes, name: str) -> bytes:
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        return z.read(name)


def c14n(xml: bytes) -> bytes:
    out: bytes = etree.tostring(etree.fromstring(xml), method="c14n")
    return out


def masked(unit: Marked) -> str:
    return re.sub(r"[^<>]+(?=<|$)", "#", unit.stored())


def skeleton(xml: bytes) -> bytes:
    """The part with every translatable text replaced by a marker (phonetic text kept)."""
    tree = etree.fromstring(xml)
    for t in tree.iter(f"{{{S}}}t"):
        parent = t.getparent()
        if parent is not None and parent.tag != f"{{{S}}}rPh":
            t.text = "#"
            t.attrib.pop("{http://www.w3.org/XML/1998/namespace}space", None)
    return c14n(etree.tostring(tree))


def test_format_attributes() -> None:
    assert FORMAT.name == "xlsx"
    assert FORMAT.extensions == (".xlsx",)
    assert FORMAT.media_type == f"{OFFICE}.sheet"


def test_units_are_strings_inline_strings_and_comments() -> None:
    assert [u.stored() for u in units(FORMAT, package())] == [
        "Quarterly budget",
        "Total for <x1/>: see <x2/> ",
        "Revenue was <g1>higher</g1> than planned.",
        "Tokyo office",
        "First line<x1/>\nSecond line",
        "1234",
        "Inline note",
        "<g1>Sales</g1> by region",
        "<g1>Ann:</g1>\nCheck this value with the sales team.",
    ]
    assert [u.stored() for u in units(FORMAT, with_openpyxl())] == [
        "Hello world",
        "Plain then <g1>bold</g1> end.",
        "Check this value",
    ]


@pytest.mark.parametrize("make", [package, with_openpyxl])
@pytest.mark.parametrize("segmentation", [True, False])
def test_identity_round_trip_keeps_every_member(
    make: Callable[[], bytes], segmentation: bool
) -> None:
    data = make()
    out = run(FORMAT, data, segmentation=segmentation)
    with zipfile.ZipFile(io.BytesIO(out)) as a, zipfile.ZipFile(io.BytesIO(data)) as b:
        assert [i.filename for i in a.infolist()] == [i.filename for i in b.infolist()]
        assert [i.compress_type for i in a.infolist()] == [i.compress_type for i in b.infolist()]
        for name in b.namelist():
            assert a.read(name) == b.read(name), name


@pytest.mark.parametrize("segmentation", [True, False])
def test_pseudo_changes_every_unit_and_nothing_else(segmentation: bool) -> None:
    data = package()
    out = run(FORMAT, data, pseudo, segmentation=segmentation)
    before, after = units(FORMAT, data), units(FORMAT, out)
    assert len(after) == len(before) == 9
    for source, target in zip(before, after, strict=True):
        if source.plain != "1234":
            assert target.plain != source.plain
        assert masked(target) == masked(source)
    for name in MEMBERS:
        if name in TRANSLATED_PARTS:
            assert skeleton(read(out, name)) == skeleton(read(data, name)), name
        else:
            assert read(out, name) == read(data, name), name


def test_openpyxl_reads_the_translation_with_values_formulas_and_names_kept() -> None:
    out = run(FORMAT, package(), pseudo, segmentation=False)
    wb = openpyxl.load_workbook(io.BytesIO(out), rich_text=True)
    assert wb.sheetnames == ["Summary", "Sales"]
    assert list(wb.defined_names) == ["Total"]
    ws = wb["Summary"]
    assert ws["A1"].value == ws["B5"].value == pseudo_text("Quarterly budget")
    assert ws["B1"].value == pseudo_text("Inline note")
    assert ws["B2"].value == 1234.5
    assert ws["C2"].value is True
    assert ws["B3"].value == '=CONCATENATE("Hello"," world")'
    assert ws["B4"].value == "=SUM(Sales!B2:B3)"
    assert ws["C5"].value == "#DIV/0!"
    rich = ws["A3"].value
    assert isinstance(rich, CellRichText)
    bold = [b for b in rich if isinstance(b, TextBlock)]
    assert [b.text for b in bold] == [pseudo_text("higher")]
    assert bold[0].font.b and bold[0].font.rFont == "Calibri"
    assert str(rich) == pseudo_text("Revenue was ") + pseudo_text("higher") + pseudo_text(
        " than planned."
    )
    comment = ws["B2"].comment
    assert comment is not None
    assert comment.text == pseudo_text("Ann:") + "\n" + pseudo_text(
        "Check this value with the sales team."
    )
    assert wb["Sales"]["A1"].value is not None


def test_openpyxl_workbook_is_translated_and_read_back() -> None:
    out = run(FORMAT, with_openpyxl(), pseudo)
    wb = openpyxl.load_workbook(io.BytesIO(out), rich_text=True)
    ws = wb["Budget"]
    assert ws["A1"].value == pseudo_text("Hello world")
    assert ws["A2"].value == 42
    assert ws["A3"].value == "=SUM(A2:A2)"
    assert [b.text for b in ws["B1"].value if isinstance(b, TextBlock)] == [pseudo_text("bold")]
    assert ws["C1"].comment is not None
    assert ws["C1"].comment.text == pseudo_text("Check this value")


def test_what_excel_users_expect_is_kept() -> None:
    out = run(FORMAT, package(), pseudo)
    shared = read(out, "xl/sharedStrings.xml").decode()
    assert "%1$s" in shared and "https://example.com/help" in shared
    assert '<rPh sb="0" eb="5"><t>トウキョウ</t></rPh><phoneticPr fontId="1"/>' in shared
    assert f"{pseudo_text('First line')}_x000D_\n{pseudo_text('Second line')}" in shared
    assert "<si><t>1234</t></si>" in shared
    assert f'<t xml:space="preserve">{pseudo_text("Total for ")}' in shared
    sheet = read(out, "xl/worksheets/sheet1.xml").decode()
    assert '<c r="B3" t="str"><f>CONCATENATE("Hello"," world")</f><v>Hello world</v></c>' in sheet
    assert read(out, "xl/workbook.xml") == WORKBOOK.encode()


def test_partial_translates_the_first_unit_only() -> None:
    data = package()
    out = run(FORMAT, data, pseudo, partial=1)
    before, after = units(FORMAT, data), units(FORMAT, out)
    assert after[0].plain == pseudo_text("Quarterly budget")
    assert after[1:] == before[1:]
    for name in TRANSLATED_PARTS[1:]:
        assert read(out, name) == read(data, name), name
    assert openpyxl.load_workbook(io.BytesIO(out))["Summary"]["A1"].value == after[0].plain


def test_not_a_zip() -> None:
    with pytest.raises(InvalidFile, match=r"book\.xlsx: not a zip"):
        FORMAT.extract(b"a,b,c\n1,2,3\n", filename="book.xlsx")


def test_a_zip_that_is_not_a_workbook() -> None:
    with pytest.raises(InvalidFile, match=r"x\.xlsx: no xl/workbook\.xml"):
        FORMAT.extract(package({"readme.txt": "hello"}), filename="x.xlsx")


@pytest.mark.timeout(30)  # a hang, not a speed: fails only far beyond its normal time
def test_zip_bomb_is_refused_quickly() -> None:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("xl/workbook.xml", WORKBOOK)
        with z.open("xl/media/zeros.bin", "w", force_zip64=True) as member:
            block = bytes(2**20)
            for _ in range(300):
                member.write(block)
    with pytest.raises(InvalidFile, match=r"bomb\.xlsx"):
        FORMAT.extract(out.getvalue(), filename="bomb.xlsx")


def test_malformed_part_names_the_part_and_line() -> None:
    broken = dict(MEMBERS, **{"xl/sharedStrings.xml": SHARED.replace("</si>\n<si><t>Tokyo", "\n")})
    with pytest.raises(InvalidFile, match=r"bad\.xlsx: xl/sharedStrings\.xml: .*line \d"):
        FORMAT.extract(package(broken), filename="bad.xlsx")


@pytest.mark.parametrize(
    "doctype",
    [
        '<!DOCTYPE sst [<!ENTITY xxe SYSTEM "file:///etc/hostname">]>',
        '<!DOCTYPE sst [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;">]>',
    ],
)
def test_entities_are_refused(doctype: str) -> None:
    ref = "&xxe;" if "xxe" in doctype else "&b;"
    evil = SHARED.replace("?>\n", f"?>\n{doctype}\n", 1).replace("Quarterly budget", ref)
    with pytest.raises(InvalidFile, match=r"evil\.xlsx: xl/sharedStrings\.xml") as caught:
        FORMAT.extract(
            package(dict(MEMBERS, **{"xl/sharedStrings.xml": evil})), filename="evil.xlsx"
        )
    assert "aaaa" not in caught.value.message


def test_strict_open_xml_is_refused() -> None:
    strict = SHARED.replace(S, "http://purl.oclc.org/ooxml/spreadsheetml/main")
    members = dict(MEMBERS, **{"xl/sharedStrings.xml": strict})
    with pytest.raises(InvalidFile, match=r"s\.xlsx: xl/sharedStrings\.xml is Strict"):
        FORMAT.extract(package(members), filename="s.xlsx")


def test_threaded_comments_are_translated() -> None:
    threaded = (
        '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
        '<ThreadedComments xmlns="http://schemas.microsoft.com/office/spreadsheetml/2018/'
        'threadedcomments"><threadedComment ref="B2" dT="2024-01-02T10:00:00.00" '
        'personId="{1}" id="{2}"><text>Is this figure final?</text></threadedComment>'
        "</ThreadedComments>"
    )
    name = "xl/threadedComments/threadedComment1.xml"
    data = package(dict(MEMBERS, **{name: threaded}))
    assert units(FORMAT, data)[-1].stored() == "Is this figure final?"
    out = run(FORMAT, data, pseudo)
    tree = etree.fromstring(read(out, name))
    assert [t.text for t in tree.iter("{*}text")] == [pseudo_text("Is this figure final?")]
    assert tree[0].get("ref") == "B2"
