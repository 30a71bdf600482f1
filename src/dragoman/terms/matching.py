"""Where a glossary's terms occur in a text, and what each occurrence becomes.

The rules, as a user of a term list expects them:

- whole words only: ``server`` is found in ``server's`` and ``(server)`` but not in
  ``servers``, ``webserver`` or ``e-server`` (a hyphen between letters joins a word);
- a term of several words matches them with any whitespace between (``log  in``);
- the longest term wins, and overlapping terms are resolved leftmost first: in
  ``machine translation engine`` the entries ``machine translation`` and ``translation
  engine`` give the first one and leave ``engine`` to a term of its own;
- an entry written in lower case matches any capitalisation and its target takes the
  capitalisation of the matched text (``Server`` at a sentence start gives ``Servidor``,
  ``SERVER`` gives ``SERVIDOR``); an entry with a capital letter (a product name, an
  acronym) matches exactly that spelling, and wins over a lower-case one of the same words;
- an entry whose target is its source keeps the matched text as it is.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

_WORD = re.compile(r"\w+")
_SPACES = re.compile(r"\s+")
# Not inside a word: no word character next to the term, nor a hyphen joined to one.
_BEFORE = r"(?<!\w)(?<!\w[-\u2010])"
_AFTER = r"(?!\w)(?![-\u2010]\w)"


@dataclass(frozen=True, slots=True)
class Entry:
    """One line of a glossary: every occurrence of ``source`` becomes ``target``."""

    source: str
    target: str

    @property
    def exact_case(self) -> bool:
        """An entry with a capital letter matches only that spelling."""
        return self.source != self.source.lower()

    @property
    def keeps(self) -> bool:
        """Target equals source: the term stays as it is (a product name)."""
        return self.target == self.source


@dataclass(frozen=True, slots=True)
class Hit:
    """An occurrence of ``entry``: ``text[start:end]`` is ``matched``, to become
    ``replacement``."""

    start: int
    end: int
    matched: str
    replacement: str
    entry: Entry


def cased(entry: Entry, matched: str) -> str:
    """The target for ``matched``: an exact-case entry's as written, a kept term as matched,
    a lower-case entry's with the capitalisation of ``matched`` carried over."""
    if entry.keeps:
        return matched
    if entry.exact_case or matched == entry.source:
        return entry.target
    return carry_case(matched, entry.target)


def carry_case(model: str, target: str) -> str:
    """``target`` in the capitalisation of ``model``: all capitals, or a capital first
    letter; unchanged otherwise (its own capitals are never lowered)."""
    letters = [c for c in model if c.isalpha()]
    if len(letters) > 1 and all(c.isupper() for c in letters):
        return target.upper()
    if letters and letters[0].isupper():
        first = next((i for i, c in enumerate(target) if c.isalpha()), None)
        if first is not None:
            return target[:first] + target[first].upper() + target[first + 1 :]
    return target


def _anchor(source: str) -> str:
    """What indexes a term: its first word, case-folded, or its first character when it
    starts with a symbol (``.NET``)."""
    found = _WORD.match(source)
    return found.group().casefold() if found else source[0]


@dataclass(frozen=True, slots=True)
class _Term:
    entry: Entry
    pattern: re.Pattern[str]

    @classmethod
    def of(cls, entry: Entry) -> _Term:
        body = r"\s+".join(re.escape(part) for part in _SPACES.split(entry.source))
        before = _BEFORE if _WORD.match(entry.source) else ""
        after = _AFTER if entry.source[-1:].isalnum() or entry.source.endswith("_") else ""
        flags = 0 if entry.exact_case else re.IGNORECASE
        return cls(entry, re.compile(before + body + after, flags))


@dataclass(slots=True)
class Terms:
    """A glossary's entries, indexed for ``find``; built once per glossary and kept, since
    glossaries never change."""

    entries: tuple[Entry, ...]
    _words: dict[str, list[_Term]] = field(default_factory=dict)
    _symbols: dict[str, list[_Term]] = field(default_factory=dict)

    @classmethod
    def of(cls, entries: Iterable[Entry]) -> Terms:
        terms = cls(tuple(entries))
        for entry in terms.entries:
            key = _anchor(entry.source)
            index = terms._words if _WORD.match(entry.source) else terms._symbols
            index.setdefault(key, []).append(_Term.of(entry))
        return terms

    def __len__(self) -> int:
        return len(self.entries)

    def find(self, text: str) -> list[Hit]:
        """Every occurrence, left to right, none overlapping (leftmost, then longest)."""
        hits: list[Hit] = []
        end = 0
        for pos in self._starts(text):
            if pos < end:
                continue
            hit = self._at(text, pos)
            if hit is not None:
                hits.append(hit)
                end = hit.end
        return hits

    def _starts(self, text: str) -> list[int]:
        """Where a term may start: each word's first character, and each character that
        starts a term beginning with a symbol."""
        starts = [word.start() for word in _WORD.finditer(text)]
        if self._symbols:
            starts += [i for i, char in enumerate(text) if char in self._symbols]
            starts.sort()
        return starts

    def _at(self, text: str, pos: int) -> Hit | None:
        """The longest term starting at ``pos`` (an exact-case one on a tie)."""
        candidates = self._symbols.get(text[pos], [])
        word = _WORD.match(text, pos)
        if word is not None:
            candidates = [*candidates, *self._words.get(word.group().casefold(), [])]
        best: tuple[int, bool, _Term] | None = None
        for term in candidates:
            found = term.pattern.match(text, pos)
            if found is None or found.end() == pos:
                continue
            rank = (found.end(), term.entry.exact_case)
            if best is None or rank > best[:2]:
                best = (*rank, term)
        if best is None:
            return None
        end, _, term = best
        matched = text[pos:end]
        return Hit(pos, end, matched, cased(term.entry, matched), term.entry)
