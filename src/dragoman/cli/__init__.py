"""The ``dragoman`` command: run the service, translate files, follow jobs.

One module per group of commands (``processes``, ``jobs``, ``models``) over the app, its
options and its exit codes (``app``).
"""

from dragoman.cli import jobs, models, processes
from dragoman.cli.app import EXIT_CODES, ExitCode, answer_ctrl_c, app

__all__ = ["EXIT_CODES", "ExitCode", "app", "jobs", "main", "models", "processes"]


def main() -> None:
    answer_ctrl_c()
    app()
