"""Cache keys that must miss, and the forms in which a job's segments meet memory entries."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest

from dragoman.models import Pair
from dragoman.reuse.keys import cache_key, cache_keys, digest, memory_key
from dragoman.reuse.matching import fit, job_segment

BASE: dict[str, Any] = {
    "tenant": "t1",
    "engine": "apertium",
    "version": "apertium-1",
    "pair": Pair("en", "es"),
    "glossary": None,
    "markup": False,
    "segment": "Hello.",
}


@pytest.mark.parametrize(
    ("field", "other"),
    [
        ("tenant", "t2"),
        ("tenant", None),
        ("engine", "ctranslate2"),
        ("version", "apertium-2"),
        ("pair", Pair("en", "ca")),
        ("pair", Pair("fr", "es")),
        ("glossary", "g1"),
        ("markup", True),
        ("segment", "Hello. "),
        ("segment", "hello."),
    ],
)
def test_a_key_changes_with_everything_that_decides_the_output(field: str, other: Any) -> None:
    assert cache_key(**BASE) != cache_key(**{**BASE, field: other})


def test_no_tenant_is_the_empty_tenant_and_keys_are_stable() -> None:
    assert cache_key(**{**BASE, "tenant": None}) == cache_key(**{**BASE, "tenant": ""})
    assert cache_key(**BASE) == cache_key(**dict(BASE))
    assert len(cache_key(**BASE)) == 32


def test_a_key_is_the_documented_encoding_so_stored_keys_stay_valid() -> None:
    """Keys live in the store across releases: sha256 over each field's UTF-8 length (8
    bytes, big-endian) and bytes, in order."""
    fields = ("dragoman.cache/1", "", "apertium", "v1", "en", "es", "", "plain", "Ça va ? 😀")
    encoded = b"".join(len(f.encode()).to_bytes(8, "big") + f.encode() for f in fields)
    assert digest(*fields) == hashlib.sha256(encoded).digest()
    assert digest("a") == hashlib.sha256(b"\x00" * 7 + b"\x01a").digest()


@pytest.mark.parametrize(
    "shared", [BASE, {**BASE, "tenant": None, "glossary": "g1", "markup": True}]
)
def test_a_job_keys_its_segments_at_once_as_each_alone(shared: dict[str, Any]) -> None:
    segments = ["Hello.", "", "Ça va ? 😀", "Hello.", "x" * 10_000, "\ud800 lone"]
    fields = {key: value for key, value in shared.items() if key != "segment"}
    assert cache_keys(**fields, segments=segments) == [
        cache_key(**fields, segment=segment) for segment in segments
    ]
    assert cache_keys(**fields, segments=[]) == []


def test_fields_are_length_prefixed_so_separators_cannot_collide() -> None:
    assert digest("a|b") != digest("a", "b")
    assert digest("ab", "c") != digest("a", "bc")
    assert digest("", "x") != digest("x", "")
    assert memory_key("en", "es", "a") != memory_key("en", "esa", "")


def test_a_plain_segment_matches_by_text_with_its_outer_whitespace_back() -> None:
    segment = job_segment("  Hello \n world.  ", markup=False)
    assert segment.form == "Hello world."
    assert fit("  Hello \n world.  ", segment, "Hola mundo.") == "  Hola mundo.  "
    assert fit("x", job_segment("x", markup=False), "<x1/>y") is None


def test_literal_markup_in_a_plain_segment_is_text() -> None:
    assert job_segment("a <g1>b</g1>", markup=False).form == "a &lt;g1&gt;b&lt;/g1&gt;"


def test_a_file_segment_is_renumbered_and_gets_its_own_codes_back() -> None:
    stored = " <g3>Click</g3> here<x7/> "
    segment = job_segment(stored, markup=True)
    assert segment.form == "<g1>Click</g1> here<x2/>"
    assert fit(stored, segment, "<x2/><g1>Clic</g1> aquí") == " <x7/><g3>Clic</g3> aquí "


def test_a_target_whose_codes_do_not_fit_is_refused() -> None:
    stored = "<g3>Click</g3>"
    segment = job_segment(stored, markup=True)
    assert fit(stored, segment, "<g1>Clic</g1><x2/>") is None
    assert fit(stored, segment, "Clic") is None
