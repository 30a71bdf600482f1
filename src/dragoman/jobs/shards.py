"""Where a job runs and how it is split: its pool, the runs of documents in one language
of an ``auto`` job, and the shards that several workers translate in parallel."""

from __future__ import annotations

import dataclasses
import itertools
import uuid
from collections.abc import Sequence
from typing import NamedTuple

from dragoman.engines import Engine, Engines, Pair
from dragoman.models import Document, Job, Pool
from dragoman.settings import Settings


class Run(NamedTuple):
    """Documents in one language, by segment position ``[first, end)``."""

    source: str
    first: int
    end: int


def route(settings: Settings, segments: int, engine: Engine) -> Pool:
    """Big jobs of an engine that runs on GPUs go to the GPU pool when it may have workers;
    everything else to the CPU pool. (Waiting GPU jobs fall back to the CPU pool when no
    GPU worker shows up: see the watchdog.)"""
    big = segments >= settings.gpu_threshold_segments
    gpu = big and engine.gpu_capable and settings.gpu_max_workers > 0
    return Pool.GPU if gpu else Pool.CPU


def language_runs(documents: Sequence[Document]) -> list[Run]:
    """Each run of documents in one language, by segment position; documents without
    segments take no place."""
    runs: list[Run] = []
    position = 0
    for doc in documents:
        if not doc.segments:
            continue
        source, end = doc.source_lang or "", position + len(doc.segments)
        if runs and runs[-1].source == source:
            runs[-1] = runs[-1]._replace(end=end)
        else:
            runs.append(Run(source, position, end))
        position = end
    return runs


def shards_of(
    job: Job, settings: Settings, engines: Engines, runs: Sequence[Run] = ()
) -> list[Job]:
    """The shards of a job: contiguous ranges of about equal size, at most
    ``shard_segments`` each; none for a smaller job. ``runs`` (a job of documents in
    several languages) makes at least one shard per run, each from its own language, by
    the engine the job asked for or the default engine of its pair."""
    size = settings.shard_segments
    mixed = bool(runs)
    if not mixed:
        if job.segments_total <= size:
            return []
        runs = [Run(job.source_lang, 0, job.segments_total)]
    # A shard is never announced nor downloaded: only the parent keeps those options.
    options = dataclasses.replace(
        job.options, callback_url=None, document_key=None, idempotency_key=None
    )
    out = []
    for source, start, stop in runs:
        chosen = (
            engines.resolve(Pair(source, job.target_lang), job.options.engine) if mixed else None
        )
        count = -(-(stop - start) // size)
        bounds = [start + (stop - start) * k // count for k in range(count + 1)]
        out += [
            dataclasses.replace(
                job,
                id=uuid.uuid4().hex,
                source_lang=source,
                engine=chosen.name if chosen else job.engine,
                pool=route(settings, end - first, chosen) if chosen else job.pool,
                documents=0,
                segments_total=end - first,
                parent_id=job.id,
                first_position=first,
                end_position=end,
                shards=0,
                characters=None,
                options=options,
            )
            for first, end in itertools.pairwise(bounds)
        ]
    return out
