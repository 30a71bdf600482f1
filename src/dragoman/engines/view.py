"""One view of the installed engines per request (``one_view``)."""

from __future__ import annotations

import asyncio
import contextlib
import functools
from collections.abc import Awaitable, Callable, Coroutine, Iterator
from contextvars import ContextVar
from typing import Any, ParamSpec, TypeVar

P = ParamSpec("P")
T = TypeVar("T")

# ``one_view``: the task it was entered in, and the tables its ``Engines`` built there.
_VIEW: ContextVar[tuple[object, dict[object, Any]] | None]
_VIEW = ContextVar("dragoman_engines_view", default=None)


@contextlib.contextmanager
def one_view() -> Iterator[None]:
    """Within it, in this task, each ``Engines`` asks its engines for their pairs once, the
    first time its table is wanted: a submission resolves its pair three times or more, and
    each time a neural engine looked at its models folder (9 µs in a busy server). What the
    request sees is what was installed when it first asked; a later request asks again. The
    tasks and threads it starts (which copy the variable) ask every time, as outside it."""
    token = _VIEW.set((asyncio.current_task(), {}))
    try:
        yield
    finally:
        _VIEW.reset(token)


def in_one_view(method: Callable[P, Awaitable[T]]) -> Callable[P, Coroutine[Any, Any, T]]:
    """``method`` run in ``one_view``."""

    @functools.wraps(method)
    async def viewing(*args: P.args, **kwargs: P.kwargs) -> T:
        with one_view():
            return await method(*args, **kwargs)

    return viewing


def _current_task() -> object:
    """The running task; None in a thread (``asyncio.to_thread`` copies the variable too)."""
    try:
        return asyncio.current_task()
    except RuntimeError:
        return None


def in_view(owner: object, build: Callable[[], T]) -> T:
    """``build()``, once per ``owner`` within ``one_view`` in its task; every time outside."""
    view = _VIEW.get()
    if view is None or view[0] is not _current_task():
        return build()
    seen: T | None = view[1].get(owner)
    if seen is None:
        seen = view[1][owner] = build()
    return seen
