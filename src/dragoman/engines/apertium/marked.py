"""Inline codes through Apertium: paired codes ride as word-bound blanks, standalone codes
as superblanks, so a tag stays on its word when transfer reorders words.

``Hello <g1>big</g1> world.`` goes in as ``Hello [[t:1]]big[[/]] world.[]`` and comes back
as ``Hola Mundo [[t:1]]grande[[/]].[]``: the bold is on *grande*. Plain superblanks (what a
deformatter makes of ``<b>``) would stay between the same word slots and bold *Mundo*.
A pair with no word inside rides as a superblank, like a standalone code.
"""

from __future__ import annotations

import re

from dragoman.engines.apertium.stream import _PARAGRAPH, _SENTENCE_END, _blank, _escape
from dragoman.formats.markup import Code, Marked, Token, project, same_codes, walk

_BLANK = re.compile(r"[ \t\n\r~]+")
_OUT = re.compile(
    r"\[\[((?:[^\]\\]|\\.)*)\]\]((?:[^\[\\]|\\.)*)\[\[/\]\]"  # word-bound blank
    r"|\.\[\](?=\[|$)"  # the sentence end added on the way in
    r"|\[((?:[^\]\\]|\\.)*)\]"  # superblank
    r"|\\(.)",  # escaped character
    re.DOTALL,
)
_CODE = re.compile(r"(ph|e):(\d+)((?:,\d+)*)")
_WORDY = re.compile(r"[^ \t\n\r~]")
_UNESCAPE = re.compile(r"\\(.)", re.DOTALL)


def _empty_pairs(core: Marked) -> set[int]:
    """Pairs with no word inside them."""
    inside: dict[int, bool] = {}
    for token, stack in walk(core):
        if isinstance(token, Code) and token.kind == "open":
            inside[token.id] = False
        elif isinstance(token, str) and _WORDY.search(token):
            for code_id in stack:
                inside[code_id] = True
    return {code_id for code_id, has in inside.items() if not has}


def splits_a_word(core: Marked) -> bool:
    """Whether a code sits inside a word (``un<b>believ</b>able``): Apertium would take the
    pieces for words of their own, so such a segment goes as plain text instead."""
    tokens = core.tokens
    for i, token in enumerate(tokens):
        if not isinstance(token, Code) or token.kind == "ph":  # a superblank parts words
            continue
        before = next((t for t in reversed(tokens[:i]) if isinstance(t, str)), "")
        after = next((t for t in tokens[i + 1 :] if isinstance(t, str)), "")
        if before[-1:].isalnum() and after[:1].isalnum():
            return True
    return False


def to_stream(core: Marked) -> str:
    """The stream for one segment's core (no outer whitespace). A standalone code carries
    the pairs around it (``[ph:2,1]``), so that it can come back inside them."""
    empty = _empty_pairs(core)
    out: list[str] = []
    for token, stack in walk(core):
        if isinstance(token, Code):
            around = "".join(f",{i}" for i in stack if i not in empty)
            if token.kind == "ph":
                out.append(f"[ph:{token.id}{around}]")
            elif token.kind == "open" and token.id in empty:
                out.append(f"[e:{token.id}{around}]")
            continue
        ids = "; ".join(f"t:{i}" for i in stack if i not in empty)
        pos = 0
        for match in _BLANK.finditer(token):
            out.append(_word(token[pos : match.start()], ids))
            run = match.group()
            if _PARAGRAPH.search(run):
                out.append(_SENTENCE_END)
            out.append(_blank(run))
            pos = match.end()
        out.append(_word(token[pos:], ids))
    out.append(_SENTENCE_END)
    return "".join(out)


def _word(text: str, ids: str) -> str:
    if not text:
        return ""
    return f"[[{ids}]]{_escape(text)}[[/]]" if ids else _escape(text)


def from_stream(stream: str, core: Marked) -> Marked:
    """The translated core, codes where the words took them; when Apertium lost or split a
    code beyond repair, the codes are put back in proportion instead."""
    pieces: list[tuple[str, tuple[int, ...]] | tuple[Code, tuple[int, ...]]] = []
    pos = 0
    for match in _OUT.finditer(stream):
        if match.start() > pos:
            pieces.append((stream[pos : match.start()], ()))
        pos = match.end()
        ids, word, blank, escaped = match.groups()
        if word is not None:
            owners = tuple(int(i) for i in re.findall(r"t:(\d+)", ids))
            pieces.append((_UNESCAPE.sub(r"\1", word), owners))
        elif escaped is not None:
            pieces.append((escaped, ()))
        elif blank is not None:
            code = _CODE.fullmatch(blank)
            if code is None:
                pieces.append((_UNESCAPE.sub(r"\1", blank), ()))
                continue
            kind, code_id = code.group(1), int(code.group(2))
            around = tuple(int(i) for i in code.group(3).split(",")[1:])
            if kind == "ph":
                pieces.append((Code("ph", code_id), around))
            else:
                pieces += [(Code("open", code_id), around), (Code("close", code_id), around)]
    if pos < len(stream):
        pieces.append((stream[pos:], ()))
    result = _rebuild(pieces)
    if same_codes(core, result):
        return result
    return project(core, result.plain)


def _rebuild(pieces: list[tuple[str, tuple[int, ...]] | tuple[Code, tuple[int, ...]]]) -> Marked:
    """Tokens from words and codes with the pairs they belong to. Blanks between two of
    them belong to the pairs both are in: a span over several words comes back as one
    word-bound blank per word."""
    anchors = [i for i, (p, _) in enumerate(pieces) if isinstance(p, Code) or _WORDY.search(p)]
    owners: list[tuple[int, ...]] = []
    for i, (_, ids) in enumerate(pieces):
        if i in anchors:
            owners.append(ids)
            continue
        before = next((pieces[j][1] for j in reversed(anchors) if j < i), None)
        after = next((pieces[j][1] for j in anchors if j > i), None)
        if before is not None and after is not None:
            owners.append(_common_prefix(before, after))
        else:
            owners.append(())
    tokens: list[Token] = []
    stack: list[int] = []
    for (piece, _), ids in zip(pieces, owners, strict=True):
        keep = len(_common_prefix(tuple(stack), ids))
        while len(stack) > keep:
            tokens.append(Code("close", stack.pop()))
        for code_id in ids[keep:]:
            tokens.append(Code("open", code_id))
            stack.append(code_id)
        tokens.append(piece)
    while stack:
        tokens.append(Code("close", stack.pop()))
    return Marked.of(tokens)


def _common_prefix(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...]:
    out: list[int] = []
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        out.append(x)
    return tuple(out)
