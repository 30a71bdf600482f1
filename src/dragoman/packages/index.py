"""The package index: Argos Translate's format (a JSON array), read from a URL or a path.

Argos's keys are ``package_version, argos_version, from_code, from_name, to_code, to_name,
links, code``; dragoman's optional ones are ``sha256``, ``size``, ``licence``, ``engine`` and
``layout``. Unknown keys are ignored, so Argos's public index reads as it is.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

from packaging.version import InvalidVersion, Version
from pydantic import AliasChoices, BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from dragoman.errors import InvalidRequest
from dragoman.languages import canonical
from dragoman.models import Pair
from dragoman.packages.errors import PackageError
from dragoman.packages.http import Network

# Non-commercial licences install only when the user accepts them (--accept-licence).
NON_COMMERCIAL = ("-NC", "NONCOMMERCIAL", "NON-COMMERCIAL")


class IndexEntry(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore")

    package_version: str
    argos_version: str | None = None
    from_code: str
    from_name: str | None = None
    to_code: str
    to_name: str | None = None
    links: Annotated[list[str], Field(min_length=1)]
    code: str | None = None
    type: str = "translate"
    sha256: Annotated[str, Field(pattern=r"^[0-9a-fA-F]{64}$")] | None = None
    size: Annotated[int, Field(ge=0)] | None = None
    licence: str | None = Field(None, validation_alias=AliasChoices("licence", "license"))
    attribution: str | None = None
    engine: str = "ctranslate2"
    layout: str = "argos"  # "argos" (.argosmodel zip) or "ct2" (a tar or zip of a model dir)

    @property
    def pair(self) -> Pair:
        return Pair(canonical(self.from_code), canonical(self.to_code))

    @property
    def version(self) -> Version:
        return parse_version(self.package_version)

    @property
    def non_commercial(self) -> bool:
        return any(mark in (self.licence or "").upper() for mark in NON_COMMERCIAL)

    @property
    def file_name(self) -> str:
        """A stable name for the downloaded file (it is resumed under that name)."""
        base = self.code or f"translate-{self.from_code}_{self.to_code}"
        suffix = ".argosmodel" if self.layout == "argos" else ".tar"
        return f"{base}-{self.package_version}{suffix}".replace("/", "_")


def parse_version(text: str) -> Version:
    try:
        return Version(text)
    except InvalidVersion:
        return Version("0")


_ENTRIES = TypeAdapter(list[dict[str, object]])


def read_index(location: str, network: Network) -> list[IndexEntry]:
    """The translation entries of the index at ``location`` (a URL or a path); entries that
    are not translation packages or name codes dragoman does not know are left out."""
    raw = _load(location, network)
    try:
        items = _ENTRIES.validate_json(raw)
    except ValidationError:
        raise PackageError(f"{location} is not a package index (a JSON array)") from None
    entries = []
    for item in items:
        try:
            entry = IndexEntry.model_validate(item)
            entry.pair  # noqa: B018 - codes must be ones dragoman knows
        except (ValidationError, InvalidRequest):
            continue
        if entry.type == "translate":
            entries.append(entry)
    return entries


def _load(location: str, network: Network) -> bytes:
    if location.startswith(("http://", "https://")):
        return network.get_bytes(location, what="the package index")
    path = Path(location.removeprefix("file://")).expanduser()
    try:
        return path.read_bytes()
    except OSError as exc:
        raise PackageError(f"cannot read the package index {path}: {exc.strerror}") from None


def newest(entries: list[IndexEntry], pair: Pair, engine: str | None = None) -> IndexEntry:
    """The newest entry for ``pair`` (and ``engine``), or ``PackageError`` naming what exists."""
    found = [e for e in entries if e.pair == pair and engine in (None, e.engine)]
    if not found:
        known = ", ".join(sorted({str(e.pair) for e in entries})) or "none"
        raise PackageError(f"the index has no package for {pair}; pairs in it: {known}")
    return max(found, key=lambda e: e.version)


def dump(entries: list[IndexEntry]) -> str:
    return json.dumps([e.model_dump(mode="json", exclude_none=True) for e in entries], indent=2)
