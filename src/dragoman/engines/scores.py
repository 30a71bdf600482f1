"""What a model says of its own outputs: the capability of the engines that score them.

A neural model gives each token it outputs a probability. An output's *confidence* is the
mean of their logarithms, exponentiated: the geometric mean of its tokens' probabilities,
the end of the sentence included, between 0 and 1. Normalised by length, so that a long
sentence is not less sure for being long. An engine without such a model (Apertium, a
pivot through two engines) gives none.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple, Protocol, runtime_checkable

from dragoman.models import Pair

# Digits kept: a confidence is a rough measure, and results carry one per segment.
DIGITS = 4


class Scored(NamedTuple):
    """A translation, with the model's confidence in it (None: the engine gives none)."""

    text: str
    confidence: float | None = None


@runtime_checkable
class Scores(Protocol):
    """An engine whose model scores its outputs. The translations are exactly those of
    ``translate``: scoring changes no decoding setting."""

    async def translate_scored(self, pair: Pair, segments: Sequence[str]) -> list[Scored]:
        """One translation per segment, in order, each with its confidence."""
        ...


class Translates(Protocol):
    async def translate(self, pair: Pair, segments: Sequence[str]) -> list[str]: ...


async def scored(engine: Translates, pair: Pair, segments: Sequence[str]) -> list[Scored]:
    """``engine``'s translations, with their confidence where it scores them."""
    if isinstance(engine, Scores):
        return await engine.translate_scored(pair, segments)
    return [Scored(text) for text in await engine.translate(pair, segments)]


@dataclass(frozen=True, slots=True)
class Hypothesis:
    """A model's output for one text: the sum of its tokens' log-probabilities, and how
    many tokens (the parts of a long segment add up, ``long_inputs``)."""

    text: str
    log_prob: float = 0.0
    tokens: int = 0

    def scored(self) -> Scored:
        """The text with its confidence; None for an output of no token."""
        if self.tokens <= 0 or not math.isfinite(self.log_prob):
            return Scored(self.text)
        mean = min(self.log_prob / self.tokens, 0.0)
        return Scored(self.text, round(math.exp(mean), DIGITS))
