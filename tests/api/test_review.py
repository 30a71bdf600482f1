"""``review_below`` on a job of the real Apertium engine, which gives no confidence: nothing
is counted or listed to review, and files keep their marking; a threshold that is no
number from 0 to 1 is refused with the JSON error body, in a JSON job as in a form."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from lxml import etree

from tests.api.helpers import assert_error, finished, job_body
from tests.formats.xliff_rules import X1, check_v12

XLIFF = b"""<?xml version="1.0" encoding="UTF-8"?>
<xliff version="1.2" xmlns="urn:oasis:names:tc:xliff:document:1.2">
  <file source-language="en" datatype="plaintext" original="ui">
    <body>
      <trans-unit id="a"><source>The dog eats.</source></trans-unit>
    </body>
  </file>
</xliff>
"""


async def test_an_apertium_job_has_nothing_to_review_for_want_of_scores(
    client: httpx.AsyncClient,
) -> None:
    answer = await client.post("/v1/jobs", json=job_body("Hello world.", review_below=0.99))
    assert answer.status_code == 202, answer.text
    assert (answer.json()["review_below"], answer.json()["segments_to_review"]) == (0.99, 0)
    job = await finished(client, answer.json()["id"])
    assert (job["status"], job["segments_to_review"]) == ("succeeded", 0)
    [doc] = (await client.get(f"/v1/jobs/{job['id']}/result")).json()["documents"]
    assert (doc["engines"], doc["confidences"], doc["review"]) == (["apertium"], [None], [])


async def test_an_apertium_xliff_keeps_its_machine_marking_and_gets_no_score(
    client: httpx.AsyncClient,
) -> None:
    answer = await client.post(
        "/v1/jobs",
        data={"source_lang": "en", "target_lang": "es", "review_below": "0.5"},
        files={"files": ("ui.xlf", XLIFF)},
    )
    assert answer.status_code == 202, answer.text
    await finished(client, answer.json()["id"])
    root = etree.fromstring((await client.get(f"/v1/jobs/{answer.json()['id']}/files/0")).content)
    check_v12(root)
    target = next(root.iter(f"{X1}target"))
    assert target.get("state") == "needs-review-translation"
    assert next(root.iter(f"{X1}context-group"), None) is None


@pytest.mark.parametrize("value", [-1, 2, "x", "0.5", True, 1.5, -0.001])
async def test_a_json_threshold_outside_0_to_1_or_not_a_number_is_refused(
    client: httpx.AsyncClient, value: Any
) -> None:
    answer = await client.post("/v1/jobs", json=job_body("Hello.", review_below=value))
    assert_error(answer, 422, "invalid_request")
    assert "review_below" in answer.json()["error"]["message"]


@pytest.mark.parametrize("value", ["-1", "2", "x", "nan", "inf"])
async def test_a_form_threshold_outside_0_to_1_or_not_a_number_is_refused(
    client: httpx.AsyncClient, value: str
) -> None:
    answer = await client.post(
        "/v1/jobs",
        data={"source_lang": "en", "target_lang": "es", "review_below": value},
        files={"files": ("ui.xlf", XLIFF)},
    )
    assert_error(answer, 422, "invalid_request")
    assert "review_below" in answer.json()["error"]["message"]


@pytest.mark.parametrize("value", [0, 1, 0.25])
async def test_the_bounds_and_any_number_between_are_taken(
    client: httpx.AsyncClient, value: float
) -> None:
    answer = await client.post("/v1/jobs", json=job_body("Hello.", review_below=value))
    assert answer.status_code == 202, answer.text
    assert answer.json()["review_below"] == value
    await finished(client, answer.json()["id"])
