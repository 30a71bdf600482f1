"""The API side of a process (``Front``): the features, built once per process as peers
(usage, glossaries, memories, reuse, idempotency keys), the manager and file jobs over
them, synchronous text translation, the fleet view, and the chores that keep the store
trim. ``Serving`` is what a program that serves the public API exposes of it
(``api.deps.ApiParts``)."""

from __future__ import annotations

from dragoman.engines import Engines
from dragoman.fleet import Fleet
from dragoman.glossaries import Terminology
from dragoman.idempotency import IdempotentRequests
from dragoman.jobs import BatchRequestsManager, Intake
from dragoman.jobs.files import FileJobs
from dragoman.periodic import Periodic
from dragoman.programs import Program
from dragoman.reuse import Reuse
from dragoman.reuse.memories import TranslationMemories
from dragoman.runtime import Runtime
from dragoman.translation import TextTranslation
from dragoman.usage import UsageMeter


class Front:
    """The API side of a process: engines, the features, the manager, file jobs, text
    translation, the fleet view, and the chores that keep the store trim."""

    def __init__(self, runtime: Runtime, engines: Engines, intake: Intake) -> None:
        self.engines = engines
        self.usage = UsageMeter(runtime)
        self.reuse = Reuse(runtime, engines=engines)
        self.memories = TranslationMemories(runtime)
        self.terminology = Terminology(runtime, engines=engines)
        self.manager = BatchRequestsManager(
            runtime,
            engines=engines,
            intake=intake,
            usage=self.usage,
            memories=self.memories,
            terminology=self.terminology,
            reuse=self.reuse,
        )
        self.files = FileJobs(runtime, self.manager)
        self.translation = TextTranslation(
            runtime.settings,
            engines,
            runtime.metrics,
            usage=self.usage,
            terminology=self.terminology,
            cache=self.reuse,
            memories=self.memories,
        )
        self.fleet = Fleet(runtime.store, runtime.settings, runtime.clock)
        self.idempotency = IdempotentRequests(runtime)
        every_s = min(60.0, runtime.settings.result_retention_s / 2)
        self.chores = [
            Periodic("purging finished jobs", self.manager.purge_expired, every_s=every_s),
            Periodic("purging deleted glossaries", self._purge_glossaries, every_s=every_s),
            Periodic("trimming the segment cache", self.reuse.trim, every_s=every_s),
            Periodic("forgetting old idempotency keys", self.idempotency.purge, every_s=every_s),
        ]

    async def _purge_glossaries(self) -> int:
        # A deleted glossary's rows go with the results of the jobs that named it.
        return await self.terminology.purge(self.manager.retention_cutoff())

    def start(self) -> None:
        self.usage.start()
        for chore in self.chores:
            chore.start()

    async def stop(self) -> None:
        for chore in self.chores:
            await chore.stop()
        await self.usage.stop()  # flushes what is counted
        await self.manager.waits.close()
        await self.translation.close()
        await self.engines.close()


class Serving(Program):
    """A program that serves the public API: its ``front`` does the work of the routes."""

    front: Front

    @property
    def engines(self) -> Engines:
        return self.front.engines

    @property
    def manager(self) -> BatchRequestsManager:
        return self.front.manager

    @property
    def files(self) -> FileJobs:
        return self.front.files

    @property
    def translation(self) -> TextTranslation:
        return self.front.translation

    @property
    def usage(self) -> UsageMeter:
        return self.front.usage

    @property
    def terminology(self) -> Terminology:
        return self.front.terminology

    @property
    def memories(self) -> TranslationMemories:
        return self.front.memories

    @property
    def reuse(self) -> Reuse:
        return self.front.reuse

    @property
    def fleet(self) -> Fleet:
        return self.front.fleet

    @property
    def idempotency(self) -> IdempotentRequests:
        return self.front.idempotency
