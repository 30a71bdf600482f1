"""The OpenAPI description tells the truth: schemathesis runs every phase and every check
against ``/openapi.json`` of the API in process (real Apertium, SQLite), and finds nothing."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest
import schemathesis
from schemathesis.engine import Status, StopReason, events, from_schema
from schemathesis.python import asgi

from dragoman.api.app import create_app
from dragoman.api.openapi import spelling_pattern
from dragoman.services import EmbeddedService

KEY = "key-a"
SEED = 1
MAX_EXAMPLES = 40
# What a schema-valid request may still be refused for, by route: what no schema can say.
# Whether a file is its format (what a valid DOCX, TMX or TSV is), and that a glossary's
# sources are unique (uniqueItems compares whole entries, and the server compares sources
# with whitespace collapsed), an Idempotency-Key sent before with another request, and
# the language a text is in, with source_lang "auto".
# docs/api.md documents each refusal; nothing else may refuse a valid request.
UNSAYABLE = {
    "POST /v1/translate": ["400"],
    "POST /v1/jobs": ["400", "415", "422"],
    "POST /v1/memories": ["422"],
    "POST /v1/glossaries": ["400", "415", "422"],
}
# A file refused; a glossary's table that does not parse is an invalid_request naming its
# line, and one without an entry says so.
FILE_CODES = {"unsupported_format", "invalid_file", "bad_encoding"}
TABLE_MESSAGES = ("line ", "entries: ")
ACCEPTED = ["2xx", "3xx", "401", "403", "404", "409", "429", "5xx"]


def _unsayable(route: str, multipart: bool, error: dict[str, str]) -> bool:
    if multipart and error["code"] in FILE_CODES:
        return True
    if error["code"] == "idempotency_key_reused":
        return True  # the key was sent before with another request: state, not schema
    if error["code"] == "detected_language_unsupported":
        return True  # what language a text is in, with source_lang "auto"
    if route != "POST /v1/glossaries":
        return False
    message = error["message"]
    return (multipart and message.startswith(TABLE_MESSAGES)) or " duplicates " in message


@schemathesis.check
def valid_requests_are_refused_only_for_what_no_schema_says(
    ctx: Any, response: Any, case: schemathesis.Case
) -> bool | None:
    """Keeps the statuses ``UNSAYABLE`` adds to positive_data_acceptance to their causes."""
    route = case.operation.label
    if str(response.status_code) not in UNSAYABLE.get(route, []) or case.meta is None:
        return None
    if not case.meta.generation.mode.is_positive:
        return None
    error = response.json()["error"]
    if _unsayable(route, (case.media_type or "").startswith("multipart/"), error):
        return None
    raise AssertionError(
        "A valid request was refused for something its schema could say: "
        f"{response.status_code} {error['code']}: {error['message']}"
    )


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
            # Every check, each with schemathesis's own expected statuses.
            "checks": {"enabled": True, "max_response_time": 30.0},
            "operations": [
                # One filter each: schemathesis ORs the filters of one entry, so a path
                # and a method given apart would reach every POST, or every GET.
                *(
                    {
                        "include-name": label,
                        "checks": {
                            "positive_data_acceptance": {
                                "expected-statuses": [*ACCEPTED, *statuses]
                            }
                        },
                    }
                    for label, statuses in UNSAYABLE.items()
                ),
                {
                    # DELETE /v1/jobs/{job_id} cancels: the cancelled job stays readable, with
                    # its partial results, until it expires (docs/api.md). use_after_free
                    # takes a DELETE for a removal, which this one is not by design.
                    "include-name-regex": r"^GET /v1/jobs/\{job_id\}",
                    "checks": {"use_after_free": {"enabled": False}},
                },
                {
                    # A POST replayed for its Idempotency-Key gets its first answer again
                    # (docs/api.md), naming the glossary it created even if that glossary
                    # was deleted since: schemathesis reuses key values, and when its
                    # stateful run happened to delete one in between, the follow-up GET's
                    # 404 read as a created resource gone missing. test_idempotency holds
                    # the replay; schemathesis's exemption knows deletions, not replays.
                    "include-name-regex": r"^GET /v1/glossaries/\{glossary_id\}$",
                    "checks": {"ensure_resource_availability": {"enabled": False}},
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


def _findings(schema: Any) -> tuple[list[str], set[str], set[str]]:
    """What schemathesis found, the phases that ran, and the operations fuzzed."""
    found: list[str] = []
    phases: set[str] = set()
    fuzzed: set[str] = set()
    for event in from_schema(schema).execute():
        if isinstance(event, events.ScenarioFinished):
            if event.phase.value == "fuzzing" and event.status is not Status.SKIP:
                fuzzed.add(event.recorder.label)
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
    return found, phases, fuzzed


# Every operation, every check, 40 examples each: about 30 s of CPU per run, which beside
# three other test workers on two cores passed the two-minute bound. It runs alone.
@pytest.mark.serial
@pytest.mark.parametrize("secured", [True, False], ids=["api-keys", "open"])
def test_schemathesis_finds_nothing(make_app: Any, secured: bool) -> None:
    # A job's event stream lasts until the job ends: for the run, two seconds at most.
    app = make_app(api_keys=f"acme:{KEY}" if secured else None, events_max_s=2)
    schema = schemathesis.openapi.from_asgi("/openapi.json", app, config=_config(secured=secured))
    found, phases, fuzzed = _findings(schema)
    assert not found, f"{len(found)} findings:\n\n" + "\n\n".join(found)
    assert {"examples", "coverage", "fuzzing", "stateful"} <= phases
    everything = {operation.ok().label for operation in schema.get_all_operations()}
    assert fuzzed == everything, f"not fuzzed: {sorted(everything - fuzzed)}"


def test_a_language_pattern_matches_every_spelling_the_server_accepts() -> None:
    pattern = re.compile(spelling_pattern("fr"))
    assert all(pattern.fullmatch(code) for code in ("fr", "FR", "fra", "Fre"))
    assert not any(pattern.fullmatch(code) for code in ("f", "fro", "fr-FR", "french", "es"))


async def test_the_description_is_of_this_deployment(make_client: Any) -> None:
    client = await make_client(sync_max_segments=7, max_segment_chars=99)
    doc = (await client.get("/openapi.json")).json()
    schemas = doc["components"]["schemas"]
    segments = schemas["TranslateIn"]["properties"]["segments"]
    # Limits are said in words: above them the answer is 413, not a schema's 422.
    assert "maxItems" not in segments and "maxLength" not in segments["items"]
    assert "At most 7 segments" in segments["description"]
    assert "at most 99 characters" in segments["items"]["description"]
    document = schemas["DocumentIn"]["properties"]["segments"]["items"]
    assert "maxLength" not in document and "at most 99 characters" in document["description"]
    pairs = (await client.get("/v1/languages")).json()["pairs"]
    titles = [alternative["title"] for alternative in schemas["JobIn"]["anyOf"]]
    targets = sorted({pair["target"] for pair in pairs})
    # One alternative per pair, one per target for a source_lang of "auto", and one per
    # source and engine into several of the targets it serves.
    assert titles == [f"{p['source']}-{p['target']}" for p in pairs] + [
        f"auto-{t}" for t in targets
    ] + sorted({f"{p['source']}-several-{e}" for p in pairs for e in p["engines"]})
    several = schemas["JobIn"]["anyOf"][-1]
    source, _, engine = several["title"].split("-", 2)
    pattern = several["properties"]["target_langs"]["items"]["pattern"]
    into = [p["target"] for p in pairs if p["source"] == source and engine in p["engines"]]
    assert all(re.fullmatch(pattern, code.upper()) for code in into)
    assert not re.fullmatch(pattern, source)  # never into its own source
    glossary_titles = [alternative["title"] for alternative in schemas["GlossaryIn"]["anyOf"]]
    assert glossary_titles == [f"{p['source']}-{p['target']}" for p in pairs]
    # A form has no null: its engine alternatives leave it out.
    assert all(
        None not in a["properties"].get("engine", {}).get("enum", [])
        for a in schemas["FilesJobIn"]["anyOf"]
    )
    assert "null" not in json.dumps(schemas["FilesJobIn"]["properties"])
    submit = doc["paths"]["/v1/jobs"]["post"]["responses"]
    assert {"404", "409", "415", "422"} <= set(submit)
    assert "404" in doc["paths"]["/v1/translate"]["post"]["responses"]
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
