"""The segment cache's lookup statements come in a few sizes: a group commit's key count
takes any value, and a statement per count was built and compiled at almost every commit."""

from __future__ import annotations

from dragoman.store import lookups


def test_every_key_count_uses_one_of_a_few_statements() -> None:
    sizes = {lookups._size(count) for count in range(1, lookups.KEYS_PER_QUERY + 1)}
    assert sizes == {8, 16, 32, 64, 128, 256, lookups.KEYS_PER_QUERY}


def test_a_part_is_padded_with_a_key_no_entry_has() -> None:
    part = [bytes([i]) * 32 for i in range(9)]
    statement, params = lookups._bound(part)
    assert statement is lookups._cached(16)
    assert [params[f"k{i}"] for i in range(9)] == part
    assert [params[f"k{i}"] for i in range(9, 16)] == [b""] * 7
    assert len(params) == 16
