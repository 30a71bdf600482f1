"""Terminology: a tenant's glossaries (create, list, read, edit, delete), the check that a
job or request may use one, and the terms each translation keeps.

A glossary holds one dictionary per language pair (ADR 0027); a translation of a pair uses
that pair's dictionary. Each change makes a new revision of the glossary, and the changed
dictionary keeps that revision: each process keeps the dictionaries it compiled in memory
by glossary, pair and revision, and a job's translations are cached under the same three
(``Glossary.version``), so an edit never serves what other entries made. A deleted
glossary leaves its tenant's view at once, but jobs that named it still get its terms; its
rows go with the results' retention (``purge``).

The package holds every part of a glossary but its HTTP routes (ADR 0015):

- ``matching``: where a glossary's terms occur in a text (whole words, longest first, case
  as a user means it) and what each occurrence becomes;
- ``entries``: a glossary's entries read from JSON, TSV or CSV and checked;
- ``masking``: each occurrence replaced by a placeholder an engine copies, and put back;
- ``apply``: one engine call for a batch of segments, each with its own glossary, with a
  fallback for the segments whose placeholders did not come back;
- ``store``: the ``Glossaries`` rows on the shared database.
"""

from __future__ import annotations

import asyncio
import functools
import uuid
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from dragoman.engines import Engines, Pair
from dragoman.errors import (
    Conflict,
    GlossaryMismatch,
    InvalidRequest,
    NotFound,
    PayloadTooLarge,
    UnknownDictionary,
    UnknownGlossary,
    UnsupportedPair,
)
from dragoman.glossaries.apply import Item, keep_terms, keep_terms_scored
from dragoman.glossaries.entries import Limits, Row, check_name, checked, from_table, merged
from dragoman.glossaries.matching import Entry, Hit, Terms
from dragoman.glossaries.store import Edit, Glossaries, SqlGlossaries
from dragoman.languages import canonical
from dragoman.models import Dictionary, Glossary, Job, Output, glossary_version
from dragoman.runtime import Runtime

__all__ = ["Entry", "Glossaries", "Hit", "Item", "Loaded", "Terminology", "Terms", "keep_terms"]

# What each process keeps compiled: at most this many dictionaries and entries in all (a
# compiled entry takes about 0.6 KiB).
_KEPT = 32
_KEPT_ENTRIES = 100_000
# Tries of an edit that meets another one made meanwhile (each reads the glossary again).
_EDIT_TRIES = 5


@dataclass(frozen=True, slots=True)
class Loaded:
    """A glossary's dictionary for one pair as a translation uses it: its compiled terms
    (None: the glossary has none for the pair) and ``version``, what its translations are
    cached under."""

    version: str
    terms: Terms | None


Plan = Callable[[Glossary], Awaitable[Edit | None]]


class Terminology:
    """Every use case of glossaries, for the API (create, list, read, edit, delete, check)
    and for the processes that translate (``resolve``, ``translate``)."""

    def __init__(self, runtime: Runtime, *, engines: Engines) -> None:
        self._settings = runtime.settings
        self._store: Glossaries = SqlGlossaries(runtime.database)
        self._clock = runtime.clock
        self._engines = engines
        self._kept: OrderedDict[tuple[str, Pair, int], Loaded] = OrderedDict()

    def _limits(self) -> Limits:
        return Limits(self._settings.glossary_max_entries, self._settings.glossary_max_term_bytes)

    def pair_of(self, source_lang: str, target_lang: str) -> Pair:
        """The pair of a new dictionary: canonical codes, installed."""
        pair = Pair(canonical(source_lang), canonical(target_lang))
        if pair not in {installed for installed, _ in self._engines.languages()}:
            raise UnsupportedPair(f"language pair {pair} is not installed; see /v1/languages")
        return pair

    async def create(
        self,
        *,
        tenant: str | None,
        name: str,
        dictionaries: Sequence[tuple[Pair, Sequence[Row]]],
        idempotency_key: str | None = None,
    ) -> Glossary:
        """A new glossary of one dictionary per pair, or the first mistake in them; stored
        with the ``Idempotency-Key`` of the request that made it."""
        name = check_name(name, self._settings.glossary_max_name_bytes)
        if not dictionaries:
            raise InvalidRequest("dictionaries: a glossary needs at least one")
        pairs = [pair for pair, _ in dictionaries]
        twice = next((pair for i, pair in enumerate(pairs) if pair in pairs[:i]), None)
        if twice is not None:
            raise InvalidRequest(f"dictionaries: {twice} is given twice")
        entries = [checked(rows, self._limits()) for _, rows in dictionaries]
        limit = self._settings.glossaries_per_tenant
        if len(await self._store.list_glossaries(tenant)) >= limit:
            raise Conflict(f"the limit of {limit} glossaries is reached; delete one first")
        glossary = Glossary(
            id=str(uuid.uuid4()),
            tenant=tenant,
            name=name,
            dictionaries=tuple(
                Dictionary(pair.source, pair.target, len(found))
                for pair, found in zip(pairs, entries, strict=True)
            ),
            created_at=self._clock.now(),
        )
        await self._store.add_glossary(
            glossary, [[(e.source, e.target) for e in f] for f in entries], idempotency_key
        )
        return glossary

    async def created_with(self, tenant: str | None, idempotency_key: str) -> Glossary | None:
        """The tenant's glossary created with ``idempotency_key``, if it was stored."""
        found = await self._store.glossary_of_key(tenant, idempotency_key)
        return await self._store.get_glossary(found) if found is not None else None

    def rows_of_table(self, content: bytes, fmt: str, pair: Pair) -> list[Row]:
        """The rows of an uploaded TSV or CSV table for a dictionary of ``pair``."""
        limit = self._settings.glossary_max_file_bytes
        if len(content) > limit:
            raise PayloadTooLarge(f"file: larger than the limit of {limit} bytes")

        def same_pair(source: str, target: str) -> None:
            try:
                given = Pair(canonical(source), canonical(target))
            except InvalidRequest:
                given = None
            if given != pair:
                raise InvalidRequest(
                    f"its languages {source}-{target} are not the dictionary's {pair}"
                )

        return from_table(content, fmt, check_languages=same_pair)

    async def list_glossaries(self, tenant: str | None) -> list[Glossary]:
        """The tenant's glossaries (every one without authentication), oldest first."""
        return await self._store.list_glossaries(tenant)

    async def get(self, glossary_id: str, tenant: str | None) -> Glossary:
        """The tenant's glossary; another tenant's, a deleted or an unknown one is missing."""
        found = await self._store.get_glossary(glossary_id)
        if (
            found is None
            or found.deleted_at is not None
            or (tenant is not None and found.tenant != tenant)
        ):
            raise UnknownGlossary(f"glossary {glossary_id} not found")
        return found

    async def entries(
        self, glossary_id: str, tenant: str | None, pair: Pair | None = None
    ) -> tuple[Glossary, list[Entry]]:
        """The tenant's glossary and the entries, in their order, of its dictionary for
        ``pair`` (None: its first, as the one-pair views show it)."""
        glossary = await self.get(glossary_id, tenant)
        pair = pair or glossary.dictionaries[0].pair
        found = await self._store.dictionary_entries(glossary.id, pair)
        if found is None:
            raise UnknownDictionary(f"glossary {glossary_id} has no dictionary for {pair}")
        return glossary, [Entry(s, t) for s, t in found[1]]

    async def rename(self, glossary_id: str, tenant: str | None, name: str) -> Glossary:
        name = check_name(name, self._settings.glossary_max_name_bytes)

        async def plan(_: Glossary) -> Edit:
            return Edit(name=name)

        return await self._change(glossary_id, tenant, plan)

    async def merge(
        self,
        glossary_id: str,
        tenant: str | None,
        pair: Pair,
        rows: Sequence[Row],
        *,
        name: str | None = None,
    ) -> Glossary:
        """Merges ``rows`` into the dictionary of ``pair`` (``entries.merged``), which is
        created when the glossary has none; renames the glossary too, given a ``name``."""
        if name is not None:
            name = check_name(name, self._settings.glossary_max_name_bytes)

        async def plan(glossary: Glossary) -> Edit:
            current = await self._store.dictionary_entries(glossary.id, pair)
            old = [Entry(s, t) for s, t in current[1]] if current else []
            found = merged(old, rows, self._limits())
            return Edit(name=name, pair=pair, entries=[(e.source, e.target) for e in found])

        return await self._change(glossary_id, tenant, plan)

    async def replace(
        self, glossary_id: str, tenant: str | None, pair: Pair, rows: Sequence[Row]
    ) -> Dictionary:
        """Replaces the dictionary of ``pair`` with ``rows`` (added when it is new)."""
        entries = [(e.source, e.target) for e in checked(rows, self._limits())]

        async def plan(_: Glossary) -> Edit:
            return Edit(pair=pair, entries=entries)

        changed = await self._change(glossary_id, tenant, plan)
        found = changed.dictionary(pair)
        assert found is not None  # written in the revision just read
        return found

    async def remove(self, glossary_id: str, tenant: str | None, pair: Pair) -> None:
        """Removes the dictionary of ``pair``; a glossary keeps at least one."""

        async def plan(glossary: Glossary) -> Edit:
            if glossary.dictionary(pair) is None:
                raise UnknownDictionary(f"glossary {glossary_id} has no dictionary for {pair}")
            if len(glossary.dictionaries) == 1:
                raise InvalidRequest(
                    f"the dictionary for {pair} is the glossary's last; delete the glossary"
                )
            return Edit(pair=pair)

        await self._change(glossary_id, tenant, plan)

    async def _change(self, glossary_id: str, tenant: str | None, plan: Plan) -> Glossary:
        """The tenant's glossary changed as ``plan`` says from its current revision, tried
        again from the next one when another change lands meanwhile."""
        for _ in range(_EDIT_TRIES):
            glossary = await self.get(glossary_id, tenant)
            edit = await plan(glossary)
            if edit is None:
                return glossary
            if await self._store.change_glossary(glossary.id, glossary.revision, edit):
                return await self.get(glossary_id, tenant)
        raise Conflict(f"glossary {glossary_id} is being changed by others; try again")

    async def delete(self, glossary_id: str, tenant: str | None) -> None:
        """Takes the glossary from its tenant's view; jobs that named it keep its terms."""
        glossary = await self.get(glossary_id, tenant)
        if not await self._store.delete_glossary(glossary.id, self._clock.now()):
            raise UnknownGlossary(f"glossary {glossary_id} not found")

    async def check(
        self, glossary_id: str | None, tenant: str | None, source: str | None, target: str
    ) -> Glossary | None:
        """The glossary a job or request names, if it may use it: the tenant's, with a
        dictionary from ``source`` (None: from any, the source is detected per document)
        into ``target``. ``NotFound`` naming it when the tenant has no such glossary (an
        unknown reference, as a job's URL would be), ``GlossaryMismatch`` when it has no
        dictionary for the pair."""
        if glossary_id is None:
            return None
        try:
            glossary = await self.get(glossary_id, tenant)
        except NotFound:
            raise UnknownGlossary(
                f"glossary: {glossary_id!r} is not one of your glossaries; see /v1/glossaries"
            ) from None
        pairs = [d.pair for d in glossary.dictionaries]
        if not any(p.target == target and source in (None, p.source) for p in pairs):
            raise GlossaryMismatch(
                f"glossary: {glossary_id!r} is for {', '.join(map(str, pairs))}, "
                f"not {source or 'auto'}-{target}"
            )
        return glossary

    async def terms_for(
        self, glossary_id: str | None, tenant: str | None, pair: Pair
    ) -> Terms | None:
        """The terms a request naming a glossary keeps, once ``check`` has passed."""
        glossary = await self.check(glossary_id, tenant, pair.source, pair.target)
        return await self.terms_in(glossary, pair)

    async def terms_in(self, glossary: Glossary | None, pair: Pair) -> Terms | None:
        """The terms of ``glossary``'s dictionary for ``pair`` (None: it has none)."""
        return None if glossary is None else (await self._loaded(glossary, pair)).terms

    async def resolve(self, glossary_ids: Iterable[str | None], pair: Pair) -> dict[str, Loaded]:
        """The dictionary for ``pair`` of each glossary named, as it is now (a deleted
        glossary's too: a queued job still needs it)."""
        found: dict[str, Loaded] = {}
        for glossary_id in sorted({g for g in glossary_ids if g is not None}):
            glossary = await self._store.get_glossary(glossary_id)
            if glossary is None:
                raise InvalidRequest(f"glossary {glossary_id} no longer exists")
            found[glossary_id] = await self._loaded(glossary, pair)
        return found

    async def _loaded(self, glossary: Glossary, pair: Pair) -> Loaded:
        dictionary = glossary.dictionary(pair)
        if dictionary is None:
            return Loaded(glossary.version(pair), None)
        key = (glossary.id, pair, dictionary.revision)
        kept = self._kept.get(key)
        if kept is not None:
            self._kept.move_to_end(key)
            return kept
        found = await self._store.dictionary_entries(glossary.id, pair)
        if found is None:  # removed since ``glossary`` was read
            return Loaded(glossary_version(glossary.id, pair, 0), None)
        # The revision read with the entries: a change since ``glossary`` was read is theirs.
        revision, rows = found
        terms = await asyncio.to_thread(Terms.of, [Entry(s, t) for s, t in rows])
        loaded = self._kept[(glossary.id, pair, revision)] = Loaded(
            glossary_version(glossary.id, pair, revision), terms
        )
        while len(self._kept) > 1 and (
            len(self._kept) > _KEPT
            or sum(len(k.terms.entries) for k in self._kept.values() if k.terms) > _KEPT_ENTRIES
        ):
            self._kept.popitem(last=False)
        return loaded

    async def translate(
        self,
        engine: str,
        pair: Pair,
        jobs: Sequence[tuple[Job, str]],
        resolved: Mapping[str, Loaded] | None = None,
    ) -> list[Output]:
        """One chunk of a worker's batch: each segment of ``jobs`` (its job, its text)
        translated in one engine call per kind (file jobs' segments carry inline codes; a
        job may ask for unknown words marked), keeping the terms of its job's glossary for
        ``pair`` (``resolved``, by glossary id; None: as ``resolve`` finds them now); each
        with the model's confidence, and whether terms were found in it."""
        if resolved is None:
            resolved = await self.resolve((job.options.glossary for job, _ in jobs), pair)
        out: list[Output] = [Output("")] * len(jobs)
        for marked, marks in ((False, False), (True, False), (False, True), (True, True)):
            indices = [
                i
                for i, (job, _) in enumerate(jobs)
                if (job.options.markup, job.options.mark_unknown) == (marked, marks)
            ]
            if not indices:
                continue
            items = [(jobs[i][1], _terms_of(jobs[i][0], resolved)) for i in indices]
            run = functools.partial(
                self._engines.translate_scored, engine, pair, markup=marked, mark_unknown=marks
            )
            done = await keep_terms_scored(run, items, marked=marked)
            for i, output in zip(indices, done, strict=True):
                out[i] = output
        return out

    async def purge(self, deleted_before: datetime) -> int:
        """Removes for good the glossaries deleted before ``deleted_before``."""
        return await self._store.purge_glossaries(deleted_before)


def _terms_of(job: Job, resolved: Mapping[str, Loaded]) -> Terms | None:
    glossary = job.options.glossary
    return None if glossary is None else resolved[glossary].terms
