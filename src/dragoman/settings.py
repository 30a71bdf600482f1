"""The one frozen settings object, read from ``DRAGOMAN_*`` variables and CLI flags."""

from __future__ import annotations

import base64
import os
import socket
from pathlib import Path
from typing import Annotated, Literal

from pydantic import Field, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from dragoman.errors import InvalidRequest
from dragoman.languages import canonical
from dragoman.models import Pool

# A neural model's sub-batch in tokens, or "auto" (measured when the model loads).
BatchTokens = Annotated[int, Field(ge=1)] | Literal["auto"]

ARGOS_INDEX = "https://raw.githubusercontent.com/argosopentech/argospm-index/main/index.json"


def _cores() -> int:
    return os.cpu_count() or 1


class Settings(BaseSettings):
    """Every knob of dragoman. Durations end in ``_s``; defaults serve the embedded mode."""

    model_config = SettingsConfigDict(env_prefix="DRAGOMAN_", frozen=True, extra="ignore")

    data_dir: Path = Path(".dragoman")
    database_url: str | None = None
    broker_url: str = "memory://"
    queue_prefix: str = "dragoman"
    worker_host: str = Field(default_factory=socket.gethostname)
    api_keys: str | None = None
    # Tenants of api_keys whose keys also see the whole fleet (GET /v1/fleet, the dashboard).
    operator_tenants: str | None = None
    host: str = "127.0.0.1"
    port: int = 8080
    # /healthz, /readyz and /metrics of the processes without the API: one default port
    # each, so that a watchdog, a worker and a scaler can share a host (0: any free port).
    watchdog_probe_port: int = Field(9100, ge=0, le=65535)
    worker_probe_port: int = Field(9101, ge=0, le=65535)
    scaler_probe_port: int = Field(9102, ge=0, le=65535)

    gpu_threshold_segments: int = Field(3000, ge=1)
    heartbeat_interval_s: float = Field(1.0, gt=0)
    heartbeat_timeout_s: float = Field(30.0, gt=0)
    max_attempts: int = Field(3, ge=1)
    result_retention_s: float = Field(7 * 24 * 3600.0, gt=0)
    sweep_interval_s: float = Field(1.0, gt=0)
    lease_ttl_s: float = Field(10.0, gt=0)
    worker_ttl_s: float = Field(10.0, gt=0)

    cpu_min_workers: int = Field(0, ge=0)
    cpu_max_workers: int = Field(default_factory=_cores, ge=1)
    cpu_standby_workers: int = Field(1, ge=0)
    cpu_scale_down_delay_s: float = Field(60.0, ge=0)
    gpu_min_workers: int = Field(0, ge=0)
    gpu_max_workers: int = Field(0, ge=0)
    gpu_standby_workers: int = Field(0, ge=0)
    gpu_scale_down_delay_s: float = Field(300.0, ge=0)
    cpu_scale_interval_s: float = Field(5.0, gt=0)
    gpu_scale_interval_s: float = Field(10.0, gt=0)
    cpu_scale_with_queued: bool = False
    gpu_scale_with_queued: bool = False
    cpu_queued_cap: int = Field(4, ge=0)
    gpu_queued_cap: int = Field(2, ge=0)

    max_segments_per_job: int = Field(1_000_000, ge=1)
    max_segment_chars: int = Field(10_000, ge=1)
    max_request_bytes: int = Field(64 * 1024 * 1024, ge=1024)
    max_file_bytes: int = Field(32 * 1024 * 1024, ge=1024)
    # HTML, Markdown, YAML and Android XML are read as a whole tree, 40 to 150 times a file's
    # size in memory: their files have a lower limit (formats.TREE_FORMATS).
    max_tree_file_bytes: int = Field(2 * 1024 * 1024, ge=1024)
    max_files_per_job: int = Field(1000, ge=1)
    sync_max_segments: int = Field(100, ge=1)
    sync_batch_delay_s: float = Field(0.002, ge=0)
    sync_batch_max_segments: int = Field(512, ge=1)
    chunk_segments: int = Field(1024, ge=1)
    gpu_chunk_segments: int = Field(4096, ge=1)
    batch_jobs: int = Field(16, ge=1)
    shard_segments: int = Field(50_000, ge=1)
    gpu_fallback_s: float = Field(30.0, ge=0)

    webhook_secret: str | None = None
    webhook_allow_private: bool = False
    webhook_timeout_s: float = Field(15.0, gt=0)
    # Seconds between attempts (the first is at once), as Standard Webhooks suggest: about
    # three days in all before a delivery is given up.
    webhook_retry_s: str = "5,300,1800,7200,18000,36000,50400,72000,86400"

    monthly_characters: int = Field(0, ge=0)  # per tenant; 0: no limit
    requests_per_minute: int = Field(0, ge=0)  # per tenant; 0: no limit
    # Per-tenant overrides: "tenant:characters_per_month:requests_per_minute,..."
    tenant_limits: str | None = None
    rate_limit_storage: str = "memory://"  # "redis://host:6379" shares counts between APIs
    usage_flush_s: float = Field(1.0, gt=0)
    # Idempotency-Key: how long a key's answer is kept (at least a day, as clients expect),
    # how long a retry waits for the first request with its key, and after how long a
    # first request that never answered (its process died) is given up.
    idempotency_ttl_s: float = Field(24 * 3600.0, ge=24 * 3600.0)
    idempotency_wait_s: float = Field(10.0, ge=0)
    idempotency_lease_s: float = Field(120.0, gt=0)
    # The longest an event stream stays open; a client then reconnects with Last-Event-ID
    # (browsers do by themselves), which spreads long streams over the API processes.
    events_max_s: float = Field(600.0, gt=0)
    # A DeepL document status asked while the job runs is answered once it ends, or after
    # this long: DeepL's SDKs sleep 5 s between polls, so a small document is done at the
    # first poll instead of the second. 0: answer at once.
    deepl_status_wait_s: float = Field(5.0, ge=0, le=60)

    # Glossaries, as DeepL bounds them: 1,000 per tenant, 1,024 UTF-8 bytes a term or name,
    # 10 MiB a file; entries per glossary bound the memory a glossary takes in each process.
    glossaries_per_tenant: int = Field(1000, ge=1)
    glossary_max_entries: int = Field(10_000, ge=1)
    glossary_max_term_bytes: int = Field(1024, ge=1)
    glossary_max_name_bytes: int = Field(1024, ge=1)
    glossary_max_file_bytes: int = Field(10 * 1024 * 1024, ge=1024)

    models_dir: Path = Path("models")
    engine_order: str = "ctranslate2,transformers,apertium"
    # A pair's default engine where it differs from engine_order: "en-es=apertium,fr-en=ct2".
    pair_engines: str = ""
    model_memory_mb: int = Field(4096, ge=1)
    max_loaded_models: int = Field(8, ge=1)  # per worker process; least recently used leave first
    # The package index `dragoman models` reads (Argos's format, a URL or a path).
    model_index: str = ARGOS_INDEX
    offline: bool = False  # no network: models come from files (`dragoman models install --from`)
    # Tokens per sub-batch of a neural model, or "auto": measured when each model loads
    # (engines/batch_size.py; CTranslate2 models, the transformers engine takes 16384/131072).
    neural_batch_tokens: BatchTokens = 16384
    gpu_batch_tokens: BatchTokens = 131072
    neural_max_output_tokens: int = Field(256, ge=1)
    neural_threads: int = Field(default_factory=_cores, ge=1)
    ct2_compute_type: str = "int8"
    ct2_gpu_compute_type: str = "float16"
    transformers_gpu_dtype: str = "bfloat16"
    gpu_device: str = "cuda"

    # The segment cache (ADR 0014): engine outputs reused across jobs, per tenant.
    cache: bool = True
    cache_max_segments: int = Field(1_000_000, ge=1)
    # Translated text is kept no longer than this after its last use (30 days, as Weblate).
    cache_max_age_s: float = Field(30 * 24 * 3600.0, gt=0)

    apertium_modes_dir: Path = Path("/usr/share/apertium/modes")
    apertium_pipelines_per_pair: int = Field(default_factory=lambda: max(1, min(4, _cores())), ge=1)
    apertium_max_uses: int = Field(2000, ge=1)
    apertium_read_timeout_s: float = Field(20.0, gt=0)
    apertium_idle_shutdown_s: float = Field(900.0, gt=0)

    @field_validator("api_keys")
    @classmethod
    def _keys_are_pairs(cls, value: str | None) -> str | None:
        if value:
            for item in value.split(","):
                tenant, sep, key = item.strip().partition(":")
                if not sep or not tenant or not key:
                    raise ValueError("DRAGOMAN_API_KEYS must look like 'tenant:key,tenant:key'")
        return value

    @model_validator(mode="after")
    def _operators_are_tenants(self) -> Settings:
        unknown = self.operators - set(self.tenants_by_key.values())
        if unknown:
            raise ValueError(
                "DRAGOMAN_OPERATOR_TENANTS names tenants without a key in DRAGOMAN_API_KEYS: "
                + ", ".join(sorted(unknown))
            )
        return self

    @field_validator("webhook_secret")
    @classmethod
    def _secret_is_whsec(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                raw = base64.b64decode(value.removeprefix("whsec_"), validate=True)
            except ValueError:
                raw = b""
            if not value.startswith("whsec_") or not 24 <= len(raw) <= 64:
                raise ValueError(
                    "DRAGOMAN_WEBHOOK_SECRET must be 'whsec_' and 24 to 64 bytes in base64"
                )
        return value

    @field_validator("webhook_retry_s")
    @classmethod
    def _retry_is_seconds(cls, value: str) -> str:
        try:
            delays = [float(item) for item in value.split(",") if item.strip()]
        except ValueError:
            delays = [-1.0]
        if any(delay < 0 for delay in delays):
            raise ValueError("DRAGOMAN_WEBHOOK_RETRY_S must be seconds: '5,300,1800'")
        return value

    @field_validator("tenant_limits")
    @classmethod
    def _limits_are_triples(cls, value: str | None) -> str | None:
        if value:
            for item in value.split(","):
                parts = item.strip().split(":")
                if len(parts) != 3 or not parts[0] or not all(p.isdigit() for p in parts[1:]):
                    raise ValueError(
                        "DRAGOMAN_TENANT_LIMITS must look like "
                        "'tenant:characters_per_month:requests_per_minute,...'"
                    )
        return value

    @field_validator("pair_engines")
    @classmethod
    def _pair_engines_name_pairs(cls, value: str) -> str:
        for item in filter(str.strip, value.split(",")):
            pair, sep, engine = item.strip().partition("=")
            source, dash, target = pair.strip().partition("-")
            try:
                codes = [canonical(source.strip()), canonical(target.strip())]
            except InvalidRequest:
                codes = []
            if not (sep and dash and engine.strip() and codes):
                raise ValueError(
                    "DRAGOMAN_PAIR_ENGINES must look like 'en-es=apertium,fr-en=ctranslate2' "
                    f"(language codes of ISO 639), not {item.strip()!r}"
                )
        return value

    @property
    def webhook_delays(self) -> list[float]:
        """Seconds to wait before each retry of a notification, in order."""
        return [float(item) for item in self.webhook_retry_s.split(",") if item.strip()]

    def limits_of(self, tenant: str | None) -> tuple[int, int]:
        """``(characters per month, requests per minute)`` of a tenant; 0 means no limit."""
        for item in (self.tenant_limits or "").split(","):
            name, _, rest = item.strip().partition(":")
            if name and name == tenant:
                characters, _, requests = rest.partition(":")
                return int(characters), int(requests)
        return self.monthly_characters, self.requests_per_minute

    @property
    def tenants_by_key(self) -> dict[str, str]:
        """Maps each API key to its tenant; empty when authentication is off."""
        if not self.api_keys:
            return {}
        pairs = (item.strip().partition(":") for item in self.api_keys.split(","))
        return {key: tenant for tenant, _, key in pairs}

    @property
    def operators(self) -> frozenset[str]:
        """The tenants whose keys see the fleet's figures (empty: none named)."""
        return frozenset(t.strip() for t in (self.operator_tenants or "").split(",") if t.strip())

    @property
    def resolved_database_url(self) -> str:
        """The SQLAlchemy async URL: plain ``postgresql://`` and ``sqlite:///`` are accepted."""
        url = self.database_url or f"sqlite:///{self.data_dir / 'dragoman.db'}"
        if url.startswith("sqlite:///"):
            return "sqlite+aiosqlite:///" + url.removeprefix("sqlite:///")
        for prefix in ("postgresql://", "postgres://"):
            if url.startswith(prefix):
                return "postgresql+asyncpg://" + url.removeprefix(prefix)
        return url

    def chunk_size(self, pool: Pool) -> int:
        """Segments per engine call: GPUs want far larger batches than CPUs."""
        return self.chunk_segments if pool is Pool.CPU else self.gpu_chunk_segments

    @property
    def engine_preference(self) -> list[str]:
        return [name.strip() for name in self.engine_order.split(",") if name.strip()]

    @property
    def pair_engine_defaults(self) -> dict[str, str]:
        """``pair_engines`` as ``{"en-es": "apertium"}``."""
        table: dict[str, str] = {}
        for item in self.pair_engines.split(","):
            pair, sep, engine = item.partition("=")
            if sep and pair.strip() and engine.strip():
                table[pair.strip()] = engine.strip()
        return table

    def max_workers(self, pool: Pool) -> int:
        return self.cpu_max_workers if pool is Pool.CPU else self.gpu_max_workers
