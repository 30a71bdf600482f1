"""Where a request's service CPU goes: each request type profiled (cProfile) in process.

``bench/request_costs.py`` says what each request type costs a running server; this script
says what that CPU is spent on. One embedded service over SQLite, its app called in process
through httpx's ASGI transport; one small job is run first, then ``--requests`` requests of
each type are profiled. The app's own time is split into:

- ``middleware``: the stack between the ASGI entry and FastAPI's router (error middleware,
  the body limits, the exception middleware);
- ``dependencies``: FastAPI solving the route's dependencies (the service, the tenant);
- ``endpoint``: the route's own work;
- ``routing``: what is left of the router's time: matching the route, reading the body,
  validating and writing the response model;
- and apart, ``sql``: the time in SQLAlchemy's statement execution (compilation, the driver,
  the rows) during the requests, wherever it ran (a new job's transaction runs in the
  store's group-commit task, outside the route's frames).

The profiler slows everything down, so the milliseconds are inflated; the shares are what
this measures. The types: ``status`` (``GET /v1/jobs/{id}`` of a finished job), ``result``
(its ``/result``), ``translate`` (``POST /v1/translate`` of one segment, a segment-cache
hit after the first), ``submit`` (``POST /v1/jobs`` of 8 segments, answered from the cache:
the job is found whole at submission, so no engine work lands in the figure).
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import json
import pstats
import tempfile
from pathlib import Path
from typing import Any

import httpx

from dragoman.api.app import create_app
from dragoman.services import EmbeddedService
from dragoman.settings import Settings

RESULTS = Path(__file__).parent / "results" / "profile_requests.json"
SEGMENTS = ["Hello world.", "The cat sleeps.", "Where is the station?", "I like green tea."] * 2
JOB = {"source_lang": "en", "target_lang": "es", "documents": [{"name": "d", "segments": SEGMENTS}]}
ONE = {"source_lang": "en", "target_lang": "es", "segments": ["Hello world."]}
# (file suffix, function) of the frames whose cumulative time makes each part.
APP = ("fastapi/applications.py", "__call__")
ROUTE = ("fastapi/routing.py", "app")
DEPENDENCIES = ("fastapi/dependencies/utils.py", "solve_dependencies")
ENDPOINT = ("fastapi/routing.py", "run_endpoint_function")
SQL = ("sqlalchemy/engine/base.py", "_execute_context")


def cumulative(stats: pstats.Stats, where: tuple[str, str]) -> float:
    """The largest cumulative time of a frame matching ``where`` (the outermost call)."""
    found = 0.0
    for (path, _, name), row in stats.stats.items():  # type: ignore[attr-defined]
        if path.endswith(where[0]) and name == where[1]:
            found = max(found, row[3])
    return found


def breakdown(stats: pstats.Stats, requests: int) -> dict[str, float]:
    app, route = cumulative(stats, APP), cumulative(stats, ROUTE)
    dependencies, endpoint = cumulative(stats, DEPENDENCIES), cumulative(stats, ENDPOINT)
    parts = {
        "middleware": app - route,
        "dependencies": dependencies,
        "endpoint": endpoint,
        "routing": max(route - dependencies - endpoint, 0.0),
        "sql": cumulative(stats, SQL),
    }
    out = {"app_ms": round(1000 * app / requests, 3)}
    out |= {f"{name}_share": round(value / app, 3) for name, value in parts.items()}
    return out


async def profile(client: httpx.AsyncClient, kind: str, job_id: str, requests: int) -> Any:
    async def one() -> None:
        if kind == "status":
            answer = await client.get(f"/v1/jobs/{job_id}")
        elif kind == "result":
            answer = await client.get(f"/v1/jobs/{job_id}/result")
        elif kind == "translate":
            answer = await client.post("/v1/translate", json=ONE)
        else:
            answer = await client.post("/v1/jobs", json=JOB)
        answer.raise_for_status()

    for _ in range(20):
        await one()
    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(requests):
        await one()
    profiler.disable()
    return breakdown(pstats.Stats(profiler), requests)


async def measure(requests: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as folder:
        settings = Settings(database_url=f"sqlite+aiosqlite:///{folder}/profile.db")
        service = EmbeddedService(settings)
        await service.start()
        app = create_app(service, manage_lifecycle=False)
        transport = httpx.ASGITransport(app=app)
        try:
            async with httpx.AsyncClient(transport=transport, base_url="http://p") as client:
                job_id = (await client.post("/v1/jobs", json=JOB)).json()["id"]
                for _ in range(200):
                    state = (await client.get(f"/v1/jobs/{job_id}")).json()
                    if state["status"] == "succeeded":
                        break
                    await asyncio.sleep(0.05)
                kinds = ("status", "result", "translate", "submit")
                return {kind: await profile(client, kind, job_id, requests) for kind in kinds}
        finally:
            await service.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--requests", type=int, default=1000, help="profiled requests per type")
    args = parser.parse_args()
    figures = asyncio.run(measure(args.requests))
    columns = list(next(iter(figures.values())))
    print(f"{'request':<10}" + "".join(f"{c.removesuffix('_share'):>20}" for c in columns))
    for kind, row in figures.items():
        print(f"{kind:<10}" + "".join(f"{row[c]:>20}" for c in columns))
    RESULTS.write_text(json.dumps({"requests": args.requests, "figures": figures}, indent=2) + "\n")
    print(f"written to {RESULTS}")


if __name__ == "__main__":
    main()
