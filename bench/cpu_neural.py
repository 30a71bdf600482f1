"""A neural engine on the CPU: the raw library by batch size, one dragoman CPU worker end to
end (target: at least 0.95 of the raw best, with the same outputs), and the old design (a
fresh process per document) against the warm service. Uses the tiny MarianMT, built at start.

    .venv/bin/python bench/cpu_neural.py [--engine ctranslate2|transformers] [--segments N]

The tiny model never emits its end token, so every segment decodes the full 256 tokens:
4,096 segments would take about 13 minutes on two cores, hence 1,024 by default (batch
sizes above it are skipped). ``--setting DRAGOMAN_CHUNK_SEGMENTS=1024`` and the like try
other dragoman settings against the same raw figures.
"""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path

from common import corpus_dir, load_corpus, report
from neural import BATCH_SIZES, MAX_BATCHES, Setup, measure, summarize, tiny_models

from dragoman.engines import Pair

SEGMENTS = 1024
PAIR = Pair("en", "fr")


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--engine", choices=["ctranslate2", "transformers"], default="ctranslate2")
    parser.add_argument("--segments", type=int, default=SEGMENTS, help="segments of the job")
    parser.add_argument("--compute-type", default="int8", help="ctranslate2's, on both sides")
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1, help="ctranslate2")
    parser.add_argument("--batch-sizes", type=int, nargs="+", default=list(BATCH_SIZES))
    parser.add_argument(
        "--max-batches", type=int, default=MAX_BATCHES, help="per batch size (a sample beyond)"
    )
    parser.add_argument(
        "--old-documents", type=int, default=100, help="fresh processes run (rest extrapolated)"
    )
    parser.add_argument(
        "--setting", action="append", default=[], metavar="DRAGOMAN_X=V", help="for dragoman"
    )
    args = parser.parse_args()
    if any(not item.startswith("DRAGOMAN_") or "=" not in item for item in args.setting):
        parser.error("--setting looks like DRAGOMAN_CHUNK_SEGMENTS=1024")
    if min(args.segments, args.threads, args.max_batches, args.old_documents) < 1:
        parser.error("--segments, --threads, --max-batches and --old-documents must be >= 1")
    return args


def settings(setup: Setup, compute_type: str) -> dict[str, str]:
    """One in-process CPU worker over the models, with the raw side's precision and threads."""
    return {
        "DRAGOMAN_MODELS_DIR": str(setup.models_dir),
        "DRAGOMAN_CPU_MAX_WORKERS": "1",
        "DRAGOMAN_GPU_MAX_WORKERS": "0",
        "DRAGOMAN_NEURAL_THREADS": str(setup.threads),
        "DRAGOMAN_CT2_COMPUTE_TYPE": compute_type,
    }


def main() -> None:
    args = parse_args()
    with tempfile.TemporaryDirectory(prefix="cpu-neural-") as tmp:
        source, target = corpus_dir() / "en_licenses.txt", corpus_dir() / "fr_sentences.txt"
        models = tiny_models(Path(tmp), PAIR, source, target)
        # dragoman runs transformers in float32 on a CPU, whatever it is told
        precision = args.compute_type if args.engine == "ctranslate2" else "float32"
        setup = Setup(args.engine, models, PAIR, "cpu", precision, args.threads)
        result = measure(
            setup,
            settings(setup, args.compute_type) | dict(x.split("=", 1) for x in args.setting),
            load_corpus(source.name),
            segments=args.segments,
            batch_sizes=args.batch_sizes,
            max_batches=args.max_batches,
            old_documents=min(args.old_documents, 100),
        )
    report("cpu_neural", {"model": {"tiny": True, "pair": str(PAIR)}, **result}, summarize)


if __name__ == "__main__":
    main()
