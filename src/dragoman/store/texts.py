"""The source texts of a job's documents, to read beside their translations (the web UI's
job page): part of ``Jobs`` on the store's database."""

from __future__ import annotations

from sqlalchemy import select

from dragoman.store.database import Database
from dragoman.store.tables import documents, segments


class SqlTexts:
    _db: Database

    async def source_texts(self, job_id: str) -> list[tuple[str, str | None, list[str]]]:
        doc_query = (
            select(documents.c.name, documents.c.format, documents.c.segment_count)
            .where(documents.c.job_id == job_id)
            .order_by(documents.c.ordinal)
        )
        seg_query = (
            select(segments.c.source)
            .where(segments.c.job_id == job_id)
            .order_by(segments.c.position)
        )
        async with self._db.read() as conn:
            docs = (await conn.execute(doc_query)).all()
            texts: list[str] = [row.source for row in await conn.execute(seg_query)]
        out, start = [], 0
        for doc in docs:
            out.append((doc.name, doc.format, texts[start : start + doc.segment_count]))
            start += doc.segment_count
        return out
