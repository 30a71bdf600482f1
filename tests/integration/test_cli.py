"""``dragoman translate`` and ``dragoman jobs`` against a running server."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.integration.server import Server


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with Server(tmp_path_factory.mktemp("cli") / "data") as running:
        yield running


def dragoman(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "dragoman.cli", *args], capture_output=True, text=True, timeout=120
    )


def test_translate_writes_each_file_beside_its_source(server: Server, tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("Hello world.\n\nThe cat.\n", encoding="utf-8")
    (tmp_path / "b.txt").write_text("Good morning.\n", encoding="utf-8")
    done = dragoman(
        "translate",
        str(tmp_path / "a.txt"),
        str(tmp_path / "b.txt"),
        "--from",
        "en",
        "--to",
        "es",
        "--server",
        server.url,
    )
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "a.es.txt").read_text(encoding="utf-8") == "Hola Mundo.\n\nEl gato.\n"
    assert (tmp_path / "b.es.txt").read_text(encoding="utf-8") == "Buenos días.\n"


def test_translate_marks_unknown_words_only_when_asked(server: Server, tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("The zorblax sleeps.\n", encoding="utf-8")
    (tmp_path / "b.html").write_bytes(b"<p>The zorblax sleeps.</p>\n")
    files = [str(tmp_path / "a.txt"), str(tmp_path / "b.html")]
    common = ["--from", "en", "--to", "es", "--server", server.url]
    done = dragoman("translate", *files, *common)
    assert done.returncode == 0, done.stderr
    plain = (tmp_path / "a.es.txt").read_text(encoding="utf-8")
    assert "zorblax" in plain and "*" not in plain
    assert b"*zorblax" not in (tmp_path / "b.es.html").read_bytes()
    done = dragoman("translate", *files, *common, "--mark-unknown")
    assert done.returncode == 0, done.stderr
    assert "*zorblax" in (tmp_path / "a.es.txt").read_text(encoding="utf-8")
    assert b"*zorblax" in (tmp_path / "b.es.html").read_bytes()


def test_translate_reports_a_bad_pair_and_fails(server: Server, tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("Hello.\n", encoding="utf-8")
    done = dragoman(
        "translate", str(tmp_path / "a.txt"), "--from", "en", "--to", "zz", "--server", server.url
    )
    assert done.returncode == 1
    assert "unsupported_language_pair" in done.stderr
    assert not (tmp_path / "a.zz.txt").exists()


def test_jobs_lists_recent_jobs(server: Server, tmp_path: Path) -> None:
    (tmp_path / "c.txt").write_text("The dog.\n", encoding="utf-8")
    assert (
        dragoman(
            "translate",
            str(tmp_path / "c.txt"),
            "--from",
            "en",
            "--to",
            "es",
            "--server",
            server.url,
        ).returncode
        == 0
    )
    listed = dragoman("jobs", "--server", server.url, "--status", "succeeded")
    assert listed.returncode == 0
    assert "succeeded" in listed.stdout and "en-es" in listed.stdout


def test_translate_gives_files_back_in_their_own_format(server: Server, tmp_path: Path) -> None:
    page = tmp_path / "page.html"
    page.write_bytes(b"<html><body><p>Hello <b>big</b> world.</p></body></html>\n")
    catalog = tmp_path / "app.pot"
    catalog.write_text('msgid ""\nmsgstr ""\n\nmsgid "Good morning."\nmsgstr ""\n')
    done = dragoman(
        "translate", str(page), str(catalog), "--from", "en", "--to", "es", "--server", server.url
    )
    assert done.returncode == 0, done.stderr
    assert b"<p>Hola Mundo <b>grande</b>.</p>" in (tmp_path / "page.es.html").read_bytes()
    import polib

    (entry,) = polib.pofile(str(tmp_path / "app.es.po"))
    assert (entry.msgid, entry.msgstr) == ("Good morning.", "Buenos días.")
    assert "fuzzy" in entry.flags


def test_translate_names_a_file_of_no_known_format(server: Server, tmp_path: Path) -> None:
    (tmp_path / "deck.key").write_bytes(b"\x00\x01")
    done = dragoman(
        "translate",
        str(tmp_path / "deck.key"),
        "--from",
        "en",
        "--to",
        "es",
        "--server",
        server.url,
    )
    assert done.returncode == 1
    assert "deck.key" in done.stderr and ".docx" in done.stderr


def translated_alone(server: Server, target: str, segments: list[str]) -> list[str]:
    """Each segment translated alone into ``target``, through ``/v1/translate``."""
    body = {"source_lang": "en", "target_lang": target, "segments": segments}
    response = httpx.post(f"{server.url}/v1/translate", json=body, timeout=60)
    assert response.status_code == 200, response.text
    translations: list[str] = response.json()["translations"]
    return translations


def test_translate_into_several_languages_writes_each_file_once_per_target(
    server: Server, tmp_path: Path
) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("Hello world.\n\nThe cat.\n", encoding="utf-8")
    page = tmp_path / "page.html"
    page.write_bytes(b"<html><body><p>Good morning.</p></body></html>\n")
    done = dragoman(
        "translate", str(notes), str(page), "--from", "en", "--to", "es, ca,fr",
        "--server", server.url,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    for target in ("es", "ca", "fr"):
        hello, cat, morning = translated_alone(
            server, target, ["Hello world.", "The cat.", "Good morning."]
        )
        assert (tmp_path / f"notes.{target}.txt").read_text(encoding="utf-8") == (
            f"{hello}\n\n{cat}\n"
        )
        assert f"<p>{morning}</p>".encode() in (tmp_path / f"page.{target}.html").read_bytes()
        assert f"→ {target} ━" in done.stderr  # the target's own progress bar
    assert (tmp_path / "notes.es.txt").read_text(encoding="utf-8") == "Hola Mundo.\n\nEl gato.\n"
    # Two jobs, files and text lines, each into the three languages.
    listed = dragoman("jobs", "--server", server.url, "--limit", "2")
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.count("en-es,ca,fr") == 2


def test_translate_into_languages_given_twice_writes_each_once(
    server: Server, tmp_path: Path
) -> None:
    (tmp_path / "a.txt").write_text("Good night.\n", encoding="utf-8")
    done = dragoman(
        "translate", str(tmp_path / "a.txt"), "--from", "en", "--to", "ES,spa,ca",
        "--server", server.url,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    # The server names each language once, by its code: the outputs follow it.
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.ca.txt", "a.es.txt", "a.txt"]
    (night,) = translated_alone(server, "es", ["Good night."])
    assert (tmp_path / "a.es.txt").read_text(encoding="utf-8") == f"{night}\n"


def test_translate_into_a_language_with_no_route_among_several_writes_nothing(
    server: Server, tmp_path: Path
) -> None:
    (tmp_path / "a.txt").write_text("Hello.\n", encoding="utf-8")
    done = dragoman(
        "translate", str(tmp_path / "a.txt"), "--from", "en", "--to", "es,zz",
        "--server", server.url,
    )  # fmt: skip
    assert done.returncode == 1
    assert "en-zz" in done.stderr and "unsupported_language_pair" in done.stderr
    assert [p.name for p in tmp_path.iterdir()] == ["a.txt"]
