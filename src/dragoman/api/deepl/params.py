"""What a DeepL v2 request says, who sends it, and how a refusal is answered.

DeepL's clients send their parameters as a form (``text=a&text=b``), as JSON (``"text":
["a", "b"]``, booleans as ``true``), in the query string, or as multipart (documents); the
official SDKs send a form body even with GET (``/v2/languages``). All of them are read into
one ``DeepLParams``, the body over the query string. The key comes in
``Authorization: DeepL-Auth-Key KEY`` (or ``Bearer KEY``, as DeepLX-aware clients send it),
or in the legacy ``auth_key`` parameter.

A refusal is worded as DeepL words it (``errors``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from fastapi import Request, Response
from starlette.datastructures import UploadFile

from dragoman.api.auth import key_in_header, tenant_for
from dragoman.api.bodies import Params, read_values
from dragoman.api.deepl.errors import DeepLRefusal, answer, unsupported

_TRUE, _FALSE = {"1", "true"}, {"0", "false"}


class DeepLParams(Params):
    """The request's values by name, each a list (repeated form fields, in order)."""

    def text(self, name: str) -> str | None:
        found = self._values.get(name)
        value = found[0] if found else None
        if value is None:
            return None
        if isinstance(value, bool):
            return "1" if value else "0"
        if isinstance(value, int | float):
            return str(value)
        if not isinstance(value, str):
            raise unsupported(name)
        return value

    def required(self, name: str) -> str:
        value = self.text(name)
        if not value:
            raise DeepLRefusal(f"Parameter '{name}' not specified.")
        return value

    def choice(self, name: str, allowed: tuple[str, ...], default: str) -> str:
        value = self.text(name)
        if value is None:
            return default
        if value.lower() not in allowed:
            raise unsupported(name)
        return value.lower()

    def flag(self, name: str, default: bool) -> bool:
        """``1``/``0``, ``true``/``false`` (a JSON boolean too)."""
        value = self.choice(name, (*_TRUE, *_FALSE), "1" if default else "0")
        return value in _TRUE

    def texts(self) -> list[str]:
        """``text``: repeated fields or a JSON array, in order; at least one, all strings."""
        found = self._values.get("text", [])
        items = found[0] if len(found) == 1 and isinstance(found[0], list) else found
        if not items:
            raise DeepLRefusal("Parameter 'text' not specified.")
        if not all(isinstance(item, str) for item in items):
            raise DeepLRefusal("Parameter 'text' must be a string or a list of strings.")
        return list(items)

    def tags(self, name: str) -> list[str]:
        """A list of tag names: a JSON array, repeated fields or comma-separated."""
        found = self._values.get(name, [])
        items = found[0] if len(found) == 1 and isinstance(found[0], list) else found
        if not all(isinstance(item, str) for item in items):
            raise unsupported(name)
        return [tag.strip() for item in items for tag in item.split(",") if tag.strip()]

    def objects(self, name: str) -> list[DeepLParams] | None:
        """A JSON array of objects (``dictionaries``), each read as parameters; None when
        it is not given."""
        found = self._values.get(name)
        if not found:
            return None
        items = found[0]
        if not isinstance(items, list) or not all(isinstance(item, dict) for item in items):
            raise DeepLRefusal(f"Value for '{name}' not supported: a JSON array of objects")
        return [DeepLParams({str(key): [value] for key, value in item.items()}) for item in items]

    def file(self, name: str) -> UploadFile:
        found = self._values.get(name)
        value = found[0] if found else None
        if not isinstance(value, UploadFile):
            raise DeepLRefusal("Invalid file data.")
        return value


async def read_params(request: Request) -> DeepLParams:
    """The query string, then the body over it (JSON, urlencoded or multipart form)."""
    values, form = await read_values(request, DeepLRefusal)
    return DeepLParams(values, form)


def tenant_of(request: Request, params: DeepLParams) -> str | None:
    """The tenant of the caller's key; None when no keys are configured (any key, or none,
    is accepted then)."""
    key = key_in_header(request, ("deepl-auth-key", "bearer"))
    return tenant_for(request, key if key is not None else params.text("auth_key"))


Use = Callable[[DeepLParams, str | None], Awaitable[Any]]


async def handle(request: Request, use: Use) -> Response:
    """``use`` of the request's parameters and tenant, answered as ``answer`` does."""

    async def run() -> Any:
        if request.headers.get("authorization"):
            tenant_of(request, DeepLParams({}))  # a bad key is a 403 before the body is read
        params = await read_params(request)
        try:
            return await use(params, tenant_of(request, params))
        finally:
            await params.close()

    return await answer(run())
