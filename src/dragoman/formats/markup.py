"""Text with inline codes: what a file's unit becomes, engine-neutral.

A ``Marked`` is a sequence of tokens: text, and codes that stand for markup the engine must
not see or change — a paired code (``open``/``close`` of one id, content translatable), or a
standalone one (``ph``: an image, a line break, a placeholder such as ``%s`` or ``{name}``).
The format that made it keeps what each id stands for; the engine only moves codes.

Segments of file jobs are stored in a small XML-like form of it: ``<g1>``, ``</g1>``,
``<x2/>``, with ``&lt;``, ``&gt;`` and ``&amp;`` for the literal characters.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, TypeVar

from dragoman.errors import InvalidFile

CodeKind = Literal["open", "close", "ph"]


@dataclass(frozen=True, slots=True)
class Code:
    kind: CodeKind
    id: int

    def stored(self) -> str:
        if self.kind == "open":
            return f"<g{self.id}>"
        if self.kind == "close":
            return f"</g{self.id}>"
        return f"<x{self.id}/>"


Token = str | Code


@dataclass(frozen=True, slots=True)
class Marked:
    """Text with inline codes; adjacent text tokens are always merged, never empty."""

    tokens: tuple[Token, ...] = ()

    @classmethod
    def of(cls, tokens: Iterable[Token]) -> Marked:
        # Runs of text are joined once each: adding to the last string token instead
        # would copy it for every piece (quadratic on a unit of many small pieces).
        merged: list[Token] = []
        run: list[str] = []
        for token in tokens:
            if isinstance(token, str):
                run.append(token)
                continue
            if run and (text := "".join(run)):
                merged.append(text)
            run = []
            merged.append(token)
        if run and (text := "".join(run)):
            merged.append(text)
        return cls(tuple(merged))

    @property
    def plain(self) -> str:
        """The text alone, codes removed."""
        return "".join(t for t in self.tokens if isinstance(t, str))

    @property
    def codes(self) -> list[Code]:
        return [t for t in self.tokens if isinstance(t, Code)]

    @property
    def engine_text(self) -> str:
        """The text an engine that knows no codes is given: ``plain``, with a space where
        a standalone code stood between two words (a line break, an image)."""
        out: list[str] = []
        for i, token in enumerate(self.tokens):
            if isinstance(token, str):
                out.append(token)
            elif token.kind == "ph" and out and out[-1][-1:].strip():
                after = next((t for t in self.tokens[i + 1 :] if isinstance(t, str)), "")
                if after[:1].strip():
                    out.append(" ")
        return "".join(out)

    def has_text(self) -> bool:
        return any(t.strip() for t in self.tokens if isinstance(t, str))

    def stored(self) -> str:
        return "".join(t.stored() if isinstance(t, Code) else _escape(t) for t in self.tokens)

    def __add__(self, other: Marked) -> Marked:
        return Marked.of((*self.tokens, *other.tokens))


_STORED = re.compile(r"<(/?)g(\d+)>|<x(\d+)/>|&(lt|gt|amp);|[<>&]")
_ENTITIES = {"lt": "<", "gt": ">", "amp": "&"}


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def parse_stored(stored: str) -> Marked:
    """The ``Marked`` that ``Marked.stored()`` wrote; a stray ``<``, ``>`` or ``&`` is text."""
    tokens: list[Token] = []
    pos = 0
    for match in _STORED.finditer(stored):
        tokens.append(stored[pos : match.start()])
        slash, paired, standalone, entity = match.groups()
        if paired is not None:
            tokens.append(Code("close" if slash else "open", int(paired)))
        elif standalone is not None:
            tokens.append(Code("ph", int(standalone)))
        elif entity is not None:
            tokens.append(_ENTITIES[entity])
        else:
            tokens.append(match.group())
        pos = match.end()
    tokens.append(stored[pos:])
    return Marked.of(tokens)


def well_formed(marked: Marked) -> bool:
    """Every paired code opened once, closed once, in nesting order; no id used twice."""
    stack: list[int] = []
    seen: set[tuple[CodeKind, int]] = set()
    for code in marked.codes:
        key = (code.kind, code.id)
        if key in seen:
            return False
        seen.add(key)
        if code.kind == "open":
            stack.append(code.id)
        elif code.kind == "close" and (not stack or stack.pop() != code.id):
            return False
    return not stack


def same_codes(source: Marked, target: Marked) -> bool:
    """``target`` carries exactly the codes of ``source`` and is well formed."""
    return Counter(source.codes) == Counter(target.codes) and well_formed(target)


class _Unit(Protocol):
    @property
    def marked(self) -> Marked: ...


U = TypeVar("U", bound=_Unit)


def translated_units(
    sources: Sequence[U], units: Sequence[Marked | None], filename: str
) -> list[tuple[U, Marked]]:
    """What a format's ``merge`` writes: each source unit that has a translation, with it.
    ``units`` answers ``sources`` one to one (``InvalidFile`` otherwise); a translation that
    lost a code of its source (dragoman's engines never give one) leaves the unit as it was
    rather than lose markup."""
    if len(units) != len(sources):
        raise InvalidFile(f"{filename}: the stored file no longer matches its units")
    return [
        (source, unit)
        for source, unit in zip(sources, units, strict=True)
        if unit is not None and same_codes(source.marked, unit)
    ]


# Placeholders that must come back exactly as sent: printf (%s, %1$s, %.2f, %%), braces
# ({name}, {{var}}, {0}), ICU arguments ({count, plural, ...} taken whole, one level of
# nesting), URLs and e-mail addresses. Every repetition that can start anywhere is bounded,
# so no text makes the search quadratic.
PLACEHOLDER = re.compile(
    r"%(?:\d{1,3}\$)?[-+ #0]{0,5}\d{0,4}(?:\.\d{1,4})?(?:hh|h|ll|l|L|z|j|t)?[diouxXeEfFgGcspn@%]"
    r"|\{\{[^{}\n]{1,80}\}\}"
    r"|\{[^{}\n]{0,200}(?:\{[^{}\n]{0,200}\}[^{}\n]{0,200})*\}"
    r"|\b(?:https?|ftp)://[^\s<>\"']+[^\s<>\"'.,;:!?)\]]"
    r"|\bwww\.[^\s<>\"']+[^\s<>\"'.,;:!?)\]]"
    r"|(?<![\w.+-])[\w.+-]{1,64}@[\w-]{1,63}(?:\.[\w-]{1,63}){1,8}\b"
)


# No engine is given these: the C0 and C1 controls but tab, LF and CR, lone surrogates, and
# the noncharacters U+FFFE and U+FFFF (they end Apertium's input stream).
CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff]")
PROTECTED = re.compile(f"{PLACEHOLDER.pattern}|{CONTROL.pattern}")


@dataclass(slots=True)
class Builder:
    """Builds a unit's ``Marked`` while recording what each code stands for.

    ``natives[id]`` is the format's own object for code ``id`` (an element, a string of
    markup); a placeholder's native is its text. Ids run from 1 in order of appearance, so
    extracting the same bytes twice numbers the codes the same way.
    """

    protect: bool = True
    tokens: list[Token] = field(default_factory=list)
    natives: dict[int, Any] = field(default_factory=dict)
    _stack: list[int] = field(default_factory=list)

    def _new(self, native: Any) -> int:
        code_id = len(self.natives) + 1
        self.natives[code_id] = native
        return code_id

    def text(self, text: str) -> None:
        """Text of the unit; control characters (a form feed, a NUL) become standalone
        codes, so that they come back from the source and never reach an engine."""
        pattern = PROTECTED if self.protect else CONTROL
        pos = 0
        for match in pattern.finditer(text):
            self.tokens.append(text[pos : match.start()])
            self.ph(match.group())
            pos = match.end()
        self.tokens.append(text[pos:])

    def open(self, native: Any) -> int:
        code_id = self._new(native)
        self._stack.append(code_id)
        self.tokens.append(Code("open", code_id))
        return code_id

    def close(self) -> None:
        self.tokens.append(Code("close", self._stack.pop()))

    def ph(self, native: Any) -> int:
        code_id = self._new(native)
        self.tokens.append(Code("ph", code_id))
        return code_id

    def build(self) -> Marked:
        while self._stack:
            self.close()
        return Marked.of(self.tokens)


def walk(marked: Marked) -> Iterator[tuple[str | Code, tuple[int, ...]]]:
    """Each token with the ids of the paired codes open around it (outermost first)."""
    stack: list[int] = []
    for token in marked.tokens:
        if isinstance(token, Code) and token.kind == "close":
            if token.id in stack:
                stack.remove(token.id)
            yield token, tuple(stack)
            continue
        yield token, tuple(stack)
        if isinstance(token, Code) and token.kind == "open":
            stack.append(token.id)


def edges(marked: Marked) -> tuple[Marked, Marked, Marked]:
    """``(lead, core, trail)``: outer whitespace, and the codes around all of the text, kept
    from the source; the core, balanced, is what an engine translates. The three rejoin to
    ``marked``."""
    tokens: list[Token] = []
    for token in marked.tokens:  # outer whitespace of each text as tokens of its own
        if isinstance(token, str) and token.strip():
            body = token.strip()
            head = token[: token.index(body)]
            tokens += [head, body, token[len(head) + len(body) :]]
        else:
            tokens.append(token)
    texts = [i for i, t in enumerate(tokens) if isinstance(t, str) and t.strip()]
    if not texts:
        return marked, Marked(), Marked()
    lead_end, trail_start = texts[0], texts[-1] + 1
    while True:
        outside = [*tokens[:lead_end], *tokens[trail_start:]]
        opened = {t.id for t in outside if isinstance(t, Code) and t.kind == "open"}
        closed = {t.id for t in outside if isinstance(t, Code) and t.kind == "close"}
        cut_lead = next(
            (
                i
                for i, t in enumerate(tokens[:lead_end])
                if isinstance(t, Code) and t.kind == "open" and t.id not in closed
            ),
            lead_end,
        )
        cut_trail = max(
            (
                trail_start + i + 1
                for i, t in enumerate(tokens[trail_start:])
                if isinstance(t, Code) and t.kind == "close" and t.id not in opened
            ),
            default=trail_start,
        )
        if (cut_lead, cut_trail) == (lead_end, trail_start):
            break
        lead_end, trail_start = cut_lead, cut_trail
    return (
        Marked.of(tokens[:lead_end]),
        Marked.of(tokens[lead_end:trail_start]),
        Marked.of(tokens[trail_start:]),
    )


def _words(text: str) -> list[tuple[int, int]]:
    return [m.span() for m in re.finditer(r"\S+", text)]


def project(core: Marked, translated: str) -> Marked:
    """Puts the codes of ``core`` into its plain translation, in their source order, each at
    the word boundary nearest its proportional place. Order kept means nesting kept: the
    result has exactly the source's codes, well formed."""
    source = core.plain
    out_words = _words(translated)
    spots: list[tuple[int, Code]] = []
    offset = 0
    for token in core.tokens:
        if isinstance(token, str):
            offset += len(token)
            continue
        spots.append((offset, token))
    if not spots:
        return Marked.of([translated])
    boundaries = sorted({0, len(translated), *(b for span in out_words for b in span)})
    placed: list[tuple[int, Code]] = []
    floor = 0
    for src_offset, code in spots:
        if src_offset == 0:
            at = 0
        elif src_offset >= len(source):
            at = len(translated)
        else:
            want = src_offset / len(source) * len(translated)
            at = min(boundaries, key=lambda b: (abs(b - want), b))
            if code.kind == "open":
                at = _start_of_word(translated, at)
            elif code.kind == "close":
                at = _end_of_word(translated, at)
        at = max(at, floor)  # monotonic: the source's order, hence its nesting
        floor = at
        placed.append((at, code))
    tokens: list[Token] = []
    pos = 0
    for at, code in placed:
        tokens.append(translated[pos:at])
        tokens.append(code)
        pos = at
    tokens.append(translated[pos:])
    return Marked.of(tokens)


def _start_of_word(text: str, at: int) -> int:
    while at < len(text) and text[at].isspace():
        at += 1
    return at if at < len(text) else len(text.rstrip())


def _end_of_word(text: str, at: int) -> int:
    while at > 0 and text[at - 1].isspace():
        at -= 1
    return at
