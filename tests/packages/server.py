"""A package server on 127.0.0.1 in a thread: files with HTTP Range (aiohttp's FileResponse),
and the faults an installer meets: a cut connection, a stall, a 404, a body that lies."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from aiohttp import web


@dataclass
class Faults:
    """Per file name: cut the body after this many bytes (once), stall (seconds, once)."""

    cut_after: dict[str, int] = field(default_factory=dict)
    stall_s: dict[str, float] = field(default_factory=dict)
    ranges: list[str | None] = field(default_factory=list)  # Range of each package GET


@dataclass
class PackageServer:
    root: Path
    url: str
    faults: Faults


def _app(root: Path, faults: Faults) -> web.Application:
    async def files(request: web.Request) -> web.StreamResponse:
        name = request.match_info["name"]
        path = root / name
        if not path.is_file():
            raise web.HTTPNotFound()
        if request.method == "GET" and not name.endswith(".json"):
            faults.ranges.append(request.headers.get("Range"))
        if name in faults.stall_s:
            await asyncio.sleep(faults.stall_s.pop(name))
        if name in faults.cut_after and request.method == "GET":
            return await _cut(request, path, faults.cut_after.pop(name))
        return web.FileResponse(path)

    app = web.Application()
    app.router.add_route("*", "/files/{name}", files)
    return app


async def _cut(request: web.Request, path: Path, after: int) -> web.StreamResponse:
    """Announces the whole file, sends ``after`` bytes, then drops the connection."""
    data = await asyncio.to_thread(path.read_bytes)
    response = web.StreamResponse(headers={"Content-Length": str(len(data))})
    await response.prepare(request)
    await response.write(data[:after])
    assert request.transport is not None
    request.transport.close()
    return response


@contextmanager
def serve(root: Path) -> Iterator[PackageServer]:
    faults = Faults()
    loop = asyncio.new_event_loop()
    runner = web.AppRunner(_app(root, faults))
    loop.run_until_complete(runner.setup())
    site = web.TCPSite(runner, "127.0.0.1", 0)
    loop.run_until_complete(site.start())
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    try:
        yield PackageServer(root, f"http://127.0.0.1:{port}/files", faults)
    finally:
        asyncio.run_coroutine_threadsafe(runner.cleanup(), loop).result(10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
        loop.close()
