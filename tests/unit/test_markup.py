"""Text with inline codes: the stored form, edges, projection for engines that see plain
text, and sentence segmentation that rejoins exactly."""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dragoman.engines.markup import translate_stored
from dragoman.formats.markup import (
    Builder,
    Code,
    Marked,
    edges,
    parse_stored,
    project,
    same_codes,
    well_formed,
)
from dragoman.formats.segment import join, sentence_ends, split
from dragoman.models import Pair


def marked(stored: str) -> Marked:
    return parse_stored(stored)


@given(st.text())
def test_any_text_survives_the_stored_form(text: str) -> None:
    unit = Marked.of([text])
    assert parse_stored(unit.stored()) == unit


def test_the_stored_form_escapes_markup_characters() -> None:
    unit = Marked.of(["a < b & ", Code("open", 1), "c", Code("close", 1), Code("ph", 2)])
    assert unit.stored() == "a &lt; b &amp; <g1>c</g1><x2/>"
    assert parse_stored(unit.stored()) == unit


def test_placeholders_become_standalone_codes_with_their_text() -> None:
    builder = Builder()
    builder.text("Hi %1$s, {name} has {count, plural, one {# file} other {# files}} at ")
    builder.text("https://example.org/a?b=1. Mail a@b.org or {{user}}, 50%% off.")
    unit = builder.build()
    assert builder.natives == {
        1: "%1$s",
        2: "{name}",
        3: "{count, plural, one {# file} other {# files}}",
        4: "https://example.org/a?b=1",
        5: "a@b.org",
        6: "{{user}}",
        7: "%%",
    }
    assert unit.plain.startswith("Hi , ") and "off." in unit.plain


def test_edges_keep_outer_whitespace_and_enclosing_codes_out_of_the_core() -> None:
    lead, core, trail = edges(marked("<g1>  Hello <g2>big</g2> world. </g1>\n"))
    assert (lead.stored(), core.stored(), trail.stored()) == (
        "<g1>  ",
        "Hello <g2>big</g2> world.",
        " </g1>\n",
    )
    lead, core, trail = edges(marked("<g1>Hello</g1> world"))
    assert (lead.stored(), core.stored(), trail.stored()) == ("", "<g1>Hello</g1> world", "")


def test_projection_keeps_order_edges_and_nesting() -> None:
    core = marked("<g1>Hello</g1> big <g2>red <g3>dog</g3></g2><x4/>")
    out = project(core, "Hola gran perro rojo")
    assert same_codes(core, out)
    assert out.stored().startswith("<g1>") and out.stored().endswith("<x4/>")


@given(
    st.lists(st.sampled_from(["<g1>", "</g1>", "<x2/>", "word ", "b ", "<g3>", "</g3>"])),
    st.text(alphabet="ab ", max_size=30),
)
def test_projection_never_drops_doubles_or_crosses_a_code(parts: list[str], out: str) -> None:
    core = marked("".join(parts))
    if not well_formed(core):
        return
    assert same_codes(core, project(core, out))


class Shouting:
    """An engine without codes of its own: it upper-cases and pads with spaces."""

    async def translate(self, pair: Pair, segments: Sequence[str]) -> list[str]:
        return [f"  {s.upper()}  " for s in segments]


async def test_an_engine_that_sees_plain_text_gets_the_codes_back_in_place() -> None:
    out = await translate_stored(
        Shouting(), Pair("en", "es"), [" Hello <g1>big</g1> world. ", "<x1/>", "plain"]
    )
    assert out == [" HELLO <g1>BIG</g1> WORLD. ", "<x1/>", "PLAIN"]


@pytest.mark.parametrize(
    ("text", "lang", "count"),
    [
        ("Mr. Smith came at 3 p.m. on Jan. 5. He left. Was it Dr. Who? Yes!", "en", 4),
        ("Am 3. Okt. 2024 kam Hr. Müller z. B. an. Dann ging er.", "de", 2),
        ("M. Dupont est venu. « Bonjour ! » Puis il est parti.", "fr", 3),
        ("No sentence end here", "en", 1),
    ],
)
def test_sentences_are_found_by_srx_rules(text: str, lang: str, count: int) -> None:
    ends = sentence_ends(text, lang)
    assert len(ends) == count
    assert ends[-1] == len(text)


@given(st.text(alphabet="ab .!?\n", max_size=80))
def test_segments_always_rejoin_to_the_paragraph(text: str) -> None:
    unit = Marked.of([text])
    assert "".join(p.plain for p in split(unit, "en")) == text


def test_a_pair_around_whole_sentences_is_closed_reopened_and_joined_back() -> None:
    unit = marked("Mr. Smith came. <g1>He said hi. Then he left. </g1> Bye.")
    pieces = split(unit, "en")
    assert [p.stored() for p in pieces] == [
        "Mr. Smith came. ",
        "<g1>He said hi. </g1>",
        "<g1>Then he left. </g1>",
        " Bye.",
    ]
    assert all(well_formed(p) for p in pieces)
    assert join(pieces) == unit
    # The cut pairs are at each piece's edges: an engine never moves them.
    assert [edges(p)[1].codes for p in pieces] == [[], [], [], []]


def test_a_pair_over_part_of_a_sentence_keeps_its_sentences_together() -> None:
    unit = marked('<g1>1.13. "Source</g1> Code Form" means the form. It is <g2>fine. Yes</g2>.')
    assert [p.stored() for p in split(unit, "en")] == [
        '<g1>1.13. "Source</g1> Code Form" means the form. ',
        "It is <g2>fine. Yes</g2>.",
    ]


@given(
    st.lists(
        st.sampled_from(["Hi. ", "It is. ", "Yes! ", "<g1>", "</g1>", "<g2>", "</g2>", "<x3/>"]),
        max_size=14,
    )
)
def test_split_pieces_are_well_formed_keep_cut_pairs_at_edges_and_join_back(
    parts: list[str],
) -> None:
    unit = marked("".join(parts))
    if not well_formed(unit):
        return
    pieces = split(unit, "en")
    assert join(pieces) == unit
    for piece in pieces:
        assert well_formed(piece)
    # Only pairs the source had inside one piece stay in a core, so an engine can move
    # nothing that join must find at an edge.
    inner = [c for p in pieces for c in edges(p)[1].codes if c.kind != "ph"]
    assert len(inner) <= len([c for c in unit.codes if c.kind != "ph"])


def _srx_alone(text: str, lang: str) -> list[int]:
    from choppa.iterators import SrxTextIterator

    from dragoman.formats import segment

    pieces = SrxTextIterator(segment._rules(), f"{lang}_two", text, buffer_length=len(text) + 9)
    ends: list[int] = []
    for piece in pieces:
        end = (ends[-1] if ends else 0) + len(piece)
        if ends and not text[ends[-1] : end].strip():
            ends[-1] = end
        else:
            ends.append(end)
    return ends or [len(text)]


@pytest.mark.parametrize("lang", ["en", "fr", "de", "es", "ja", "xx"])
def test_the_shortcut_for_one_sentence_agrees_with_the_rules(lang: str) -> None:
    from tests.conftest import CORPUS_DIR

    lines = [
        line
        for name in ("en_licenses.txt", "fr_sentences.txt")
        for line in (CORPUS_DIR / name).read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    texts = [*lines, *(f"{a} {b}" for a, b in itertools.pairwise(lines))]
    texts += ["東京です。大阪です\uff01", "OK. fine", "a\n\nb", "x {0> y <0} z", "Hi.  ", "It is\n"]
    for text in texts:
        assert sentence_ends(text, lang) == _srx_alone(text, lang), text
