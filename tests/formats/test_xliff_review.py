"""XLIFF written back says how sure the machine was: each scored unit's origin and lowest
confidence as metadata (a 1.2 context group, a 2.x Metadata module group), and under a
job's ``review_below`` which units are to be reviewed (1.2 ``state``, 2.x ``subState``);
everything else as without scores, and the file as its schemas have it."""

from __future__ import annotations

from pathlib import Path

from lxml import etree

from dragoman.formats import prepare, rebuild
from dragoman.formats.markup import parse_stored
from dragoman.formats.xliff import FORMAT
from dragoman.models import Origin
from tests.formats.helpers import pseudo
from tests.formats.xliff_rules import MDA, X1, X2, check_v2, check_v12

DATA = Path(__file__).parent.parent / "data" / "formats" / "xliff"
V12 = (DATA / "v12.xlf").read_bytes()
V2 = (DATA / "v2.xlf").read_bytes()


def translated(
    data: bytes,
    per_unit: list[list[float | None]],
    review_below: float | None,
    origins: list[Origin] | None = None,
) -> bytes:
    """``data`` pseudo-translated, each unit's segments with the given confidences."""
    prepared = prepare(FORMAT, data, filename="f.xlf", source_lang="en", segmentation=True)
    assert prepared.layout == [len(unit) for unit in per_unit]
    confidences = [confidence for unit in per_unit for confidence in unit]
    return rebuild(
        FORMAT,
        data,
        filename="f.xlf",
        layout=prepared.layout,
        translations=[pseudo(parse_stored(s)).stored() for s in prepared.segments],
        target_lang="es",
        origins=origins or [Origin.MT] * len(confidences),
        confidences=confidences,
        review_below=review_below,
    )


def by_id(data: bytes, ns: str, tag: str) -> dict[str, etree._Element]:
    return {element.get("id"): element for element in etree.fromstring(data).iter(f"{ns}{tag}")}


def described(unit: etree._Element) -> dict[str, str] | None:
    """A 1.2 unit's dragoman context group, as context type → value."""
    group = unit.find(f"{X1}context-group[@name='dragoman']")
    if group is None:
        return None
    assert group.get("purpose") == "information"
    return {c.get("context-type"): c.text for c in group}


UNITS_12 = [[0.9], [0.8, 0.3], [0.7], [None]]  # greeting, items (two sentences), ...


def test_1_2_units_below_the_threshold_are_to_review_and_the_others_translated() -> None:
    out = translated(V12, UNITS_12, 0.5)

    check_v12(etree.fromstring(out))
    units = by_id(out, X1, "trans-unit")
    states = {
        name: (target.get("state"), target.get("state-qualifier"))
        for name in ("greeting", "items", "empty-target", "marked")
        if (target := units[name].find(f"{X1}target")) is not None
    }
    assert states == {
        "greeting": ("translated", "mt-suggestion"),
        "items": ("needs-review-translation", "mt-suggestion"),  # its second sentence
        "empty-target": ("translated", "mt-suggestion"),
        "marked": ("needs-review-translation", "mt-suggestion"),  # no score: as ever
    }
    assert described(units["greeting"]) == {
        "x-dragoman-origin": "mt",
        "x-dragoman-confidence": "0.9000",
    }
    assert described(units["items"]) == {
        "x-dragoman-origin": "mt",
        "x-dragoman-confidence": "0.3000",  # the lowest of its sentences
    }
    assert described(units["marked"]) is None
    # Right after the target, before the note that was there.
    greeting = [child.tag for child in units["greeting"]]
    assert greeting == [f"{X1}source", f"{X1}target", f"{X1}context-group", f"{X1}note"]


def test_1_2_without_a_threshold_keeps_its_states_and_only_adds_the_scores() -> None:
    out = etree.fromstring(translated(V12, UNITS_12, None))
    check_v12(out)
    for group in list(out.iter(f"{X1}context-group")):
        target = group.getprevious()
        target.tail = group.tail  # the whitespace the target had before
        group.getparent().remove(group)
    plain = translated(V12, [[None], [None, None], [None], [None]], None)

    assert etree.tostring(out, method="c14n") == etree.tostring(
        etree.fromstring(plain), method="c14n"
    )
    assert plain == translated(V12, [[None], [None, None], [None], [None]], 0.5)


def test_1_2_memory_matches_stay_exact_matches_whatever_the_threshold() -> None:
    origins = [Origin.TM, Origin.MT, Origin.MT, Origin.MT, Origin.MT]
    out = translated(V12, UNITS_12, 0.95, origins)
    check_v12(etree.fromstring(out))
    greeting = by_id(out, X1, "trans-unit")["greeting"]
    target = greeting.find(f"{X1}target")
    assert target is not None
    assert (target.get("state"), target.get("state-qualifier")) == ("translated", "exact-match")
    # The score is the memory's unit's, not a machine's: only the memory's mark.
    assert described(greeting) is None
    assert greeting.find(f"{X1}alt-trans") is not None


def metadata(unit: etree._Element) -> list[dict[str, str]]:
    """A 2.x unit's dragoman metadata groups, each as type → value."""
    return [
        {meta.get("type"): meta.text for meta in group}
        for group in unit.iterfind(f"{MDA}metadata/{MDA}metaGroup[@category='dragoman']")
        if group.get("appliesTo") == "target"
    ]


def test_2_x_segments_below_the_threshold_say_review_and_each_unit_its_metadata() -> None:
    out = translated(V2, [[0.9], [0.6, 0.2], [None]], 0.5)

    check_v2(etree.fromstring(out))
    segments = by_id(out, X2, "segment")
    assert [(s.get("state"), s.get("subState")) for s in (segments["s1"], segments["s2"])] == [
        ("translated", "dragoman:mt"),
        ("translated", "dragoman:review"),
    ]
    units = by_id(out, X2, "unit")
    assert metadata(units["u1"]) == [
        {"segment": "s1", "origin": "mt", "confidence": "0.9000"},
        {"segment": "s2", "origin": "mt", "confidence": "0.2000"},
    ]
    assert metadata(units["u4"]) == []
    # The module comes first in the unit, before its original data.
    assert [child.tag for child in units["u1"]][:2] == [f"{MDA}metadata", f"{X2}originalData"]
    u4 = units["u4"].find(f"{X2}segment")
    assert u4 is not None and u4.get("subState") == "dragoman:mt"


def test_2_x_metadata_goes_into_the_unit_s_own_module_element() -> None:
    data = V2.replace(
        b'<unit id="u4">',
        b'<unit id="u4"><mda:metadata xmlns:mda="urn:oasis:names:tc:xliff:metadata:2.0">'
        b'<mda:metaGroup category="app"><mda:meta type="screen">main</mda:meta>'
        b"</mda:metaGroup></mda:metadata>",
    )
    out = translated(data, [[0.9], [0.6, 0.2], [0.4]], 0.5)
    check_v2(etree.fromstring(out))
    u4 = by_id(out, X2, "unit")["u4"]
    assert len(u4.findall(f"{MDA}metadata")) == 1
    groups = u4.findall(f"{MDA}metadata/{MDA}metaGroup")
    assert [group.get("category") for group in groups] == ["app", "dragoman"]
    assert metadata(u4) == [{"segment": "1", "origin": "mt", "confidence": "0.4000"}]
