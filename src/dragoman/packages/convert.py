"""Hugging Face Marian (OPUS-MT) folders, converted to CTranslate2 with its own converter."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from dragoman.packages.errors import PackageError

_SPMS = ("source.spm", "target.spm")


def is_hf_marian(folder: Path) -> bool:
    try:
        config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(config, dict) and config.get("model_type") == "marian"


def convert_marian(folder: Path, out: Path) -> None:
    """Writes the int8 CTranslate2 model of ``folder`` to ``out``, with its SentencePiece
    models beside it (the layout ``engines/ct2.py`` serves)."""
    import ctranslate2  # type: ignore[import-untyped]

    from dragoman.engines.hf import quiet_transformers

    missing = [name for name in _SPMS if not (folder / name).is_file()]
    if missing:
        raise PackageError(f"{folder} is a Marian model without {', '.join(missing)}")
    try:
        with quiet_transformers():
            converter = ctranslate2.converters.TransformersConverter(
                str(folder), copy_files=list(_SPMS)
            )
            converter.convert(str(out), quantization="int8", force=True)
    except (OSError, ValueError, RuntimeError, KeyError) as exc:
        raise PackageError(f"cannot convert {folder} to CTranslate2: {exc}") from None


def model_card_licence(folder: Path) -> str | None:
    """The ``license:`` of a Hugging Face model card's front matter (README.md)."""
    try:
        text = (folder / "README.md").read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    if not text.startswith("---"):
        return None
    front, _, _ = text[3:].partition("\n---")
    try:
        card = yaml.safe_load(front)
    except yaml.YAMLError:
        return None
    licence = card.get("license") if isinstance(card, dict) else None
    return str(licence).upper() if isinstance(licence, str) else None
