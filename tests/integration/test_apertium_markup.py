"""Inline codes through the real Apertium: paired codes stay on their words when transfer
reorders them, standalone codes come back, nothing is dropped, doubled or crossed."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dragoman.engines.apertium import ApertiumEngine
from dragoman.engines.markup import translate_stored
from dragoman.formats.markup import parse_stored, same_codes
from dragoman.models import Pair
from tests.integration.conftest import cli, squash

EN_ES = Pair("en", "es")


async def one(engine: ApertiumEngine, stored: str) -> str:
    (out,) = await translate_stored(engine, EN_ES, [stored])
    return out


async def test_bold_follows_its_word_through_reordering(apertium: ApertiumEngine) -> None:
    # eng-spa reorders adjective and noun: the bold must land on "grande", not "Mundo".
    assert await one(apertium, "Hello <g1>big</g1> world.") == "Hola Mundo <g1>grande</g1>."


async def test_a_span_over_several_words_comes_back_as_one_pair(
    apertium: ApertiumEngine,
) -> None:
    out = await one(apertium, "The <g1>big <g2>red</g2> dog</g1> barks.")
    assert out == "Los ladridos de <g1>perro <g2>rojos</g2> grandes</g1>."


async def test_standalone_codes_and_empty_pairs_come_back(apertium: ApertiumEngine) -> None:
    out = await one(apertium, "Click <g1>here</g1> or <x2/> now<g3></g3>.")
    assert same_codes(parse_stored("<g1></g1><x2/><g3></g3>"), parse_stored(out))
    assert "<g1>aquí</g1>" in out


async def test_outer_whitespace_and_edge_codes_come_from_the_source(
    apertium: ApertiumEngine,
) -> None:
    # Apertium adds a leading space and widens runs (apertium #99); the source's stay.
    out = await one(apertium, "<g1>  It is fast. </g1>\n")
    assert out.startswith("<g1>  ") and out.endswith(" </g1>\n")
    assert "  Es" in out


async def test_a_plain_sentence_translates_exactly_as_apertium_does_it_alone(
    apertium: ApertiumEngine,
) -> None:
    for sentence in ["The red car is very fast.", "Hello world.", "It stops."]:
        assert await one(apertium, sentence) == squash(cli("eng-spa", sentence))


async def test_escaped_markup_stays_text(apertium: ApertiumEngine) -> None:
    out = await one(apertium, "Use &lt;b&gt; for bold &amp; more.")
    assert "&lt;b&gt;" in out.replace("*", "") and "&amp;" in out
    assert parse_stored(out).codes == []


_words = st.sampled_from(["the", "big", "red", "dog", "barks", "house", "is", "green", "cat"])


@st.composite
def tagged(draw: st.DrawFn) -> str:
    """A sentence of known words with nested and standalone codes in random places."""
    words = draw(st.lists(_words, min_size=1, max_size=8))
    out: list[str] = []
    stack: list[int] = []
    next_id = 1
    for word in words:
        action = draw(st.sampled_from(["open", "close", "ph", "none", "none"]))
        if action == "open":
            out.append(f"<g{next_id}>")
            stack.append(next_id)
            next_id += 1
        elif action == "close" and stack:
            out.append(f"</g{stack.pop()}>")
        elif action == "ph":
            out.append(f"<x{next_id}/>")
            next_id += 1
        out.append(word + " ")
    out += [f"</g{i}>" for i in reversed(stack)]
    return "".join(out).strip() + "."


@pytest.mark.timeout(300)
@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(source=tagged())
async def test_codes_are_never_dropped_doubled_or_crossed(
    apertium: ApertiumEngine, source: str
) -> None:
    out = await one(apertium, source)
    assert same_codes(parse_stored(source), parse_stored(out)), (source, out)


async def test_a_standalone_code_at_the_edge_of_a_pair_stays_inside_it(
    apertium: ApertiumEngine,
) -> None:
    # <a href><img>the picture</a>: the image must stay linked.
    assert await one(apertium, "See <g1><x2/>the picture</g1> here.") == (
        "Ver <g1><x2/>el cuadro</g1> aquí."
    )
    out = await one(apertium, "See <g1>the picture<x2/></g1> here.")
    assert "<g1>el cuadro<x2/></g1>" in out


async def test_a_code_inside_a_word_keeps_the_word_whole(apertium: ApertiumEngine) -> None:
    # Cut at the code, Apertium would translate "Hel" and "lo" as unknown words.
    out = await one(apertium, "Hel<g1>lo</g1> world.")
    assert "*" not in out and same_codes(parse_stored("<g1></g1>"), parse_stored(out))
    assert parse_stored(out).plain == "Hola Mundo."
