"""Request and response bodies of the v1 API."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from fastapi import Query
from pydantic import (
    AfterValidator,
    AwareDatetime,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StrictBool,
    model_validator,
)
from pydantic.json_schema import SkipJsonSchema

from dragoman.detection import AUTO
from dragoman.errors import InvalidRequest
from dragoman.languages import canonical
from dragoman.models import JobOptions, Pair, Priority

# What ``dragoman.languages.canonical`` accepts before it looks the code up.
LANGUAGE_PATTERN = r"^[A-Za-z]{2,3}$"
# What ``dragoman.validation.check_segments`` lets through: no C0/C1 control character but
# tab, LF and CR, nor the noncharacters U+FFFE and U+FFFF (nor a lone surrogate, which no
# pattern can name); it answers 422 ``invalid_segment`` naming the segment.
SEGMENT_PATTERN = r"^[^\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ufffe\uffff]*$"
# PostgreSQL text cannot hold a NUL.
NAME_PATTERN = r"^[^\x00]*$"

# The patterns below are documented, not enforced by the model: the server checks them
# itself, with messages that say more than "should match pattern".
Language = Annotated[
    str,
    Field(
        description="ISO 639-1 or 639-3 code, in any case; the pair must be installed",
        json_schema_extra={"pattern": LANGUAGE_PATTERN},
    ),
]
SourceLanguage = Annotated[
    str,
    Field(
        description=(
            "ISO 639-1 or 639-3 code, in any case, or 'auto': detected per segment "
            "(/v1/translate) or per document (jobs) among the installed pairs' sources"
        ),
        json_schema_extra={"pattern": f"{LANGUAGE_PATTERN}|^[Aa][Uu][Tt][Oo]$"},
    ),
]
Segment = Annotated[
    str,
    Field(
        description="Text to translate; no control character but tab, LF and CR",
        json_schema_extra={"pattern": SEGMENT_PATTERN},
    ),
]
EngineName = Annotated[
    str | None,
    Field(
        min_length=1,
        description="An engine /v1/languages lists for the pair; absent or null: its default",
    ),
]


MAX_CALLBACK_URL = 2048
CALLBACK_URL = (
    "http(s) URL that gets one signed POST (Standard Webhooks) when the job ends; "
    "loopback and private addresses are refused unless the server allows them; 409 when "
    "this server sends no notifications"
)
CallbackUrl = Annotated[
    str | None,
    Field(
        max_length=MAX_CALLBACK_URL,
        description=CALLBACK_URL,
        examples=["https://example.com/hooks/dragoman"],
    ),
]


# RFC 3339, section 5.6 (its letters in either case); without its offset a time is no moment.
_RFC3339 = re.compile(
    r"\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?P<offset>[Zz]|[+-]\d{2}:\d{2})?"
)
_EXAMPLE_TIME = "2026-12-01T17:00:00Z"


def _rfc3339(value: object) -> object:
    """A deadline as sent: an RFC 3339 date-time string with its offset (or None)."""
    if value is None or isinstance(value, datetime):
        return value
    if not isinstance(value, str) or (match := _RFC3339.fullmatch(value)) is None:
        raise ValueError(f"must be an RFC 3339 date-time string, such as {_EXAMPLE_TIME}")
    if match["offset"] is None:
        raise ValueError(f"needs its time zone offset (Z or ±hh:mm), as in {_EXAMPLE_TIME}")
    return value.upper()


def _utc(value: datetime) -> datetime:
    """The same moment in UTC, as the store keeps every time."""
    try:
        return value.astimezone(UTC)
    except OverflowError:  # within a day of year 1 or 9999: as far as UTC goes
        return (datetime.min if value.year == 1 else datetime.max).replace(tzinfo=UTC)


DEADLINE = (
    "When the job is needed: an RFC 3339 date-time with its offset. Within its priority "
    "and its tenant's turn, the earliest deadline runs first; a deadline already past is "
    "accepted (the job is at_risk at once)"
)
# A moment sent as RFC 3339, kept in UTC.
Moment = Annotated[AwareDatetime, BeforeValidator(_rfc3339), AfterValidator(_utc)]
Deadline = Annotated[Moment | None, Field(description=DEADLINE, examples=[_EXAMPLE_TIME])]


# A form has no null: a field is given or left out, and left out it takes its default. The
# forms' models leave None out of their schemas (``Absent``, ``form_schema``), so that what
# a client draws from them is something a form can say.
Absent = SkipJsonSchema[None]


def form_schema(schema: dict[str, Any]) -> None:
    """A form model's ``json_schema_extra``: no ``"default": null``."""
    for field in schema.get("properties", {}).values():
        if "default" in field and field["default"] is None:
            del field["default"]


# A translation memory's name (``POST /v1/memories``), and a glossary's id as the server
# gives it (``POST /v1/glossaries``).
MEMORY_NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$"
GLOSSARY_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9-]{0,63}$"
MAX_MEMORIES = 16
# A form's ``memories``: names separated by commas, whitespace and empty items aside.
_NAME = MEMORY_NAME_PATTERN.strip("^$")
MEMORY_LIST_PATTERN = rf"^\s*(?:{_NAME})?\s*(?:,\s*(?:{_NAME})?\s*)*$"

MemoryName = Annotated[
    str,
    Field(
        pattern=MEMORY_NAME_PATTERN,
        description="The name of one of the tenant's memories (GET /v1/memories)",
    ),
]
Memories = Annotated[
    list[MemoryName],
    Field(
        max_length=MAX_MEMORIES,
        description=(
            "Translation memories whose exact matches replace machine translation, the "
            "first listed winning"
        ),
    ),
]
GlossaryId = Annotated[
    str | None,
    Field(
        pattern=GLOSSARY_ID_PATTERN,
        description="The id of one of the tenant's glossaries for this pair",
    ),
]
UseCache = Annotated[
    StrictBool,
    Field(
        description=(
            "false: every segment goes to the engine, and no translation of this job "
            "is reused later"
        )
    ),
]


REVIEW_BELOW = (
    "A confidence from 0 to 1: the translations the model is less sure of are to be "
    "reviewed (counted in segments_to_review, listed in the result's review, marked in "
    "XLIFF files); absent: no threshold"
)
ReviewBelow = Annotated[
    float | None, Field(ge=0, le=1, strict=True, description=REVIEW_BELOW, examples=[0.5])
]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class DocumentIn(_Strict):
    name: str = Field(
        min_length=1,
        max_length=1024,
        pattern=NAME_PATTERN,
        examples=["a.txt"],
        description="Echoed in the result; no NUL",
    )
    segments: list[Segment] = Field(min_length=1, examples=[["Hello.", "How are you?"]])


def source_of(code: str) -> str:
    """A source language as given: ``auto``, or the canonical code."""
    return AUTO if code.lower() == AUTO else canonical(code)


MarkUnknown = Annotated[
    StrictBool,
    Field(
        description="Words the engine does not know come back marked (Apertium's '*word'); "
        "by default they come back as they are"
    ),
]


MAX_TARGETS = 32
TARGET_LANGS = (
    "Several target languages: one job, a result per target (?target=), each target's "
    "pairs scheduled as their own work; with target_lang too, target_lang comes first; "
    f"at most {MAX_TARGETS}"
)
# A job names its target language, or its target languages, or both.
_SOME_TARGET: dict[str, Any] = {
    "allOf": [{"anyOf": [{"required": ["target_lang"]}, {"required": ["target_langs"]}]}]
}
# A form's ``target_langs``: codes separated by commas.
TARGET_LIST_PATTERN = r"^\s*[A-Za-z]{2,3}\s*(?:,\s*[A-Za-z]{2,3}\s*)*$"


def one_target_form(schema: dict[str, Any]) -> None:
    """A form model's ``json_schema_extra``: target_lang or target_langs, and no
    ``"default": null``."""
    schema.update(_SOME_TARGET)
    form_schema(schema)


def target_query(description: str) -> Any:
    """A ``?target=`` query parameter: one target language of a job into several."""
    return Query(description=description, json_schema_extra={"pattern": LANGUAGE_PATTERN})


def some_target(target_lang: str | None, target_langs: object) -> None:
    """``ValueError`` when neither field is given."""
    if target_lang is None and target_langs is None:
        raise ValueError("give target_lang or target_langs")


def one_of_targets(target_lang: str | None, target_langs: list[str] | None) -> tuple[str, ...]:
    """The job's targets as canonical codes, ``target_lang`` first, each once:
    ``ValueError`` when neither field is given."""
    some_target(target_lang, target_langs)
    named = [("target_lang", target_lang)] if target_lang is not None else []
    named += [("target_langs", code) for code in target_langs or []]
    found: dict[str, None] = {}
    for field, code in named:
        try:
            found[canonical(code)] = None
        except InvalidRequest as exc:
            raise InvalidRequest(f"{field}: {exc.message}") from None
    return tuple(found)


class JobIn(_Strict):
    model_config = ConfigDict(json_schema_extra=_SOME_TARGET)

    source_lang: SourceLanguage = Field(examples=["en"])
    target_lang: Language | SkipJsonSchema[None] = Field(None, examples=["es"])
    target_langs: (
        Annotated[list[Language], Field(min_length=1, max_length=MAX_TARGETS)]
        | SkipJsonSchema[None]
    ) = Field(None, description=TARGET_LANGS, examples=[["es", "fr", "de"]])
    documents: list[DocumentIn] = Field(min_length=1)
    priority: Priority = Priority.NORMAL
    engine: EngineName = None
    callback_url: CallbackUrl = None
    memories: Memories = []
    glossary: GlossaryId = None
    cache: UseCache = True
    mark_unknown: MarkUnknown = False
    review_below: ReviewBelow = None
    deadline: Deadline = None

    @model_validator(mode="after")
    def _some_target(self) -> JobIn:
        some_target(self.target_lang, self.target_langs)
        return self

    def targets(self) -> tuple[str, ...]:
        return one_of_targets(self.target_lang, self.target_langs)

    def pair(self) -> Pair:
        return Pair(source_of(self.source_lang), self.targets()[0])

    def options(self) -> JobOptions:
        return JobOptions(
            priority=self.priority,
            engine=self.engine,
            callback_url=self.callback_url,
            memories=tuple(self.memories),
            glossary=self.glossary,
            use_cache=self.cache,
            mark_unknown=self.mark_unknown,
            review_below=self.review_below,
            deadline=self.deadline,
        )


class TranslateIn(_Strict):
    source_lang: SourceLanguage = Field(examples=["en"])
    target_lang: Language = Field(examples=["es"])
    segments: list[Segment] = Field(min_length=1, examples=[["Hello world."]])
    engine: EngineName = None
    glossary: GlossaryId = None
    mark_unknown: MarkUnknown = False


class DetectedLanguage(BaseModel):
    language: str
    confidence: float = Field(description="0-100")


class TranslateOut(BaseModel):
    translations: list[str]
    detected_languages: list[DetectedLanguage] | None = Field(
        None, description="With source_lang 'auto': each segment's detected language"
    )


class UsageOut(BaseModel):
    period_start: datetime
    period_end: datetime
    characters: int = Field(description="Characters charged this period (segments' text)")
    requests: int = Field(description="Translation requests: /v1/translate calls and jobs")
    character_limit: int | None = Field(description="Characters per period; null: no limit")
    requests_per_minute: int | None = Field(description="Rate limit; null: no limit")


class HealthOut(BaseModel):
    status: Literal["ok"]


class ReadyOut(BaseModel):
    status: Literal["ready"]


class ErrorBody(BaseModel):
    code: str
    message: str


class ErrorOut(BaseModel):
    error: ErrorBody
