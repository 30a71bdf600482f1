"""TMX files for the tests: well-formed ones built from parts, and broken ones."""

from __future__ import annotations


def tmx(body: str, *, srclang: str = "en-US", version: str = "1.4") -> bytes:
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f'<tmx version="{version}"><header creationtool="t" creationtoolversion="1" '
        f'segtype="sentence" o-tmf="t" adminlang="en" srclang="{srclang}" datatype="plaintext"/>'
        f"<body>{body}</body></tmx>"
    ).encode()


def tu(*variants: tuple[str, str], changed: str | None = None) -> str:
    date = f' changedate="{changed}"' if changed else ""
    tuvs = "".join(f'<tuv xml:lang="{lang}"><seg>{seg}</seg></tuv>' for lang, seg in variants)
    return f"<tu{date}>{tuvs}</tu>"


def bilingual(*pairs: tuple[str, str], source: str = "en-US", target: str = "es-ES") -> bytes:
    return tmx("".join(tu((source, s), (target, t)) for s, t in pairs), srclang=source)


BROKEN: dict[str, tuple[bytes, str]] = {
    # name: (file, what the error message must say)
    "not xml": (b"source\ttarget\nHello\tHola\n", "malformed XML"),
    "not tmx": (b"<xliff version='1.2'><file/></xliff>", "not a TMX file"),
    "wrong version": (tmx(tu(("en", "a"), ("es", "b")), version="2.0"), "TMX version '2.0'"),
    "no version": (
        b"<tmx><header srclang='en'/><body>"
        + tu(("en", "a"), ("es", "b")).encode()
        + b"</body></tmx>",
        "no version",
    ),
    "no body": (b"<tmx version='1.4'><header srclang='en'/></tmx>", "no <body>"),
    "no header": (b"<tmx version='1.4'><body/></tmx>", "no <header>"),
    "no srclang": (b"<tmx version='1.4'><header/><body/></tmx>", "no srclang"),
    "empty body": (tmx(""), "has no <tu>"),
    "one language": (tmx(tu(("en-US", "Hello"), ("en-GB", "Hello"))), "fewer than two languages"),
    "no source variant": (tmx(tu(("fr", "Bonjour"), ("es", "Hola"))), "no variant in the source"),
    "tuv without lang": (
        tmx("<tu><tuv><seg>a</seg></tuv><tuv xml:lang='es'><seg>b</seg></tuv></tu>"),
        "no xml:lang",
    ),
    "tuv without seg": (
        tmx("<tu><tuv xml:lang='en'/><tuv xml:lang='es'><seg>b</seg></tuv></tu>"),
        "no <seg>",
    ),
    "bad language": (tmx(tu(("en", "a"), ("12", "b"))), "'12' is not a language"),
    "unknown inline": (tmx(tu(("en", "a <b>bold</b>"), ("es", "b"))), "<b> is not a TMX inline"),
    "entities": (
        b'<?xml version="1.0"?><!DOCTYPE tmx [<!ENTITY x "boom">]><tmx version="1.4">'
        b"<header srclang='en'/><body><tu><tuv xml:lang='en'><seg>&x;</seg></tuv>"
        b"<tuv xml:lang='es'><seg>b</seg></tuv></tu></body></tmx>",
        "DTD",
    ),
}
