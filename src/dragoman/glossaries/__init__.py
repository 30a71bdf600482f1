"""Terminology: a tenant's glossaries (create, list, read, delete), the check that a job
or request may use one, and the terms each translation keeps.

Glossaries never change once created (a change is a new glossary, as with DeepL's v2 API,
and as Weblate's sync expects), so each process keeps the ones it used in memory by id.
A deleted glossary leaves its tenant's view at once, but jobs that named it still get its
terms; its rows go with the results' retention (``purge``).

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
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from dragoman.engines import Engines, Pair
from dragoman.errors import (
    Conflict,
    GlossaryMismatch,
    InvalidRequest,
    NotFound,
    PayloadTooLarge,
    UnknownGlossary,
    UnsupportedPair,
)
from dragoman.glossaries.apply import Item, keep_terms, keep_terms_scored
from dragoman.glossaries.entries import Limits, Row, check_name, checked, from_table
from dragoman.glossaries.matching import Entry, Hit, Terms
from dragoman.glossaries.store import Glossaries, SqlGlossaries
from dragoman.languages import canonical
from dragoman.models import Glossary, Job, Output
from dragoman.runtime import Runtime

__all__ = ["Entry", "Glossaries", "Hit", "Item", "Terminology", "Terms", "keep_terms"]

# What each process keeps compiled: at most this many glossaries and entries in all (a
# compiled entry takes about 0.6 KiB).
_KEPT = 32
_KEPT_ENTRIES = 100_000


@dataclass(frozen=True, slots=True)
class Loaded:
    glossary: Glossary
    terms: Terms


class Terminology:
    """Every use case of glossaries, for the API (create, list, read, delete, check) and for
    the processes that translate (``load``, ``translate``)."""

    def __init__(self, runtime: Runtime, *, engines: Engines) -> None:
        self._settings = runtime.settings
        self._store: Glossaries = SqlGlossaries(runtime.database)
        self._clock = runtime.clock
        self._engines = engines
        self._kept: OrderedDict[str, Loaded] = OrderedDict()

    def _limits(self) -> Limits:
        return Limits(self._settings.glossary_max_entries, self._settings.glossary_max_term_bytes)

    def pair_of(self, source_lang: str, target_lang: str) -> Pair:
        """The pair of a new glossary: canonical codes, installed."""
        pair = Pair(canonical(source_lang), canonical(target_lang))
        if pair not in {installed for installed, _ in self._engines.languages()}:
            raise UnsupportedPair(f"language pair {pair} is not installed; see /v1/languages")
        return pair

    async def create(
        self, *, tenant: str | None, name: str, pair: Pair, rows: Sequence[Row]
    ) -> Glossary:
        """A new glossary of ``rows``, or the first mistake in them (``ClientError``)."""
        name = check_name(name, self._settings.glossary_max_name_bytes)
        entries = checked(rows, self._limits())
        limit = self._settings.glossaries_per_tenant
        if len(await self._store.list_glossaries(tenant)) >= limit:
            raise Conflict(f"the limit of {limit} glossaries is reached; delete one first")
        glossary = Glossary(
            id=str(uuid.uuid4()),
            tenant=tenant,
            name=name,
            source_lang=pair.source,
            target_lang=pair.target,
            entry_count=len(entries),
            created_at=self._clock.now(),
        )
        await self._store.add_glossary(glossary, [(e.source, e.target) for e in entries])
        return glossary

    def rows_of_table(self, content: bytes, fmt: str, pair: Pair) -> list[Row]:
        """The rows of an uploaded TSV or CSV table for a glossary of ``pair``."""
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
                    f"its languages {source}-{target} are not the glossary's {pair}"
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

    async def entries(self, glossary_id: str, tenant: str | None) -> tuple[Glossary, list[Entry]]:
        """The tenant's glossary and its entries, in their order."""
        glossary = await self.get(glossary_id, tenant)
        return glossary, [Entry(s, t) for s, t in await self._store.glossary_entries(glossary.id)]

    async def delete(self, glossary_id: str, tenant: str | None) -> None:
        """Takes the glossary from its tenant's view; jobs that named it keep its terms."""
        glossary = await self.get(glossary_id, tenant)
        if not await self._store.delete_glossary(glossary.id, self._clock.now()):
            raise UnknownGlossary(f"glossary {glossary_id} not found")

    async def check(
        self, glossary_id: str | None, tenant: str | None, source: str | None, target: str
    ) -> Glossary | None:
        """The glossary a job or request names, if it may use it: the tenant's, into
        ``target``, from ``source`` (None: any, the source is detected per document).
        ``NotFound`` naming it when the tenant has no such glossary (an unknown reference,
        as a job's URL would be), ``InvalidRequest`` when it is for another pair."""
        if glossary_id is None:
            return None
        try:
            glossary = await self.get(glossary_id, tenant)
        except NotFound:
            raise UnknownGlossary(
                f"glossary: {glossary_id!r} is not one of your glossaries; see /v1/glossaries"
            ) from None
        if glossary.target_lang != target or source not in (None, glossary.source_lang):
            raise GlossaryMismatch(
                f"glossary: {glossary_id!r} is for {glossary.source_lang}-"
                f"{glossary.target_lang}, not {source or 'auto'}-{target}"
            )
        return glossary

    async def terms_for(
        self, glossary_id: str | None, tenant: str | None, pair: Pair
    ) -> Terms | None:
        """The terms of the glossary a request names, once ``check`` has passed."""
        glossary = await self.check(glossary_id, tenant, pair.source, pair.target)
        return None if glossary is None else (await self.load(glossary.id)).terms

    async def load(self, glossary_id: str) -> Loaded:
        """A glossary and its compiled terms, kept by id (deleted ones too: a queued job may
        still need them)."""
        kept = self._kept.get(glossary_id)
        if kept is not None:
            self._kept.move_to_end(glossary_id)
            return kept
        glossary = await self._store.get_glossary(glossary_id)
        if glossary is None:
            raise InvalidRequest(f"glossary {glossary_id} no longer exists")
        rows = await self._store.glossary_entries(glossary_id)
        terms = await asyncio.to_thread(Terms.of, [Entry(s, t) for s, t in rows])
        kept = self._kept[glossary_id] = Loaded(glossary, terms)
        while len(self._kept) > 1 and (
            len(self._kept) > _KEPT
            or sum(len(k.terms) for k in self._kept.values()) > _KEPT_ENTRIES
        ):
            self._kept.popitem(last=False)
        return kept

    async def translate(
        self, engine: str, pair: Pair, jobs: Sequence[tuple[Job, str]]
    ) -> list[Output]:
        """One chunk of a worker's batch: each segment of ``jobs`` (its job, its text)
        translated in one engine call per kind (file jobs' segments carry inline codes; a
        job may ask for unknown words marked),
        keeping its job's glossary where that glossary is for ``pair`` (a job with ``auto``
        has documents of other languages); each with the model's confidence, and whether
        terms were found in it."""
        out: list[Output] = [Output("")] * len(jobs)
        for marked, marks in ((False, False), (True, False), (False, True), (True, True)):
            indices = [
                i
                for i, (job, _) in enumerate(jobs)
                if (job.options.markup, job.options.mark_unknown) == (marked, marks)
            ]
            if not indices:
                continue
            items = [(jobs[i][1], await self._terms_of(jobs[i][0], pair)) for i in indices]
            run = functools.partial(
                self._engines.translate_scored, engine, pair, markup=marked, mark_unknown=marks
            )
            done = await keep_terms_scored(run, items, marked=marked)
            for i, output in zip(indices, done, strict=True):
                out[i] = output
        return out

    async def _terms_of(self, job: Job, pair: Pair) -> Terms | None:
        if job.options.glossary is None:
            return None
        loaded = await self.load(job.options.glossary)
        glossary = loaded.glossary
        fits = (glossary.source_lang, glossary.target_lang) == (pair.source, pair.target)
        return loaded.terms if fits else None

    async def purge(self, deleted_before: datetime) -> int:
        """Removes for good the glossaries deleted before ``deleted_before``."""
        return await self._store.purge_glossaries(deleted_before)
