"""jobs: memories, glossary_id, use_cache; segments: origin

Revision ID: 0008
Revises: 0007
"""

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("jobs") as batch:
        batch.add_column(sa.Column("memories", sa.Text))
        batch.add_column(sa.Column("glossary_id", sa.String(64)))
        batch.add_column(
            sa.Column("use_cache", sa.Boolean, nullable=False, server_default=sa.true())
        )
    with op.batch_alter_table("segments") as batch:
        batch.add_column(sa.Column("origin", sa.String(8)))


def downgrade() -> None:
    with op.batch_alter_table("segments") as batch:
        batch.drop_column("origin")
    with op.batch_alter_table("jobs") as batch:
        batch.drop_column("use_cache")
        batch.drop_column("glossary_id")
        batch.drop_column("memories")
