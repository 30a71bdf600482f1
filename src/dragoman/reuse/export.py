"""A job's translations as TMX 1.4, so that reviewed output can seed a memory."""

from __future__ import annotations

from collections.abc import Sequence

from dragoman import __version__
from dragoman.formats.markup import Marked, parse_stored
from dragoman.formats.tmx import Translation, write_tmx
from dragoman.models import Job, Translated


def _marked(text: str, markup: bool) -> Marked:
    return parse_stored(text) if markup else Marked.of([text])


def job_tmx(job: Job, documents: Sequence[Translated]) -> bytes:
    """One unit per translated segment with text of ``documents`` (each with its sources;
    the same source and target twice make one unit), each noting its origin (``mt``,
    ``cache``, ``tm``). A file job's codes are written as empty ``bpt``/``ept``/``ph``: the
    file holds what they stand for, and the same structure matches again when the TMX is
    imported. A job of several source languages gets ``srclang="*all*"``; a job into
    several languages has a unit per target."""
    languages = [doc.source_lang or job.source_lang for doc in documents]
    seen: set[tuple[str, str, str, str]] = set()
    out: list[Translation] = []
    for doc, source_lang in zip(documents, languages, strict=True):
        assert doc.sources is not None
        target_lang = doc.target_lang or job.target_lang
        for source, target, origin in zip(doc.sources, doc.targets, doc.origins, strict=True):
            unit = (source_lang, source, target_lang, target or "")
            if target is None or not source.strip() or unit in seen:
                continue
            seen.add(unit)
            out.append(
                Translation(
                    source_lang,
                    _marked(source, job.options.markup),
                    target_lang,
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
