"""the characters a job was charged at submit

Revision ID: 0012
Revises: 0011
"""

import sqlalchemy as sa
from alembic import op

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # NULL on the jobs stored before: their characters are counted from the stored text.
    op.add_column("jobs", sa.Column("characters", sa.Integer))


def downgrade() -> None:
    op.drop_column("jobs", "characters")
