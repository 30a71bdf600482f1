"""``dragoman models install`` from an index served on 127.0.0.1: whole and verified, or
nothing at all; resumed after a cut; the next link when one fails."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from dragoman.cli import app
from dragoman.engines import Pair
from dragoman.engines.ct2 import CTranslate2Engine
from dragoman.engines.manifest import file_sha256, read_manifest
from dragoman.engines.model_cache import ModelCache
from tests.packages.builders import argos_package, index_entry, write_index
from tests.packages.server import PackageServer


def cli(*args: str, env: dict[str, str] | None = None) -> Result:
    return CliRunner().invoke(app, ["models", *args], env=env)


def publish(
    server: PackageServer,
    tiny: dict[str, Path],
    *,
    source: str = "en",
    target: str = "fr",
    version: str = "1.0",
    links: list[str] | None = None,
    **ours: object,
) -> Path:
    """Puts a package on the server and its entry in the server's index.json."""
    name = f"translate-{source}_{target}-{version}.argosmodel"
    package = argos_package(
        tiny["ctranslate2"], server.root / name, source=source, target=target, version=version
    )
    index = server.root / "index.json"
    entries = json.loads(index.read_text()) if index.exists() else []
    entries.append(
        index_entry(
            package,
            links or [f"{server.url}/{name}"],
            source=source,
            target=target,
            version=version,
            **ours,
        )
    )
    write_index(index, entries)
    return package


def install(server: PackageServer, models: Path, *args: str) -> Result:
    return cli(
        "install",
        *args,
        "--index",
        f"{server.url}/index.json",
        "--models-dir",
        str(models),
        "--progress",
        "none",
    )


def listing(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if not p.name.startswith("."))


def nothing_installed(models: Path, pair: str = "en-fr") -> bool:
    return not (models / pair).exists() and not any(
        p.is_dir() and not p.name.startswith(".") for p in models.glob("*")
    )


async def test_an_installed_model_is_whole_verified_and_serves(
    server: PackageServer, tiny: dict[str, Path], models: Path
) -> None:
    package = publish(server, tiny)

    done = install(server, models, "en-fr")

    assert done.exit_code == 0, done.output
    model_dir = models / "en-fr" / "ctranslate2"
    manifest = read_manifest(model_dir)
    assert manifest is not None
    assert (manifest.pair, manifest.version, manifest.licence) == ("en-fr", "1.0", "CC-BY-4.0")
    assert manifest.sha256 == file_sha256(package)
    assert manifest.files["model/model.bin"] == file_sha256(model_dir / "model" / "model.bin")
    assert set(manifest.files) >= {"metadata.json", "sentencepiece.model", "model/config.json"}
    assert manifest.source.endswith(package.name)
    # Nothing is left in the staging or download folders, and they are hidden.
    assert listing(models) == ["en-fr"]
    assert listing(models / ".staging") == listing(models / ".downloads") == []
    engine = CTranslate2Engine(models, cache=ModelCache(2**30))
    try:
        (output,) = await engine.translate(Pair("en", "fr"), ["The licence is free."])
    finally:
        await engine.close()
    assert output.strip()
    assert cli("verify", "--models-dir", str(models)).exit_code == 0


def test_a_cut_download_resumes_with_a_range_from_the_bytes_kept(
    server: PackageServer, tiny: dict[str, Path], models: Path
) -> None:
    package = publish(server, tiny)
    half = package.stat().st_size // 2
    server.faults.cut_after[package.name] = half

    done = install(server, models, "en-fr")

    assert done.exit_code == 0, done.output
    first, resumed = server.faults.ranges
    assert first is None
    # From what reached the disk: at most what was sent before the cut, and not nothing.
    assert resumed is not None and 0 < int(resumed.removeprefix("bytes=").rstrip("-")) <= half
    manifest = read_manifest(models / "en-fr" / "ctranslate2")
    assert manifest is not None and manifest.sha256 == file_sha256(package)


def test_an_interrupted_install_resumes_from_the_partial_file_on_the_next_run(
    server: PackageServer, tiny: dict[str, Path], models: Path
) -> None:
    package = publish(server, tiny)
    kept = 12_345
    partial = models / ".downloads" / f"{package.name}.partial"
    partial.parent.mkdir(parents=True)
    partial.write_bytes(package.read_bytes()[:kept])

    done = install(server, models, "en-fr")

    assert done.exit_code == 0, done.output
    assert server.faults.ranges == [f"bytes={kept}-"]
    assert not partial.exists()


def test_a_stalled_connection_times_out_and_is_retried(
    server: PackageServer, tiny: dict[str, Path], models: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import dragoman.packages.http as http

    package = publish(server, tiny)
    server.faults.stall_s[package.name] = 3.0
    real = http.Network.__init__

    def quick(self: http.Network, **kwargs: object) -> None:
        real(self, offline=False, stall_timeout_s=0.5, backoff_s=0.01)

    monkeypatch.setattr(http.Network, "__init__", quick)
    done = install(server, models, "en-fr")

    assert done.exit_code == 0, done.output
    assert len(server.faults.ranges) == 2
    assert read_manifest(models / "en-fr" / "ctranslate2") is not None


def test_a_wrong_checksum_installs_nothing_and_says_so_in_one_line(
    server: PackageServer, tiny: dict[str, Path], models: Path
) -> None:
    publish(server, tiny, sha256="0" * 64)

    done = install(server, models, "en-fr")

    assert done.exit_code == 1
    assert "sha256" in done.output and "does not match" in done.output
    assert "Traceback" not in done.output and len(done.output.strip().splitlines()) == 1
    assert nothing_installed(models)
    assert not any((models / ".downloads").iterdir())


def test_a_first_link_that_404s_falls_back_to_the_mirror(
    server: PackageServer, tiny: dict[str, Path], models: Path
) -> None:
    name = "translate-en_fr-1.0.argosmodel"
    publish(server, tiny, links=[f"{server.url}/gone.argosmodel", f"{server.url}/{name}"])

    done = install(server, models, "en-fr")

    assert done.exit_code == 0, done.output
    manifest = read_manifest(models / "en-fr" / "ctranslate2")
    assert manifest is not None and manifest.source == f"{server.url}/{name}"


def test_every_link_failing_names_each_link_and_installs_nothing(
    server: PackageServer, tiny: dict[str, Path], models: Path
) -> None:
    publish(server, tiny, links=[f"{server.url}/a.zip", f"{server.url}/b.zip"])

    done = install(server, models, "en-fr")

    assert done.exit_code == 1
    assert "a.zip: HTTP 404" in done.output and "b.zip: HTTP 404" in done.output
    assert nothing_installed(models)


def test_a_package_whose_metadata_disagrees_with_the_index_is_refused(
    server: PackageServer, tiny: dict[str, Path], models: Path
) -> None:
    package = argos_package(
        tiny["ctranslate2"], server.root / "p.argosmodel", source="en", target="de"
    )
    write_index(
        server.root / "index.json",
        [index_entry(package, [f"{server.url}/p.argosmodel"], source="en", target="fr")],
    )

    done = install(server, models, "en-fr")

    assert done.exit_code == 1
    assert "the package is for en-de, not en-fr" in done.output
    assert nothing_installed(models)


def test_an_unknown_pair_names_the_pairs_the_index_has(
    server: PackageServer, tiny: dict[str, Path], models: Path
) -> None:
    publish(server, tiny)

    done = install(server, models, "fr-ja")

    assert done.exit_code == 1
    assert "no package for fr-ja; pairs in it: en-fr" in done.output


def test_a_newer_version_replaces_the_installed_one_and_an_equal_one_is_kept(
    server: PackageServer, tiny: dict[str, Path], models: Path
) -> None:
    publish(server, tiny, version="1.0")
    assert install(server, models, "en-fr").exit_code == 0
    again = install(server, models, "en-fr")
    assert again.exit_code == 0 and len(server.faults.ranges) == 1  # nothing downloaded

    publish(server, tiny, version="1.1")
    listed = cli(
        "catalogue", "--index", f"{server.url}/index.json", "--models-dir", str(models), "--json"
    )
    (row,) = [r for r in json.loads(listed.output) if r["kind"] == "neural"]
    assert (row["version"], row["installed_version"], row["upgradable"]) == ("1.1", "1.0", True)

    assert install(server, models, "en-fr").exit_code == 0
    manifest = read_manifest(models / "en-fr" / "ctranslate2")
    assert manifest is not None and manifest.version == "1.1"
    assert not (models / ".trash").exists() or not any((models / ".trash").iterdir())
    assert listing(models / ".staging") == []


def test_a_non_commercial_model_needs_the_licence_accepted(
    server: PackageServer, tiny: dict[str, Path], models: Path
) -> None:
    publish(server, tiny, licence="CC-BY-NC-4.0")

    refused = install(server, models, "en-fr")
    assert refused.exit_code == 1
    assert "CC-BY-NC-4.0" in refused.output and "--accept-licence" in refused.output
    assert server.faults.ranges == [] and nothing_installed(models)

    accepted = install(server, models, "en-fr", "--accept-licence")
    assert accepted.exit_code == 0, accepted.output


def test_offline_turns_the_download_into_an_error_that_names_from(
    server: PackageServer, tiny: dict[str, Path], models: Path
) -> None:
    publish(server, tiny)

    done = cli(
        "install",
        "en-fr",
        "--index",
        f"{server.url}/index.json",
        "--models-dir",
        str(models),
        env={"DRAGOMAN_OFFLINE": "1"},
    )

    assert done.exit_code == 1
    assert "DRAGOMAN_OFFLINE" in done.output and "--from" in done.output
    assert server.faults.ranges == []


def test_progress_json_is_one_object_a_line_ending_in_success(
    server: PackageServer, tiny: dict[str, Path], models: Path
) -> None:
    publish(server, tiny)

    done = CliRunner().invoke(
        app,
        [
            "models",
            "install",
            "en-fr",
            "--index",
            f"{server.url}/index.json",
            "--models-dir",
            str(models),
            "--progress",
            "json",
        ],
    )

    assert done.exit_code == 0, done.output
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    statuses = [line["status"] for line in lines]
    assert statuses[0] == "downloading" and statuses[-1] == "success"
    assert {"verifying sha256", "unpacking", "probing"} <= set(statuses)
    progress = [line for line in lines if "completed" in line]
    assert progress[-1]["completed"] == progress[-1]["total"] > 0
