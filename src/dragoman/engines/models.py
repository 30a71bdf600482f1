"""Neural models: the catalog on disk, and the loaded ones a worker keeps under a memory budget.

On disk, each model is a directory ``<models_dir>/<source>-<target>/<engine>/``, for example
``models/en-fr/ctranslate2/``. Listing reads directory names only, so the API process lists
pairs without loading anything.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Generic, Protocol, TypeVar, cast

from dragoman.engines import Pair
from dragoman.errors import InvalidRequest, UnsupportedPair
from dragoman.languages import canonical

log = logging.getLogger(__name__)

_MB = 1024 * 1024


class ModelCatalog:
    """The model directories of one engine, read again on every call."""

    def __init__(self, models_dir: Path, engine: str) -> None:
        self.models_dir = models_dir
        self._engine = engine
        self._warned: set[str] = set()

    def models(self) -> dict[Pair, Path]:
        """Each pair with its model directory; folders not named like ``en-fr`` are skipped."""
        found: dict[Pair, Path] = {}
        if not self.models_dir.is_dir():
            return found
        for folder in sorted(self.models_dir.iterdir()):
            model_dir = folder / self._engine
            if model_dir.is_dir() and (pair := self._pair(folder)) is not None:
                found.setdefault(pair, model_dir)
        return found

    def path(self, pair: Pair) -> Path:
        """The model directory of ``pair``, or ``UnsupportedPair``."""
        path = self.models().get(pair)
        if path is None:
            raise UnsupportedPair(f"{self._engine} has no model for {pair} in {self.models_dir}")
        return path

    def _pair(self, folder: Path) -> Pair | None:
        source, _, target = folder.name.partition("-")
        try:
            return Pair(canonical(source), canonical(target))
        except InvalidRequest:
            # Warned once per name: pairs() runs on every request.
            if folder.name not in self._warned:
                self._warned.add(folder.name)
                log.warning("skipping %s: a model folder is named like en-fr", folder)
            return None


def directory_size(path: Path) -> int:
    """The bytes of every file under ``path``: the cache's estimate of a model's memory.

    Close for weights loaded as stored (float32 on CPU); an overestimate when the engine
    quantizes on load (ctranslate2 int8, bfloat16 on a GPU), which errs on the safe side.
    """
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


class LoadedModel(Protocol):
    def unload(self) -> None:
        """Frees the model's memory; it is not used again."""
        ...


M = TypeVar("M", bound=LoadedModel)


@dataclass(frozen=True, slots=True)
class ModelKey:
    engine: str
    device: str
    pair: Pair
    path: Path


@dataclass(eq=False, slots=True)
class _Entry:
    size_bytes: int
    model: LoadedModel | None = None
    users: int = 0
    dropped: bool = False
    loading: threading.Lock = field(default_factory=threading.Lock)


class ModelCache:
    """The loaded models of one worker process, least recently used first, under a budget.

    A model is lent with ``use()``; while lent it is never unloaded. Loading one that does not
    fit unloads idle models, oldest first; one larger than the whole budget loads alone.
    """

    def __init__(self, budget_bytes: int) -> None:
        self.budget_bytes = budget_bytes
        self._entries: OrderedDict[ModelKey, _Entry] = OrderedDict()
        self._lock = threading.Lock()

    @contextmanager
    def use(self, key: ModelKey, load: Callable[[], M]) -> Iterator[M]:
        """Lends the model of ``key``, loaded by ``load`` unless it is loaded already."""
        entry = self._acquire(key)
        try:
            # One lock per entry: a second thread wanting the same model waits for this load
            # instead of loading it again; when a load fails, the next waiter tries its own.
            with entry.loading:
                if entry.model is None:
                    with self._lock:
                        victims = self._evict(room_for=entry.size_bytes, keep=key)
                    self._unload(victims, "make room")
                    self._warn_if_over_budget(key, entry)
                    started = time.monotonic()
                    entry.model = load()
                    log.info(
                        "loaded %s model for %s from %s in %.1fs (~%d MB)",
                        key.engine,
                        key.pair,
                        key.path,
                        time.monotonic() - started,
                        entry.size_bytes // _MB,
                    )
            yield cast(M, entry.model)
        finally:
            self._unload(self._release(key, entry), "free memory")

    def loaded(self) -> list[ModelKey]:
        """The keys of the loaded models, least recently used first."""
        with self._lock:
            return [key for key, entry in self._entries.items() if entry.model is not None]

    def unload(self, which: Callable[[ModelKey], bool]) -> None:
        """Unloads the models ``which`` selects; one lent out goes when it is given back."""
        victims = []
        with self._lock:
            for key, entry in list(self._entries.items()):
                if not which(key):
                    continue
                entry.dropped = True
                if entry.users == 0:
                    del self._entries[key]
                    if entry.model is not None:
                        victims.append((key, entry.model))
        self._unload(victims, "close")

    def _acquire(self, key: ModelKey) -> _Entry:
        with self._lock:
            entry = self._entries.get(key)
            if entry is None or entry.dropped:
                entry = self._entries[key] = _Entry(directory_size(key.path))
            entry.users += 1
            self._entries.move_to_end(key)
            return entry

    def _release(self, key: ModelKey, entry: _Entry) -> list[tuple[ModelKey, LoadedModel]]:
        with self._lock:
            entry.users -= 1
            if entry.users == 0 and (entry.model is None or entry.dropped):
                if self._entries.get(key) is entry:
                    del self._entries[key]
                return [(key, entry.model)] if entry.model is not None else []
            # Models lent out while another loaded may have left the cache over budget.
            return self._evict(room_for=0, keep=key)

    def _evict(self, room_for: int, keep: ModelKey) -> list[tuple[ModelKey, LoadedModel]]:
        """Takes idle models out, oldest first, until ``room_for`` more bytes fit. Call it
        holding the lock; unload what it returns after letting go."""
        victims = []
        total = self._loaded_bytes()
        for key, entry in list(self._entries.items()):
            if total + room_for <= self.budget_bytes:
                break
            if key == keep or entry.users or entry.model is None:
                continue
            del self._entries[key]
            total -= entry.size_bytes
            victims.append((key, entry.model))
        return victims

    def _loaded_bytes(self) -> int:
        return sum(e.size_bytes for e in self._entries.values() if e.model is not None)

    def _warn_if_over_budget(self, key: ModelKey, entry: _Entry) -> None:
        with self._lock:
            total = self._loaded_bytes() + entry.size_bytes
        if entry.size_bytes > self.budget_bytes:
            log.warning(
                "%s needs ~%d MB, more than the whole model budget of %d MB; it loads alone",
                key.path,
                entry.size_bytes // _MB,
                self.budget_bytes // _MB,
            )
        elif total > self.budget_bytes:
            log.warning(
                "loading %s goes over the model budget (%d of %d MB): the others are in use",
                key.path,
                total // _MB,
                self.budget_bytes // _MB,
            )

    @staticmethod
    def _unload(victims: list[tuple[ModelKey, LoadedModel]], why: str) -> None:
        for key, model in victims:
            model.unload()
            log.info("unloaded %s model for %s to %s", key.engine, key.pair, why)


class ModelHost(Generic[M]):
    """What the neural engines share: a catalog, the worker's cache, and one thread.

    The models of one engine run on its own thread, one batch at a time: each batch already
    uses every core (or the GPU), and no model is ever used by two threads at once.
    """

    def __init__(
        self,
        engine: str,
        models_dir: Path,
        *,
        cache: ModelCache,
        device: str,
        load: Callable[[Path], M],
    ) -> None:
        self.catalog = ModelCatalog(models_dir, engine)
        self._engine = engine
        self._cache = cache
        self._device = device
        self._load = load
        self._thread: ThreadPoolExecutor | None = None

    def pairs(self) -> frozenset[Pair]:
        return frozenset(self.catalog.models())

    def warm_pairs(self) -> frozenset[Pair]:
        return frozenset(key.pair for key in self._cache.loaded() if self._owns(key))

    async def translate(
        self, pair: Pair, segments: Sequence[str], run: Callable[[M, list[str]], list[str]]
    ) -> list[str]:
        """``run`` on the pair's model, in this engine's thread; blank segments give ``""``."""
        key = ModelKey(self._engine, self._device, pair, self.catalog.path(pair))

        def work(texts: list[str]) -> list[str]:
            with self._cache.use(key, lambda: self._load(key.path)) as model:
                return run(model, texts)

        if self._thread is None:
            self._thread = ThreadPoolExecutor(1, thread_name_prefix=self._engine)
        thread = self._thread
        loop = asyncio.get_running_loop()
        return await translate_nonblank(
            segments, lambda texts: loop.run_in_executor(thread, work, texts)
        )

    async def close(self) -> None:
        """Waits for the batch in progress, then unloads this engine's models. Idempotent;
        a later ``translate`` starts a new thread and loads again."""
        thread, self._thread = self._thread, None
        if thread is not None:
            await asyncio.to_thread(thread.shutdown, wait=True)
        self._cache.unload(self._owns)

    def _owns(self, key: ModelKey) -> bool:
        return (
            key.engine == self._engine
            and key.device == self._device
            and key.path.parent.parent == self.catalog.models_dir
        )


class HostedEngine(Generic[M]):
    """The ``Engine`` methods of a neural engine, delegated to its ``ModelHost``; a subclass
    sets ``_host`` and writes ``_run``, one batch through one loaded model."""

    _host: ModelHost[M]

    def pairs(self) -> frozenset[Pair]:
        return self._host.pairs()

    def warm_pairs(self) -> frozenset[Pair]:
        return self._host.warm_pairs()

    async def translate(self, pair: Pair, segments: Sequence[str]) -> list[str]:
        return await self._host.translate(pair, segments, self._run)

    def _run(self, model: M, texts: list[str]) -> list[str]:
        raise NotImplementedError

    async def close(self) -> None:
        await self._host.close()


async def translate_nonblank(
    segments: Sequence[str], translate: Callable[[list[str]], Awaitable[list[str]]]
) -> list[str]:
    """``translate`` applied to the segments with text; blank ones come back as ``""``."""
    todo = [i for i, segment in enumerate(segments) if segment.strip()]
    outputs = [""] * len(segments)
    if todo:
        texts = await translate([segments[i] for i in todo])
        for i, text in zip(todo, texts, strict=True):
            outputs[i] = text
    return outputs
