"""Where glossary terms are found and what they become: the matching rules users expect,
and placeholders that survive an engine or are refused."""

from __future__ import annotations

import pytest

from dragoman.formats.markup import Code, Marked, parse_stored
from dragoman.glossaries import Entry, Terms
from dragoman.glossaries.masking import mask, unmask

GLOSSARY = Terms.of(
    [
        Entry("server", "servidor"),
        Entry("machine translation", "traducción automática"),
        Entry("translation engine", "motor de traducción"),
        Entry("translation", "traducción"),
        Entry("log in", "iniciar sesión"),
        Entry("API", "API"),
        Entry("Dragoman", "Dragoman"),
        Entry("GitHub", "GitHub"),
        Entry("C++", "C++"),
        Entry(".NET", ".NET"),
        Entry("naïve", "ingenuo"),
        Entry("straße", "calle"),
    ]
)


def replaced(text: str, terms: Terms = GLOSSARY) -> str:
    """``text`` with each hit replaced, as the engine would never see it."""
    out, pos = "", 0
    for hit in terms.find(text):
        out += text[pos : hit.start] + f"[{hit.replacement}]"
        pos = hit.end
    return out + text[pos:]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("The server is down.", "The [servidor] is down."),
        ("Server restarts are slow.", "[Servidor] restarts are slow."),  # sentence start
        ("THE SERVER IS DOWN", "THE [SERVIDOR] IS DOWN"),
        ("(server), server; server's log", "([servidor]), [servidor]; [servidor]'s log"),
        ("servers, webserver, server2, e-server", "servers, webserver, server2, e-server"),
        ("server-side", "server-side"),  # a hyphen between letters joins a word
        ("Log  in\nnow", "[Iniciar sesión]\nnow"),  # any whitespace between the words
    ],
)
def test_whole_words_in_the_case_of_the_text(text: str, expected: str) -> None:
    assert replaced(text) == expected


def test_longest_and_leftmost_win_among_overlapping_terms() -> None:
    assert replaced("machine translation engine") == "[traducción automática] engine"
    assert replaced("the translation engine") == "the [motor de traducción]"
    assert replaced("a translation") == "a [traducción]"


def test_an_entry_with_capitals_matches_only_its_spelling() -> None:
    assert replaced("the API and the api") == "the [API] and the api"
    assert replaced("dragoman, Dragoman, DRAGOMAN") == "dragoman, [Dragoman], DRAGOMAN"
    exact_wins = Terms.of([Entry("apple", "manzana"), Entry("Apple", "Apple")])
    assert replaced("Apple sells an apple. Apples.", exact_wins) == (
        "[Apple] sells an [manzana]. Apples."
    )


def test_a_kept_term_stays_as_the_text_has_it() -> None:
    keep = Terms.of([Entry("dragoman", "dragoman")])
    assert replaced("Dragoman and DRAGOMAN", keep) == "[Dragoman] and [DRAGOMAN]"


def test_terms_beginning_or_ending_with_a_symbol() -> None:
    assert replaced("C++ and ASP.NET and .NET, C+") == "[C++] and ASP[.NET] and [.NET], C+"


def test_unicode_words() -> None:
    assert (
        replaced("Naïve, naïveté; STRASSE and Straße") == "[Ingenuo], naïveté; [CALLE] and [Calle]"
    )
    assert replaced("le serveur", Terms.of([Entry("serveur", "server")])) == "le [server]"
    assert replaced("l'ordinateur", Terms.of([Entry("ordinateur", "computer")])) == "l'[computer]"


def test_an_empty_glossary_finds_nothing() -> None:
    assert Terms.of([]).find("anything at all") == []


def test_placeholders_are_put_back_with_the_engines_unknown_mark_dropped() -> None:
    masked = mask(Marked.of(["Restart the server, then *log in*."]), GLOSSARY)
    sent = masked.sent.plain
    assert "server" not in sent and "log in" not in sent
    first, second = (p.token for p in masked.placeholders)
    # What Apertium gives back: unknown words marked with one more "*".
    out = f"Retomar el *{first}, entonces **{second}*."
    back = unmask(Marked.of([out]), masked)
    assert back is not None and back.plain == "Retomar el servidor, entonces *iniciar sesión*."


def test_a_placeholder_lost_doubled_or_invented_is_refused() -> None:
    masked = mask(Marked.of(["The server and the API."]), GLOSSARY)
    first, second = (p.token for p in masked.placeholders)
    assert unmask(Marked.of([f"El {first} y."]), masked) is None
    assert unmask(Marked.of([f"{first} {first} {second}"]), masked) is None
    assert unmask(Marked.of([f"{first} {second} {first[:-1]}Z"]), masked) is None
    ok = unmask(Marked.of([f"{second.lower()} y {first}"]), masked)  # case may change
    assert ok is not None and ok.plain == "API y servidor"


def test_a_segment_holding_the_placeholder_letters_gets_others() -> None:
    masked = mask(Marked.of(["zxqa server"]), GLOSSARY)
    (only,) = masked.placeholders
    assert not only.token.startswith("ZXQ")
    assert unmask(Marked.of([f"zxqa {only.token}"]), masked) == Marked.of(["zxqa servidor"])


def test_terms_inside_markup_keep_the_codes() -> None:
    segment = parse_stored("<g1>Server</g1> docs: see the <g2>API</g2> &amp; <x3/>server")
    masked = mask(segment, GLOSSARY)
    assert masked.sent.codes == segment.codes
    assert len(masked.placeholders) == 3
    a, b, c = (p.token for p in masked.placeholders)
    out = Marked.of([Code("open", 1), a, Code("close", 1), " ver ", Code("open", 2), b])
    out += Marked.of([Code("close", 2), " & ", Code("ph", 3), c])
    back = unmask(out, masked)
    assert back is not None
    assert back.stored() == "<g1>Servidor</g1> ver <g2>API</g2> &amp; <x3/>servidor"
