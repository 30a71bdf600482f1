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

import itertools
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

_TOKEN = re.compile(r"\w+|[^\w\s]")
_HYPHENS = ("-", "\u2010")


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


Tokens = list[re.Match[str]]


def _tokens(text: str) -> Tokens:
    """Words (maximal runs of word characters) and every other visible character alone;
    whitespace only separates them."""
    return list(_TOKEN.finditer(text))


def _word(token: re.Match[str]) -> bool:
    first = token.group()[0]
    return first.isalnum() or first == "_"


@dataclass(frozen=True, slots=True)
class _Term:
    """An entry as tokens (case-folded unless it is exact-case), and whether whitespace
    stands between each two of them."""

    entry: Entry
    tokens: list[str]
    spaced: list[bool]
    exact: bool

    @classmethod
    def of(cls, entry: Entry) -> _Term:
        found = _tokens(entry.source)
        exact = entry.exact_case
        return cls(
            entry,
            [t.group() if exact else t.group().casefold() for t in found],
            [a.end() < b.start() for a, b in itertools.pairwise(found)],
            exact,
        )

    def end_at(self, text: Tokens, folded: list[str], i: int) -> int | None:
        """The index after the last text token this term covers from ``text[i]``, if it
        matches there (``folded``: the text tokens case-folded)."""
        n = len(self.tokens)
        if i + n > len(text):
            return None
        if self.exact:
            if any(text[i + k].group() != self.tokens[k] for k in range(n)):
                return None
        elif folded[i : i + n] != self.tokens:
            return None
        for k in range(n - 1):
            if (text[i + k].end() < text[i + k + 1].start()) != self.spaced[k]:
                return None
        if _joined(text, i - 2, i - 1, i) or _joined(text, i + n - 1, i + n, i + n + 1):
            return None
        return i + n


def _joined(text: Tokens, left: int, hyphen: int, right: int) -> bool:
    """Whether ``text[hyphen]`` is a hyphen that joins the words on both sides of it into
    one (``e-server``, ``server-side``): a term does not end or start there."""
    if left < 0 or right >= len(text) or text[hyphen].group() not in _HYPHENS:
        return False
    a, h, b = text[left], text[hyphen], text[right]
    return _word(a) and _word(b) and a.end() == h.start() and h.end() == b.start()


@dataclass(slots=True)
class _Start:
    """The terms that begin with one token: by their second token, and those of one token."""

    longer: dict[str, list[_Term]] = field(default_factory=dict)
    single: list[_Term] = field(default_factory=list)


def _best_first(term: _Term) -> tuple[int, bool]:
    # The longest first, and of two as long the exact-case one: the first that matches is
    # the one to take.
    return -len(term.tokens), not term.exact


@dataclass(slots=True)
class Terms:
    """A glossary's entries, indexed by their first two tokens (case-folded) for ``find``;
    built once per dictionary revision and kept (a change is a new revision)."""

    entries: tuple[Entry, ...]
    _index: dict[str, _Start] = field(default_factory=dict)

    @classmethod
    def of(cls, entries: Iterable[Entry]) -> Terms:
        terms = cls(tuple(entries))
        for entry in terms.entries:
            term = _Term.of(entry)
            if not term.tokens:
                continue
            start = terms._index.setdefault(term.tokens[0].casefold(), _Start())
            if len(term.tokens) == 1:
                start.single.append(term)
            else:
                start.longer.setdefault(term.tokens[1].casefold(), []).append(term)
        for start in terms._index.values():
            start.single.sort(key=_best_first)
            for candidates in start.longer.values():
                candidates.sort(key=_best_first)
        return terms

    def __len__(self) -> int:
        return len(self.entries)

    def find(self, text: str) -> list[Hit]:
        """Every occurrence, left to right, none overlapping (leftmost, then longest)."""
        tokens = _tokens(text)
        folded = [t.group().casefold() for t in tokens]
        hits: list[Hit] = []
        i = 0
        while i < len(tokens):
            found = self._at(tokens, folded, i)
            if found is None:
                i += 1
                continue
            term, end = found
            start, stop = tokens[i].start(), tokens[end - 1].end()
            matched = text[start:stop]
            hits.append(Hit(start, stop, matched, cased(term.entry, matched), term.entry))
            i = end
        return hits

    def _at(self, tokens: Tokens, folded: list[str], i: int) -> tuple[_Term, int] | None:
        """The term that matches from ``tokens[i]``: terms of two tokens or more first."""
        start = self._index.get(folded[i])
        if start is None:
            return None
        longer = start.longer.get(folded[i + 1], []) if i + 1 < len(folded) else []
        for term in (*longer, *start.single):
            end = term.end_at(tokens, folded, i)
            if end is not None:
                return term, end
        return None
