"""Jobs with ``source_lang: auto``: each document's language detected from a sample of its
first segments, by ``detection``'s rule (the sources with a route into the target, and the
target itself, preferred in a near-tie), and what a detection may end in.

- A document in a language with no route into the target: ``UnroutedLanguage``, a 400
  naming the document and both languages; nothing is stored or charged.
- A document already in the target: the job is taken and stored ``failed`` at once with
  ``SAME_LANGUAGE``, uncharged, as DeepL ends such a document after its upload: the client
  holds a job to ask about, and its error says why. A job of several documents fails
  whole, its message naming those in the target: translating the others silently would
  leave a hole in a batch that a localization engineer expects complete.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Sequence
from datetime import datetime

from dragoman.detection import Detection, candidates, check_routes, identify, preferring
from dragoman.engines import Engines
from dragoman.jobs.ids import new_job_id
from dragoman.models import Document, Job, JobError, JobOptions, JobStatus, Pool

MULTIPLE = "mul"  # ISO 639-2: the source of a job whose documents are in several languages
SAME_LANGUAGE = JobError("source_is_target", "Source and target language are equal.")


async def detect(
    engines: Engines, target: str, texts: Sequence[str], engine: str | None = None
) -> list[Detection]:
    """The source language of each text; ``UnsupportedPair`` when nothing translates into
    ``target``."""
    preferred = preferring(candidates(engines, target, engine), target)
    return await asyncio.to_thread(identify, texts, preferred)


def with_sources(documents: Sequence[Document], found: Sequence[Detection]) -> list[Document]:
    """``documents``, those without a source language given theirs from ``found`` (one
    detection each, in order)."""
    each = iter(found)
    return [
        doc if doc.source_lang else dataclasses.replace(doc, source_lang=next(each).language)
        for doc in documents
    ]


def check_documents(
    engines: Engines, target: str, documents: Sequence[Document], engine: str | None
) -> None:
    """``UnroutedLanguage`` for the first document detected in a language that neither is
    ``target`` nor translates into it."""
    check_routes(
        [Detection(doc.source_lang or "", 0.0) for doc in documents],
        candidates(engines, target, engine),
        target,
        [doc.name for doc in documents],
    )


def in_target(documents: Sequence[Document], target: str) -> bool:
    return any(doc.source_lang == target for doc in documents)


def failed_in_target(
    tenant: str | None,
    target: str,
    documents: Sequence[Document],
    options: JobOptions,
    *,
    segments: int,
    now: datetime,
) -> Job:
    """The job of ``documents``, some of them in ``target``, as it is stored: failed."""
    error = SAME_LANGUAGE
    if len(documents) > 1:
        same = ", ".join(doc.name for doc in documents if doc.source_lang == target)
        error = JobError(error.code, f"{error.message} ({same}: {target})")
    languages = {doc.source_lang for doc in documents}
    return Job(
        id=new_job_id(),
        tenant=tenant,
        source_lang=target if len(languages) == 1 else MULTIPLE,
        target_lang=target,
        engine=options.engine or "",
        pool=Pool.CPU,
        documents=len(documents),
        segments_total=segments,
        options=options,
        status=JobStatus.FAILED,
        created_at=now,
        finished_at=now,
        error=error,
        characters=0,
    )
