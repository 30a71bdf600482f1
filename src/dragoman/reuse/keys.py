"""The keys of the segment cache and of memory entries: sha256 over a length-prefixed
encoding of every field, so that no two different field lists share a key (joining with a
separator would let ``["a|b"]`` and ``["a", "b"]`` collide)."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

from dragoman.models import Pair

CACHE_SCHEME = "dragoman.cache/1"
MEMORY_SCHEME = "dragoman.tm/1"


def _encoded(fields: tuple[str, ...]) -> bytes:
    parts: list[bytes] = []
    for text in fields:
        data = text.encode("utf-8", "surrogatepass")
        parts += (len(data).to_bytes(8, "big"), data)
    return b"".join(parts)


def digest(*fields: str) -> bytes:
    """sha256 of the fields, each as its UTF-8 length (8 bytes) then its bytes, hashed in
    one call."""
    return hashlib.sha256(_encoded(fields)).digest()


def _cache_fields(
    tenant: str | None, engine: str, version: str, pair: Pair, glossary: str | None, markup: bool
) -> tuple[str, ...]:
    return (
        CACHE_SCHEME,
        tenant or "",
        engine,
        version,
        pair.source,
        pair.target,
        glossary or "",
        "markup" if markup else "plain",
    )


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
    return digest(*_cache_fields(tenant, engine, version, pair, glossary, markup), segment)


def cache_keys(
    *,
    tenant: str | None,
    engine: str,
    version: str,
    pair: Pair,
    glossary: str | None,
    markup: bool,
    segments: Iterable[str],
) -> list[bytes]:
    """``cache_key`` of each segment: the fields they share are hashed once, and each key
    goes on from a copy of that hash."""
    shared = hashlib.sha256(
        _encoded(_cache_fields(tenant, engine, version, pair, glossary, markup))
    )
    keys: list[bytes] = []
    for segment in segments:
        data = segment.encode("utf-8", "surrogatepass")
        key = shared.copy()
        key.update(len(data).to_bytes(8, "big"))
        key.update(data)
        keys.append(key.digest())
    return keys


def memory_key(source_lang: str, target_lang: str, form: str) -> bytes:
    """The key of a memory entry: its languages and its source's matching form."""
    return digest(MEMORY_SCHEME, source_lang, target_lang, form)


def normalize(text: str) -> str:
    """Whitespace only: runs collapsed to one space, both ends trimmed."""
    return " ".join(text.split())
