"""How long a pair takes from ``dragoman models install`` to its first translation by a
running service, for a model of OPUS-MT's size (random weights: 6+6 layers of 512).

A package server on 127.0.0.1 (aiohttp, with Range) serves an ``.argosmodel`` and an index
with its sha256 and size; an embedded ``dragoman serve`` runs on an empty models folder. The
install runs as a user runs it (``--progress json``, whose lines time each step); then the
script polls ``GET /v1/languages`` until the pair is listed and sends ``POST /v1/translate``.
Reported: each step of the install, listed-after-install, first translation (model load
included) and a second one (warm). Loopback has no bandwidth limit: on a real network add
size / bandwidth to the download step.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx
from aiohttp import web
from common import dragoman_executable, dragoman_server, free_port, report

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dragoman.engines import Pair
from dragoman.engines.tiny import build_tiny_models
from tests.packages.builders import argos_package, index_entry, write_index


def serve_folder(root: Path, port: int) -> None:
    app = web.Application()

    async def files(request: web.Request) -> web.FileResponse:
        return web.FileResponse(root / request.match_info["name"])

    app.router.add_get("/{name}", files)
    loop = asyncio.new_event_loop()
    runner = web.AppRunner(app)
    loop.run_until_complete(runner.setup())
    loop.run_until_complete(web.TCPSite(runner, "127.0.0.1", port).start())
    threading.Thread(target=loop.run_forever, daemon=True).start()


def install(index: str, models: Path, pair: str) -> dict[str, float]:
    """Runs the CLI; the seconds from its start to each status it reports."""
    started = time.perf_counter()
    steps: dict[str, float] = {}
    command = [
        dragoman_executable(),
        "models",
        "install",
        pair,
        "--index",
        index,
        "--models-dir",
        str(models),
        "--progress",
        "json",
    ]
    with subprocess.Popen(command, stdout=subprocess.PIPE, text=True) as proc:
        assert proc.stdout is not None
        for line in proc.stdout:
            status = json.loads(line)["status"]
            steps.setdefault(status, round(time.perf_counter() - started, 3))
    if proc.returncode != 0:
        raise RuntimeError(f"install failed with {proc.returncode}")
    steps["exited"] = round(time.perf_counter() - started, 3)
    return steps


def first_service(url: str, pair: Pair, installed_at: float) -> dict[str, float]:
    out: dict[str, float] = {}
    with httpx.Client(base_url=url, timeout=120) as client:
        while True:
            pairs = client.get("/v1/languages").json()["pairs"]
            if any((p["source"], p["target"]) == (pair.source, pair.target) for p in pairs):
                break
            time.sleep(0.05)
        out["listed_after_install_s"] = round(time.perf_counter() - installed_at, 3)
        sentences = {
            "first_translation_s": "The licence is granted to you free of charge.",
            "warm_translation_s": "Each contributor grants you a copyright licence.",
        }
        for name, sentence in sentences.items():
            started = time.perf_counter()
            response = client.post(
                "/v1/translate",
                json={
                    "source_lang": pair.source,
                    "target_lang": pair.target,
                    "segments": [sentence],
                },
            )
            response.raise_for_status()
            out[name] = round(time.perf_counter() - started, 3)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--tiny", action="store_true", help="a tiny model instead (seconds)")
    args = parser.parse_args()
    pair = Pair("en", "de")
    with tempfile.TemporaryDirectory(prefix="dragoman-bench-install-") as tmp:
        root = Path(tmp)
        built_at = time.perf_counter()
        built = build_tiny_models(root / "built", pair=pair, full_size=not args.tiny)
        build_s = time.perf_counter() - built_at
        repo = root / "repo"
        repo.mkdir()
        package = argos_package(
            built["ctranslate2"], repo / "en_de.argosmodel", source="en", target="de"
        )
        port = free_port()
        serve_folder(repo, port)
        write_index(
            repo / "index.json",
            [
                index_entry(
                    package, [f"http://127.0.0.1:{port}/en_de.argosmodel"], source="en", target="de"
                )
            ],
        )
        models = root / "models"
        models.mkdir()
        with dragoman_server({"DRAGOMAN_MODELS_DIR": str(models)}) as service:
            steps = install(f"http://127.0.0.1:{port}/index.json", models, str(pair))
            served = first_service(service.url, pair, time.perf_counter())
        result: dict[str, Any] = {
            "package_bytes": package.stat().st_size,
            "model_shape": "tiny" if args.tiny else "OPUS-MT (6+6 x 512), random weights",
            "build_s": round(build_s, 1),
            "install_steps_s": steps,
            "serving": served,
        }

    def summary(r: dict[str, Any]) -> str:
        s = r["install_steps_s"]
        return (
            f"package {r['package_bytes'] / 2**20:.0f} MiB: installed in {s['exited']} s "
            f"(probe at {s.get('probing')} s), listed {r['serving']['listed_after_install_s']}"
            f" s later, first translation {r['serving']['first_translation_s']} s, "
            f"warm {r['serving']['warm_translation_s']} s"
        )

    report("install", result, summary)


if __name__ == "__main__":
    main()
