"""Language codes: ISO 639-1 or 639-3 in, one canonical form out (the shortest)."""

from __future__ import annotations

import re

import langcodes

from dragoman.errors import UnknownLanguage

_CODE = re.compile(r"[A-Za-z]{2,3}")


def canonical(code: str) -> str:
    """``eng`` and ``en`` both give ``en``; a code with no 639-1 form stays three letters."""
    if not _CODE.fullmatch(code):
        raise _unknown(code)
    try:
        tag = str(langcodes.standardize_tag(code.lower()))
    except (ValueError, LookupError):
        raise _unknown(code) from None
    return tag


def _unknown(code: str) -> UnknownLanguage:
    return UnknownLanguage(
        f"language code {code!r} is not an ISO 639-1 or 639-3 code", language=code
    )


# English names, as LibreTranslate and DeepL list languages.
_NAMES = {
    "ar": "Arabic", "ast": "Asturian", "br": "Breton", "ca": "Catalan", "cs": "Czech",
    "cy": "Welsh", "da": "Danish", "de": "German", "el": "Greek", "en": "English",
    "eo": "Esperanto", "es": "Spanish", "eu": "Basque", "fi": "Finnish", "fr": "French",
    "ga": "Irish", "gl": "Galician", "he": "Hebrew", "hi": "Hindi", "hu": "Hungarian",
    "id": "Indonesian", "is": "Icelandic", "it": "Italian", "ja": "Japanese", "ko": "Korean",
    "nb": "Norwegian Bokmål", "nl": "Dutch", "nn": "Norwegian Nynorsk", "oc": "Occitan",
    "pl": "Polish", "pt": "Portuguese", "ro": "Romanian", "ru": "Russian", "sk": "Slovak",
    "sl": "Slovenian", "sv": "Swedish", "tr": "Turkish", "uk": "Ukrainian", "zh": "Chinese",
}  # fmt: skip


def english_name(code: str) -> str:
    """The language's English name (the code itself for one not in the table)."""
    return _NAMES.get(code, code)
