"""What idle followers of jobs cost the API: open event streams and long polls.

One ``dragoman api`` process (SQLite, the in-process bus, no watchdog: its jobs stay
queued, so every follower stays idle) with ``--jobs`` jobs, then:

- ``--streams`` open ``GET /v1/jobs/{id}/events`` streams, one per job, held for
  ``--hold`` seconds after each has had its first event;
- as many ``GET /v1/jobs/{id}?wait=60`` long polls, held the same way.

For each: the server's resident memory before and with the followers open (per follower),
and its CPU time while they wait (per second, and per follower). Followers share one store
read per interval (``jobs/waits.py``), so idle followers should cost little.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any

import aiohttp
import psutil
from common import (
    dragoman_executable,
    free_port,
    report,
    spawned,
)

KIB = 1024


async def submit(session: aiohttp.ClientSession, count: int) -> list[str]:
    body = {
        "source_lang": "en",
        "target_lang": "es",
        "documents": [{"name": "a.txt", "segments": ["Hello world."]}],
    }
    ids = []
    for _ in range(count):
        async with session.post("/v1/jobs", json=body) as response:
            assert response.status == 202, await response.text()
            ids.append((await response.json())["id"])
    return ids


async def stream(session: aiohttp.ClientSession, job_id: str, opened: asyncio.Event) -> None:
    async with session.get(f"/v1/jobs/{job_id}/events") as response:
        assert response.status == 200, await response.text()
        async for line in response.content:
            if line.startswith(b"event: "):
                opened.set()  # the first event (the status): the stream is open


async def poll(session: aiohttp.ClientSession, job_id: str, opened: asyncio.Event) -> None:
    opened.set()
    async with session.get(f"/v1/jobs/{job_id}", params={"wait": "60"}) as response:
        await response.read()


async def hold(
    url: str, ids: list[str], kind: str, server: psutil.Process, hold_s: float
) -> dict[str, Any]:
    """Opens one follower of ``kind`` per job, waits until all are open, then measures."""
    connector = aiohttp.TCPConnector(limit=0)
    timeout = aiohttp.ClientTimeout(total=None, sock_read=None)
    async with aiohttp.ClientSession(url, connector=connector, timeout=timeout) as session:
        rss_before = server.memory_info().rss
        follow = stream if kind == "events" else poll
        opened = [asyncio.Event() for _ in ids]
        pairs = zip(ids, opened, strict=True)
        tasks = [asyncio.create_task(follow(session, i, o)) for i, o in pairs]
        started = time.perf_counter()
        await asyncio.wait_for(asyncio.gather(*(o.wait() for o in opened)), 120)
        await asyncio.sleep(1.0)  # the last requests reach their wait
        open_s = time.perf_counter() - started
        cpu_before = sum(server.cpu_times()[:2])
        await asyncio.sleep(hold_s)
        cpu_idle = sum(server.cpu_times()[:2]) - cpu_before
        rss_open = server.memory_info().rss
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    followers = len(ids)
    return {
        "followers": followers,
        "opened_in_s": round(open_s, 2),
        "rss_before_mib": round(rss_before / KIB / KIB, 1),
        "rss_open_mib": round(rss_open / KIB / KIB, 1),
        "rss_per_follower_kib": round((rss_open - rss_before) / KIB / followers, 1),
        "idle_cpu_ms_per_s": round(cpu_idle * 1000 / hold_s, 1),
        "idle_cpu_us_per_follower_per_s": round(cpu_idle * 1e6 / hold_s / followers, 2),
    }


async def measure(args: argparse.Namespace, url: str, pid: int) -> dict[str, Any]:
    server = psutil.Process(pid)
    async with aiohttp.ClientSession(url) as session:
        ids = await submit(session, args.jobs)
    figures = {"jobs": args.jobs, "hold_s": args.hold}
    for kind in ("events", "long_polls"):
        figures[kind] = await hold(url, ids[: args.streams], kind, server, args.hold)
    return figures


def summary(result: dict[str, Any]) -> str:
    lines = []
    for kind in ("events", "long_polls"):
        f = result[kind]
        lines.append(
            f"{kind:>10}: {f['followers']} idle, {f['rss_per_follower_kib']} KiB each, "
            f"server CPU {f['idle_cpu_ms_per_s']} ms/s "
            f"({f['idle_cpu_us_per_follower_per_s']} µs/s each)"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--jobs", type=int, default=1000)
    parser.add_argument("--streams", type=int, default=1000, help="followers of each kind")
    parser.add_argument("--hold", type=float, default=20.0, help="seconds held idle")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="dragoman-bench-") as tmp:
        port = free_port()
        argv = [dragoman_executable(), "api", "--host", "127.0.0.1", "--port", str(port)]
        env = {**os.environ, "DRAGOMAN_DATA_DIR": str(Path(tmp) / "data")}
        with spawned(argv, port, "/healthz", Path(tmp) / "api.log", env) as service:
            result = asyncio.run(measure(args, service.url, service.pid))
    report("events", result, summary)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
