"""Multipart forms read the same way by every route that takes one: a form that does not
parse, an unknown field, a field given twice or a file where text belongs is a 422 naming
it."""

from __future__ import annotations

from collections.abc import AsyncIterator, Collection
from contextlib import asynccontextmanager

from fastapi import Request
from starlette.datastructures import FormData

from dragoman.api.formdata import read_form
from dragoman.errors import InvalidRequest


@asynccontextmanager
async def multipart(
    request: Request,
    *,
    fields: Collection[str],
    max_files: int,
    max_part_size: int,
) -> AsyncIterator[FormData]:
    """The request's form, closed (its files deleted) at the end of the block."""
    form = await read_form(
        request, max_files=max_files, max_fields=len(fields) + 8, max_part_size=max_part_size
    )
    try:
        unknown = sorted(set(form.keys()) - set(fields))
        if unknown:
            raise InvalidRequest(f"unknown form fields: {', '.join(unknown)}")
        yield form
    finally:
        await form.close()


def text_field(form: FormData, key: str) -> str | None:
    """A plain field given at most once; None when absent."""
    values = form.getlist(key)
    if len(values) > 1:
        raise InvalidRequest(f"{key}: given {len(values)} times")
    if not values:
        return None
    value = values[0]
    if not isinstance(value, str):
        raise InvalidRequest(f"{key}: must be a plain field, not a file")
    return value


def required_field(form: FormData, key: str) -> str:
    """A plain field given once, not empty."""
    value = text_field(form, key)
    if not value:
        raise InvalidRequest(f"{key}: field required")
    return value
