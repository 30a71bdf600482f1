"""Glossary terms through the real Apertium eng-spa: each term comes out exactly as its
target, and the rest of the sentence is what ``apertium eng-spa`` gives with an unknown
word in the term's place (the term is protected as one)."""

from __future__ import annotations

import functools
import re
import subprocess
from collections.abc import AsyncIterator, Sequence
from pathlib import Path

import pytest

from dragoman.engines import Engines, Pair
from dragoman.engines.apertium import ApertiumEngine
from dragoman.formats.markup import Marked, parse_stored, same_codes
from dragoman.glossaries import Entry, Terminology, Terms, keep_terms
from dragoman.glossaries.entries import from_json
from dragoman.models import Job, JobOptions, Pool
from dragoman.runtime import Runtime
from dragoman.settings import Settings

pytestmark = pytest.mark.integration

EN_ES = Pair("en", "es")
TERMS = Terms.of(
    [
        Entry("server", "servidor de aplicaciones"),
        Entry("pull request", "solicitud de extracción"),
        Entry("log in", "iniciar sesión"),
        Entry("Dragoman", "Dragoman"),
        Entry("Apache License", "Apache License"),
    ]
)
# Each sentence with the word Apertium sees in place of each term, and what that word
# becomes: the oracle is the CLI on the sentence with that unknown word in it.
SERVER = "servidor de aplicaciones"
CASES = [
    ("Server restarts are slow.", "Zqxa restarts are slow.", ["Servidor de aplicaciones"]),
    ("The server is down.", "The zqxa is down.", [SERVER]),
    ("Restart the server, then log in.",
     "Restart the zqxa, then zqxb.", [SERVER, "iniciar sesión"]),
    ("Is the server ready?", "Is the zqxa ready?", [SERVER]),
    ("Open a pull request (on GitHub).", "Open a zqxa (on GitHub).", ["solicitud de extracción"]),
    ("Dragoman translates files.", "Zqxa translates files.", ["Dragoman"]),
    ("Read the Apache License.", "Read the Zqxa.", ["Apache License"]),
    ("Servers and server farms: THE SERVER.",
     "Servers and zqxa farms: THE ZQXB.", [SERVER, SERVER.upper()]),
]  # fmt: skip


def apertium(text: str) -> str:
    done = subprocess.run(
        ["apertium", "-u", "eng-spa"], input=text, capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


def oracle(stand_in: str, targets: list[str]) -> str:
    """The CLI's translation of ``stand_in``, each unknown stand-in word (and its ``*``
    mark) replaced by its target."""
    out = apertium(stand_in)
    for i, target in enumerate(targets):
        word = "zqx" + "abcdefgh"[i]
        out, count = re.subn(rf"\*?\b{word}\b", target, out, flags=re.IGNORECASE)
        assert count == 1, (stand_in, out)
    return out


@pytest.fixture
async def engines() -> AsyncIterator[Engines]:
    found = Engines([ApertiumEngine(Settings().apertium_modes_dir, pipelines_per_pair=1)])
    yield found
    await found.close()


async def test_each_term_comes_out_exactly_and_the_rest_is_apertiums(engines: Engines) -> None:
    run = functools.partial(engines.translate, "apertium", EN_ES)
    kept = await keep_terms(run, [(source, TERMS) for source, _, _ in CASES])
    assert kept == [oracle(stand_in, targets) for _, stand_in, targets in CASES]
    assert not any("ZXQ" in text.upper() for text in kept)
    targets = {target.lower() for _, _, found in CASES for target in found}
    assert not any(f"*{target}" in text.lower() for text in kept for target in targets)


async def test_segments_without_a_glossary_share_the_batch_unchanged(engines: Engines) -> None:
    calls: list[list[str]] = []

    async def run(texts: list[str]) -> list[str]:
        calls.append(texts)
        return await engines.translate("apertium", EN_ES, texts)

    plain = "The server is down."
    kept = await keep_terms(run, [(plain, None), (plain, TERMS), (plain, Terms.of([]))])
    assert kept == [
        apertium(plain),
        oracle("The zqxa is down.", ["servidor de aplicaciones"]),
        apertium(plain),
    ]
    assert len(calls) == 1  # one engine call for the batch


async def test_terms_inside_markup_keep_their_codes(engines: Engines) -> None:
    stored = [
        "Restart the <g1>server</g1> now.",
        "<g1>Server</g1> restarts are <g2>slow</g2>.",
        "Open a <g1>pull request</g1> and <x2/>log in.",
    ]
    run = functools.partial(engines.translate_marked, "apertium", EN_ES)
    kept = await keep_terms(run, [(s, TERMS) for s in stored], marked=True)
    for source, out in zip(stored, kept, strict=True):
        assert same_codes(parse_stored(source), parse_stored(out)), out
    assert "<g1>servidor de aplicaciones</g1>" in kept[0]
    assert kept[1].startswith("<g1>Servidor de aplicaciones</g1>")
    assert "<g1>solicitud de extracción</g1>" in kept[2] and "<x2/>iniciar sesión" in kept[2]


class Counted:
    """The real Apertium engine, its calls counted."""

    def __init__(self, engine: ApertiumEngine) -> None:
        self.engine = engine
        self.name, self.gpu_capable = engine.name, engine.gpu_capable
        self.calls = {"plain": 0, "marked": 0}

    def pairs(self) -> frozenset[Pair]:
        return self.engine.pairs()

    def warm_pairs(self) -> frozenset[Pair]:
        return self.engine.warm_pairs()

    async def translate(self, pair: Pair, segments: Sequence[str]) -> list[str]:
        self.calls["plain"] += 1
        return await self.engine.translate(pair, segments)

    async def translate_marked(self, pair: Pair, cores: Sequence[Marked]) -> list[Marked]:
        self.calls["marked"] += 1
        return await self.engine.translate_marked(pair, cores)

    async def close(self) -> None:
        await self.engine.close()


async def test_jobs_with_different_glossaries_share_one_engine_call(tmp_path: Path) -> None:
    counted = Counted(ApertiumEngine(Settings().apertium_modes_dir, pipelines_per_pair=1))
    runtime = Runtime.from_settings(Settings(data_dir=tmp_path))
    await runtime.open(bus=False)
    try:
        terminology = Terminology(runtime, engines=Engines([counted]))
        one, other = [
            await terminology.create(
                tenant=None, name=name, dictionaries=[(EN_ES, from_json([("server", target)]))]
            )
            for name, target in (("a", "servidor central"), ("b", "ordenador"))
        ]

        def job(glossary: str | None, markup: bool = False) -> Job:
            return Job(
                id=f"j{glossary}{markup}", tenant=None, source_lang="en", target_lang="es",
                engine="apertium", pool=Pool.CPU, documents=1, segments_total=1,
                options=JobOptions(markup=markup, glossary=glossary),
            )  # fmt: skip

        text = "The server is down."
        out = await terminology.translate(
            "apertium",
            EN_ES,
            [
                (job(one.id), text),
                (job(other.id), text),
                (job(None), text),
                (job(one.id, markup=True), "The <g1>server</g1> is down."),
            ],
        )
    finally:
        await counted.close()
        await runtime.close(bus=False)
    assert [output.text for output in out] == [
        oracle("The zqxa is down.", ["servidor central"]),
        oracle("The zqxa is down.", ["ordenador"]),
        apertium(text),
        "El <g1>servidor central</g1> es abajo.",
    ]
    # Apertium gives no confidence; the terms were found where a glossary had them.
    assert [(output.confidence, output.terms) for output in out] == [
        (None, True),
        (None, True),
        (None, False),
        (None, True),
    ]
    assert counted.calls == {"plain": 1, "marked": 1}
