"""DeepL's document translation as dragoman file jobs.

An upload is a file job of one file (``FileJobs.submit``, charged there with the
characters of its text, which the job keeps for ``billed_characters``) whose
``document_key`` is a random secret; the job id is the ``document_id``. Status and result
need both: a wrong key, a job that was not uploaded as a document, or another tenant's
document are all DeepL's 404, so ids are never confirmed.
Job states read as DeepL's: queued and submitted are ``queued``, running is
``translating`` (with ``seconds_remaining``, estimated from the job's progress), succeeded
is ``done`` (with ``billed_characters``), failed and cancelled are ``error``.

Unlike DeepL, a translated document is not removed once downloaded: it may be downloaded
again until the job's retention (``DRAGOMAN_RESULT_RETENTION_S``) ends.
"""

from __future__ import annotations

import hmac
import math
import secrets
from typing import Any

from dragoman.api.deepl.errors import DeepLRefusal
from dragoman.api.deepl.params import DeepLParams
from dragoman.api.deps import ApiParts
from dragoman.errors import UnsupportedFormat
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


def new_key() -> str:
    """A document key: 256 random bits, as 64 hex digits like DeepL's."""
    return secrets.token_hex(32)


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
    service: ApiParts, document_id: str, params: DeepLParams, tenant: str | None
) -> Job:
    """The caller's document ``document_id``, if ``document_key`` is its key; else a 404."""
    key = params.required("document_key")
    job = await service.manager.get(document_id, tenant)
    stored_key = job.options.document_key
    if stored_key is None or not hmac.compare_digest(stored_key, key):
        raise DeepLRefusal("Document not found", 404)
    return job


async def status_of(service: ApiParts, job: Job) -> dict[str, Any]:
    state = _STATES[job.status]
    body: dict[str, Any] = {"document_id": job.id, "status": state}
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
