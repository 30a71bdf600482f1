"""Where a job runs and how it is split: its pool, the runs of documents in one language
of an ``auto`` job, and the shards that several workers translate in parallel."""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Sequence
from typing import NamedTuple

from dragoman.engines import Engine, Engines, Pair
from dragoman.jobs.ids import new_job_id
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
    several languages) makes at least one shard per run, each from its own language, and a
    job into several languages at least one per target, each into its own copy of the
    segments: by the engine the job asked for or the default engine of its pair."""
    size = settings.shard_segments
    own = bool(runs) or bool(job.targets)  # shards that resolve their own engine
    count = job.segments_per_target
    if not own and count <= size:
        return []
    runs = runs or [Run(job.source_lang, 0, count)]
    # A shard is never announced nor downloaded: only the parent keeps those options.
    options = dataclasses.replace(
        job.options, callback_url=None, document_key=None, idempotency_key=None
    )
    out = []
    # Range by range, each target's piece of it in turn: the targets of a range are
    # translated about together, so that a pivot's first leg shared with another target
    # is still kept in a worker when the second asks for it (``engines.legs``).
    for source, start, stop in runs:
        pieces = -(-(stop - start) // size)
        bounds = [start + (stop - start) * k // pieces for k in range(pieces + 1)]
        chosen = {
            target: engines.resolve(Pair(source, target), job.options.engine) if own else None
            for target in job.target_langs
        }
        for first, end in itertools.pairwise(bounds):
            for copy, target in enumerate(job.target_langs):
                engine, offset = chosen[target], copy * count
                out.append(
                    dataclasses.replace(
                        job,
                        id=new_job_id(),
                        source_lang=source,
                        target_lang=target,
                        engine=engine.name if engine else job.engine,
                        pool=route(settings, end - first, engine) if engine else job.pool,
                        documents=0,
                        segments_total=end - first,
                        parent_id=job.id,
                        first_position=offset + first,
                        end_position=offset + end,
                        shards=0,
                        characters=None,
                        options=options,
                        targets=(),
                        by_target=(),
                    )
                )
    return out
