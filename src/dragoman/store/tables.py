"""The schema, as SQLAlchemy Core tables; Alembic migrations create it."""

from __future__ import annotations

from sqlalchemy import (
    BigInteger,
    Boolean,
    Column,
    DateTime,
    Float,
    ForeignKey,
    ForeignKeyConstraint,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
    false,
    text,
    true,
)

metadata = MetaData()

jobs = Table(
    "jobs",
    metadata,
    Column(
        "seq", BigInteger().with_variant(Integer, "sqlite"), primary_key=True, autoincrement=True
    ),
    Column("id", String(32), nullable=False, unique=True),
    Column("tenant", String(128), nullable=True),
    Column("source_lang", String(16), nullable=False),
    Column("target_lang", String(16), nullable=False),
    Column("engine", String(64), nullable=False),
    Column("pool", String(8), nullable=False),
    Column("priority", String(8), nullable=False),
    Column("status", String(16), nullable=False),
    Column("documents", Integer, nullable=False),
    Column("segments_total", Integer, nullable=False),
    Column("segments_done", Integer, nullable=False, default=0),
    Column("attempts", Integer, nullable=False, default=0),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("submitted_at", DateTime(timezone=True)),
    Column("started_at", DateTime(timezone=True)),
    Column("finished_at", DateTime(timezone=True)),
    Column("heartbeat_at", DateTime(timezone=True)),
    Column("error_code", String(64)),
    Column("error_message", Text),
    # A shard is a job row too; its parent holds the segments (see ``Job``).
    Column("parent_id", String(32)),
    Column("first_position", Integer),
    Column("end_position", Integer),
    Column("shards", Integer, nullable=False, default=0, server_default=text("0")),
    Column("markup", Boolean, nullable=False, default=False, server_default=false()),
    Column("callback_url", Text),
    # True once the end of a job with a callback_url has its delivery row.
    Column("notified", Boolean, nullable=False, default=False, server_default=false()),
    Column("document_key", String(64)),
    Column("memories", Text),  # JSON list of memory names; null: none
    Column("glossary_id", String(64)),
    Column("use_cache", Boolean, nullable=False, default=True, server_default=true()),
    Column("mark_unknown", Boolean, nullable=False, default=False, server_default=false()),
    Column("characters", Integer),  # charged at submit; null: a job stored before 0012
    # The Idempotency-Key it was submitted with: a retry finds the job even when the
    # first request's answer was lost with its process.
    Column("idempotency_key", String(255)),
    # Translations below this confidence are to be reviewed (null: no threshold), and how
    # many of those are stored so far, kept as chunks are written (as segments_done).
    Column("review_below", Float),
    Column("segments_to_review", Integer, nullable=False, default=0, server_default=text("0")),
    # When the client needs it done; the watchdog's latest prediction of its end (a parent:
    # its last shard's); true once its job.at_risk notification has its delivery row.
    Column("deadline", DateTime(timezone=True)),
    Column("eta_at", DateTime(timezone=True)),
    Column("at_risk_notified", Boolean, nullable=False, default=False, server_default=false()),
    # A job into several languages: all of them, comma-separated, target_lang first (its
    # segments are stored once per target, one copy after the other); null: one target.
    Column("target_langs", Text),
    Index("ix_jobs_status", "status"),
    Index("ix_jobs_tenant_seq", "tenant", "seq"),
    Index("ix_jobs_parent_id", "parent_id"),
    Index("ix_jobs_tenant_idempotency_key", "tenant", "idempotency_key"),
)

# The requests made with an Idempotency-Key, per tenant ("" when authentication is off):
# the first one's fingerprint and, once it answered, its answer.
idempotency_keys = Table(
    "idempotency_keys",
    metadata,
    Column("tenant", String(128), primary_key=True),
    Column("key", String(255), primary_key=True),
    Column("fingerprint", String(64), nullable=False),
    Column("claimed_at", DateTime(timezone=True), nullable=False),
    Column("expires_at", DateTime(timezone=True), nullable=False),
    Column("status", Integer),  # null while the first request is being handled
    Column("content_type", String(255)),
    Column("location", Text),
    Column("body", LargeBinary),
    Index("ix_idempotency_keys_expires_at", "expires_at"),
)

documents = Table(
    "documents",
    metadata,
    Column("job_id", String(32), ForeignKey("jobs.id", ondelete="CASCADE"), primary_key=True),
    Column("ordinal", Integer, primary_key=True),
    Column("name", Text, nullable=False),
    Column("first_position", Integer, nullable=False),
    Column("segment_count", Integer, nullable=False),
    # An uploaded file: its format, its bytes and its layout (JSON list); null otherwise.
    Column("format", String(32)),
    Column("content", LargeBinary),
    Column("layout", Text),
    # The language detected for this document when the job's source was "auto".
    Column("source_lang", String(16)),
)

segments = Table(
    "segments",
    metadata,
    Column("job_id", String(32), ForeignKey("jobs.id", ondelete="CASCADE"), primary_key=True),
    Column("position", Integer, primary_key=True),
    Column("source", Text, nullable=False),
    Column("target", Text),
    Column("origin", String(8)),  # ``Origin`` of the target; null until translated
    # What made the target (null for a memory match, and for a target stored before 0016):
    # the engine and its model, whether the job's glossary had terms in the segment, and
    # the model's confidence (null where the engine gives none).
    Column("engine", String(64)),
    Column("model", Text),
    Column("terms", Boolean),
    Column("confidence", Float),
)

leases = Table(
    "leases",
    metadata,
    Column("name", String(64), primary_key=True),
    Column("holder", String(128), nullable=False),
    Column("expires_at", DateTime(timezone=True), nullable=False),
)

relay_requests = Table(
    "relay_requests",
    metadata,
    Column("id", String(64), primary_key=True),
    Column("reply_to", String(255), nullable=False),
    Column("target", String(255), nullable=False),
    Column("payload", Text, nullable=False),
    Column("status", String(16), nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("heartbeat_at", DateTime(timezone=True), nullable=False),
    Column("finished_at", DateTime(timezone=True)),
    Index("ix_relay_requests_status", "status"),
)

workers = Table(
    "workers",
    metadata,
    Column("id", String(255), primary_key=True),
    Column("pool", String(8), nullable=False),
    Column("host", String(255), nullable=False),
    Column("pid", Integer),
    Column("busy", Boolean, nullable=False),
    Column("warm_pairs", Text, nullable=False),
    Column("last_seen", DateTime(timezone=True), nullable=False),
    # The worker's counters since it started (see ``WorkerInfo``).
    Column("segments_translated", BigInteger, nullable=False, default=0, server_default=text("0")),
    Column("batches", BigInteger, nullable=False, default=0, server_default=text("0")),
    Column("batch_segments", BigInteger, nullable=False, default=0, server_default=text("0")),
    Index("ix_workers_pool_seen", "pool", "last_seen"),
)

# What the roles other than workers publish of a pool, one row per figure: the scaler's
# desired and current workers, the watchdog's warm-routing counts. Any API process reads it.
pool_figures = Table(
    "pool_figures",
    metadata,
    Column("pool", String(8), primary_key=True),
    Column("name", String(64), primary_key=True),
    Column("value", Float, nullable=False),
    Column("updated_at", DateTime(timezone=True), nullable=False),
)

usage = Table(
    "usage",
    metadata,
    # The tenant ("" when authentication is off) and the period ("2026-12": a month, UTC).
    Column("tenant", String(128), primary_key=True),
    Column("period", String(16), primary_key=True),
    Column("characters", BigInteger, nullable=False, default=0),
    Column("requests", BigInteger, nullable=False, default=0),
)

webhook_deliveries = Table(
    "webhook_deliveries",
    metadata,
    Column("id", String(64), primary_key=True),  # the webhook-id, the same on every attempt
    Column("job_id", String(32), nullable=False),
    Column("tenant", String(128)),
    Column("url", Text, nullable=False),
    Column("event", String(32), nullable=False),
    Column("payload", Text, nullable=False),
    Column("status", String(16), nullable=False),
    Column("attempts", Integer, nullable=False, default=0),
    Column("next_attempt_at", DateTime(timezone=True), nullable=False),
    Column("last_status", Integer),
    Column("last_error", Text),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("delivered_at", DateTime(timezone=True)),
    Index("ix_webhook_deliveries_due", "status", "next_attempt_at"),
    Index("ix_webhook_deliveries_job_id", "job_id"),
)

# The segment cache (ADR 0014): an engine's output for one segment, under the sha256 of
# everything that decides it; the least recently used rows go first.
segment_cache = Table(
    "segment_cache",
    metadata,
    Column("key", LargeBinary(32), primary_key=True),
    Column("target", Text, nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("last_used_at", DateTime(timezone=True), nullable=False),
    # What the model said of the target, and whether the key's glossary had terms in the
    # segment: a hit reports them as the first translation did (null: not known).
    Column("confidence", Float),
    Column("terms", Boolean),
    Index("ix_segment_cache_last_used_at", "last_used_at"),
)

# A tenant's translation memories ("" when authentication is off), imported from TMX.
memories = Table(
    "memories",
    metadata,
    Column(
        "id", BigInteger().with_variant(Integer, "sqlite"), primary_key=True, autoincrement=True
    ),
    Column("tenant", String(128), nullable=False),
    Column("name", String(128), nullable=False),
    Column("units", Integer, nullable=False),
    Column("languages", Text, nullable=False),  # JSON list of base language codes
    Column("source_lang", String(16)),  # null: any language may be the source (*all*)
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("updated_at", DateTime(timezone=True), nullable=False),
    UniqueConstraint("tenant", "name", name="uq_memories_tenant_name"),
    # Ids are never reused (SQLite reuses the highest one otherwise): a job that resolved a
    # memory's id before its deletion finds nothing rather than another tenant's memory.
    sqlite_autoincrement=True,
)

# One direction of one unit of a memory: ``key`` is the sha256 of the languages and the
# source's matching form; source and target in the stored form of codes.
memory_units = Table(
    "memory_units",
    metadata,
    Column(
        "memory_id",
        BigInteger().with_variant(Integer, "sqlite"),
        ForeignKey("memories.id", ondelete="CASCADE"),
        primary_key=True,
    ),
    Column("key", LargeBinary(32), primary_key=True),
    Column("source_lang", String(16), nullable=False),
    Column("target_lang", String(16), nullable=False),
    Column("source", Text, nullable=False),
    Column("target", Text, nullable=False),
)


# A tenant's glossary: one dictionary per language pair (``glossary_dictionaries``), each
# with its entries in their order (``dictionary_entries``).
glossaries = Table(
    "glossaries",
    metadata,
    Column("id", String(64), primary_key=True),
    Column("tenant", String(128)),
    Column("name", Text, nullable=False),
    # One more at each change (a rename, a dictionary written or removed).
    Column("revision", Integer, nullable=False, server_default=text("1")),
    Column("created_at", DateTime(timezone=True), nullable=False),
    # Set when its tenant deletes it; the row goes once no job may still need it.
    Column("deleted_at", DateTime(timezone=True)),
    # The Idempotency-Key it was created with, stored with it: a retry after a crash
    # between storing and answering gets this glossary again.
    Column("idempotency_key", String(255)),
    Index("ix_glossaries_tenant_created", "tenant", "created_at"),
    Index("ix_glossaries_tenant_idempotency_key", "tenant", "idempotency_key"),
)

glossary_dictionaries = Table(
    "glossary_dictionaries",
    metadata,
    Column(
        "glossary_id",
        String(64),
        ForeignKey("glossaries.id", ondelete="CASCADE"),
        primary_key=True,
    ),
    Column("source_lang", String(16), primary_key=True),
    Column("target_lang", String(16), primary_key=True),
    Column("position", Integer, nullable=False),  # the order the dictionaries were added
    Column("entry_count", Integer, nullable=False),
    # The glossary's revision when these entries were written: a job's translations are
    # cached under it.
    Column("revision", Integer, nullable=False),
)

dictionary_entries = Table(
    "dictionary_entries",
    metadata,
    Column("glossary_id", String(64), primary_key=True),
    Column("source_lang", String(16), primary_key=True),
    Column("target_lang", String(16), primary_key=True),
    Column("position", Integer, primary_key=True),
    Column("source", Text, nullable=False),
    Column("target", Text, nullable=False),
    ForeignKeyConstraint(
        ["glossary_id", "source_lang", "target_lang"],
        [
            "glossary_dictionaries.glossary_id",
            "glossary_dictionaries.source_lang",
            "glossary_dictionaries.target_lang",
        ],
        ondelete="CASCADE",
    ),
)
