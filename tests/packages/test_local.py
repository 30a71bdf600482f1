"""Installs with no network (``--from``: an Argos package, a CTranslate2 or Hugging Face
folder, a bundle), hostile archives, verify and remove, one install of a pair at a time,
and a disk that fills up."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from dragoman.cli import app
from dragoman.engines.manifest import read_manifest
from tests.packages.builders import argos_package, index_entry, write_index
from tests.packages.server import PackageServer
from tests.processes import reaped

OFFLINE = {"DRAGOMAN_OFFLINE": "1", "COLUMNS": "200"}


def cli(*args: str) -> Result:
    return CliRunner().invoke(
        app,
        ["models", *args, "--progress", "none"] if args[0] == "install" else ["models", *args],
        env=OFFLINE,
    )


def test_an_argos_package_installs_from_a_file_with_its_pair_from_its_metadata(
    tiny: dict[str, Path], tmp_path: Path, models: Path
) -> None:
    package = argos_package(
        tiny["ctranslate2"], tmp_path / "p.argosmodel", source="en", target="es", version="1.9"
    )

    done = cli("install", "--from", str(package), "--models-dir", str(models))

    assert done.exit_code == 0, done.output
    manifest = read_manifest(models / "en-es" / "ctranslate2")
    assert manifest is not None and (manifest.version, manifest.pair) == ("1.9", "en-es")
    assert manifest.source == str(package.resolve())


def test_an_opus_mt_ct2_folder_installs_under_the_pair_named(
    tiny: dict[str, Path], models: Path
) -> None:
    done = cli(
        "install",
        "de-en",
        "--from",
        str(tiny["ctranslate2"]),
        "--models-dir",
        str(models),
        "--licence",
        "CC-BY-4.0",
    )

    assert done.exit_code == 0, done.output
    installed = models / "de-en" / "ctranslate2"
    assert {"model.bin", "source.spm", "target.spm"} <= {p.name for p in installed.iterdir()}
    manifest = read_manifest(installed)
    assert manifest is not None and manifest.licence == "CC-BY-4.0"
    assert manifest.attribution and "CC-BY-4.0" in manifest.attribution


def test_a_hugging_face_marian_folder_is_converted_to_int8_ctranslate2(
    tiny: dict[str, Path], models: Path, tmp_path: Path
) -> None:
    hf = tmp_path / "opus-mt-en-it"
    shutil.copytree(tiny["transformers"], hf)
    (hf / "README.md").write_text("---\nlicense: cc-by-4.0\n---\n# opus-mt-en-it\n")

    done = cli("install", "en-it", "--from", str(hf), "--models-dir", str(models))

    assert done.exit_code == 0, done.output
    installed = models / "en-it" / "ctranslate2"
    config = json.loads((installed / "config.json").read_text())
    assert config["unk_token"] == "<unk>"
    assert (installed / "model.bin").stat().st_size < (hf / "model.safetensors").stat().st_size
    manifest = read_manifest(installed)
    assert manifest is not None and manifest.licence == "CC-BY-4.0"


def test_a_folder_without_a_pair_is_refused_with_a_hint(
    tiny: dict[str, Path], models: Path
) -> None:
    done = cli("install", "--from", str(tiny["ctranslate2"]), "--models-dir", str(models))

    assert done.exit_code == 1
    assert "does not say its language pair" in done.output


@pytest.mark.parametrize(
    ("member", "kind", "why"),
    [
        ("../escaped.txt", "file", "points outside it"),
        ("/tmp/absolute.txt", "file", "points outside it"),
        ("translate-en_fr-1_0/link", "symlink", "is a link"),
    ],
)
def test_a_hostile_archive_is_refused_and_nothing_is_written(
    tiny: dict[str, Path], tmp_path: Path, models: Path, member: str, kind: str, why: str
) -> None:
    package = argos_package(
        tiny["ctranslate2"],
        tmp_path / "evil.argosmodel",
        source="en",
        target="fr",
        extra={member: (kind, b"/etc/passwd")},
    )

    done = cli("install", "--from", str(package), "--models-dir", str(models))

    assert done.exit_code == 1
    assert why in done.output and "Traceback" not in done.output
    assert not (models / "en-fr").exists()
    assert not (tmp_path / "escaped.txt").exists() and not (models / "escaped.txt").exists()
    assert not any((models / ".staging").iterdir())


def test_an_archive_that_unpacks_past_the_cap_is_refused(
    tiny: dict[str, Path], tmp_path: Path, models: Path
) -> None:
    import zipfile

    bomb = tmp_path / "bomb.argosmodel"
    with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("translate-en_fr-1_0/metadata.json", "{}")
        zf.writestr("translate-en_fr-1_0/zeros", b"\0" * (300 * 2**20))
    assert bomb.stat().st_size < 2**20

    done = cli("install", "en-fr", "--from", str(bomb), "--models-dir", str(models))

    assert done.exit_code == 1
    assert "more than the allowed size" in done.output
    assert not (models / "en-fr").exists()


def test_verify_names_a_pair_whose_file_changed_and_remove_takes_it_away(
    tiny: dict[str, Path], tmp_path: Path, models: Path
) -> None:
    for target in ("fr", "de"):
        package = argos_package(
            tiny["ctranslate2"], tmp_path / f"{target}.argosmodel", source="en", target=target
        )
        assert cli("install", "--from", str(package), "--models-dir", str(models)).exit_code == 0
    assert cli("verify", "--models-dir", str(models)).exit_code == 0
    spm = models / "en-de" / "ctranslate2" / "sentencepiece.model"
    spm.write_bytes(spm.read_bytes()[:-1] + b"!")

    everything = cli("verify", "--models-dir", str(models))
    one = cli("verify", "en-fr", "--models-dir", str(models))

    assert everything.exit_code == 1
    assert "verification failed for en-de" in everything.output
    assert "changed sentencepiece.model" in everything.output
    assert one.exit_code == 0 and "en-fr (ctranslate2): OK" in one.output
    removed = cli("remove", "en-de", "--models-dir", str(models))
    assert removed.exit_code == 0, removed.output
    assert not (models / "en-de").exists()
    again = cli("remove", "en-de", "--models-dir", str(models))
    assert again.exit_code == 1 and "no ctranslate2 model for en-de" in again.output


def test_a_bundle_carries_models_to_an_air_gapped_machine_and_a_tampered_one_is_refused(
    tiny: dict[str, Path], tmp_path: Path, models: Path
) -> None:
    package = argos_package(
        tiny["ctranslate2"], tmp_path / "p.argosmodel", source="en", target="fr", version="2.0"
    )
    assert cli("install", "--from", str(package), "--models-dir", str(models)).exit_code == 0
    shutil.copytree(tiny["transformers"], models / "en-fr" / "transformers")  # by hand
    bundle = tmp_path / "bundle.tar"

    exported = cli("export", "en-fr", "-o", str(bundle), "--models-dir", str(models))
    other = tmp_path / "air-gapped"
    imported = cli("import", str(bundle), "--models-dir", str(other))

    assert exported.exit_code == 0, exported.output
    assert "left out" in exported.output and "transformers" in exported.output
    assert not (other / "en-fr" / "transformers").exists()
    assert imported.exit_code == 0, imported.output
    manifest = read_manifest(other / "en-fr" / "ctranslate2")
    assert manifest == read_manifest(models / "en-fr" / "ctranslate2")
    assert cli("verify", "--models-dir", str(other)).exit_code == 0

    tampered = tmp_path / "tampered.tar"
    with tarfile.open(bundle) as src, tarfile.open(tampered, "w") as out:
        for member in src:
            data = src.extractfile(member) if member.isfile() else None
            if member.name.endswith("sentencepiece.model") and data is not None:
                body = data.read()[:-1] + b"!"
                import io

                out.addfile(member, io.BytesIO(body))
            else:
                out.addfile(member, data)
    third = tmp_path / "third"
    refused = cli("import", str(tampered), "--models-dir", str(third))
    assert refused.exit_code == 1
    assert "does not verify: changed sentencepiece.model" in refused.output
    assert not (third / "en-fr").exists()


def test_two_installs_of_one_pair_at_once_do_not_interleave(
    server: PackageServer, tiny: dict[str, Path], models: Path
) -> None:
    package = argos_package(
        tiny["ctranslate2"], server.root / "p.argosmodel", source="en", target="fr"
    )
    write_index(
        server.root / "index.json",
        [index_entry(package, [f"{server.url}/p.argosmodel"], source="en", target="fr")],
    )
    command = [
        sys.executable,
        "-m",
        "dragoman.cli",
        "models",
        "install",
        "en-fr",
        "--index",
        f"{server.url}/index.json",
        "--models-dir",
        str(models),
        "--progress",
        "json",
    ]
    env = {**os.environ, "OMP_NUM_THREADS": "1"}

    with contextlib.ExitStack() as stack:
        runs = [
            stack.enter_context(reaped(subprocess.Popen(command, stdout=subprocess.PIPE, env=env)))
            for _ in range(2)
        ]
        outputs = [run.communicate(timeout=100)[0].decode() for run in runs]

    assert [run.returncode for run in runs] == [0, 0]
    endings = sorted(json.loads(out.splitlines()[-1])["status"] for out in outputs)
    assert endings == ["already installed", "success"]
    assert len(server.faults.ranges) == 1  # the second waited, then found it installed
    assert CliRunner().invoke(app, ["models", "verify", "--models-dir", str(models)]).exit_code == 0


def test_running_out_of_space_fails_cleanly_before_or_while_installing(
    tiny: dict[str, Path], tmp_path: Path
) -> None:
    small = tmp_path / "small"
    small.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(small)],
        capture_output=True,
        check=False,
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here: {mounted.stderr.decode().strip()}")
    try:
        package = argos_package(
            tiny["ctranslate2"], tmp_path / "p.argosmodel", source="en", target="fr"
        )
        models = small / "models"

        done = cli("install", "--from", str(package), "--models-dir", str(models))

        assert done.exit_code == 1
        assert "space" in done.output and "Traceback" not in done.output
        assert not (models / "en-fr").exists()
        assert not any((models / ".staging").iterdir())
    finally:
        subprocess.run(["umount", str(small)], check=False)


def test_the_catalogue_lists_neural_packages_and_debian_apertium_pairs(
    tiny: dict[str, Path], tmp_path: Path, models: Path
) -> None:
    package = argos_package(
        tiny["ctranslate2"], tmp_path / "p.argosmodel", source="en", target="fr"
    )
    index = write_index(
        tmp_path / "index.json",
        [
            index_entry(package, ["http://127.0.0.1:9/p"], source="en", target="fr"),
            {
                "package_version": "1.0",
                "from_code": "xx-not-a-code",
                "to_code": "en",
                "links": ["http://127.0.0.1:9/x"],
            },
        ],
    )

    listed = cli("catalogue", "--index", str(index), "--models-dir", str(models), "--json")
    table = cli("catalogue", "--index", str(index), "--models-dir", str(models))

    assert listed.exit_code == 0, listed.output
    rows = json.loads(listed.output)
    neural = [r for r in rows if r["kind"] == "neural"]
    assert [(r["from_code"], r["to_code"], r["licence"]) for r in neural] == [
        ("en", "fr", "CC-BY-4.0")
    ]
    rule_based = {r["package"]: r for r in rows if r["kind"] == "rule-based"}
    assert rule_based["apertium-eng-spa"]["installed"] is True  # make installs it
    assert rule_based["apertium-eng-spa"]["pair"] == "en-es"
    assert "eng-spa" in table.output and "rule-based" in table.output


def test_the_catalogue_still_lists_rule_based_pairs_when_the_index_is_out_of_reach(
    models: Path,
) -> None:
    listed = cli(
        "catalogue",
        "--index",
        "http://127.0.0.1:9/index.json",
        "--models-dir",
        str(models),
        "--json",
    )

    assert listed.exit_code == 0
    assert "DRAGOMAN_OFFLINE is set" in listed.stderr
    assert "neural packages are not listed" in listed.stderr
    rows = json.loads(listed.stdout)
    assert rows and {r["kind"] for r in rows} == {"rule-based"}


def test_an_upgrade_swaps_the_folders_in_one_step_where_the_kernel_can(tmp_path: Path) -> None:
    from dragoman.packages.layout import exchange

    old, new = tmp_path / "old", tmp_path / "new"
    old.mkdir()
    (old / "model.bin").write_text("old")
    new.mkdir()
    (new / "model.bin").write_text("new")

    swapped = exchange(new, old)

    if not swapped:
        pytest.skip("renameat2 RENAME_EXCHANGE is not available here")
    assert (old / "model.bin").read_text() == "new"
    assert (new / "model.bin").read_text() == "old"
