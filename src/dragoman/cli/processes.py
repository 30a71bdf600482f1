"""The commands that run dragoman's processes: ``serve`` (embedded), ``api``, ``watchdog``,
``worker`` and ``scaler`` (distributed)."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Annotated

import typer

from dragoman.cli.app import Host, PoolOption, app, settings_from
from dragoman.models import Pool


@app.command()
def serve(
    host: Host = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port to listen on")] = 8080,
    data_dir: Annotated[Path | None, typer.Option(help="Where the SQLite store lives")] = None,
) -> None:
    """Run the embedded service: API, queue, watchdog and workers in one process."""
    from dragoman.api.app import create_app
    from dragoman.api.server import serve as run
    from dragoman.services import EmbeddedService

    settings = settings_from(host=host, port=port, data_dir=data_dir)
    run(create_app(EmbeddedService(settings)), host=settings.host, port=settings.port)


@app.command("api")
def api_process(
    host: Host = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port to listen on")] = 8080,
) -> None:
    """Run the HTTP API of the distributed deployment (DRAGOMAN_DATABASE_URL, _BROKER_URL)."""
    from dragoman.api.app import create_app
    from dragoman.api.server import serve as run
    from dragoman.services import ApiService

    settings = settings_from(host=host, port=port)
    run(create_app(ApiService(settings)), host=settings.host, port=settings.port)


@app.command("watchdog")
def watchdog_process(
    host: Host = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port of /healthz, /readyz and /metrics")] = 9100,
) -> None:
    """Run the watchdog: dispatch, heartbeats, relay (one active, others on standby)."""
    from dragoman.api.probes import create_probe_app
    from dragoman.api.server import serve as run
    from dragoman.services import WatchdogService

    service = WatchdogService(settings_from())
    run(create_probe_app(service, role="watchdog"), host=host, port=port)


@app.command("worker")
def worker_process(
    pool: PoolOption = Pool.CPU,
    host: Host = "127.0.0.1",
    port: Annotated[
        int, typer.Option(help="Port of /healthz, /readyz and /metrics (0: any free port)")
    ] = 9100,
) -> None:
    """Run one worker of a pool; SIGTERM lets it finish its job, then it exits 0."""
    from dragoman.api.probes import create_probe_app
    from dragoman.api.server import serve as run
    from dragoman.services import WorkerService

    service = WorkerService(settings_from(), pool)
    run(create_probe_app(service, role=f"worker ({pool})"), host=host, port=port)


@app.command("scaler")
def scaler_process(
    pool: PoolOption = Pool.CPU,
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
    from dragoman.api.server import serve as run
    from dragoman.scaling import CONTROLLER_BACKENDS, open_controller
    from dragoman.services import ScalerService

    if backend not in CONTROLLER_BACKENDS:
        raise typer.BadParameter(
            f"must be one of {', '.join(CONTROLLER_BACKENDS)}, not {backend!r}",
            param_hint="--backend",
        )
    make_controller = functools.partial(
        open_controller, backend, pool, deployment=deployment, namespace=namespace
    )
    service = ScalerService(settings_from(), pool, make_controller)
    run(create_probe_app(service, role=f"scaler ({pool})"), host=host, port=port)
