"""The OpenAPI description of a deployment: the generic one FastAPI makes, narrowed to the
installed pairs and engines, the configured limits and the authentication in force."""

from __future__ import annotations

import copy
import functools
import itertools
import string
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel
from pydantic.json_schema import models_json_schema

from dragoman.api.idempotency import KEY_PATTERN
from dragoman.api.idempotency import PATHS as IDEMPOTENT_PATHS
from dragoman.engines import Pair
from dragoman.errors import InvalidRequest
from dragoman.languages import canonical
from dragoman.settings import Settings


@functools.cache
def _spellings() -> dict[str, tuple[str, ...]]:
    """Every lower-case code ``canonical`` accepts, by the canonical code it gives."""
    table: dict[str, list[str]] = {}
    for length in (2, 3):
        for letters in itertools.product(string.ascii_lowercase, repeat=length):
            code = "".join(letters)
            try:
                table.setdefault(canonical(code), []).append(code)
            except InvalidRequest:
                continue
    return {tag: tuple(codes) for tag, codes in table.items()}


def spelling_pattern(code: str) -> str:
    """A pattern matching exactly the codes that name language ``code``: ``en`` matches
    ``en``, ``eng`` and ``EN``."""
    spellings = _spellings().get(code, (code,))
    either_case = ("".join(f"[{c.upper()}{c}]" if c.isalpha() else c for c in s) for s in spellings)
    return f"^(?:{'|'.join(either_case)})$"


def add_bodies(openapi: dict[str, Any], *models: type[BaseModel]) -> None:
    """Puts request bodies that a route reads itself (``openapi_extra``) in the components."""
    _, top = models_json_schema(
        [(model, "validation") for model in models], ref_template="#/components/schemas/{model}"
    )
    openapi.setdefault("components", {}).setdefault("schemas", {}).update(top["$defs"])


def tailor_openapi(
    openapi: dict[str, Any],
    *,
    pairs: Sequence[tuple[Pair, Sequence[str]]],
    settings: Settings,
) -> dict[str, Any]:
    """Narrows the generic description to this deployment: the installed pairs and their
    engines, the limits of ``settings`` and, when keys are configured, bearer authentication
    (without keys no operation can answer 401)."""
    schemas = openapi["components"]["schemas"]
    glossary_pairs = [{"title": f"{pair}", "properties": _languages(pair)} for pair, _ in pairs]
    for name, alternatives in (
        ("JobIn", _alternatives(pairs, unset=[None], several=True)),
        ("TranslateIn", _alternatives(pairs, unset=[None])),
        ("FilesJobIn", _alternatives(pairs, unset=[], several=True, form=True)),
        ("GlossaryIn", glossary_pairs),
        ("GlossaryFileIn", glossary_pairs),
    ):
        if alternatives:
            schemas[name]["anyOf"] = alternatives
        else:
            schemas[name]["not"] = {}
            schemas[name]["description"] = "No language pair is installed"
    _describe_limits(schemas, settings)
    secured = bool(settings.tenants_by_key)
    if secured:
        openapi["components"]["securitySchemes"] = {
            "bearer": {"type": "http", "scheme": "bearer", "description": "An API key"}
        }
    for path, operations in openapi["paths"].items():
        for operation in operations.values():
            responses = operation["responses"]
            # FastAPI adds a 422 in its own body shape to every route with parameters; the
            # routes that can answer 422 document it with the error body.
            default_422 = responses.get("422", {}).get("content", {}).get("application/json")
            if default_422 and "HTTPValidationError" in str(default_422.get("schema")):
                del responses["422"]
            if not path.startswith("/v1/"):
                continue
            if path in IDEMPOTENT_PATHS and operation is operations.get("post"):
                _idempotent(operation)
            if secured:
                operation["security"] = [{"bearer": []}]
            else:
                responses.pop("401", None)
    for unused in ("HTTPValidationError", "ValidationError"):
        schemas.pop(unused, None)
    return openapi


def _idempotent(operation: dict[str, Any]) -> None:
    """The ``Idempotency-Key`` header of a POST that creates something, and its answers."""
    operation.setdefault("parameters", []).append(
        {
            "name": "Idempotency-Key",
            "in": "header",
            "required": False,
            "description": "Makes a retry safe: the same key with the same request gets the "
            "first answer again (with Idempotent-Replayed: true), never a second resource. "
            "Per tenant, kept at least 24 hours.",
            "schema": {"type": "string", "pattern": KEY_PATTERN, "maxLength": 255},
        }
    )
    responses = operation["responses"]
    for status, response in responses.items():
        if status.startswith("2"):
            response.setdefault("headers", {})["Idempotent-Replayed"] = {
                "description": "true: the first answer to this Idempotency-Key, given again",
                "schema": {"type": "string", "enum": ["true"]},
            }
    for status, code, why in (
        ("409", "idempotency_key_in_use", "the first request with the key is still handled"),
        ("422", "idempotency_key_reused", "the key came with another request"),
    ):
        conflict = responses.setdefault(status, copy.deepcopy(responses.get("422", {})))
        description = conflict.get("description", "")
        conflict["description"] = f"{description}; {code}: {why}".lstrip("; ")


def _alternatives(
    pairs: Sequence[tuple[Pair, Sequence[str]]],
    *,
    unset: list[None],
    several: bool = False,
    form: bool = False,
) -> list[dict[str, Any]]:
    """One alternative per installed pair, one per target for a source_lang of ``auto``,
    and one per source and engine into several of the targets it serves:
    the languages and engines a request may name together (without ``several``, one target
    only; with several, those an engine serves from the source, by it or by their default
    engines). ``unset`` is how a request leaves the engine to the server besides leaving it
    out: null in JSON, nothing in a form, where ``target_langs`` is a comma-separated
    list."""
    targets = sorted({pair.target for pair, _ in pairs})
    # Several targets from one source, by an engine that serves each of them.
    into: dict[tuple[str, str], list[str]] = {}
    for pair, engines in pairs:
        for engine in engines:
            into.setdefault((pair.source, engine), []).append(pair.target)
    listed = (lambda codes: {"target_langs": _list_of(codes, form)}) if several else None
    alternatives = (
        [
            {
                "title": f"{pair}",
                "properties": {
                    **_languages(pair),
                    **(listed([pair.target]) if listed else {}),
                    "engine": {"enum": [*engines, *unset]},
                },
            }
            for pair, engines in pairs
        ]
        + [
            {
                "title": f"auto-{target}",
                "properties": {
                    "source_lang": {"pattern": "^[Aa][Uu][Tt][Oo]$"},
                    "target_lang": {"pattern": spelling_pattern(target)},
                    **(listed([target]) if listed else {}),
                    "engine": {"enum": [*_engines_into(target, pairs), *unset]},
                },
            }
            for target in targets
        ]
        + [
            {
                "title": f"{source}-several-{engine}",
                "required": ["target_langs"],
                "properties": {
                    "source_lang": {"pattern": spelling_pattern(source)},
                    "target_lang": {"pattern": _either(codes)},
                    "target_langs": _list_of(codes, form),
                    "engine": {"enum": [engine, *unset]},
                },
            }
            for (source, engine), codes in sorted(into.items())
            if listed
        ]
    )
    return alternatives


def _either(codes: Sequence[str]) -> str:
    """A pattern matching exactly the codes that name one of ``codes``."""
    return "^(?:" + "|".join(spelling_pattern(code)[1:-1] for code in codes) + ")$"


def _list_of(codes: Sequence[str], form: bool) -> dict[str, Any]:
    """``target_langs`` naming only ``codes``: a JSON array, or a form's comma-separated
    text."""
    either = _either(codes)[1:-1]
    if form:
        return {"pattern": rf"^\s*{either}\s*(?:,\s*{either}\s*)*$"}
    return {"items": {"pattern": f"^{either}$"}}


def _languages(pair: Pair) -> dict[str, Any]:
    return {
        "source_lang": {"pattern": spelling_pattern(pair.source)},
        "target_lang": {"pattern": spelling_pattern(pair.target)},
    }


def _engines_into(target: str, pairs: Sequence[tuple[Pair, Sequence[str]]]) -> list[str]:
    """The engines of the pairs into ``target``: those a request with ``auto`` may name."""
    return list(
        dict.fromkeys(e for pair, engines in pairs if pair.target == target for e in engines)
    )


def _describe_limits(schemas: dict[str, Any], settings: Settings) -> None:
    """Says the size limits in words. They are not ``maxLength`` or ``maxItems``: the
    contract (docs/api.md) answers every limit with 413 ``payload_too_large``, and a schema
    keyword broken says 422 to a client; a limit is a setting of the deployment (it tells
    them at /v1/limits), not a rule of the request's shape."""
    chars = settings.max_segment_chars
    per_segment = f"; at most {chars} characters (413 payload_too_large above)"
    for owner in ("DocumentIn", "TranslateIn"):
        items = schemas[owner]["properties"]["segments"]["items"]
        items["description"] = items.get("description", "") + per_segment
    schemas["TranslateIn"]["properties"]["segments"]["description"] = (
        f"At most {settings.sync_max_segments} segments (413 payload_too_large above: submit a job)"
    )
    schemas["JobIn"]["properties"]["documents"]["description"] = (
        f"At most {settings.max_segments_per_job} segments in all (413 payload_too_large above)"
    )
