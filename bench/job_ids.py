"""What a job id's order costs the store (ADR 0030): small jobs written through the store's
own group commit (``store.group_commit``) on a fresh SQLite file, with random ids
(``uuid4``, as before) against ids in creation order (``models.new_job_id``, UUIDv7).

Each round writes ``--jobs`` jobs (one document of ``--segments`` corpus lines each),
``--batch`` of them submitted together so that they share one transaction, as a busy
server's submissions do. The two kinds alternate, each on a new file. What is measured is
this process's CPU time (``time.process_time``), store and SQLite together, per job, with
the garbage collector off as in a served process (which starts it far less often); the
insert and the commit are not told apart (both run in the one hand-off).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import statistics
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from common import SEED, load_corpus, report

from dragoman.jobs.ids import new_job_id
from dragoman.models import Document, Job, Pool
from dragoman.store.database import Database
from dragoman.store.group_commit import GroupCommit

NAME = "job_ids"
KINDS: dict[str, Callable[[], str]] = {
    "random (uuid4)": lambda: uuid.uuid4().hex,
    "creation order (UUIDv7)": new_job_id,
}


def a_job(job_id: str, segments: list[str]) -> tuple[Job, list[Document]]:
    job = Job(
        id=job_id,
        tenant=None,
        source_lang="en",
        target_lang="es",
        engine="apertium",
        pool=Pool.CPU,
        documents=1,
        segments_total=len(segments),
    )
    return job, [Document("a.txt", segments)]


async def one_round(
    new_id: Callable[[], str], args: argparse.Namespace, corpus: list[str]
) -> float:
    """CPU seconds per job of writing ``args.jobs`` jobs through a group commit."""
    with tempfile.TemporaryDirectory(prefix="dragoman-job-ids-") as folder:
        db = Database(f"sqlite+aiosqlite:///{Path(folder) / 'store.db'}")
        await db.open()
        try:
            writes = GroupCommit(db)
            at = SEED % len(corpus)
            # The collector's passes over what earlier rounds left are not the store's cost.
            gc.collect()
            gc.disable()
            started = time.process_time()
            for _ in range(args.jobs // args.batch):
                batch = []
                for _ in range(args.batch):
                    segments = [corpus[(at + k) % len(corpus)] for k in range(args.segments)]
                    at += args.segments
                    batch.append(a_job(new_id(), segments))
                await asyncio.gather(*(writes.create(job, docs, ()) for job, docs in batch))
            return (time.process_time() - started) / (args.jobs // args.batch * args.batch)
        finally:
            gc.enable()
            await db.close()


async def measure(args: argparse.Namespace) -> dict[str, Any]:
    corpus = load_corpus()
    per_job: dict[str, list[float]] = {kind: [] for kind in KINDS}
    for _ in range(args.rounds):
        for kind, new_id in KINDS.items():
            per_job[kind].append(await one_round(new_id, args, corpus))
    medians = {kind: statistics.median(values) for kind, values in per_job.items()}
    random_ms, ordered_ms = medians.values()
    return {
        "workload": {
            "jobs": args.jobs,
            "batch": args.batch,
            "segments_per_job": args.segments,
            "rounds": args.rounds,
            "store": "SQLite, a new file per round",
        },
        "cpu_ms_per_job": {
            kind: {
                "median": round(1000 * medians[kind], 4),
                "rounds": [round(1000 * v, 4) for v in values],
            }
            for kind, values in per_job.items()
        },
        "ordered_over_random": round(ordered_ms / random_ms, 3),
    }


def summarize(result: dict[str, Any]) -> str:
    lines = [
        f"{kind}: {figures['median']:.4f} ms of CPU per job "
        f"(rounds {', '.join(f'{v:.4f}' for v in figures['rounds'])})"
        for kind, figures in result["cpu_ms_per_job"].items()
    ]
    lines.append(f"creation order / random: {result['ordered_over_random']}")
    return "\n".join(lines)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=10_000, help="jobs per round")
    parser.add_argument("--batch", type=int, default=25, help="jobs per transaction")
    parser.add_argument("--segments", type=int, default=5, help="segments per job")
    parser.add_argument("--rounds", type=int, default=5, help="rounds of each kind")
    return parser.parse_args(argv)


def main() -> None:
    report(NAME, asyncio.run(measure(parse_args())), summarize)


if __name__ == "__main__":
    main()
