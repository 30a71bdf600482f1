"""A neural engine on a CUDA GPU: the raw library by batch size, one in-process dragoman GPU
worker end to end (target: at least 0.95 of the raw best, with the same outputs), and the old
design (a fresh process per document) against the warm service. Exits with status 2 when
there is no CUDA device.

    python bench/gpu.py [--models-dir models] [--pair en-fr] [--engine transformers]

Without --models-dir it builds the tiny MarianMT (flagged in the JSON). The text is the
repository's ``tests/data`` corpus (or ``$DRAGOMAN_CORPUS_DIR``); without an installed
``dragoman`` script, the server runs as ``python -m dragoman.cli`` (``PYTHONPATH=src`` will
do). Every job goes to the GPU worker, the small ones too (``GPU_THRESHOLD_SEGMENTS``).
``--device cpu`` runs this same path on the CPU (the GPU pool's engines on the CPU), for a
dry run with small sizes: it writes ``gpu_dryrun.json``, never ``gpu.json``.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from common import corpus_dir, report
from neural import BATCH_SIZES, MAX_BATCHES, Setup, measure, summarize, tiny_models

from dragoman.engines import Pair

SEGMENTS = 4096
OLD_DOCUMENTS = 10  # a fresh process starts torch and CUDA: seconds each; the rest extrapolated
PRECISION = {"ctranslate2": "float16", "transformers": "bfloat16"}  # dragoman's GPU defaults
PRECISION_SETTING = {
    "ctranslate2": "DRAGOMAN_CT2_GPU_COMPUTE_TYPE",
    "transformers": "DRAGOMAN_TRANSFORMERS_GPU_DTYPE",
}
CPU_PRECISION = {"ctranslate2": "int8", "transformers": "float32"}
# Every job, the warm-up and the small documents too, goes to the GPU worker: with a higher
# threshold the small jobs would be measured on the CPU pool.
GPU_THRESHOLD_SEGMENTS = 1


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--models-dir", type=Path, help="models/<pair>/<engine>/; default: tiny")
    parser.add_argument("--pair", default="en-fr")
    parser.add_argument("--engine", choices=sorted(PRECISION), default="transformers")
    parser.add_argument("--precision", help="compute type or dtype; default dragoman's")
    parser.add_argument("--segments", type=int, default=SEGMENTS, help="segments of the job")
    parser.add_argument("--batch-sizes", type=int, nargs="+", default=list(BATCH_SIZES))
    parser.add_argument(
        "--max-batches", type=int, default=MAX_BATCHES, help="per batch size (a sample beyond)"
    )
    parser.add_argument(
        "--old-documents", type=int, default=OLD_DOCUMENTS, help="fresh processes run"
    )
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1, help="ctranslate2")
    parser.add_argument("--device", default="cuda", help=argparse.SUPPRESS)  # cpu: a dry run
    parser.add_argument(
        "--setting", action="append", default=[], metavar="DRAGOMAN_X=V", help="for dragoman"
    )
    args = parser.parse_args()
    if any(not item.startswith("DRAGOMAN_") or "=" not in item for item in args.setting):
        parser.error("--setting looks like DRAGOMAN_CHUNK_SEGMENTS=1024")
    source, _, target = args.pair.partition("-")
    if not (source and target):
        parser.error("--pair looks like en-fr")
    if min(args.segments, args.threads, args.max_batches, args.old_documents) < 1:
        parser.error("--segments, --threads, --max-batches and --old-documents must be >= 1")
    return args


def check_device(device: str, engine: str) -> dict[str, Any]:
    """The GPU's name, or exit 2 when the engine's library sees no CUDA device."""
    if not device.startswith("cuda"):
        return {"gpu": None, "dry_run_on": device}
    import torch

    if not torch.cuda.is_available():
        print(
            "no CUDA device: torch.cuda.is_available() is false; nothing measured", file=sys.stderr
        )
        sys.exit(2)
    if engine == "ctranslate2":
        import ctranslate2  # type: ignore[import-untyped]

        if ctranslate2.get_cuda_device_count() == 0:
            print("ctranslate2 sees no CUDA device (its CUDA 12 libraries?)", file=sys.stderr)
            sys.exit(2)
    return {"gpu": torch.cuda.get_device_name(torch.device(device))}


def corpus_files() -> tuple[Path, Path]:
    """The English corpus and a French one for the tiny model's target side."""
    folder = corpus_dir()
    return folder / "en_licenses.txt", folder / "fr_sentences.txt"


def read_lines(path: Path) -> list[str]:
    return [line.strip() for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def settings(setup: Setup) -> dict[str, str]:
    """One in-process GPU worker, started at once, that gets every job; one CPU worker."""
    return {
        "DRAGOMAN_MODELS_DIR": str(setup.models_dir),
        "DRAGOMAN_GPU_MAX_WORKERS": "1",
        "DRAGOMAN_GPU_MIN_WORKERS": "1",
        "DRAGOMAN_GPU_THRESHOLD_SEGMENTS": str(GPU_THRESHOLD_SEGMENTS),
        "DRAGOMAN_CPU_MAX_WORKERS": "1",
        "DRAGOMAN_GPU_DEVICE": setup.device,
        "DRAGOMAN_NEURAL_THREADS": str(setup.threads),
        PRECISION_SETTING[setup.engine]: setup.precision,
    }


def versions() -> dict[str, str | None]:
    found: dict[str, str | None] = {}
    for name in ("torch", "transformers", "ctranslate2", "sentencepiece"):
        try:
            found[name] = version(name)
        except PackageNotFoundError:
            found[name] = None
    return found


def main() -> None:
    args = parse_args()
    device_info = check_device(args.device, args.engine)
    on_gpu = args.device.startswith("cuda")
    precision = args.precision or (PRECISION if on_gpu else CPU_PRECISION)[args.engine]
    pair = Pair(*args.pair.split("-", 1))
    with tempfile.TemporaryDirectory(prefix="gpu-bench-") as tmp:
        source, target = corpus_files()
        tiny = args.models_dir is None
        models = tiny_models(Path(tmp), pair, source, target) if tiny else args.models_dir
        setup = Setup(args.engine, models.resolve(), pair, args.device, precision, args.threads)
        result = measure(
            setup,
            settings(setup) | dict(x.split("=", 1) for x in args.setting),
            read_lines(source),
            segments=args.segments,
            batch_sizes=args.batch_sizes,
            max_batches=args.max_batches,
            old_documents=min(args.old_documents, 100),
        )
    model = {"tiny": tiny, "pair": str(pair), "corpus": source.name}
    document = {"device": device_info, "versions": versions(), "model": model, **result}
    if result["worker"]["pool"] != "gpu" or result["old_vs_warm"]["warm_pools"] != {"gpu": 100}:
        print("warning: some jobs did not run on the GPU worker", file=sys.stderr)
    report("gpu" if on_gpu else "gpu_dryrun", document, summarize)


if __name__ == "__main__":
    main()
