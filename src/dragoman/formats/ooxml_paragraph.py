"""One OOXML paragraph (WordprocessingML ``w:p``, DrawingML ``a:p``) as a unit, and back.

A paragraph's text lives in runs, each with its own run properties (``rPr``). Runs whose
properties are equal once noise is ignored (``w:rsid*`` revision marks; DrawingML's
``lang``, ``altLang``, ``dirty``, ``err``, ``smtClean``, ``smtId``) are one stretch of
text: Word splits a sentence into many runs as it is edited, and the engine should see the
sentence, not the edits. The properties covering most of the text are the paragraph's base
and need no code; every stretch with other properties is a paired code whose native is its
first run (its attributes and ``rPr``). Containers of runs (``w:hyperlink``, ``w:ins``,
``w:smartTag``, ``w:sdt`` …) are paired codes too, their shell kept. Anything else inside a
run (tabs, breaks, drawings, field characters and instructions, note references) or
between runs (bookmarks, comment ranges, fields, math, deleted text) is a standalone code
standing for the element itself, which is moved, not copied, so paragraphs nested in it
(text boxes) stay units of their own. Spell-check marks (``w:proofErr``) and
``w:lastRenderedPageBreak`` are layout caches Word rebuilds; a rewritten paragraph drops
them. Paragraph properties, and DrawingML's ``a:endParaRPr``, are kept where they are.

A paragraph is rewritten from its translated tokens: text outside any run code takes the
base run's properties, text inside takes those of the innermost one.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from copy import deepcopy
from dataclasses import dataclass, field
from typing import Any

from lxml import etree

from dragoman.formats.markup import Builder, Code, Marked, walk

XML_SPACE = "{http://www.w3.org/XML/1998/namespace}space"


@dataclass(frozen=True, slots=True)
class Dialect:
    ns: str
    head: frozenset[str]  # kept first in the paragraph
    tail: frozenset[str]  # kept last
    containers: frozenset[str]  # hold runs: a paired code each
    dropped: frozenset[str]
    noise: frozenset[str]  # attribute local names ignored when comparing properties
    noise_prefix: str = "\0"
    preserve_space: bool = False  # xml:space="preserve" on text with outer spaces

    def q(self, local: str) -> str:
        return f"{{{self.ns}}}{local}"


@dataclass(frozen=True, slots=True)
class RunStyle:
    """A run's shell: its attributes and properties."""

    run: Any
    sig: bytes


@dataclass(frozen=True, slots=True)
class RunPiece:
    """Content of a run that is not text (a tab, a drawing), with the run it sat in."""

    style: RunStyle
    element: Any


@dataclass(frozen=True, slots=True)
class Loose:
    """An element between runs (a bookmark, a field), written back as it was."""

    element: Any


@dataclass(frozen=True, slots=True)
class Container:
    element: Any


@dataclass(slots=True)
class _Run:
    style: RunStyle
    key: bytes
    content: list[Any] = field(default_factory=list)  # str or element

    def chars(self) -> int:
        return sum(len(c) for c in self.content if isinstance(c, str))


_Item = _Run | Loose | tuple[Container, list[Any]]


def local(element: Any) -> str:
    tag = element.tag
    return etree.QName(tag).localname if isinstance(tag, str) else ""


class Paragraphs:
    def __init__(self, dialect: Dialect) -> None:
        self.d = dialect

    # reading

    def extract(self, p: Any) -> tuple[Marked, dict[int, Any], RunStyle | None]:
        """The unit, what its codes stand for, and the base run."""
        items = self._items(self._content(p))
        weights: Counter[bytes] = Counter()
        first: dict[bytes, RunStyle] = {}
        for run in _runs(items):
            weights[run.key] += run.chars()
            first.setdefault(run.key, run.style)
        base = max(weights, key=lambda k: weights[k]) if weights else b""
        builder = Builder()
        self._emit(items, base, builder)
        return builder.build(), builder.natives, first.get(base)

    def _content(self, parent: Any) -> list[Any]:
        return [c for c in parent if local(c) not in self.d.head | self.d.tail]

    def _items(self, children: Iterable[Any]) -> list[_Item]:
        items: list[_Item] = []
        for child in children:
            name = local(child)
            if child.tag == self.d.q("r"):
                items.append(self._run(child))
            elif child.tag == self.d.q("sdt"):
                content = child.find(self.d.q("sdtContent"))
                inner = [] if content is None else list(content)
                items.append((Container(child), self._items(inner)))
            elif name in self.d.containers and child.tag.startswith(f"{{{self.d.ns}}}"):
                inner = [c for c in child if not local(c).endswith("Pr")]
                items.append((Container(child), self._items(inner)))
            elif name not in self.d.dropped:
                items.append(Loose(child))
        return items

    def _run(self, run: Any) -> _Run:
        props = run.find(self.d.q("rPr"))
        shell = etree.Element(run.tag, dict(run.attrib))
        if props is not None:
            shell.append(deepcopy(props))
        style = RunStyle(shell, etree.tostring(shell, method="c14n"))
        out = _Run(style, self._key(props))
        for child in run:
            if child.tag == self.d.q("t"):
                out.content.append(child.text or "")
            elif child is not props and local(child) not in self.d.dropped:
                out.content.append(child)
        return out

    def _key(self, props: Any) -> bytes:
        if props is None:
            return b""
        clean = deepcopy(props)
        for node in clean.iter():
            for name in list(node.attrib):
                bare = etree.QName(name).localname
                if bare in self.d.noise or bare.startswith(self.d.noise_prefix):
                    del node.attrib[name]
        if not len(clean) and not clean.attrib:
            return b""
        key: bytes = etree.tostring(clean, method="c14n")
        return key

    def _emit(self, items: list[_Item], base: bytes, b: Builder) -> None:
        for group in _groups(items):
            if isinstance(group, Loose):
                b.ph(group)
            elif isinstance(group, tuple):
                b.open(group[0])
                self._emit(group[1], base, b)
                b.close()
            else:
                coded = group[0].key != base and any(r.chars() for r in group)
                if coded:
                    b.open(group[0].style)
                _emit_runs(group, b)
                if coded:
                    b.close()

    # writing

    def write(self, p: Any, marked: Marked, natives: dict[int, Any], base: RunStyle) -> None:
        head = [c for c in p if local(c) in self.d.head]
        tail = [c for c in p if local(c) in self.d.tail]
        for child in list(p):
            p.remove(child)
        p.text = None
        p.extend(head)
        _Writer(self.d, p, natives, base).write(marked)
        p.extend(tail)


def _emit_runs(group: list[_Run], b: Builder) -> None:
    # Text is passed on in whole stretches, so a placeholder or a URL that Word split over
    # runs is still found.
    pending: list[str] = []
    for run in group:
        for piece in run.content:
            if isinstance(piece, str):
                pending.append(piece)
                continue
            b.text("".join(pending))
            pending.clear()
            b.ph(RunPiece(run.style, piece))
    b.text("".join(pending))


def _runs(items: list[_Item]) -> Iterable[_Run]:
    for item in items:
        if isinstance(item, _Run):
            yield item
        elif isinstance(item, tuple):
            yield from _runs(item[1])


def _groups(items: list[_Item]) -> Iterable[Loose | tuple[Container, list[Any]] | list[_Run]]:
    group: list[_Run] = []
    for item in items:
        if isinstance(item, _Run) and (not group or group[0].key == item.key):
            group.append(item)
            continue
        if group:
            yield group
            group = []
        if isinstance(item, _Run):
            group = [item]
        else:
            yield item
    if group:
        yield group


class _Writer:
    def __init__(self, dialect: Dialect, p: Any, natives: dict[int, Any], base: RunStyle) -> None:
        self.d = dialect
        self.natives = natives
        self.base = base
        self.parents: list[Any] = [p]
        self.pushed: list[int] = []
        self.last: tuple[Any, RunStyle] | None = None

    def write(self, marked: Marked) -> None:
        for token, stack in walk(marked):
            styles = [self.natives[i] for i in stack if isinstance(self.natives[i], RunStyle)]
            style: RunStyle = styles[-1] if styles else self.base
            if isinstance(token, str):
                self._text(token, style)
            elif token.kind == "ph":
                self._ph(self.natives[token.id], style)
            else:
                self._code(token)

    def _code(self, token: Code) -> None:
        native = self.natives[token.id]
        if not isinstance(native, Container):
            return
        if token.kind == "close":
            if self.pushed and self.pushed[-1] == token.id:
                self.pushed.pop()
                self.parents.pop()
            return
        self.parents.append(self._shell(native.element))
        self.pushed.append(token.id)

    def _shell(self, element: Any) -> Any:
        shell = etree.SubElement(self.parents[-1], element.tag, dict(element.attrib))
        holder = shell
        for child in element:
            if local(child).endswith("Pr"):
                shell.append(deepcopy(child))
            elif child.tag == self.d.q("sdtContent"):
                holder = etree.SubElement(shell, child.tag, dict(child.attrib))
        return holder

    def _ph(self, native: Any, style: RunStyle) -> None:
        if isinstance(native, str):
            self._text(native, style)
        elif isinstance(native, RunPiece):
            native.element.tail = None
            self._run(native.style, same_run=True).append(native.element)
        else:
            native.element.tail = None
            self.parents[-1].append(native.element)

    def _text(self, text: str, style: RunStyle) -> None:
        run = self._run(style)
        t = run[-1] if len(run) and run[-1].tag == self.d.q("t") else None
        if t is None:
            t = etree.SubElement(run, self.d.q("t"))
        t.text = (t.text or "") + text
        if self.d.preserve_space and t.text != t.text.strip():
            t.set(XML_SPACE, "preserve")

    def _run(self, style: RunStyle, *, same_run: bool = False) -> Any:
        """The run to write into: the last one written when it has these properties (and,
        for what is not text, came from the same source run), else a new one."""
        parent = self.parents[-1]
        if self.last and len(parent) and parent[-1] is self.last[0]:
            last = self.last[1]
            if last is style or (not same_run and last.sig == style.sig):
                return self.last[0]
        run = etree.SubElement(parent, style.run.tag, dict(style.run.attrib))
        for child in style.run:
            run.append(deepcopy(child))
        self.last = (run, style)
        return run
