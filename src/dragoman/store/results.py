"""What a job's segments have become: each document's translations so far and where they
came from (its sources too, when asked), and an uploaded file with its translations."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncConnection

from dragoman.models import SourceFile, Translated
from dragoman.store.database import Database
from dragoman.store.rows import origin_of, to_file
from dragoman.store.tables import documents, segments


def _translated(doc: Any, rows: list[Any], with_sources: bool) -> Translated:
    return Translated(
        name=doc.name,
        source_lang=doc.source_lang,
        format=doc.format,
        targets=[row.target for row in rows],
        origins=[origin_of(row) for row in rows],
        sources=[row.source for row in rows] if with_sources else None,
    )


async def _segment_rows(
    conn: AsyncConnection, job_id: str, with_sources: bool, first: int = 0, end: int | None = None
) -> list[Any]:
    """The job's segments from ``first`` to ``end``, in one statement: their targets and
    origins are read together, so they always agree."""
    columns = [segments.c.target, segments.c.origin]
    if with_sources:
        columns.append(segments.c.source)
    query = select(*columns).where(segments.c.job_id == job_id, segments.c.position >= first)
    if end is not None:
        query = query.where(segments.c.position < end)
    return list((await conn.execute(query.order_by(segments.c.position))).all())


class SqlResults:
    _db: Database

    async def documents(self, job_id: str, *, sources: bool = False) -> list[Translated]:
        doc_query = (
            select(
                documents.c.name,
                documents.c.source_lang,
                documents.c.format,
                documents.c.segment_count,
            )
            .where(documents.c.job_id == job_id)
            .order_by(documents.c.ordinal)
        )
        async with self._db.read() as conn:
            docs = (await conn.execute(doc_query)).all()
            rows = await _segment_rows(conn, job_id, sources)
        out, start = [], 0
        for doc in docs:
            out.append(_translated(doc, rows[start : start + doc.segment_count], sources))
            start += doc.segment_count
        return out

    async def source_file(self, job_id: str, ordinal: int) -> tuple[SourceFile, Translated] | None:
        query = select(documents).where(
            documents.c.job_id == job_id, documents.c.ordinal == ordinal
        )
        async with self._db.read() as conn:
            doc = (await conn.execute(query)).first()
            found = to_file(doc) if doc is not None else None
            if doc is None or found is None:
                return None
            end = doc.first_position + doc.segment_count
            rows = await _segment_rows(conn, job_id, False, doc.first_position, end)
        return found, _translated(doc, rows, False)
