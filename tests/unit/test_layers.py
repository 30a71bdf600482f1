"""The package reads bottom to top: nouns, adapters, roles, programs; no cycle between its
parts, and no module past the size a reader can hold (docs/architecture.md)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "src" / "dragoman"

LAYERS: dict[str, int] = {
    **dict.fromkeys(
        ["errors", "models", "settings", "clock", "languages", "metrics", "messages", "tasks"], 0
    ),
    **dict.fromkeys(["validation", "formats", "store", "bus", "engines", "detection"], 1),
    **dict.fromkeys(["runtime", "backoff", "packages", "periodic"], 2),
    **dict.fromkeys(
        [
            "queue",
            "jobs",
            "translation",
            "relay",
            "watchdog",
            "worker",
            "scaling",
            "webhooks",
            "usage",
            "reuse",
            "fleet",
            "glossaries",
            "idempotency",
        ],
        3,
    ),
    **dict.fromkeys(["api", "programs", "front", "services", "client", "cli"], 4),
}
MAX_MODULE_LINES = 400


def part_of(path: Path) -> str:
    """The top-level module or subpackage a file belongs to."""
    relative = path.relative_to(PACKAGE)
    return relative.parts[0].removesuffix(".py")


def imported_parts(path: Path) -> set[str]:
    """The parts of dragoman that a file imports, at the top or inside functions."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module]
            if node.module == "dragoman":
                names = [f"dragoman.{alias.name}" for alias in node.names]
        for name in names:
            if name.startswith("dragoman."):
                found.add(name.split(".")[1])
    return found


def sources() -> list[Path]:
    return [p for p in sorted(PACKAGE.rglob("*.py")) if "migrations" not in p.parts]


def graph() -> dict[str, set[str]]:
    edges: dict[str, set[str]] = {}
    for path in sources():
        part = part_of(path)
        if part == "__init__":
            continue
        edges.setdefault(part, set()).update(imported_parts(path) - {part, "__version__"})
    return edges


def test_every_part_has_a_layer() -> None:
    assert set(graph()) <= set(LAYERS), "add the new module to LAYERS and to the architecture map"


def test_no_part_imports_a_higher_layer() -> None:
    upward = [
        f"{part} (layer {LAYERS[part]}) imports {other} (layer {LAYERS[other]})"
        for part, others in graph().items()
        for other in others
        if other in LAYERS and LAYERS[other] > LAYERS[part]
    ]
    assert upward == []


def test_there_is_no_import_cycle_between_parts() -> None:
    edges = graph()
    done: set[str] = set()

    def visit(part: str, trail: list[str]) -> None:
        if part in trail:
            pytest.fail("import cycle: " + " -> ".join([*trail[trail.index(part) :], part]))
        if part in done:
            return
        for other in sorted(edges.get(part, ())):
            visit(other, [*trail, part])
        done.add(part)

    for part in sorted(edges):
        visit(part, [])


def test_no_module_is_longer_than_a_reader_can_hold() -> None:
    long = {
        str(p.relative_to(PACKAGE)): n
        for p in sources()
        if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES
    }
    assert long == {}


def test_each_api_stands_on_the_use_cases_not_on_another_api() -> None:
    """DeepL's routes use ``translation`` and the jobs, never LibreTranslate's module."""
    for path in sorted((PACKAGE / "api" / "deepl").rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        assert "dragoman.api.libretranslate" not in text, path


def test_the_http_layer_does_not_reach_the_store() -> None:
    """Routes go through the use cases and the features (``api.deps.ApiParts``)."""
    api = PACKAGE / "api"
    reaching = [
        str(p.relative_to(PACKAGE))
        for p in sorted(api.rglob("*.py"))
        if "store" in imported_parts(p)
    ]
    assert reaching == []
