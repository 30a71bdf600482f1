"""A batch is cut into contiguous parts of about equal length, one per pipeline it takes."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from dragoman.engines.apertium.pool import split

segments = st.lists(st.text(max_size=40), max_size=60)


@given(segments, st.integers(min_value=1, max_value=8))
def test_parts_are_contiguous_non_empty_and_at_most_as_many_as_asked(
    batch: list[str], parts: int
) -> None:
    cut = split(batch, parts)

    assert [segment for part in cut for segment in part] == batch
    assert all(part for part in cut)
    assert len(cut) <= parts


@given(st.lists(st.text(min_size=1, max_size=40), min_size=8, max_size=60), st.integers(2, 4))
def test_parts_are_about_equal_in_characters(batch: list[str], parts: int) -> None:
    cut = split(batch, parts)

    assert len(cut) == parts
    share = sum(len(s) + 1 for s in batch) / parts
    longest = max(len(s) + 1 for s in batch)
    assert all(sum(len(s) + 1 for s in part) <= share + longest for part in cut)


def test_a_long_last_segment_leaves_the_short_ones_a_part_of_their_own() -> None:
    short, long = ["a"] * 7, ["b" * 40]
    assert split(short + long, 2) == [short, long]
    assert split(short + long + long, 3) == [short, long, long]


def test_a_short_batch_is_one_part_per_segment_at_most() -> None:
    assert split(["a", "b"], 4) == [["a"], ["b"]]
    assert split([], 3) == []
