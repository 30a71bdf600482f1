"""CTranslate2 models: OPUS-MT conversions and unpacked Argos Translate packages.

Two layouts of a model directory are recognised:

- ``ct2-transformers-converter`` output (OPUS-MT): ``model.bin`` with ``source.spm`` and
  ``target.spm``, or one ``sentencepiece.model`` for both sides. Marian models were trained
  on sources ending in ``</s>`` and the converter does not add it, so the engine appends it.
- An Argos Translate package: ``model/`` (the CTranslate2 model) and ``sentencepiece.model``.
  These OpenNMT-py models were trained on plain SentencePiece pieces, and argos-translate
  feeds them nothing else, so neither does the engine.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from dragoman.engines import batch_size
from dragoman.engines.batch_size import PROBE_TEXTS
from dragoman.engines.long_inputs import in_parts_scored
from dragoman.engines.model_cache import ModelCache
from dragoman.engines.neural import HostedEngine, ModelHost
from dragoman.engines.scores import Hypothesis
from dragoman.errors import EngineError
from dragoman.models import Pair

_EOS = "</s>"
log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Layout:
    model: Path
    source_spm: Path
    target_spm: Path
    append_eos: bool


def detect_layout(model_dir: Path) -> Layout:
    """Where the model and its SentencePiece models are, or ``EngineError`` naming the dir."""
    if (model_dir / "model.bin").is_file():
        for source, target in (("source.spm", "target.spm"), ("sentencepiece.model",) * 2):
            if (model_dir / source).is_file() and (model_dir / target).is_file():
                return Layout(model_dir, model_dir / source, model_dir / target, append_eos=True)
        raise EngineError(
            f"{model_dir} has a model.bin but neither source.spm and target.spm"
            " nor sentencepiece.model"
        )
    spm = model_dir / "sentencepiece.model"
    if (model_dir / "model" / "model.bin").is_file() and spm.is_file():
        return Layout(model_dir / "model", spm, spm, append_eos=False)
    raise EngineError(
        f"{model_dir} is neither a CTranslate2 model (model.bin) nor an Argos Translate"
        " package (model/ and sentencepiece.model)"
    )


@dataclass(slots=True)
class Ct2Model:
    translator: Any  # ctranslate2.Translator; the package has no type hints
    source: Any  # sentencepiece.SentencePieceProcessor
    target: Any
    append_eos: bool
    batch_tokens: int = 16384  # the sub-batch size, configured or measured at load

    def fits(self, text: str, max_tokens: int) -> bool:
        """Whether ``text`` is within ``max_tokens`` pieces, with the ``</s>`` if appended."""
        return len(self.source.encode(text)) + self.append_eos <= max_tokens

    def encode(self, text: str, max_tokens: int) -> list[str]:
        pieces: list[str] = self.source.encode(text, out_type=str)
        if self.append_eos:
            return [*pieces[: max_tokens - 1], _EOS]
        return pieces[:max_tokens]

    def unload(self) -> None:
        self.translator.unload_model()
        self.translator = None


def load_ct2(
    model_dir: Path, *, device: str = "cpu", compute_type: str = "int8", threads: int = 1
) -> Ct2Model:
    """The model in ``model_dir``, or ``EngineError`` naming the dir."""
    import ctranslate2  # type: ignore[import-untyped]
    import sentencepiece

    layout = detect_layout(model_dir)
    kind, _, index = device.partition(":")
    try:
        translator = ctranslate2.Translator(
            str(layout.model),
            device=kind,
            device_index=int(index or 0),
            compute_type=compute_type,
            inter_threads=1,
            intra_threads=threads,
        )
        source = sentencepiece.SentencePieceProcessor(model_file=str(layout.source_spm))
        target = sentencepiece.SentencePieceProcessor(model_file=str(layout.target_spm))
    except Exception as exc:  # RuntimeError, ValueError, sentencepiece's OSError, ...
        raise EngineError(f"cannot load the CTranslate2 model in {model_dir}: {exc}") from None
    return Ct2Model(translator, source, target, layout.append_eos)


class CTranslate2Engine(HostedEngine[Ct2Model]):
    """The ``ctranslate2`` engine: one model per pair, greedy decoding, batches by tokens."""

    name = "ctranslate2"
    gpu_capable = True

    def __init__(
        self,
        models_dir: Path,
        *,
        cache: ModelCache,
        device: str = "cpu",
        compute_type: str = "int8",
        threads: int = 1,
        batch_tokens: int | Literal["auto"] = 16384,
        max_input_tokens: int = 512,
        max_output_tokens: int = 256,
    ) -> None:
        self._host = ModelHost(
            self.name,
            models_dir,
            cache=cache,
            device=device,
            load=lambda path: self._sized(
                load_ct2(path, device=device, compute_type=compute_type, threads=threads), path
            ),
        )
        self._device = device
        self._batch_tokens = batch_tokens
        # Sizes measured, by model folder (its path, inode and change time): a model unloaded
        # to make room and loaded again is not measured again; an upgraded one is.
        self._measured: dict[tuple[str, int, int], int] = {}
        self._max_input_tokens = max_input_tokens
        self._max_output_tokens = max_output_tokens

    def _runner(self, pair: Pair) -> Callable[[Ct2Model, list[str]], list[Hypothesis]]:
        """A segment longer than the model's input is cut into parts (``long_inputs``)."""
        return in_parts_scored(pair.source, self._fits, self._run_scored)

    def _sized(self, model: Ct2Model, path: Path) -> Ct2Model:
        """The model with its batch size: configured, or measured now (``batch_size``)."""
        if self._batch_tokens != "auto":
            model.batch_tokens = self._batch_tokens
            return model
        folder = path.stat()
        key = (str(path), folder.st_ino, folder.st_ctime_ns)
        if key in self._measured:
            model.batch_tokens = self._measured[key]
            return model
        self._probe(model, 1)  # the first call's one-time costs stay out of the figures
        sizes = batch_size.CPU_SIZES if self._device == "cpu" else batch_size.GPU_SIZES
        measured = batch_size.fastest(lambda size: self._probe(model, size), sizes)
        model.batch_tokens = self._measured[key] = measured.size
        rates = ", ".join(f"{size}: {rate:.0f}" for size, rate in measured.rates.items())
        log.info(
            "%s on %s: batches of %d tokens, the fastest measured (tokens/s by size: %s)",
            path,
            self._device,
            measured.size,
            rates,
        )
        return model

    def _probe(self, model: Ct2Model, size: int) -> float:
        """Tokens per second of the probe in batches of ``size`` tokens."""
        encoded = {text: model.encode(text, self._max_input_tokens) for text in PROBE_TEXTS}
        texts = batch_size.probe_texts(size, lambda text: len(encoded[text]))
        pieces = [encoded[text] for text in texts]

        def run() -> object:
            return model.translator.translate_batch(
                pieces,
                max_batch_size=size,
                batch_type="tokens",
                beam_size=1,
                max_input_length=0,
                max_decoding_length=self._max_output_tokens,
            )

        return batch_size.rate(run, sum(map(len, pieces)))

    def _fits(self, model: Ct2Model, text: str) -> bool:
        return model.fits(text, self._max_input_tokens)

    def _run_scored(self, model: Ct2Model, texts: list[str]) -> list[Hypothesis]:
        # Given max_batch_size, CTranslate2 sorts the batch by length and cuts it into
        # sub-batches of at most that many tokens, so padding stays small.
        results = model.translator.translate_batch(
            [model.encode(text, self._max_input_tokens) for text in texts],
            max_batch_size=model.batch_tokens,
            batch_type="tokens",
            beam_size=1,
            # encode truncates keeping the </s> the model expects, which CTranslate2's own
            # truncation would drop; parts fit (``translate``), so it cuts nothing.
            max_input_length=0,
            max_decoding_length=self._max_output_tokens,
            # Greedy search adds up each token's log-probability and divides the sum by the
            # output's length (length_penalty 1): with the end token in the output, that is
            # the mean over every token the model chose. The argmax of log-probabilities is
            # that of the logits, so the tokens are the same.
            return_scores=True,
            return_end_token=True,
        )
        return [_hypothesis(model, result) for result in results]


def _hypothesis(model: Ct2Model, result: Any) -> Hypothesis:
    tokens: list[str] = result.hypotheses[0]
    text = model.target.decode(tokens[:-1] if tokens[-1:] == [_EOS] else tokens)
    return Hypothesis(text, result.scores[0] * len(tokens), len(tokens))
