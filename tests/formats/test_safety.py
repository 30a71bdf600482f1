"""Hostile or odd input to the shared machinery: bounded work, declarations kept."""

from __future__ import annotations

from dragoman.formats import by_name, prepare
from dragoman.formats.markup import PLACEHOLDER
from dragoman.formats.safety import parse_xml, serialize_xml
from dragoman.formats.segment import MAX_BREAK_CANDIDATES, sentence_ends

# Each of these once took minutes (quadratic backtracking, or SRX exceptions tried at every
# one of thousands of candidate breaks); the suite's timeout catches a return of it.


def test_placeholder_search_is_linear_on_runs_that_almost_match() -> None:
    assert list(PLACEHOLDER.finditer("%" + "0" * 200_000 + "z")) == []
    assert len(PLACEHOLDER.findall("a.b" * 100_000)) == 0


def test_a_paragraph_of_endless_abbreviations_is_kept_whole() -> None:
    text = "a. " * 5000
    assert sentence_ends(text, "en") == [len(text)]
    few = "It is. " * (MAX_BREAK_CANDIDATES // 2)
    assert len(sentence_ends(few, "en")) == MAX_BREAK_CANDIDATES // 2


def test_splitting_stops_at_its_budget_and_the_rest_stays_whole() -> None:
    text = b"One. Two.\n" * 3
    whole = prepare(
        by_name("text"), text, filename="t.txt", source_lang="en", segmentation=True, split_until=0
    )
    split = prepare(by_name("text"), text, filename="t.txt", source_lang="en", segmentation=True)
    assert (whole.layout, split.layout) == ([1, 1, 1], [2, 2, 2])


def test_a_utf16_document_keeps_its_xml_declaration() -> None:
    original = '<?xml version="1.0" encoding="UTF-16"?>\n<a>x</a>\n'.encode("utf-16")
    out = serialize_xml(parse_xml(original, "a.xml"), original).decode("utf-16")
    assert out.startswith("<?xml") and "<a>x</a>" in out
