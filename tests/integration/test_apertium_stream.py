"""Our stream format equals what apertium-destxt and apertium-retxt make, for any text."""

from __future__ import annotations

import subprocess

from hypothesis import given, settings
from hypothesis import strategies as st

from dragoman.engines.apertium.stream import deformat, reformat

# Letters, Apertium's stream-format characters, blanks and a little Unicode.
ALPHABET = "ab .,?!^$[]{}\\/@*#<>~\t\n\r'\"-ñ漢🙂"
texts = st.text(alphabet=ALPHABET, max_size=40)


def run(program: str, text: str) -> str:
    result = subprocess.run([program], input=text.encode(), capture_output=True, timeout=10)
    return result.stdout.decode()


@settings(max_examples=150, deadline=None)
@given(texts)
def test_deformat_matches_apertium_destxt(text: str) -> None:
    assert deformat(text) == run("apertium-destxt", text)


@settings(max_examples=150, deadline=None)
@given(texts)
def test_reformat_matches_apertium_retxt(text: str) -> None:
    stream = deformat(text)
    assert reformat(stream) == run("apertium-retxt", stream)


@given(st.text(max_size=200))
def test_reformat_undoes_deformat(text: str) -> None:
    assert reformat(deformat(text)) == text


def test_known_examples() -> None:
    assert deformat("a [b] ^c$") == "a \\[b\\] \\^c\\$.[]"
    assert deformat("one\n\ntwo  three\n") == "one.[][\n\n]two[  ]three.[][\n]"
    assert reformat("Hola[ \\] ]mundo\\@.[]") == "Hola ] mundo@"
