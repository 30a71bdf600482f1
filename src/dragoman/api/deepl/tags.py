"""DeepL's tag handling, on dragoman's markup path (the HTML format of file jobs).

``tag_handling=html`` is that path as it is: HTML's blocks split the text, its inline
elements travel with their words. Any other element name is a block there, so an XML
placeholder (Weblate's ``<x id="1"/>``, XLIFF's ``<g>``) would cut its sentence in two. An
``xml`` text is therefore rewritten first into HTML the path keeps inside the sentence: each
element becomes an inline ``<span>``, each empty one (and a comment, a CDATA section, a
processing instruction) a standalone ``<br>``, numbered in order; after translation the
numbers give the source's own tags back, byte for byte. The path keeps every translated
sentence's codes well nested and in their source order, so each ``</span>`` closes the
innermost element still open. Elements named in ``splitting_tags`` become blocks (``<p>``,
``<hr>``) instead, so sentences end there.

``ignore_tags``, in either mode, mark their elements ``translate="no"``: kept, content and
all, where they stood.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass

_XML = re.compile(
    r"<!--.*?-->|<!\[CDATA\[.*?\]\]>|<\?.*?\?>|<![^>]*>"
    r"|<(/?)([A-Za-z_][\w.:-]*)((?:\s+[^\s=/>]+\s*=\s*(?:\"[^\"]*\"|'[^']*'))*)\s*(/?)>",
    re.DOTALL,
)
_MARKER = re.compile(r'<(?:span|p|br|hr) data-dm="(\d+)"[^>]*>|</span>|</p>')
_IGNORED = ' translate="no" data-dragoman-ignored=""'


@dataclass(frozen=True, slots=True)
class Rewritten:
    html: str
    natives: tuple[str, ...]  # marker number -> the source's tag
    closes: tuple[str, ...]  # marker number of an element -> its closing tag ("" if none)


def rewrite_xml(text: str, *, ignore: Collection[str], splitting: Collection[str]) -> Rewritten:
    """``text`` with every XML tag replaced by a numbered HTML marker."""
    pieces: list[str] = []
    natives: list[str] = []
    closes: list[str] = []
    opened: list[tuple[int, int, str]] = []  # marker, index in pieces, name
    end = 0
    for match in _XML.finditer(text):
        pieces.append(text[end : match.start()])
        end = match.end()
        slash, name, _, empty = match.groups()
        splits = name is not None and name in splitting
        if slash and name is not None and opened and opened[-1][2] == name:
            closes[opened.pop()[0]] = match.group()
            pieces.append("</p>" if splits else "</span>")
            continue
        n = len(natives)
        natives.append(match.group())
        closes.append("")
        if name is None or empty or slash:  # a stray closing tag is standalone too
            pieces.append(_standalone(n, splits))
        else:
            opened.append((n, len(pieces), name))
            pieces.append(_opening(n, name, ignore=ignore, splitting=splitting))
    for n, at, name in opened:  # never closed: a standalone tag after all
        pieces[at] = _standalone(n, name in splitting)
    pieces.append(text[end:])
    return Rewritten("".join(pieces), tuple(natives), tuple(closes))


def _standalone(n: int, splitting: bool) -> str:
    return f'<{"hr" if splitting else "br"} data-dm="{n}">'


def _opening(n: int, name: str, *, ignore: Collection[str], splitting: Collection[str]) -> str:
    tag = "p" if name in splitting else "span"
    extra = ' translate="no"' if name in ignore else ""
    return f'<{tag} data-dm="{n}"{extra}>'


def restore_xml(translated: str, rewritten: Rewritten) -> str | None:
    """The source's tags in place of the markers; None if the markers do not pair up."""
    out: list[str] = []
    stack: list[int] = []
    end = 0
    for match in _MARKER.finditer(translated):
        out.append(translated[end : match.start()])
        end = match.end()
        number = match.group(1)
        if number is None:  # a closing marker
            if not stack:
                return None
            out.append(rewritten.closes[stack.pop()])
            continue
        n = int(number)
        if n >= len(rewritten.natives):
            return None
        out.append(rewritten.natives[n])
        if match.group().startswith(("<span", "<p")):
            stack.append(n)
    out.append(translated[end:])
    return None if stack else "".join(out)


def mark_ignored(html: str, ignore: Collection[str]) -> str:
    """The start tags of ``ignore`` marked ``translate="no"`` (the markup path keeps them)."""
    if not ignore:
        return html
    names = "|".join(re.escape(name) for name in ignore)
    return re.sub(rf"<({names})(?=[\s/>])", rf"<\1{_IGNORED}", html, flags=re.IGNORECASE)


def unmark_ignored(html: str) -> str:
    return html.replace(_IGNORED, "")
