"""relay_requests: requests the watchdog relays between services, open until answered

Revision ID: 0003
Revises: 0002
"""

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "relay_requests",
        sa.Column("id", sa.String(64), primary_key=True),
        sa.Column("reply_to", sa.String(255), nullable=False),
        sa.Column("target", sa.String(255), nullable=False),
        sa.Column("payload", sa.Text, nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("heartbeat_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("finished_at", sa.DateTime(timezone=True)),
    )
    op.create_index("ix_relay_requests_status", "relay_requests", ["status"])


def downgrade() -> None:
    op.drop_index("ix_relay_requests_status", "relay_requests")
    op.drop_table("relay_requests")
