"""What the neural engines share: the catalog on disk, the host of their models, one thread.

On disk, each model is a directory ``<models_dir>/<source>-<target>/<engine>/``, for example
``models/en-fr/ctranslate2/``. Listing reads directory names only, so the API process lists
pairs without loading anything. Every request asks for the list, so it is kept, and read
again as soon as the models folder or one of its pair folders changes (a ``stat`` of each
per call, where a scan parses every name): a model installed while the service runs is
served at once, a removed one is refused and unloaded, an upgraded one (a new folder at the
same path) replaces the loaded one. Hidden folders (``.staging``...) are the installer's
working space and are never listed.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import os
import time
from collections.abc import Awaitable, Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Generic, TypeVar

from dragoman import __version__
from dragoman.engines.model_cache import M, ModelCache, ModelKey, Revision
from dragoman.engines.scores import Hypothesis, Scored
from dragoman.errors import InvalidRequest, UnsupportedPair
from dragoman.languages import canonical
from dragoman.models import Pair

log = logging.getLogger(__name__)
T = TypeVar("T")

VERSION_REFRESH_S = 60.0
# A scan this close to the folder's last change is not kept: two changes within one tick of
# the file system's clock leave the folder with one time, the second change unseen.
_SETTLED_S = 0.1
_SAMPLE_BYTES = 1 << 20


def model_fingerprint(model_dir: Path) -> str:
    """The sha256 of a model directory's files: each one's relative path, size, and its
    first and last MiB. Weights change throughout when a model is retrained or converted
    again, so this tells models apart while reading a few MiB of a multi-GB model; copies
    of one model on two hosts agree."""
    digest = hashlib.sha256()
    for path in sorted(p for p in model_dir.rglob("*") if p.is_file()):
        size = path.stat().st_size
        digest.update(f"{path.relative_to(model_dir)}\0{size}\0".encode("utf-8", "replace"))
        with path.open("rb") as f:
            digest.update(f.read(_SAMPLE_BYTES))
            if size > 2 * _SAMPLE_BYTES:
                f.seek(size - _SAMPLE_BYTES)
                digest.update(f.read(_SAMPLE_BYTES))
    return digest.hexdigest()


class ModelCatalog:
    """The model directories of one engine, kept while their folders do not change."""

    def __init__(
        self, models_dir: Path, engine: str, *, clock: Callable[[], float] = time.time
    ) -> None:
        self.models_dir = models_dir
        self._engine = engine
        self._clock = clock
        self._warned: set[str] = set()
        # What the last scan found, and the folders it read with their mtime_ns.
        self._found: dict[Pair, Path] = {}
        self._pairs: frozenset[Pair] = frozenset()
        self._stamps: list[tuple[str, int]] = []

    def models(self) -> dict[Pair, Path]:
        """Each pair with its model directory; folders not named like ``en-fr`` are skipped."""
        self._refresh()
        return dict(self._found)

    def pairs(self) -> frozenset[Pair]:
        """The pairs of ``models()``: the same set, as long as no folder changed."""
        self._refresh()
        return self._pairs

    def _refresh(self) -> None:
        if not self._unchanged():
            self._found, self._stamps = self._scan()
            if self._pairs != self._found.keys():
                self._pairs = frozenset(self._found)

    def _unchanged(self) -> bool:
        if not self._stamps:
            return False
        try:
            for path, stamp in self._stamps:
                if os.stat(path).st_mtime_ns != stamp:
                    return False
        except FileNotFoundError:
            return self._stamps == [(str(self.models_dir), _ABSENT)]
        except OSError:
            return False
        return True

    def _scan(self) -> tuple[dict[Pair, Path], list[tuple[str, int]]]:
        found: dict[Pair, Path] = {}
        try:
            stamps = [(str(self.models_dir), _mtime_ns(str(self.models_dir)))]
            if stamps[0][1] == _ABSENT:
                return found, stamps  # no folder yet: kept until one appears
            folders = sorted(self.models_dir.iterdir())
        except OSError:
            return found, []
        for folder in folders:
            if folder.name.startswith("."):
                continue
            try:
                stamps.append((str(folder), folder.stat().st_mtime_ns))
            except OSError:
                return found, []  # changing under the scan: read again next time
            model_dir = folder / self._engine
            if model_dir.is_dir() and (pair := self._pair(folder)) is not None:
                found.setdefault(pair, model_dir)
        # Two changes within one tick of the file system's clock leave a folder with one
        # time: a scan made that close to a change is not kept.
        newest = max(stamp for _, stamp in stamps) / 1e9
        return found, stamps if self._clock() - newest > _SETTLED_S else []

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


_ABSENT = -1


def _mtime_ns(path: str) -> int:
    """A folder's modification time, or ``_ABSENT`` where there is none."""
    try:
        return os.stat(path).st_mtime_ns
    except FileNotFoundError:
        return _ABSENT


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
        self._versions: dict[Path, tuple[float, Revision | None, str]] = {}

    def pairs(self) -> frozenset[Pair]:
        found = self.catalog.pairs()
        self._forget_stale()
        return found

    def version(self, pair: Pair) -> str:
        """The fingerprint of the pair's model directory, read again at most every
        ``VERSION_REFRESH_S`` and at once when the folder is another (an upgrade)."""
        key = self._key(pair)
        now = time.monotonic()
        known = self._versions.get(key.path)
        if known is None or known[1] != key.revision or now - known[0] >= VERSION_REFRESH_S:
            known = (now, key.revision, model_fingerprint(key.path))
            self._versions[key.path] = known
        return known[2]

    def warm_pairs(self) -> frozenset[Pair]:
        """The pairs loaded now. A worker's heartbeat asks for them, so an idle worker
        frees the memory of a removed model too."""
        self._forget_stale()
        return frozenset(
            key.pair for key in self._cache.loaded() if self._owns(key) and not _stale(key)
        )

    def _forget_stale(self) -> None:
        """Unloads this engine's models whose folder was removed or replaced."""
        loaded = self._cache.loaded()
        if loaded and any(self._owns(key) and _stale(key) for key in loaded):
            self._cache.unload(lambda key: self._owns(key) and _stale(key))

    async def translate(
        self, pair: Pair, segments: Sequence[str], run: Callable[[M, list[str]], list[str]]
    ) -> list[str]:
        """``run`` on the pair's model, in this engine's thread; blank segments give ``""``."""
        return await self.run(pair, segments, run, blank="")

    async def run(
        self,
        pair: Pair,
        segments: Sequence[str],
        run: Callable[[M, list[str]], list[T]],
        *,
        blank: T,
    ) -> list[T]:
        """``run`` on the pair's model, in this engine's thread; blank segments give
        ``blank``."""
        key = self._key(pair)
        self._forget_stale()

        def work(texts: list[str]) -> list[T]:
            with self._cache.use(key, lambda: self._load(key.path)) as model:
                return run(model, texts)

        if self._thread is None:
            self._thread = ThreadPoolExecutor(1, thread_name_prefix=self._engine)
        thread = self._thread
        loop = asyncio.get_running_loop()
        return await translate_nonblank(
            segments, lambda texts: loop.run_in_executor(thread, work, texts), blank
        )

    async def close(self) -> None:
        """Waits for the batch in progress, then unloads this engine's models. Idempotent;
        a later ``translate`` starts a new thread and loads again."""
        thread, self._thread = self._thread, None
        if thread is not None:
            await asyncio.to_thread(thread.shutdown, wait=True)
        self._cache.unload(self._owns)

    def _key(self, pair: Pair) -> ModelKey:
        path = self.catalog.path(pair)
        revision = _revision(path)
        if revision is None:  # taken out since it was listed
            raise UnsupportedPair(f"{self._engine} has no model for {pair} any more")
        return ModelKey(self._engine, self._device, pair, path, revision)

    def _owns(self, key: ModelKey) -> bool:
        return (
            key.engine == self._engine
            and key.device == self._device
            and key.path.parent.parent == self.catalog.models_dir
        )


def _revision(path: Path) -> Revision | None:
    """The folder's identity: its inode and its last change (a rename is one); ``None`` once
    it is gone. A folder deleted and copied again by hand may get its inode back (ext4 hands
    a freed one out at once), never its change time."""
    try:
        found = path.stat()
    except OSError:
        return None
    return found.st_ino, found.st_ctime_ns


def _stale(key: ModelKey) -> bool:
    """Whether ``key``'s folder is gone or is another folder now."""
    return key.revision is not None and _revision(key.path) != key.revision


class HostedEngine(Generic[M]):
    """The ``Engine`` methods of a neural engine, delegated to its ``ModelHost``; a subclass
    sets ``_host`` and writes ``_run_scored``, one batch through one loaded model."""

    _host: ModelHost[M]

    def pairs(self) -> frozenset[Pair]:
        return self._host.pairs()

    def warm_pairs(self) -> frozenset[Pair]:
        return self._host.warm_pairs()

    def model_dir(self, pair: Pair) -> Path:
        """The folder of the pair's model, or ``UnsupportedPair``."""
        return self._host.catalog.path(pair)

    def version(self, pair: Pair) -> str:
        """The model's fingerprint and the output limit; not the precision (int8 on CPUs,
        float16 on GPUs): one model's outputs share the cache, the first one stored wins."""
        limit = getattr(self, "_max_output_tokens", 0)
        inputs = getattr(self, "_max_input_tokens", 0)  # past it, segments are split
        return f"{__version__}:{self._host.version(pair)[:16]}:max{limit}:in{inputs}"

    async def translate(self, pair: Pair, segments: Sequence[str]) -> list[str]:
        return [scored.text for scored in await self.translate_scored(pair, segments)]

    async def translate_scored(self, pair: Pair, segments: Sequence[str]) -> list[Scored]:
        """Each translation with its confidence: ``translate`` is this, so scores never
        change a translation."""
        outputs = await self._host.run(pair, segments, self._runner(pair), blank=Hypothesis(""))
        return [output.scored() for output in outputs]

    def _runner(self, pair: Pair) -> Callable[[M, list[str]], list[Hypothesis]]:
        """What runs one batch of ``pair``'s segments through its loaded model."""
        return self._run_scored

    def _run_scored(self, model: M, texts: list[str]) -> list[Hypothesis]:
        raise NotImplementedError

    async def close(self) -> None:
        await self._host.close()


async def translate_nonblank(
    segments: Sequence[str], translate: Callable[[list[str]], Awaitable[list[T]]], blank: T
) -> list[T]:
    """``translate`` applied to the segments with text; blank ones come back as ``blank``."""
    todo = [i for i, segment in enumerate(segments) if segment.strip()]
    outputs = [blank] * len(segments)
    if todo:
        texts = await translate([segments[i] for i in todo])
        for i, text in zip(todo, texts, strict=True):
            outputs[i] = text
    return outputs
