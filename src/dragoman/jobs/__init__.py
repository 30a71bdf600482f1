"""The manager (``BatchRequestsManager``): every use case of a job. ``admit`` checks a
submission once, whichever door it came through (a JSON job, a multipart file job, a
DeepL document, a LibreTranslate file); ``submit`` stores the job and its shards and hands
them to the dispatcher; then get, list, result, TMX, cancel, and the purge of finished
jobs past their retention. The HTTP routes only parse, call this and shape answers.

The features it uses (usage, memories, glossaries, reuse) are the process's peers, built
once by the program and given to it; it does not own them.
"""

from __future__ import annotations

import dataclasses
import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from dragoman.detection import AUTO, Detection, sample
from dragoman.engines import Engine, Engines, Pair
from dragoman.engines.view import in_one_view
from dragoman.errors import Conflict, InvalidRequest, NotFound, PayloadTooLarge
from dragoman.formats.markup import parse_stored
from dragoman.glossaries import Terminology
from dragoman.jobs.auto import (
    MULTIPLE,
    check_documents,
    detect,
    failed_in_target,
    in_target,
    with_sources,
)
from dragoman.jobs.ids import new_job_id
from dragoman.jobs.intake import BusIntake, Intake, LocalIntake
from dragoman.jobs.shards import Run, language_runs, route, shards_of
from dragoman.jobs.waits import JobWaits
from dragoman.languages import canonical
from dragoman.models import Document, Job, JobOptions, JobStatus, Pool, Translated
from dragoman.reuse import Reuse
from dragoman.reuse.export import job_tmx
from dragoman.reuse.memories import TranslationMemories
from dragoman.runtime import Runtime
from dragoman.store import Created
from dragoman.store.results import NewSegment
from dragoman.usage import UsageMeter
from dragoman.validation import check_segments
from dragoman.webhooks.targets import check_target

__all__ = ["BatchRequestsManager", "BusIntake", "Intake", "LocalIntake", "characters"]

log = logging.getLogger(__name__)

# A cursor is a job's sequence number; 18 digits stay within every store's integers.
CURSOR_PATTERN = r"^[0-9]{1,18}$"


def characters(documents: Sequence[Document], *, markup: bool) -> int:
    """The characters a job is charged: its segments' text, inline codes left out."""
    if markup:
        return sum(len(parse_stored(s).plain) for doc in documents for s in doc.segments)
    return sum(len(s) for doc in documents for s in doc.segments)


@dataclass(frozen=True, slots=True)
class Admitted:
    """A submission that passed every check and was charged: what its job is made of."""

    pair: Pair  # with ``auto``, the detected source, or ``mul`` for several
    documents: list[Document]  # with ``auto``, each with its detected language
    runs: list[Run]  # documents in several languages: one run per language
    engine: Engine
    memory_ids: tuple[int, ...]
    segments: int
    characters: int


def _check_targets(pair: Pair, targets: Sequence[str]) -> None:
    """Several targets: each once, none the source, the first the pair's."""
    if targets[0] != pair.target:
        raise ValueError(f"the first target must be the pair's, {pair.target}")
    seen: set[str] = set()
    for target in targets:
        if target in seen:
            raise InvalidRequest(f"target_langs: {target} is listed twice")
        if len(targets) > 1 and target == pair.source:
            raise InvalidRequest(f"target_langs: {target} is the source language")
        seen.add(target)


def copy_of(job: Job, target: str | None) -> int | None:
    """Which copy of the job's segments is ``target``'s (None: no target named, every
    copy); ``NotFound`` for a language the job does not translate into."""
    if target is None:
        return None
    code = canonical(target)
    if code not in job.target_langs:
        raise NotFound(
            f"target: job {job.id} translates into {', '.join(job.target_langs)}, not {target}"
        )
    return job.target_langs.index(code)


def _reused(job: Job, created: Created) -> None:
    """The job as stored: segments found in memories or the cache are done, and a job
    found whole succeeded when it was submitted (it is never dispatched)."""
    job.segments_done = created.found
    job.segments_to_review = created.to_review
    if job.id in created.finished:
        job.status = JobStatus.SUCCEEDED
        job.finished_at = job.created_at


class BatchRequestsManager:
    """Every use case of a job: admit, submit, get, list, result, TMX, cancel, purge."""

    def __init__(
        self,
        runtime: Runtime,
        *,
        engines: Engines,
        intake: Intake,
        usage: UsageMeter,
        memories: TranslationMemories,
        terminology: Terminology,
        reuse: Reuse,
    ) -> None:
        self._settings = runtime.settings
        self._store = runtime.store
        self._clock = runtime.clock
        self._engines = engines
        self._intake = intake
        self._usage = usage
        self._memories = memories
        self._terminology = terminology
        self._reuse = reuse
        self.waits = JobWaits(self._store.progress_many)

    def now(self) -> datetime:
        """The time of this service's clock: what a job's ETA is counted from."""
        return self._clock.now()

    def route(self, segments: int, engine: Engine) -> Pool:
        """The pool a job of ``segments`` by ``engine`` goes to (``shards.route``)."""
        return route(self._settings, segments, engine)

    async def detect(
        self, target: str, texts: Sequence[str], engine: str | None = None
    ) -> list[Detection]:
        """The source language of each text (``auto.detect``)."""
        return await detect(self._engines, target, texts, engine)

    async def detected(
        self, target: str, documents: Sequence[Document], engine: str | None = None
    ) -> list[Document]:
        """``documents``, each with the source language detected from a sample of its
        segments (those that have one already keep it)."""
        unknown = [doc for doc in documents if doc.source_lang is None]
        found = await self.detect(target, [sample(doc.segments) for doc in unknown], engine)
        return with_sources(documents, found)

    async def admit(
        self,
        tenant: str | None,
        pair: Pair,
        documents: Sequence[Document],
        options: JobOptions,
        targets: Sequence[str] = (),
    ) -> Admitted:
        """Checks a submission (pair and engine, callback, memories, glossary, limits) and
        charges the tenant: once per submission. With ``pair.source == "auto"``, each
        document's language is detected; documents in several languages make a job of
        ``mul`` (ISO 639: multiple languages) with one run per language. ``targets``, when
        there are several (``pair.target`` first), are each checked as their own pair and
        each charged."""
        targets = list(targets) or [pair.target]
        _check_targets(pair, targets)
        runs: list[Run] = []
        auto = pair.source == AUTO
        if auto:
            documents = await self.detected(pair.target, documents, options.engine)
            check_documents(self._engines, pair.target, documents, options.engine)
            runs = language_runs(documents)
            languages = {run.source for run in runs} or {documents[0].source_lang or ""}
            if len(languages) == 1:
                pair, runs = Pair(languages.pop(), pair.target), []
            else:
                pair = Pair(MULTIPLE, pair.target)
        first = Pair(runs[0].source, pair.target) if runs else pair
        engine = self._engines.resolve(first, options.engine)
        sources = [run.source for run in runs] or [pair.source]
        for target in targets[1:]:
            for source in sources:
                self._engines.resolve(Pair(source, target), options.engine)
        await self._check_callback(options.callback_url)
        memory_ids = await self._memories.ids(tenant, options.memories)
        # With auto, a glossary serves the documents detected in its source language.
        glossary_source = None if auto else pair.source
        for target in targets:
            await self._terminology.check(options.glossary, tenant, glossary_source, target)
        limit = self._settings.max_segments_per_job
        segments = check_segments(
            documents, max_segments=limit, max_chars=self._settings.max_segment_chars
        )
        if segments * len(targets) > limit:
            raise PayloadTooLarge(
                f"{segments} segments into {len(targets)} languages exceed the limit of "
                f"{limit} segments per job",
                count=segments * len(targets),
                limit=limit,
                unit="segments",
            )
        charged = characters(documents, markup=options.markup) * len(targets)
        await self._usage.charge(tenant, charged)
        return Admitted(pair, list(documents), runs, engine, memory_ids, segments, charged)

    @in_one_view  # the engines installed when it came in, however often it asks
    async def submit(
        self,
        tenant: str | None,
        pair: Pair,
        documents: Sequence[Document],
        options: JobOptions,
        targets: Sequence[str] = (),
    ) -> Job:
        """Admits, stores and queues a job (its shards, when it has any). With several
        ``targets`` (``pair.target`` first), one job into each of them: a copy of the
        segments per target, each translated by its own shards. With ``auto``, documents
        detected in the target make a job that failed as it was taken (``jobs.auto``)."""
        if pair.source == AUTO:
            documents = await self.detected(pair.target, documents, options.engine)
            if in_target(documents, pair.target):
                return await self._in_target(tenant, pair.target, documents, options)
        admitted = await self.admit(tenant, pair, documents, options, targets)
        several = tuple(targets) if len(targets) > 1 else ()
        job = Job(
            id=new_job_id(),
            tenant=tenant,
            source_lang=admitted.pair.source,
            target_lang=admitted.pair.target,
            engine=admitted.engine.name,
            pool=self.route(admitted.segments, admitted.engine),
            documents=len(admitted.documents),
            segments_total=admitted.segments * len(several or [pair.target]),
            options=options,
            created_at=self._clock.now(),
            characters=admitted.characters,
            targets=several,
        )
        shards = shards_of(job, self._settings, self._engines, admitted.runs)
        job.shards = len(shards)
        try:
            lookups = await self._reuse.prefill(
                job, shards, admitted.documents, admitted.memory_ids
            )
            created = await self._store.create(job, admitted.documents, shards, lookups)
        except Exception:
            # Not stored (the transaction rolled back): the tenant gets the charge back.
            self._usage.refund(tenant, admitted.characters, job.created_at, requests=1)
            raise
        _reused(job, created)
        if job.targets:
            # Each target's progress as stored: what its memories and the cache gave it.
            job = await self._store.get(job.id) or job
        for unit in shards or [job]:
            if unit.id not in created.finished:
                await self._intake.queued(unit)
        log.info(
            "job %s %s (%s, %d segments, %d reused, pool %s%s)",
            job.id,
            job.status,
            admitted.pair,
            admitted.segments,
            created.found,
            job.pool,
            f", {len(shards)} shards" if shards else "",
        )
        return job

    async def _in_target(
        self, tenant: str | None, target: str, documents: Sequence[Document], options: JobOptions
    ) -> Job:
        await self._check_callback(options.callback_url)  # its end is notified like any
        segments = check_segments(
            documents,
            max_segments=self._settings.max_segments_per_job,
            max_chars=self._settings.max_segment_chars,
        )
        job = failed_in_target(
            tenant, target, documents, options, segments=segments, now=self._clock.now()
        )
        await self._store.create(job, documents)
        log.info("job %s failed as it was taken: %s", job.id, job.error)
        return job

    async def _check_callback(self, url: str | None) -> None:
        """``InvalidRequest`` unless ``url`` (if given) may receive this job's notification;
        ``Conflict`` when this server sends none: the URL is fine, the server is not set up."""
        if url is None:
            return
        if self._settings.webhook_secret is None:
            raise Conflict(
                "callback_url: notifications are off on this server (DRAGOMAN_WEBHOOK_SECRET "
                "is not set)"
            )
        await check_target(url, allow_private=self._settings.webhook_allow_private)

    async def get(self, job_id: str, tenant: str | None) -> Job:
        job = await self._store.get(job_id)
        # Another tenant's job is reported missing, not forbidden: ids are not disclosed.
        if (
            job is None
            or job.parent_id is not None
            or (tenant is not None and job.tenant != tenant)
        ):
            raise NotFound(f"job {job_id} not found")
        return job

    async def get_moved(self, job_id: str, tenant: str | None, wait_s: float) -> Job:
        """``get`` once the job's status or progress moved, or after ``wait_s``: a long
        poll. A finished job is answered at once."""
        job = await self.get(job_id, tenant)
        if job.status.finished or wait_s <= 0:
            return job
        await self.waits.until_moved(job, wait_s)
        return await self.get(job_id, tenant)

    async def list_jobs(
        self, tenant: str | None, *, status: JobStatus | None, limit: int, cursor: str | None
    ) -> tuple[list[Job], str | None]:
        """The tenant's jobs, newest first, and the cursor of the next page (None: last)."""
        if cursor is not None and not re.fullmatch(CURSOR_PATTERN, cursor):
            raise InvalidRequest("cursor must be a value returned as next_cursor")
        return await self._store.list_jobs(tenant=tenant, status=status, limit=limit, cursor=cursor)

    async def counts(self) -> dict[JobStatus, int]:
        """How many jobs are in each status (for ``/metrics``)."""
        return await self._store.counts()

    async def result(
        self, job_id: str, tenant: str | None, *, sources: bool = False, target: str | None = None
    ) -> tuple[Job, list[Translated]]:
        """The job and each document as far as it is translated (with its source segments
        when ``sources``), each naming its target language: into every target of the job,
        target after target, or into ``target`` only."""
        job = await self.get(job_id, tenant)
        copy = copy_of(job, target)
        found = await self._store.documents(job.id, sources=sources, copy=copy)
        languages = job.target_langs if copy is None else [job.target_langs[copy]]
        per_copy = len(found) // len(languages)
        return job, [
            dataclasses.replace(doc, target_lang=languages[at // per_copy])
            for at, doc in enumerate(found)
        ]

    async def news(
        self, job_id: str, tenant: str | None, sent: Sequence[tuple[int, int]]
    ) -> tuple[Job, list[tuple[str, int]], list[NewSegment]]:
        """The job, its documents' names and sizes, and its translated segments outside
        the ``sent`` ranges of positions: what its events have not told yet."""
        job = await self.get(job_id, tenant)
        shapes, found = await self._store.translated_since(job.id, sent)
        return job, shapes, found

    async def tmx(
        self, job_id: str, tenant: str | None, target: str | None = None
    ) -> tuple[Job, bytes]:
        """The job and its translations so far (into ``target``, or every target) as TMX
        1.4 (``reuse.export``)."""
        job, documents = await self.result(job_id, tenant, sources=True, target=target)
        return job, job_tmx(job, documents)

    async def cancel(self, job_id: str, tenant: str | None) -> Job:
        job = await self.get(job_id, tenant)
        cancelled = await self._store.cancel(job.id, self._clock.now())
        if cancelled is None:
            raise Conflict(f"job {job_id} has already finished ({job.status})")
        self._intake.withdrawn(job_id)
        # Its attempts are fenced now: what is still untranslated never will be.
        left = [Document("", [text for _, text in await self._store.sources(job.id)])]
        self._usage.refund(tenant, characters(left, markup=job.options.markup), job.created_at)
        log.info("job %s cancelled", job_id)
        return cancelled

    def retention_cutoff(self) -> datetime:
        """Finished jobs (and deleted glossaries) older than this are deleted."""
        return self._clock.now() - timedelta(seconds=self._settings.result_retention_s)

    async def purge_expired(self) -> int:
        """Deletes the finished jobs past their retention (``result_retention_s``)."""
        removed = await self._store.purge(self.retention_cutoff())
        if removed:
            log.info("deleted %d finished jobs past their retention", removed)
        return removed
