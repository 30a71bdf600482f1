"""A real ``dragoman serve`` process on a free port, for tests that stop and restart it."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx

from tests.processes import reap, reaped


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class Server:
    def __init__(self, data_dir: Path, port: int | None = None, **env: str) -> None:
        self.data_dir = data_dir
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.env = {**os.environ, **env}
        self.proc: subprocess.Popen[bytes] | None = None
        self.log = data_dir.parent / f"serve-{self.port}.log"

    def start(self, timeout_s: float = 30) -> Server:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        command = [sys.executable, "-m", "dragoman.cli", "serve", "--port", str(self.port)]
        command += ["--data-dir", str(self.data_dir)]
        with self.log.open("ab") as log:
            self.proc = subprocess.Popen(command, env=self.env, stdout=log, stderr=log)
        try:
            self._wait_ready(self.proc, timeout_s)
        except BaseException:
            reap(self.proc)  # the caller never gets a server to stop
            self.proc = None
            raise
        return self

    def _wait_ready(self, proc: subprocess.Popen[bytes], timeout_s: float) -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            assert proc.poll() is None, self.log.read_text()
            try:
                if httpx.get(f"{self.url}/readyz", timeout=1).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        raise AssertionError(f"server did not become ready:\n{self.log.read_text()}")

    def stop(self, sig: int = signal.SIGTERM, timeout_s: float = 30) -> int:
        """Sends ``sig`` and waits for the exit status; one that does not come in
        ``timeout_s`` fails the test, and the process is killed."""
        assert self.proc is not None
        proc, self.proc = self.proc, None
        with reaped(proc):
            proc.send_signal(sig)
            return proc.wait(timeout_s)

    def client(self) -> httpx.Client:
        return httpx.Client(base_url=self.url, timeout=30)

    def __enter__(self) -> Server:
        return self.start()

    def __exit__(self, *_: Any) -> None:
        if self.proc is not None:
            self.stop(signal.SIGKILL)
