"""File jobs: uploaded files become one document each, their sentences the segments, and a
finished (or running) job gives each file back in its own format.

The upload's bytes and layout are stored with the job, so any API process can rebuild a
file later; workers see only segments. The checks of the submission itself are the
manager's ``admit``; only what is about the files (how many, how big, what is in them) is
checked here.
"""

from __future__ import annotations

import asyncio
import dataclasses
import io
import time
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass

from dragoman.detection import AUTO, SAMPLE_SEGMENTS, sample
from dragoman.errors import InvalidRequest, NotFinished, NotFound, PayloadTooLarge
from dragoman.formats import (
    SPLIT_BUDGET_S,
    TREE_FORMATS,
    Format,
    for_file,
    prepare_units,
    rebuild,
    translated_name,
)
from dragoman.formats.markup import Marked
from dragoman.jobs import BatchRequestsManager, copy_of
from dragoman.models import Document, Job, JobOptions, JobStatus, Pair, SourceFile, Translated
from dragoman.runtime import Runtime


@dataclass(frozen=True, slots=True)
class Upload:
    filename: str
    content: bytes
    format: str | None = None  # overrides the extension


@dataclass(frozen=True, slots=True)
class TranslatedFile:
    filename: str  # <stem>.<target><ext>
    media_type: str
    content: bytes


def _read(uploads: Sequence[Upload]) -> list[tuple[Format, list[Marked]]]:
    """Each file's format and units, read once for detection and segments alike."""
    read = []
    for upload in uploads:
        fmt = for_file(upload.filename, upload.format)
        read.append((fmt, fmt.extract(upload.content, filename=upload.filename)))
    return read


def _sample(units: Sequence[Marked]) -> str:
    """What detection reads of a file: the plain text of its first units."""
    return sample([unit.plain for unit in units[:SAMPLE_SEGMENTS]])


def _documents(
    languages: Sequence[str],
    uploads: Sequence[Upload],
    read: Sequence[tuple[Format, list[Marked]]],
    segmentation: bool,
    auto: bool,
) -> list[Document]:
    documents = []
    split_until = time.monotonic() + SPLIT_BUDGET_S  # for the whole upload
    for source, upload, (fmt, units) in zip(languages, uploads, read, strict=True):
        prepared = prepare_units(
            units, source_lang=source, segmentation=segmentation, split_until=split_until
        )
        stored = SourceFile(fmt.name, upload.content, tuple(prepared.layout))
        detected = source if auto else None
        documents.append(Document(upload.filename, prepared.segments, stored, detected))
    return documents


class FileJobs:
    def __init__(self, runtime: Runtime, manager: BatchRequestsManager) -> None:
        self._settings = runtime.settings
        self._store = runtime.store
        self._manager = manager

    async def submit(
        self,
        tenant: str | None,
        pair: Pair,
        uploads: Sequence[Upload],
        options: JobOptions = JobOptions(),
        *,
        segmentation: bool = True,
        targets: Sequence[str] = (),
    ) -> Job:
        """A job of the files' sentences; ``ClientError`` naming the first bad file."""
        self._check(uploads)
        auto = pair.source == AUTO
        languages = [pair.source] * len(uploads)
        read = await asyncio.to_thread(_read, uploads)
        if auto:
            samples = [_sample(units) for _, units in read]
            found = await self._manager.detect(pair.target, samples, options.engine)
            languages = [detection.language for detection in found]
        documents = await asyncio.to_thread(
            _documents, languages, uploads, read, segmentation, auto
        )
        if not any(doc.segments for doc in documents):
            names = ", ".join(u.filename for u in uploads)
            raise InvalidRequest(f"nothing to translate in {names}")
        options = dataclasses.replace(options, markup=True)
        return await self._manager.submit(tenant, pair, documents, options, targets)

    def _check(self, uploads: Sequence[Upload]) -> None:
        """How many files and how big: before any of them is read."""
        if not uploads:
            raise InvalidRequest("no file given: send one or more parts named 'files'")
        if len(uploads) > self._settings.max_files_per_job:
            raise PayloadTooLarge(
                f"{len(uploads)} files exceed the limit of "
                f"{self._settings.max_files_per_job} per job"
            )
        for upload in uploads:
            name = for_file(upload.filename, upload.format).name
            limit, setting = self.limit(name)
            if len(upload.content) > limit:
                raise PayloadTooLarge(
                    f"{upload.filename}: larger than the limit of {limit} bytes per "
                    f"{name} file ({setting})"
                )

    def limit(self, format_name: str) -> tuple[int, str]:
        """The most bytes a file of this format may hold, and the setting that says so."""
        if format_name in TREE_FORMATS:
            return self._settings.max_tree_file_bytes, "DRAGOMAN_MAX_TREE_FILE_BYTES"
        return self._settings.max_file_bytes, "DRAGOMAN_MAX_FILE_BYTES"

    async def download(
        self,
        job_id: str,
        ordinal: int,
        tenant: str | None,
        *,
        partial: bool = False,
        target: str | None = None,
    ) -> TranslatedFile:
        """File ``ordinal`` of a job, translated (into ``target``: required when the job has
        several); with ``partial``, as far as it has got (units not fully translated yet
        keep their source)."""
        job = await self._manager.get(job_id, tenant)
        if target is None and job.targets:
            raise InvalidRequest(
                f"target: job {job.id} translates into {', '.join(job.target_langs)}; "
                "name one (?target=), or download them all as files.zip"
            )
        copy = copy_of(job, target) or 0
        found = await self._store.source_file(job.id, ordinal, copy) if ordinal >= 0 else None
        if found is None:
            raise NotFound(f"job {job_id} has no file {ordinal}")
        _check_finished(job, copy, partial)
        return await asyncio.to_thread(_rebuilt, job, copy, *found)

    async def archive(
        self, job_id: str, tenant: str | None, *, partial: bool = False, target: str | None = None
    ) -> tuple[Job, bytes]:
        """Every file of a job, translated into each of its targets (or ``target``), as one
        zip: a folder per target language, ``<target>/<stem>.<target><ext>``."""
        job = await self._manager.get(job_id, tenant)
        copy = copy_of(job, target)
        copies = list(range(len(job.target_langs))) if copy is None else [copy]
        if copy is None and job.status.finished and not partial and job.by_target:
            # A job that ended with some targets failed: the zip holds those that succeeded.
            copies = [each for each in copies if _succeeded(job, each)] or copies[:1]
        for each in copies:
            _check_finished(job, each, partial)
        files: list[tuple[str, TranslatedFile]] = []
        for each in copies:
            for ordinal in range(job.documents):
                found = await self._store.source_file(job.id, ordinal, each)
                if found is not None:
                    built = await asyncio.to_thread(_rebuilt, job, each, *found)
                    files.append((job.target_langs[each], built))
        if not files:
            raise NotFound(f"job {job_id} has no files: its documents were sent as segments")
        return job, await asyncio.to_thread(zipped, files)

    async def characters(self, job: Job) -> int:
        """The characters a file job was charged; for a job stored before they were kept,
        those of its first file's text (tags left out), read again from the stored file."""
        if job.characters is not None:
            return job.characters
        found = await self._store.source_file(job.id, 0)
        if found is None:
            return 0
        stored, document = found
        fmt = for_file(document.name, stored.format)
        units = await asyncio.to_thread(fmt.extract, stored.content, filename=document.name)
        return sum(len(unit.plain) for unit in units)


def _succeeded(job: Job, copy: int) -> bool:
    status = job.by_target[copy].status if job.by_target else job.status
    return status is JobStatus.SUCCEEDED


def _check_finished(job: Job, copy: int, partial: bool) -> None:
    """``NotFinished`` unless target ``copy`` of ``job`` succeeded (or ``partial``)."""
    if not _succeeded(job, copy) and not partial:
        status = job.by_target[copy].status if job.by_target else job.status
        into = f" into {job.target_langs[copy]}" if job.targets else ""
        raise NotFinished(
            f"job {job.id} is {status}{into}; the file is ready when it has succeeded "
            "(or ask with ?partial=true)"
        )


def _rebuilt(job: Job, copy: int, stored: SourceFile, document: Translated) -> TranslatedFile:
    """The file of ``document``, translated into target ``copy`` of ``job``."""
    name = document.name
    target_lang = job.target_langs[copy]
    fmt = for_file(name, stored.format)
    content = rebuild(
        fmt,
        stored.content,
        filename=name,
        layout=stored.layout,
        translations=document.targets,
        target_lang=target_lang,
        origins=document.origins,
        confidences=document.confidences,
        review_below=job.options.review_below,
    )
    return TranslatedFile(translated_name(name, target_lang), fmt.media_type, content)


def zipped(files: Sequence[tuple[str, TranslatedFile]]) -> bytes:
    """A zip of ``(folder, file)``: a name met again in its folder gets its rank first
    (``2-report.es.docx``), so that nothing is overwritten when it is unpacked."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        seen: dict[str, int] = {}
        for folder, file in files:
            path = f"{folder}/{file.filename}"
            seen[path] = seen.get(path, 0) + 1
            if seen[path] > 1:
                path = f"{folder}/{seen[path]}-{file.filename}"
            archive.writestr(path, file.content)
    return out.getvalue()
