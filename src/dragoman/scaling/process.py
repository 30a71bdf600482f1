"""``process``: ``dragoman worker`` subprocesses on this host."""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from dragoman.models import Pool, WorkerInfo

log = logging.getLogger(__name__)


class ProcessController:
    """Starts workers as child processes; a scale-down sends SIGTERM to the chosen ones,
    which finish their job and exit (they stop counting at once)."""

    def __init__(
        self,
        pool: Pool,
        *,
        env: Mapping[str, str] | None = None,
        log_dir: Path | None = None,
    ) -> None:
        self._pool = pool
        self._env = dict(env if env is not None else os.environ)
        self._log_dir = log_dir
        self._children: dict[int, subprocess.Popen[bytes]] = {}
        self._leaving: dict[int, subprocess.Popen[bytes]] = {}
        self._started = 0

    def _reap(self) -> None:
        for pid, child in list(self._children.items()):
            if child.poll() is not None:
                log.warning("worker process %d exited with %s", pid, child.returncode)
                del self._children[pid]
        for pid, child in list(self._leaving.items()):
            if child.poll() is not None:
                log.info("worker process %d drained (exit %s)", pid, child.returncode)
                del self._leaving[pid]

    @property
    def pids(self) -> list[int]:
        self._reap()
        return list(self._children)

    async def replicas(self) -> int:
        self._reap()
        return len(self._children)

    def _spawn(self) -> None:
        command = [sys.executable, "-m", "dragoman.cli", "worker", "--pool", self._pool.value]
        command += ["--port", "0"]
        if self._log_dir is None:
            child = subprocess.Popen(command, env=self._env)
        else:
            self._log_dir.mkdir(parents=True, exist_ok=True)
            with (self._log_dir / f"worker-{self._pool}-{len(self._children)}.log").open(
                "ab"
            ) as out:
                child = subprocess.Popen(command, env=self._env, stdout=out, stderr=out)
        self._children[child.pid] = child
        log.info("worker process %d started for pool %s", child.pid, self._pool)

    async def scale(self, replicas: int, remove: Sequence[WorkerInfo] = ()) -> None:
        if replicas < 0:
            raise ValueError("replicas must be >= 0")
        self._reap()
        for _ in range(replicas - len(self._children)):
            self._spawn()
        surplus = len(self._children) - replicas
        if surplus <= 0:
            return
        chosen = [w.pid for w in remove if w.pid in self._children]
        # Children the registry does not know yet are still starting: idle, newest first.
        known = {w.pid for w in remove}
        rest = [pid for pid in reversed(self._children) if pid not in chosen and pid not in known]
        for pid in [p for p in chosen + rest if p is not None][:surplus]:
            child = self._children.pop(pid)
            child.send_signal(signal.SIGTERM)
            self._leaving[pid] = child
            log.info("worker process %d asked to drain", pid)

    async def close(self, *, drain: bool = True, timeout_s: float = 3600) -> None:
        """Stops every child: SIGTERM and wait (drained), or SIGKILL."""
        children = {**self._children, **self._leaving}
        for child in children.values():
            if child.poll() is None:
                child.send_signal(signal.SIGTERM if drain else signal.SIGKILL)
        for child in children.values():
            try:
                await asyncio.to_thread(child.wait, timeout_s)
            except subprocess.TimeoutExpired:
                child.kill()
                await asyncio.to_thread(child.wait)
        self._children.clear()
        self._leaving.clear()
