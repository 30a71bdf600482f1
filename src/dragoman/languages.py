"""Language codes: ISO 639-1 or 639-3 in, one canonical form out (the shortest)."""

from __future__ import annotations

import re

import langcodes

from dragoman.errors import InvalidRequest

_CODE = re.compile(r"[A-Za-z]{2,3}")


def canonical(code: str) -> str:
    """``eng`` and ``en`` both give ``en``; a code with no 639-1 form stays three letters."""
    if not _CODE.fullmatch(code):
        raise InvalidRequest(f"language code {code!r} is not an ISO 639-1 or 639-3 code")
    try:
        tag = str(langcodes.standardize_tag(code.lower()))
    except (ValueError, LookupError):
        raise InvalidRequest(f"language code {code!r} is not an ISO 639-1 or 639-3 code") from None
    return tag
