"""Tiny random MarianMT models, one per engine, for tests and benchmarks.

They translate nothing (their output is repetitive nonsense) but run the whole path of a
real model: SentencePiece, the shared vocabulary, the encoder and the greedy decoder. Built
from two small corpora in about a second: by default the ones packaged with dragoman
(``tiny_corpus/``: English licence texts and French sentences, one segment a line).
"""

from __future__ import annotations

import json
import shutil
import tempfile
from importlib import resources
from pathlib import Path
from typing import Any

from dragoman.engines import Pair
from dragoman.engines.hf import quiet_transformers


def default_corpus() -> tuple[Path, Path]:
    """The packaged corpora, source and target: English licence texts (GPL-3, Apache-2.0,
    MPL-2.0, a paragraph a line) and French sentences (one a line)."""
    folder = Path(str(resources.files("dragoman.engines") / "tiny_corpus"))
    return folder / "en.txt", folder / "fr.txt"


def build_tiny_models(
    out_dir: Path,
    *,
    pair: Pair = Pair("en", "fr"),
    source_corpus: Path | None = None,
    target_corpus: Path | None = None,
    seed: int = 0,
    full_size: bool = False,
) -> dict[str, Path]:
    """Writes ``out_dir/<pair>/transformers/`` and ``out_dir/<pair>/ctranslate2/``; returns
    both directories by engine name. A corpus not given is the packaged one
    (``default_corpus``). ``full_size`` gives OPUS-MT's shape (6+6 layers of 512, about
    45 M parameters with the tiny vocabulary): random weights of a real model's size, for
    measuring what size costs (installs, loading)."""
    import ctranslate2  # type: ignore[import-untyped]
    import torch
    from transformers import MarianMTModel, MarianTokenizer

    default_source, default_target = default_corpus()
    source_corpus = source_corpus or default_source
    target_corpus = target_corpus or default_target
    hf_dir = out_dir / str(pair) / "transformers"
    ct2_dir = out_dir / str(pair) / "ctranslate2"
    with tempfile.TemporaryDirectory() as scratch, quiet_transformers():
        work = Path(scratch)
        spms = {
            side: _train_spm(corpus, work / side)
            for side, corpus in (("source", source_corpus), ("target", target_corpus))
        }
        vocab_path = work / "vocab.json"
        vocab_path.write_text(json.dumps(_shared_vocab(list(spms.values()))), encoding="utf-8")
        tokenizer = MarianTokenizer(
            vocab=str(vocab_path),
            source_spm=str(spms["source"]),
            target_spm=str(spms["target"]),
            source_lang=pair.source,
            target_lang=pair.target,
        )
        torch.manual_seed(seed)
        model: Any = MarianMTModel(_config(tokenizer, full_size))
        model.eval()
        with torch.no_grad():
            # CTranslate2 starts the decoder from a zero embedding; so must the original.
            model.get_input_embeddings().weight[tokenizer.pad_token_id].zero_()
        model.save_pretrained(hf_dir)
        tokenizer.save_pretrained(hf_dir)
        ctranslate2.converters.TransformersConverter(str(hf_dir)).convert(str(ct2_dir), force=True)
        for path in spms.values():
            shutil.copy(path, ct2_dir / path.name)
    return {"transformers": hf_dir, "ctranslate2": ct2_dir}


def _train_spm(corpus: Path, prefix: Path) -> Path:
    import sentencepiece

    sentencepiece.SentencePieceTrainer.train(
        input=str(corpus),
        model_prefix=str(prefix),
        vocab_size=300,
        model_type="unigram",
        character_coverage=1.0,
        bos_id=-1,
        eos_id=1,
        unk_id=2,
        pad_id=0,
        minloglevel=2,
    )
    return prefix.with_suffix(".model").rename(prefix.with_suffix(".spm"))


def _shared_vocab(spm_paths: list[Path]) -> dict[str, int]:
    import sentencepiece

    vocab = {"</s>": 0, "<unk>": 1}
    for path in spm_paths:
        sp = sentencepiece.SentencePieceProcessor(model_file=str(path))
        for i in range(sp.get_piece_size()):
            if not (sp.is_control(i) or sp.is_unknown(i)):
                vocab.setdefault(sp.id_to_piece(i), len(vocab))
    # Last, because CTranslate2's Marian converter drops the vocabulary's last token.
    vocab["<pad>"] = len(vocab)
    return vocab


def _config(tokenizer: Any, full_size: bool = False) -> Any:
    from transformers import MarianConfig

    shape: dict[str, int] = (
        dict(d_model=64, layers=2, heads=4, ffn=128)
        if not full_size
        else dict(d_model=512, layers=6, heads=8, ffn=2048)
    )

    # init_std 0.3, not the usual 0.02, so that outputs depend on the input at all.
    return MarianConfig(
        vocab_size=len(tokenizer),
        init_std=0.3,
        d_model=shape["d_model"],
        encoder_layers=shape["layers"],
        decoder_layers=shape["layers"],
        encoder_attention_heads=shape["heads"],
        decoder_attention_heads=shape["heads"],
        encoder_ffn_dim=shape["ffn"],
        decoder_ffn_dim=shape["ffn"],
        max_position_embeddings=512,  # as OPUS-MT, the engines' default input limit
        pad_token_id=tokenizer.pad_token_id,
        eos_token_id=tokenizer.eos_token_id,
        decoder_start_token_id=tokenizer.pad_token_id,
        forced_eos_token_id=tokenizer.eos_token_id,
        share_encoder_decoder_embeddings=True,
    )
