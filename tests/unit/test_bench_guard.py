"""``make bench-quick``'s comparison: ratios measured in the same run are compared with the
baseline's; milliseconds and jobs/s, which move with the machine, are shown only."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"


@pytest.fixture(scope="module")
def quick() -> ModuleType:
    sys.path.insert(0, str(BENCH))
    try:
        return importlib.import_module("quick")
    finally:
        sys.path.remove(str(BENCH))


def run(quick: ModuleType, *, status_ms: float, reference_ms: float) -> dict[str, Any]:
    """A run's figures where only the status read and the reference are of interest."""
    figures = {
        key: {
            "label": figure.label,
            "better": figure.better,
            "compared": figure.compared,
            "value": 1.0,
        }
        for key, figure in quick.FIGURES.items()
    }
    figures["request_status_cpu_ms"]["value"] = status_ms
    figures["reference_cpu_ms"]["value"] = reference_ms
    figures["request_status_over_reference"]["value"] = round(status_ms / reference_ms, 2)
    return {
        "figures": figures,
        "wall_s": 1.0,
        "problems": [],
        "measured_at": "then",
        "load_1m": {"start": 0.0, "end": 0.0},
        "busy_cores": 1.0,
    }


def worse_line(table: str) -> str:
    return next(line for line in table.splitlines() if line.startswith("worse by more"))


def test_a_slower_machine_alone_flags_nothing(quick: ModuleType) -> None:
    baseline = run(quick, status_ms=0.4, reference_ms=0.16)
    latest = run(quick, status_ms=1.2, reference_ms=0.48)  # three times slower, same ratio

    table = quick.comparison(latest, baseline)

    assert worse_line(table).endswith(": none")
    assert "+200.0%" in table  # the milliseconds are shown, and how far they moved


def test_a_request_costlier_against_the_reference_is_flagged(quick: ModuleType) -> None:
    baseline = run(quick, status_ms=0.4, reference_ms=0.16)
    latest = run(quick, status_ms=0.5, reference_ms=0.16)

    table = quick.comparison(latest, baseline)

    assert "GET /v1/jobs/{id}" in worse_line(table)
    assert "ms:" not in worse_line(table)
