"""jobs: shards, child jobs that each cover a range of their parent's segments

Revision ID: 0005
Revises: 0004
"""

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("jobs") as batch:
        batch.add_column(sa.Column("parent_id", sa.String(32)))
        batch.add_column(sa.Column("first_position", sa.Integer))
        batch.add_column(sa.Column("end_position", sa.Integer))
        batch.add_column(
            sa.Column("shards", sa.Integer, nullable=False, server_default=sa.text("0"))
        )
    op.create_index("ix_jobs_parent_id", "jobs", ["parent_id"])


def downgrade() -> None:
    op.drop_index("ix_jobs_parent_id", "jobs")
    with op.batch_alter_table("jobs") as batch:
        batch.drop_column("shards")
        batch.drop_column("end_position")
        batch.drop_column("first_position")
        batch.drop_column("parent_id")
