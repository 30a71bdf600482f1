"""Response bodies of what a server can translate: ``/v1/languages`` and ``/v1/models``."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, Field


class PairOut(BaseModel):
    source: str
    target: str
    engines: list[str]
    pivot: str | None = Field(
        None, description="The language a pivot pair goes through (source→pivot→target)"
    )
    licence: str | None = Field(
        None, description="The default engine's model licence (CC-BY-4.0...); null: unknown"
    )
    attribution: str | None = Field(None, description="The credit the licence asks for")


class ModelOut(BaseModel):
    """An installed neural model, as its dragoman-model.json tells (nulls: laid out by hand)."""

    source: str
    target: str
    engine: str
    version: str | None
    licence: str | None
    attribution: str | None
    installed_at: datetime | None
    origin: str | None = Field(description="The URL or file it was installed from")
    sha256: str | None = Field(description="Of the package as downloaded, when there was one")


class ModelsOut(BaseModel):
    models: list[ModelOut]


class LanguagesOut(BaseModel):
    pairs: list[PairOut]
