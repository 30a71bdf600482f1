"""The shards of a job into several languages (``jobs.shards.shards_of``): each target's
own copy of the segments, by the engine of its own pair, range by range with the targets
of a range side by side; and each target's status from its shards' (``store.targets``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from dragoman.engines import Engines, Pair
from dragoman.jobs.shards import Run, shards_of
from dragoman.models import Job, JobStatus, Pool
from dragoman.settings import Settings
from dragoman.store.targets import status_of
from tests.unit.test_pivot import Reorder

EN_ES, EN_CA, ES_FR = Pair("en", "es"), Pair("en", "ca"), Pair("es", "fr")


def a_job(segments: int, targets: tuple[str, ...]) -> Job:
    return Job(
        id="p",
        tenant=None,
        source_lang="en",
        target_lang=targets[0],
        engine="apertium",
        pool=Pool.CPU,
        documents=1,
        segments_total=segments * len(targets),
        targets=targets if len(targets) > 1 else (),
    )


def settings(tmp_path: Path, size: int) -> Settings:
    return Settings(data_dir=tmp_path, shard_segments=size)


def test_each_target_gets_its_ranges_side_by_side_by_its_own_engine(tmp_path: Path) -> None:
    engines = Engines([Reorder("apertium", [EN_ES, EN_CA, ES_FR])])
    job = a_job(5, ("es", "ca", "fr"))
    shards = shards_of(job, settings(tmp_path, 3), engines)
    assert [
        (s.target_lang, s.engine, s.first_position, s.end_position, s.segments_total)
        for s in shards
    ] == [
        ("es", "apertium", 0, 2, 2),
        ("ca", "apertium", 5, 7, 2),
        ("fr", "pivot", 10, 12, 2),
        ("es", "apertium", 2, 5, 3),
        ("ca", "apertium", 7, 10, 3),
        ("fr", "pivot", 12, 15, 3),
    ]
    assert all(s.parent_id == "p" and s.targets == () and s.shards == 0 for s in shards)
    # Made in order, keyed in order (``new_job_id``).
    assert [s.id for s in shards] == sorted(s.id for s in shards)


def test_a_small_job_into_several_languages_has_a_shard_per_target(tmp_path: Path) -> None:
    engines = Engines([Reorder("apertium", [EN_ES, EN_CA])])
    shards = shards_of(a_job(2, ("es", "ca")), settings(tmp_path, 50), engines)
    assert [(s.target_lang, s.first_position, s.end_position) for s in shards] == [
        ("es", 0, 2),
        ("ca", 2, 4),
    ]
    # One target, small: no shard at all, as ever.
    assert shards_of(a_job(2, ("es",)), settings(tmp_path, 50), engines) == []


def test_documents_in_several_languages_into_several_targets(tmp_path: Path) -> None:
    engines = Engines([Reorder("apertium", [EN_ES, Pair("fr", "es"), EN_CA])])
    job = a_job(4, ("es", "ca"))
    runs = [Run("en", 0, 2), Run("fr", 2, 4)]
    with pytest.raises(Exception, match="fr-ca"):
        shards_of(job, settings(tmp_path, 50), engines, runs)
    only_es = a_job(4, ("es",))
    shards = shards_of(only_es, settings(tmp_path, 50), engines, runs)
    assert [(s.source_lang, s.first_position, s.end_position) for s in shards] == [
        ("en", 0, 2),
        ("fr", 2, 4),
    ]


@pytest.mark.parametrize(
    ("statuses", "status"),
    [
        ({JobStatus.SUCCEEDED}, JobStatus.SUCCEEDED),
        ({JobStatus.SUCCEEDED, JobStatus.QUEUED}, JobStatus.RUNNING),
        ({JobStatus.RUNNING, JobStatus.QUEUED}, JobStatus.RUNNING),
        ({JobStatus.SUBMITTED, JobStatus.QUEUED}, JobStatus.SUBMITTED),
        ({JobStatus.QUEUED}, JobStatus.QUEUED),
        ({JobStatus.FAILED, JobStatus.CANCELLED}, JobStatus.FAILED),
        ({JobStatus.CANCELLED, JobStatus.SUCCEEDED}, JobStatus.CANCELLED),
    ],
)
def test_a_targets_status_follows_its_shards(statuses: set[JobStatus], status: JobStatus) -> None:
    assert status_of(statuses) is status
