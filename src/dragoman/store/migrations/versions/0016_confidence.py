"""what made each translation, the model's confidence in it, and the segments to review

Revision ID: 0016
Revises: 0015
"""

import sqlalchemy as sa
from alembic import op

revision = "0016"
down_revision = "0015"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("jobs", sa.Column("review_below", sa.Float))
    op.add_column(
        "jobs",
        sa.Column("segments_to_review", sa.Integer, nullable=False, server_default=sa.text("0")),
    )
    op.add_column("segments", sa.Column("engine", sa.String(64)))
    op.add_column("segments", sa.Column("model", sa.Text))
    op.add_column("segments", sa.Column("terms", sa.Boolean))
    op.add_column("segments", sa.Column("confidence", sa.Float))
    op.add_column("segment_cache", sa.Column("confidence", sa.Float))
    op.add_column("segment_cache", sa.Column("terms", sa.Boolean))


def downgrade() -> None:
    op.drop_column("segment_cache", "terms")
    op.drop_column("segment_cache", "confidence")
    for column in ("confidence", "terms", "model", "engine"):
        op.drop_column("segments", column)
    op.drop_column("jobs", "segments_to_review")
    op.drop_column("jobs", "review_below")
