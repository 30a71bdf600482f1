"""Files in, files out over HTTP, in process with the real Apertium engine: a multipart job,
each file back in its own format, the formats listed, and every mistake a 4xx naming it."""

from __future__ import annotations

import subprocess
from typing import Any

import httpx
import pytest

from tests.api.helpers import assert_error, finished

FORM = {"source_lang": "en", "target_lang": "es"}


def apertium(text: str) -> str:
    """What ``apertium -u eng-spa`` gives ``text`` alone."""
    done = subprocess.run(
        ["apertium", "-u", "eng-spa"], input=text, capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


async def submit(
    client: httpx.AsyncClient, *files: tuple[str, bytes], **fields: str
) -> httpx.Response:
    return await client.post(
        "/v1/jobs",
        data={**FORM, **fields},
        files=[("files", (name, content)) for name, content in files],
    )


async def translated(
    client: httpx.AsyncClient, *files: tuple[str, bytes], **fields: str
) -> list[httpx.Response]:
    response = await submit(client, *files, **fields)
    assert response.status_code == 202, response.text
    job = await finished(client, response.json()["id"])
    assert job["status"] == "succeeded", job
    return [await client.get(f"/v1/jobs/{job['id']}/files/{n}") for n in range(len(files))]


async def test_a_text_file_comes_back_translated_line_by_line(client: httpx.AsyncClient) -> None:
    source = b"Hello world.\n\nThe red car is very fast.\n"
    response = await submit(client, ("notes.txt", source))
    assert response.status_code == 202, response.text
    job = response.json()
    assert (job["documents"], job["segments_total"]) == (1, 2)
    assert response.headers["location"] == f"/v1/jobs/{job['id']}"
    assert (await finished(client, job["id"]))["status"] == "succeeded"
    download = await client.get(f"/v1/jobs/{job['id']}/files/0")
    assert download.status_code == 200
    assert download.headers["content-disposition"] == 'attachment; filename="notes.es.txt"'
    assert download.headers["content-type"].startswith("text/plain")
    lines = download.content.decode().split("\n")
    # A one-sentence unit translates exactly as apertium gives that sentence alone.
    assert lines == [apertium("Hello world."), "", apertium("The red car is very fast."), ""]


async def test_every_file_of_a_job_is_its_own_document(client: httpx.AsyncClient) -> None:
    one, two = await translated(client, ("a.txt", b"Good morning.\n"), ("b.txt", b"Thank you.\n"))
    assert one.content.decode() == apertium("Good morning.") + "\n"
    assert two.content.decode() == apertium("Thank you.") + "\n"
    assert two.headers["content-disposition"].endswith('filename="b.es.txt"')


async def test_sentences_are_segments_and_rejoin_with_the_source_spacing(
    client: httpx.AsyncClient,
) -> None:
    response = await submit(client, ("p.txt", b"It is fast.   It stops.  \n"))
    job = await finished(client, response.json()["id"])
    assert job["segments_total"] == 2
    result = (await client.get(f"/v1/jobs/{job['id']}/result")).json()
    assert len(result["documents"][0]["segments"]) == 2
    text = (await client.get(f"/v1/jobs/{job['id']}/files/0")).content.decode()
    first, second = apertium("It is fast."), apertium("It stops.")
    assert text == f"{first}   {second}  \n"


async def test_segmentation_none_keeps_each_unit_whole(client: httpx.AsyncClient) -> None:
    response = await submit(client, ("p.txt", b"It is fast. It stops.\n"), segmentation="none")
    job = await finished(client, response.json()["id"])
    assert job["segments_total"] == 1


async def test_the_file_waits_for_the_job_unless_partial_is_asked(
    make_client: Any,
) -> None:
    client = await make_client(cpu_max_workers=1, cpu_standby_workers=0, cpu_min_workers=0)
    # With no worker allowed to start, the job stays queued.
    client = await make_client(cpu_max_workers=1)
    response = await submit(client, ("a.txt", b"Hello.\nGoodbye.\n"))
    job_id = response.json()["id"]
    early = await client.get(f"/v1/jobs/{job_id}/files/0")
    if early.status_code == 409:
        assert_error(early, 409, "not_finished")
        partial = await client.get(f"/v1/jobs/{job_id}/files/0", params={"partial": "true"})
        assert partial.status_code == 200
        assert partial.content.count(b"\n") == 2
    await finished(client, job_id)
    assert (await client.get(f"/v1/jobs/{job_id}/files/0")).status_code == 200


async def test_a_cancelled_job_gives_its_file_only_partially(client: httpx.AsyncClient) -> None:
    response = await submit(client, ("a.txt", b"Hello.\n" * 50))
    job_id = response.json()["id"]
    await client.delete(f"/v1/jobs/{job_id}")
    job = await finished(client, job_id)
    if job["status"] == "cancelled":
        assert_error(await client.get(f"/v1/jobs/{job_id}/files/0"), 409, "not_finished")
        partial = await client.get(f"/v1/jobs/{job_id}/files/0", params={"partial": "true"})
        assert partial.status_code == 200 and partial.content.count(b"\n") == 50


async def test_formats_are_listed_with_their_extensions(client: httpx.AsyncClient) -> None:
    formats = (await client.get("/v1/formats")).json()["formats"]
    by_name = {f["name"]: f for f in formats}
    expected = {"xliff", "po", "html", "docx", "pptx", "odt", "markdown", "srt", "json", "text"}
    assert expected <= set(by_name)
    assert by_name["xliff"]["extensions"] == [".xlf", ".xliff"]
    assert by_name["xliff"]["media_type"] == "application/xliff+xml"
    assert all(f["extensions"] and f["media_type"] for f in formats)


async def test_an_unknown_extension_is_a_415_listing_the_formats(
    client: httpx.AsyncClient,
) -> None:
    response = await submit(client, ("slides.key", b"whatever"))
    assert_error(response, 415, "unsupported_format")
    message = response.json()["error"]["message"]
    assert "slides.key" in message and ".xlf" in message and ".docx" in message


async def test_the_format_field_overrides_the_extension(client: httpx.AsyncClient) -> None:
    (download,) = await translated(client, ("README", b"Good morning.\n"), format="text")
    assert download.content.decode() == apertium("Good morning.") + "\n"
    assert download.headers["content-disposition"].endswith('filename="README.es"')
    assert_error(await submit(client, ("a.txt", b"x"), format="pdf"), 415, "unsupported_format")


@pytest.mark.parametrize(
    ("fields", "files", "status", "words"),
    [
        ({"source_lang": ""}, [("a.txt", b"Hi.")], 422, "source_lang"),
        ({}, [], 422, "files"),
        ({"colour": "red"}, [("a.txt", b"Hi.")], 422, "colour"),
        ({"callback_url": "http://x"}, [("a.txt", b"Hi.")], 409, "callback_url"),
        ({"segmentation": "words"}, [("a.txt", b"Hi.")], 422, "segmentation"),
        ({"priority": "urgent"}, [("a.txt", b"Hi.")], 422, "priority"),
        ({"target_lang": "xx"}, [("a.txt", b"Hi.")], 422, "xx"),
        ({"target_lang": "de"}, [("a.txt", b"Hi.")], 422, "en-de"),
        ({"engine": "nope"}, [("a.txt", b"Hi.")], 422, "nope"),
        ({}, [("empty.txt", b"\n\n")], 422, "empty.txt"),
        ({}, [("latin1.txt", "Café.\n".encode("latin-1"))], 422, "latin1.txt"),
        ({"memories": "ok,../etc"}, [("a.txt", b"Hi.")], 422, "../etc"),
        ({"memories": ",".join(f"m{i}" for i in range(17))}, [("a.txt", b"Hi.")], 422, "16"),
        ({"glossary": "a b"}, [("a.txt", b"Hi.")], 422, "glossary"),
        ({"cache": "maybe"}, [("a.txt", b"Hi.")], 422, "cache"),
    ],
)
async def test_a_bad_submission_is_a_4xx_that_names_what_is_wrong(
    client: httpx.AsyncClient,
    fields: dict[str, str],
    files: list[tuple[str, bytes]],
    status: int,
    words: str,
) -> None:
    response = await submit(client, *files, **fields)
    assert response.status_code == status, response.text
    assert words in response.json()["error"]["message"]


async def test_a_file_over_the_limit_is_a_413_naming_it(make_client: Any) -> None:
    client = await make_client(max_file_bytes=2048)
    response = await submit(client, ("big.txt", b"Hello.\n" * 1000))
    assert_error(response, 413, "payload_too_large")
    assert "big.txt" in response.json()["error"]["message"]


async def test_a_file_read_as_a_tree_has_a_lower_limit_of_its_own(make_client: Any) -> None:
    """HTML, Markdown, YAML and Android XML take 40 to 150 times their size to read."""
    client = await make_client(max_tree_file_bytes=2048)
    page = b"# Notes\n\nHello world.\n\n" * 150  # 3.5 kB
    response = await submit(client, ("notes.md", page))
    assert_error(response, 413, "payload_too_large")
    message = response.json()["error"]["message"]
    assert "notes.md" in message and "DRAGOMAN_MAX_TREE_FILE_BYTES" in message
    # The limit follows the format, whatever the name says.
    declared = await submit(client, ("notes.txt", page), format="html")
    assert_error(declared, 413, "payload_too_large")
    assert (await submit(client, ("notes.txt", page))).status_code == 202
    formats = {f["name"]: f for f in (await client.get("/v1/formats")).json()["formats"]}
    assert formats["markdown"]["max_bytes"] == formats["yaml"]["max_bytes"] == 2048
    assert formats["text"]["max_bytes"] == formats["xliff"]["max_bytes"] == 32 * 2**20


async def test_each_file_is_read_once_when_its_language_is_detected(
    client: httpx.AsyncClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    from dragoman.formats.text import TextFormat

    reads: list[str] = []
    extract = TextFormat.extract

    def counted(self: TextFormat, data: bytes, *, filename: str) -> Any:
        reads.append(filename)
        return extract(self, data, filename=filename)

    monkeypatch.setattr(TextFormat, "extract", counted)
    files = [("a.txt", b"Hello world.\nThe cat sleeps.\n"), ("b.txt", b"Bonjour le monde.\n")]
    response = await submit(client, *files, source_lang="auto")
    assert response.status_code == 202, response.text
    assert sorted(reads) == ["a.txt", "b.txt"]  # detection and segments from one reading
    job = await finished(client, response.json()["id"])
    assert job["status"] == "succeeded"


async def test_a_field_sent_as_a_file_is_refused(client: httpx.AsyncClient) -> None:
    response = await client.post(
        "/v1/jobs",
        data={"target_lang": "es"},
        files=[("source_lang", ("x", b"en")), ("files", ("a.txt", b"Hi."))],
    )
    assert_error(response, 422, "invalid_request")


async def test_a_missing_file_or_job_is_a_404(client: httpx.AsyncClient) -> None:
    (download,) = await translated(client, ("a.txt", b"Hi.\n"))
    job_id = download.url.path.split("/")[3]
    assert_error(await client.get(f"/v1/jobs/{job_id}/files/1"), 404, "not_found")
    assert_error(await client.get("/v1/jobs/nope/files/0"), 404, "not_found")
    assert_error(await client.get(f"/v1/jobs/{job_id}/files/-1"), 422, "invalid_request")


async def test_a_json_job_has_no_files(client: httpx.AsyncClient) -> None:
    body = {**FORM, "documents": [{"name": "a.txt", "segments": ["Hi."]}]}
    job = (await client.post("/v1/jobs", json=body)).json()
    await finished(client, job["id"])
    assert_error(await client.get(f"/v1/jobs/{job['id']}/files/0"), 404, "not_found")


async def test_another_tenants_file_is_not_found(make_client: Any) -> None:
    client = await make_client(api_keys="a:ka,b:kb")
    response = await client.post(
        "/v1/jobs",
        data=FORM,
        files=[("files", ("a.txt", b"Hi.\n"))],
        headers={"Authorization": "Bearer ka"},
    )
    job_id = response.json()["id"]
    other = await client.get(f"/v1/jobs/{job_id}/files/0", headers={"Authorization": "Bearer kb"})
    assert_error(other, 404, "not_found")


async def test_html_keeps_bold_on_the_translated_word(client: httpx.AsyncClient) -> None:
    page = b'<!DOCTYPE html>\n<html lang="en"><body><p>Hello <b>big</b> world.</p></body></html>\n'
    (download,) = await translated(client, ("page.html", page))
    assert download.headers["content-type"].startswith("text/html")
    assert b"<p>Hola Mundo <b>grande</b>.</p>" in download.content
    assert download.content.startswith(b'<!DOCTYPE html>\n<html lang="es">')


async def test_malformed_xml_is_a_422_naming_the_file_and_the_line(
    client: httpx.AsyncClient,
) -> None:
    xliff = b'<?xml version="1.0"?>\n<xliff version="1.2">\n<file>\n</xliff>\n'
    response = await submit(client, ("broken.xlf", xliff))
    assert_error(response, 422, "invalid_file")
    message = response.json()["error"]["message"]
    assert "broken.xlf" in message and "line 4" in message


async def test_an_entity_attack_is_refused_and_nothing_is_read(client: httpx.AsyncClient) -> None:
    xxe = (
        b'<?xml version="1.0"?>\n<!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]>\n'
        b'<xliff version="1.2"><file source-language="en"><body><trans-unit id="1">'
        b"<source>&e;</source></trans-unit></body></file></xliff>"
    )
    response = await submit(client, ("x.xlf", xxe))
    assert_error(response, 422, "invalid_file")
    assert "root:" not in response.text


async def test_a_docx_that_is_not_a_zip_is_a_422(client: httpx.AsyncClient) -> None:
    response = await submit(client, ("report.docx", b"Hello, I am text."))
    assert_error(response, 422, "invalid_file")
    assert "report.docx" in response.json()["error"]["message"]


async def test_a_file_name_outside_ascii_is_named_both_ways(client: httpx.AsyncClient) -> None:
    (download,) = await translated(client, ("café notes.txt", b"Good morning.\n"))
    disposition = download.headers["content-disposition"]
    assert disposition.startswith('attachment; filename="caf_ notes.es.txt"')
    assert "filename*=UTF-8''caf%C3%A9%20notes.es.txt" in disposition


async def test_control_characters_in_a_file_come_back_as_they_were(
    client: httpx.AsyncClient,
) -> None:
    # A form feed between pages, as old licence and RFC texts have: kept, never an error.
    # U+FFFF would end Apertium's input stream: it is kept out of the engine the same way.
    text = "Good morning.\x0cThank you.\uffff Good night.\n"
    (download,) = await translated(client, ("rfc.txt", text.encode()))
    assert download.content.decode() == (
        apertium("Good morning.")
        + "\x0c"
        + apertium("Thank you.")
        + "\uffff "
        + apertium("Good night.")
        + "\n"
    )


async def test_a_file_name_with_a_control_character_is_refused(client: httpx.AsyncClient) -> None:
    # Written by hand: httpx would escape the name.
    body = (
        b'--B\r\nContent-Disposition: form-data; name="source_lang"\r\n\r\nen\r\n'
        b'--B\r\nContent-Disposition: form-data; name="target_lang"\r\n\r\nes\r\n'
        b'--B\r\nContent-Disposition: form-data; name="files"; filename="a\x01b.txt"\r\n\r\n'
        b"Hi.\r\n--B--\r\n"
    )
    headers = {"content-type": "multipart/form-data; boundary=B"}
    response = await client.post("/v1/jobs", content=body, headers=headers)
    assert_error(response, 422, "invalid_request")
    assert "control character" in response.json()["error"]["message"]
