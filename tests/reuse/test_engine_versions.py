"""An engine's version changes when what decides its output changes: an Apertium pair's
data or programs, a neural model's files."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from dragoman.engines.apertium import ApertiumEngine
from dragoman.engines.apertium.version import pair_version
from dragoman.engines.neural import model_fingerprint
from dragoman.models import Pair


def test_an_apertium_pair_version_follows_its_mode_and_the_files_it_names(
    tmp_path: Path,
) -> None:
    data = tmp_path / "eng-spa.automorf.bin"
    data.write_bytes(b"v1")
    mode = tmp_path / "eng-spa.mode"
    mode.write_text(f"lt-proc '{data}' | apertium-pretransfer\n")
    first = pair_version(mode)
    assert first == pair_version(mode) and first.startswith("apertium-")
    data.write_bytes(b"v2 longer")
    second = pair_version(mode)
    assert second != first
    os.utime(data, ns=(1, 1))
    assert pair_version(mode) != second
    mode.write_text(f"lt-proc -b '{data}' | apertium-pretransfer\n")
    assert pair_version(mode) not in (first, second)


def test_apertium_versions_are_per_pair_and_agree_between_engines() -> None:
    modes = Path("/usr/share/apertium/modes")
    one, two = ApertiumEngine(modes), ApertiumEngine(modes)
    en_es, en_ca = Pair("en", "es"), Pair("en", "ca")
    assert one.version(en_es) == two.version(en_es)
    assert one.version(en_es) != one.version(en_ca)


def test_a_model_fingerprint_follows_its_files_not_their_place(tmp_path: Path) -> None:
    model = tmp_path / "a" / "model"
    model.mkdir(parents=True)
    (model / "model.bin").write_bytes(os.urandom(3 << 20))
    (model / "source.spm").write_bytes(b"spm")
    print_one = model_fingerprint(model)
    copy = tmp_path / "b" / "model"
    shutil.copytree(model, copy)
    assert model_fingerprint(copy) == print_one
    weights = bytearray((copy / "model.bin").read_bytes())
    weights[-1] ^= 0xFF  # the last byte: in the sampled tail
    (copy / "model.bin").write_bytes(bytes(weights))
    assert model_fingerprint(copy) != print_one
    (model / "extra.json").write_text("{}")
    assert model_fingerprint(model) != print_one
