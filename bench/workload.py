"""The bulk benchmark's workloads, its client and its baselines.

A workload is 100 documents drawn from one corpus of ``tests/data``:

- ``licence``: ``en_licenses.txt`` (long licence sentences), 100 documents of 5-40 lines
  drawn with replacement, as the earlier bulk figures were measured;
- ``short``: ``en_short.txt`` (lines of about a dozen words, like UI strings), every line
  once, shuffled and cut at random into 100 documents of at least 5 lines (5 to 77 with the
  default seed): no segment repeats, so nothing is saved by translating a repeated text once.

dragoman runs a workload as 100 jobs (one per document, submitted by 8 client threads) or as
one job of the 100 documents; either way the clock stops once every result is fetched.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import resource
import statistics
import time
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
from common import (
    APERTIUM_MODE,
    SEED,
    Stopwatch,
    cpu_seconds,
    error_text,
    load_corpus,
    normalize,
    package_version,
    run_apertium,
    timed,
)

from dragoman.engines.apertium import ApertiumEngine
from dragoman.models import Pair
from dragoman.settings import Settings

DOCUMENTS = 100
LICENCE_SEGMENTS = (5, 40)
SHORT_MIN_SEGMENTS = 5
CLIENT_THREADS = 8
PARITY_THREADS = 2
# A client polling its batch. Each poll lists every job (one request); 0.1 s keeps the poll's
# rounding small beside a run of about a second without loading the server much.
POLL_INTERVAL_S = 0.1
E2E_TIMEOUT_S = 180.0
FINISHED = {"succeeded", "failed", "cancelled"}
MAX_EXAMPLES = 5
RAW_REPEATS = 3
# A warm-up job before each measurement starts the pair's pipelines: a served engine is warm.
PAIR = Pair("en", "es")
WARMUP_SEGMENTS = [f"Warm the engine up, line {n}." for n in range(16)]

Documents = list[list[str]]
Translated = list[list[str | None]]


@dataclass(frozen=True)
class Workload:
    name: str
    corpus: str
    documents: Documents

    @property
    def segments(self) -> int:
        return sum(len(doc) for doc in self.documents)

    def describe(self) -> dict[str, Any]:
        sizes = [len(doc) for doc in self.documents]
        words = [len(s.split()) for doc in self.documents for s in doc]
        return {
            "corpus": f"tests/data/{self.corpus}",
            "documents": len(self.documents),
            "segments": self.segments,
            "distinct_segments": len({s for doc in self.documents for s in doc}),
            "segments_per_document": [min(sizes), max(sizes)],
            "words_per_segment": round(sum(words) / len(words), 1),
            "seed": SEED,
        }


def licence_documents(corpus: list[str], seed: int = SEED) -> Documents:
    """``DOCUMENTS`` documents of 5-40 corpus lines, drawn with replacement."""
    rng = random.Random(seed)
    low, high = LICENCE_SEGMENTS
    return [[rng.choice(corpus) for _ in range(rng.randint(low, high))] for _ in range(DOCUMENTS)]


def short_documents(corpus: list[str], seed: int = SEED) -> Documents:
    """Every corpus line once, shuffled, cut into ``DOCUMENTS`` documents of random sizes
    (at least ``SHORT_MIN_SEGMENTS`` each)."""
    rng = random.Random(seed)
    lines = list(corpus)
    rng.shuffle(lines)
    spare = len(lines) - DOCUMENTS * SHORT_MIN_SEGMENTS
    cuts = sorted(rng.randint(0, spare) for _ in range(DOCUMENTS - 1))
    extra = [b - a for a, b in zip([0, *cuts], [*cuts, spare], strict=True)]
    out: Documents = []
    start = 0
    for more in extra:
        end = start + SHORT_MIN_SEGMENTS + more
        out.append(lines[start:end])
        start = end
    return out


WORKLOADS: dict[str, Callable[[], Workload]] = {
    "licence": lambda: Workload(
        "licence", "en_licenses.txt", licence_documents(load_corpus("en_licenses.txt"))
    ),
    "short": lambda: Workload(
        "short", "en_short.txt", short_documents(load_corpus("en_short.txt"))
    ),
}


# ---------------------------------------------------------------- dragoman end to end


def submit(client: httpx.Client, name: str, documents: Documents) -> str:
    """Submits ``documents`` as one en→es job; returns its id."""
    body = {
        "source_lang": "en",
        "target_lang": "es",
        # Every run measures the engine's work: no segment comes from the cache of an earlier
        # run (bench/reuse.py measures the cache). Repeats inside one job are still
        # translated once.
        "cache": False,
        "documents": [
            {"name": f"{name}-{i:03d}.txt", "segments": segments}
            for i, segments in enumerate(documents)
        ],
    }
    response = client.post("/v1/jobs", json=body)
    if response.status_code != 202:
        raise RuntimeError(
            f"job {name} refused: {error_text(response.status_code, response.content)}"
        )
    job_id: str = response.json()["id"]
    return job_id


def statuses(client: httpx.Client) -> dict[str, str]:
    """Every job's status on the (fresh) server, by id, following pagination."""
    found: dict[str, str] = {}
    params: dict[str, Any] = {"limit": 1000}
    while True:
        response = client.get("/v1/jobs", params=params)
        response.raise_for_status()
        page = response.json()
        found.update({job["id"]: job["status"] for job in page["jobs"]})
        if not page["next_cursor"]:
            return found
        params["cursor"] = page["next_cursor"]


def wait_finished(client: httpx.Client, ids: list[str]) -> dict[str, str]:
    """Polls until every job in ``ids`` has finished; returns their final statuses."""
    deadline = time.monotonic() + E2E_TIMEOUT_S
    while True:
        current = statuses(client)
        mine = {job_id: current.get(job_id, "missing") for job_id in ids}
        if all(status in FINISHED for status in mine.values()):
            return mine
        if time.monotonic() > deadline:
            raise TimeoutError(
                f"jobs unfinished after {E2E_TIMEOUT_S:.0f}s: {Counter(mine.values())}"
            )
        time.sleep(POLL_INTERVAL_S)


def fetch_result(client: httpx.Client, job_id: str) -> Translated:
    """The translated segments of each document of a job."""
    response = client.get(f"/v1/jobs/{job_id}/result")
    response.raise_for_status()
    return [doc["segments"] for doc in response.json()["documents"]]


def _client(url: str) -> httpx.Client:
    limits = httpx.Limits(max_connections=CLIENT_THREADS, max_keepalive_connections=CLIENT_THREADS)
    return httpx.Client(base_url=url, timeout=60.0, limits=limits)


def warm_up(url: str) -> None:
    """One small job, waited for: the pair's pipelines start before the clock does."""
    with _client(url) as client:
        job_id = submit(client, "warmup", [WARMUP_SEGMENTS])
        wait_finished(client, [job_id])


def run_jobs(
    url: str, documents: Documents, *, one_job: bool, pids: Sequence[int] = ()
) -> tuple[Translated, dict[str, Any]]:
    """Submit (one job per document, concurrently; or one job of them all), wait for all,
    fetch all: the translations by document, timings, and the CPU that the deployment's
    processes (``pids``, with their engine processes) used meanwhile, which the machine's
    load moves less than the wall time."""
    cpu_before = cpu_seconds(pids)
    with _client(url) as client, ThreadPoolExecutor(CLIENT_THREADS) as pool, Stopwatch() as total:
        if one_job:
            ids = [submit(client, "doc", documents)]
        else:
            ids = list(
                pool.map(
                    lambda item: submit(client, f"doc-{item[0]:03d}", [item[1]]),
                    enumerate(documents),
                )
            )
        submitted_s = time.perf_counter() - total.started
        final = wait_finished(client, ids)
        finished_s = time.perf_counter() - total.started
        results = [
            doc for job in pool.map(lambda job_id: fetch_result(client, job_id), ids) for doc in job
        ]
    timings = {
        "submit_s": round(submitted_s, 3),
        "all_finished_s": round(finished_s, 3),
        "e2e_s": round(total.elapsed, 3),
        "server_cpu_s": round(cpu_seconds(pids) - cpu_before, 3),
        "job_statuses": dict(Counter(final.values())),
    }
    return results, timings


# ---------------------------------------------------------------- baselines


def run_raw(documents: Documents) -> tuple[list[str], float, float]:
    """One ``apertium`` process over every segment, newline-joined: output lines, time and
    CPU (medians of ``RAW_REPEATS`` runs: the shortest baseline is the noisiest)."""
    text = "\n".join(segment for doc in documents for segment in doc) + "\n"
    runs = []
    for _ in range(RAW_REPEATS):
        before = children_cpu_s()
        output, seconds = timed(lambda: run_apertium(text))
        runs.append((output, seconds, children_cpu_s() - before))
    return (
        runs[0][0].splitlines(),
        statistics.median(seconds for _, seconds, _ in runs),
        statistics.median(cpu for _, _, cpu in runs),
    )


def run_engine(documents: Documents, pipelines: int) -> float:
    """dragoman's Apertium engine alone, in this process, warm, with ``pipelines`` pipelines:
    every segment in one ``translate`` call. What the service adds to this is the job's way
    (HTTP, store, dispatch, polling); what this adds to raw is the per-segment isolation."""
    segments = [segment for doc in documents for segment in doc]

    async def measure() -> float:
        engine = ApertiumEngine(Settings().apertium_modes_dir, pipelines_per_pair=pipelines)
        try:
            await engine.translate(PAIR, WARMUP_SEGMENTS)
            started = time.perf_counter()
            await engine.translate(PAIR, segments)
            return time.perf_counter() - started
        finally:
            await engine.close()

    return asyncio.run(measure())


def children_cpu_s() -> float:
    """CPU seconds of this process's finished children (``apertium`` waits for its stages)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_old_design(documents: Documents) -> float:
    """A fresh ``apertium`` process per document, one after another: total time."""
    with Stopwatch() as watch:
        for doc in documents:
            run_apertium("\n".join(doc) + "\n")
    return watch.elapsed


def references(segments: set[str]) -> dict[str, str]:
    """Each distinct segment translated alone by a fresh ``apertium`` process, normalized.

    Kept in ``$XDG_CACHE_HOME/dragoman-bench`` by mode and Apertium version (a segment alone
    always translates the same), so that a rerun costs only the segments not seen before."""
    cache = reference_cache()
    known: dict[str, str] = json.loads(cache.read_text("utf-8")) if cache.is_file() else {}
    missing = sorted(segments - known.keys())
    with ThreadPoolExecutor(PARITY_THREADS) as pool:
        for segment, out in zip(missing, pool.map(run_apertium, missing), strict=True):
            known[segment] = normalize(out)
    if missing:
        cache.parent.mkdir(parents=True, exist_ok=True)
        cache.write_text(json.dumps(known, ensure_ascii=False), "utf-8")
    return {segment: known[segment] for segment in segments}


def reference_cache() -> Path:
    """Where the references of this mode and Apertium version are kept."""
    root = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    version = package_version("apertium") or "unknown"
    return root / "dragoman-bench" / f"alone-{APERTIUM_MODE}-{version}.json"


# ---------------------------------------------------------------- comparison


def parity(
    documents: Documents, translated: Translated, reference: dict[str, str]
) -> dict[str, Any]:
    """How many of dragoman's translations equal the per-segment reference."""
    total = matches = 0
    examples: list[dict[str, str | None]] = []
    for doc, out in zip(documents, translated, strict=True):
        padded = out + [None] * (len(doc) - len(out))
        for source, got in zip(doc, padded, strict=False):
            total += 1
            expected = reference[source]
            if got is not None and normalize(got) == expected:
                matches += 1
            elif len(examples) < MAX_EXAMPLES:
                examples.append({"source": source, "dragoman": got, "apertium_alone": expected})
    return {
        "segments": total,
        "matches": matches,
        "mismatches": total - matches,
        "fraction": round(matches / total, 4) if total else None,
        "examples": examples,
    }


def concat_parity(documents: Documents, raw_lines: list[str], reference: dict[str, str]) -> Any:
    """Share of segments the plain concatenated run translates as if alone (context leaks)."""
    sources = [segment for doc in documents for segment in doc]
    if len(raw_lines) != len(sources):
        return {"comparable": False, "lines_in": len(sources), "lines_out": len(raw_lines)}
    same = sum(
        normalize(out) == reference[src] for src, out in zip(sources, raw_lines, strict=True)
    )
    return {"comparable": True, "fraction": round(same / len(sources), 4)}
