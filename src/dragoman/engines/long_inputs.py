"""Segments longer than a neural model's input limit, cut into parts that fit.

A model reads at most so many tokens (512 for Marian) and would lose the rest. A segment
over that limit is cut into its sentences, by the same SRX rules as file jobs
(``formats/segment.py``), and a sentence still over it at the last word boundary that fits
(anywhere, in a script without spaces). Each part is translated on its own, in the batch
of the other segments, and the parts' translations are joined by the whitespace that
separated them in the source. A segment within the limit goes to the model as it is.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from dragoman.engines.scores import Hypothesis
from dragoman.formats.segment import sentence_ends

Model = TypeVar("Model")
Out = TypeVar("Out")

# The text past a window's last cut that the rules see, so that a sentence end at the cut
# has the context after it that the rules read (``\s+\p{Lu}`` and the like).
LOOKAHEAD_CHARS = 32
# Below this, a window without a sentence end is taken to be inside one long sentence.
MIN_WINDOW_CHARS = 64
# The first length tried for the longest text that fits, doubled until one does not.
FIRST_PROBE_CHARS = 256


@dataclass(frozen=True, slots=True)
class Parts:
    """What the model translates for one segment, and the source's whitespace between."""

    texts: list[str]
    gaps: list[str]

    def join(self, translations: Sequence[str]) -> str:
        """One translation from the parts'; a cut where the source had no whitespace (a
        script without spaces) becomes a single space."""
        out = [translations[0]]
        for gap, text in zip(self.gaps, translations[1:], strict=True):
            out += [gap or " ", text]
        return "".join(out)

    def join_scored(self, outputs: Sequence[Hypothesis]) -> Hypothesis:
        """``join`` of the texts, with the parts' tokens and log-probabilities added up:
        the whole is scored as if the model had made it in one go."""
        text = self.join([output.text for output in outputs])
        log_prob = sum(output.log_prob for output in outputs)
        return Hypothesis(text, log_prob, sum(output.tokens for output in outputs))


def split_long(text: str, lang: str, fits: Callable[[str], bool]) -> Parts:
    """``text`` alone if it ``fits``, else its sentences (or pieces of them) that do."""
    if fits(text):
        return Parts([text], [])
    texts: list[str] = []
    gaps: list[str] = []
    gap = ""
    for piece in pieces(text, lang, fits):
        core = piece.strip()
        if not core:
            gap += piece
            continue
        lead = len(piece) - len(piece.lstrip())
        if texts:
            gaps.append(gap + piece[:lead])
        texts.append(core)
        gap = piece[lead + len(core) :]
    return Parts(texts, gaps)


def pieces(text: str, lang: str, fits: Callable[[str], bool]) -> list[str]:
    """``text`` cut into sentences, each with its outer whitespace, and a sentence that does
    not fit cut at token boundaries; ``"".join`` of them is ``text``."""
    out: list[str] = []
    start = 0
    while start < len(text):
        cut = _longest_fit(text, start, fits)
        if cut == len(text):
            ends = [start + end for end in sentence_ends(text[start:], lang)]
        else:
            ends = _sentence_ends_within(text, start, cut, lang) or [cut]
        for end in ends:
            out.append(text[start:end])
            start = end
    return out


def _sentence_ends_within(text: str, start: int, stop: int, lang: str) -> list[int]:
    """The ends of the sentences from ``start`` that end by ``stop``, read in a window up to
    ``stop`` whose last sentence may go on past it. The segmenter gives up on a window with
    many places to check (each costs its exception rules milliseconds), which looks like
    one long sentence: a window half as long tells the two apart."""
    while True:
        window = text[start : stop + LOOKAHEAD_CHARS]
        ends = [start + end for end in sentence_ends(window, lang)[:-1]]
        if ends := [end for end in ends if end <= stop]:
            return ends
        if stop - start <= MIN_WINDOW_CHARS:
            return []
        stop = (start + stop) // 2


def _longest_fit(text: str, start: int, fits: Callable[[str], bool]) -> int:
    """The end of the longest ``text[start:end]`` that fits, moved back to the last
    whitespace within it if it ends inside a word; at least one character."""
    # Doubling, then halving: each probe tokenizes about the text that fits, not the rest.
    low, high = start + 1, start + FIRST_PROBE_CHARS  # text[start:low] taken to fit
    while high < len(text) and fits(text[start:high]):
        low, high = high, start + 2 * (high - start)
    if high >= len(text):
        if fits(text[start:]):
            return len(text)
        high = len(text)
    while high - low > 1:  # text[start:high] does not fit
        middle = (low + high) // 2
        if fits(text[start:middle]):
            low = middle
        else:
            high = middle
    if text[low].isspace():
        return low
    space = next((i for i in range(low - 1, start, -1) if text[i].isspace()), start)
    return space if text[start:space].strip() else low


def in_parts(
    lang: str, fits: Callable[[Model, str], bool], run: Callable[[Model, list[str]], list[str]]
) -> Callable[[Model, list[str]], list[str]]:
    """``run``, one batch through a model, made to cut the segments that do not fit the
    model into parts: all of them go through ``run`` in one batch, then are joined."""
    return _in_parts(lang, fits, run, Parts.join)


def in_parts_scored(
    lang: str,
    fits: Callable[[Model, str], bool],
    run: Callable[[Model, list[str]], list[Hypothesis]],
) -> Callable[[Model, list[str]], list[Hypothesis]]:
    """``in_parts`` of a ``run`` that scores its outputs (``Parts.join_scored``)."""
    return _in_parts(lang, fits, run, Parts.join_scored)


def _in_parts(
    lang: str,
    fits: Callable[[Model, str], bool],
    run: Callable[[Model, list[str]], list[Out]],
    join: Callable[[Parts, Sequence[Out]], Out],
) -> Callable[[Model, list[str]], list[Out]]:
    def run_in_parts(model: Model, texts: list[str]) -> list[Out]:
        split = [split_long(text, lang, lambda part: fits(model, part)) for text in texts]
        outputs = iter(run(model, [part for parts in split for part in parts.texts]))
        return [join(parts, [next(outputs) for _ in parts.texts]) for parts in split]

    return run_in_parts
