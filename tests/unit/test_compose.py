"""compose.yaml, the one-host distributed set-up: every command is one dragoman runs, every
variable one it reads, every image pinned, and nothing starts before what it needs is healthy."""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import typer
import yaml

from dragoman import __version__
from dragoman import cli as dragoman_cli
from dragoman.settings import Settings

COMPOSE = Path(__file__).resolve().parents[2] / "compose.yaml"
# Read outside Settings: by the logging set-up, and by the worker to name itself.
OTHER_VARIABLES = {"DRAGOMAN_LOG_LEVEL", "DRAGOMAN_WORKER_HOST"}
DRAGOMAN_IMAGE = f"dragoman:{__version__}"

Object = dict[str, Any]


@cache
def compose() -> Object:
    loaded: Object = yaml.safe_load(COMPOSE.read_text())
    return loaded


def services() -> dict[str, Object]:
    found: dict[str, Object] = compose()["services"]
    return found


def dragoman_services() -> dict[str, Object]:
    return {name: s for name, s in services().items() if s["image"] == DRAGOMAN_IMAGE}


def option(args: list[str], flag: str) -> str:
    return args[args.index(flag) + 1]


def seconds(duration: str) -> int:
    match = re.fullmatch(r"(\d+)([smh])", duration)
    assert match, duration
    return int(match[1]) * {"s": 1, "m": 60, "h": 3600}[match[2]]


def test_the_distributed_roles_run_from_the_image_built_here() -> None:
    roles = {s["command"][0] for s in dragoman_services().values()}
    assert roles == {"api", "watchdog", "worker"}
    for service in dragoman_services().values():
        assert service["build"] == "."
        assert "entrypoint" not in service  # the image's entrypoint is dragoman


def test_every_image_is_pinned_to_a_version() -> None:
    for name, service in services().items():
        repository, _, tag = service["image"].rpartition(":")
        assert repository and "/" not in tag, name
        assert re.fullmatch(r"\d+(\.\d+)+(-[a-z]+)?", tag), f"{name}: {service['image']}"


@pytest.mark.parametrize("name", sorted(dragoman_services()))
def test_every_command_parses_as_the_real_command_line(name: str) -> None:
    cli: Any = typer.main.get_command(dragoman_cli.app)
    role, *options = dragoman_services()[name]["command"]
    command = cli.get_command(cli.make_context("dragoman", [role]), role)
    assert command is not None, role
    command.make_context(role, list(options))  # no unknown option or value


def test_every_dragoman_variable_is_one_dragoman_reads(monkeypatch: pytest.MonkeyPatch) -> None:
    known = {f"DRAGOMAN_{field.upper()}" for field in Settings.model_fields} | OTHER_VARIABLES
    for name, service in dragoman_services().items():
        assert set(service["environment"]) <= known, name
        for variable, value in service["environment"].items():
            monkeypatch.setenv(variable, value)
        Settings()  # and its values pass the settings' checks


def test_the_urls_name_the_services_and_their_credentials() -> None:
    postgres = services()["postgres"]["environment"]
    rabbitmq = services()["rabbitmq"]["environment"]
    for service in dragoman_services().values():
        database = urlsplit(service["environment"]["DRAGOMAN_DATABASE_URL"])
        assert (database.scheme, database.hostname, database.port) == (
            "postgresql",
            "postgres",
            5432,
        )
        assert (database.username, database.password) == (
            postgres["POSTGRES_USER"],
            postgres["POSTGRES_PASSWORD"],
        )
        assert database.path == f"/{postgres['POSTGRES_DB']}"
        broker = urlsplit(service["environment"]["DRAGOMAN_BROKER_URL"])
        assert (broker.scheme, broker.hostname, broker.port) == ("amqp", "rabbitmq", 5672)
        assert (broker.username, broker.password) == (
            rabbitmq["RABBITMQ_DEFAULT_USER"],
            rabbitmq["RABBITMQ_DEFAULT_PASS"],
        )


def test_every_service_has_a_healthcheck_on_its_own_port() -> None:
    for name, service in services().items():
        test = service["healthcheck"]["test"]
        assert test[0] == "CMD", name
        if name in dragoman_services():
            port = option(service["command"], "--port")
            assert f"http://127.0.0.1:{port}/readyz" in test[-1], name
            assert option(service["command"], "--host") == "0.0.0.0", name


def test_nothing_starts_before_what_it_needs_is_healthy() -> None:
    for name, service in services().items():
        for needed, condition in service.get("depends_on", {}).items():
            assert condition == {"condition": "service_healthy"}, f"{name} → {needed}"
            assert "healthcheck" in services()[needed]
    for service in dragoman_services().values():
        assert set(service["depends_on"]) == {"postgres", "rabbitmq"}


def test_workers_have_time_to_finish_their_job_when_stopped() -> None:
    [worker] = [s for s in dragoman_services().values() if s["command"][0] == "worker"]
    assert option(worker["command"], "--pool") == "cpu"
    assert seconds(worker["stop_grace_period"]) >= 600


def test_the_api_is_published_on_its_port() -> None:
    [api] = [s for s in dragoman_services().values() if s["command"][0] == "api"]
    [published] = api["ports"]
    assert published.rsplit(":", 1)[1] == option(api["command"], "--port")


def test_every_volume_is_declared_and_the_models_are_shared() -> None:
    declared = set(compose()["volumes"])
    for name, service in services().items():
        for volume in service.get("volumes", []):
            assert volume.split(":")[0] in declared, name
    for service in dragoman_services().values():
        models = service["environment"]["DRAGOMAN_MODELS_DIR"]
        assert f"models:{models}" in service["volumes"]
