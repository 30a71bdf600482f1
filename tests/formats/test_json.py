from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from dragoman.errors import InvalidFile
from dragoman.formats import by_name
from dragoman.formats.json_i18n import _PROTECTED as PROTECTED
from dragoman.formats.json_i18n import FORMAT
from dragoman.formats.markup import Marked
from tests.formats.helpers import pseudo, pseudo_text, run, units

DATA = Path(__file__).parent.parent / "data" / "formats" / "json"
I18NEXT = (DATA / "i18next.json").read_bytes()
ARB = (DATA / "app_en.arb").read_bytes()
STRINGS = re.compile(r'"(?:[^"\\]|\\.)*"(\s*:)?')


def _skeleton(data: bytes) -> str:
    """The document with every string value (not the keys) replaced by a marker."""
    return STRINGS.sub(lambda m: m.group() if m.group(1) else '"#"', data.decode("utf-8"))


def _strings(document: Any, skip: bool = False) -> list[str]:
    if isinstance(document, dict):
        return [s for k, v in document.items() for s in _strings(v, skip or k.startswith("@"))]
    if isinstance(document, list):
        return [s for v in document for s in _strings(v, skip)]
    return [document] if isinstance(document, str) and not skip else []


def _shape(document: Any) -> Any:
    if isinstance(document, dict):
        return {k: _shape(v) for k, v in document.items()}
    if isinstance(document, list):
        return [_shape(v) for v in document]
    return "#" if isinstance(document, str) else document


def test_registered() -> None:
    assert by_name("json") is FORMAT
    assert FORMAT.extensions == (".json",)
    assert FORMAT.media_type == "application/json"


def test_units_are_the_string_values_in_order() -> None:
    assert [u.stored() for u in units(FORMAT, I18NEXT)] == [
        'My "great" app',
        "Welcome back, <x1/>! You have <x2/>.",
        "<x1/>",
        "Café and tea. Then more.",
        "Grüße aus Köln",
        "C:\\temp\\new",
        "Smile \U0001f600 now",
        "First line\nsecond line",
        "",
        "Last one",
    ]
    assert [u.stored() for u in units(FORMAT, ARB)] == [
        "Hello World!",
        "Hello <x1/>, it is nice to see you.",
    ]


@pytest.mark.parametrize("segmentation", [True, False])
@pytest.mark.parametrize("data", [I18NEXT, ARB], ids=["i18next", "arb"])
def test_identity_round_trip_is_byte_exact(data: bytes, segmentation: bool) -> None:
    assert run(FORMAT, data, segmentation=segmentation) == data


@pytest.mark.parametrize(
    "data",
    [b"\xef\xbb\xbf" + I18NEXT, I18NEXT.decode().encode("utf-16"), b'{"a":"Hi."}'],
    ids=["bom", "utf16", "compact"],
)
def test_identity_keeps_encoding_and_layout(data: bytes) -> None:
    assert run(FORMAT, data) == data


@pytest.mark.parametrize("data", [I18NEXT, ARB], ids=["i18next", "arb"])
def test_pseudo_changes_every_string_and_nothing_else(data: bytes) -> None:
    out = run(FORMAT, data, pseudo, segmentation=False)
    assert _skeleton(out) == _skeleton(data)
    before, after = json.loads(data), json.loads(out)
    assert _shape(after) == _shape(before)
    sources = units(FORMAT, data)
    translated = _strings(after)
    assert len(translated) == len(sources) == len(_strings(before))
    for source, text, unit in zip(_strings(before), translated, sources, strict=True):
        assert text == (_pseudo_of(source) if unit.has_text() else source)
        if unit.has_text():
            assert text != source


def _pseudo_of(text: str) -> str:
    pieces = re.split(f"({PROTECTED.pattern})", text)
    return "".join(p if i % 2 else pseudo_text(p) for i, p in enumerate(pieces))


def test_what_i18n_users_expect() -> None:
    out = run(FORMAT, I18NEXT, pseudo, segmentation=False).decode("utf-8")
    after = json.loads(out)
    assert after["count"] == 3 and after["enabled"] is True and after["missing"] is None
    assert after["ratio"] == -1500.0 and '"ratio": -1.5e3,' in out
    assert after["list"][2] == 42 and after["list"][1] == ""
    app = after["app"]
    assert app["title"] == pseudo_text('My "great" app')
    assert app["welcome"].count("{{name}}") == 1
    assert '$t(common.items, {\\"count\\": 3})' in out
    assert app["items"] == "{count, plural, one {# item} other {# items}}"
    assert app["nested"]["path"] == pseudo_text("C:\\temp\\new")
    assert after["list"][0] == pseudo_text("First line\nsecond line")
    nested = app["nested"]
    assert nested["greeting"] == pseudo_text("Grüße aus Köln")
    assert f'"greeting": {json.dumps(nested["greeting"], ensure_ascii=False)},' in out
    assert f'"deep": {json.dumps(nested["deep"], ensure_ascii=True)},' in out
    assert f'"emoji": {json.dumps(nested["emoji"], ensure_ascii=True)}\n' in out
    assert "\U0001f600" in nested["emoji"]
    assert after["list"][3] == pseudo_text("Last one")


def test_arb_metadata_is_kept() -> None:
    out = run(FORMAT, ARB, pseudo)
    after, before = json.loads(out), json.loads(ARB)
    assert after["@@locale"] == "en"
    assert after["@helloWorld"] == before["@helloWorld"]
    assert after["@greeting"] == before["@greeting"]
    assert "{userName}" in after["greeting"] and after["greeting"] != before["greeting"]


def test_a_file_written_all_ascii_stays_ascii() -> None:
    data = b'{"a": "Caf\\u00e9", "b": "Hello there"}'
    out = run(FORMAT, data, pseudo)
    assert out.isascii()
    assert json.loads(out)["b"] == pseudo_text("Hello there")
    plain = b'{"a": "Hello there"}'
    assert run(FORMAT, plain, pseudo) == '{"a": "ŧħḗřḗ Ħḗŀŀǿ"}'.encode()


def test_top_level_array_and_utf16() -> None:
    data = '["One.", {"k": "Two."}]'.encode("utf-16-be")
    data = b"\xfe\xff" + data
    out = run(FORMAT, data, pseudo)
    assert out.startswith(b"\xfe\xff")
    assert json.loads(out.decode("utf-16")) == [pseudo_text("One."), {"k": pseudo_text("Two.")}]


def test_partial_translates_the_first_unit_only() -> None:
    out = json.loads(run(FORMAT, I18NEXT, pseudo, partial=1, segmentation=False))
    before = json.loads(I18NEXT)
    assert out["app"]["title"] == pseudo_text(before["app"]["title"])
    assert out["app"] | {"title": before["app"]["title"]} == before["app"]
    assert {k: v for k, v in out.items() if k != "app"} == {
        k: v for k, v in before.items() if k != "app"
    }


def test_merge_with_no_translation_is_the_input() -> None:
    assert FORMAT.merge(ARB, [None, None], filename="a.json", target_lang="es") == ARB
    with pytest.raises(InvalidFile, match=r"a\.json"):
        FORMAT.merge(ARB, [Marked.of(["x"])], filename="a.json", target_lang="es")


def test_malformed_json_names_file_line_and_column() -> None:
    bad = b'{\n  "a": "b",\n  "c": \n}\n'
    with pytest.raises(InvalidFile, match=r"bad\.json: malformed JSON at line 4, column 1"):
        FORMAT.extract(bad, filename="bad.json")


@pytest.mark.parametrize("data", [b'"just a string"', b"42", b"null", b""])
def test_not_a_bundle_is_refused(data: bytes) -> None:
    with pytest.raises(InvalidFile, match=r"x\.json"):
        FORMAT.extract(data, filename="x.json")


def test_wrong_encoding_is_refused() -> None:
    with pytest.raises(InvalidFile, match=r"x\.json: line 2 is not UTF-8"):
        FORMAT.extract(b'{\n"a": "Caf\xe9"}', filename="x.json")


def test_deep_nesting_is_refused_quickly() -> None:
    with pytest.raises(InvalidFile, match=r"x\.json"):
        FORMAT.extract(b"[" * 200_000 + b"]" * 200_000, filename="x.json")


def test_a_unit_that_lost_its_placeholders_keeps_its_source() -> None:
    lost: list[Marked | None] = [None] * len(units(FORMAT, I18NEXT))
    lost[1] = Marked.of(["Bienvenido"])
    assert FORMAT.merge(I18NEXT, lost, filename="a.json", target_lang="es") == I18NEXT
