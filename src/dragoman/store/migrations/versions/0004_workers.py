"""workers: the registry of live workers (pool, host or pod, busy, warm pairs, last seen)

Revision ID: 0004
Revises: 0003
"""

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "workers",
        sa.Column("id", sa.String(255), primary_key=True),
        sa.Column("pool", sa.String(8), nullable=False),
        sa.Column("host", sa.String(255), nullable=False),
        sa.Column("pid", sa.Integer),
        sa.Column("busy", sa.Boolean, nullable=False),
        sa.Column("warm_pairs", sa.Text, nullable=False),
        sa.Column("last_seen", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_workers_pool_seen", "workers", ["pool", "last_seen"])


def downgrade() -> None:
    op.drop_index("ix_workers_pool_seen", "workers")
    op.drop_table("workers")
