"""Group commit: the job creations on their way share one transaction, and the lookups in
memories and the segment cache that go with them (``prefill``) one query per kind."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from sqlalchemy import Connection, insert

from dragoman.models import Document, Job
from dragoman.store.database import Database
from dragoman.store.prefill import Created, Creation, Prefill, outcome, prefill
from dragoman.store.rows import content_rows, job_row
from dragoman.store.tables import documents, jobs, segments

_Row = dict[str, Any]
_Pending = tuple[Creation, list[_Row], asyncio.Future[Created]]


class GroupCommit:
    def __init__(self, db: Database) -> None:
        self._db = db
        self._pending: list[_Pending] = []
        self._flusher: asyncio.Task[None] | None = None

    async def create(
        self,
        job: Job,
        docs: Sequence[Document],
        shards: Sequence[Job],
        lookups: Prefill | None = None,
    ) -> Created:
        """Stores a job, its shards and its documents in the next transaction, with the
        translations ``lookups`` finds."""
        future: asyncio.Future[Created] = asyncio.get_running_loop().create_future()
        try:
            # Built here, not in the flusher: a creation that cannot become rows fails
            # its caller alone.
            doc_rows, seg_rows = content_rows(job.id, docs, len(job.target_langs))
            job_rows = [job_row(job), *(job_row(shard) for shard in shards)]
        except Exception as exc:
            future.set_exception(exc)
            return await future
        self._pending.append((Creation(job, shards, lookups, job_rows, seg_rows), doc_rows, future))
        if self._flusher is None or self._flusher.done():
            self._flusher = asyncio.create_task(self._flush())
        return await future

    async def _flush(self) -> None:
        await asyncio.sleep(0)  # let the submissions already on their way join this batch
        while self._pending:
            batch, self._pending = self._pending, []
            try:
                created = await self._write(batch)
            except Exception as exc:
                _settle(batch, exc)
            else:
                for (*_, future), done in zip(batch, created, strict=True):
                    if not future.done():
                        future.set_result(done)

    async def _write(self, batch: list[_Pending]) -> list[Created]:
        creations = [creation for creation, _, _ in batch]
        doc_rows = [row for _, rows, _ in batch for row in rows]
        # One hand-off for the whole transaction (ADR 0021): lookups, then every insert.
        rows = len(doc_rows) + sum(len(c.job_rows) + len(c.seg_rows) for c in creations)
        await self._db.writing(lambda conn: _insert(conn, creations, doc_rows), rows=rows)
        return [outcome(creation) for creation in creations]


def _insert(conn: Connection, creations: list[Creation], doc_rows: list[_Row]) -> None:
    # A job found whole finishes when it was submitted.
    prefill(conn, creations, max(c.job.created_at for c in creations))
    job_rows = _uniform([row for c in creations for row in c.job_rows], "finished_at")
    seg_rows = _uniform(
        [row for c in creations for row in c.seg_rows],
        "target",
        "origin",
        "engine",
        "model",
        "terms",
        "confidence",
    )
    conn.execute(_JOBS, job_rows)
    if doc_rows:
        conn.execute(_DOCUMENTS, doc_rows)
    if seg_rows:
        conn.execute(_SEGMENTS, seg_rows)


_JOBS, _DOCUMENTS, _SEGMENTS = insert(jobs), insert(documents), insert(segments)


def _uniform(rows: list[_Row], *keys: str) -> list[_Row]:
    """Rows of one multi-row insert must all name the same columns."""
    if any(key in row for row in rows for key in keys):
        for row in rows:
            for key in keys:
                row.setdefault(key, None)
    return rows


def _settle(batch: list[_Pending], exc: Exception) -> None:
    for *_, future in batch:
        if not future.done():
            future.set_exception(exc)
