"""Builds ``en_short.txt``, the short-segment English corpus (lines of about a dozen words,
like UI strings and messages), from the docstrings and messages of Python's standard library
as Debian's ``libpython3.11-stdlib`` installs it in ``/usr/lib/python3.11``.

    python tests/data/make_short_corpus.py           # rewrites tests/data/en_short.txt
    python tests/data/make_short_corpus.py --check   # exit status 1 if the stored file differs

The standard library is under the PSF License 2.0, which lets its text be copied into an
Apache-2.0 project with its notice: Copyright (c) 2001-2023 Python Software Foundation; All
Rights Reserved.

The ``.py`` files are read in sorted path order (tests, demos and the parts that Debian ships
in other packages left out, see ``EXCLUDED``) and parsed, never run. From each module, class
and function the first paragraph of its docstring is taken, and from the code the literal
messages of ``raise SomeError("...")`` and the literal ``help="..."`` strings, in the order
``ast.walk`` meets them. Each text has its whitespace collapsed and is kept when it reads as a
plain English sentence: it starts with a capital, has ``MIN_WORDS`` to ``MAX_WORDS`` words, and
every word is a word (letters, an apostrophe or a hyphen inside, an acronym, punctuation at
its edges); identifiers, code and numbers rule a text out. A text met a second time is left
out: about 1,800 lines of 8 to 25 words, 10 on average. The output depends on nothing but those
files, so a run on any Debian 12 machine gives the same bytes; the tests read the stored file.
"""

from __future__ import annotations

import argparse
import ast
import re
import sys
from collections.abc import Iterator
from pathlib import Path

SOURCE_DIR = Path("/usr/lib/python3.11")
OUTPUT = Path(__file__).resolve().parent / "en_short.txt"
MIN_WORDS = 8
MAX_WORDS = 25
# Tests and demos, and what Debian ships in packages other than libpython3.11-stdlib (so that
# the output does not depend on which of them are installed).
EXCLUDED = frozenset(
    {
        "test",
        "tests",
        "idlelib",
        "turtledemo",
        "lib2to3",
        "distutils",
        "ensurepip",
        "tkinter",
        "site-packages",
        "dist-packages",
        "__phello__",
    }
)

_SENTENCE = re.compile(r"^[A-Z][A-Za-z' ,;:()-]*[A-Za-z)][.!?]?$")
_WORD = re.compile(r"^\(?(?:[A-Za-z][a-z]*(?:['-][a-z]+)*|[A-Z]{2,5}s?)\)?[,;:.!?]?$")


def sources(source_dir: Path) -> list[Path]:
    """The library's ``.py`` files in sorted order, ``EXCLUDED`` folders and generated
    ``_sysconfigdata`` modules left out."""
    return sorted(
        path
        for path in source_dir.rglob("*.py")
        if not EXCLUDED.intersection(path.relative_to(source_dir).parts)
        and not path.name.startswith("_sysconfigdata")
        and not path.is_symlink()
    )


def texts(tree: ast.AST) -> Iterator[str]:
    """First docstring paragraphs, literal exception messages and literal help strings."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            doc = ast.get_docstring(node)
            if doc:
                yield doc.strip().split("\n\n")[0]
        elif isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call) and node.exc.args:
            first = node.exc.args[0]
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                yield first.value
        elif (
            isinstance(node, ast.keyword)
            and node.arg == "help"
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
        ):
            yield node.value.value


def plain_sentence(text: str) -> bool:
    """Reads as an English sentence of ``MIN_WORDS`` to ``MAX_WORDS`` plain words."""
    words = text.split()
    return (
        MIN_WORDS <= len(words) <= MAX_WORDS
        and _SENTENCE.match(text) is not None
        and all(_WORD.match(word) for word in words)
    )


def build(source_dir: Path = SOURCE_DIR) -> str:
    seen: set[str] = set()
    out: list[str] = []
    for path in sources(source_dir):
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        except (SyntaxError, UnicodeDecodeError):
            continue
        for text in texts(tree):
            line = " ".join(text.split())
            if plain_sentence(line) and line not in seen:
                seen.add(line)
                out.append(line)
    return "\n".join(out) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--source-dir", type=Path, default=SOURCE_DIR)
    parser.add_argument("--output", type=Path, default=OUTPUT)
    parser.add_argument("--check", action="store_true", help="compare, do not write")
    args = parser.parse_args()
    text = build(args.source_dir)
    if args.check:
        stored = args.output.read_text(encoding="utf-8") if args.output.is_file() else None
        if stored != text:
            sys.exit(f"{args.output} differs from what {args.source_dir} gives")
        return
    args.output.write_text(text, encoding="utf-8")
    print(f"{args.output}: {text.count(chr(10))} lines, {len(text.encode())} bytes")


if __name__ == "__main__":
    main()
