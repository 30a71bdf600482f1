"""HTML as a flat list of events, each with the exact span of source text it covers.

``html.parser`` does the tokenizing (quoted attributes holding ``>``, comments, CDATA,
doctype, the raw text of ``<script>`` and ``<style>``); its positions give each event's
start, and the next event's start its end, so the events tile the whole text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from html.parser import HTMLParser

from dragoman.errors import InvalidFile


@dataclass(frozen=True, slots=True)
class Span:
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class Event:
    kind: str  # start, startend, end, data, reference, comment, other
    tag: str
    span: Span
    data: str = ""
    attrs: dict[str, str | None] = field(default_factory=dict)
    values: dict[str, tuple[Span, str]] = field(default_factory=dict)  # name -> value, quote


_TAG_START = re.compile(r"[a-zA-Z/!?]")  # after a "<" the parser left as text: an unfinished tag
_NAME = re.compile(r"<[^\s/>]+")
_ATTRIBUTE = re.compile(r"""([^\s/>"'=][^\s/>=]*)(?:\s*=\s*("[^"]*"|'[^']*'|[^\s>]*))?""")


def _values(raw: str, offset: int) -> dict[str, tuple[Span, str]]:
    """Each attribute's value span (without quotes) and quote, from a start tag's text."""
    values: dict[str, tuple[Span, str]] = {}
    head = _NAME.match(raw)
    for match in _ATTRIBUTE.finditer(raw, head.end() if head else 0):
        name, value = match.group(1).lower(), match.group(2)
        if value is None or name in values:
            continue
        start, end = match.span(2)
        quote = value[0] if value[:1] in ('"', "'") else ""
        if quote:
            start, end = start + 1, end - 1
        values[name] = (Span(offset + start, offset + end), quote)
    return values


class _Parser(HTMLParser):
    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=False)
        self.line_starts = [0] + [m.end() for m in re.finditer("\n", text)]
        self.found: list[tuple[int, str, str, str, dict[str, str | None]]] = []

    def _add(
        self, kind: str, tag: str = "", data: str = "", attrs: dict[str, str | None] | None = None
    ) -> None:
        line, column = self.getpos()
        self.found.append((self.line_starts[line - 1] + column, kind, tag, data, attrs or {}))

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._add("start", tag, self.get_starttag_text() or "", dict(reversed(attrs)))

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._add("startend", tag, self.get_starttag_text() or "", dict(reversed(attrs)))

    def handle_endtag(self, tag: str) -> None:
        self._add("end", tag)

    def handle_data(self, data: str) -> None:
        self._add("data", data=data)

    def handle_entityref(self, name: str) -> None:
        self._add("reference")

    def handle_charref(self, name: str) -> None:
        self._add("reference")

    def handle_comment(self, data: str) -> None:
        self._add("comment")

    def handle_decl(self, decl: str) -> None:
        self._add("other")

    def handle_pi(self, data: str) -> None:
        self._add("other")

    def unknown_decl(self, data: str) -> None:
        self._add("other")


def tokenize(text: str, filename: str) -> list[Event]:
    parser = _Parser(text)
    try:
        parser.feed(text)
        parser.close()
    except Exception as exc:  # html.parser is lenient; anything raised is a malformed file
        raise InvalidFile(f"{filename}: cannot be read as HTML: {exc}") from None
    found = parser.found
    events: list[Event] = []
    for index, (start, kind, tag, data, attrs) in enumerate(found):
        end = found[index + 1][0] if index + 1 < len(found) else len(text)
        if end <= start or (index == 0 and start != 0):
            raise InvalidFile(f"{filename}: cannot be read as HTML near offset {start}")
        span = Span(start, end)
        if kind in ("start", "startend"):
            events.append(Event(kind, tag, span, "", attrs, _values(data, start)))
        elif kind == "data" and events and events[-1].data == "<" and _TAG_START.match(data):
            events[-1] = Event("data", "", Span(events[-1].span.start, end), "<" + data)
        else:
            events.append(Event(kind, tag, span, data if kind == "data" else ""))
    return events
