"""Terms hidden from the engine behind placeholders, and put back after it.

Each occurrence becomes a placeholder of capital letters (``ZXQA``, ``ZXQB``, …) that no
dictionary holds: Apertium copies it through as an unknown word (marking it ``*ZXQA`` by
default), a neural model usually copies it, and an engine that changes its case still
leaves it recognisable. The placeholder keeps the term's word slot in the sentence, so the
words around it are translated as around a name. Terms are found in the text of a segment,
between its inline codes (a term never spans a code), so the codes are untouched.

A placeholder must come back exactly once; ``unmask`` returns None otherwise, and the
caller falls back (``apply``). An unknown-word mark the engine put before a placeholder is
dropped with it; a ``*`` that was in the text stays.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from dragoman.formats.markup import Marked, Token
from dragoman.glossaries.matching import Hit, Terms

# Letter triples that begin no word of the languages installed; one absent from the
# segment is used, so a placeholder cannot be mistaken for text.
_PREFIXES = ("ZXQ", "QZX", "XQZ", "ZQX", "QXZ", "XZQ")


@dataclass(frozen=True, slots=True)
class Placeholder:
    token: str  # what the engine sees, ZXQA
    hit: Hit
    stars: int  # "*" right before it in the text sent (an unknown-word mark adds one)


@dataclass(frozen=True, slots=True)
class Masked:
    """A segment as sent to the engine, and what each of its placeholders stands for."""

    sent: Marked
    placeholders: tuple[Placeholder, ...]
    pattern: re.Pattern[str]  # any placeholder of this segment, with the stars before it


def _letters(index: int) -> str:
    """0 → A, 25 → Z, 26 → AA: a placeholder's own letters."""
    out = ""
    index += 1
    while index:
        index, rest = divmod(index - 1, 26)
        out = chr(ord("A") + rest) + out
    return out


def mask(segment: Marked, terms: Terms) -> Masked:
    """``segment`` with each occurrence of a term replaced by a placeholder."""
    folded = segment.plain.casefold()
    prefix = next((p for p in _PREFIXES if p.casefold() not in folded), None)
    placeholders: list[Placeholder] = []
    tokens: list[Token] = []
    for token in segment.tokens:
        if not isinstance(token, str) or prefix is None:
            tokens.append(token)
            continue
        out, pos = "", 0
        for hit in terms.find(token):
            out += token[pos : hit.start]
            name = prefix + _letters(len(placeholders))
            stars = len(out) - len(out.rstrip("*"))
            placeholders.append(Placeholder(name, hit, stars))
            out += name
            pos = hit.end
        tokens.append(out + token[pos:])
    pattern = re.compile(rf"(\**)(?<!\w)({prefix or '_'}[A-Z]+)(?!\w)", re.IGNORECASE)
    return Masked(Marked.of(tokens), tuple(placeholders), pattern)


def unmask(out: Marked, masked: Masked) -> Marked | None:
    """The engine's output with each placeholder replaced by its term's target; None
    unless every placeholder came back exactly once (and no other one appeared)."""
    by_token = {p.token: p for p in masked.placeholders}
    seen: dict[str, int] = {}

    def put_back(match: re.Match[str]) -> str:
        stars, token = match.group(1), match.group(2).upper()
        found = by_token.get(token)
        seen[token] = seen.get(token, 0) + 1
        if found is None:
            return match.group()
        return stars[: min(len(stars), found.stars)] + found.hit.replacement

    tokens = [
        masked.pattern.sub(put_back, token) if isinstance(token, str) else token
        for token in out.tokens
    ]
    if seen != dict.fromkeys(by_token, 1):
        return None
    return Marked.of(tokens)
