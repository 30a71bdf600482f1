from __future__ import annotations

from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from dragoman.errors import InvalidFile
from dragoman.formats import by_name, for_file
from dragoman.formats.markdown import FORMAT
from dragoman.formats.markup import Marked
from tests.formats.helpers import BACK, changed_runs, letters, pseudo, run, units

DATA = Path(__file__).parent.parent / "data" / "formats" / "markdown"
README = (DATA / "readme.md").read_bytes()

TRANSLATED_WORDS = (
    "Getting started Install the tool with and read the manual at the site Quoted text with "
    "emphasis continues here First item Second item with image Nested ordered item Column one "
    "Column two Cell text More cells Setext heading See reference link and here"
)


def _md() -> MarkdownIt:
    return MarkdownIt("commonmark").enable(["table", "strikethrough"])


def _structure(data: bytes) -> list[tuple[object, ...]]:
    found: list[tuple[object, ...]] = []
    for token in _md().parse(data.decode()):
        found.append((token.type, token.tag, token.markup, token.map))
        if token.type in ("fence", "code_block", "html_block"):
            found.append((token.content,))
        for child in token.children or []:
            keep = child.type in ("code_inline", "html_inline") or child.type.endswith("_open")
            found.append((child.type, child.markup, child.attrs, child.content if keep else ""))
    return found


def test_registered() -> None:
    assert by_name("markdown") is FORMAT
    assert for_file("README.markdown") is FORMAT and for_file("doc.md") is FORMAT
    assert FORMAT.media_type == "text/markdown"


@pytest.mark.parametrize("segmentation", [True, False])
@pytest.mark.parametrize("newline", [b"\n", b"\r\n"])
def test_identity_round_trip_is_byte_exact(segmentation: bool, newline: bytes) -> None:
    data = README.replace(b"\n", newline)
    assert run(FORMAT, data, segmentation=segmentation) == data


def test_only_the_translatable_text_changes() -> None:
    out = run(FORMAT, README, letters).decode()
    assert out.translate(BACK) == README.decode()
    assert changed_runs(README.decode(), out) == TRANSLATED_WORDS


def test_pseudo_translation_changes_every_unit_and_keeps_its_codes() -> None:
    before = units(FORMAT, README)
    after = units(FORMAT, run(FORMAT, README, pseudo))
    assert len(after) == len(before) == 12
    for source, target in zip(before, after, strict=True):
        assert target.plain != source.plain
        assert target.codes == source.codes


def test_output_parses_to_the_same_structure() -> None:
    out = run(FORMAT, README, pseudo)
    assert _structure(out) == _structure(README)


def test_what_markdown_writers_expect_is_kept() -> None:
    out = run(FORMAT, README, pseudo).decode()
    for kept in (
        "---\ntitle: Keep front matter\ntags: [docs]\n---\n",
        "# ",
        "`pip install tool`",
        '](https://example.com/docs "Docs title")',
        "![logo](logo.png)",
        "  1. ",
        '```python\nprint("Keep code")\n```',
        "    Keep indented code",
        "<div>\nKeep html block\n</div>",
        "<https://auto.example.com>",
        '[ref]: https://example.com/ref "Keep ref title"',
        "|------------|------------|",
        "\n--------------\n",
        "> ",
    ):
        assert kept in out
    assert "[şīŧḗ ŧħḗ](https://example.com/docs" in out
    assert "\n> ħḗřḗ. ċǿƞŧīƞŭḗş\n" in out


def test_wrapped_lines_stay_wrapped_with_their_prefix() -> None:
    data = b"> One two three\n> four five six.\n"
    assert units(FORMAT, data)[0].stored() == "One two three<x1/>four five six."
    assert run(FORMAT, data, pseudo).decode() == "> ŧħřḗḗ ŧẇǿ Ǿƞḗ\n> şīẋ. ƒīṽḗ ƒǿŭř\n"


def test_emphasis_and_escapes_round_trip() -> None:
    data = b"A ~~strike~~ and ***both*** and \\*literal\\* star.\n"
    assert units(FORMAT, data)[0].stored() == (
        "A <g1>strike</g1> and <g2><g3>both</g3></g2> and *literal* star."
    )
    out = run(FORMAT, data, letters)
    assert out.decode().translate(BACK).encode() == data


def test_translated_text_is_escaped() -> None:
    def hostile(unit: Marked) -> Marked:
        return Marked.of([*unit.tokens, " *not* [a](link) `x` | <b>"])

    out = run(FORMAT, b"| a |\n|---|\n| Cell |\n", hostile, segmentation=False).decode()
    assert out.splitlines()[2] == r"| Cell \*not\* \[a\](link) \`x\` \| \<b> |"
    assert _md().render(out).count("<td>") == 1


def test_partial_translates_the_first_unit_only() -> None:
    out = run(FORMAT, README, pseudo, partial=1).decode()
    assert "# Ġḗŧŧīƞġ" not in out and "şŧȧřŧḗḋ Ġḗŧŧīƞġ" in out
    assert "Install the *tool*" in out
    assert _structure(out.encode()) == _structure(README)


def test_non_utf8_is_refused_with_its_line() -> None:
    with pytest.raises(InvalidFile, match=r"doc\.md: line 2 is not UTF-8"):
        FORMAT.extract(b"# Title\nCaf\xe9\n", filename="doc.md")


@pytest.mark.timeout(120)  # a hang, not a speed: fails only far beyond its normal time
def test_a_megabyte_does_not_hang() -> None:
    data = b"Some *bold* words and `code` here. " * 30_000
    out = run(FORMAT, data, pseudo)
    assert out.count(b"`code`") == 30_000


def test_shortcut_reference_links_are_kept_whole() -> None:
    data = b"See [docs] and [docs][] or [the docs][docs].\n\n[docs]: /d\n"
    assert units(FORMAT, data)[0].stored() == "See <x1/> and <x2/> or <g3>the docs</g3>."
    out = run(FORMAT, data, pseudo).decode()
    assert "[docs]" in out and "[docs][]" in out and "][docs]" in out


def test_text_that_would_start_a_block_is_escaped() -> None:
    def lead(unit: Marked) -> Marked:
        return Marked.of(["- 1. # ", *unit.tokens])

    out = run(FORMAT, b"Hello\nworld\n", lead, segmentation=False)
    assert out == b"\\- 1. # Hello\nworld\n"
    assert [t.type for t in _md().parse(out.decode())] == [
        "paragraph_open",
        "inline",
        "paragraph_close",
    ]
