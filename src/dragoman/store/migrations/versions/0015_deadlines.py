"""Deadlines: a job's deadline, its predicted end, and whether its job.at_risk was sent

Revision ID: 0015
Revises: 0014
"""

import sqlalchemy as sa
from alembic import op

revision = "0015"
down_revision = "0014"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("jobs", sa.Column("deadline", sa.DateTime(timezone=True)))
    op.add_column("jobs", sa.Column("eta_at", sa.DateTime(timezone=True)))
    op.add_column(
        "jobs",
        sa.Column("at_risk_notified", sa.Boolean, nullable=False, server_default=sa.false()),
    )


def downgrade() -> None:
    op.drop_column("jobs", "at_risk_notified")
    op.drop_column("jobs", "eta_at")
    op.drop_column("jobs", "deadline")
