"""Sentence segmentation by SRX rules (LanguageTool's, shipped with choppa-srx).

A unit is split into pieces whose concatenation is the unit exactly; each piece keeps its
own outer whitespace. A paired code that spans a sentence boundary is closed at the end of
one piece and reopened at the start of the next; ``join`` undoes that.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

from choppa import DEFAULT_SRX_RULESET, SrxDocument
from choppa.iterators import SrxTextIterator

from dragoman.formats.markup import Code, Marked, Token

# A paragraph longer than this is not split (SRX regexes on a huge run of text are slow).
MAX_SPLIT_CHARS = 20_000


@functools.cache
def _rules() -> SrxDocument:
    return SrxDocument(ruleset=DEFAULT_SRX_RULESET)


def _language_key(lang: str) -> str:
    # LanguageTool's maps match two-letter prefixes; a paragraph ends at a blank line.
    return f"{lang.split('-')[0].lower()}_two"


def sentence_ends(text: str, lang: str) -> list[int]:
    """Offsets in ``text`` where a sentence (with its trailing whitespace) ends."""
    if len(text) > MAX_SPLIT_CHARS or not text.strip():
        return [len(text)]
    ends: list[int] = []
    pos = 0
    # The whole text is one buffer: the streaming iterator then splits exactly as the
    # accurate one, ten times faster (its rules are compiled once per process).
    pieces = SrxTextIterator(
        _rules(), _language_key(lang), text, buffer_length=max(len(text) + 1, 1024)
    )
    for piece in pieces:
        pos += len(piece)
        if text[ends[-1] if ends else 0 : pos].strip() or not ends:
            ends.append(pos)
        else:
            ends[-1] = pos  # whitespace alone joins the sentence before it
    if not ends:
        return [len(text)]
    ends[-1] = len(text)
    return ends


def split(unit: Marked, lang: str) -> list[Marked]:
    """The sentences of ``unit``; ``"".join`` of their text is the unit's text."""
    ends = sentence_ends(unit.plain, lang)
    if len(ends) <= 1:
        return [unit]
    pieces: list[list[Token]] = [[]]
    stack: list[int] = []
    offset = 0
    boundary = iter(ends[:-1])
    next_end = next(boundary, None)

    def cut() -> None:
        nonlocal next_end
        pieces[-1].extend(Code("close", i) for i in reversed(stack))
        pieces.append([Code("open", i) for i in stack])
        next_end = next(boundary, None)

    for token in unit.tokens:
        if isinstance(token, Code):
            # A code on a boundary: an opening code or placeholder starts the next sentence,
            # a closing one ends the previous.
            if next_end is not None and offset == next_end and token.kind != "close":
                cut()
            pieces[-1].append(token)
            if token.kind == "open":
                stack.append(token.id)
            elif token.kind == "close" and token.id in stack:
                stack.remove(token.id)
            continue
        text = token
        while next_end is not None and offset + len(text) >= next_end:
            take = next_end - offset
            if take == len(text):
                pieces[-1].append(text)
                offset += len(text)
                text = ""
                break
            pieces[-1].append(text[:take])
            offset += take
            text = text[take:]
            cut()
        if text:
            pieces[-1].append(text)
            offset += len(text)
    return [Marked.of(p) for p in pieces if Marked.of(p).tokens]


def join(pieces: Sequence[Marked]) -> Marked:
    """One unit from its sentences: a pair closed at a boundary and reopened at once is
    one pair again."""
    out: list[Token] = []
    for piece in pieces:
        for token in piece.tokens:
            if (
                isinstance(token, Code)
                and token.kind == "open"
                and out
                and out[-1] == Code("close", token.id)
            ):
                out.pop()
                continue
            out.append(token)
    return Marked.of(out)
