"""DeepL's documents as DeepL's own Python SDK meets them, over a real socket (``dragoman
serve`` with the real Apertium pairs): a file that cannot be translated is refused in
DeepL's words, and document ids and keys are written as DeepL writes them and read back in
any case."""

from __future__ import annotations

import re
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import deepl
import httpx
import pytest

from tests.integration.server import Server

pytestmark = pytest.mark.integration

ES = {"source_lang": "EN", "target_lang": "ES"}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    running = Server(tmp_path_factory.mktemp("deepl-documents") / "data").start()
    try:
        yield running
    finally:
        if running.proc is not None:
            running.stop(signal.SIGKILL)


@pytest.fixture
def http(server: Server) -> Iterator[httpx.Client]:
    with server.client() as client:
        yield client


@pytest.fixture
def translator(server: Server) -> Iterator[deepl.Translator]:
    found = deepl.Translator("any-key", server_url=server.url)
    yield found
    found.close()  # type: ignore[no-untyped-call]


def upload(http: httpx.Client, name: str, content: bytes, **fields: str) -> httpx.Response:
    return http.post("/v2/document", data={**ES, **fields}, files={"file": (name, content)})


@pytest.mark.parametrize(
    ("name", "content", "detail"),
    [
        ("notes.xyz", b"Hello world.", "notes.xyz: .xyz is not a supported format"),
        ("notes", b"Hello world.", "notes: no extension is not a supported format"),
        ("empty.txt", b"", "empty.txt"),
        ("letter.docx", b"not a zip archive", "letter.docx"),
        ("latin.txt", "Caf\u00e9 cr\u00e8me.".encode("latin-1"), "latin.txt"),
    ],
)
def test_a_file_that_cannot_be_read_is_invalid_file_data(
    http: httpx.Client, name: str, content: bytes, detail: str
) -> None:
    response = upload(http, name, content)
    assert response.status_code == 400, response.text
    assert response.json()["message"] == "Invalid file data."
    assert response.json()["detail"].startswith(detail)
    assert http.get("/v1/jobs").json()["jobs"] == []  # nothing was queued


def test_the_sdk_raises_deepls_words(translator: deepl.Translator, tmp_path: Path) -> None:
    # deepl-python's own test_invalid_document, against this server.
    document = tmp_path / "document.invalid"
    document.write_text("Hello world.")
    with pytest.raises(deepl.DeepLException, match=r"(Invalid file)|(file extension)") as refused:
        translator.translate_document_from_filepath(
            document, tmp_path / "out.invalid", source_lang="EN", target_lang="ES"
        )
    assert refused.value.http_status_code == 400
    assert "message: Invalid file data., detail: document.invalid" in str(refused.value)
    with pytest.raises(deepl.DeepLException, match=r"message: Invalid file data\.") as empty:
        translator.translate_document_upload(
            b"", filename="empty.txt", source_lang="EN", target_lang="ES"
        )
    assert empty.value.http_status_code == 400
    with pytest.raises(deepl.DeepLException) as same:
        translator.translate_document_upload(
            b"Hello world.", filename="a.txt", source_lang="EN", target_lang="EN-US"
        )
    assert same.value.http_status_code == 400
    assert str(same.value) == "Bad request, message: Source and target language are equal."


def test_ids_and_keys_are_deepls_form_in_any_case(
    translator: deepl.Translator, http: httpx.Client
) -> None:
    handle = translator.translate_document_upload(
        b"Hello world.\n", filename="a.txt", source_lang="EN", target_lang="ES"
    )
    assert re.fullmatch("[0-9A-F]{32}", handle.document_id)
    assert re.fullmatch("[0-9A-F]{64}", handle.document_key)
    lower = deepl.DocumentHandle(handle.document_id.lower(), handle.document_key.lower())
    deadline = time.monotonic() + 30
    while not (status := translator.translate_document_get_status(lower)).done:
        assert status.ok and time.monotonic() < deadline
        time.sleep(0.2)
    raw = http.post(f"/v2/document/{lower.document_id}", json={"document_key": lower.document_key})
    assert raw.json()["document_id"] == handle.document_id
    downloaded = translator.translate_document_download(lower)
    assert downloaded is not None
    body = {"source_lang": "en", "target_lang": "es", "segments": ["Hello world."]}
    v1 = http.post("/v1/translate", json=body)
    assert downloaded.text == v1.json()["translations"][0] + "\n"
    job = http.get(f"/v1/jobs/{handle.document_id.lower()}")  # the job id, as v1 shows it
    assert (job.status_code, job.json()["status"]) == (200, "succeeded")
    assert job.json()["id"] == handle.document_id.lower()


@pytest.mark.parametrize(
    "document_id",
    ["abc", "G" * 32, "0" * 31, "0" * 33, "0" * 32, "\u00e9" * 32],
)
def test_an_id_that_is_no_document_is_not_found_alike(http: httpx.Client, document_id: str) -> None:
    for path in (f"/v2/document/{document_id}", f"/v2/document/{document_id}/result"):
        response = http.post(path, json={"document_key": "0" * 64})
        assert response.status_code == 404, response.text
        assert response.json() == {"message": "Document not found"}


def test_a_wrong_key_is_not_found_alike(translator: deepl.Translator, http: httpx.Client) -> None:
    handle = translator.translate_document_upload(
        b"Hello world.\n", filename="a.txt", source_lang="EN", target_lang="ES"
    )
    for key in ("0" * 64, "k", "\u00e9t\u00e9", handle.document_key[:-1]):
        response = http.post(f"/v2/document/{handle.document_id}", json={"document_key": key})
        assert response.status_code == 404, response.text
        assert response.json() == {"message": "Document not found"}


def test_the_sdk_finds_a_small_document_done_at_its_first_poll(
    translator: deepl.Translator, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The SDK sleeps 5 s before each further poll: a small document, answered when its job
    ends, needs none."""
    polls: list[str] = []
    ask = translator.translate_document_get_status

    def counted(handle: deepl.DocumentHandle) -> deepl.DocumentStatus:
        polls.append(handle.document_id)
        return ask(handle)

    monkeypatch.setattr(translator, "translate_document_get_status", counted)
    given, out = tmp_path / "notes.txt", tmp_path / "notes.es.txt"
    given.write_text("Hello world.\n")
    status = translator.translate_document_from_filepath(given, out, **ES)
    assert status.done and out.read_text() == "Hola Mundo.\n"
    assert len(polls) == 1
