"""Idempotency-Key: the key each glossary was created with

Revision ID: 0019
Revises: 0018
"""

import sqlalchemy as sa
from alembic import op

revision = "0019"
down_revision = "0018"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("glossaries", sa.Column("idempotency_key", sa.String(255)))
    op.create_index(
        "ix_glossaries_tenant_idempotency_key", "glossaries", ["tenant", "idempotency_key"]
    )


def downgrade() -> None:
    op.drop_index("ix_glossaries_tenant_idempotency_key", "glossaries")
    op.drop_column("glossaries", "idempotency_key")
