"""Choosing a neural model's batch size from the machine: the climb, on made-up rates."""

from __future__ import annotations

import pytest

from dragoman.engines.batch_size import PROBE_TEXTS, fastest, probe_texts

SIZES = (512, 1024, 2048, 4096, 8192, 16384)


def test_the_climb_keeps_the_fastest_size_and_stops_two_sizes_past_it() -> None:
    rates = {512: 100.0, 1024: 180.0, 2048: 240.0, 4096: 230.0, 8192: 200.0, 16384: 999.0}
    tried: list[int] = []

    def rate_at(size: int) -> float:
        tried.append(size)
        return rates[size]

    measured = fastest(rate_at, SIZES)
    assert measured.size == 2048
    assert tried == [512, 1024, 2048, 4096, 8192]  # 16384 never probed
    assert measured.rates == {size: rates[size] for size in tried}


def test_a_size_within_the_probes_noise_of_the_best_is_not_counted_faster() -> None:
    rates = {512: 100.0, 1024: 102.0, 2048: 101.0, 4096: 300.0}
    measured = fastest(rates.__getitem__, (512, 1024, 2048, 4096))
    assert measured.size == 512  # 1024 and 2048 are within 3 %: the climb stops there


def test_a_climb_that_keeps_rising_takes_the_largest_size() -> None:
    measured = fastest(lambda size: float(size), SIZES)
    assert measured.size == 16384
    assert list(measured.rates) == list(SIZES)


def test_the_climb_stops_when_its_time_budget_is_spent() -> None:
    now = [0.0]

    def rate_at(size: int) -> float:
        now[0] += 4.0  # every probe takes four seconds
        return float(size)

    measured = fastest(rate_at, SIZES, budget_s=10.0, clock=lambda: now[0])
    assert list(measured.rates) == [512, 1024, 2048]
    assert measured.size == 2048


@pytest.mark.parametrize("tokens", [1, 64, 4096])
def test_the_probe_fills_one_batch_of_the_size(tokens: int) -> None:
    texts = probe_texts(tokens, lambda text: len(text.split()))
    held = sum(len(text.split()) for text in texts)
    assert held >= tokens
    assert held - len(texts[-1].split()) < tokens  # no more than it takes
    assert set(texts) <= set(PROBE_TEXTS)
