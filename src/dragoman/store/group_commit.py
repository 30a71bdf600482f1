"""Group commit: the job creations on their way share one transaction."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from sqlalchemy import insert

from dragoman.models import Document, Job
from dragoman.store.database import Database
from dragoman.store.rows import content_rows, job_row
from dragoman.store.tables import documents, jobs, segments

_Row = dict[str, Any]
_Create = tuple[Job, Sequence[Document], Sequence[Job], asyncio.Future[None]]


class GroupCommit:
    def __init__(self, db: Database) -> None:
        self._db = db
        self._pending: list[_Create] = []
        self._flusher: asyncio.Task[None] | None = None

    async def create(self, job: Job, docs: Sequence[Document], shards: Sequence[Job]) -> None:
        """Stores a job, its shards and its documents in the next transaction."""
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._pending.append((job, docs, shards, future))
        if self._flusher is None or self._flusher.done():
            self._flusher = asyncio.create_task(self._flush())
        await future

    async def _flush(self) -> None:
        await asyncio.sleep(0)  # let the submissions already on their way join this batch
        while self._pending:
            batch, self._pending = self._pending, []
            try:
                # Inside the try: a creation that cannot become rows fails its callers
                # rather than the flusher, which would leave every caller waiting.
                job_rows, doc_rows, seg_rows = _rows(batch)
                async with self._db.tx() as conn:
                    await conn.execute(insert(jobs), job_rows)
                    if doc_rows:
                        await conn.execute(insert(documents), doc_rows)
                    if seg_rows:
                        await conn.execute(insert(segments), seg_rows)
            except Exception as exc:
                _settle(batch, exc)
            else:
                _settle(batch, None)


def _rows(batch: list[_Create]) -> tuple[list[_Row], list[_Row], list[_Row]]:
    """The job, document and segment rows of a batch of creations."""
    job_rows: list[_Row] = []
    doc_rows: list[_Row] = []
    seg_rows: list[_Row] = []
    for job, docs, shards, _ in batch:
        job_rows.append(job_row(job))
        job_rows.extend(job_row(shard) for shard in shards)
        job_docs, job_segs = content_rows(job.id, docs)
        doc_rows += job_docs
        seg_rows += job_segs
    return job_rows, doc_rows, seg_rows


def _settle(batch: list[_Create], exc: Exception | None) -> None:
    for *_, future in batch:
        if future.done():
            continue
        if exc is None:
            future.set_result(None)
        else:
            future.set_exception(exc)
