"""How often the HMM tagger must be replaced, and what a lazier rule would save (ADR 0001).

For each corpus line, the eng-spa analyser's stream is tagged by a fresh ``apertium-tagger
-d``: the segment *narrows* the tagger's open class when the tagger announces a new
ambiguity class, and it *reads* the open class when it has an unknown word. Then three rules
are counted over the corpus in order:

- eager (what dragoman does): replace the tagger right after every narrowing segment;
- lazy: replace it only before a segment that a narrowed tagger could tag differently (one
  with an unknown word, or one that narrows again);
- lazy by class: as lazy, but a segment that narrows with the very class the tagger already
  narrowed with, and has no unknown word, needs no fresh tagger.

Nothing is written to bench/results: the figures go to stdout.
"""

from __future__ import annotations

import argparse
import re
import subprocess
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from common import load_corpus

from dragoman.engines.apertium.stream import deformat

DATA = Path("/usr/share/apertium/apertium-eng-spa")
_CLASS = re.compile(rb"New ambiguity class: (.*)\n")
_ESCAPED = re.compile(rb"\\.", re.DOTALL)
_BARE_UNIT = re.compile(rb"\^[^/$]*\$")


def analysed(lines: Sequence[str]) -> list[bytes]:
    """What the tagger reads for each line: the analyser's null-flushed stream."""
    payload = b"".join(deformat(line).encode() + b"\0" for line in lines)
    head = f"lt-proc -z {DATA}/eng-spa.automorf.bin | apertium-wblank-attach"
    done = subprocess.run(["bash", "-c", head], input=payload, capture_output=True, check=True)
    return done.stdout.split(b"\0")[: len(lines)]


def narrowing(segment: bytes) -> list[bytes]:
    """The classes a fresh tagger announces as new while tagging ``segment``, in order."""
    argv = ["apertium-tagger", "-z", "-d", "-g", str(DATA / "eng-spa.prob")]
    done = subprocess.run(argv, input=segment + b"\0", capture_output=True, check=True)
    return _CLASS.findall(done.stderr)


def reads_open_class(segment: bytes) -> bool:
    """An unknown (``^w/*w$``) or bare (``^w$``) word: the tagger gives it the open class."""
    plain = _ESCAPED.sub(b"", segment)
    return b"/*" in plain or _BARE_UNIT.search(plain) is not None


def restarts(classes: list[list[bytes]], reads: list[bool], *, lazy: bool, by_class: bool) -> int:
    if not lazy:
        return sum(1 for found in classes if found)
    state: bytes | None = None  # None: fresh; else the class it narrowed with (b"*": several)
    count = 0
    for found, unknown in zip(classes, reads, strict=True):
        if state is not None and unknown:
            count, state = count + 1, None
        if found and state is not None and not (by_class and found[0] == state != b"*"):
            count, state = count + 1, None
        if found:
            same = all(c == found[0] for c in found)
            state = (found[0] if same else b"*") if state is None else state
            state = state if all(c == state for c in found) else b"*"
    return count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("corpora", nargs="*", default=["en_licenses.txt", "en_short.txt"])
    for name in parser.parse_args().corpora:
        lines = load_corpus(name)
        streams = analysed(lines)
        with ThreadPoolExecutor(2) as pool:
            classes = list(pool.map(narrowing, streams))
        reads = [reads_open_class(s) for s in streams]
        eager = restarts(classes, reads, lazy=False, by_class=False)
        lazy = restarts(classes, reads, lazy=True, by_class=False)
        by_class = restarts(classes, reads, lazy=True, by_class=True)
        print(
            f"{name}: {len(lines)} segments, {sum(1 for c in classes if c)} narrow the open "
            f"class, {sum(reads)} have an unknown word; replacements: eager {eager}, "
            f"lazy {lazy}, lazy by class {by_class}"
        )


if __name__ == "__main__":
    main()
