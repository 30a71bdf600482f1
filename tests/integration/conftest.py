"""Integration tests run the real Apertium from Debian's packages."""

from __future__ import annotations

import subprocess
from collections.abc import AsyncIterator, Iterable
from concurrent.futures import ThreadPoolExecutor
from functools import cache
from pathlib import Path

import pytest

from dragoman.engines.apertium import ApertiumEngine

MODES_DIR = Path("/usr/share/apertium/modes")


def squash(text: str) -> str:
    """Whitespace runs aside: the form in which outputs are compared."""
    return " ".join(text.split())


@cache
def cli(mode: str, text: str) -> str:
    """What ``apertium -u <mode>`` (unknown words unmarked, as dragoman gives them) gives for
    ``text`` alone, in a fresh process."""
    result = subprocess.run(
        ["apertium", "-u", mode], input=text.encode(), capture_output=True, check=True, timeout=60
    )
    return result.stdout.decode()


def cli_many(mode: str, texts: Iterable[str]) -> list[str]:
    with ThreadPoolExecutor(max_workers=4) as pool:
        return list(pool.map(lambda text: cli(mode, text), texts))


@pytest.fixture
async def apertium() -> AsyncIterator[ApertiumEngine]:
    engine = ApertiumEngine(MODES_DIR, pipelines_per_pair=1, read_timeout_s=20)
    yield engine
    await engine.close()
