"""The keys of the segment cache and of memory entries: sha256 over a length-prefixed
encoding of every field, so that no two different field lists share a key (joining with a
separator would let ``["a|b"]`` and ``["a", "b"]`` collide)."""

from __future__ import annotations

import hashlib

from dragoman.models import Pair

CACHE_SCHEME = "dragoman.cache/1"
MEMORY_SCHEME = "dragoman.tm/1"


def digest(*fields: str) -> bytes:
    """sha256 of the fields, each as its UTF-8 length (8 bytes) then its bytes, hashed in
    one call (a job computes one key per segment)."""
    parts: list[bytes] = []
    for text in fields:
        data = text.encode("utf-8", "surrogatepass")
        parts += (len(data).to_bytes(8, "big"), data)
    return hashlib.sha256(b"".join(parts)).digest()


def cache_key(
    *,
    tenant: str | None,
    engine: str,
    version: str,
    pair: Pair,
    glossary: str | None,
    markup: bool,
    segment: str,
) -> bytes:
    """Everything that decides an engine's output for one segment: who asks (a tenant never
    sees another's entries), which engine and its version, the pair, the glossary, whether
    the segment carries inline codes (file jobs' stored form), and the exact text."""
    return digest(
        CACHE_SCHEME,
        tenant or "",
        engine,
        version,
        pair.source,
        pair.target,
        glossary or "",
        "markup" if markup else "plain",
        segment,
    )


def memory_key(source_lang: str, target_lang: str, form: str) -> bytes:
    """The key of a memory entry: its languages and its source's matching form."""
    return digest(MEMORY_SCHEME, source_lang, target_lang, form)


def normalize(text: str) -> str:
    """Whitespace only: runs collapsed to one space, both ends trimmed."""
    return " ".join(text.split())
