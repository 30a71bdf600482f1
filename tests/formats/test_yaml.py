from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from dragoman.errors import InvalidFile
from dragoman.formats import by_name
from dragoman.formats.markup import Marked
from dragoman.formats.yaml_i18n import _PROTECTED as PROTECTED
from dragoman.formats.yaml_i18n import FORMAT
from tests.formats.helpers import pseudo, pseudo_text, run, units

DATA = Path(__file__).parent.parent / "data" / "formats" / "yaml"
RAILS = (DATA / "rails.en.yml").read_bytes()
SYMFONY = (DATA / "messages.yaml").read_bytes()
MULTI = (
    b"# two bundles in one file\n--- # English\nen:\n  hi: Hello there\n  bye: 'Good bye'\n"
    b"...\n---\nfr:\n  hi: Bonjour\n  list: [a, 2]\n"
)
STR = "tag:yaml.org,2002:str"


def _values(text: str) -> list[yaml.ScalarNode]:
    """Every string scalar that is a mapping value or a sequence item, read by PyYAML alone;
    an anchored one once."""
    found: list[yaml.ScalarNode] = []
    seen: set[int] = set()

    def walk(node: yaml.Node, in_key: bool) -> None:
        if id(node) in seen:
            return
        seen.add(id(node))
        if isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                walk(key, True)
                walk(value, in_key)
        elif isinstance(node, yaml.SequenceNode):
            for item in node.value:
                walk(item, in_key)
        elif isinstance(node, yaml.ScalarNode) and not in_key and node.tag == STR:
            found.append(node)

    for root in yaml.compose_all(text, Loader=yaml.SafeLoader):
        walk(root, False)
    return found


def _skeleton(data: bytes) -> str:
    """The document with every string value's span replaced by a marker."""
    text = data.decode("utf-8")
    spans = sorted((n.start_mark.index, n.end_mark.index) for n in _values(text))
    pieces, pos = [], 0
    for start, end in spans:
        pieces += [text[pos:start], "#"]
        pos = end
    return "".join([*pieces, text[pos:]])


def _shape(document: Any) -> Any:
    if isinstance(document, dict):
        return {k: _shape(v) for k, v in document.items()}
    if isinstance(document, list):
        return [_shape(v) for v in document]
    return "#" if isinstance(document, str) else document


def _pseudo_of(text: str) -> str:
    pieces = re.split(f"({PROTECTED.pattern})", text)
    return "".join(p if i % 2 else pseudo_text(p) for i, p in enumerate(pieces))


def _expected(node: yaml.ScalarNode) -> str:
    if node.style == "|":  # each line is text of its own, line breaks are codes
        return "\n".join(_pseudo_of(line) for line in node.value.split("\n"))
    return _pseudo_of(node.value)


def _fixed(text: str) -> Callable[[Marked], Marked]:
    return lambda unit: Marked.of([text])


def test_registered() -> None:
    assert by_name("yaml") is FORMAT
    assert FORMAT.extensions == (".yml", ".yaml")
    assert FORMAT.media_type == "application/yaml"


def test_units_are_the_string_values_in_order() -> None:
    assert [u.stored() for u in units(FORMAT, RAILS)] == [
        "My great app",
        "Welcome back, <x1/>! You have <x2/> messages.",
        'It\'s a "quoted" text',
        "Café and téa",
        "Column\tvalue",
        "Grüße aus Köln",
        "Hello there",
        "42",
        "42",
        "2024-05-01",
        "",
        "First line of the letter.<x1/>  Indented second line.<x2/>Last paragraph, <x3/> items.",
        "This folded paragraph goes on over two lines.\nAnd a second paragraph.",
        "One item",
        "Inline one",
        "inline two",
        "Inline label",
        "A plain scalar that continues on the next line.",
        "can't be blank",
        "is too long (maximum is <x1/> character)",
        "is too long (maximum is <x1/> characters)",
    ]
    assert [u.stored() for u in units(FORMAT, SYMFONY)] == [
        "Hello <x1/>, welcome!",
        "<x1/>",
        "Read the terms at <x1/> first.",
        "Send",
        "Start again",
        "First name",
        "Last name",
        "Enter your e-mail address, for example <x1/>, and we write back.",
    ]


def test_literal_line_breaks_are_codes_standing_for_break_and_indentation() -> None:
    unit = units(FORMAT, RAILS)[11]
    assert unit.plain == "First line of the letter.  Indented second line.Last paragraph,  items."
    assert len(unit.codes) == 3


@pytest.mark.parametrize("segmentation", [True, False])
@pytest.mark.parametrize(
    ("data", "target"),
    [(RAILS, "en"), (SYMFONY, "es"), (MULTI, "en")],
    ids=["rails", "symfony", "multi"],
)
def test_identity_round_trip_is_byte_exact(data: bytes, target: str, segmentation: bool) -> None:
    out = run(FORMAT, data, segmentation=segmentation, target_lang=target)
    if data is MULTI:
        assert out == data.replace(b"\nfr:\n", b"\nen:\n")
    else:
        assert out == data


@pytest.mark.parametrize(
    "data",
    [b"\xef\xbb\xbf" + RAILS, RAILS.decode().encode("utf-16"), RAILS.replace(b"\n", b"\r\n")],
    ids=["bom", "utf16", "crlf"],
)
def test_identity_keeps_encoding_and_line_ends(data: bytes) -> None:
    assert run(FORMAT, data, target_lang="en") == data


def test_the_root_language_key_is_renamed_and_nothing_else() -> None:
    assert run(FORMAT, RAILS, target_lang="pt-BR") == RAILS.replace(b"\nen:\n", b"\npt-BR:\n")
    assert run(FORMAT, RAILS, target_lang="no") == RAILS.replace(b"\nen:\n", b'\n"no":\n')
    assert yaml.safe_load(run(FORMAT, RAILS, target_lang="no")).keys() == {"no"}
    assert run(FORMAT, MULTI, target_lang="de").count(b"\nde:\n") == 2


@pytest.mark.parametrize("key", ["application", "app", "api", "seq", "xx", "web-app"])
def test_a_single_key_that_is_no_language_is_not_renamed(key: str) -> None:
    data = f"{key}:\n  title: Hello\n".encode()
    assert yaml.safe_load(run(FORMAT, data, pseudo)) == {key: {"title": "Ħḗŀŀǿ"}}


@pytest.mark.parametrize("key", ["de", "pt-BR", "zh_CN", "zh-Hant", "es-419", "fil-PH", "'en'"])
def test_a_language_code_at_the_root_is_renamed(key: str) -> None:
    data = f"{key}:\n  title: Hello\n".encode()
    out = run(FORMAT, data, pseudo, target_lang="ca")
    assert out.startswith(b"'ca':" if key.startswith("'") else b"ca:")
    assert yaml.safe_load(out) == {"ca": {"title": "Ħḗŀŀǿ"}}


def test_only_a_single_root_key_is_renamed() -> None:
    data = b"en:\n  a: Hi\nde:\n  a: Hallo\n"
    assert yaml.safe_load(run(FORMAT, data, target_lang="fr")).keys() == {"en", "de"}


@pytest.mark.parametrize("data", [RAILS, SYMFONY, MULTI], ids=["rails", "symfony", "multi"])
def test_pseudo_changes_every_string_and_nothing_else(data: bytes) -> None:
    out = run(FORMAT, data, pseudo, segmentation=False, target_lang="en")
    assert _skeleton(out) == _skeleton(data).replace("\nfr:\n", "\nen:\n")
    before, after = _values(data.decode()), _values(out.decode())
    sources = units(FORMAT, data)
    assert len(before) == len(after) == len(sources)
    for source, translated, unit in zip(before, after, sources, strict=True):
        assert translated.style == source.style
        assert translated.value == (_expected(source) if unit.has_text() else source.value)
        if re.search("[a-zA-Z]", unit.plain):
            assert translated.value != source.value


@pytest.mark.parametrize("data", [RAILS, SYMFONY, MULTI], ids=["rails", "symfony", "multi"])
def test_output_reads_back_with_the_same_structure(data: bytes) -> None:
    out = run(FORMAT, data, pseudo, target_lang="en")
    before = list(yaml.safe_load_all(data))
    after = list(yaml.safe_load_all(out))
    if data is MULTI:
        before[1] = {"en": before[1]["fr"]}
    assert _shape(after) == _shape(before)


def test_what_rails_users_expect() -> None:
    out = run(FORMAT, RAILS, pseudo, segmentation=False).decode("utf-8")
    app = yaml.safe_load(out)["es"]["app"]
    assert app["count"] == 3 and app["ratio"] == 1.5 and app["enabled"] is True
    assert app["missing"] is None and str(app["release"]) == "2024-05-01"
    assert app["forced"] == "42" and app["number_text"] == "42" and app["empty"] == ""
    assert app["date_text"] == "2024-05-01" and app["list"][1] == 7
    assert "\n    forced: !!str 42\n" in out and "\n    release: 2024-05-01\n" in out
    assert "%{name}" in app["welcome"] and "%{count}" in app["welcome"]
    assert app["welcome"].count("%{") == 2
    assert app["literal"].endswith(" %<count>d īŧḗḿş.\n")
    assert app["greeting"] == app["again"] == pseudo_text("Hello there")
    assert "\n    greeting: &hello ŧħḗřḗ Ħḗŀŀǿ\n    again: *hello\n" in out
    assert "  # shown in the header\n" in out and out.startswith("# Rails bundle")
    assert f"\n    title: {pseudo_text('My great app')}  # shown" in out
    assert f"\n    german: {pseudo_text('Grüße aus Köln')}\n" in out
    assert "\n    quote: '" in out and "ŧḗẋŧ \"ʠŭǿŧḗḋ\" ȧ Īŧ''ş'" in out
    assert app["escaped"] == pseudo_text("Café and téa")
    assert re.search(r'\n    escaped: "[\\u0-9A-F ]+"\n', out)
    assert app["tab"] == pseudo_text("Column\tvalue") and "\\t" in out
    assert "\n    literal: |\n      " in out and "\n    folded: >-\n      " in out
    plural = yaml.safe_load(out)["es"]["errors"]["messages"]["too_long"]
    assert plural.keys() == {"one", "other"} and "%{count}" in plural["other"]


def test_literal_and_folded_blocks_keep_their_shape() -> None:
    out = run(FORMAT, RAILS, pseudo, segmentation=False).decode("utf-8")
    literal = out.split("    literal: |\n")[1].split("    folded:")[0]
    assert [len(line) - len(line.lstrip()) for line in literal.splitlines()] == [6, 8, 0, 6]
    folded = yaml.safe_load(out)["es"]["app"]["folded"]
    assert folded == _pseudo_of(
        "This folded paragraph goes on over two lines.\nAnd a second paragraph."
    )
    block = out.split("    folded: >-\n")[1].split("    list:")[0]
    assert all(len(line) <= 6 + 29 for line in block.splitlines())
    assert len(block.splitlines()) > 3


@pytest.mark.parametrize(
    "text",
    [
        "yes",
        "no",
        "1.0",
        "null",
        "~",
        "2024-01-01",
        "a: b",
        "#x",
        "- x",
        " padded ",
        "x #y",
        "'q'",
        "&a",
        "tab\there",
        "two\nlines",
        "x:",
        "---",
        "[x]",
        "%{count} left",
    ],
)
def test_a_plain_scalar_stays_a_string_whatever_the_translation(text: str) -> None:
    data = b"en:\n  a: Hello\n  b: [Hello, Hi]\n  c: 'Hello'\n"
    out = run(FORMAT, data, _fixed(text), target_lang="en")
    assert yaml.safe_load(out) == {"en": {"a": text, "b": [text, text], "c": text}}


def test_plain_stays_plain_where_it_can() -> None:
    data = b"a: Hello\nb: [Hello, Hi]\n"
    assert (
        run(FORMAT, data, _fixed("Hola, amigo"))
        == b'a: Hola, amigo\nb: ["Hola, amigo", "Hola, amigo"]\n'
    )


def test_a_file_written_all_ascii_stays_ascii() -> None:
    data = b'a: "Caf\\u00e9"\nb: Hello there\n'
    out = run(FORMAT, data, pseudo)
    assert out.isascii()
    assert yaml.safe_load(out) == {"a": pseudo_text("Café"), "b": pseudo_text("Hello there")}


def test_a_block_that_cannot_keep_its_style_is_written_double_quoted() -> None:
    data = b"a: |\n  Hello\nb: Bye\n"
    words = {"Hello": " ", "Bye": "Adiós"}
    out = run(FORMAT, data, lambda unit: Marked.of([words[unit.plain]]))
    assert out == 'a: " \\n"\nb: Adiós\n'.encode()
    assert yaml.safe_load(out) == {"a": " \n", "b": "Adiós"}


def test_partial_translates_the_first_unit_only() -> None:
    out = yaml.safe_load(run(FORMAT, RAILS, pseudo, partial=1, segmentation=False))
    before = yaml.safe_load(RAILS)["en"]
    assert out["es"]["app"]["title"] == pseudo_text(before["app"]["title"])
    assert out["es"]["app"] | {"title": before["app"]["title"]} == before["app"]
    assert out["es"]["errors"] == before["errors"]


def test_merge_with_no_translation_is_the_input() -> None:
    count = len(units(FORMAT, SYMFONY))
    assert FORMAT.merge(SYMFONY, [None] * count, filename="a.yml", target_lang="es") == SYMFONY
    with pytest.raises(InvalidFile, match=r"a\.yml"):
        FORMAT.merge(SYMFONY, [Marked.of(["x"])], filename="a.yml", target_lang="es")


def test_a_unit_that_lost_its_placeholders_keeps_its_source() -> None:
    lost: list[Marked | None] = [None] * len(units(FORMAT, SYMFONY))
    lost[0] = Marked.of(["Hola"])
    assert FORMAT.merge(SYMFONY, lost, filename="a.yml", target_lang="es") == SYMFONY


@pytest.mark.parametrize(
    ("bad", "line"),
    [(b"en:\n  a: b\n    c: d\n", 3), (b'en:\n  a: "open\n', 3), (b"a: [1, 2\nb: c\n", 2)],
)
def test_malformed_yaml_names_file_and_line(bad: bytes, line: int) -> None:
    with pytest.raises(InvalidFile, match=rf"bad\.yml: malformed YAML at line {line}\b"):
        FORMAT.extract(bad, filename="bad.yml")


@pytest.mark.parametrize("data", [b"just a string", b"42", b"--- |\n  text\n"])
def test_a_top_level_scalar_is_refused(data: bytes) -> None:
    with pytest.raises(InvalidFile, match=r"x\.yml: line 1: the top level must be"):
        FORMAT.extract(data, filename="x.yml")


def test_empty_files_have_no_units() -> None:
    assert units(FORMAT, b"") == units(FORMAT, b"# nothing\n") == units(FORMAT, b"en:\n") == []


def test_wrong_encoding_and_control_characters_are_refused() -> None:
    with pytest.raises(InvalidFile, match=r"x\.yml: line 2 is not UTF-8"):
        FORMAT.extract(b"en:\n  a: Caf\xe9\n", filename="x.yml")
    with pytest.raises(InvalidFile, match=r"x\.yml: line 2: character U\+0001"):
        FORMAT.extract(b"en:\n  a: b\x01\n", filename="x.yml")


@pytest.mark.timeout(30)  # a hang, not a speed: fails only far beyond its normal time
def test_billion_laughs_is_refused_quickly() -> None:
    lines = [b'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for i in range(1, 10):
        name, previous = chr(97 + i), chr(96 + i)
        lines.append(f"{name}: &{name} [{', '.join(['*' + previous] * 9)}]".encode())
    with pytest.raises(InvalidFile, match=r"x\.yml: refused: aliases that would expand"):
        FORMAT.extract(b"\n".join(lines), filename="x.yml")


def test_too_many_aliases_and_recursive_aliases_are_refused() -> None:
    many = b"a: &a x\nb: [" + b", ".join([b"*a"] * 1001) + b"]\n"
    with pytest.raises(InvalidFile, match=r"x\.yml: refused: more than 1000 aliases"):
        FORMAT.extract(many, filename="x.yml")
    with pytest.raises(InvalidFile, match=r"x\.yml: refused: line 1: an alias refers to itself"):
        FORMAT.extract(b"a: &a [x, *a]\n", filename="x.yml")


def test_aliases_of_mappings_within_bounds_are_kept() -> None:
    data = b"base: &base\n  title: Hello\n  note: Bye\nen:\n  <<: *base\n  title: Hi\n"
    out = run(FORMAT, data, pseudo)
    assert (
        out == "base: &base\n  title: Ħḗŀŀǿ\n  note: Ɓẏḗ\nen:\n  <<: *base\n  title: Ħī\n".encode()
    )


def test_python_tags_are_refused_and_never_run(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    data = f'a: !!python/object/apply:os.system ["touch {marker}"]\n'.encode()
    with pytest.raises(InvalidFile, match=r"x\.yml: refused: line 1: Python-specific tag"):
        FORMAT.extract(data, filename="x.yml")
    assert not marker.exists()


@pytest.mark.timeout(30)  # a hang, not a speed: fails only far beyond its normal time
def test_deep_nesting_is_refused_quickly() -> None:
    with pytest.raises(InvalidFile, match=r"x\.yml: YAML nested too deeply"):
        FORMAT.extract(b"[" * 100_000 + b"]" * 100_000, filename="x.yml")


@pytest.mark.timeout(60)  # a hang, not a speed: fails only far beyond its normal time
def test_a_megabyte_string_does_not_hang() -> None:
    data = b"en:\n  long: " + b"word " * 200_000 + b"end\n"
    out = run(FORMAT, data, pseudo)
    assert yaml.safe_load(out)["es"]["long"] == pseudo_text(("word " * 200_000) + "end")


@pytest.mark.parametrize(
    ("data", "value"),
    [
        ("a: |2\n     code line\n   plain line\n", "   ŀīƞḗ ċǿḋḗ\n ŀīƞḗ ƥŀȧīƞ\n"),
        ("a: |+\n  keep this\n\n\nb: x\n", "ŧħīş ķḗḗƥ\n\n\n"),
        ("a: |-\n  one\n  \n  two\n", "ǿƞḗ\n\nŧẇǿ"),
        ("a: |\n\n  after blank\n", "\nƀŀȧƞķ ȧƒŧḗř\n"),
        ("a: >\n  fold this\n    code here\n  back\n", "ƀȧċķ\nħḗřḗ ċǿḋḗ\n  ŧħīş ƒǿŀḋ\n"),
        ("a: >2\n    spaced first\n  normal\n", "  ƞǿřḿȧŀ\nƒīřşŧ şƥȧċḗḋ\n"),
        ("a: &x !!str |\n  anchored\nb: *x\n", "ȧƞċħǿřḗḋ\n"),
        ("a: |  # note\n  no final break", "ƀřḗȧķ ƒīƞȧŀ ƞǿ"),
    ],
)
def test_block_scalars_keep_header_indentation_and_chomping(data: str, value: str) -> None:
    out = run(FORMAT, data.encode(), pseudo, segmentation=False).decode()
    assert out.split("\n", 1)[0] == data.split("\n", 1)[0]
    assert yaml.safe_load(out)["a"] == value
    assert run(FORMAT, data.encode()) == data.encode()


def test_new_lines_in_a_literal_block_are_indented_as_the_block() -> None:
    data = b"en:\n  a: |\n    One line\n  b: x\n"
    out = run(FORMAT, data, _fixed("Una\nDos\n\nTres"), target_lang="en")
    assert out == b'en:\n  a: |\n    Una\n    Dos\n\n    Tres\n  b: "Una\\nDos\\n\\nTres"\n'
    assert yaml.safe_load(out) == {"en": {"a": "Una\nDos\n\nTres\n", "b": "Una\nDos\n\nTres"}}


def test_blocks_in_a_crlf_file_keep_crlf() -> None:
    data = b"a: >\r\n  one two\r\n  three\r\n\r\n  four\r\nb: |\r\n  five\r\n  six\r\n"
    out = run(FORMAT, data, pseudo, segmentation=False)
    assert b"\n" not in out.replace(b"\r\n", b"")
    assert yaml.safe_load(out) == {"a": "ƒǿŭř\nŧħřḗḗ ŧẇǿ ǿƞḗ\n", "b": "ƒīṽḗ\nşīẋ\n"}
