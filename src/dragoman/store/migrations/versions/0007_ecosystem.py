"""jobs: callback_url, notified, document_key; documents: source_lang; usage; webhook_deliveries

Revision ID: 0007
Revises: 0006
"""

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("jobs") as batch:
        batch.add_column(sa.Column("callback_url", sa.Text))
        batch.add_column(
            sa.Column("notified", sa.Boolean, nullable=False, server_default=sa.false())
        )
        batch.add_column(sa.Column("document_key", sa.String(64)))
    with op.batch_alter_table("documents") as batch:
        batch.add_column(sa.Column("source_lang", sa.String(16)))
    op.create_table(
        "usage",
        sa.Column("tenant", sa.String(128), primary_key=True),
        sa.Column("period", sa.String(16), primary_key=True),
        sa.Column("characters", sa.BigInteger, nullable=False),
        sa.Column("requests", sa.BigInteger, nullable=False),
    )
    op.create_table(
        "webhook_deliveries",
        sa.Column("id", sa.String(64), primary_key=True),
        sa.Column("job_id", sa.String(32), nullable=False),
        sa.Column("tenant", sa.String(128)),
        sa.Column("url", sa.Text, nullable=False),
        sa.Column("event", sa.String(32), nullable=False),
        sa.Column("payload", sa.Text, nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("attempts", sa.Integer, nullable=False),
        sa.Column("next_attempt_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("last_status", sa.Integer),
        sa.Column("last_error", sa.Text),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("delivered_at", sa.DateTime(timezone=True)),
    )
    op.create_index(
        "ix_webhook_deliveries_due", "webhook_deliveries", ["status", "next_attempt_at"]
    )
    op.create_index("ix_webhook_deliveries_job_id", "webhook_deliveries", ["job_id"])


def downgrade() -> None:
    op.drop_index("ix_webhook_deliveries_job_id", "webhook_deliveries")
    op.drop_index("ix_webhook_deliveries_due", "webhook_deliveries")
    op.drop_table("webhook_deliveries")
    op.drop_table("usage")
    with op.batch_alter_table("documents") as batch:
        batch.drop_column("source_lang")
    with op.batch_alter_table("jobs") as batch:
        batch.drop_column("document_key")
        batch.drop_column("notified")
        batch.drop_column("callback_url")
