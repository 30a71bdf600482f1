from __future__ import annotations

import copy
from pathlib import Path

import pytest
from lxml import etree

from dragoman.errors import InvalidFile
from dragoman.formats import by_name
from dragoman.formats.markup import Marked
from dragoman.formats.xliff import FORMAT
from tests.formats.helpers import pseudo, pseudo_text, run, units

DATA = Path(__file__).parent.parent / "data" / "formats" / "xliff"
V12 = (DATA / "v12.xlf").read_bytes()
V2 = (DATA / "v2.xlf").read_bytes()
TRANSLATED = (DATA / "translated.xlf").read_bytes()
NS1 = "{urn:oasis:names:tc:xliff:document:1.2}"
NS2 = "{urn:oasis:names:tc:xliff:document:2.0}"


def _root(data: bytes) -> etree._Element:
    return etree.fromstring(data)


def _c14n(element: etree._Element) -> bytes:
    return bytes(etree.tostring(element, method="c14n"))


def _content(element: etree._Element) -> bytes:
    """The element's content alone, canonical: tag, attributes and tail left out."""
    bare = copy.deepcopy(element)
    bare.tag = "content"
    bare.attrib.clear()
    bare.tail = None
    return _c14n(bare)


def _without_targets(data: bytes) -> bytes:
    """The document with every <target>, the target language and segment states gone."""
    root = _root(data)
    for target in list(root.iter(f"{NS1}target", f"{NS2}target")):
        if target.getparent().tag.endswith("alt-trans"):
            continue
        previous = target.getprevious()
        previous.tail = target.tail
        target.getparent().remove(target)
    for element in root.iter():
        for name in ("target-language", "trgLang", "state", "subState"):
            element.attrib.pop(name, None)
    return _c14n(root)


def _pairs(data: bytes, ns: str, unit: str) -> dict[str, tuple[etree._Element, etree._Element]]:
    found = {}
    for element in _root(data).iter(f"{ns}{unit}"):
        target = element.find(f"{ns}target")
        if target is not None:
            key = element.get("id") or element.getparent().get("id")
            found[key] = (element.find(f"{ns}source"), target)
    return found


def test_registered_by_name_and_extension() -> None:
    assert by_name("xliff") is FORMAT
    assert FORMAT.extensions == (".xlf", ".xliff")
    assert FORMAT.media_type == "application/xliff+xml"


def test_units_are_the_sources_without_a_target() -> None:
    assert [u.stored() for u in units(FORMAT, V12)] == [
        "Hello, <g1>dear <g2>world</g2></g1>!",
        "You have <x1/> items. See <x2/> the list of <x3/> files.",
        "Save <x1/>now<x2/> please.",
        "Open the <g1>file menu</g1> and <x2/>.",
    ]
    assert [u.stored() for u in units(FORMAT, V2)] == [
        "Click <g1>the <g2>green</g2> button</g1> to go on.",
        "Line one<x1/>line two. Second sentence here.",
        "Start <x1/>bold text<x2/> and <x3/> with <g4>terms</g4>.",
    ]


@pytest.mark.parametrize("segmentation", [True, False])
def test_fully_translated_file_comes_back_unchanged(segmentation: bool) -> None:
    assert units(FORMAT, TRANSLATED) == []
    out = run(FORMAT, TRANSLATED, segmentation=segmentation)
    assert out == TRANSLATED
    assert _c14n(_root(out)) == _c14n(_root(TRANSLATED))


def _written(
    data: bytes, out: bytes, ns: str, unit: str
) -> list[tuple[etree._Element, etree._Element]]:
    """(source, target) of each unit that had no target, or an empty one, before."""
    before = _pairs(data, ns, unit)
    return [
        pair
        for key, pair in _pairs(out, ns, unit).items()
        if key not in before or not (len(before[key][1]) or (before[key][1].text or "").strip())
    ]


@pytest.mark.parametrize("segmentation", [True, False])
@pytest.mark.parametrize(("data", "ns", "unit"), [(V12, NS1, "trans-unit"), (V2, NS2, "segment")])
def test_identity_targets_equal_sources_and_nothing_else_changes(
    data: bytes, ns: str, unit: str, segmentation: bool
) -> None:
    out = run(FORMAT, data, segmentation=segmentation)
    written = _written(data, out, ns, unit)
    assert len(written) == len(units(FORMAT, data))
    for source, target in written:
        assert _content(target) == _content(source)
    assert _without_targets(out) == _without_targets(data)


@pytest.mark.parametrize(("data", "ns", "unit"), [(V12, NS1, "trans-unit"), (V2, NS2, "segment")])
def test_pseudo_translation_changes_every_unit_and_keeps_its_codes(
    data: bytes, ns: str, unit: str
) -> None:
    out = run(FORMAT, data, pseudo)
    written = _written(data, out, ns, unit)
    assert len(written) == len(units(FORMAT, data))
    for source, target in written:
        assert "".join(target.itertext()) != "".join(source.itertext())
        inline = [(c.tag, dict(c.attrib)) for c in target.iter() if c is not target]
        assert inline == [(c.tag, dict(c.attrib)) for c in source.iter() if c is not source]
    assert _without_targets(out) == _without_targets(data)


def test_v12_what_translators_expect() -> None:
    out = run(FORMAT, V12, pseudo, target_lang="es-MX")
    root = _root(out)
    assert root.find(f"{NS1}file").get("target-language") == "es-MX"
    by_id = {u.get("id"): u for u in root.iter(f"{NS1}trans-unit")}
    greeting = by_id["greeting"].find(f"{NS1}target")
    assert greeting.get("state") == "needs-review-translation"
    assert greeting.get("state-qualifier") == "mt-suggestion"
    outer = greeting.find(f"{NS1}g")
    assert dict(outer.attrib) == {"id": "1", "ctype": "bold"}
    assert outer.text == pseudo_text("dear ")
    assert outer.find(f"{NS1}g").text == pseudo_text("world")
    assert by_id["greeting"].find(f"{NS1}note").text == "Shown on the home page."
    assert root.find(f"{NS1}file/{NS1}header/{NS1}note").text == "Strings of the app."
    items = by_id["items"].find(f"{NS1}target")
    assert _c14n(items.find(f"{NS1}x")) == _c14n(by_id["items"].find(f"{NS1}source/{NS1}x"))
    assert items.find(f"{NS1}ph").text == "<br/>"
    assert "%s" in "".join(items.itertext())
    done = by_id["done"].find(f"{NS1}target")
    assert (done.text, done.get("state"), done.get("state-qualifier")) == (
        "Ya traducido.",
        "final",
        None,
    )
    assert by_id["code"].find(f"{NS1}target") is None
    refill = by_id["empty-target"].findall(f"{NS1}target")
    assert len(refill) == 1 and refill[0].get("state") == "needs-review-translation"
    assert refill[0].find(f"{NS1}bpt").text == "<b>"
    marked = by_id["marked"].find(f"{NS1}target")
    assert marked.findall(f"{NS1}mrk")[1].text == "Ctrl+O"
    assert marked.findall(f"{NS1}mrk")[0].text == pseudo_text("file menu")


def test_v12_target_gets_the_sources_indentation() -> None:
    out = run(FORMAT, V12).decode()
    assert (
        '        <source>Hello, <g id="1" ctype="bold">dear <g id="2">world</g></g>!</source>\n'
        '        <target state="needs-review-translation"'
    ) in out
    assert '</target>\n        <note from="developer">' in out
    assert "</source><target " in out  # a unit written on one line stays on one line


def test_v2_what_translators_expect() -> None:
    out = run(FORMAT, V2, pseudo, target_lang="fr")
    root = _root(out)
    assert root.get("trgLang") == "fr" and root.get("srcLang") == "en"
    segments = list(root.iter(f"{NS2}segment"))
    written = [s for s in segments if s.get("subState") == "dragoman:mt"]
    assert len(written) == 3 and all(s.get("state") == "translated" for s in written)
    kept = segments[2]
    assert (kept.get("state"), kept.find(f"{NS2}target").text) == ("final", "Guardado.")
    assert segments[3].find(f"{NS2}target") is None  # translate="no"
    pc = written[0].find(f"{NS2}target/{NS2}pc")
    assert dict(pc.attrib) == {"id": "1", "dataRefStart": "b", "dataRefEnd": "eb"}
    assert pc.text == pseudo_text("the ")
    assert pc.find(f"{NS2}pc").text == pseudo_text("green")
    ph = written[1].find(f"{NS2}target/{NS2}ph")
    assert dict(ph.attrib) == {"id": "3", "dataRef": "d1"}
    last = written[2].find(f"{NS2}target")
    assert [e.tag.split("}")[1] for e in last] == ["sc", "ec", "mrk", "mrk"]
    assert last.findall(f"{NS2}mrk")[0].text == "Acme Inc."
    assert root.find(f".//{NS2}ignorable/{NS2}source").text == " "
    assert root.find(f".//{NS2}notes/{NS2}note").text == "The main window."
    assert root.find(f".//{NS2}originalData/{NS2}data").text == "<br/>"


def test_xliff_without_namespace() -> None:
    data = (
        b'<xliff version="1.2"><file source-language="en" datatype="plaintext"><body>'
        b'<trans-unit id="a"><source>Yes</source></trans-unit></body></file></xliff>'
    )
    out = _root(run(FORMAT, data, pseudo))
    assert out.find("file").get("target-language") == "es"
    assert out.find(".//target").text == pseudo_text("Yes")


def test_partial_translates_the_first_unit_only() -> None:
    out = run(FORMAT, V12, pseudo, partial=1, segmentation=False)
    by_id = {u.get("id"): u for u in _root(out).iter(f"{NS1}trans-unit")}
    assert by_id["greeting"].find(f"{NS1}target") is not None
    assert by_id["items"].find(f"{NS1}target") is None
    assert by_id["marked"].find(f"{NS1}target") is None
    assert by_id["empty-target"].find(f"{NS1}target").get("state") == "new"


def test_merge_with_no_translation_is_the_input() -> None:
    assert FORMAT.merge(V2, [None, None, None], filename="a.xlf", target_lang="es") == V2
    with pytest.raises(InvalidFile, match=r"a\.xlf"):
        FORMAT.merge(V2, [Marked.of(["x"])], filename="a.xlf", target_lang="es")


def test_malformed_xml_names_file_and_line() -> None:
    bad = b'<?xml version="1.0"?>\n<xliff version="1.2">\n<file>\n</xliff>\n'
    with pytest.raises(InvalidFile, match=r"bad\.xlf: malformed XML at line 4"):
        FORMAT.extract(bad, filename="bad.xlf")


@pytest.mark.parametrize("data", [b"", b"not xml at all", b"<html><body/></html>"])
def test_not_xliff_is_refused(data: bytes) -> None:
    with pytest.raises(InvalidFile, match=r"x\.xlf"):
        FORMAT.extract(data, filename="x.xlf")


def test_external_entity_is_refused_and_nothing_is_read(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP-SECRET")
    data = (
        f'<?xml version="1.0"?>\n<!DOCTYPE xliff [<!ENTITY e SYSTEM "file://{secret}">]>\n'
        '<xliff version="1.2"><file><body><trans-unit id="1"><source>&e;</source>'
        "</trans-unit></body></file></xliff>"
    ).encode()
    with pytest.raises(InvalidFile, match=r"x\.xlf") as caught:
        FORMAT.extract(data, filename="x.xlf")
    assert "TOP-SECRET" not in str(caught.value)


def test_billion_laughs_is_refused() -> None:
    data = (
        b'<?xml version="1.0"?>\n<!DOCTYPE lolz [<!ENTITY lol "lol">'
        b'<!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">'
        b'<!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">]>\n'
        b'<xliff version="1.2"><file><body><trans-unit id="1"><source>&lol3;</source>'
        b"</trans-unit></body></file></xliff>"
    )
    with pytest.raises(InvalidFile, match=r"x\.xlf"):
        FORMAT.extract(data, filename="x.xlf")


def test_a_unit_that_lost_its_codes_keeps_its_source() -> None:
    lost = [Marked.of(["Hola sin códigos"]), None, None, None]
    assert FORMAT.merge(V12, lost, filename="a.xlf", target_lang="es") == V12
