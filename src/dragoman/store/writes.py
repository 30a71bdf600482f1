"""What a worker and the watchdog write for several jobs at once (``Jobs.write_chunk`` and
``Jobs.finish_many``)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from dragoman.models import JobError, JobStatus, to_review


@dataclass(frozen=True, slots=True)
class ChunkWrite:
    """One job's translations from one engine chunk, written under its attempt."""

    job_id: str
    attempt: int
    results: Sequence[tuple[int, str]]  # (position, translation)
    # What made them: the engine and its model, and per result, in order, the model's
    # confidence and whether the job's glossary had terms in it (empty: none known).
    engine: str | None = None
    model: str | None = None
    confidences: Sequence[float | None] = ()
    terms: Sequence[bool] = ()
    # The job's threshold: the results whose confidence is below it are counted to review.
    review_below: float | None = None

    def rows(self) -> list[dict[str, Any]]:
        """The segment rows of its results (``attempts._WRITE_SEGMENT``'s values but the
        owner, ``j``)."""
        count = len(self.results)
        confidences: Sequence[float | None] = self.confidences or [None] * count
        terms: Sequence[bool | None] = self.terms or [None] * count
        return [
            {"p": position, "t": text, "e": self.engine, "m": self.model, "g": glossary, "c": c}
            for (position, text), c, glossary in zip(self.results, confidences, terms, strict=True)
        ]


def under_review(rows: Sequence[dict[str, Any]], review_below: float | None) -> int:
    """How many of the segment ``rows`` are to be reviewed under ``review_below``."""
    return sum(to_review(row["c"], review_below) for row in rows) if review_below else 0


@dataclass(frozen=True, slots=True)
class Ending:
    """How one attempt of a job ends."""

    job_id: str
    attempt: int
    status: JobStatus
    error: JobError | None = None
