"""What the neural benchmarks share: the raw library by batch size, one dragoman worker end
to end, and the old design (a fresh process per document) against the warm service.

The raw engine and the old design run ``RAW_SCRIPT``: the library alone (ctranslate2 with
SentencePiece, or transformers), without dragoman, in a process of its own, tokenization and
detokenization timed with the translation. ``bench/cpu_neural.py`` and ``bench/gpu.py`` differ
only in the device, the model and the settings that give the service its one worker.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
from common import (
    SEED,
    Service,
    dragoman_executable,
    free_port,
    ratio,
    spawned,
    timed,
    with_settings,
)

from dragoman.engines import Pair
from dragoman.engines.ct2 import detect_layout
from dragoman.engines.tiny import build_tiny_models

BATCH_SIZES = (1, 8, 64, 256, 1024, 2048)
MAX_BATCHES = 16  # per batch size: small sizes run on an evenly spaced sample
DOCUMENTS, MIN_SEGMENTS, MAX_SEGMENTS = 100, 5, 40
WARM_SEGMENTS = 8
LONG_POLL_S = 30.0  # the API allows up to 60
JOB_TIMEOUT_S = 1800.0
CLIENT_THREADS = 8
WORKER_OVER_RAW_TARGET_MIN = 0.95
# The line a CTranslate2 model logs when it measured its batch size (NEURAL_BATCH_TOKENS=auto).
MEASURED = "the fastest measured"
MAX_INPUT_TOKENS, MAX_OUTPUT_TOKENS = 512, 256  # dragoman's defaults
MAX_EXAMPLES, EXAMPLE_CHARS = 3, 160

# Stands alone on purpose: it is what one would write without dragoman. Reads a JSON spec on
# stdin, loads the model, translates each run in batches of its size (segments sorted by
# length, as CTranslate2 does given a batch size: less padding), prints JSON.
RAW_SCRIPT = """
import json, sys, time
spec = json.load(sys.stdin)
m = spec["model"]
started = time.perf_counter()
if m["engine"] == "ctranslate2":
    import ctranslate2, sentencepiece
    kind, _, index = m["device"].partition(":")
    translator = ctranslate2.Translator(
        m["model"], device=kind, device_index=int(index or 0), compute_type=m["precision"],
        inter_threads=1, intra_threads=m["threads"])
    source = sentencepiece.SentencePieceProcessor(model_file=m["source_spm"])
    target = sentencepiece.SentencePieceProcessor(model_file=m["target_spm"])
    limit = m["max_input_tokens"]
    def encode(text):
        pieces = source.encode(text, out_type=str)
        return pieces[: limit - 1] + ["</s>"] if m["append_eos"] else pieces[:limit]
    def translate(texts, size):  # CTranslate2 sorts by length, then cuts batches of size
        results = translator.translate_batch(
            [encode(text) for text in texts], max_batch_size=size, beam_size=1,
            max_input_length=0, max_decoding_length=m["max_output_tokens"])
        return [target.decode(result.hypotheses[0]) for result in results]
else:
    import torch
    from transformers import AutoModelForSeq2SeqLM, AutoTokenizer
    from transformers.utils import logging
    logging.set_verbosity_error()
    tokenizer = AutoTokenizer.from_pretrained(m["model"], local_files_only=True)
    model = AutoModelForSeq2SeqLM.from_pretrained(
        m["model"], local_files_only=True, dtype=getattr(torch, m["precision"]))
    model.to(m["device"]).eval()
    extra = {}
    if m["codes"]:
        tokenizer.src_lang = m["codes"]["source_code"]
        extra["forced_bos_token_id"] = tokenizer.convert_tokens_to_ids(m["codes"]["target_code"])
    limit = min(m["max_input_tokens"], getattr(model.config, "max_position_embeddings", 1 << 30))
    def translate(texts, size):  # sorted by length, as CTranslate2 does, in batches of size
        ids = tokenizer(texts, truncation=True, max_length=limit)["input_ids"]
        order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
        outputs = [""] * len(texts)
        for start in range(0, len(order), size):
            batch = order[start:start + size]
            inputs = tokenizer.pad({"input_ids": [ids[i] for i in batch]}, return_tensors="pt")
            with torch.inference_mode():
                out = model.generate(**inputs.to(m["device"]), num_beams=1, do_sample=False,
                                     max_new_tokens=m["max_output_tokens"], **extra)
            for i, text in zip(batch, tokenizer.batch_decode(out, skip_special_tokens=True)):
                outputs[i] = text
        return outputs
load_s = time.perf_counter() - started
if spec["warm"]:
    translate(spec["runs"][0]["segments"][:8], 8)
runs = []
for run in spec["runs"]:
    began = time.perf_counter()
    outputs = translate(run["segments"], run["batch_size"])
    runs.append({"seconds": time.perf_counter() - began, "outputs": outputs})
json.dump({"load_s": load_s, "runs": runs}, sys.stdout)
"""


@dataclass(frozen=True)
class Setup:
    """One engine's model on one device, as the raw library and dragoman both run it."""

    engine: str
    models_dir: Path
    pair: Pair
    device: str
    precision: str  # CTranslate2 compute type, or torch dtype
    threads: int

    @property
    def model_dir(self) -> Path:
        return self.models_dir / str(self.pair) / self.engine

    def model_spec(self) -> dict[str, Any]:
        """What ``RAW_SCRIPT`` needs to load the model."""
        spec: dict[str, Any] = {
            "engine": self.engine,
            "model": str(self.model_dir),
            "device": self.device,
            "precision": self.precision,
            "threads": self.threads,
            "max_input_tokens": MAX_INPUT_TOKENS,
            "max_output_tokens": MAX_OUTPUT_TOKENS,
            "codes": None,
        }
        if self.engine == "ctranslate2":
            layout = detect_layout(self.model_dir)
            spec |= {
                "model": str(layout.model),
                "source_spm": str(layout.source_spm),
                "target_spm": str(layout.target_spm),
                "append_eos": layout.append_eos,
            }
        elif (codes := self.model_dir / "dragoman.json").is_file():
            spec["codes"] = json.loads(codes.read_text(encoding="utf-8"))
        return spec


# ---------------------------------------------------------------- workload


def tiny_models(scratch: Path, pair: Pair, source: Path, target: Path) -> Path:
    """Builds the tiny MarianMT (both engines) under ``scratch/models``; returns that dir."""
    build_tiny_models(scratch / "models", pair=pair, source_corpus=source, target_corpus=target)
    return scratch / "models"


def build_documents(lines: list[str], seed: int = SEED) -> list[list[str]]:
    """``DOCUMENTS`` documents of 5-40 lines, drawn with replacement."""
    rng = random.Random(seed)
    return [
        [rng.choice(lines) for _ in range(rng.randint(MIN_SEGMENTS, MAX_SEGMENTS))]
        for _ in range(DOCUMENTS)
    ]


# ---------------------------------------------------------------- the raw library


def run_raw(setup: Setup, runs: list[tuple[int, list[str]]], warm: bool) -> dict[str, Any]:
    """``RAW_SCRIPT`` in a fresh process over ``(batch_size, segments)`` runs."""
    spec = {
        "model": setup.model_spec(),
        "warm": warm,
        "runs": [{"batch_size": size, "segments": texts} for size, texts in runs],
    }
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
    done = subprocess.run(
        [sys.executable, "-c", RAW_SCRIPT],
        input=json.dumps(spec),
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"raw engine failed ({done.returncode}):\n{done.stderr[-3000:]}")
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def sample(count: int, size: int, max_batches: int) -> list[int]:
    """Indexes of at most ``size * max_batches`` segments, evenly spaced over ``count``."""
    take = min(count, size * max_batches)
    return [i * count // take for i in range(take)]


def sweep(
    setup: Setup, segments: list[str], sizes: list[int], max_batches: int
) -> tuple[dict[str, Any], dict[int, dict[int, str]]]:
    """Segments/s of the raw library at each batch size, and each size's outputs by index."""
    usable = [size for size in sizes if size <= len(segments)]
    picks = {size: sample(len(segments), size, max_batches) for size in usable}
    found = run_raw(setup, [(s, [segments[i] for i in picks[s]]) for s in usable], warm=True)
    outputs = {
        size: dict(zip(picks[size], run["outputs"], strict=True))
        for size, run in zip(usable, found["runs"], strict=True)
    }
    rows = [
        {
            "batch_size": size,
            "segments": len(picks[size]),
            "seconds": round(run["seconds"], 3),
            "segments_per_s": round(len(picks[size]) / run["seconds"], 2),
        }
        for size, run in zip(usable, found["runs"], strict=True)
    ]
    best = max(rows, key=lambda row: row["segments_per_s"])
    reference = outputs[best["batch_size"]]
    for row in rows:  # how far batching alone changes outputs
        found_here = outputs[row["batch_size"]].items()
        row["differs_from_best"] = sum(reference.get(i, text) != text for i, text in found_here)
    skipped = [size for size in sizes if size > len(segments)]
    raw = {"load_s": round(found["load_s"], 3), "by_batch_size": rows, "best": best}
    return raw | ({"skipped_batch_sizes": skipped} if skipped else {}), outputs


def rerun_best(
    setup: Setup, texts: list[str], size: int, outputs: dict[int, dict[int, str]]
) -> float:
    """Segments/s of the best batch size measured again: on a shared machine, how far the
    raw figure drifts between the sweep and now."""
    picked = [texts[i] for i in sorted(outputs[size])]
    seconds: float = run_raw(setup, [(size, picked)], warm=True)["runs"][0]["seconds"]
    return round(len(picked) / seconds, 2)


# ---------------------------------------------------------------- dragoman


@contextmanager
def neural_server(settings: dict[str, str]) -> Iterator[Service]:
    """``dragoman serve`` as ``common.dragoman_server`` runs it; where the project is only on
    ``PYTHONPATH`` (no ``dragoman`` script), as ``python -m dragoman.cli``."""
    try:
        argv = [dragoman_executable()]
    except FileNotFoundError:
        argv = [sys.executable, "-m", "dragoman.cli"]
    with tempfile.TemporaryDirectory(prefix="dragoman-bench-") as tmp:
        port = free_port()
        argv += ["serve", "--host", "127.0.0.1", "--port", str(port), "--data-dir", tmp + "/data"]
        env = with_settings(settings)
        with spawned(argv, port, "/readyz", Path(tmp) / "server.log", env) as service:
            yield service


def submit(client: httpx.Client, setup: Setup, name: str, segments: list[str]) -> str:
    """One job of one document with ``setup``'s engine and pair; returns its id."""
    body = {
        "source_lang": setup.pair.source,
        "target_lang": setup.pair.target,
        "engine": setup.engine,
        "documents": [{"name": name, "segments": segments}],
        "cache": False,  # the engine's speed: nothing answered from an earlier job
    }
    response = client.post("/v1/jobs", json=body)
    if response.status_code != 202:
        raise RuntimeError(f"job refused: {response.status_code} {response.text[:300]}")
    job_id: str = response.json()["id"]
    return job_id


def wait_all(client: httpx.Client, ids: list[str]) -> dict[str, dict[str, Any]]:
    """Waits for each job with long polls (``GET /v1/jobs/{id}?wait=``, answered when its
    status or progress moves), as a client that waits for its jobs does; their final states
    once every job succeeded. A client polling every few milliseconds would take CPU from
    the engine it measures: with two cores, a poll of the job list every 50 ms cost the
    server about 5 % of a 1,024-segment job's time."""
    deadline = time.monotonic() + JOB_TIMEOUT_S
    jobs: dict[str, dict[str, Any]] = {}
    for job_id in ids:
        while time.monotonic() < deadline:
            wait = min(LONG_POLL_S, max(deadline - time.monotonic(), 0.1))
            response = client.get(f"/v1/jobs/{job_id}", params={"wait": round(wait, 1)})
            response.raise_for_status()
            job = response.json()
            if job["status"] in ("failed", "cancelled"):
                raise RuntimeError(f"job {job_id} {job['status']}: {job['error']}")
            if job["status"] == "succeeded":
                jobs[job_id] = job
                break
        else:
            raise TimeoutError(f"jobs unfinished after {JOB_TIMEOUT_S:.0f}s")
    return jobs


def fetch(client: httpx.Client, job_id: str) -> list[str]:
    """The translated segments of a one-document job."""
    response = client.get(f"/v1/jobs/{job_id}/result")
    response.raise_for_status()
    segments: list[str] = response.json()["documents"][0]["segments"]
    return segments


def run_jobs(client: httpx.Client, setup: Setup, documents: list[list[str]]) -> dict[str, Any]:
    """A job per document, all submitted at once, timed from the first POST until all
    succeeded; then their results, fetched."""
    with ThreadPoolExecutor(CLIENT_THREADS) as pool:
        started = time.perf_counter()
        ids = list(
            pool.map(lambda i: submit(client, setup, f"doc-{i:03d}.txt", documents[i]),
                     range(len(documents)))
        )  # fmt: skip
        jobs = wait_all(client, ids)
        total_s = time.perf_counter() - started
        results, fetch_s = timed(lambda: list(pool.map(lambda job: fetch(client, job), ids)))
    pools = dict(Counter(job["pool"] for job in jobs.values()))
    return {
        "total_s": total_s,
        "fetch_s": fetch_s,
        "pools": pools,
        "jobs": jobs,
        "results": results,
    }


def run_service(
    setup: Setup, settings: dict[str, str], segments: list[str], documents: list[list[str]]
) -> dict[str, Any]:
    """Warm one worker with a small job, then time one big job and the small documents."""
    with neural_server(settings) as server, httpx.Client(base_url=server.url, timeout=300) as c:
        warm = run_jobs(c, setup, [segments[:WARM_SEGMENTS]])
        big = run_jobs(c, setup, [segments])
        small = run_jobs(c, setup, documents)
        measured = [line for line in server.log.read_text().splitlines() if MEASURED in line]
    info = {**server.info, "batch_size_measured": measured}
    return {"warm": warm, "big": big, "small": small, "server": info}


def distinct(lines: list[str], count: int) -> list[str]:
    """``count`` segments from ``lines``, each once: past the last line, the lines again with
    a number. Every segment differs, so that a worker (which translates a segment repeated in
    a chunk once) does the raw engine's work, no less."""
    return [
        lines[i % len(lines)] + (f" ({i // len(lines)})" if i >= len(lines) else "")
        for i in range(count)
    ]


def old_design(setup: Setup, documents: list[list[str]]) -> tuple[float, list[list[str]]]:
    """Each document in a fresh process that loads the model, one after another."""
    outputs = []
    started = time.perf_counter()
    for doc in documents:
        outputs.append(run_raw(setup, [(len(doc), doc)], warm=False)["runs"][0]["outputs"])
    return time.perf_counter() - started, outputs


# ---------------------------------------------------------------- one run, all three


def worker_figures(service: dict[str, Any], raw: dict[str, Any], best: dict[int, str]) -> Any:
    """The big job's throughput against the raw best, and its parity with the raw best."""
    big, warm = service["big"], service["warm"]
    got = dict(enumerate(big["results"][0]))
    per_s = len(got) / big["total_s"]
    wrong = [i for i, text in best.items() if got.get(i) != text]
    over = ratio(per_s, raw["best"]["segments_per_s"])
    job = next(iter(big["jobs"].values()))
    return {
        "warm_job_s": round(warm["total_s"], 3),
        "warm_job_pools": warm["pools"],
        "pool": job["pool"],
        "e2e_s": round(big["total_s"], 3),
        "segments_per_s": round(per_s, 2),
        "fetch_s": round(big["fetch_s"], 3),
        "job_times": {key: job[key] for key in ("created_at", "started_at", "finished_at")},
        "over_raw_best": over,
        "over_raw_best_rerun": ratio(per_s, raw["best_rerun_per_s"]),
        "target_min": WORKER_OVER_RAW_TARGET_MIN,
        "met": over is not None and over >= WORKER_OVER_RAW_TARGET_MIN,
        "parity": {
            "against": f"raw at batch size {raw['best']['batch_size']}",
            "segments": len(best),
            "mismatches": len(wrong),
            "examples": [
                {
                    "index": i,
                    "raw": best[i][:EXAMPLE_CHARS],
                    "dragoman": (got.get(i) or "")[:EXAMPLE_CHARS],
                }
                for i in wrong[:MAX_EXAMPLES]
            ],
        },
    }


def old_figures(
    service: dict[str, Any], old_s: float, old_outputs: list[list[str]], documents: int
) -> dict[str, Any]:
    """The old design's total (extrapolated when it ran fewer documents) against the service."""
    small, ran = service["small"], len(old_outputs)
    per_doc = old_s / ran
    total = per_doc * documents
    differ = sum(
        a != b
        for old, new in zip(old_outputs, small["results"], strict=False)
        for a, b in zip(old, new, strict=True)
    )
    return {
        "documents": documents,
        "fresh_processes_run": ran,
        "extrapolated": ran < documents,
        "old_total_s": round(total, 3),
        "old_per_document_s": round(per_doc, 3),
        "warm_total_s": round(small["total_s"], 3),
        "warm_pools": small["pools"],
        "old_over_warm": ratio(total, small["total_s"]),
        "segments_differing_old_vs_warm": differ,
    }


def measure(
    setup: Setup,
    settings: dict[str, str],
    lines: list[str],
    *,
    segments: int,
    batch_sizes: list[int],
    max_batches: int,
    old_documents: int,
) -> dict[str, Any]:
    """The raw sweep, the dragoman worker, and the old design, one after another (never two
    at once: each has the machine to itself)."""
    texts = distinct(lines, segments)
    documents = build_documents(lines)
    load_before = os.getloadavg()[0]
    raw, outputs = sweep(setup, texts, batch_sizes, max_batches)
    service = run_service(setup, settings, texts, documents)
    raw["best_rerun_per_s"] = rerun_best(setup, texts, raw["best"]["batch_size"], outputs)
    old_s, old_outputs = old_design(setup, documents[:old_documents])
    return {
        "setup": {**setup.model_spec(), "settings": settings},
        "workload": {
            "segments": segments,
            "distinct_lines": len(set(lines)),
            "distinct_segments": len(set(texts)),
            "documents": len(documents),
            "document_segments": sum(len(doc) for doc in documents),
            "seed": SEED,
            "max_batches_per_size": max_batches,
        },
        "raw": raw,
        "worker": worker_figures(service, raw, outputs[raw["best"]["batch_size"]]),
        "old_vs_warm": old_figures(service, old_s, old_outputs, len(documents)),
        "server": service["server"],
        "load_1m": {"before": load_before, "after": os.getloadavg()[0]},
    }


def summarize(result: dict[str, Any]) -> str:
    raw, worker, old = result["raw"], result["worker"], result["old_vs_warm"]
    sizes = ", ".join(f"{r['batch_size']}: {r['segments_per_s']}/s" for r in raw["by_batch_size"])
    best, parity = raw["best"], worker["parity"]
    return "\n".join(
        [
            f"raw {result['setup']['engine']} on {result['setup']['device']}: {sizes}",
            f"worker e2e ({worker['pool']} pool): {worker['segments_per_s']}/s, "
            f"{worker['over_raw_best']} of raw best ({best['segments_per_s']}/s at batch "
            f"{best['batch_size']}), target >= {worker['target_min']}: "
            f"{'met' if worker['met'] else 'NOT met'} (raw best again after: "
            f"{raw['best_rerun_per_s']}/s, ratio {worker['over_raw_best_rerun']}); "
            f"parity {parity['mismatches']} mismatches in {parity['segments']}",
            f"old design {old['old_total_s']}s ({old['old_per_document_s']}s a document"
            f"{', extrapolated' if old['extrapolated'] else ''}) vs warm service "
            f"{old['warm_total_s']}s for {old['documents']} documents: x{old['old_over_warm']}",
            *[f"server: {line}" for line in result["server"].get("batch_size_measured", [])],
        ]
    )
