"""Every reader fuzzed: random bytes and damaged samples of each format give a document or
a client error (4xx), never another exception (a 5xx), a hang or a blow-up of memory; and
the valid samples come back equivalent through extract → identity → rebuild.

Bounded so that the whole module runs in well under a minute: a few dozen examples per
format and strategy, a deadline per example, no example database written to the tree.
"""

from __future__ import annotations

import contextlib
import functools
import io
import os
import zipfile
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

import polib
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lxml import etree

from dragoman.errors import ClientError
from dragoman.formats import FORMATS, Format
from dragoman.formats.tmx import read_tmx
from tests.formats import test_docx, test_odt, test_pptx, test_xlsx
from tests.formats.helpers import letters, run, units

DATA = Path(__file__).parent.parent / "data" / "formats"

TEXT_SAMPLES = {
    "xliff": "xliff/v12.xlf",
    "po": "po/app.po",
    "html": "html/page.html",
    "markdown": "markdown/readme.md",
    "srt": "srt/movie.srt",
    "json": "json/i18next.json",
    "text": "text/notes.txt",
    "android": "android/strings.xml",
    "yaml": "yaml/messages.yaml",
}
ZIP_SAMPLES: dict[str, Callable[[], bytes]] = {
    "docx": test_docx.sample,
    "pptx": test_pptx.sample,
    "odt": test_odt.sample,
    "xlsx": test_xlsx.package,
}
TMX = b"""<?xml version="1.0" encoding="UTF-8"?>
<tmx version="1.4"><header srclang="en" datatype="plaintext" segtype="sentence"
 adminlang="en" creationtool="t" creationtoolversion="1" o-tmf="t"/>
<body><tu><tuv xml:lang="en"><seg>Fish &amp; <bpt i="1">&lt;b&gt;</bpt>chips<ept i="1">
&lt;/b&gt;</ept></seg></tuv><tuv xml:lang="es"><seg>Pescado y patatas</seg></tuv></tu>
</body></tmx>
"""

# What damages a file where it hurts: markup, escapes, quotes, line structure, controls.
TOKENS = [
    b"<",
    b">",
    b"&",
    b"&lt;b&gt;",
    b"&amp;",
    b"&#0;",
    b"&#x110000;",
    b"&bogus;",
    b"<![CDATA[",
    b"]]>",
    b"<!--",
    b"-->",
    b"</",
    b'"',
    b"'",
    b"\\",
    b'\\"',
    b"\\u00e9",
    b"\\ud800",
    b"`",
    b"```",
    b"*",
    b"[",
    b"](",
    b"\n",
    b"\r\n",
    b"\t",
    b"\x00",
    b"\xff",
    b"\xc3",
    b"-->",
    b"99:99:99,999",
    b"99999999999999999999:00:00,000",
    b"msgid",
    b'msgstr ""',
    b"{",
    b"}",
    b": ",
    b"- ",
    b"!!python/object",
    b"&a",
    b"*a",
    b"%s",
    b"{name}",
]

FUZZ = settings(
    max_examples=int(os.environ.get("FUZZ_EXAMPLES", "80")),
    deadline=timedelta(seconds=5),
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@functools.cache
def sample(name: str) -> bytes:
    if name in ZIP_SAMPLES:
        return ZIP_SAMPLES[name]()
    return (DATA / TEXT_SAMPLES[name]).read_bytes()


@st.composite
def mutations(draw: st.DrawFn, data: bytes) -> bytes:
    """``data`` with a few pieces deleted, replaced, duplicated or inserted."""
    out = bytearray(data)
    for _ in range(draw(st.integers(1, 4))):
        start = draw(st.integers(0, len(out)))
        end = draw(st.integers(start, min(len(out), start + 48)))
        payload = draw(st.sampled_from(TOKENS) | st.binary(max_size=8))
        action = draw(st.sampled_from(["delete", "replace", "insert", "duplicate"]))
        if action == "delete":
            del out[start:end]
        elif action == "replace":
            out[start:end] = payload
        elif action == "insert":
            out[start:start] = payload
        else:
            out[start:start] = out[start:end] * draw(st.integers(1, 3))
    return bytes(out)


def outcome(fmt: Format, data: bytes) -> None:
    """Read, split, translate and rebuild ``data``: a client error is a fine answer; any
    other exception fails the test."""
    try:
        out = run(fmt, data, letters)
    except ClientError:
        return
    try:
        units(fmt, out)
    except ClientError as exc:  # what dragoman wrote must read back
        pytest.fail(f"the rebuilt file is refused: {exc.message}")


def zipped(data: bytes, name: str, content: bytes) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as source, zipfile.ZipFile(out, "w") as target:
        for info in source.infolist():
            target.writestr(info, content if info.filename == name else source.read(info))
    return out.getvalue()


ALL = [*TEXT_SAMPLES, *ZIP_SAMPLES]


@pytest.mark.parametrize("name", ALL)
@FUZZ
@given(data=st.binary(max_size=512))
def test_random_bytes_are_a_document_or_a_client_error(name: str, data: bytes) -> None:
    outcome(FORMATS[name], data)


@pytest.mark.parametrize("name", ALL)
@FUZZ
@given(st.data())
def test_damaged_samples_are_a_document_or_a_client_error(name: str, data: st.DataObject) -> None:
    outcome(FORMATS[name], data.draw(mutations(sample(name))))


def _xml_members(data: bytes) -> list[str]:
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        return [n for n in z.namelist() if n.endswith(".xml")]


@pytest.mark.parametrize("name", list(ZIP_SAMPLES))
@FUZZ
@given(st.data())
def test_damaged_parts_of_packages_are_a_document_or_a_client_error(
    name: str, data: st.DataObject
) -> None:
    original = sample(name)
    member = data.draw(st.sampled_from(_xml_members(original)))
    with zipfile.ZipFile(io.BytesIO(original)) as z:
        content = z.read(member)
    outcome(FORMATS[name], zipped(original, member, data.draw(mutations(content))))


@pytest.mark.parametrize("name", list(ZIP_SAMPLES))
@FUZZ
@given(st.data())
def test_damaged_zip_structure_is_a_client_error(name: str, data: st.DataObject) -> None:
    outcome(FORMATS[name], data.draw(mutations(sample(name))))


@FUZZ
@given(st.one_of(st.binary(max_size=512), mutations(TMX)))
def test_translation_memories_are_read_or_refused(data: bytes) -> None:
    with contextlib.suppress(ClientError):
        read_tmx(data, "memory.tmx")


def _filled(name: str, data: bytes) -> list[tuple[str, str]]:
    """``(source, target)`` of each entry of a bilingual file, read by lxml or polib."""
    if name == "po":
        return [(e.msgid, e.msgstr) for e in polib.pofile(data.decode()) if e.msgid]
    ns = {"x": "urn:oasis:names:tc:xliff:document:1.2"}
    return [
        (
            "".join(u.xpath("x:source//text()", namespaces=ns)),
            "".join(u.xpath("x:target//text()", namespaces=ns)),
        )
        for u in etree.fromstring(data).iterfind(".//x:trans-unit[x:target]", ns)
    ]


@pytest.mark.parametrize("segmentation", [True, False])
@pytest.mark.parametrize("name", ALL)
def test_identity_round_trip_gives_back_an_equivalent_file(name: str, segmentation: bool) -> None:
    fmt = FORMATS[name]
    before = units(fmt, sample(name))
    assert before, "a sample with nothing to translate tests nothing"
    out = run(fmt, sample(name), segmentation=segmentation)
    if name not in ("po", "xliff"):
        assert units(fmt, out) == before
        return
    # Bilingual files come back with every target filled: with its source's text.
    assert units(fmt, out) == []
    before_filled = [pair for pair in _filled(name, sample(name)) if pair[1]]
    filled = [pair for pair in _filled(name, out) if pair[1]]
    assert len(filled) > len(before_filled)
    assert [pair for pair in filled if pair[0] != pair[1]] == [
        pair for pair in before_filled if pair[0] != pair[1]
    ]
