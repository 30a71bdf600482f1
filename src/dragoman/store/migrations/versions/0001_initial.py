"""jobs, documents and segments

Revision ID: 0001
Revises:
"""

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "jobs",
        sa.Column(
            "seq",
            sa.BigInteger().with_variant(sa.Integer, "sqlite"),
            primary_key=True,
            autoincrement=True,
        ),
        sa.Column("id", sa.String(32), nullable=False, unique=True),
        sa.Column("tenant", sa.String(128)),
        sa.Column("source_lang", sa.String(16), nullable=False),
        sa.Column("target_lang", sa.String(16), nullable=False),
        sa.Column("engine", sa.String(64), nullable=False),
        sa.Column("pool", sa.String(8), nullable=False),
        sa.Column("priority", sa.String(8), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("documents", sa.Integer, nullable=False),
        sa.Column("segments_total", sa.Integer, nullable=False),
        sa.Column("segments_done", sa.Integer, nullable=False),
        sa.Column("attempts", sa.Integer, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("submitted_at", sa.DateTime(timezone=True)),
        sa.Column("started_at", sa.DateTime(timezone=True)),
        sa.Column("finished_at", sa.DateTime(timezone=True)),
        sa.Column("heartbeat_at", sa.DateTime(timezone=True)),
        sa.Column("error_code", sa.String(64)),
        sa.Column("error_message", sa.Text),
    )
    op.create_index("ix_jobs_status", "jobs", ["status"])
    op.create_index("ix_jobs_tenant_seq", "jobs", ["tenant", "seq"])
    op.create_table(
        "documents",
        sa.Column(
            "job_id",
            sa.String(32),
            sa.ForeignKey("jobs.id", ondelete="CASCADE"),
            primary_key=True,
        ),
        sa.Column("ordinal", sa.Integer, primary_key=True),
        sa.Column("name", sa.Text, nullable=False),
        sa.Column("first_position", sa.Integer, nullable=False),
        sa.Column("segment_count", sa.Integer, nullable=False),
    )
    op.create_table(
        "segments",
        sa.Column(
            "job_id",
            sa.String(32),
            sa.ForeignKey("jobs.id", ondelete="CASCADE"),
            primary_key=True,
        ),
        sa.Column("position", sa.Integer, primary_key=True),
        sa.Column("source", sa.Text, nullable=False),
        sa.Column("target", sa.Text),
    )


def downgrade() -> None:
    op.drop_table("segments")
    op.drop_table("documents")
    op.drop_index("ix_jobs_tenant_seq", "jobs")
    op.drop_index("ix_jobs_status", "jobs")
    op.drop_table("jobs")
