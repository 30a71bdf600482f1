"""DeepL's document translation as dragoman file jobs.

An upload is a file job of one file (``FileJobs.submit``, charged there with the
characters of its text, which the job keeps for ``billed_characters``) whose
``document_key`` is a random secret. Both are written as DeepL writes them: the
``document_id`` is the job id (a UUID's 32 hex digits) in capitals, the key 64 capital hex
digits; either is taken back in any case (the SDKs send what they got, other clients may
lower it). Status and result need both: a malformed id, a wrong key, a job that was not
uploaded as a document, or another tenant's document are all DeepL's 404, worded alike, so
ids are never confirmed.

A file that cannot be read (an extension no format has, an empty or corrupt file, text not
in UTF-8) is DeepL's 400 ``Invalid file data.``, dragoman's reason as its ``detail``.

Job states read as DeepL's: queued and submitted are ``queued``, running is
``translating`` (with ``seconds_remaining``, estimated from the job's progress), succeeded
is ``done`` (with ``billed_characters``), failed and cancelled are ``error``.

Unlike DeepL, a translated document is not removed once downloaded: it may be downloaded
again until the job's retention (``DRAGOMAN_RESULT_RETENTION_S``) ends.
"""

from __future__ import annotations

import hmac
import math
import re
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from dragoman.api.deepl.errors import DeepLRefusal
from dragoman.api.deepl.params import DeepLParams
from dragoman.api.deps import ApiParts
from dragoman.errors import BadEncoding, InvalidFile, NotFound, UnsupportedFormat
from dragoman.formats import for_file
from dragoman.models import Job, JobStatus, utcnow

_STATES = {
    JobStatus.QUEUED: "queued",
    JobStatus.SUBMITTED: "queued",
    JobStatus.RUNNING: "translating",
    JobStatus.SUCCEEDED: "done",
    JobStatus.FAILED: "error",
    JobStatus.CANCELLED: "error",
}
_GUESS_SEGMENTS_PER_S = 20.0  # before a job has progress to measure
_DOCUMENT_ID = re.compile(r"[0-9a-fA-F]{32}")
INVALID_FILE_DATA = "Invalid file data."  # DeepL's words (and its mock server's)


def new_key() -> str:
    """A document key: 256 random bits, as 64 capital hex digits like DeepL's."""
    return secrets.token_hex(32).upper()


def document_id_of(job: Job) -> str:
    """The job's id as DeepL writes a ``document_id``."""
    return job.id.upper()


def job_id(document: str) -> str:
    """The job id of a ``document_id`` in any case; DeepL's 404 for one that is no id."""
    if not _DOCUMENT_ID.fullmatch(document):
        raise DeepLRefusal("Document not found", 404)
    return document.lower()


@contextmanager
def file_data() -> Iterator[None]:
    """A file refused by its format or its content, refused in DeepL's words."""
    try:
        yield
    except (UnsupportedFormat, InvalidFile, BadEncoding) as exc:
        raise DeepLRefusal(INVALID_FILE_DATA, detail=exc.message) from None


def check_output_format(params: DeepLParams, name: str) -> None:
    """``output_format`` may only name the upload's own format: no conversion here."""
    wanted = params.text("output_format")
    if not wanted:
        return
    try:
        same = for_file(f"document.{wanted.lower().lstrip('.')}").name == for_file(name).name
    except UnsupportedFormat:
        same = False
    if not same:
        raise DeepLRefusal(
            f"Value for 'output_format' not supported: {name} is translated into its own format"
        )


async def document_of(
    service: ApiParts, document: str, params: DeepLParams, tenant: str | None
) -> Job:
    """The caller's document ``document``, if ``document_key`` is its key (both in any
    case); else a 404."""
    key = params.required("document_key").upper().encode()
    try:
        job = await service.manager.get(job_id(document), tenant)
    except NotFound:
        raise DeepLRefusal("Document not found", 404) from None
    stored_key = job.options.document_key
    if stored_key is None or not hmac.compare_digest(stored_key.upper().encode(), key):
        raise DeepLRefusal("Document not found", 404)
    return job


async def status_of(service: ApiParts, job: Job) -> dict[str, Any]:
    state = _STATES[job.status]
    body: dict[str, Any] = {"document_id": document_id_of(job), "status": state}
    if state == "translating":
        body["seconds_remaining"] = seconds_remaining(job)
    elif state == "done":
        body["seconds_remaining"] = 0
        body["billed_characters"] = await service.files.characters(job)
    elif state == "error":
        reason = job.error.message if job.error else f"the job was {job.status}"
        body["error_message"] = body["message"] = reason  # "message": DeepL's older name
    return body


def seconds_remaining(job: Job) -> int:
    """The job's remaining segments at the pace it has kept so far (a guess before that)."""
    left = max(job.segments_total - job.segments_done, 0)
    pace = _GUESS_SEGMENTS_PER_S
    if job.started_at is not None and job.segments_done:
        elapsed_s = max((utcnow() - job.started_at).total_seconds(), 0.001)
        pace = job.segments_done / elapsed_s
    return max(1, math.ceil(left / pace))


def not_ready(job: Job) -> DeepLRefusal:
    """DeepL's answer to a result asked for too early (the SDK retries it), or of a job
    that ended without one."""
    if job.status.finished:
        why = job.error.message if job.error else f"the job was {job.status}"
        return DeepLRefusal(f"Document translation failed: {why}")
    return DeepLRefusal("Document translation is not done", 503, seconds_remaining(job))
