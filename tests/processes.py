"""Processes a test starts are reaped, whatever the test's outcome: killed if still running,
waited for, their pipes closed. One left behind outlives its test, holds ports and files, and
fails a later test's teardown with a ResourceWarning."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from collections.abc import Iterator
from typing import Any, TypeVar

P = TypeVar("P", bound="subprocess.Popen[Any]")


def reap(proc: subprocess.Popen[Any], *, group: bool = False) -> None:
    """Kills ``proc`` (with ``group``, its whole process group) unless it has ended, waits
    for it and closes its pipes."""
    if group:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
    elif proc.poll() is None:
        proc.kill()
    with proc:  # closes stdin, stdout and stderr, then waits
        pass


@contextlib.contextmanager
def reaped(proc: P, *, group: bool = False) -> Iterator[P]:
    """``proc`` for the block, reaped when it ends."""
    try:
        yield proc
    finally:
        reap(proc, group=group)
