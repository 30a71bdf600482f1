"""The nouns every part shares: jobs, their states, priorities and pools."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any, NamedTuple


class JobStatus(StrEnum):
    """Where a job stands. Each state, in order of a normal life:

    - ``queued``: accepted and stored, waiting for capacity in its pool.
    - ``submitted``: dispatched to the pool's worker queue (attempt counted), no heartbeat yet.
    - ``running``: a worker heartbeats for it; ``segments_done`` grows.
    - ``succeeded``: every segment has its translation.
    - ``failed``: gave up, with an error saying why (bad input, engine, attempts exhausted).
    - ``cancelled``: the client asked to stop it.
    """

    QUEUED = "queued"
    SUBMITTED = "submitted"
    RUNNING = "running"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    CANCELLED = "cancelled"

    @property
    def finished(self) -> bool:
        return self in FINISHED


FINISHED = frozenset({JobStatus.SUCCEEDED, JobStatus.FAILED, JobStatus.CANCELLED})
IN_FLIGHT = frozenset({JobStatus.SUBMITTED, JobStatus.RUNNING})


class Priority(StrEnum):
    LOW = "low"
    NORMAL = "normal"
    HIGH = "high"

    @property
    def rank(self) -> int:
        """Higher runs first."""
        return _RANKS[self]


_RANKS = {Priority.LOW: 0, Priority.NORMAL: 1, Priority.HIGH: 2}


class Pool(StrEnum):
    CPU = "cpu"
    GPU = "gpu"


class Output(NamedTuple):
    """One segment's translation as an engine call made it: the model's confidence in it
    (the mean probability of its tokens, 0 to 1; None where the engine gives none) and
    whether the job's glossary had terms in the segment."""

    text: str
    confidence: float | None = None
    terms: bool = False


def to_review(confidence: float | None, review_below: float | None) -> bool:
    """Whether a translation is to be reviewed: a confidence below the job's threshold. One
    without a confidence (a memory match, an engine that gives none) never is."""
    return confidence is not None and review_below is not None and confidence < review_below


class Origin(StrEnum):
    """Where a segment's translation came from.

    - ``mt``: the job's engine translated it.
    - ``cache``: the engine's earlier output for the same text, pair, engine version and
      settings, from the tenant's segment cache.
    - ``tm``: an exact match in one of the translation memories the job named.
    """

    MT = "mt"
    CACHE = "cache"
    TM = "tm"


@dataclass(frozen=True, slots=True, order=True)
class Pair:
    """A language pair, as canonical codes: ``en-fr`` translates English into French."""

    source: str
    target: str

    def __str__(self) -> str:
        return f"{self.source}-{self.target}"


def utcnow() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True, slots=True)
class SourceFile:
    """An uploaded file as the store keeps it: its bytes, its format, and how many segments
    each of its units became (``formats.prepare``), all a download needs to rebuild it."""

    format: str
    content: bytes
    layout: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class Document:
    name: str
    segments: list[str]
    file: SourceFile | None = None  # None: plain segments sent as such
    source_lang: str | None = None  # detected, when the job's source was "auto"


@dataclass(frozen=True, slots=True)
class Translated:
    """One document of a job as far as it is translated, read at once: its translations
    (``None``: not yet) and where each came from, with its sources when asked for."""

    name: str
    source_lang: str | None  # detected, when the job's source was "auto"; else None
    format: str | None  # an uploaded file's format; None: sent as plain segments
    targets: list[str | None]
    origins: list[Origin | None]
    sources: list[str] | None = None
    # Per segment, as its translation was made (all None while it has none; ``engines`` and
    # ``models`` None for a memory match, ``confidences`` None where the engine gives none).
    engines: list[str | None] = field(default_factory=list)
    models: list[str | None] = field(default_factory=list)
    terms: list[bool | None] = field(default_factory=list)
    confidences: list[float | None] = field(default_factory=list)
    # The language of ``targets`` (None: the job's one target).
    target_lang: str | None = None


@dataclass(frozen=True, slots=True)
class TargetProgress:
    """Where one target of a job into several languages stands."""

    target_lang: str
    status: JobStatus
    segments_total: int
    segments_done: int


@dataclass(frozen=True, slots=True)
class JobError:
    code: str
    message: str


@dataclass(frozen=True, slots=True)
class JobOptions:
    """What a submission asks of its job besides its pair and documents; its shards share
    them. Stored in the job's row, one column each."""

    priority: Priority = Priority.NORMAL
    # The engine asked for; None: the pair's default (``Job.engine`` is the one resolved).
    engine: str | None = None
    # Segments carry inline codes (a file job: ``formats.markup``'s stored form).
    markup: bool = False
    # Where the end of a top-level job is announced (a signed POST), if anywhere.
    callback_url: str | None = None
    # The tenant's translation memories whose exact matches replace machine translation.
    memories: tuple[str, ...] = ()
    # The tenant's glossary whose terms every translation keeps, if any.
    glossary: str | None = None
    # Whether segments translated before may come from the segment cache.
    use_cache: bool = True
    # The secret of a job submitted through the DeepL facade's document upload.
    document_key: str | None = None
    # Words the engine does not know come back marked (Apertium's "*word").
    mark_unknown: bool = False
    # The Idempotency-Key of the request that submitted it, if it had one.
    idempotency_key: str | None = None
    # Translations whose confidence is below this (0 to 1) are to be reviewed; None: no
    # threshold, nothing counted.
    review_below: float | None = None
    # When the client needs it done (UTC): within a tenant's turn, earliest first.
    deadline: datetime | None = None


@dataclass(slots=True)
class Job:
    """A job as the store keeps it (its segments live apart, see ``JobStore``).

    A big job is split into shards: child jobs that workers take like any other, each
    covering the parent's segment positions ``[first_position, end_position)``. The parent
    keeps the documents and segments and is never dispatched itself.
    """

    id: str
    tenant: str | None
    source_lang: str
    target_lang: str
    engine: str
    pool: Pool
    documents: int
    segments_total: int
    options: JobOptions = JobOptions()
    status: JobStatus = JobStatus.QUEUED
    segments_done: int = 0
    attempts: int = 0
    created_at: datetime = field(default_factory=utcnow)
    submitted_at: datetime | None = None
    started_at: datetime | None = None
    finished_at: datetime | None = None
    heartbeat_at: datetime | None = None
    error: JobError | None = None
    parent_id: str | None = None
    first_position: int | None = None
    end_position: int | None = None
    shards: int = 0  # on a parent, how many; 0 for a plain job and for a shard
    # The characters charged when it was submitted; None on a shard and on a job stored
    # before they were kept.
    characters: int | None = None
    # Segments stored so far whose confidence is below ``options.review_below``.
    segments_to_review: int = 0
    # When the watchdog last predicted it would end; None: not predicted (no speed measured
    # in its pool yet).
    eta_at: datetime | None = None
    # A job into several languages: all of them, ``target_lang`` first. It keeps a copy of
    # its segments per target, one after the other, and its shards each translate part of
    # one copy into theirs. Empty for a job of one target, and for a shard.
    targets: tuple[str, ...] = ()
    # Where each of ``targets`` stands, as read with the job (not stored: its shards say).
    by_target: tuple[TargetProgress, ...] = ()

    # Read-only views of ``options`` for the feature code that reads them (reuse,
    # glossaries, webhooks); new code reads ``job.options``.
    @property
    def is_shard(self) -> bool:
        return self.parent_id is not None

    @property
    def is_parent(self) -> bool:
        return self.shards > 0

    @property
    def target_langs(self) -> tuple[str, ...]:
        """Every language it translates into, ``target_lang`` first."""
        return self.targets or (self.target_lang,)

    @property
    def segments_per_target(self) -> int:
        """The segments of one copy: what its documents hold."""
        return self.segments_total // len(self.target_langs)

    def eta_s(self, now: datetime) -> float | None:
        """Seconds until it should end, as last predicted; None once it ended or while
        nothing is predicted."""
        if self.status.finished or self.eta_at is None:
            return None
        return max(0.0, (self.eta_at - now).total_seconds())

    def at_risk(self, now: datetime) -> bool:
        """Whether an unfinished job with a deadline will miss it: the deadline passed, or
        it is predicted to end after it."""
        deadline = self.options.deadline
        if deadline is None or self.status.finished:
            return False
        return now > deadline or (self.eta_at is not None and self.eta_at > deadline)


class RelayStatus(StrEnum):
    """A relayed request: ``open`` until its answer is forwarded or it is given up."""

    OPEN = "open"
    ANSWERED = "answered"
    FAILED = "failed"


@dataclass(slots=True)
class RelayRequest:
    """A request that service A sent service B through the watchdog (see ``dragoman.relay``)."""

    id: str
    reply_to: str
    target: str
    payload: dict[str, Any]
    status: RelayStatus = RelayStatus.OPEN
    created_at: datetime = field(default_factory=utcnow)
    heartbeat_at: datetime = field(default_factory=utcnow)
    finished_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class WorkerInfo:
    """One live worker as the registry last saw it."""

    id: str
    pool: Pool
    host: str  # host name, or the pod's name on Kubernetes
    busy: bool
    # What it has loaded, as "engine:source-target" ("apertium:en-es", ...)
    warm_pairs: frozenset[str] = field(default_factory=frozenset)
    last_seen: datetime | None = None
    pid: int | None = None
    # Counters since the worker started, for the dashboard (a rate is taken from their
    # deltas): segments it committed, engine calls it made and the segments in them.
    segments_translated: int = 0
    batches: int = 0
    batch_segments: int = 0


@dataclass(frozen=True, slots=True)
class Usage:
    """What a tenant used in one period (a calendar month, UTC)."""

    characters: int = 0
    requests: int = 0


@dataclass(frozen=True, slots=True)
class MemoryInfo:
    """A tenant's translation memory, as listed: its units, the languages they have, and the
    language its file declared as the source (None: any variant may be the source)."""

    name: str
    units: int
    languages: tuple[str, ...]
    source_lang: str | None
    created_at: datetime
    updated_at: datetime


@dataclass(frozen=True, slots=True)
class Dictionary:
    """A glossary's terms for one language pair: how many entries, and the glossary's
    ``revision`` when they were last written (what keys the translations made with them)."""

    source_lang: str
    target_lang: str
    entry_count: int
    revision: int = 1

    @property
    def pair(self) -> Pair:
        return Pair(self.source_lang, self.target_lang)


@dataclass(frozen=True, slots=True)
class Glossary:
    """A tenant's terms: one dictionary per language pair, at least one, in the order they
    were added. ``revision`` counts its versions (1 when created, one more per change). A
    deleted one disappears from its tenant's view but stays for the jobs that named it
    until the retention of results is over.

    ``source_lang``, ``target_lang`` and ``entry_count`` are its first dictionary's: what
    the one-pair views (``/v1/glossaries``, DeepL's ``/v2/glossaries``) show."""

    id: str
    tenant: str | None
    name: str
    dictionaries: tuple[Dictionary, ...]
    created_at: datetime
    deleted_at: datetime | None = None
    revision: int = 1

    @property
    def source_lang(self) -> str:
        return self.dictionaries[0].source_lang

    @property
    def target_lang(self) -> str:
        return self.dictionaries[0].target_lang

    @property
    def entry_count(self) -> int:
        return self.dictionaries[0].entry_count

    def dictionary(self, pair: Pair) -> Dictionary | None:
        """Its dictionary for ``pair``, if it has one."""
        return next((d for d in self.dictionaries if d.pair == pair), None)

    def version(self, pair: Pair) -> str:
        """What a job's translations of ``pair`` with this glossary are cached under: the
        glossary, the pair and the revision of its dictionary for it (0: none), so an edit
        never serves a translation made with other entries."""
        found = self.dictionary(pair)
        return glossary_version(self.id, pair, found.revision if found else 0)


def glossary_version(glossary_id: str, pair: Pair, revision: int) -> str:
    """``Glossary.version`` from its parts."""
    return f"{glossary_id}:{pair}:{revision}"
