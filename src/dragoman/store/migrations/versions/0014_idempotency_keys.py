"""Idempotency-Key: the keys' first requests and answers, and the key of each job

Revision ID: 0014
Revises: 0013
"""

import sqlalchemy as sa
from alembic import op

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "idempotency_keys",
        sa.Column("tenant", sa.String(128), primary_key=True),
        sa.Column("key", sa.String(255), primary_key=True),
        sa.Column("fingerprint", sa.String(64), nullable=False),
        sa.Column("claimed_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("status", sa.Integer),
        sa.Column("content_type", sa.String(255)),
        sa.Column("location", sa.Text),
        sa.Column("body", sa.LargeBinary),
    )
    op.create_index("ix_idempotency_keys_expires_at", "idempotency_keys", ["expires_at"])
    op.add_column("jobs", sa.Column("idempotency_key", sa.String(255)))
    op.create_index("ix_jobs_tenant_idempotency_key", "jobs", ["tenant", "idempotency_key"])


def downgrade() -> None:
    op.drop_index("ix_jobs_tenant_idempotency_key", "jobs")
    op.drop_column("jobs", "idempotency_key")
    op.drop_index("ix_idempotency_keys_expires_at", "idempotency_keys")
    op.drop_table("idempotency_keys")
