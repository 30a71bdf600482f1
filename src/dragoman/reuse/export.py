"""A job's translations as TMX 1.4, so that reviewed output can seed a memory."""

from __future__ import annotations

from dragoman import __version__
from dragoman.formats.markup import Marked, parse_stored
from dragoman.formats.tmx import Translation, write_tmx
from dragoman.models import Job
from dragoman.store import JobStore


def _marked(text: str, markup: bool) -> Marked:
    return parse_stored(text) if markup else Marked.of([text])


async def job_tmx(store: JobStore, job: Job) -> bytes:
    """One unit per translated segment with text (the same source and target twice make
    one unit), each noting its origin (``mt``, ``cache``, ``tm``). A file job's codes are
    written as empty ``bpt``/``ept``/``ph``: the file holds what they stand for, and the
    same structure matches again when the TMX is imported. A job of several source
    languages gets ``srclang="*all*"``."""
    documents = await store.documents(job.id, sources=True)
    languages = [doc.source_lang or job.source_lang for doc in documents]
    seen: set[tuple[str, str, str]] = set()
    out: list[Translation] = []
    for doc, source_lang in zip(documents, languages, strict=True):
        assert doc.sources is not None
        for source, target, origin in zip(doc.sources, doc.targets, doc.origins, strict=True):
            if target is None or not source.strip() or (source_lang, source, target) in seen:
                continue
            seen.add((source_lang, source, target))
            out.append(
                Translation(
                    source_lang,
                    _marked(source, job.options.markup),
                    job.target_lang,
                    _marked(target, job.options.markup),
                    origin.value if origin else "",
                )
            )
    single = set(languages) == {job.source_lang}
    return write_tmx(
        out,
        source_lang=job.source_lang if single else None,
        tool_version=__version__,
        when=job.finished_at or job.created_at,
    )
