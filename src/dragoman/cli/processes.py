"""The commands that run dragoman's processes: ``serve`` (embedded), ``api``, ``watchdog``,
``worker`` and ``scaler`` (distributed)."""

from __future__ import annotations

import functools
import signal
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from dragoman.cli.app import ExitCode, Host, PoolOption, app, settings_from
from dragoman.models import Pool

if TYPE_CHECKING:
    from dragoman.programs import Distributed


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
    from dragoman.services import ApiService

    settings = settings_from(host=host, port=port)
    service = ApiService(settings)
    _serve(create_app(service), service, host=settings.host, port=settings.port)


def _probe_port(variable: str, default: int) -> Any:
    return typer.Option(
        "--port",
        help=f"Port of /healthz, /readyz and /metrics; default {variable}, else {default} "
        "(0: any free port)",
        show_default=False,
    )


@app.command("watchdog")
def watchdog_process(
    host: Host = "127.0.0.1",
    port: Annotated[int | None, _probe_port("DRAGOMAN_WATCHDOG_PROBE_PORT", 9100)] = None,
) -> None:
    """Run the watchdog: dispatch, heartbeats, relay (one active, others on standby)."""
    from dragoman.api.probes import create_probe_app
    from dragoman.services import WatchdogService

    settings = settings_from(watchdog_probe_port=port)
    service = WatchdogService(settings)
    app = create_probe_app(service, role="watchdog")
    _serve(app, service, host=host, port=settings.watchdog_probe_port)


@app.command("worker")
def worker_process(
    pool: PoolOption = Pool.CPU,
    host: Host = "127.0.0.1",
    port: Annotated[int | None, _probe_port("DRAGOMAN_WORKER_PROBE_PORT", 9101)] = None,
) -> None:
    """Run one worker of a pool; SIGTERM lets it finish its job, then it exits 0."""
    from dragoman.api.probes import create_probe_app
    from dragoman.services import WorkerService

    settings = settings_from(worker_probe_port=port)
    service = WorkerService(settings, pool)
    app = create_probe_app(service, role=f"worker ({pool})")
    _serve(app, service, host=host, port=settings.worker_probe_port)


@app.command("scaler")
def scaler_process(
    pool: PoolOption = Pool.CPU,
    backend: Annotated[str, typer.Option(help="process or kubernetes")] = "process",
    host: Host = "127.0.0.1",
    port: Annotated[int | None, _probe_port("DRAGOMAN_SCALER_PROBE_PORT", 9102)] = None,
    deployment: Annotated[
        str | None, typer.Option(help="Kubernetes worker Deployment (default dragoman-worker-POOL)")
    ] = None,
    namespace: Annotated[str | None, typer.Option(help="Kubernetes namespace")] = None,
) -> None:
    """Autoscale one pool: worker processes on this host, or a Kubernetes Deployment."""
    from dragoman.api.probes import create_probe_app
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
    settings = settings_from(scaler_probe_port=port)
    service = ScalerService(settings, pool, make_controller)
    app = create_probe_app(service, role=f"scaler ({pool})")
    _serve(app, service, host=host, port=settings.scaler_probe_port)


def _serve(app: Any, service: Distributed, *, host: str, port: int) -> None:
    """Serves until SIGTERM or SIGINT. The service waits for PostgreSQL and RabbitMQ as long
    as they take; a start-up that fails otherwise stops the process as a SIGTERM would (the
    service stops what it holds), and the command exits 3."""
    from dragoman.api.server import serve

    service.on_start_failure = functools.partial(signal.raise_signal, signal.SIGTERM)
    serve(app, host=host, port=port)
    if service.start_failure is not None:
        raise typer.Exit(ExitCode.UNREACHABLE)
