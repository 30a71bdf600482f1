"""Runs an ASGI app under uvicorn with a stop that ends in exit status 0.

uvicorn re-raises SIGTERM after its graceful shutdown, so the process would end "killed by
SIGTERM"; a drained worker or a cleanly stopped watchdog should exit 0 instead. Once started,
the heap that start-up built is frozen (``gc.freeze``), out of every later collection's scan,
and the collector waits for more new objects before it looks at the young ones.
"""

from __future__ import annotations

import contextlib
import gc
import signal
import socket
from collections.abc import Iterator
from typing import Any

import uvicorn

# Container objects made and not yet freed that start a collection of the youngest ones
# (CPython's default: 700). A request makes and frees thousands, nearly all by reference
# counting; at 700 a served process ran a collection every few requests, about 1,700 of them
# (0.14 ms each) while it took 10,000 small jobs. Garbage in cycles waits a little longer.
YOUNG_COLLECTION_THRESHOLD = 20_000


class _Server(uvicorn.Server):
    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        previous = {sig: signal.signal(sig, self.handle_exit) for sig in _SIGNALS}
        try:
            yield
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        if self.started:
            settle_heap()


def settle_heap() -> None:
    """Moves what start-up built (modules, the app, warm engines' Python side) out of the
    collector's sight: a full collection then scans only what came after, a few ms rather
    than about 100 ms of a request's time on a server that imported everything. Then
    young collections wait for ``YOUNG_COLLECTION_THRESHOLD`` new objects."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(YOUNG_COLLECTION_THRESHOLD, *gc.get_threshold()[1:])


_SIGNALS = (signal.SIGINT, signal.SIGTERM)


def serve(app: Any, *, host: str, port: int) -> None:
    """Serves until SIGTERM or SIGINT; the app's lifespan shutdown runs to its end."""
    server = _Server(uvicorn.Config(app, host=host, port=port, log_level="warning"))
    server.run()
    if not server.started:
        raise SystemExit(3)  # start-up failed (the lifespan said why in the log)
