"""What a worker and the watchdog write for several jobs at once (``Jobs.write_chunk`` and
``Jobs.finish_many``)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from dragoman.models import JobError, JobStatus


@dataclass(frozen=True, slots=True)
class ChunkWrite:
    """One job's translations from one engine chunk, written under its attempt."""

    job_id: str
    attempt: int
    results: Sequence[tuple[int, str]]  # (position, translation)


@dataclass(frozen=True, slots=True)
class Ending:
    """How one attempt of a job ends."""

    job_id: str
    attempt: int
    status: JobStatus
    error: JobError | None = None
