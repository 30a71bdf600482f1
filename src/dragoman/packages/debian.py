"""Rule-based pairs: Debian's Apertium packages, listed with ``apt-cache`` (run as a separate
process: Apertium and apt are GPL tools) and resolved from names such as ``eng-spa``."""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass

from dragoman.errors import InvalidRequest
from dragoman.languages import canonical
from dragoman.models import Pair

_PACKAGE = re.compile(r"^apertium-([a-z]{2,3})-([a-z]{2,3}) - (.*)$")


@dataclass(frozen=True, slots=True)
class DebianPair:
    package: str
    pair: Pair  # as the package is named; Apertium pairs usually translate both ways
    installed: bool
    version: str | None


def debian_pairs() -> list[DebianPair]:
    """Debian's Apertium language-pair packages; empty where apt-cache is missing."""
    listing = _run(["apt-cache", "search", "--names-only", "^apertium-[a-z]+-[a-z]+$"])
    installed = _installed()
    found = []
    for line in listing.splitlines():
        match = _PACKAGE.match(line)
        if not match or "translat" not in match.group(3) or "Transitional" in match.group(3):
            continue
        try:
            pair = Pair(canonical(match.group(1)), canonical(match.group(2)))
        except InvalidRequest:
            continue
        name = f"apertium-{match.group(1)}-{match.group(2)}"
        found.append(DebianPair(name, pair, name in installed, installed.get(name)))
    return found


def packages_for(names: list[str]) -> list[str]:
    """The Debian package of each pair name (``eng-spa``, ``fra-spa``, ``en-es``), either way
    round; ``InvalidRequest`` naming the ones Debian has no package for."""
    known = debian_pairs()
    chosen, unknown = [], []
    for name in names:
        source, _, target = name.partition("-")
        try:
            wanted = Pair(canonical(source), canonical(target))
        except InvalidRequest:
            unknown.append(name)
            continue
        match = [p.package for p in known if p.pair in (wanted, Pair(wanted.target, wanted.source))]
        if match:
            chosen.append(match[0])
        else:
            unknown.append(name)
    if unknown:
        raise InvalidRequest(f"Debian has no Apertium package for {', '.join(unknown)}")
    return chosen


def _installed() -> dict[str, str]:
    out = _run(["dpkg-query", "-W", "-f", "${Package} ${Version} ${db:Status-Abbrev}\n"])
    table = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) >= 3 and parts[0].startswith("apertium-") and parts[2].startswith("ii"):
            table[parts[0]] = parts[1]
    return table


def _run(command: list[str]) -> str:
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return done.stdout
