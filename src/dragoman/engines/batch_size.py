"""The batch size a neural model runs fastest at on this machine, measured when it loads.

The best size differs between machines (cores, caches, a GPU's memory) by a factor of two or
more, so ``DRAGOMAN_NEURAL_BATCH_TOKENS=auto`` (``DRAGOMAN_GPU_BATCH_TOKENS=auto`` for GPU
workers) asks each model, once loaded, to translate a probe at doubling batch sizes and keeps
the fastest. Throughput rises with the batch until the machine is saturated, then falls, so
the climb stops at the second size in a row that is no faster than the best, or when the
probe has used its time budget.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

log = logging.getLogger(__name__)

CPU_SIZES = (512, 1024, 2048, 4096, 8192, 16384, 32768)
GPU_SIZES = (4096, 8192, 16384, 32768, 65536, 131072, 262144)
BUDGET_S = 20.0
# A size must beat the best by this much to count as faster: the probe's own noise.
MARGIN = 0.03
# Sentences of common lengths, repeated to fill each batch; what a model makes of them
# does not matter, only how fast it gets through them.
PROBE_TEXTS = (
    "The committee will meet again next week to discuss the budget.",
    "Thank you for your order.",
    "Please restart the application after installing the update.",
    "Our office is closed on public holidays, but the online shop stays open.",
    "Where is the nearest train station?",
    "The results of the survey were published in the annual report, together with the"
    " figures of the previous three years.",
    "Click the button below to confirm your email address.",
    "It rained all day.",
)


@dataclass(frozen=True, slots=True)
class Measured:
    """The chosen size and what each size tried achieved, in tokens per second."""

    size: int
    rates: dict[int, float]


def fastest(
    rate_at: Callable[[int], float],
    sizes: Sequence[int],
    *,
    budget_s: float = BUDGET_S,
    clock: Callable[[], float] = time.perf_counter,
) -> Measured:
    """The size among ``sizes`` (increasing) at which ``rate_at`` (tokens per second, the
    probe run at that size) is highest, climbing until two sizes in a row are no faster
    than the best or ``budget_s`` is spent."""
    started = clock()
    rates: dict[int, float] = {}
    best, behind = sizes[0], 0
    for size in sizes:
        rates[size] = rate_at(size)
        if rates[size] > rates[best] * (1 + MARGIN):
            best, behind = size, 0
        elif size != best:
            behind += 1
        if behind == 2 or clock() - started >= budget_s:
            break
    return Measured(best, rates)


def probe_texts(tokens: int, length: Callable[[str], int]) -> list[str]:
    """Probe sentences, repeated, until they hold ``tokens`` tokens: one full batch of that
    size. The model decodes them as it decodes any text (the output's length weighs on the
    best size as much as the input's), so a probe costs what such a batch costs."""
    texts: list[str] = []
    held = 0
    while held < tokens:
        text = PROBE_TEXTS[len(texts) % len(PROBE_TEXTS)]
        texts.append(text)
        held += max(length(text), 1)
    return texts


def rate(translate: Callable[[], object], tokens: int) -> float:
    """Tokens per second of one call of ``translate`` over ``tokens`` tokens."""
    started = time.perf_counter()
    translate()
    return tokens / max(time.perf_counter() - started, 1e-9)
