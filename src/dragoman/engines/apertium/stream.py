"""Apertium's plain-text stream format: what ``apertium-destxt`` and ``apertium-retxt`` do.

Doing it here, per segment, lets one warm pipeline serve many segments separated by NUL
(null-flush mode) while each segment is deformatted exactly as the CLI would deformat it
alone. ``tests/integration/test_apertium_stream.py`` checks both against the real programs.
"""

from __future__ import annotations

import re

# destxt treats these as blanks; a single space stays inline, any other run becomes a
# superblank, and a paragraph break or the end of the text gets a sentence-end marker.
_BLANK_RUN = re.compile(r"[ \t\n\r~]+")
_SPECIAL = re.compile(r"([\\\[\]^$/@<>{}])")
_PARAGRAPH = re.compile(r"\n\n|\r\n\r\n")
_SENTENCE_END = ".[]"

_STREAM_TOKEN = re.compile(r"\.\[\]|\[((?:[^\]\\]|\\.)*)\]|\\(.)", re.DOTALL)


def _escape(text: str) -> str:
    return _SPECIAL.sub(r"\\\1", text)


def _blank(run: str) -> str:
    return run if run == " " else f"[{run}]"


def deformat(text: str) -> str:
    """The stream ``apertium-destxt`` makes of ``text``."""
    out: list[str] = []
    pos = 0
    for match in _BLANK_RUN.finditer(text):
        out.append(_escape(text[pos : match.start()]))
        run = match.group()
        if match.end() == len(text):
            out.append(_SENTENCE_END + _blank(run))
            return "".join(out)
        if _PARAGRAPH.search(run):
            out.append(_SENTENCE_END)
        out.append(_blank(run))
        pos = match.end()
    out.append(_escape(text[pos:]))
    out.append(_SENTENCE_END)
    return "".join(out)


def _restore(match: re.Match[str]) -> str:
    if match.group(2) is not None:
        return match.group(2)
    if match.group(1) is not None:
        return match.group(1).replace("\\]", "]")
    return ""


def reformat(stream: str) -> str:
    """The text ``apertium-retxt`` makes of a translated ``stream``."""
    return _STREAM_TOKEN.sub(_restore, stream)
