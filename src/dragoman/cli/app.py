"""The ``dragoman`` Typer app, its shared options, its exit codes and how a command fails."""

from __future__ import annotations

import logging
import os
from enum import IntEnum
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import typer
from rich.console import Console

from dragoman.models import Pool

if TYPE_CHECKING:
    from dragoman.settings import Settings


class ExitCode(IntEnum):
    """How a ``dragoman`` command ends; documented in ``--help`` and the README."""

    OK = 0
    FAILED = 1  # the server refused the request, or the job failed or was cancelled
    USAGE = 2  # as click's usage errors: a bad option, --server URL or file
    UNREACHABLE = 3  # no working dragoman at --server
    INTERRUPTED = 130  # Ctrl-C (128 + SIGINT)


EXIT_CODES = {
    ExitCode.OK: "success",
    ExitCode.FAILED: "the server refused the request, or the job failed or was cancelled",
    ExitCode.USAGE: "usage error: a bad option or --server URL, a file that cannot be read "
    "(missing, a directory, not UTF-8) or written",
    ExitCode.UNREACHABLE: "no working dragoman at --server: nothing listens there, no answer "
    "in time, not a dragoman API, or the service is unavailable (503); retry or check --server "
    "(serve, api, watchdog, worker and scaler exit 3 when their start-up fails)",
    ExitCode.INTERRUPTED: "interrupted (Ctrl-C); a submitted job keeps running on the server",
}

app = typer.Typer(
    help="dragoman: self-hosted batch machine translation.",
    epilog="\n\n".join(
        ["Exit codes:", *(f"{int(code)} {meaning}." for code, meaning in EXIT_CODES.items())]
    ),
    no_args_is_help=True,
    pretty_exceptions_show_locals=False,
)
console = Console(stderr=True)

Server = Annotated[
    str, typer.Option("--server", envvar="DRAGOMAN_SERVER", help="URL of a dragoman API")
]
ApiKey = Annotated[
    str | None, typer.Option("--api-key", envvar="DRAGOMAN_API_KEY", help="Bearer API key")
]
PoolOption = Annotated[Pool, typer.Option(help="The worker pool")]
Host = Annotated[str, typer.Option(help="Address to listen on")]


def setup_logging() -> None:
    logging.basicConfig(
        level=os.environ.get("DRAGOMAN_LOG_LEVEL", "INFO"),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    logging.getLogger("alembic").setLevel(logging.WARNING)


def settings_from(**overrides: Any) -> Settings:
    from dragoman.settings import Settings

    setup_logging()
    return Settings(**{k: v for k, v in overrides.items() if v is not None})


def fail(message: str, code: ExitCode, hint: str | None = None) -> NoReturn:
    """Ends the command with ``dragoman: MESSAGE`` (and a line of hint) on stderr."""
    typer.echo(f"dragoman: {message}", err=True)
    if hint:
        typer.echo(f"  {hint}", err=True)
    raise typer.Exit(int(code))
