"""The OpenAPI description tells the truth: schemathesis runs every phase and every check
against ``/openapi.json`` of the API in process (real Apertium, SQLite), and finds nothing."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
import schemathesis
from schemathesis.engine import Status, StopReason, events, from_schema
from schemathesis.python import asgi

from dragoman.api.app import create_app
from dragoman.api.schemas import spelling_pattern
from dragoman.services import EmbeddedService

KEY = "key-a"
SEED = 20260101
MAX_EXAMPLES = 12
# schemathesis's default statuses for a rejected schema-invalid request, and 413: the server
# checks the documented maxLength of a segment and maxItems of /v1/translate itself, and
# answers 413 payload_too_large above them, as for every other limit.
REJECTIONS = ["400", "401", "403", "404", "405", "406", "409", "413", "415", "422", "428", "429"]


def _config(*, secured: bool) -> schemathesis.Config:
    return schemathesis.Config.from_dict(
        {
            "seed": SEED,
            # The /v1/translate body is an anyOf over the installed pairs, each spelling
            # pattern a regex: hypothesis discards many drafts on the way to a valid one and
            # may call that a failed health check. It says nothing of the server.
            "suppress-health-check": ["filter_too_much"],
            "workers": 1,
            "cache": {"enabled": False},
            **({"headers": {"Authorization": f"Bearer {KEY}"}} if secured else {}),
            "generation": {
                "max-examples": MAX_EXAMPLES,
                "deterministic": True,
                "database": "none",
            },
            "checks": {
                "enabled": True,
                "max_response_time": 30.0,
                "negative_data_rejection": {"expected-statuses": [*REJECTIONS, "5xx"]},
            },
            "operations": [
                {
                    # A file part is any bytes to the schema; the server answers 415 for an
                    # extension that is not a format and 422 for bytes that are not their
                    # format, as docs/api.md says: no schema can say what a valid DOCX is.
                    "include-path": "/v1/jobs",
                    "include-method": "POST",
                    "checks": {
                        "positive_data_acceptance": {
                            "expected-statuses": ["2xx", "401", "413", "415", "422"]
                        }
                    },
                },
                {
                    # DELETE /v1/jobs/{job_id} cancels: the cancelled job stays readable, with
                    # its partial results, until it expires (docs/api.md). use_after_free
                    # takes a DELETE for a removal, which this one is not by design.
                    "include-path-regex": r"^/v1/jobs/\{job_id\}",
                    "include-method": "GET",
                    "checks": {"use_after_free": {"enabled": False}},
                },
            ],
        }
    )


@pytest.fixture
def make_app(make_settings: Any) -> Iterator[Any]:
    """The app with its lifespan, which schemathesis runs on an event loop thread of its own
    (and this fixture ends)."""
    yield lambda **overrides: create_app(EmbeddedService(make_settings(**overrides)))
    asgi.shutdown_lifespans()


def _findings(schema: Any) -> tuple[list[str], set[str]]:
    found: list[str] = []
    phases: set[str] = set()
    for event in from_schema(schema).execute():
        if isinstance(event, events.ScenarioFinished):
            for case_id, nodes in event.recorder.checks.items():
                interaction = event.recorder.interactions.get(case_id)
                response = interaction.response if interaction else None
                for node in nodes:
                    if node.failure_info is None:
                        continue
                    failure = node.failure_info.failure
                    answer = (
                        f"{response.status_code} {response.content[:300]!r}" if response else ""
                    )
                    found.append(
                        f"{event.recorder.label}: {node.name}: {failure.title}\n"
                        f"{failure.message}\n{node.failure_info.code_sample}\n-> {answer}"
                    )
        elif isinstance(event, events.PhaseFinished):
            if event.phase.skip_reason is None and event.status is not Status.SKIP:
                phases.add(event.phase.name.value)
        elif isinstance(event, events.NonFatalError):
            found.append(f"{event.label}: error: {event.info}")
        elif isinstance(event, events.FatalError):
            found.append(f"fatal: {event.exception!r}")
        elif isinstance(event, events.EngineFinished):
            found.extend(f"after the run: {failure.title}: {failure}" for failure in event.failures)
            if event.stop_reason is not StopReason.COMPLETED:
                found.append(f"stopped: {event.stop_reason}")
    return found, phases


@pytest.mark.parametrize("secured", [True, False], ids=["api-keys", "open"])
def test_schemathesis_finds_nothing(make_app: Any, secured: bool) -> None:
    app = make_app(api_keys=f"acme:{KEY}" if secured else None)
    schema = schemathesis.openapi.from_asgi("/openapi.json", app, config=_config(secured=secured))
    found, phases = _findings(schema)
    assert not found, f"{len(found)} findings:\n\n" + "\n\n".join(found)
    assert {"examples", "coverage", "fuzzing", "stateful"} <= phases


def test_a_language_pattern_matches_every_spelling_the_server_accepts() -> None:
    pattern = re.compile(spelling_pattern("fr"))
    assert all(pattern.fullmatch(code) for code in ("fr", "FR", "fra", "Fre"))
    assert not any(pattern.fullmatch(code) for code in ("f", "fro", "fr-FR", "french", "es"))


async def test_the_description_is_of_this_deployment(make_client: Any) -> None:
    client = await make_client(sync_max_segments=7, max_segment_chars=99)
    doc = (await client.get("/openapi.json")).json()
    schemas = doc["components"]["schemas"]
    segments = schemas["TranslateIn"]["properties"]["segments"]
    assert (segments["maxItems"], segments["items"]["maxLength"]) == (7, 99)
    pairs = (await client.get("/v1/languages")).json()["pairs"]
    titles = [alternative["title"] for alternative in schemas["JobIn"]["anyOf"]]
    targets = sorted({pair["target"] for pair in pairs})
    # One alternative per pair, and one per target for a source_lang of "auto".
    assert titles == [f"{p['source']}-{p['target']}" for p in pairs] + [
        f"auto-{t}" for t in targets
    ]
    assert "securitySchemes" not in doc["components"]
    assert all("401" not in op["responses"] for ops in doc["paths"].values() for op in ops.values())
    metrics = doc["paths"]["/metrics"]["get"]["responses"]["200"]["content"]
    assert list(metrics) == ["text/plain"]
    assert "HTTPValidationError" not in str(doc)


async def test_with_keys_every_v1_operation_needs_a_bearer_key(make_client: Any) -> None:
    client = await make_client(api_keys=f"acme:{KEY}")
    doc = (await client.get("/openapi.json")).json()
    for path, operations in doc["paths"].items():
        for operation in operations.values():
            secured = path.startswith("/v1/")
            assert (operation.get("security") == [{"bearer": []}]) is secured
            assert ("401" in operation["responses"]) is secured
