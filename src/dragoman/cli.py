"""The ``dragoman`` command: run the service, translate files, follow jobs."""

from __future__ import annotations

import logging
import os
import time
from pathlib import Path
from typing import Annotated, Any

import httpx
import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

app = typer.Typer(help="dragoman: self-hosted batch machine translation.", no_args_is_help=True)
console = Console(stderr=True)

Server = Annotated[
    str, typer.Option("--server", envvar="DRAGOMAN_SERVER", help="URL of a dragoman API")
]
ApiKey = Annotated[
    str | None, typer.Option("--api-key", envvar="DRAGOMAN_API_KEY", help="Bearer API key")
]
DEFAULT_SERVER = "http://127.0.0.1:8080"
FINISHED = {"succeeded", "failed", "cancelled"}


def _logging() -> None:
    logging.basicConfig(
        level=os.environ.get("DRAGOMAN_LOG_LEVEL", "INFO"),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    logging.getLogger("alembic").setLevel(logging.WARNING)


Host = Annotated[str, typer.Option(help="Address to listen on")]


def _settings(**overrides: Any) -> Any:
    from dragoman.settings import Settings

    _logging()
    return Settings(**{k: v for k, v in overrides.items() if v is not None})


@app.command()
def serve(
    host: Host = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port to listen on")] = 8080,
    data_dir: Annotated[Path | None, typer.Option(help="Where the SQLite store lives")] = None,
) -> None:
    """Run the embedded service: API, queue, watchdog and workers in one process."""
    from dragoman.api.app import create_app
    from dragoman.embedded import EmbeddedService
    from dragoman.serving import serve as run

    settings = _settings(host=host, port=port, data_dir=data_dir)
    run(create_app(EmbeddedService(settings)), host=settings.host, port=settings.port)


@app.command("api")
def api_process(
    host: Host = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port to listen on")] = 8080,
) -> None:
    """Run the HTTP API of the distributed deployment (DRAGOMAN_DATABASE_URL, _BROKER_URL)."""
    from dragoman.api.app import create_app
    from dragoman.services import ApiService
    from dragoman.serving import serve as run

    settings = _settings(host=host, port=port)
    run(create_app(ApiService(settings)), host=settings.host, port=settings.port)


@app.command("watchdog")
def watchdog_process(
    host: Host = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port of /healthz, /readyz and /metrics")] = 9100,
) -> None:
    """Run the watchdog: dispatch, heartbeats, relay (one active, others on standby)."""
    from dragoman.api.probes import create_probe_app
    from dragoman.services import WatchdogService
    from dragoman.serving import serve as run

    service = WatchdogService(_settings())
    run(create_probe_app(service, role="watchdog"), host=host, port=port)


@app.command("worker")
def worker_process(
    pool: Annotated[str, typer.Option(help="cpu or gpu")] = "cpu",
    host: Host = "127.0.0.1",
    port: Annotated[
        int, typer.Option(help="Port of /healthz, /readyz and /metrics (0: any free port)")
    ] = 9100,
) -> None:
    """Run one worker of a pool; SIGTERM lets it finish its job, then it exits 0."""
    from dragoman.api.probes import create_probe_app
    from dragoman.models import Pool
    from dragoman.services import WorkerService
    from dragoman.serving import serve as run

    try:
        chosen = Pool(pool)
    except ValueError:
        raise typer.BadParameter(f"--pool must be cpu or gpu, not {pool!r}") from None
    service = WorkerService(_settings(), chosen)
    run(create_probe_app(service, role=f"worker ({chosen})"), host=host, port=port)


@app.command("scaler")
def scaler_process(
    pool: Annotated[str, typer.Option(help="cpu or gpu")] = "cpu",
    backend: Annotated[str, typer.Option(help="process or kubernetes")] = "process",
    host: Host = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port of /healthz, /readyz and /metrics")] = 9102,
    deployment: Annotated[
        str | None, typer.Option(help="Kubernetes worker Deployment (default dragoman-worker-POOL)")
    ] = None,
    namespace: Annotated[str | None, typer.Option(help="Kubernetes namespace")] = None,
) -> None:
    """Autoscale one pool: worker processes on this host, or a Kubernetes Deployment."""
    from dragoman.api.probes import create_probe_app
    from dragoman.models import Pool
    from dragoman.scaling import ReplicaController
    from dragoman.services import ScalerService, WorkerSource
    from dragoman.serving import serve as run

    try:
        chosen = Pool(pool)
    except ValueError:
        raise typer.BadParameter(f"--pool must be cpu or gpu, not {pool!r}") from None

    def make_controller(workers: WorkerSource) -> ReplicaController:
        if backend == "process":
            from dragoman.scaling.process import ProcessController

            return ProcessController(chosen)
        if backend == "kubernetes":
            from dragoman.scaling.kubernetes import kubernetes_controller

            return kubernetes_controller(
                chosen, deployment=deployment, namespace=namespace, workers=workers
            )
        raise typer.BadParameter(f"--backend must be process or kubernetes, not {backend!r}")

    service = ScalerService(_settings(), chosen, make_controller)
    run(create_probe_app(service, role=f"scaler ({chosen})"), host=host, port=port)


def _client(server: str, api_key: str | None) -> httpx.Client:
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    return httpx.Client(base_url=server, headers=headers, timeout=60)


def _check(response: httpx.Response) -> dict[str, Any]:
    if response.is_success:
        body: dict[str, Any] = response.json()
        return body
    try:
        error = response.json()["error"]
        message = f"{error['code']}: {error['message']}"
    except (ValueError, KeyError, TypeError):
        message = response.text
    console.print(f"[red]error {response.status_code}[/red] {message}")
    raise typer.Exit(1)


def output_path(path: Path, target: str) -> Path:
    """``a.txt`` translated to ``es`` is written as ``a.es.txt``."""
    return path.with_name(f"{path.stem}.{target}{path.suffix}")


@app.command()
def translate(
    files: Annotated[list[Path], typer.Argument(help="Text files, one segment per line")],
    source: Annotated[str, typer.Option("--from", help="Source language")],
    target: Annotated[str, typer.Option("--to", help="Target language")],
    server: Server = DEFAULT_SERVER,
    api_key: ApiKey = None,
    priority: Annotated[str, typer.Option(help="low, normal or high")] = "normal",
) -> None:
    """Translate files as one job and write each beside its source as NAME.<to>.EXT."""
    lines = {path: path.read_text(encoding="utf-8").splitlines() for path in files}
    documents = [
        {"name": path.name, "segments": [line for line in content if line.strip()]}
        for path, content in lines.items()
    ]
    body = {
        "source_lang": source,
        "target_lang": target,
        "documents": documents,
        "priority": priority,
    }
    with _client(server, api_key) as client:
        job = _check(client.post("/v1/jobs", json=body))
        job = _follow(client, job)
        if job["status"] != "succeeded":
            console.print(f"[red]job {job['id']} {job['status']}[/red] {job.get('error') or ''}")
            raise typer.Exit(1)
        result = _check(client.get(f"/v1/jobs/{job['id']}/result"))
    for (path, content), doc in zip(lines.items(), result["documents"], strict=True):
        translated = iter(doc["segments"])
        out = [next(translated) if line.strip() else line for line in content]
        destination = output_path(path, target)
        destination.write_text("\n".join(out) + "\n", encoding="utf-8")
        console.print(f"{path} → {destination}")


def _follow(client: httpx.Client, job: dict[str, Any]) -> dict[str, Any]:
    columns = (
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[status]}"),
        TimeElapsedColumn(),
    )
    with Progress(*columns, console=console) as progress:
        task = progress.add_task(
            f"job {job['id'][:8]}", total=job["segments_total"], status=job["status"]
        )
        while job["status"] not in FINISHED:
            time.sleep(0.2)
            job = _check(client.get(f"/v1/jobs/{job['id']}"))
            progress.update(task, completed=job["segments_done"], status=job["status"])
    return job


@app.command()
def jobs(
    status: Annotated[str | None, typer.Option(help="Only jobs in this status")] = None,
    limit: Annotated[int, typer.Option(help="How many")] = 20,
    server: Server = DEFAULT_SERVER,
    api_key: ApiKey = None,
) -> None:
    """List recent jobs."""
    params: dict[str, Any] = {"limit": limit}
    if status:
        params["status"] = status
    with _client(server, api_key) as client:
        page = _check(client.get("/v1/jobs", params=params))
    table = Table("id", "status", "pair", "pool", "done", "created")
    for job in page["jobs"]:
        table.add_row(
            job["id"],
            job["status"],
            f"{job['source_lang']}-{job['target_lang']}",
            job["pool"],
            f"{job['segments_done']}/{job['segments_total']}",
            job["created_at"],
        )
    Console().print(table)


models_app = typer.Typer(help="Neural models on disk (DRAGOMAN_MODELS_DIR).", no_args_is_help=True)
app.add_typer(models_app, name="models")


@models_app.command("list")
def models_list(
    models_dir: Annotated[Path | None, typer.Option(help="Default: DRAGOMAN_MODELS_DIR")] = None,
) -> None:
    """The pairs each engine serves, the pair's default engine first."""
    from dragoman.services import default_engines

    settings = _settings(models_dir=models_dir)
    table = Table("pair", "engines")
    for pair, names in default_engines(settings).languages():
        table.add_row(str(pair), ", ".join(names))
    Console().print(table)


@models_app.command("tiny")
def models_tiny(
    models_dir: Annotated[Path, typer.Argument(help="Where to write <pair>/<engine>/")],
    corpus_dir: Annotated[
        Path, typer.Option(help="Folder with en_licenses.txt and fr_seed.txt")
    ] = Path("../shared/corpus"),
) -> None:
    """Build a tiny random en-fr model for both neural engines (for trying the neural path
    out and for tests; its translations are nonsense)."""
    from dragoman.engines.tiny import build_tiny_models

    _logging()
    built = build_tiny_models(
        models_dir,
        source_corpus=corpus_dir / "en_licenses.txt",
        target_corpus=corpus_dir / "fr_seed.txt",
    )
    for engine, path in built.items():
        console.print(f"{engine}: {path}")


def main() -> None:
    app()


if __name__ == "__main__":
    main()
