"""The same 100 documents submitted again: what the segment cache saves, in one run.

One ``dragoman serve`` (fresh data dir) gets 100 documents of 5-40 licence lines as 100
jobs (pass 1), then the same 100 jobs again (pass 2, served from the segment cache), then
the same again with ``"cache": false`` (pass 3, the control: every segment to the engine).
Each pass is timed from the first submission to the last job finished, by one client that
submits from 8 threads and polls what has not finished yet.

Checks: pass 2's translations equal pass 1's and every one of them says ``cache``; pass 1
equals ``apertium eng-spa`` run on each segment alone (whitespace runs aside).
Target (issue 14): pass 2 / pass 1 ≤ 0.2.
"""

from __future__ import annotations

import argparse
import random
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
from common import SEED, dragoman_server, load_corpus, normalize, ratio, report, run_apertium

NAME = "reuse"
DOCUMENTS = 100
MIN_SEGMENTS, MAX_SEGMENTS = 5, 40
CLIENT_THREADS = 8
POLL_INTERVAL_S = 0.05
TIMEOUT_S = 180.0
TARGET_MAX = 0.2
FINISHED = {"succeeded", "failed", "cancelled"}

Documents = list[list[str]]


def build_documents(corpus: list[str], seed: int = SEED) -> Documents:
    rng = random.Random(seed)
    return [
        [rng.choice(corpus) for _ in range(rng.randint(MIN_SEGMENTS, MAX_SEGMENTS))]
        for _ in range(DOCUMENTS)
    ]


def submit(client: httpx.Client, index: int, segments: list[str], cache: bool) -> dict[str, Any]:
    body = {
        "source_lang": "en",
        "target_lang": "es",
        "documents": [{"name": f"doc-{index:03d}.txt", "segments": segments}],
        "cache": cache,
    }
    response = client.post("/v1/jobs", json=body)
    response.raise_for_status()
    job: dict[str, Any] = response.json()
    return job


def wait(client: httpx.Client, jobs: list[dict[str, Any]]) -> dict[str, str]:
    """Polls the jobs not finished at submission until all are; their final statuses."""
    status = {job["id"]: job["status"] for job in jobs}
    deadline = time.monotonic() + TIMEOUT_S
    while any(s not in FINISHED for s in status.values()):
        if time.monotonic() > deadline:
            raise TimeoutError(f"unfinished after {TIMEOUT_S:.0f}s: {Counter(status.values())}")
        time.sleep(POLL_INTERVAL_S)
        for job_id in [j for j, s in status.items() if s not in FINISHED]:
            status[job_id] = client.get(f"/v1/jobs/{job_id}").json()["status"]
    return status


def run_pass(url: str, documents: Documents, *, cache: bool) -> dict[str, Any]:
    """One pass end to end: timings, statuses, and each job's segments and origins."""
    with (
        httpx.Client(base_url=url, timeout=60.0) as client,
        ThreadPoolExecutor(CLIENT_THREADS) as pool,
    ):
        began = time.perf_counter()
        jobs = list(pool.map(lambda item: submit(client, *item, cache), enumerate(documents)))
        submitted_s = time.perf_counter() - began
        final = wait(client, jobs)
        elapsed = time.perf_counter() - began
        results = list(
            pool.map(
                lambda job: client.get(f"/v1/jobs/{job['id']}/result").json()["documents"][0],
                jobs,
            )
        )
    return {
        "e2e_s": round(elapsed, 3),
        "submit_s": round(submitted_s, 3),
        "succeeded_at_submission": sum(job["status"] == "succeeded" for job in jobs),
        "job_statuses": dict(Counter(final.values())),
        "origins": dict(Counter(o for r in results for o in r["origins"])),
        "segments": [r["segments"] for r in results],
    }


def alone_parity(documents: Documents, translated: list[list[str | None]]) -> dict[str, Any]:
    distinct = sorted({segment for doc in documents for segment in doc})
    with ThreadPoolExecutor(2) as pool:
        reference = dict(zip(distinct, pool.map(run_apertium, distinct), strict=True))
    pairs = [
        (src, out)
        for doc, outs in zip(documents, translated, strict=True)
        for src, out in zip(doc, outs, strict=True)
    ]
    same = sum(out is not None and normalize(out) == normalize(reference[s]) for s, out in pairs)
    return {"segments": len(pairs), "matches": same, "fraction": round(same / len(pairs), 4)}


def measure(documents: Documents, check_parity: bool) -> dict[str, Any]:
    with dragoman_server() as server:
        first = run_pass(server.url, documents, cache=True)
        second = run_pass(server.url, documents, cache=True)
        control = run_pass(server.url, documents, cache=False)
    result: dict[str, Any] = {
        "documents": len(documents),
        "segments": sum(len(doc) for doc in documents),
        "distinct_segments": len({s for doc in documents for s in doc}),
        "passes": {
            name: {k: v for k, v in data.items() if k != "segments"}
            for name, data in (("first", first), ("again", second), ("again_no_cache", control))
        },
        "again_over_first": ratio(second["e2e_s"], first["e2e_s"]),
        "again_no_cache_over_first": ratio(control["e2e_s"], first["e2e_s"]),
        "target_again_over_first_max": TARGET_MAX,
        "again_equals_first": second["segments"] == first["segments"],
    }
    if check_parity:
        result["first_pass_parity_with_apertium_alone"] = alone_parity(documents, first["segments"])
    return result


def summary(result: dict[str, Any]) -> str:
    passes = result["passes"]
    lines = [
        f"{result['documents']} documents, {result['segments']} segments "
        f"({result['distinct_segments']} distinct)",
        f"first pass            {passes['first']['e2e_s']:.3f} s",
        f"again (cache)         {passes['again']['e2e_s']:.3f} s  "
        f"= {result['again_over_first']} of the first (target <= {TARGET_MAX}); "
        f"{passes['again']['succeeded_at_submission']} jobs succeeded at submission",
        f"again, cache: false   {passes['again_no_cache']['e2e_s']:.3f} s  "
        f"= {result['again_no_cache_over_first']} of the first",
        f"again == first: {result['again_equals_first']}; origins again: "
        f"{passes['again']['origins']}",
    ]
    if "first_pass_parity_with_apertium_alone" in result:
        lines.append(f"parity: {result['first_pass_parity_with_apertium_alone']}")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--no-parity", action="store_true", help="skip the apertium-alone check")
    args = parser.parse_args()
    documents = build_documents(load_corpus())
    report(NAME, measure(documents, not args.no_parity), summary)


if __name__ == "__main__":
    main()
