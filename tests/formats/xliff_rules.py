"""What the XLIFF schemas require of the parts dragoman writes, checked with lxml: the order
of a unit's children and the values of its states, as XLIFF 1.2 strict
(``xliff-core-1.2-strict.xsd``), XLIFF 2.0 core (``xliff_core_2.0.xsd``) and its Metadata
module (``metadata.xsd``) define them."""

from __future__ import annotations

import re

from lxml import etree

X1 = "{urn:oasis:names:tc:xliff:document:1.2}"
X2 = "{urn:oasis:names:tc:xliff:document:2.0}"
MDA = "{urn:oasis:names:tc:xliff:metadata:2.0}"

# 1.2: state and state-qualifier are their lists or an "x-" value (XTend); so is a context's
# context-type; a context-group's purpose is a list of those.
STATES_1 = {
    "final",
    "needs-adaptation",
    "needs-l10n",
    "needs-review-adaptation",
    "needs-review-l10n",
    "needs-review-translation",
    "needs-translation",
    "new",
    "signed-off",
    "translated",
}
QUALIFIERS_1 = {
    "exact-match",
    "fuzzy-match",
    "id-match",
    "leveraged-glossary",
    "leveraged-inherited",
    "leveraged-mt",
    "leveraged-repository",
    "leveraged-tm",
    "mt-suggestion",
    "rejected-grammar",
    "rejected-inaccurate",
    "rejected-length",
    "rejected-spelling",
    "tm-suggestion",
}
CONTEXT_TYPES_1 = {
    "database",
    "element",
    "elementtitle",
    "linenumber",
    "numparams",
    "paramnotes",
    "record",
    "recordtitle",
    "sourcefile",
}
PURPOSES_1 = {"information", "location", "match"}
AFTER_TARGET_1 = {"context-group", "count-group", "note", "alt-trans"}
STATES_2 = {"initial", "translated", "reviewed", "final"}
APPLIES_TO_2 = {"source", "target", "ignorable"}


def _x_or(value: str | None, allowed: set[str]) -> bool:
    return value is None or value in allowed or re.fullmatch(r"x-\S+", value) is not None


def _local(element: etree._Element, ns: str) -> str | None:
    """The local name of an XLIFF element; None for another namespace's (or a comment)."""
    tag = element.tag
    return tag[len(ns) :] if isinstance(tag, str) and tag.startswith(ns) else None


def check_v12(root: etree._Element) -> None:
    """Every ``<trans-unit>``: source, seg-source?, target?, then context groups, count
    groups, notes and alt-trans in any order, then other namespaces' elements; its target's
    state and qualifier, and its context groups, as the strict schema types them."""
    for unit in root.iter(f"{X1}trans-unit"):
        names = [_local(child, X1) for child in unit if isinstance(child.tag, str)]
        xliff = [name for name in names if name is not None]
        head = ["source"] + [n for n in ("seg-source", "target") if n in xliff]
        assert xliff[: len(head)] == head, (unit.get("id"), names)
        assert set(xliff[len(head) :]) <= AFTER_TARGET_1, (unit.get("id"), names)
        assert names[: len(xliff)] == xliff, (unit.get("id"), names)  # others come last
        target = unit.find(f"{X1}target")
        if target is not None:
            assert _x_or(target.get("state"), STATES_1), target.get("state")
            assert _x_or(target.get("state-qualifier"), QUALIFIERS_1)
        for group in unit.iter(f"{X1}context-group"):
            assert all(_x_or(p, PURPOSES_1) for p in (group.get("purpose") or "").split())
            contexts = list(group)
            assert contexts and all(_local(c, X1) == "context" for c in contexts)
            for context in contexts:
                assert _x_or(context.get("context-type"), CONTEXT_TYPES_1)
                assert context.get("context-type") is not None and len(context) == 0


def check_v2(root: etree._Element) -> None:
    """Every ``<unit>``: other namespaces' elements (modules) first, then notes?,
    originalData?, then segments and ignorables; a segment's state and subState (a prefixed
    value, with a state); a Metadata module as its schema has it."""
    for unit in root.iter(f"{X2}unit"):
        children = [child for child in unit if isinstance(child.tag, str)]
        names = [_local(child, X2) for child in children]
        modules = 0
        while modules < len(names) and names[modules] is None:
            modules += 1
        rest = names[modules:]
        assert None not in rest, (unit.get("id"), names)
        head = [n for n in ("notes", "originalData") if n in rest]
        assert rest[: len(head)] == head and rest[len(head) :], (unit.get("id"), names)
        assert set(rest[len(head) :]) <= {"segment", "ignorable"}, (unit.get("id"), names)
        for segment in unit.iter(f"{X2}segment"):
            assert segment.get("state", "initial") in STATES_2
            sub = segment.get("subState")
            assert sub is None or (re.fullmatch(r"[^:\s]+:\S+", sub) and segment.get("state"))
        metadata = [child for child in children[:modules] if child.tag == f"{MDA}metadata"]
        assert len(metadata) <= 1
        for holder in metadata:
            _check_meta_groups(list(holder))


def _check_meta_groups(groups: list[etree._Element]) -> None:
    assert groups and all(group.tag == f"{MDA}metaGroup" for group in groups)
    for group in groups:
        assert group.get("appliesTo") is None or group.get("appliesTo") in APPLIES_TO_2
        assert len(group) > 0
        for child in group:
            if child.tag == f"{MDA}metaGroup":
                _check_meta_groups([child])
                continue
            assert child.tag == f"{MDA}meta" and child.get("type") and len(child) == 0
