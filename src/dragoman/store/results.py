"""What a job's segments have become: each document's translations so far, where they came
from, its detected language, and an uploaded file with its translations."""

from __future__ import annotations

from sqlalchemy import select

from dragoman.models import Origin, SourceFile
from dragoman.store.database import Database
from dragoman.store.rows import origin_of, to_file
from dragoman.store.tables import documents, segments


class SqlResults:
    _db: Database

    async def results(self, job_id: str) -> list[tuple[str, list[str | None]]]:
        doc_query = (
            select(documents.c.name, documents.c.segment_count)
            .where(documents.c.job_id == job_id)
            .order_by(documents.c.ordinal)
        )
        seg_query = (
            select(segments.c.target)
            .where(segments.c.job_id == job_id)
            .order_by(segments.c.position)
        )
        async with self._db.read() as conn:
            docs = (await conn.execute(doc_query)).all()
            targets: list[str | None] = [row.target for row in await conn.execute(seg_query)]
        out, start = [], 0
        for doc in docs:
            out.append((doc.name, targets[start : start + doc.segment_count]))
            start += doc.segment_count
        return out

    async def origins(self, job_id: str) -> list[list[Origin | None]]:
        doc_query = (
            select(documents.c.segment_count)
            .where(documents.c.job_id == job_id)
            .order_by(documents.c.ordinal)
        )
        seg_query = (
            select(segments.c.target, segments.c.origin)
            .where(segments.c.job_id == job_id)
            .order_by(segments.c.position)
        )
        async with self._db.read() as conn:
            counts = [row.segment_count for row in await conn.execute(doc_query)]
            found = [origin_of(row) for row in await conn.execute(seg_query)]
        out, start = [], 0
        for count in counts:
            out.append(found[start : start + count])
            start += count
        return out

    async def translations(self, job_id: str) -> list[list[tuple[str, str | None, Origin | None]]]:
        doc_query = (
            select(documents.c.segment_count)
            .where(documents.c.job_id == job_id)
            .order_by(documents.c.ordinal)
        )
        seg_query = (
            select(segments.c.source, segments.c.target, segments.c.origin)
            .where(segments.c.job_id == job_id)
            .order_by(segments.c.position)
        )
        async with self._db.read() as conn:
            counts = [row.segment_count for row in await conn.execute(doc_query)]
            rows = [(r.source, r.target, origin_of(r)) for r in await conn.execute(seg_query)]
        out, start = [], 0
        for count in counts:
            out.append(rows[start : start + count])
            start += count
        return out

    async def document_languages(self, job_id: str) -> list[str | None]:
        query = (
            select(documents.c.source_lang)
            .where(documents.c.job_id == job_id)
            .order_by(documents.c.ordinal)
        )
        async with self._db.read() as conn:
            return [row.source_lang for row in await conn.execute(query)]

    async def source_file(
        self, job_id: str, ordinal: int
    ) -> tuple[str, SourceFile, list[str | None]] | None:
        query = select(documents).where(
            documents.c.job_id == job_id, documents.c.ordinal == ordinal
        )
        async with self._db.read() as conn:
            row = (await conn.execute(query)).first()
            found = to_file(row) if row is not None else None
            if row is None or found is None:
                return None
            targets = await conn.execute(
                select(segments.c.target)
                .where(
                    segments.c.job_id == job_id,
                    segments.c.position >= row.first_position,
                    segments.c.position < row.first_position + row.segment_count,
                )
                .order_by(segments.c.position)
            )
            return row.name, found, [t.target for t in targets]
