"""What a job or a translate request must satisfy before it is accepted."""

from __future__ import annotations

import re
from collections.abc import Sequence

from dragoman.errors import InvalidRequest, InvalidSegment, PayloadTooLarge
from dragoman.models import Document

# NUL and the other C0/C1 controls (tab, CR and LF aside) have no business in a segment and
# some engines give them meaning; lone surrogates cannot be encoded for any engine; the
# noncharacters U+FFFE and U+FFFF end Apertium's input stream, and XML cannot carry them.
_FORBIDDEN = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff]")


def check_segments(documents: Sequence[Document], *, max_segments: int, max_chars: int) -> int:
    """Raises a ``ClientError`` naming the first bad segment; returns the segment count."""
    total = sum(len(doc.segments) for doc in documents)
    if total == 0:
        raise InvalidRequest("the job has no segments to translate")
    if total > max_segments:
        raise PayloadTooLarge(
            f"{total} segments exceed the limit of {max_segments} per job",
            count=total,
            limit=max_segments,
            unit="segments",
        )
    for d, doc in enumerate(documents):
        for s, text in enumerate(doc.segments):
            where = f"documents[{d}].segments[{s}]"
            if len(text) > max_chars:
                raise PayloadTooLarge(
                    f"{where} has {len(text)} characters; the limit is {max_chars}",
                    count=len(text),
                    limit=max_chars,
                    unit="characters",
                )
            bad = _FORBIDDEN.search(text)
            if bad:
                kind = "noncharacter" if bad.group() in "\ufffe\uffff" else "control character"
                raise InvalidSegment(
                    f"{where} contains the {kind} U+{ord(bad.group()):04X} at offset {bad.start()}"
                )
    return total
