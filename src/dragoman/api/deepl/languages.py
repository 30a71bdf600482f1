"""DeepL's language codes and dragoman's, both ways, and the pairs a request may use.

DeepL spells languages in capitals (any case is accepted) and some targets with a variant:
``EN-GB``, ``EN-US``, ``PT-BR``, ``PT-PT``, ``ZH-HANS``. dragoman's pairs have no variants,
so each variant means its base language (``EN-US`` and ``EN-GB`` both translate into
``en``: the engines write one English). The deprecated targets ``EN`` and ``PT`` are read
as DeepL reads them, as their base; a variant given as a source is read as its base too.
Languages DeepL does not know (``ca``, ``eo``, ``oc``) keep dragoman's code in capitals.
"""

from __future__ import annotations

from collections.abc import Collection

from dragoman.api.deepl.errors import unsupported
from dragoman.errors import InvalidRequest
from dragoman.languages import canonical, english_name
from dragoman.models import Pair

VARIANTS: dict[str, tuple[str, ...]] = {
    "en": ("EN-GB", "EN-US"),
    "pt": ("PT-BR", "PT-PT"),
    "zh": ("ZH-HANS",),
}
_VARIANT_NAMES = {
    "EN-GB": "English (British)",
    "EN-US": "English (American)",
    "PT-BR": "Portuguese (Brazilian)",
    "PT-PT": "Portuguese (European)",
    "ZH-HANS": "Chinese (simplified)",
}


def dragoman_code(code: str, name: str) -> str:
    """The canonical code of a DeepL code, or DeepL's "Value for 'name' not supported."."""
    upper = code.strip().upper()
    base, _, variant = upper.partition("-")
    if variant and upper not in _VARIANT_NAMES:
        raise unsupported(name)
    try:
        return canonical(base.lower())
    except InvalidRequest:
        raise unsupported(name) from None


def deepl_code(code: str) -> str:
    """A canonical code as DeepL spells a source (and a detected language)."""
    return code.upper()


def source_languages(pairs: Collection[Pair]) -> list[dict[str, str]]:
    sources = sorted({pair.source for pair in pairs})
    return [{"language": deepl_code(code), "name": english_name(code)} for code in sources]


def target_languages(pairs: Collection[Pair]) -> list[dict[str, str | bool]]:
    """Each target as DeepL lists it, variants apart; no engine here takes a formality."""
    found: list[dict[str, str | bool]] = []
    for code in sorted({pair.target for pair in pairs}):
        for spelled in VARIANTS.get(code, (deepl_code(code),)):
            name = _VARIANT_NAMES.get(spelled, english_name(code))
            found.append({"language": spelled, "name": name, "supports_formality": False})
    return found
