"""workers: counters (segments translated, engine batches); pool_figures: what the scaler and
the watchdog publish of each pool

Revision ID: 0010
Revises: 0009
"""

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None

_COUNTERS = ("segments_translated", "batches", "batch_segments")


def upgrade() -> None:
    with op.batch_alter_table("workers") as batch:
        for name in _COUNTERS:
            batch.add_column(
                sa.Column(name, sa.BigInteger, nullable=False, server_default=sa.text("0"))
            )
    op.create_table(
        "pool_figures",
        sa.Column("pool", sa.String(8), primary_key=True),
        sa.Column("name", sa.String(64), primary_key=True),
        sa.Column("value", sa.Float, nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("pool_figures")
    with op.batch_alter_table("workers") as batch:
        for name in reversed(_COUNTERS):
            batch.drop_column(name)
