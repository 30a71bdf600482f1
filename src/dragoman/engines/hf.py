"""Hugging Face transformers seq2seq models (MarianMT, NLLB), greedy, in length buckets.

A model directory is what ``save_pretrained`` writes for the model and its tokenizer. An NLLB
model also needs ``dragoman.json`` naming its codes, e.g.
``{"source_code": "eng_Latn", "target_code": "spa_Latn"}``.
"""

from __future__ import annotations

import contextlib
import gc
import json
import os
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dragoman.engines.long_inputs import in_parts_scored
from dragoman.engines.model_cache import ModelCache
from dragoman.engines.neural import HostedEngine, ModelHost
from dragoman.engines.scores import Hypothesis
from dragoman.errors import EngineError
from dragoman.models import Pair

DTYPES = ("float32", "bfloat16", "float16")


@contextlib.contextmanager
def quiet_transformers() -> Iterator[None]:
    """No progress bars, and no advice to install sacremoses (Marian's tokenizer gives it,
    and dragoman uses only its SentencePiece half)."""
    from transformers.utils import logging as hf_logging

    bars = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message="Recommended: pip install sacremoses")
            yield
    finally:
        if bars:
            hf_logging.enable_progress_bar()  # type: ignore[no-untyped-call]


def length_batches(lengths: Sequence[int], max_tokens: int) -> list[list[int]]:
    """Indexes of ``lengths``, shortest first, cut into batches whose padded size (longest
    times count) stays within ``max_tokens``; a segment longer than that goes alone."""
    batches: list[list[int]] = []
    batch: list[int] = []
    for i in sorted(range(len(lengths)), key=lengths.__getitem__):
        if batch and lengths[i] * (len(batch) + 1) > max_tokens:
            batches.append(batch)
            batch = []
        batch.append(i)
    return [*batches, batch] if batch else batches


@dataclass(slots=True)
class HfModel:
    tokenizer: Any
    model: Any
    max_input_tokens: int
    forced_bos_token_id: int | None

    def fits(self, text: str) -> bool:
        """Whether ``text`` is within ``max_input_tokens``, with the special tokens."""
        # Truncated one past the limit, which is enough to tell, so that the tokenizer
        # does not log that the sequence is longer than the model takes.
        cut = self.max_input_tokens + 1
        ids = self.tokenizer(text, truncation=True, max_length=cut)["input_ids"]
        return len(ids) <= self.max_input_tokens

    def unload(self) -> None:
        on_gpu = self.model.device.type == "cuda"
        self.model = self.tokenizer = None
        gc.collect()
        if on_gpu:
            import torch

            torch.cuda.empty_cache()


def load_hf(
    model_dir: Path, *, device: str = "cpu", dtype: str = "bfloat16", max_input_tokens: int = 512
) -> HfModel:
    """The model in ``model_dir``, in ``dtype`` on a GPU and float32 on a CPU."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # local directories only, never the Hub
    import torch
    from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

    torch_dtype = getattr(torch, dtype) if device.startswith("cuda") else torch.float32
    try:
        codes = _language_codes(model_dir)
        with quiet_transformers():
            tokenizer = AutoTokenizer.from_pretrained(model_dir, local_files_only=True)
            model = AutoModelForSeq2SeqLM.from_pretrained(
                model_dir, local_files_only=True, dtype=torch_dtype
            )
        model.to(device).eval()
    except Exception as exc:  # each file format has errors of its own (SafetensorError)
        raise EngineError(f"cannot load the transformers model in {model_dir}: {exc}") from None
    forced_bos = None
    if codes is not None:
        tokenizer.src_lang = codes["source_code"]
        target_id = tokenizer.convert_tokens_to_ids(codes["target_code"])
        if not isinstance(target_id, int) or target_id == tokenizer.unk_token_id:
            raise EngineError(f"{model_dir}: the tokenizer has no code {codes['target_code']!r}")
        forced_bos = target_id
    limit = min(max_input_tokens, getattr(model.config, "max_position_embeddings", 1 << 30))
    return HfModel(tokenizer, model, limit, forced_bos)


def _language_codes(model_dir: Path) -> dict[str, str] | None:
    path = model_dir / "dragoman.json"
    if not path.is_file():
        return None
    codes = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(codes, dict) or not {"source_code", "target_code"} <= codes.keys():
        raise ValueError(f"{path} must name source_code and target_code")
    return {key: str(codes[key]) for key in ("source_code", "target_code")}


class TransformersEngine(HostedEngine[HfModel]):
    """The ``transformers`` engine: one model per pair, greedy decoding, length buckets."""

    name = "transformers"
    gpu_capable = True

    def __init__(
        self,
        models_dir: Path,
        *,
        cache: ModelCache,
        device: str = "cpu",
        dtype: str = "bfloat16",
        batch_tokens: int = 16384,
        max_input_tokens: int = 512,
        max_output_tokens: int = 256,
    ) -> None:
        if dtype not in DTYPES:
            raise EngineError(f"dtype {dtype!r} is not one of {', '.join(DTYPES)}")
        self._host = ModelHost(
            self.name,
            models_dir,
            cache=cache,
            device=device,
            load=lambda path: load_hf(
                path, device=device, dtype=dtype, max_input_tokens=max_input_tokens
            ),
        )
        self._batch_tokens = batch_tokens
        self._max_input_tokens = max_input_tokens
        self._max_output_tokens = max_output_tokens

    def _runner(self, pair: Pair) -> Callable[[HfModel, list[str]], list[Hypothesis]]:
        """A segment longer than the model's input is cut into parts (``long_inputs``)."""
        return in_parts_scored(pair.source, HfModel.fits, self._run_scored)

    def _run_scored(self, loaded: HfModel, texts: list[str]) -> list[Hypothesis]:
        import torch
        from transformers import LogitsProcessorList

        tokenizer, model = loaded.tokenizer, loaded.model
        # Parts fit (``translate``), so truncation cuts nothing: it stays as a guard, the
        # model has no positions past its limit.
        ids = tokenizer(texts, truncation=True, max_length=loaded.max_input_tokens)["input_ids"]
        forced = {}
        if loaded.forced_bos_token_id is not None:
            forced["forced_bos_token_id"] = loaded.forced_bos_token_id
        outputs = [Hypothesis("")] * len(texts)
        for batch in length_batches([len(x) for x in ids], self._batch_tokens):
            inputs = tokenizer.pad({"input_ids": [ids[i] for i in batch]}, return_tensors="pt")
            chosen = ChosenLogProbs()
            with torch.inference_mode():
                generated = model.generate(
                    **inputs.to(model.device),
                    num_beams=1,
                    do_sample=False,
                    max_new_tokens=self._max_output_tokens,
                    logits_processor=LogitsProcessorList([chosen]),
                    **forced,
                )
            texts_out = tokenizer.batch_decode(generated, skip_special_tokens=True)
            sums, counts = chosen.per_output(generated, model.generation_config.eos_token_id)
            # A forced language code is no choice of the model's (its log-probability is 0).
            skip = int(loaded.forced_bos_token_id is not None)
            for row, (i, text) in enumerate(zip(batch, texts_out, strict=True)):
                outputs[i] = Hypothesis(text, sums[row], counts[row] - skip)
        return outputs


class ChosenLogProbs:
    """A logits processor, last in line, that keeps at each step the log-probability of the
    token greedy search takes: the highest one (it returns the scores as they are, so it
    changes no choice). ``output_scores`` would keep each step's whole vocabulary instead,
    gigabytes for a batch of thousands of segments."""

    def __init__(self) -> None:
        self._steps: list[Any] = []

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        self._steps.append(scores.float().log_softmax(-1).max(-1).values)
        return scores

    def per_output(
        self, generated: Any, eos: int | list[int] | None
    ) -> tuple[list[float], list[int]]:
        """Per row of ``generated``: the sum of its tokens' log-probabilities up to its end
        token (included), and how many tokens; the steps after it are padding."""
        import torch

        rows = len(generated)
        if not self._steps:
            return [0.0] * rows, [0] * rows
        steps = torch.stack(self._steps, dim=1)  # a row per output, a column per step
        chosen = generated[:, -steps.shape[1] :].to(steps.device)
        ends = [eos] if isinstance(eos, int) else list(eos or [])
        found = torch.isin(chosen, torch.tensor(ends, device=chosen.device, dtype=chosen.dtype))
        kept = (found.cumsum(1) - found.int()) == 0  # up to the first end token, included
        sums = torch.where(kept, steps, 0.0).sum(1)
        return [float(x) for x in sums.tolist()], [int(x) for x in kept.sum(1).tolist()]
