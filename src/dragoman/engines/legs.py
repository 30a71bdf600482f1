"""A pivot's first leg translated once: the outputs of the pairs that are the first leg of
some pivot pair, kept a while, and shared by the direct translations of that pair and the
pivot routes through it.

A job into several languages often asks for a pair and for another pair through it (en→es
and en→fr through es), or for several pairs through one pivot (de→fr and de→it through
en): each source segment then goes through ``en→es`` (or ``de→en``) once in this process,
whichever asks first; a request made while the same text is being translated waits for
that translation rather than starting its own. Like the segment cache, outputs are shared
within a tenant, and only by jobs that may reuse translations (``"cache": false`` sends
every segment to the engine). Entries are keyed by the engine's version
of the pair, so a model that changes never serves an old output; the most recently used
``size`` are kept.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from collections.abc import Sequence
from typing import TYPE_CHECKING

from dragoman.engines.scores import Scored, scored
from dragoman.models import Pair

if TYPE_CHECKING:
    from dragoman.engines import Engine

SIZE = 50_000  # a shard's worth, by default
_Key = tuple[str, str, str, Pair, str]


class Legs:
    def __init__(self, size: int = SIZE) -> None:
        self._size = size
        self._done: OrderedDict[_Key, Scored] = OrderedDict()
        self._flying: dict[_Key, asyncio.Future[Scored]] = {}
        self.translated = 0  # segments this memo sent to an engine

    async def translate(
        self, engine: Engine, pair: Pair, segments: Sequence[str], share: str = ""
    ) -> list[Scored]:
        """``engine``'s outputs for ``segments`` (with their confidence where it scores
        them), each text sent to it at most once while its output is kept; outputs are
        shared within ``share`` only (a tenant, as the segment cache is)."""
        version = engine.version(pair)
        keys = [(share, engine.name, version, pair, text) for text in segments]
        found: dict[_Key, Scored] = {}
        waits: dict[_Key, asyncio.Future[Scored]] = {}
        mine: dict[_Key, asyncio.Future[Scored]] = {}
        loop = asyncio.get_running_loop()
        for key in keys:
            if key in found or key in waits or key in mine:
                continue
            if (hit := self._done.get(key)) is not None:
                self._done.move_to_end(key)
                found[key] = hit
            elif (flying := self._flying.get(key)) is not None:
                waits[key] = flying
            else:
                mine[key] = self._flying[key] = loop.create_future()
        if mine:
            await self._run(engine, pair, mine)
        for key, future in (mine | waits).items():
            found[key] = await asyncio.shield(future)
        return [found[key] for key in keys]

    async def _run(
        self, engine: Engine, pair: Pair, mine: dict[_Key, asyncio.Future[Scored]]
    ) -> None:
        try:
            outputs = await scored(engine, pair, [key[-1] for key in mine])
        except BaseException as exc:
            for key, future in mine.items():
                del self._flying[key]
                future.set_exception(exc)
                future.exception()  # a waiter may be gone: the failure is its caller's
            raise
        self.translated += len(mine)
        for (key, future), output in zip(mine.items(), outputs, strict=True):
            del self._flying[key]
            future.set_result(output)
            self._done[key] = output
        while len(self._done) > self._size:
            self._done.popitem(last=False)
