"""Writing to a stage that has gone is an engine error, whatever the event loop says of it."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any

import pytest
import uvloop

from dragoman.engines.apertium.process import write_to
from dragoman.errors import EngineError

Runner = Callable[[Coroutine[Any, Any, None]], None]


@pytest.mark.parametrize("run", [asyncio.run, uvloop.run], ids=["asyncio", "uvloop"])
@pytest.mark.parametrize("closed", [True, False], ids=["pipe-closed", "process-gone"])
def test_writing_to_a_stage_that_has_gone_is_an_engine_error(run: Runner, closed: bool) -> None:
    async def main() -> None:
        proc = await asyncio.create_subprocess_exec("true", stdin=asyncio.subprocess.PIPE)
        await proc.wait()
        assert proc.stdin is not None
        if closed:
            # The pipe's transport closed under the writer (a pipeline stopped while lent
            # out): uvloop refuses writes to it with RuntimeError.
            proc.stdin.close()
        with pytest.raises(EngineError, match="the stage exited"):
            for _ in range(64):  # a pipe's buffer takes a little before it breaks
                await write_to(proc.stdin, b"x" * 65536, "the stage exited")

    run(main())
