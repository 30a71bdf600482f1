"""Translation memories, the use cases: a TMX file in (a second upload of a name replaces
the memory, as Weblate and ModernMT users expect), listed, deleted, named by jobs, and
recalled for a synchronous request's segments."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from dragoman.errors import NotFound, PayloadTooLarge
from dragoman.formats.tmx import read_tmx
from dragoman.models import MemoryInfo, Pair
from dragoman.reuse.keys import memory_key
from dragoman.reuse.matching import fit, job_segment, memory_entries
from dragoman.reuse.store import Memories, SqlMemories
from dragoman.runtime import Runtime


class TranslationMemories:
    def __init__(self, runtime: Runtime) -> None:
        self._settings = runtime.settings
        self._store: Memories = SqlMemories(runtime.database)
        self._clock = runtime.clock

    async def import_tmx(
        self, tenant: str | None, name: str, data: bytes, filename: str
    ) -> tuple[MemoryInfo, bool, int]:
        """Stores the memory ``name`` from a TMX 1.4 file; ``(memory, replaced, skipped)``,
        ``skipped`` the units left out (fewer than two languages, none in the source).
        ``InvalidFile`` naming what is wrong with the file, 413 when it is too large."""
        limit = self._settings.max_file_bytes
        if len(data) > limit:
            raise PayloadTooLarge(
                f"{filename}: larger than the limit of {limit} bytes (DRAGOMAN_MAX_FILE_BYTES)"
            )
        memory = await asyncio.to_thread(read_tmx, data, filename)
        entries = await asyncio.to_thread(memory_entries, memory)
        now = self._clock.now()
        info = MemoryInfo(
            name=name,
            units=len(memory.units),
            languages=tuple(memory.languages),
            source_lang=memory.source_lang,
            created_at=now,
            updated_at=now,
        )
        replaced = await self._store.save_memory(tenant or "", info, entries)
        return info, replaced, len(memory.skipped)

    async def listing(self, tenant: str | None) -> list[MemoryInfo]:
        return await self._store.list_memories(tenant or "")

    async def delete(self, tenant: str | None, name: str) -> None:
        if not await self._store.delete_memory(tenant or "", name):
            raise NotFound(f"memory {name!r} not found")

    async def ids(self, tenant: str | None, names: Sequence[str]) -> tuple[int, ...]:
        """The ids of the tenant's memories ``names``, in order; a name the tenant has no
        memory of is a 404 naming it (an unknown reference, as an unknown glossary is)."""
        found = await self._store.memory_ids(tenant or "", names)
        unknown = [name for name in names if name not in found]
        if unknown:
            listed = ", ".join(repr(name) for name in unknown)
            raise NotFound(f"memories: no memory named {listed}; see GET /v1/memories")
        return tuple(found[name] for name in dict.fromkeys(names))

    async def recall(
        self, memory_ids: Sequence[int], pair: Pair, segments: Sequence[str], *, markup: bool
    ) -> list[str | None]:
        """Each segment's exact match in the memories ``memory_ids`` for ``pair`` (None: no
        match), found and fitted as a job's are at submission (``store.prefill``): the first
        memory listed that has one wins, a segment of only whitespace never matches, and a
        ``markup`` segment (stored form) gets its own codes back."""
        forms = {
            i: job_segment(text, markup=markup) for i, text in enumerate(segments) if text.strip()
        }
        keys = {i: memory_key(pair.source, pair.target, form.form) for i, form in forms.items()}
        found = await self._store.matches(memory_ids, list(set(keys.values())))
        recalled: list[str | None] = [None] * len(segments)
        for i, key in keys.items():
            for memory_id in memory_ids:
                target = found.get((memory_id, key))
                fitted = None if target is None else fit(segments[i], forms[i], target)
                if fitted is not None:
                    recalled[i] = fitted
                    break
        return recalled
