"""Builds ``en_licenses.txt``, the English test and benchmark corpus, from licence texts that
every Debian system ships in ``/usr/share/common-licenses``.

    python tests/data/make_corpus.py           # rewrites tests/data/en_licenses.txt
    python tests/data/make_corpus.py --check   # exit status 1 if the stored file differs

The GPL-3, Apache-2.0 and MPL-2.0 texts are read in that order and cut into paragraphs at
blank lines. Decoration goes first: the MPL's asterisk boxes lose their borders, and lines made
only of ``-``, ``=`` or ``*`` separate paragraphs. Each paragraph becomes one line with its
whitespace collapsed. Paragraphs of fewer than ``MIN_WORDS`` words (bare section headings) are
dropped, paragraphs over ``MAX_CHARS`` characters are cut at sentence ends, and a line met a
second time is left out: about 210 lines of 25 to 950 characters. The output depends on
nothing but those three files, so a run on any Debian machine gives the same bytes; the tests
read the stored file and never run this script.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

LICENSES_DIR = Path("/usr/share/common-licenses")
SOURCES = ("GPL-3", "Apache-2.0", "MPL-2.0")
OUTPUT = Path(__file__).resolve().parent / "en_licenses.txt"
MIN_WORDS = 4
MAX_CHARS = 1000

_BOXED = re.compile(r"^\s*\*(.*)\*\s*$")
_RULE = re.compile(r"^[\s*=-]+$")
_SENTENCE_END = re.compile(r"(?<=[.;:])\s+(?=[A-Z(\"])")


def paragraphs(text: str) -> list[str]:
    """The text's paragraphs, decoration removed, each on one line."""
    lines = []
    for line in text.splitlines():
        boxed = _BOXED.match(line)
        if boxed:
            line = boxed.group(1)
        lines.append("" if _RULE.match(line) else line)
    blocks = re.split(r"\n\s*\n", "\n".join(lines))
    return [" ".join(block.split()) for block in blocks if block.strip()]


def cut(paragraph: str, limit: int = MAX_CHARS) -> list[str]:
    """``paragraph`` as it is, or cut at sentence ends into pieces of at most ``limit``."""
    if len(paragraph) <= limit:
        return [paragraph]
    pieces: list[str] = []
    for sentence in _SENTENCE_END.split(paragraph):
        if pieces and len(pieces[-1]) + 1 + len(sentence) <= limit:
            pieces[-1] += " " + sentence
        else:
            pieces.append(sentence)
    return pieces


def build(licenses_dir: Path = LICENSES_DIR) -> str:
    seen: set[str] = set()
    out: list[str] = []
    for name in SOURCES:
        text = (licenses_dir / name).read_text(encoding="utf-8")
        for paragraph in paragraphs(text):
            for line in cut(paragraph):
                if len(line.split()) >= MIN_WORDS and line not in seen:
                    seen.add(line)
                    out.append(line)
    return "\n".join(out) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--licenses-dir", type=Path, default=LICENSES_DIR)
    parser.add_argument("--output", type=Path, default=OUTPUT)
    parser.add_argument("--check", action="store_true", help="compare, do not write")
    args = parser.parse_args()
    text = build(args.licenses_dir)
    if args.check:
        stored = args.output.read_text(encoding="utf-8") if args.output.is_file() else None
        if stored != text:
            sys.exit(f"{args.output} differs from what {args.licenses_dir} gives")
        return
    args.output.write_text(text, encoding="utf-8")
    print(f"{args.output}: {text.count(chr(10))} lines, {len(text.encode())} bytes")


if __name__ == "__main__":
    main()
