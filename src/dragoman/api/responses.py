"""A response model written once.

A route that returns its response model has FastAPI validate it again, turn it into Python
objects, then encode those as JSON: on a status read, more than the read itself. The hot
routes return ``written(model)`` instead, still declaring ``response_model`` for the
description; pydantic-core writes the same JSON straight to bytes.
"""

from __future__ import annotations

from collections.abc import Mapping

from fastapi import Response
from pydantic import BaseModel


def written(
    model: BaseModel,
    *,
    status_code: int = 200,
    headers: Mapping[str, str] | None = None,
    exclude_none: bool = False,
) -> Response:
    """``model`` as JSON, as FastAPI writes a response model (by alias; ``exclude_none`` as
    the route's ``response_model_exclude_none``)."""
    return Response(
        model.__pydantic_serializer__.to_json(model, by_alias=True, exclude_none=exclude_none),
        status_code=status_code,
        headers=headers,
        media_type="application/json",
    )
