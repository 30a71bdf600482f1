"""BatchRequestsManager: validates, routes to a pool, persists, hands the job to the
dispatcher, and deletes finished jobs once their retention is over."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import itertools
import logging
import re
import uuid
from collections.abc import Callable, Sequence
from datetime import timedelta
from typing import Protocol

from dragoman.bus import Bus
from dragoman.detection import AUTO, Detection, best, sample, sources_into
from dragoman.engines import Engine, Engines, Pair
from dragoman.errors import Conflict, InvalidRequest, NotFound, TransientError, UnsupportedPair
from dragoman.formats.markup import parse_stored
from dragoman.glossaries import Terminology
from dragoman.messages import WATCHDOG_QUEUE, Queued
from dragoman.models import Document, Job, JobStatus, Pool, Priority, Translated
from dragoman.queue import BatchRequestsQueue, Waiting
from dragoman.reuse import Reuse
from dragoman.reuse.export import job_tmx
from dragoman.reuse.memories import TranslationMemories
from dragoman.runtime import Runtime
from dragoman.store import Created
from dragoman.usage import UsageMeter
from dragoman.validation import check_segments
from dragoman.webhooks.targets import check_target

log = logging.getLogger(__name__)

MULTIPLE = "mul"  # ISO 639-2: the source of a job whose documents are in several languages

# A cursor is a job's sequence number; 18 digits stay within every store's integers.
CURSOR_PATTERN = r"^[0-9]{1,18}$"


class Intake(Protocol):
    """How a stored job reaches the dispatcher (the watchdog)."""

    async def queued(self, job: Job) -> None: ...

    def withdrawn(self, job_id: str) -> None:
        """The job was cancelled while it waited."""
        ...


class LocalIntake:
    """Same process as the watchdog: straight into its queue."""

    def __init__(self, queue: BatchRequestsQueue, wake: Callable[[], None]) -> None:
        self._queue = queue
        self._wake = wake

    async def queued(self, job: Job) -> None:
        self._queue.push(Waiting.of(job))
        self._wake()

    def withdrawn(self, job_id: str) -> None:
        self._queue.remove(job_id)


class BusIntake:
    """Another process runs the watchdog: tell it over the bus. The job is stored already,
    so a lost notice only delays it until the watchdog's next sweep reloads the queue."""

    def __init__(self, bus: Bus) -> None:
        self._bus = bus

    async def queued(self, job: Job) -> None:
        try:
            await self._bus.publish(WATCHDOG_QUEUE, Queued.of(job).to_body())
        except TransientError as exc:
            log.warning("job %s stored; its notice to the watchdog was lost: %s", job.id, exc)

    def withdrawn(self, job_id: str) -> None:
        """The watchdog skips a cancelled job when its turn comes."""


def _language_runs(documents: Sequence[Document]) -> list[tuple[str, int, int]]:
    """``(source language, first, end)`` of each run of documents in one language, by
    segment position; documents without segments take no place."""
    runs: list[tuple[str, int, int]] = []
    position = 0
    for doc in documents:
        if not doc.segments:
            continue
        source, end = doc.source_lang or "", position + len(doc.segments)
        if runs and runs[-1][0] == source:
            runs[-1] = (source, runs[-1][1], end)
        else:
            runs.append((source, position, end))
        position = end
    return runs


def characters(documents: Sequence[Document], *, markup: bool) -> int:
    """The characters a job is charged: its segments' text, inline codes left out."""
    if markup:
        return sum(len(parse_stored(s).plain) for doc in documents for s in doc.segments)
    return sum(len(s) for doc in documents for s in doc.segments)


def _reused(job: Job, created: Created) -> None:
    """The job as stored: segments found in memories or the cache are done, and a job
    found whole succeeded when it was submitted (it is never dispatched)."""
    job.segments_done = created.found
    if job.id in created.finished:
        job.status = JobStatus.SUCCEEDED
        job.finished_at = job.created_at


class BatchRequestsManager:
    """Every use case of a job: submit, get, list, result, cancel, and the purge of finished
    jobs past their retention. The HTTP routes only parse, call this and shape answers."""

    def __init__(self, runtime: Runtime, *, engines: Engines, intake: Intake) -> None:
        self._settings = runtime.settings
        self._store = runtime.store
        self._clock = runtime.clock
        self._engines = engines
        self._intake = intake
        self._cleaner: asyncio.Task[None] | None = None
        self.usage = UsageMeter(runtime)
        self.reuse = Reuse(runtime, engines=engines)
        self.memories = TranslationMemories(runtime)
        self.terminology = Terminology(runtime, engines=engines)

    def route(self, segments: int, engine: Engine) -> Pool:
        """Big jobs of an engine that runs on GPUs go to the GPU pool when it may have
        workers; everything else to the CPU pool. (Waiting GPU jobs fall back to the CPU
        pool when no GPU worker shows up: see the watchdog.)"""
        big = segments >= self._settings.gpu_threshold_segments
        gpu = big and engine.gpu_capable and self._settings.gpu_max_workers > 0
        return Pool.GPU if gpu else Pool.CPU

    def shards(
        self, job: Job, runs: Sequence[tuple[str, int, int]] = (), engine: str | None = None
    ) -> list[Job]:
        """The shards of a job: contiguous ranges of about equal size, at most
        ``shard_segments`` each, that several workers translate in parallel; none for a
        smaller job. ``runs`` (``(source language, first, end)``, for a job of documents in
        several languages) makes at least one shard per run, each from its own language,
        by ``engine`` or the default engine of its pair."""
        size = self._settings.shard_segments
        mixed = bool(runs)
        if not mixed:
            if job.segments_total <= size:
                return []
            runs = [(job.source_lang, 0, job.segments_total)]
        out = []
        for source, start, stop in runs:
            pair = Pair(source, job.target_lang)
            chosen = self._engines.resolve(pair, engine) if mixed else None
            count = -(-(stop - start) // size)
            bounds = [start + (stop - start) * k // count for k in range(count + 1)]
            out += [
                Job(
                    id=uuid.uuid4().hex,
                    tenant=job.tenant,
                    source_lang=source,
                    target_lang=job.target_lang,
                    engine=chosen.name if chosen else job.engine,
                    pool=self.route(end - first, chosen) if chosen else job.pool,
                    priority=job.priority,
                    documents=0,
                    segments_total=end - first,
                    created_at=job.created_at,
                    parent_id=job.id,
                    first_position=first,
                    end_position=end,
                    markup=job.markup,
                    memories=job.memories,
                    glossary=job.glossary,
                    use_cache=job.use_cache,
                )
                for first, end in itertools.pairwise(bounds)
            ]
        return out

    async def detect(
        self, target: str, texts: Sequence[str], engine: str | None = None
    ) -> list[Detection]:
        """The source language of each text, among those with a pair into ``target``."""
        candidates = sources_into(self._engines, target, engine)
        if not candidates:
            raise UnsupportedPair(f"no installed pair translates into {target}; see /v1/languages")
        return await asyncio.to_thread(best, texts, candidates)

    async def detected(
        self, target: str, documents: Sequence[Document], engine: str | None = None
    ) -> list[Document]:
        """``documents``, each with the source language detected from a sample of its
        segments (those that have one already keep it)."""
        candidates = sources_into(self._engines, target, engine)
        if not candidates:
            raise UnsupportedPair(f"no installed pair translates into {target}; see /v1/languages")
        unknown = [doc for doc in documents if doc.source_lang is None]
        samples = [sample(doc.segments) for doc in unknown]
        found = iter(await asyncio.to_thread(best, samples, candidates))
        return [
            doc if doc.source_lang else dataclasses.replace(doc, source_lang=next(found).language)
            for doc in documents
        ]

    async def submit(
        self,
        *,
        tenant: str | None,
        pair: Pair,
        documents: Sequence[Document],
        priority: Priority = Priority.NORMAL,
        engine: str | None = None,
        markup: bool = False,
        callback_url: str | None = None,
        document_key: str | None = None,
        memories: tuple[str, ...] = (),
        glossary: str | None = None,
        use_cache: bool = True,
    ) -> Job:
        """Stores a job and queues it. With ``pair.source == "auto"``, each document's
        language is detected; documents in several languages make a job of ``mul`` (ISO
        639: multiple languages) with one shard per run of documents in one language."""
        runs: list[tuple[str, int, int]] = []
        auto = pair.source == AUTO
        if auto:
            documents = await self.detected(pair.target, documents, engine)
            runs = _language_runs(documents)
            languages = {source for source, _, _ in runs} or {documents[0].source_lang or ""}
            if len(languages) == 1:
                pair, runs = Pair(languages.pop(), pair.target), []
            else:
                pair = Pair(MULTIPLE, pair.target)
        chosen = self._engines.resolve(Pair(runs[0][0], pair.target) if runs else pair, engine)
        await self.check_callback(callback_url)
        memory_ids = await self.memories.ids(tenant, memories)
        # With auto, a glossary serves the documents detected in its source language.
        await self.terminology.check(glossary, tenant, None if auto else pair.source, pair.target)
        total = check_segments(
            documents,
            max_segments=self._settings.max_segments_per_job,
            max_chars=self._settings.max_segment_chars,
        )
        await self.usage.charge(tenant, characters(documents, markup=markup))
        job = Job(
            id=uuid.uuid4().hex,
            tenant=tenant,
            source_lang=pair.source,
            target_lang=pair.target,
            engine=chosen.name,
            pool=self.route(total, chosen),
            priority=priority,
            documents=len(documents),
            segments_total=total,
            created_at=self._clock.now(),
            markup=markup,
            callback_url=callback_url,
            document_key=document_key,
            memories=memories,
            glossary=glossary,
            use_cache=use_cache,
        )
        shards = self.shards(job, runs, engine)
        job.shards = len(shards)
        lookups = await self.reuse.prefill(job, shards, documents, memory_ids)
        created = await self._store.create(job, documents, shards, lookups)
        _reused(job, created)
        for unit in shards or [job]:
            if unit.id not in created.finished:
                await self._intake.queued(unit)
        log.info(
            "job %s %s (%s, %d segments, %d reused, pool %s%s)",
            job.id,
            job.status,
            pair,
            total,
            created.found,
            job.pool,
            f", {len(shards)} shards" if shards else "",
        )
        return job

    async def check_callback(self, url: str | None) -> None:
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

    async def list_jobs(
        self, tenant: str | None, *, status: JobStatus | None, limit: int, cursor: str | None
    ) -> tuple[list[Job], str | None]:
        """The tenant's jobs, newest first, and the cursor of the next page (None: last)."""
        if cursor is not None and not re.fullmatch(CURSOR_PATTERN, cursor):
            raise InvalidRequest("cursor must be a value returned as next_cursor")
        return await self._store.list_jobs(tenant=tenant, status=status, limit=limit, cursor=cursor)

    async def result(
        self, job_id: str, tenant: str | None, *, sources: bool = False
    ) -> tuple[Job, list[Translated]]:
        """The job and each document as far as it is translated (with its source segments
        when ``sources``)."""
        job = await self.get(job_id, tenant)
        return job, await self._store.documents(job.id, sources=sources)

    async def tmx(self, job_id: str, tenant: str | None) -> tuple[Job, bytes]:
        """The job and its translations so far as TMX 1.4 (``reuse.export``)."""
        job = await self.get(job_id, tenant)
        return job, await job_tmx(self._store, job)

    async def cancel(self, job_id: str, tenant: str | None) -> Job:
        job = await self.get(job_id, tenant)
        cancelled = await self._store.cancel(job.id, self._clock.now())
        if cancelled is None:
            raise Conflict(f"job {job_id} has already finished ({job.status})")
        self._intake.withdrawn(job_id)
        # Its attempts are fenced now: what is still untranslated never will be.
        left = [Document("", [text for _, text in await self._store.sources(job.id)])]
        self.usage.refund(tenant, characters(left, markup=job.markup), job.created_at)
        log.info("job %s cancelled", job_id)
        return cancelled

    async def purge_expired(self) -> int:
        cutoff = self._clock.now() - timedelta(seconds=self._settings.result_retention_s)
        removed = await self._store.purge(cutoff)
        await self.terminology.purge(cutoff)
        if removed:
            log.info("deleted %d finished jobs past their retention", removed)
        return removed

    def start(self) -> None:
        self.usage.start()
        self._cleaner = asyncio.create_task(self._clean_forever(), name="manager-cleaner")

    async def _clean_forever(self) -> None:
        interval = min(60.0, self._settings.result_retention_s / 2)
        while True:
            await asyncio.sleep(interval)
            try:
                await self.purge_expired()
            except Exception:
                log.exception("purging finished jobs failed; will retry")
            try:
                await self.reuse.trim()
            except Exception:
                log.exception("trimming the segment cache failed; will retry")

    async def stop(self) -> None:
        if self._cleaner is not None:
            self._cleaner.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._cleaner
        await self.usage.stop()
