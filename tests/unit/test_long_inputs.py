"""Segments too long for a model, cut into sentences and words that fit, then joined.

Here a model's limit is counted in words (or characters); ``tests/neural`` counts tokens.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from hypothesis import given, settings
from hypothesis import strategies as st

from dragoman.engines.long_inputs import Parts, in_parts, in_parts_scored, pieces, split_long
from dragoman.engines.scores import Hypothesis
from dragoman.formats.segment import MAX_BREAK_CANDIDATES


def within_words(limit: int) -> Callable[[str], bool]:
    return lambda text: len(text.split()) <= limit


def sentences(count: int) -> list[str]:
    """Distinct sentences of two to six words, each with an abbreviation to check."""
    return [f"Sentence {i} says {'so ' * (i % 5)}e.g. this." for i in range(count)]


def test_a_segment_that_fits_goes_to_the_model_as_it_is() -> None:
    text = "  Hello there. How are you?\n"

    assert split_long(text, "en", within_words(5)) == Parts([text], [])


def test_a_long_segment_becomes_its_sentences_and_the_whitespace_between_them() -> None:
    text = " One two three. Four five six!\n\nSeven eight nine? "

    parts = split_long(text, "en", within_words(5))

    assert parts == Parts(["One two three.", "Four five six!", "Seven eight nine?"], [" ", "\n\n"])
    assert parts.join(["1", "2", "3"]) == "1 2\n\n3"


def test_every_sentence_of_a_segment_past_the_segmenters_own_limit_is_a_part() -> None:
    many = sentences(4 * MAX_BREAK_CANDIDATES)
    text = " ".join(many)

    parts = split_long(text, "en", within_words(50))

    assert parts.texts == many
    assert parts.gaps == [" "] * (len(many) - 1)


def test_sentences_are_found_in_a_window_with_more_places_than_the_segmenter_checks() -> None:
    # 100 words hold 66 places where a sentence could end: the segmenter gives up on them.
    text = "Mr. Smith went. " * 200

    parts = split_long(text, "en", within_words(100))

    assert parts.texts == ["Mr. Smith went."] * 200


def test_a_sentence_longer_than_the_limit_is_cut_at_the_last_word_that_fits() -> None:
    words = [f"w{i}" for i in range(250)]

    parts = split_long(" ".join(words), "en", within_words(100))

    assert [part.split() for part in parts.texts] == [words[:100], words[100:200], words[200:]]
    assert parts.join(parts.texts) == " ".join(words)


def test_text_without_spaces_is_cut_between_characters_and_joined_by_a_space() -> None:
    text = "字" * 700

    parts = split_long(text, "zh", lambda part: len(part) <= 300)

    assert parts.texts == ["字" * 300, "字" * 300, "字" * 100]
    assert parts.join(["a", "b", "c"]) == "a b c"


def test_dense_abbreviations_where_no_sentence_ends_are_cut_as_one_long_sentence() -> None:
    text = "a. " * 1000

    parts = split_long(text, "en", within_words(100))

    assert [len(part.split()) for part in parts.texts] == [100] * 10


@settings(max_examples=50, deadline=None)
@given(
    st.lists(
        st.sampled_from(["Hello", "e.g.", "Mr.", "world.", "Yes!", "x" * 30, " ", "\n", "字。"]),
        max_size=80,
    ),
    st.integers(1, 12),
)
def test_nothing_is_lost_and_every_part_fits(words: list[str], limit: int) -> None:
    text = " ".join(words)
    fits = within_words(limit)

    cut = pieces(text, "en", fits)
    parts = split_long(text, "en", fits)

    assert "".join(cut) == text
    assert all(fits(part) for part in parts.texts)
    assert parts.join(parts.texts).split() == text.split()


def test_the_model_runs_once_on_every_part_of_every_segment_in_order() -> None:
    calls: list[list[str]] = []

    def run(model: str, texts: list[str]) -> list[str]:
        calls.append(texts)
        return [f"{model}:{text.upper()}" for text in texts]

    run_in_parts = in_parts("en", lambda model, text: len(text.split()) <= 3, run)
    outputs = run_in_parts("m", ["Short one.", "One two three. Four five.\nSix.", "Last."])

    assert calls == [["Short one.", "One two three.", "Four five.", "Six.", "Last."]]
    assert outputs == [
        "m:SHORT ONE.",
        "m:ONE TWO THREE. m:FOUR FIVE.\nm:SIX.",
        "m:LAST.",
    ]


def test_a_segment_in_parts_is_scored_over_all_its_tokens() -> None:
    def run(model: str, texts: list[str]) -> list[Hypothesis]:
        # Each part: one token per word, each of probability 1/2, or 1/4 for "Six.".
        return [
            Hypothesis(text.upper(), math.log(0.25 if text == "Six." else 0.5), 1)
            if len(text.split()) == 1
            else Hypothesis(text.upper(), len(text.split()) * math.log(0.5), len(text.split()))
            for text in texts
        ]

    run_in_parts = in_parts_scored("en", lambda model, text: len(text.split()) <= 3, run)
    whole, short = run_in_parts("m", ["One two three. Four five.\nSix.", "Short one."])

    assert whole.text == "ONE TWO THREE. FOUR FIVE.\nSIX."
    assert (whole.tokens, whole.scored().confidence) == (6, round(0.5 ** (7 / 6), 4))
    assert short.scored() == ("SHORT ONE.", 0.5)
    assert Hypothesis("").scored() == ("", None)  # no token, no score
