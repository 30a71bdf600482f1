"""What a LibreTranslate request says, read the way LibreTranslate's clients send it.

Clients disagree on the wire: libretranslatepy posts a form, libretranslate-aio a form with
a list as repeated fields (``q=a&q=b``), deep-translator puts everything in the query string,
Weblate posts JSON with ``q`` as an array. Every one of them is read here into one
``LtParams``, the query string merged under the body as Flask's ``request.values`` does.
A refusal is worded as LibreTranslate words it (``errors``).
"""

from __future__ import annotations

from typing import Any

from fastapi import Request
from starlette.datastructures import UploadFile

from dragoman.api.auth import key_in_header, tenant_for
from dragoman.api.bodies import Params, read_values
from dragoman.api.libretranslate.errors import LtRefusal


class LtParams(Params):
    """The request's values by name; a JSON body keeps its types (``q`` may be a list)."""

    def one(self, name: str) -> Any:
        found = self._values.get(name)
        return found[0] if found else None

    def text(self, name: str) -> str | None:
        """A value as a string; a number (``"alternatives": 3``) reads as its digits."""
        value = self.one(name)
        if value is None or isinstance(value, UploadFile):
            return None
        if isinstance(value, bool | int | float):
            return str(value)
        if not isinstance(value, str):
            raise LtRefusal(f"Invalid request: {name} must be a string")
        return value

    def required(self, name: str) -> str:
        value = self.text(name)
        if not value:
            raise LtRefusal(f"Invalid request: missing {name} parameter")
        return value

    def texts(self) -> str | list[str]:
        """``q``: one string, a JSON array, or the fields ``q=a&q=b`` (a list, in order)."""
        found = [v for v in self._values.get("q", []) if v is not None]
        if not found or found == [""] or found == [[]]:
            raise LtRefusal("Invalid request: missing q parameter")
        value: Any = found[0] if len(found) == 1 else found  # repeated fields: a list
        items = value if isinstance(value, list) else [value]
        if not all(isinstance(item, str) for item in items):
            raise LtRefusal("Invalid request: q must be a string or a list of strings")
        return items if isinstance(value, list) else value

    def file(self, name: str) -> UploadFile:
        value = self.one(name)
        if not isinstance(value, UploadFile) or not value.filename:
            raise LtRefusal(f"Invalid request: missing {name} parameter")
        return value


async def read_params(request: Request) -> LtParams:
    """The query string, then the body over it (JSON, urlencoded or multipart form)."""
    values, form = await read_values(request, LtRefusal)
    return LtParams(values, form)


def tenant_of(request: Request, params: LtParams) -> str | None:
    """The tenant of ``api_key`` (or of a bearer key); None when no keys are configured."""
    return tenant_for(request, params.text("api_key") or key_in_header(request))
