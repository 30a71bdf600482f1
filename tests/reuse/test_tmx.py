"""TMX in and out: what the reader refuses (with what it says), what it makes of variants,
inline elements and duplicates, and TMX written by dragoman read by an independent reader
(PythonTmx)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from lxml import etree
from PythonTmx import from_element  # type: ignore[import-untyped]

from dragoman.errors import InvalidFile
from dragoman.formats.markup import parse_stored
from dragoman.formats.tmx import Translation, read_tmx, write_tmx
from dragoman.reuse.keys import memory_key, normalize
from dragoman.reuse.matching import memory_entries
from tests.reuse.tmx_samples import BROKEN, bilingual, tmx, tu


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_a_broken_tmx_is_refused_saying_what_is_wrong(name: str) -> None:
    data, says = BROKEN[name]
    with pytest.raises(InvalidFile) as caught:
        read_tmx(data, "memory.tmx")
    assert caught.value.message.startswith("memory.tmx: ")
    assert says in caught.value.message


def test_units_not_translated_yet_are_skipped_and_counted_by_line() -> None:
    # A CAT tool's export holds units with the source alone; and one in other languages.
    data = tmx(
        tu(("en", "a"), ("es", "b"))
        + "\n"
        + tu(("en", "c"))  # the 3rd line
        + "\n"
        + tu(("fr", "d"), ("es", "e"))
    )
    memory = read_tmx(data, "m.tmx")
    assert [unit.variants["en"].text for unit in memory.units] == ["a"]
    assert memory.skipped == (
        "line 3: the <tu> has fewer than two languages (en); it needs two",
        "line 4: the <tu> has no variant in the source language en",
    )


def test_a_file_of_unusable_units_only_is_refused_with_the_first_reason() -> None:
    data = tmx(tu(("en", "c")) + "\n" + tu(("en", "d")))
    with pytest.raises(InvalidFile, match="no <tu> can be used; line 2: the <tu> has fewer"):
        read_tmx(data, "m.tmx")


def test_language_variants_are_their_base_language() -> None:
    memory = read_tmx(tmx(tu(("EN_gb", "Colour"), ("es-MX", "Color")), srclang="en-US"), "m")
    assert memory.source_lang == "en"
    assert list(memory.units[0].variants) == ["en", "es"]
    assert memory.languages == ["en", "es"]


def test_tmx_1_1_lang_attributes_and_all_sources() -> None:
    body = "<tu><tuv lang='en'><seg>Yes</seg></tuv><tuv lang='fr'><seg>Oui</seg></tuv></tu>"
    memory = read_tmx(tmx(body, srclang="*all*"), "m")
    entries = {(e.source_lang, e.target_lang): e for e in memory_entries(memory)}
    assert set(entries) == {("en", "fr"), ("fr", "en")}
    assert entries[("fr", "en")].target == "Yes"


def test_only_the_declared_source_is_a_source() -> None:
    memory = read_tmx(tmx(tu(("en", "Yes"), ("fr", "Oui"), ("es", "Sí")), srclang="en"), "m")
    pairs = sorted((e.source_lang, e.target_lang) for e in memory_entries(memory))
    assert pairs == [("en", "es"), ("en", "fr")]


def test_of_two_units_with_one_source_the_later_changedate_wins_then_the_later_one() -> None:
    later_first = tu(("en", "Save"), ("es", "Guardar"), changed="20250102T000000Z") + tu(
        ("en", "Save"), ("es", "Salvar"), changed="20240101T000000Z"
    )
    undated_last = tu(("en", "Open"), ("es", "Abrir")) + tu(("en", "Open"), ("es", "Abre"))
    dated_then_undated = tu(("en", "Go"), ("es", "Ir"), changed="20200101T000000Z") + tu(
        ("en", "Go"), ("es", "Vaya")
    )
    memory = read_tmx(tmx(later_first + undated_last + dated_then_undated), "m")
    targets = {e.source: e.target for e in memory_entries(memory)}
    assert targets == {"Save": "Guardar", "Open": "Abre", "Go": "Ir"}


def test_whitespace_is_normalized_in_the_key_only() -> None:
    memory = read_tmx(bilingual(("  Hello \n  world. ", " Hola  mundo. ")), "m")
    (entry,) = memory_entries(memory)
    assert entry.key == memory_key("en", "es", "Hello world.")
    assert entry.target == "Hola  mundo."


def test_inline_elements_become_codes_linked_to_the_targets() -> None:
    source = 'Click <bpt i="1" x="1">&lt;b&gt;</bpt>here<ept i="1">&lt;/b&gt;</ept> now<ph x="2"/>'
    target = '<ph x="2"/>Haga clic <bpt i="1" x="1">&lt;b&gt;</bpt>aquí<ept i="1">&lt;/b&gt;</ept>'
    (entry,) = memory_entries(read_tmx(tmx(tu(("en", source), ("es", target))), "m"))
    assert entry.source == "Click <g1>here</g1> now<x2/>"
    assert entry.target == "<x2/>Haga clic <g1>aquí</g1>"


def test_hi_is_paired_and_a_target_code_without_counterpart_is_dropped() -> None:
    source = 'A <hi type="b">big</hi> dog'
    target = 'Un perro <hi type="b">grande</hi><ph x="9"/>'
    (entry,) = memory_entries(read_tmx(tmx(tu(("en", source), ("es", target))), "m"))
    assert (entry.source, entry.target) == ("A <g1>big</g1> dog", "Un perro <g1>grande</g1>")


def test_a_target_missing_a_code_gets_the_sources_codes_placed_in_its_text() -> None:
    source = 'Press <ph x="1">{Enter}</ph> now'
    (entry,) = memory_entries(read_tmx(tmx(tu(("en", source), ("es", "Pulse ahora"))), "m"))
    target = parse_stored(entry.target)
    assert [c.kind for c in target.codes] == ["ph"] and target.plain.split() == ["Pulse", "ahora"]


def test_placeholders_give_a_coded_entry_and_a_plain_one() -> None:
    memory = read_tmx(bilingual(("Hello {name}", "Hola {name}")), "m")
    entries = {e.source: e.target for e in memory_entries(memory)}
    assert entries == {"Hello <x1/>": "Hola <x1/>", "Hello {name}": "Hola {name}"}


def test_a_unit_with_a_blank_side_gives_no_entry() -> None:
    memory = read_tmx(bilingual(("Hello", "  "), ("Bye", "Adiós")), "m")
    assert [e.source for e in memory_entries(memory)] == ["Bye"]


def test_what_dragoman_writes_an_independent_reader_reads() -> None:
    written = write_tmx(
        [
            Translation(
                "en",
                parse_stored("Click <g1>here</g1><x2/>"),
                "es",
                parse_stored("Haga clic <g1>aquí</g1><x2/>"),
                "mt",
            ),
            Translation(
                "en", parse_stored("a &lt; b &amp; c"), "es", parse_stored("a &lt; b"), "tm"
            ),
        ],
        source_lang="en",
        tool_version="9",
        when=datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC),
    )
    document = from_element(etree.fromstring(written))
    assert document.header.srclang == "en" and document.header.creationtool == "dragoman"
    first, second = document.tus
    assert [tuv.lang for tuv in first.tuvs] == ["en", "es"]
    assert [type(x).__name__ for x in first.tuvs[0].content] == ["str", "Bpt", "str", "Ept", "Ph"]
    assert second.tuvs[0].content == ["a < b & c"]
    assert [p.text for p in second.props] == ["tm"]
    again = read_tmx(written, "again.tmx")
    assert [normalize(e.source) for e in memory_entries(again)][:1] == ["Click <g1>here</g1><x2/>"]


def test_text_xml_cannot_carry_is_written_as_a_replacement_character() -> None:
    # Segments are checked on the way in; text stored before a check existed must not
    # make the export fail.
    written = write_tmx(
        [Translation("en", parse_stored("Odd \ufffe char."), "es", parse_stored("Raro."), "mt")],
        source_lang="en",
        tool_version="9",
        when=datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC),
    )
    (unit,) = from_element(etree.fromstring(written)).tus
    assert unit.tuvs[0].content == ["Odd \ufffd char."]
