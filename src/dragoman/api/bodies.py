"""How the LibreTranslate and DeepL routes read their parameters: the query string, then
the body over it (JSON object, urlencoded or multipart form), every value as a list, since
clients repeat fields (``q=a&q=b``, ``text=a&text=b``). Each API words its own refusal."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from fastapi import Request
from starlette.datastructures import FormData

from dragoman.api.formdata import query_items, read_form
from dragoman.errors import DragomanError

Refuse = Callable[[str], Exception]


class Params:
    """The request's values by name, each a list (repeated fields, in order), and the form
    they came from, whose uploaded files ``close`` lets go of."""

    def __init__(self, values: dict[str, list[Any]], form: FormData | None = None) -> None:
        self._values = values
        self._form = form

    async def close(self) -> None:
        if self._form is not None:
            await self._form.close()


async def read_values(
    request: Request, refuse: Refuse
) -> tuple[dict[str, list[Any]], FormData | None]:
    """The request's parameters and its form (to close once read), or ``refuse(message)``."""
    values: dict[str, list[Any]] = {}
    try:
        query = query_items(request)
    except DragomanError as exc:
        raise refuse(f"Invalid request: {exc.message}") from None
    for key, value in query:
        values.setdefault(key, []).append(value)
    body, form = await _body(request, refuse)
    values.update(body)  # the body wins over the query string, as in Flask
    return values, form


async def _body(request: Request, refuse: Refuse) -> tuple[dict[str, list[Any]], FormData | None]:
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind == "application/json":
        return _json_body(await request.body(), refuse), None
    if kind not in ("application/x-www-form-urlencoded", "multipart/form-data"):
        return {}, None
    try:
        form = await read_form(request, max_files=1, max_fields=1000)
    except DragomanError as exc:
        raise refuse(f"Invalid request: {exc.message}") from None
    found: dict[str, list[Any]] = {}
    for key, value in form.multi_items():
        found.setdefault(key, []).append(value)
    return found, form


def _json_body(raw: bytes, refuse: Refuse) -> dict[str, list[Any]]:
    if not raw.strip():
        return {}
    try:
        data = json.loads(raw)
    except ValueError:
        raise refuse("Invalid request: the body is not valid JSON") from None
    if not isinstance(data, dict):
        raise refuse("Invalid request: the JSON body must be an object")
    return {str(key): [value] for key, value in data.items()}
