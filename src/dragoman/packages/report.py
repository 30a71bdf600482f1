"""How an install tells its progress: a rich bar on a terminal, NDJSON lines for scripts and
the web UI (``--progress json``, as Ollama's pull stream), or nothing."""

from __future__ import annotations

import json
import sys
import time
from typing import Any, Protocol

from rich.console import Console
from rich.progress import (
    BarColumn,
    DownloadColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeRemainingColumn,
    TransferSpeedColumn,
)

_EVERY_S = 0.2


class Reporter(Protocol):
    def status(self, status: str, **fields: Any) -> None:
        """A step begins (``downloading``, ``verifying sha256``...) or the install ends."""
        ...

    def progress(self, completed: int, total: int | None) -> None:
        """Bytes downloaded so far."""
        ...

    def close(self) -> None: ...


class JsonReporter:
    """One JSON object a line on stdout; download progress at most every 0.2 s, and the
    last one always."""

    def __init__(self, pair: str) -> None:
        self._pair = pair
        self._last = 0.0

    def status(self, status: str, **fields: Any) -> None:
        self._emit({"status": status, "pair": self._pair, **fields})

    def progress(self, completed: int, total: int | None) -> None:
        now = time.monotonic()
        if now - self._last < _EVERY_S and completed != total:
            return
        self._last = now
        self._emit(
            {"status": "downloading", "pair": self._pair, "completed": completed, "total": total}
        )

    def close(self) -> None:
        sys.stdout.flush()

    @staticmethod
    def _emit(line: dict[str, Any]) -> None:
        sys.stdout.write(json.dumps(line, default=str) + "\n")
        sys.stdout.flush()


class RichReporter:
    """Steps as lines on stderr, the download as a bar with speed and time left."""

    def __init__(self, pair: str, console: Console) -> None:
        self._pair = pair
        self._console = console
        self._bar: Progress | None = None
        self._task: TaskID | None = None

    def status(self, status: str, **fields: Any) -> None:
        self._stop_bar()
        detail = fields.get("detail") or fields.get("path") or ""
        self._console.print(f"{self._pair}: {status}" + (f" {detail}" if detail else ""))

    def progress(self, completed: int, total: int | None) -> None:
        if self._bar is None:
            self._bar = Progress(
                TextColumn(f"{self._pair}: downloading"),
                BarColumn(),
                DownloadColumn(),
                TransferSpeedColumn(),
                TimeRemainingColumn(),
                console=self._console,
                transient=True,
            )
            self._bar.start()
            self._task = self._bar.add_task("download", total=total)
        assert self._task is not None
        self._bar.update(self._task, completed=completed, total=total)

    def close(self) -> None:
        self._stop_bar()

    def _stop_bar(self) -> None:
        if self._bar is not None:
            self._bar.stop()
            self._bar = None


class QuietReporter:
    def status(self, status: str, **fields: Any) -> None:
        pass

    def progress(self, completed: int, total: int | None) -> None:
        pass

    def close(self) -> None:
        pass
