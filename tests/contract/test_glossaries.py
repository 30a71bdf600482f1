"""The ``Glossaries`` contract (tenants' term lists), run against SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy.exc import IntegrityError

from dragoman.models import Glossary, JobOptions
from dragoman.store import JobStore
from tests.contract.test_job_store import DOCS, a_job

pytestmark = pytest.mark.timeout(30)

T0 = datetime(2026, 1, 1, tzinfo=UTC)
ENTRIES = [("server", "servidor"), ("Dragoman", "Dragoman"), ("naïve ✓", "ingenuo 🙂")]


def a_glossary(glossary_id: str, tenant: str | None = "acme", *, at: datetime = T0) -> Glossary:
    return Glossary(glossary_id, tenant, f"terms {glossary_id}", "en", "es", len(ENTRIES), at)


async def test_a_glossary_is_stored_with_its_entries_in_order(store: JobStore) -> None:
    glossary = a_glossary("g-1")
    await store.add_glossary(glossary, ENTRIES)
    assert await store.get_glossary("g-1") == glossary
    assert await store.glossary_entries("g-1") == ENTRIES
    assert await store.get_glossary("nope") is None
    assert await store.glossary_entries("nope") == []


async def test_lists_are_per_tenant_and_oldest_first(store: JobStore) -> None:
    await store.add_glossary(a_glossary("b", at=T0 + timedelta(seconds=2)), ENTRIES)
    await store.add_glossary(a_glossary("a", at=T0 + timedelta(seconds=1)), ENTRIES)
    await store.add_glossary(a_glossary("other", tenant="beta"), ENTRIES)
    await store.add_glossary(a_glossary("open", tenant=None), ENTRIES)
    assert [g.id for g in await store.list_glossaries("acme")] == ["a", "b"]
    assert [g.id for g in await store.list_glossaries("beta")] == ["other"]
    assert {g.id for g in await store.list_glossaries(None)} == {"a", "b", "other", "open"}


async def test_a_deleted_glossary_leaves_lists_but_stays_readable_until_purged(
    store: JobStore,
) -> None:
    await store.add_glossary(a_glossary("old"), ENTRIES)
    await store.add_glossary(a_glossary("new"), ENTRIES)
    assert await store.delete_glossary("old", T0 + timedelta(hours=1))
    assert not await store.delete_glossary("old", T0 + timedelta(hours=2))
    assert not await store.delete_glossary("nope", T0)
    assert [g.id for g in await store.list_glossaries("acme")] == ["new"]
    deleted = await store.get_glossary("old")
    assert deleted is not None and deleted.deleted_at == T0 + timedelta(hours=1)
    assert await store.glossary_entries("old") == ENTRIES  # a queued job may still need it
    assert await store.purge_glossaries(T0 + timedelta(minutes=30)) == 0
    assert await store.purge_glossaries(T0 + timedelta(hours=2)) == 1
    assert await store.get_glossary("old") is None
    assert await store.glossary_entries("old") == []
    assert await store.glossary_entries("new") == ENTRIES


async def test_a_deleted_glossary_stays_while_an_unfinished_job_names_it(store: JobStore) -> None:
    await store.add_glossary(a_glossary("kept"), ENTRIES)
    job = replace(a_job("waiting", tenant="acme"), options=JobOptions(glossary="kept"))
    await store.create(job, DOCS)
    assert await store.delete_glossary("kept", T0 + timedelta(hours=1))
    assert await store.purge_glossaries(T0 + timedelta(days=30)) == 0
    assert await store.glossary_entries("kept") == ENTRIES
    assert await store.cancel("waiting", T0 + timedelta(days=2)) is not None
    assert await store.purge_glossaries(T0 + timedelta(days=30)) == 1
    assert await store.glossary_entries("kept") == []


async def test_an_id_is_stored_once(store: JobStore) -> None:
    await store.add_glossary(a_glossary("same"), ENTRIES)
    with pytest.raises(IntegrityError):
        await store.add_glossary(a_glossary("same", tenant="beta"), [("x", "y")])
    assert await store.glossary_entries("same") == ENTRIES
    found = await store.get_glossary("same")
    assert found is not None and found.tenant == "acme"


async def test_concurrent_creations_all_land(store: JobStore) -> None:
    await asyncio.gather(
        *(store.add_glossary(a_glossary(f"g{i}"), ENTRIES[: 1 + i % 3]) for i in range(12))
    )
    found = await store.list_glossaries("acme")
    assert len(found) == 12
    assert [len(await store.glossary_entries(f"g{i}")) for i in range(12)] == [
        1 + i % 3 for i in range(12)
    ]
