from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import polib
import pytest

from dragoman.errors import InvalidFile
from dragoman.formats import by_name
from dragoman.formats.markup import PLACEHOLDER, Marked
from dragoman.formats.po import FORMAT, PYTHON_FORMAT
from tests.formats.helpers import pseudo, pseudo_text, run, units

DATA = Path(__file__).parent.parent / "data" / "formats" / "po"
APP = (DATA / "app.po").read_bytes()
POT = (DATA / "messages.pot").read_bytes()
TRANSLATED = (DATA / "translated.po").read_bytes()
PLACEHOLDERS = rf"{PYTHON_FORMAT}|{PLACEHOLDER.pattern}"


def _catalog(data: bytes) -> Any:
    return polib.pofile(data.decode("utf-8"))


def _kept_fields(entry: Any) -> tuple[Any, ...]:
    flags = [f for f in entry.flags if f != "fuzzy"]
    return (
        entry.msgid,
        entry.msgid_plural,
        entry.msgctxt,
        entry.comment,
        entry.tcomment,
        entry.occurrences,
        flags,
        entry.previous_msgid,
        entry.obsolete,
    )


def _untranslated(entry: Any) -> bool:
    return not entry.obsolete and not entry.msgstr and not any(entry.msgstr_plural.values())


def test_registered() -> None:
    assert by_name("po") is FORMAT
    assert FORMAT.extensions == (".po", ".pot")
    assert FORMAT.media_type == "text/x-gettext-translation"


def test_units_are_the_untranslated_entries_plural_twice() -> None:
    assert [u.stored() for u in units(FORMAT, APP)] == [
        "Hello, <x1/>! Welcome back.",
        "One file deleted.",
        "<x1/> files deleted.",
        "Open",
        "Copied <x1/> of <x2/> bytes to <x3/>.",
    ]
    assert units(FORMAT, POT)[0].stored() == "Usage: <x1/> [OPTION]... FILE\n"


@pytest.mark.parametrize("segmentation", [True, False])
@pytest.mark.parametrize("data", [APP, POT], ids=["po", "pot"])
def test_identity_round_trip_keeps_every_entry(data: bytes, segmentation: bool) -> None:
    before, after = _catalog(data), _catalog(run(FORMAT, data, segmentation=segmentation))
    assert len(after) == len(before)
    assert len(after.obsolete_entries()) == len(before.obsolete_entries())
    for old, new in zip(before, after, strict=True):
        if not _untranslated(old):
            assert (new.msgstr, new.msgstr_plural, new.flags) == (
                old.msgstr,
                old.msgstr_plural,
                old.flags,
            )
            assert _kept_fields(new) == _kept_fields(old)
            continue
        assert new.flags[0] == "fuzzy"
        assert _kept_fields(new) == _kept_fields(old)
        if old.msgid_plural:
            assert new.msgstr_plural == {0: old.msgid, 1: old.msgid_plural}
        else:
            assert new.msgstr == old.msgid
    assert before.header == after.header
    for key, value in before.metadata.items():
        if key not in ("Language", "Content-Type"):
            assert after.metadata[key] == value


@pytest.mark.parametrize("segmentation", [True, False])
def test_a_translated_catalog_comes_back_unchanged(segmentation: bool) -> None:
    assert units(FORMAT, TRANSLATED) == []
    assert run(FORMAT, TRANSLATED, segmentation=segmentation) == TRANSLATED


def _pseudo_of(text: str) -> str:
    pieces = re.split(f"({PLACEHOLDERS})", text)
    return "".join(p if i % 2 else pseudo_text(p) for i, p in enumerate(pieces))


def _written(before: Any, after: Any) -> list[tuple[str, str]]:
    """(source, translation) of each unit, in order."""
    pairs = []
    for old, new in zip(before, after, strict=True):
        if not _untranslated(old):
            continue
        if old.msgid_plural:
            pairs += [(old.msgid, new.msgstr_plural[0]), (old.msgid_plural, new.msgstr_plural[1])]
        else:
            pairs.append((old.msgid, new.msgstr))
    return pairs


@pytest.mark.parametrize("data", [APP, POT], ids=["po", "pot"])
def test_pseudo_translation_changes_every_unit_and_keeps_placeholders(data: bytes) -> None:
    before = _catalog(data)
    after = _catalog(run(FORMAT, data, pseudo, segmentation=False))
    pairs = _written(before, after)
    assert len(pairs) == len(units(FORMAT, data))
    for source, translation in pairs:
        assert translation != source
        assert translation == _pseudo_of(source)
    for old, new in zip(before, after, strict=True):
        assert _kept_fields(new) == _kept_fields(old)


def test_what_translators_expect_is_kept() -> None:
    after = _catalog(run(FORMAT, APP, pseudo, target_lang="es-MX"))
    assert after[0].msgstr.startswith("Ħḗŀŀǿ, %(name)s! ")
    assert after[1].msgstr_plural[1].startswith("%(count)d ")
    assert after.metadata["Language"] == "es-MX"
    assert after.metadata["Plural-Forms"] == "nplurals=2; plural=(n != 1);"
    assert after.header == "Spanish translations for the app.\nCopyright (C) 2024"
    hello, plural, menu, verb, close, copied = (e for e in after if not e.obsolete)
    assert hello.comment == "Greeting on the home page."
    assert hello.occurrences == [("src/home.py", "12")]
    assert hello.flags == ["fuzzy"]
    assert plural.occurrences == [("src/files.py", "40"), ("src/files.py", "52")]
    assert plural.flags == ["fuzzy", "python-format"]
    assert plural.msgstr_plural[0] == pseudo_text("One file deleted.")
    assert (menu.msgctxt, menu.tcomment, menu.msgstr) == ("menu", "A translator's note.", "Ǿƥḗƞ")
    assert (verb.msgctxt, verb.msgstr, verb.flags) == ("verb", "Abrir", [])
    assert (close.msgstr, close.flags) == ("Cerrar la ventana", ["fuzzy"])
    assert copied.flags == ["fuzzy", "c-format"]
    assert copied.msgstr.count("%d") == copied.msgstr.count("%s") == 1
    assert "{target}" in copied.msgstr
    assert [e.msgid for e in after.obsolete_entries()] == ["Old string"]


def test_plural_forms_fill_every_index_of_the_header() -> None:
    data = APP.replace(b"nplurals=2; plural=(n != 1);", b"nplurals=3; plural=(n%10==1 ? 0 : 1);")
    plural = _catalog(run(FORMAT, data, pseudo))[1]
    assert plural.msgstr_plural == {
        0: pseudo_text("One file deleted."),
        1: _pseudo_of("%(count)d files deleted."),
        2: _pseudo_of("%(count)d files deleted."),
    }


def test_a_pot_comes_back_as_a_po() -> None:
    out = run(FORMAT, POT, pseudo, target_lang="fr")
    after = _catalog(out)
    assert after.metadata["Language"] == "fr"
    assert after.metadata["Content-Type"] == "text/plain; charset=UTF-8"
    assert after.metadata["POT-Creation-Date"] == "2024-05-01 12:00+0000"
    usage, long, errors = after
    assert usage.msgstr.endswith("\n") and usage.msgstr.count("%s") == 1
    assert long.msgstr == _pseudo_of(long.msgid)
    assert errors.msgstr_plural[0] == _pseudo_of("%d error")
    assert polib.pofile(out.decode("utf-8")).percent_translated() == 0  # all fuzzy


def test_a_catalog_without_header_gets_one() -> None:
    after = _catalog(run(FORMAT, b'msgid "Hello"\nmsgstr ""\n', pseudo, target_lang="it"))
    assert after.metadata["Language"] == "it"
    assert [(e.msgid, e.msgstr, e.flags) for e in after] == [("Hello", "Ħḗŀŀǿ", ["fuzzy"])]


def test_partial_translates_the_first_unit_only() -> None:
    after = _catalog(run(FORMAT, APP, pseudo, partial=1, segmentation=False))
    assert after[0].msgstr == _pseudo_of(after[0].msgid) and after[0].flags == ["fuzzy"]
    assert after[1].msgstr_plural == {0: "", 1: ""} and "fuzzy" not in after[1].flags
    assert after[2].msgstr == "" and after[5].msgstr == ""


def test_merge_with_no_translation_is_the_input() -> None:
    assert FORMAT.merge(APP, [None] * 5, filename="a.po", target_lang="es") == APP
    with pytest.raises(InvalidFile, match=r"a\.po"):
        FORMAT.merge(APP, [Marked.of(["x"])], filename="a.po", target_lang="es")


def test_malformed_po_names_file_and_line() -> None:
    bad = b'msgid "one"\nmsgstr ""\n\nmsgid "two"\nmsgid "three"\nmsgstr ""\n'
    with pytest.raises(InvalidFile, match=r"^bad\.po: malformed PO at line 5$"):
        FORMAT.extract(bad, filename="bad.po")
    with pytest.raises(InvalidFile, match=r"bad\.po: malformed PO at line 2: unescaped"):
        FORMAT.extract(b'msgid "a"\nmsgstr "b" "c\n', filename="bad.po")
    with pytest.raises(InvalidFile, match=r"bad\.po: malformed PO at line 1"):
        FORMAT.extract(b"garbage\n", filename="bad.po")


def test_content_naming_a_file_is_not_read_from_disk(tmp_path: Path) -> None:
    secret = tmp_path / "secret.po"
    secret.write_text('msgid "TOP-SECRET"\nmsgstr ""\n', encoding="utf-8")
    with pytest.raises(InvalidFile, match=r"x\.po: malformed PO at line 1") as caught:
        units(FORMAT, str(secret).encode(), filename="x.po")
    assert "TOP-SECRET" not in str(caught.value)


def test_wrong_encoding_is_refused_and_declared_charsets_are_read() -> None:
    latin = APP.replace(b"charset=UTF-8", b"charset=ISO-8859-1").replace(
        b"Welcome back", "Café".encode("latin-1")
    )
    assert units(FORMAT, latin)[0].stored() == "Hello, <x1/>! Café."
    out = _catalog(run(FORMAT, latin))
    assert out.metadata["Content-Type"] == "text/plain; charset=UTF-8"
    assert out[0].msgstr == "Hello, %(name)s! Café."
    with pytest.raises(InvalidFile, match=r"bad\.po: line 14 is not UTF-8"):
        FORMAT.extract(APP.replace(b"Welcome back", b"Caf\xe9"), filename="bad.po")


def test_a_unit_that_lost_its_placeholder_keeps_its_source() -> None:
    lost = [Marked.of(["Hola"]), None, None, None, None]
    assert FORMAT.merge(APP, lost, filename="a.po", target_lang="es") == APP
