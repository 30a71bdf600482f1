"""The ``Glossaries`` contract (tenants' glossaries, a dictionary per pair), run against
SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy.exc import IntegrityError

from dragoman.glossaries import Glossaries
from dragoman.glossaries.store import Edit
from dragoman.models import Dictionary, Glossary, JobOptions, Pair
from dragoman.store import JobStore
from tests.contract.test_job_store import DOCS, a_job

pytestmark = pytest.mark.timeout(30)

T0 = datetime(2026, 1, 1, tzinfo=UTC)
EN_ES, ES_EN, FR_ES = Pair("en", "es"), Pair("es", "en"), Pair("fr", "es")
ENTRIES = [("server", "servidor"), ("Dragoman", "Dragoman"), ("naïve ✓", "ingenuo 🙂")]
BACK = [("servidor", "server")]


def a_glossary(
    glossary_id: str, tenant: str | None = "acme", *, at: datetime = T0, pairs: int = 1
) -> Glossary:
    dictionaries = (Dictionary("en", "es", len(ENTRIES)), Dictionary("es", "en", len(BACK)))
    return Glossary(glossary_id, tenant, f"terms {glossary_id}", dictionaries[:pairs], at)


async def entries_of(glossaries: Glossaries, glossary_id: str, pair: Pair = EN_ES) -> object:
    found = await glossaries.dictionary_entries(glossary_id, pair)
    return None if found is None else found[1]


async def test_a_glossary_is_stored_with_its_entries_in_order(glossaries: Glossaries) -> None:
    glossary = a_glossary("g-1")
    await glossaries.add_glossary(glossary, [ENTRIES])
    assert await glossaries.get_glossary("g-1") == glossary
    assert await glossaries.dictionary_entries("g-1", EN_ES) == (1, ENTRIES)
    assert await glossaries.get_glossary("nope") is None
    assert await glossaries.dictionary_entries("nope", EN_ES) is None
    assert await glossaries.dictionary_entries("g-1", ES_EN) is None


async def test_a_glossary_keeps_a_dictionary_per_pair_in_the_order_given(
    glossaries: Glossaries,
) -> None:
    glossary = a_glossary("multi", pairs=2)
    await glossaries.add_glossary(glossary, [ENTRIES, BACK])
    found = await glossaries.get_glossary("multi")
    assert found == glossary
    assert found is not None and [d.pair for d in found.dictionaries] == [EN_ES, ES_EN]
    assert (found.source_lang, found.target_lang, found.entry_count) == ("en", "es", 3)
    assert await entries_of(glossaries, "multi", ES_EN) == BACK
    assert [g.id for g in await glossaries.list_glossaries("acme")] == ["multi"]
    assert (await glossaries.list_glossaries("acme"))[0].dictionaries == glossary.dictionaries


async def test_each_change_is_a_revision_and_the_dictionary_written_keeps_it(
    glossaries: Glossaries,
) -> None:
    await glossaries.add_glossary(a_glossary("g", pairs=2), [ENTRIES, BACK])
    assert await glossaries.change_glossary("g", 1, Edit(name="renamed"))
    new = [("cat", "gato")]
    assert await glossaries.change_glossary("g", 2, Edit(pair=EN_ES, entries=new))
    assert await glossaries.change_glossary("g", 3, Edit(pair=FR_ES, entries=[("chat", "gato")]))
    found = await glossaries.get_glossary("g")
    assert found is not None and (found.name, found.revision) == ("renamed", 4)
    assert found.dictionaries == (
        Dictionary("en", "es", 1, 3),
        Dictionary("es", "en", 1, 1),
        Dictionary("fr", "es", 1, 4),
    )
    assert await glossaries.dictionary_entries("g", EN_ES) == (3, new)
    assert found.version(EN_ES) == "g:en-es:3" and found.version(Pair("ca", "es")) == "g:ca-es:0"
    assert await glossaries.change_glossary("g", 4, Edit(pair=ES_EN))
    found = await glossaries.get_glossary("g")
    assert found is not None and [d.pair for d in found.dictionaries] == [EN_ES, FR_ES]
    assert await glossaries.dictionary_entries("g", ES_EN) is None


async def test_a_change_from_a_stale_revision_changes_nothing(glossaries: Glossaries) -> None:
    await glossaries.add_glossary(a_glossary("g"), [ENTRIES])
    assert await glossaries.change_glossary("g", 1, Edit(name="first"))
    assert not await glossaries.change_glossary("g", 1, Edit(pair=EN_ES, entries=BACK))
    assert not await glossaries.change_glossary("nope", 1, Edit(name="x"))
    assert await glossaries.delete_glossary("g", T0)
    assert not await glossaries.change_glossary("g", 2, Edit(name="after deletion"))
    found = await glossaries.get_glossary("g")
    assert found is not None and (found.name, found.revision) == ("first", 2)
    assert await entries_of(glossaries, "g") == ENTRIES


async def test_of_concurrent_changes_from_one_revision_one_lands(glossaries: Glossaries) -> None:
    await glossaries.add_glossary(a_glossary("g"), [ENTRIES])
    landed = await asyncio.gather(
        *(
            glossaries.change_glossary("g", 1, Edit(pair=EN_ES, entries=[(f"w{i}", f"p{i}")]))
            for i in range(8)
        )
    )
    assert sorted(landed) == [False] * 7 + [True]
    winner = landed.index(True)
    assert await glossaries.dictionary_entries("g", EN_ES) == (2, [(f"w{winner}", f"p{winner}")])


async def test_lists_are_per_tenant_and_oldest_first(glossaries: Glossaries) -> None:
    await glossaries.add_glossary(a_glossary("b", at=T0 + timedelta(seconds=2)), [ENTRIES])
    await glossaries.add_glossary(a_glossary("a", at=T0 + timedelta(seconds=1)), [ENTRIES])
    await glossaries.add_glossary(a_glossary("other", tenant="beta"), [ENTRIES])
    await glossaries.add_glossary(a_glossary("open", tenant=None), [ENTRIES])
    assert [g.id for g in await glossaries.list_glossaries("acme")] == ["a", "b"]
    assert [g.id for g in await glossaries.list_glossaries("beta")] == ["other"]
    assert {g.id for g in await glossaries.list_glossaries(None)} == {"a", "b", "other", "open"}


async def test_a_deleted_glossary_leaves_lists_but_stays_readable_until_purged(
    glossaries: Glossaries,
) -> None:
    await glossaries.add_glossary(a_glossary("old", pairs=2), [ENTRIES, BACK])
    await glossaries.add_glossary(a_glossary("new"), [ENTRIES])
    assert await glossaries.delete_glossary("old", T0 + timedelta(hours=1))
    assert not await glossaries.delete_glossary("old", T0 + timedelta(hours=2))
    assert not await glossaries.delete_glossary("nope", T0)
    assert [g.id for g in await glossaries.list_glossaries("acme")] == ["new"]
    deleted = await glossaries.get_glossary("old")
    assert deleted is not None and deleted.deleted_at == T0 + timedelta(hours=1)
    assert await entries_of(glossaries, "old") == ENTRIES  # a queued job may still need it
    assert await glossaries.purge_glossaries(T0 + timedelta(minutes=30)) == 0
    assert await glossaries.purge_glossaries(T0 + timedelta(hours=2)) == 1
    assert await glossaries.get_glossary("old") is None
    assert await entries_of(glossaries, "old") is None
    assert await entries_of(glossaries, "old", ES_EN) is None
    assert await entries_of(glossaries, "new") == ENTRIES


async def test_a_deleted_glossary_stays_while_an_unfinished_job_names_it(
    store: JobStore, glossaries: Glossaries
) -> None:
    await glossaries.add_glossary(a_glossary("kept"), [ENTRIES])
    job = replace(a_job("waiting", tenant="acme"), options=JobOptions(glossary="kept"))
    await store.create(job, DOCS)
    assert await glossaries.delete_glossary("kept", T0 + timedelta(hours=1))
    assert await glossaries.purge_glossaries(T0 + timedelta(days=30)) == 0
    assert await entries_of(glossaries, "kept") == ENTRIES
    assert await store.cancel("waiting", T0 + timedelta(days=2)) is not None
    assert await glossaries.purge_glossaries(T0 + timedelta(days=30)) == 1
    assert await entries_of(glossaries, "kept") is None


async def test_an_id_is_stored_once(glossaries: Glossaries) -> None:
    await glossaries.add_glossary(a_glossary("same"), [ENTRIES])
    with pytest.raises(IntegrityError):
        await glossaries.add_glossary(a_glossary("same", tenant="beta"), [[("x", "y")]])
    assert await entries_of(glossaries, "same") == ENTRIES
    found = await glossaries.get_glossary("same")
    assert found is not None and found.tenant == "acme"


async def test_concurrent_creations_all_land(glossaries: Glossaries) -> None:
    await asyncio.gather(
        *(glossaries.add_glossary(a_glossary(f"g{i}"), [ENTRIES[: 1 + i % 3]]) for i in range(12))
    )
    found = await glossaries.list_glossaries("acme")
    assert len(found) == 12
    lengths = [await glossaries.dictionary_entries(f"g{i}", EN_ES) for i in range(12)]
    assert [len(f[1]) if f else 0 for f in lengths] == [1 + i % 3 for i in range(12)]
