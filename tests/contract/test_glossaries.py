"""The ``Glossaries`` contract (tenants' term lists), run against SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy.exc import IntegrityError

from dragoman.glossaries import Glossaries
from dragoman.models import Glossary, JobOptions
from dragoman.store import JobStore
from tests.contract.test_job_store import DOCS, a_job

pytestmark = pytest.mark.timeout(30)

T0 = datetime(2026, 1, 1, tzinfo=UTC)
ENTRIES = [("server", "servidor"), ("Dragoman", "Dragoman"), ("naïve ✓", "ingenuo 🙂")]


def a_glossary(glossary_id: str, tenant: str | None = "acme", *, at: datetime = T0) -> Glossary:
    return Glossary(glossary_id, tenant, f"terms {glossary_id}", "en", "es", len(ENTRIES), at)


async def test_a_glossary_is_stored_with_its_entries_in_order(glossaries: Glossaries) -> None:
    glossary = a_glossary("g-1")
    await glossaries.add_glossary(glossary, ENTRIES)
    assert await glossaries.get_glossary("g-1") == glossary
    assert await glossaries.glossary_entries("g-1") == ENTRIES
    assert await glossaries.get_glossary("nope") is None
    assert await glossaries.glossary_entries("nope") == []


async def test_lists_are_per_tenant_and_oldest_first(glossaries: Glossaries) -> None:
    await glossaries.add_glossary(a_glossary("b", at=T0 + timedelta(seconds=2)), ENTRIES)
    await glossaries.add_glossary(a_glossary("a", at=T0 + timedelta(seconds=1)), ENTRIES)
    await glossaries.add_glossary(a_glossary("other", tenant="beta"), ENTRIES)
    await glossaries.add_glossary(a_glossary("open", tenant=None), ENTRIES)
    assert [g.id for g in await glossaries.list_glossaries("acme")] == ["a", "b"]
    assert [g.id for g in await glossaries.list_glossaries("beta")] == ["other"]
    assert {g.id for g in await glossaries.list_glossaries(None)} == {"a", "b", "other", "open"}


async def test_a_deleted_glossary_leaves_lists_but_stays_readable_until_purged(
    glossaries: Glossaries,
) -> None:
    await glossaries.add_glossary(a_glossary("old"), ENTRIES)
    await glossaries.add_glossary(a_glossary("new"), ENTRIES)
    assert await glossaries.delete_glossary("old", T0 + timedelta(hours=1))
    assert not await glossaries.delete_glossary("old", T0 + timedelta(hours=2))
    assert not await glossaries.delete_glossary("nope", T0)
    assert [g.id for g in await glossaries.list_glossaries("acme")] == ["new"]
    deleted = await glossaries.get_glossary("old")
    assert deleted is not None and deleted.deleted_at == T0 + timedelta(hours=1)
    assert await glossaries.glossary_entries("old") == ENTRIES  # a queued job may still need it
    assert await glossaries.purge_glossaries(T0 + timedelta(minutes=30)) == 0
    assert await glossaries.purge_glossaries(T0 + timedelta(hours=2)) == 1
    assert await glossaries.get_glossary("old") is None
    assert await glossaries.glossary_entries("old") == []
    assert await glossaries.glossary_entries("new") == ENTRIES


async def test_a_deleted_glossary_stays_while_an_unfinished_job_names_it(
    store: JobStore, glossaries: Glossaries
) -> None:
    await glossaries.add_glossary(a_glossary("kept"), ENTRIES)
    job = replace(a_job("waiting", tenant="acme"), options=JobOptions(glossary="kept"))
    await store.create(job, DOCS)
    assert await glossaries.delete_glossary("kept", T0 + timedelta(hours=1))
    assert await glossaries.purge_glossaries(T0 + timedelta(days=30)) == 0
    assert await glossaries.glossary_entries("kept") == ENTRIES
    assert await store.cancel("waiting", T0 + timedelta(days=2)) is not None
    assert await glossaries.purge_glossaries(T0 + timedelta(days=30)) == 1
    assert await glossaries.glossary_entries("kept") == []


async def test_an_id_is_stored_once(glossaries: Glossaries) -> None:
    await glossaries.add_glossary(a_glossary("same"), ENTRIES)
    with pytest.raises(IntegrityError):
        await glossaries.add_glossary(a_glossary("same", tenant="beta"), [("x", "y")])
    assert await glossaries.glossary_entries("same") == ENTRIES
    found = await glossaries.get_glossary("same")
    assert found is not None and found.tenant == "acme"


async def test_concurrent_creations_all_land(glossaries: Glossaries) -> None:
    await asyncio.gather(
        *(glossaries.add_glossary(a_glossary(f"g{i}"), ENTRIES[: 1 + i % 3]) for i in range(12))
    )
    found = await glossaries.list_glossaries("acme")
    assert len(found) == 12
    assert [len(await glossaries.glossary_entries(f"g{i}")) for i in range(12)] == [
        1 + i % 3 for i in range(12)
    ]
