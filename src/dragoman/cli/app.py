"""The ``dragoman`` Typer app, its shared options, its exit codes and how a command fails."""

from __future__ import annotations

import logging
import os
import signal
import threading
import time
from enum import IntEnum
from types import FrameType
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


INTERRUPT_GRACE_S = 5.0  # after Ctrl-C, the longest a command takes to end


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


class _CtrlC:
    """The SIGINT handler: raises ``KeyboardInterrupt``, so that a command can say what
    became of its job, and ends the process ``INTERRUPT_GRACE_S`` later if that has not.

    Python raises the exception between two bytecodes, wherever they are: in a ``__del__``
    or a weakref callback it is printed and dropped; in a class that an import is creating,
    Python 3.11 turns it into a ``RuntimeError``. The deadline holds in every such case.

    The handler takes no lock: it may run while the code it interrupts holds one (starting a
    thread takes one; so does an ``Event``, which a second Ctrl-C would find taken). It wakes
    a thread started beforehand through a pipe."""

    def __init__(self) -> None:
        self._wake, self._waker = os.pipe()
        deadline = threading.Thread(target=self._deadline, name="ctrl-c-deadline", daemon=True)
        deadline.start()

    def _deadline(self) -> None:
        os.read(self._wake, 1)
        time.sleep(INTERRUPT_GRACE_S)
        os.write(2, b"dragoman: interrupted\n")
        os._exit(ExitCode.INTERRUPTED)

    def __call__(self, signum: int, frame: FrameType | None) -> None:
        os.write(self._waker, b"!")
        raise KeyboardInterrupt


def answer_ctrl_c() -> None:
    """Ctrl-C (SIGINT) ends every command with ``ExitCode.INTERRUPTED``, within
    ``INTERRUPT_GRACE_S``; the processes' servers take SIGINT over while they serve."""
    # Even where SIGINT was ignored when this process started: a shell without job control
    # starts background commands so, and every process below them inherits it. Python then
    # leaves SIGINT ignored, and a Ctrl-C or a supervisor's SIGINT would go unanswered.
    signal.signal(signal.SIGINT, _CtrlC())


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
