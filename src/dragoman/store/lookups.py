"""What jobs look up besides their own rows: the segment cache, translation memories and
glossaries (ADR 0014, ADR 0015); part of ``JobStore``."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Protocol

from dragoman.models import Glossary, MemoryInfo
from dragoman.store.memories import MemoryEntry
from dragoman.store.segment_cache import CacheWrite


class SegmentCache(Protocol):
    """Engine outputs by key (``reuse.keys``): first write wins, least recently used out."""

    async def cached(self, keys: Sequence[bytes], now: datetime) -> dict[bytes, str]:
        """The stored targets of ``keys`` (those found)."""
        ...

    async def cache_put(self, entries: Sequence[CacheWrite], now: datetime) -> dict[bytes, str]:
        """Stores each entry whose key has no target yet and whose attempt is still in
        flight (an entry made for no job is stored as is); returns what is stored for the
        entries' keys afterwards (an earlier writer's target wins; a key with nothing stored
        is absent)."""
        ...

    async def trim_cache(self, max_segments: int, unused_since: datetime) -> int:
        """Deletes the entries not used since ``unused_since``, then the least recently used
        beyond ``max_segments``; how many."""
        ...


class Memories(Protocol):
    """Translation memories per tenant (``""`` when authentication is off)."""

    async def save_memory(
        self, tenant: str, info: MemoryInfo, entries: Sequence[MemoryEntry]
    ) -> bool:
        """Stores a memory and its entries (keys unique), replacing the tenant's memory of
        that name and all its entries; True when one was replaced."""
        ...

    async def list_memories(self, tenant: str) -> list[MemoryInfo]:
        """The tenant's memories, by name."""
        ...

    async def memory_ids(self, tenant: str, names: Sequence[str]) -> dict[str, int]:
        """The ids of those of ``names`` that are the tenant's memories."""
        ...

    async def delete_memory(self, tenant: str, name: str) -> bool:
        """Deletes a memory and its entries; False if the tenant has none of that name."""
        ...


class Glossaries(Protocol):
    """Tenants' glossaries: written once with their entries, never changed; a deleted one
    is hidden from lists but stays readable by id until purged."""

    async def add_glossary(self, glossary: Glossary, entries: Sequence[tuple[str, str]]) -> None:
        """Stores a glossary and its ``(source, target)`` entries, in order, at once."""
        ...

    async def get_glossary(self, glossary_id: str) -> Glossary | None:
        """Any glossary, deleted ones included (``deleted_at`` says so)."""
        ...

    async def list_glossaries(self, tenant: str | None) -> list[Glossary]:
        """A tenant's glossaries (every tenant's with None) not deleted, oldest first."""
        ...

    async def glossary_entries(self, glossary_id: str) -> list[tuple[str, str]]:
        """A glossary's ``(source, target)`` entries in their order; none if unknown."""
        ...

    async def delete_glossary(self, glossary_id: str, now: datetime) -> bool:
        """Marks a glossary deleted; False when it is unknown or deleted already."""
        ...

    async def purge_glossaries(self, deleted_before: datetime) -> int:
        """Removes the glossaries deleted before ``deleted_before`` and their entries;
        returns how many."""
        ...
