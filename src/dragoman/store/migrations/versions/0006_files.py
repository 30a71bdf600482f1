"""documents: uploaded files (format, bytes, layout); jobs: whether segments carry markup

Revision ID: 0006
Revises: 0005
"""

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("documents") as batch:
        batch.add_column(sa.Column("format", sa.String(32)))
        batch.add_column(sa.Column("content", sa.LargeBinary))
        batch.add_column(sa.Column("layout", sa.Text))
    with op.batch_alter_table("jobs") as batch:
        batch.add_column(sa.Column("markup", sa.Boolean, nullable=False, server_default=sa.false()))


def downgrade() -> None:
    with op.batch_alter_table("jobs") as batch:
        batch.drop_column("markup")
    with op.batch_alter_table("documents") as batch:
        batch.drop_column("layout")
        batch.drop_column("content")
        batch.drop_column("format")
