"""The reference a request's service CPU is measured against: a bare FastAPI route that reads
one row by its primary key with ``aiosqlite``, served by uvicorn as dragoman is (its default
loop and HTTP parser, warnings only in the log).

It is what the cheapest status read could cost on the machine at hand: the HTTP stack and
one indexed SQLite read, nothing of dragoman's. ``request_costs.py`` measures it in the same
run as dragoman, with the same client, so that each request's CPU can be read as a ratio to
it, which the machine's speed moves far less than it moves milliseconds.

    python bench/reference_app.py --port 8765 --db /tmp/reference.sqlite
"""

from __future__ import annotations

import argparse
import json
import sqlite3
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import aiosqlite
import uvicorn
from fastapi import FastAPI, HTTPException

ROWS = 1000
READY_PATH = "/healthz"


def job_id(index: int) -> str:
    return f"{index:032x}"


def seed(path: Path, rows: int = ROWS) -> None:
    """A table of ``rows`` jobs, each a status and a small JSON document, keyed by id."""
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE jobs (id TEXT PRIMARY KEY, status TEXT, body TEXT)")
        db.executemany(
            "INSERT INTO jobs VALUES (?, 'succeeded', ?)",
            [(job_id(i), json.dumps({"segments": 8, "pair": "en-es"})) for i in range(rows)],
        )


def build(path: Path) -> FastAPI:
    connection: dict[str, aiosqlite.Connection] = {}

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        connection["db"] = await aiosqlite.connect(path)
        try:
            yield
        finally:
            await connection["db"].close()

    app = FastAPI(lifespan=lifespan)

    @app.get(READY_PATH)
    async def healthz() -> dict[str, str]:
        return {"status": "ok"}

    @app.get("/jobs/{id}")
    async def job(id: str) -> dict[str, Any]:
        async with connection["db"].execute(
            "SELECT id, status, body FROM jobs WHERE id = ?", (id,)
        ) as cursor:
            row = await cursor.fetchone()
        if row is None:
            raise HTTPException(404, "no such job")
        return {"id": row[0], "status": row[1], **json.loads(row[2])}

    return app


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--db", type=Path, required=True, help="a new file, seeded here")
    args = parser.parse_args()
    seed(args.db)
    uvicorn.run(build(args.db), host="127.0.0.1", port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
