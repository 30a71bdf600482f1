"""The loaded models of one worker process, kept under a memory budget."""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol, TypeVar, cast

from dragoman.models import Pair

log = logging.getLogger(__name__)

_MB = 1024 * 1024


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
Revision = tuple[int, int]  # a model folder's (st_ino, st_ctime_ns)


@dataclass(frozen=True, slots=True)
class ModelKey:
    engine: str
    device: str
    pair: Pair
    path: Path
    # The folder's inode and change time: an upgrade puts a new folder at the same path (one
    # rename), and the model loaded from the old one must not serve for it. None: not a folder
    # that can change.
    revision: Revision | None = None


@dataclass(eq=False, slots=True)
class _Entry:
    size_bytes: int
    model: LoadedModel | None = None
    users: int = 0
    dropped: bool = False
    loading: threading.Lock = field(default_factory=threading.Lock)


class ModelCache:
    """The loaded models of one worker process, least recently used first, under a budget
    of bytes and of models (``max_models``: with fifty pairs installed, fifty must not load).

    A model is lent with ``use()``; while lent it is never unloaded. Loading one that does not
    fit unloads idle models, oldest first; one larger than the whole budget loads alone.
    """

    def __init__(self, budget_bytes: int, max_models: int | None = None) -> None:
        self.budget_bytes = budget_bytes
        self.max_models = max_models
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
                        victims = self._evict(room_for=entry.size_bytes, keep=key, loading=True)
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
        if not self._entries:
            return []  # every request asks (stale models): an empty cache skips the lock
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

    def _evict(
        self, room_for: int, keep: ModelKey, *, loading: bool = False
    ) -> list[tuple[ModelKey, LoadedModel]]:
        """Takes idle models out, oldest first, until ``room_for`` more bytes fit and, when
        ``loading``, one more model does. Call it holding the lock; unload what it returns
        after letting go."""
        victims = []
        total = self._loaded_bytes()
        count = sum(1 for e in self._entries.values() if e.model is not None) + loading
        most = self.max_models if self.max_models is not None else len(self._entries) + 1
        for key, entry in list(self._entries.items()):
            if total + room_for <= self.budget_bytes and count <= most:
                break
            if key == keep or entry.users or entry.model is None:
                continue
            del self._entries[key]
            total -= entry.size_bytes
            count -= 1
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
