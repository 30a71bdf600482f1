"""Rows ↔ models: how jobs, their documents and segments, workers and relayed requests are
stored, and which job rows are which."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from dragoman.models import (
    FINISHED,
    IN_FLIGHT,
    Document,
    Job,
    JobError,
    JobOptions,
    JobStatus,
    Origin,
    Pool,
    Priority,
    RelayRequest,
    RelayStatus,
    SourceFile,
    WorkerInfo,
)
from dragoman.store.tables import jobs

IN_FLIGHT_VALUES = [s.value for s in IN_FLIGHT]
FINISHED_VALUES = [s.value for s in FINISHED]
UNFINISHED_VALUES = [s.value for s in JobStatus if s not in FINISHED]
# Plain jobs and shards are dispatched; a parent only follows its shards.
DISPATCHABLE = jobs.c.shards == 0


# Each member by its stored value: ``JobStatus(value)`` goes through the enum's metaclass,
# 2 µs where a dict answers in a twentieth of that, three times per job read.
_STATUSES = {status.value: status for status in JobStatus}
_POOLS = {pool.value: pool for pool in Pool}
_PRIORITIES = {priority.value: priority for priority in Priority}


def aware(value: datetime | None) -> datetime | None:
    """``value`` in UTC: SQLite gives back naive times. Built anew rather than with
    ``replace(tzinfo=UTC)``, whose keyword parsing costs three times as much; a job read has
    up to eight of them."""
    if value is not None and value.tzinfo is None:
        return datetime(
            value.year,
            value.month,
            value.day,
            value.hour,
            value.minute,
            value.second,
            value.microsecond,
            UTC,
        )
    return value


def to_job(row: Any) -> Job:
    """The job of a ``jobs`` row. Read through the row's mapping: a Row's attributes cost
    about six times as much, and every read of a job (a status, a list, a claim) comes here."""
    row = row._mapping
    code = row["error_code"]
    error = JobError(code, row["error_message"] or "") if code else None
    return Job(
        id=row["id"],
        tenant=row["tenant"],
        source_lang=row["source_lang"],
        target_lang=row["target_lang"],
        engine=row["engine"],
        pool=_POOLS[row["pool"]],
        documents=row["documents"],
        segments_total=row["segments_total"],
        status=_STATUSES[row["status"]],
        segments_done=row["segments_done"],
        attempts=row["attempts"],
        created_at=aware(row["created_at"]) or datetime.now(UTC),
        submitted_at=aware(row["submitted_at"]),
        started_at=aware(row["started_at"]),
        finished_at=aware(row["finished_at"]),
        heartbeat_at=aware(row["heartbeat_at"]),
        error=error,
        parent_id=row["parent_id"],
        first_position=row["first_position"],
        end_position=row["end_position"],
        shards=row["shards"],
        options=JobOptions(
            priority=_PRIORITIES[row["priority"]],
            markup=bool(row["markup"]),
            callback_url=row["callback_url"],
            memories=tuple(json.loads(row["memories"])) if row["memories"] else (),
            glossary=row["glossary_id"],
            use_cache=bool(row["use_cache"]),
            document_key=row["document_key"],
            mark_unknown=bool(row["mark_unknown"]),
            idempotency_key=row["idempotency_key"],
            review_below=row["review_below"],
            deadline=aware(row["deadline"]),
        ),
        characters=row["characters"],
        segments_to_review=row["segments_to_review"],
        eta_at=aware(row["eta_at"]),
        targets=tuple(row["target_langs"].split(",")) if row["target_langs"] else (),
    )


def job_row(job: Job) -> dict[str, Any]:
    options = job.options
    return {
        "id": job.id,
        "tenant": job.tenant,
        "source_lang": job.source_lang,
        "target_lang": job.target_lang,
        "engine": job.engine,
        "pool": job.pool.value,
        "priority": options.priority.value,
        "status": job.status.value,
        # A job may be stored finished: found whole in memories, or failed as it was taken.
        "finished_at": job.finished_at,
        "error_code": job.error.code if job.error else None,
        "error_message": job.error.message if job.error else None,
        "documents": job.documents,
        "segments_total": job.segments_total,
        "segments_done": job.segments_done,
        "attempts": job.attempts,
        "created_at": job.created_at,
        "parent_id": job.parent_id,
        "first_position": job.first_position,
        "end_position": job.end_position,
        "shards": job.shards,
        "markup": options.markup,
        "callback_url": options.callback_url,
        "document_key": options.document_key,
        "memories": json.dumps(list(options.memories)) if options.memories else None,
        "glossary_id": options.glossary,
        "use_cache": options.use_cache,
        "mark_unknown": options.mark_unknown,
        "idempotency_key": options.idempotency_key,
        "deadline": options.deadline,
        "characters": job.characters,
        "review_below": options.review_below,
        "segments_to_review": job.segments_to_review,
        "target_langs": ",".join(job.targets) if job.targets else None,
    }


def content_rows(
    job_id: str, docs: Sequence[Document], copies: int = 1
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The document rows and segment rows of a job; positions run on across documents, and
    across the ``copies`` of its segments (one per target language), one after the other."""
    doc_rows: list[dict[str, Any]] = []
    seg_rows: list[dict[str, Any]] = []
    position = 0
    for ordinal, doc in enumerate(docs):
        doc_rows.append(
            {
                "job_id": job_id,
                "ordinal": ordinal,
                "name": doc.name,
                "first_position": position,
                "segment_count": len(doc.segments),
                "format": doc.file.format if doc.file else None,
                "content": doc.file.content if doc.file else None,
                "layout": json.dumps(list(doc.file.layout)) if doc.file else None,
                "source_lang": doc.source_lang,
            }
        )
        for text in doc.segments:
            seg_rows.append({"job_id": job_id, "position": position, "source": text})
            position += 1
    count = position
    for copy in range(1, copies):
        seg_rows += [
            {"job_id": job_id, "position": copy * count + row["position"], "source": row["source"]}
            for row in seg_rows[:count]
        ]
    return doc_rows, seg_rows


def origin_of(target: str | None, origin: str | None) -> Origin | None:
    """A segment's origin, from its row's target and origin columns; a target written
    without one is the engine's."""
    if target is None:
        return None
    return Origin(origin) if origin else Origin.MT


def to_file(row: Any) -> SourceFile | None:
    if row.format is None:
        return None
    return SourceFile(row.format, bytes(row.content), tuple(json.loads(row.layout)))


def to_worker(row: Any) -> WorkerInfo:
    return WorkerInfo(
        id=row.id,
        pool=Pool(row.pool),
        host=row.host,
        busy=bool(row.busy),
        warm_pairs=frozenset(json.loads(row.warm_pairs)),
        last_seen=aware(row.last_seen),
        pid=row.pid,
        segments_translated=row.segments_translated,
        batches=row.batches,
        batch_segments=row.batch_segments,
    )


def worker_row(worker: WorkerInfo, now: datetime) -> dict[str, Any]:
    """All but the id, which stays."""
    return {
        "pool": worker.pool.value,
        "host": worker.host,
        "pid": worker.pid,
        "busy": worker.busy,
        "warm_pairs": json.dumps(sorted(worker.warm_pairs)),
        "last_seen": now,
        "segments_translated": worker.segments_translated,
        "batches": worker.batches,
        "batch_segments": worker.batch_segments,
    }


def to_request(row: Any) -> RelayRequest:
    return RelayRequest(
        id=row.id,
        reply_to=row.reply_to,
        target=row.target,
        payload=json.loads(row.payload),
        status=RelayStatus(row.status),
        created_at=aware(row.created_at) or row.created_at,
        heartbeat_at=aware(row.heartbeat_at) or row.heartbeat_at,
        finished_at=aware(row.finished_at),
    )


def request_row(request: RelayRequest) -> dict[str, Any]:
    """A newly recorded request: open, whatever ``request.status`` says."""
    return {
        "id": request.id,
        "reply_to": request.reply_to,
        "target": request.target,
        "payload": json.dumps(request.payload),
        "status": RelayStatus.OPEN.value,
        "created_at": request.created_at,
        "heartbeat_at": request.heartbeat_at,
    }
