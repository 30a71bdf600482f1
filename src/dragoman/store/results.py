"""What a job's segments have become: each document's translations so far and where they
came from (its sources too, when asked), and an uploaded file with its translations."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, Select, and_, bindparam, func, select

from dragoman.models import Origin, SourceFile, Translated
from dragoman.store.database import Database
from dragoman.store.rows import origin_of, to_file
from dragoman.store.tables import documents, segments


@dataclass(frozen=True, slots=True)
class NewSegment:
    """A translated segment that a job's events have not told yet."""

    position: int  # in the job's segments (copy after copy, with several targets)
    text: str
    origin: Origin


def _translated(doc: Any, rows: list[Any], with_sources: bool) -> Translated:
    # Column by column, in the query's order: a Row's attributes cost several times this.
    columns = list(zip(*rows, strict=True)) if rows else [()] * (len(_COLUMNS) + 1)
    targets, origins, engines, models, terms, confidences = columns[: len(_COLUMNS)]
    return Translated(
        name=doc.name,
        source_lang=doc.source_lang,
        format=doc.format,
        targets=list(targets),
        origins=[origin_of(t, o) for t, o in zip(targets, origins, strict=True)],
        sources=list(columns[len(_COLUMNS)]) if with_sources else None,
        engines=list(engines),
        models=list(models),
        terms=[None if t is None else bool(term) for t, term in zip(targets, terms, strict=True)],
        confidences=list(confidences),
    )


# The segment columns that every result reads, in this order (then the source, if asked).
_COLUMNS = (
    segments.c.target,
    segments.c.origin,
    segments.c.engine,
    segments.c.model,
    segments.c.terms,
    segments.c.confidence,
)


@functools.cache
def _segments_query(with_sources: bool, bounded: bool) -> Select[Any]:
    """The job's segments from ``:first`` (to ``:end`` when ``bounded``), built once per
    shape: building a statement costs more than SQLite's read."""
    columns = list(_COLUMNS)
    if with_sources:
        columns.append(segments.c.source)
    query = select(*columns).where(
        segments.c.job_id == bindparam("job_id"), segments.c.position >= bindparam("first")
    )
    if bounded:
        query = query.where(segments.c.position < bindparam("end"))
    return query.order_by(segments.c.position)


def _segment_rows(
    conn: Connection, job_id: str, with_sources: bool, first: int = 0, end: int | None = None
) -> list[Any]:
    """The job's segments from ``first`` to ``end``, in one statement: their targets and
    origins are read together, so they always agree."""
    query = _segments_query(with_sources, end is not None)
    return list(conn.execute(query, {"job_id": job_id, "first": first, "end": end}).all())


_DOCUMENTS = (
    select(documents.c.name, documents.c.source_lang, documents.c.format, documents.c.segment_count)
    .where(documents.c.job_id == bindparam("job_id"))
    .order_by(documents.c.ordinal)
)
_DOCUMENT = select(documents).where(
    documents.c.job_id == bindparam("job_id"), documents.c.ordinal == bindparam("ordinal")
)


class SqlResults:
    _db: Database

    async def documents(
        self, job_id: str, *, sources: bool = False, copy: int | None = None
    ) -> list[Translated]:
        def read(conn: Connection) -> tuple[list[Any], list[Any]]:
            docs = list(conn.execute(_DOCUMENTS, {"job_id": job_id}).all())
            if copy is None:
                return docs, _segment_rows(conn, job_id, sources)
            count = sum(doc.segment_count for doc in docs)
            return docs, _segment_rows(conn, job_id, sources, copy * count, (copy + 1) * count)

        docs, rows = await self._db.reading(read)
        out, start = [], 0
        # Every copy of the segments (one per target language), or the one asked for.
        while True:
            for doc in docs:
                out.append(_translated(doc, rows[start : start + doc.segment_count], sources))
                start += doc.segment_count
            if start >= len(rows) or not start:
                return out

    async def source_file(
        self, job_id: str, ordinal: int, copy: int = 0
    ) -> tuple[SourceFile, Translated] | None:
        def read(conn: Connection) -> tuple[SourceFile, Translated] | None:
            doc = conn.execute(_DOCUMENT, {"job_id": job_id, "ordinal": ordinal}).first()
            found = to_file(doc) if doc is not None else None
            if doc is None or found is None:
                return None
            first = doc.first_position
            if copy:
                counts = select(func.sum(documents.c.segment_count)).where(
                    documents.c.job_id == job_id
                )
                first += copy * (conn.execute(counts).scalar() or 0)
            rows = _segment_rows(conn, job_id, False, first, first + doc.segment_count)
            return found, _translated(doc, rows, False)

        return await self._db.reading(read)

    async def translated_since(
        self, job_id: str, sent: Sequence[tuple[int, int]]
    ) -> tuple[list[tuple[str, int]], list[NewSegment]]:
        query = _unsent(sent)

        def read(conn: Connection) -> tuple[list[Any], list[Any]]:
            docs = list(conn.execute(_DOCUMENTS, {"job_id": job_id}).all())
            return docs, list(conn.execute(query, {"job_id": job_id}).all())

        docs, rows = await self._db.reading(read)
        shapes = [(doc.name, doc.segment_count) for doc in docs]
        return shapes, [
            NewSegment(row.position, row.target, Origin(row.origin) if row.origin else Origin.MT)
            for row in rows
        ]


def _unsent(sent: Sequence[tuple[int, int]]) -> Select[Any]:
    """The translated segments outside ``sent``: after the first range when it starts the
    job (an index range, the usual case: segments come in order), and outside the others."""
    columns = (segments.c.position, segments.c.target, segments.c.origin)
    query = select(*columns).where(
        segments.c.job_id == bindparam("job_id"), segments.c.target.is_not(None)
    )
    spans = list(sent)
    if spans and spans[0][0] == 0:
        query = query.where(segments.c.position > spans.pop(0)[1])
    for first, last in spans:
        query = query.where(~and_(segments.c.position >= first, segments.c.position <= last))
    return query.order_by(segments.c.position)
