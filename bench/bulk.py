"""100 small documents as 100 jobs: dragoman end to end vs the raw engine vs the old design.

Also checks parity: every segment dragoman returns must equal ``apertium eng-spa`` run on that
segment alone (whitespace runs aside).
"""

from __future__ import annotations

import argparse
import random
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
from common import (
    SEED,
    Stopwatch,
    dragoman_server,
    error_text,
    load_corpus,
    normalize,
    ratio,
    report,
    run_apertium,
    timed,
)

NAME = "bulk"
DOCUMENTS = 100
MIN_SEGMENTS, MAX_SEGMENTS = 5, 40
CLIENT_THREADS = 8
PARITY_THREADS = 2
POLL_INTERVAL_S = 0.25  # a client polling its batch; faster polls only load the server
E2E_TIMEOUT_S = 120.0
FINISHED = {"succeeded", "failed", "cancelled"}
MAX_EXAMPLES = 5

Documents = list[list[str]]


def build_documents(corpus: list[str], seed: int = SEED) -> Documents:
    """``DOCUMENTS`` documents of 5-40 corpus lines, drawn with replacement."""
    rng = random.Random(seed)
    return [
        [rng.choice(corpus) for _ in range(rng.randint(MIN_SEGMENTS, MAX_SEGMENTS))]
        for _ in range(DOCUMENTS)
    ]


# ---------------------------------------------------------------- dragoman end to end


def submit(client: httpx.Client, index: int, segments: list[str]) -> str:
    """Submits one document as one en→es job; returns its id."""
    body = {
        "source_lang": "en",
        "target_lang": "es",
        "documents": [{"name": f"doc-{index:03d}.txt", "segments": segments}],
    }
    response = client.post("/v1/jobs", json=body)
    if response.status_code != 202:
        reason = error_text(response.status_code, response.content)
        raise RuntimeError(f"job {index} refused: {reason}")
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


def fetch_result(client: httpx.Client, job_id: str) -> list[str | None]:
    """The translated segments of a one-document job."""
    response = client.get(f"/v1/jobs/{job_id}/result")
    response.raise_for_status()
    segments: list[str | None] = response.json()["documents"][0]["segments"]
    return segments


def run_e2e(url: str, documents: Documents) -> tuple[list[list[str | None]], dict[str, Any]]:
    """Submit all jobs concurrently, wait for all, fetch all: results and timings."""
    limits = httpx.Limits(max_connections=CLIENT_THREADS, max_keepalive_connections=CLIENT_THREADS)
    with (
        httpx.Client(base_url=url, timeout=60.0, limits=limits) as client,
        ThreadPoolExecutor(CLIENT_THREADS) as pool,
        Stopwatch() as total,
    ):
        ids = list(pool.map(lambda item: submit(client, *item), enumerate(documents)))
        submitted_s = time.perf_counter() - total.started
        final = wait_finished(client, ids)
        finished_s = time.perf_counter() - total.started
        results = list(pool.map(lambda job_id: fetch_result(client, job_id), ids))
    timings = {
        "submit_s": round(submitted_s, 3),
        "all_finished_s": round(finished_s, 3),
        "e2e_s": round(total.elapsed, 3),
        "job_statuses": dict(Counter(final.values())),
    }
    return results, timings


# ---------------------------------------------------------------- baselines


def run_raw(documents: Documents) -> tuple[list[str], float]:
    """One ``apertium`` process over every segment, newline-joined: output lines and time."""
    text = "\n".join(segment for doc in documents for segment in doc) + "\n"
    output, seconds = timed(lambda: run_apertium(text))
    return output.splitlines(), seconds


def run_old_design(documents: Documents) -> float:
    """A fresh ``apertium`` process per document, one after another: total time."""
    with Stopwatch() as watch:
        for doc in documents:
            run_apertium("\n".join(doc) + "\n")
    return watch.elapsed


def references(segments: set[str]) -> dict[str, str]:
    """Each distinct segment translated alone by a fresh ``apertium`` process, normalized."""
    ordered = sorted(segments)
    with ThreadPoolExecutor(PARITY_THREADS) as pool:
        outputs = pool.map(run_apertium, ordered)
        return {segment: normalize(out) for segment, out in zip(ordered, outputs, strict=True)}


# ---------------------------------------------------------------- comparison


def parity(
    documents: Documents, translated: list[list[str | None]], reference: dict[str, str]
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


# ---------------------------------------------------------------- main


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "--mode", choices=["embedded"], default="embedded", help="deployment to measure"
    )
    return parser.parse_args()


def measure() -> dict[str, Any]:
    """Runs every measurement and returns the result document."""
    documents = build_documents(load_corpus())
    with dragoman_server() as server:
        translated, e2e = run_e2e(server.url, documents)
    raw_lines, raw_s = run_raw(documents)
    old_s = run_old_design(documents)
    reference, reference_s = timed(lambda: references({s for doc in documents for s in doc}))
    segments = sum(len(doc) for doc in documents)
    return {
        "workload": {"documents": len(documents), "segments": segments, "seed": SEED},
        "server": server.info,
        **e2e,
        "raw_engine_s": round(raw_s, 3),
        "old_design_s": round(old_s, 3),
        "ratios": {
            "e2e_over_raw": ratio(e2e["e2e_s"], raw_s),
            "e2e_over_raw_target_max": 2.0,
            "old_over_e2e": ratio(old_s, e2e["e2e_s"]),
            "old_over_e2e_target_min": 30.0,
            # The old_over_e2e of a service as fast as one engine process over the whole corpus:
            # about the most any service reaches here (only engines in parallel could beat it).
            "old_over_raw": ratio(old_s, raw_s),
        },
        "parity": {**parity(documents, translated, reference), "target": 1.0},
        "raw_concat_parity": concat_parity(documents, raw_lines, reference),
        "reference": {"distinct_segments": len(reference), "seconds": round(reference_s, 3)},
    }


def summarize(result: dict[str, Any]) -> str:
    ratios, par = result["ratios"], result["parity"]
    return (
        f"{result['workload']['documents']} docs / {result['workload']['segments']} segments: "
        f"e2e {result['e2e_s']:.2f}s, raw {result['raw_engine_s']:.2f}s, "
        f"old {result['old_design_s']:.2f}s\n"
        f"e2e/raw {ratios['e2e_over_raw']} (target ≤ 2), "
        f"old/e2e {ratios['old_over_e2e']} (target ≥ 30), "
        f"old/raw {ratios['old_over_raw']} (≈ the most old/e2e can reach)\n"
        f"parity {par['fraction']} ({par['mismatches']} mismatches), "
        f"jobs {result['job_statuses']}"
    )


def main() -> None:
    args = parse_args()
    report(NAME, {"mode": args.mode, **measure()}, summarize)


if __name__ == "__main__":
    main()
