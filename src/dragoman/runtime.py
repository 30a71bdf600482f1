"""What every role of a process shares, built once per process and passed as one handle."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TypedDict, Unpack

from dragoman.backoff import until_reached, without_password
from dragoman.bus import Bus, open_bus
from dragoman.clock import Clock, SystemClock
from dragoman.metrics import Metrics
from dragoman.settings import Settings
from dragoman.store import Database, JobStore, Leases, RelayLog, WorkerRegistry, open_store
from dragoman.store.leases import SqlLeases
from dragoman.store.relay_log import SqlRelayLog
from dragoman.store.worker_registry import SqlWorkerRegistry


class Adapters(TypedDict, total=False):
    """Adapters a caller brings instead of those the settings name (tests pass their own)."""

    store: JobStore
    bus: Bus
    clock: Clock


@dataclass(frozen=True, slots=True)
class Runtime:
    """The settings, the store, the bus, the clock and the metrics of one process.

    Every store of the process sits on the store's ``database`` (one engine, one pool, one
    SQLite file): the narrow ones here (``leases``, ``relay_log``, ``registry``) and the
    features' own (``glossaries``, ``usage``, ``webhooks``, ``reuse``), which each feature
    builds from the runtime."""

    settings: Settings
    store: JobStore
    bus: Bus
    clock: Clock = field(default_factory=SystemClock)
    metrics: Metrics = field(default_factory=Metrics)

    @classmethod
    def from_settings(cls, settings: Settings, **given: Unpack[Adapters]) -> Runtime:
        """The adapters named by ``settings``, unless given."""
        return cls(
            settings=settings,
            store=given.get("store") or open_store(settings.resolved_database_url),
            bus=given.get("bus") or open_bus(settings.broker_url, prefix=settings.queue_prefix),
            clock=given.get("clock") or SystemClock(),
        )

    @property
    def database(self) -> Database:
        """The one database of the process, opened and closed here."""
        return self.store.database

    @property
    def leases(self) -> Leases:
        return SqlLeases(self.database)

    @property
    def relay_log(self) -> RelayLog:
        return SqlRelayLog(self.database)

    @property
    def registry(self) -> WorkerRegistry:
        return SqlWorkerRegistry(self.database)

    async def open(self, *, bus: bool = True, retry: bool = False) -> None:
        """The database first (it migrates the schema), then the bus (unless not used). With
        ``retry``, one that does not answer is tried again with backoff, as long as it
        takes (``until_reached``); cancel to give up."""
        if not retry:
            await self.database.open()
            if bus:
                await self.bus.open()
            return
        store = f"the store at {without_password(self.settings.resolved_database_url)}"
        await until_reached(store, self.database.open)
        if bus:
            broker = f"the message bus at {without_password(self.settings.broker_url)}"
            await until_reached(broker, self.bus.open)

    async def close(self, *, bus: bool = True) -> None:
        """The reverse order of ``open``."""
        if bus:
            await self.bus.close()
        await self.database.close()
