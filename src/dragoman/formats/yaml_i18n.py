"""YAML translation files: Rails (``en:`` at the root), Symfony, and other key → string trees.

What is translated: every string scalar that is a mapping value or a sequence item, at
any depth, in document order, in every document of the file. Keys are never translated,
nor anything under a key; nor numbers, booleans, null, dates or any scalar whose
resolved tag is not ``!!str`` (``!!int 5``, a custom ``!tag``); an anchored string is one
unit, and its aliases follow it. A literal block (``|``) is one unit whose line breaks
are codes (each standing for the break and the next line's indentation); a folded block
(``>``) is one unit of its folded text.

Placeholders are protected: Rails ``%{name}`` and ``%<name>s``, Symfony ``%name%``,
i18next ``{{name}}``, ICU arguments, printf, URLs and e-mail addresses.

The root language key: when a document is a mapping with a single key that is a language
code (``en``, ``pt-BR``, ``zh_CN``, ``fil-PH``), as Rails bundles are, that key is written
as the target language, so the file loads as that language's bundle. A bare three-letter
key (``app``, ``api``: ISO 639-3 codes as well as words) is kept.

What is written: the original text, with only each changed scalar's span replaced, in
the source's style (see ``yaml_scalars``); comments, anchors, tags, key order,
indentation and every untouched scalar stay byte for byte. The output is read back and
compared with what was meant: a scalar that does not read back as written (a translation
a block's chomping cannot end, say) is written double-quoted instead, and should the file
still not read back, every changed scalar is. Non-ASCII text is written as ``\\uXXXX``
escapes (in double quotes) where the source scalar used such escapes, or where the file
wrote all of its non-ASCII text that way; block scalars, which have no escapes, excepted.
Line breaks written into a block are the block's own (``\\r\\n`` stays ``\\r\\n``).

Refused: malformed YAML (with its line), a scalar at the top level, more than
``MAX_ALIASES`` aliases, aliases that expanded would add more than ``MAX_EXPANSION`` nodes
(a "billion laughs" file; nothing is ever expanded), an alias inside what it refers to,
and Python-specific tags. Aliases of mappings within bounds (``<<: *defaults``) are kept.
Nothing is constructed, so no tag runs code.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import langcodes
import yaml

from dragoman.errors import InvalidFile
from dragoman.formats import yaml_scalars as styles
from dragoman.formats.markup import PLACEHOLDER, Builder, Marked, translated_units
from dragoman.formats.safety import decode_text, line_of

MAX_ALIASES = 1_000
MAX_EXPANSION = 100_000  # nodes that aliases add, expanded
_STR = "tag:yaml.org,2002:str"
_NULL = "tag:yaml.org,2002:null"
_PROTECTED = re.compile(
    r"%\{[^{}\n]{1,80}\}|%<[^<>\n]{1,80}>[-+ #0]*\d*(?:\.\d+)?[a-zA-Z]"
    r"|%[A-Za-z_][\w.-]{1,80}%|" + PLACEHOLDER.pattern
)
# A bare three-letter key is no language code here: ``app`` and ``api`` are ISO 639-3 codes.
_LANGUAGE = re.compile(r"[a-z]{2}(?:[-_][A-Za-z0-9]{2,8})*|[a-z]{3}(?:[-_][A-Za-z0-9]{2,8})+")


# The entries written double-quoted whatever their style; None: all of them.
_Quoted = set[int] | None


class _Refused(Exception):
    pass


class _Loader(yaml.SafeLoader):
    """Composes the node tree only, noting where each scalar token starts (a node's own
    mark starts at its anchor or tag) and counting aliases."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.token_starts: dict[int, int] = {}
        self.aliases = 0

    def get_token(self) -> Any:
        scan: Callable[[], Any] = super().get_token
        token = scan()
        if isinstance(token, yaml.ScalarToken):
            self.token_starts[token.end_mark.index] = token.start_mark.index
        return token

    def compose_node(self, parent: yaml.Node | None, index: Any) -> yaml.Node | None:
        if self.check_event(yaml.AliasEvent):
            self.aliases += 1
            if self.aliases > MAX_ALIASES:
                raise _Refused(f"more than {MAX_ALIASES} aliases")
        return super().compose_node(parent, index)


@dataclass(frozen=True, slots=True)
class _Scalar:
    entry: int  # its place in the tree's walk
    start: int  # the token: the quote, the block indicator, the first character
    end: int
    node: yaml.ScalarNode
    flow: bool


@dataclass(frozen=True, slots=True)
class _Unit:
    scalar: _Scalar
    marked: Marked
    natives: dict[int, Any]
    shape: styles.Block | None  # a block scalar's content, when its style can be kept


@dataclass(slots=True)
class _Tree:
    text: str
    starts: dict[int, int]
    entries: list[tuple[Any, ...]] = field(default_factory=list)  # what must read back
    values: list[_Scalar] = field(default_factory=list)
    roots: list[_Scalar] = field(default_factory=list)
    seen: set[int] = field(default_factory=set)

    def scalar(self, node: yaml.ScalarNode, flow: bool, entry: int) -> _Scalar | None:
        start = self.starts.get(node.end_mark.index, -1)
        if not node.start_mark.index <= start < node.end_mark.index:
            return None
        return _Scalar(entry, start, node.end_mark.index, node, flow)

    def walk(self, node: yaml.Node, role: str, flow: bool = False) -> None:
        if id(node) in self.seen:
            self.entries.append(("alias",))
            return
        self.seen.add(id(node))
        if node.tag.startswith("tag:yaml.org,2002:python/"):
            raise _Refused(f"line {node.start_mark.line + 1}: Python-specific tag {node.tag}")
        flow = flow or bool(getattr(node, "flow_style", False))
        if isinstance(node, yaml.MappingNode):
            self.entries.append(("map", node.tag, len(node.value)))
            for key, value in node.value:
                self.walk(key, "key", flow)
                self.walk(value, role if role == "key" else "value", flow)
        elif isinstance(node, yaml.SequenceNode):
            self.entries.append(("seq", node.tag, len(node.value)))
            for item in node.value:
                self.walk(item, role if role == "key" else "value", flow)
        elif isinstance(node, yaml.ScalarNode):
            self.entries.append((role, node.tag, node.value))
            found = self.scalar(node, flow, len(self.entries) - 1)
            if role == "value" and node.tag == _STR and found is not None:
                self.values.append(found)


def _expansion(node: yaml.Node, sizes: dict[int, int], active: set[int]) -> int:
    """How many nodes the tree under ``node`` would have with every alias expanded; each
    node is counted once, so this takes no longer than the tree is long."""
    if id(node) in sizes:
        return sizes[id(node)]
    if id(node) in active:
        raise _Refused(f"line {node.start_mark.line + 1}: an alias refers to itself")
    active.add(id(node))
    children: list[yaml.Node] = []
    if isinstance(node, yaml.MappingNode):
        children = [n for pair in node.value for n in pair]
    elif isinstance(node, yaml.SequenceNode):
        children = list(node.value)
    sizes[id(node)] = 1 + sum(_expansion(child, sizes, active) for child in children)
    active.discard(id(node))
    return sizes[id(node)]


def _tree(text: str, filename: str) -> _Tree:
    loader = _Loader(text)
    try:
        documents: list[yaml.Node] = []
        while loader.check_node():
            node = loader.get_node()
            if node is not None:
                documents.append(node)
    finally:
        loader.dispose()
    sizes: dict[int, int] = {}
    expanded = sum(_expansion(root, sizes, set()) for root in documents)
    if expanded - len(sizes) > MAX_EXPANSION:
        raise _Refused(f"aliases that would expand to more than {MAX_EXPANSION} more nodes")
    tree = _Tree(text, loader.token_starts)
    for root in documents:
        _document(tree, root, filename)
    return tree


def _compose(text: str, filename: str) -> _Tree:
    try:
        return _tree(text, filename)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        raise InvalidFile(f"{filename}: malformed YAML{where}: {exc.problem}") from None
    except yaml.reader.ReaderError as exc:
        line = line_of(text, exc.position)
        raise InvalidFile(
            f"{filename}: line {line}: character U+{exc.character:04X} is not allowed in YAML"
        ) from None
    except yaml.YAMLError as exc:
        raise InvalidFile(f"{filename}: malformed YAML: {exc}") from None
    except _Refused as exc:
        raise InvalidFile(f"{filename}: refused: {exc}") from None
    except RecursionError:
        raise InvalidFile(f"{filename}: YAML nested too deeply") from None


def _is_language(key: str) -> bool:
    return bool(_LANGUAGE.fullmatch(key)) and bool(langcodes.tag_is_valid(key.replace("_", "-")))


def _document(tree: _Tree, root: yaml.Node, filename: str) -> None:
    if isinstance(root, yaml.ScalarNode) and root.tag != _NULL:
        raise InvalidFile(
            f"{filename}: line {root.start_mark.line + 1}: the top level must be a mapping "
            "or a sequence"
        )
    first = len(tree.entries)
    tree.walk(root, "value")
    if not isinstance(root, yaml.MappingNode) or len(root.value) != 1:
        return
    key = root.value[0][0]
    if not isinstance(key, yaml.ScalarNode) or tree.entries[first + 1][0] != "key":
        return
    if key.tag != _STR or key.style in ("|", ">"):
        return
    found = tree.scalar(key, bool(root.flow_style), first + 1)
    if found is not None and _is_language(key.value):
        tree.roots.append(found)


@dataclass(frozen=True, slots=True)
class _Source:
    tree: _Tree
    encoding: str
    units: list[_Unit]
    ascii_file: bool  # it writes all of its non-ASCII text as escapes


def _read(data: bytes, filename: str) -> _Source:
    text, encoding = decode_text(data, filename)
    tree = _compose(text, filename)
    ascii_file = styles.escapes_non_ascii(text) and text.isascii()
    return _Source(tree, encoding, [_unit(text, s) for s in tree.values], ascii_file)


def _protect(builder: Builder, text: str) -> None:
    pos = 0
    for match in _PROTECTED.finditer(text):
        builder.text(text[pos : match.start()])
        builder.ph(match.group())
        pos = match.end()
    builder.text(text[pos:])


def _unit(text: str, scalar: _Scalar) -> _Unit:
    node = scalar.node
    shape = None
    if node.style in ("|", ">"):
        shape = styles.block(text, scalar.start, scalar.end, node.style == ">", node.value)
    builder = Builder(protect=False)
    if shape is not None and not shape.folded:
        for line in shape.lines:
            if isinstance(line, styles.Break):
                builder.ph(line)
            else:
                _protect(builder, line)
    else:
        _protect(builder, shape.core if shape else node.value)
    return _Unit(scalar, builder.build(), builder.natives, shape)


@dataclass(frozen=True, slots=True)
class _Edit:
    start: int
    end: int
    source: str
    entry: int
    meant: tuple[Any, ...]  # the entry it must read back as


def _edit(source: _Source, unit: _Unit, marked: Marked, quoted: _Quoted) -> _Edit | None:
    scalar, shape = unit.scalar, unit.shape
    quote = quoted is None or scalar.entry in quoted
    parts = [t if isinstance(t, str) else unit.natives[t.id] for t in marked.tokens]
    if shape is not None and not quote and styles.block_ok(marked.plain):
        if shape.folded:
            body, core = styles.folded(shape, "".join(map(str, parts)))
        else:
            body, core = styles.literal(shape, parts)
        value = shape.lead + core + shape.tail
        start, end = shape.start, shape.end
    else:
        core = styles.literal_value(parts)
        value = shape.lead + core + shape.tail if shape else core
        raw = source.tree.text[scalar.start : scalar.end]
        start, end = scalar.start, scalar.start + len(raw.rstrip())
        own = scalar.node.style == '"' and styles.escapes_non_ascii(raw)
        style, ascii_only = scalar.node.style, source.ascii_file or own
        body = styles.inline(value, style, scalar.flow, ascii_only, quote or shape is not None)
    if value == scalar.node.value:
        return None
    return _Edit(start, end, body, scalar.entry, ("value", _STR, value))


def _renames(source: _Source, target_lang: str, quoted: _Quoted) -> list[_Edit]:
    edits: list[_Edit] = []
    for key in source.tree.roots:
        if key.node.value != target_lang:
            quote = quoted is None or key.entry in quoted
            body = styles.inline(target_lang, key.node.style, key.flow, source.ascii_file, quote)
            edits.append(_Edit(key.start, key.end, body, key.entry, ("key", _STR, target_lang)))
    return edits


def _splice(text: str, edits: list[_Edit]) -> str:
    pieces: list[str] = []
    pos = 0
    for edit in sorted(edits, key=lambda e: e.start):
        pieces += [text[pos : edit.start], edit.source]
        pos = edit.end
    return "".join([*pieces, text[pos:]])


def _misread(text: str, meant: list[tuple[Any, ...]], filename: str) -> _Quoted:
    """The entries of ``text`` that do not read back as meant; None when the whole text
    does not (it is no YAML, or not of the same shape)."""
    try:
        entries = _compose(text, filename).entries
    except InvalidFile:
        return None
    if len(entries) != len(meant):
        return None
    return {i for i, (got, want) in enumerate(zip(entries, meant, strict=True)) if got != want}


def _encode(text: str, data: bytes, encoding: str) -> bytes:
    if encoding != "utf-16":
        return text.encode(encoding)
    big_endian = data.startswith(b"\xfe\xff")
    return data[:2] + text.encode("utf-16-be" if big_endian else "utf-16-le")


class YamlFormat:
    name: str = "yaml"
    extensions: tuple[str, ...] = (".yml", ".yaml")
    media_type: str = "application/yaml"

    def extract(self, data: bytes, *, filename: str) -> list[Marked]:
        return [unit.marked for unit in _read(data, filename).units]

    def merge(
        self, data: bytes, units: Sequence[Marked | None], *, filename: str, target_lang: str
    ) -> bytes:
        source = _read(data, filename)
        chosen = translated_units(source.units, units, filename)
        quoted: _Quoted = set()
        while True:
            edits = [
                edit
                for unit, marked in chosen
                if (edit := _edit(source, unit, marked, quoted)) is not None
            ]
            edits += _renames(source, target_lang, quoted)
            if not edits:
                return data
            meant = list(source.tree.entries)
            for edit in edits:
                meant[edit.entry] = edit.meant
            text = _splice(source.tree.text, edits)
            misread = _misread(text, meant, filename)
            if misread == set():
                return _encode(text, data, source.encoding)
            if quoted is None:
                raise InvalidFile(f"{filename}: the translation cannot be written back as YAML")
            quoted = None if misread is None or quoted else misread


FORMAT = YamlFormat()
