"""glossaries and their entries

Revision ID: 0011
Revises: 0010
"""

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "glossaries",
        sa.Column("id", sa.String(64), primary_key=True),
        sa.Column("tenant", sa.String(128)),
        sa.Column("name", sa.Text, nullable=False),
        sa.Column("source_lang", sa.String(16), nullable=False),
        sa.Column("target_lang", sa.String(16), nullable=False),
        sa.Column("entry_count", sa.Integer, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("deleted_at", sa.DateTime(timezone=True)),
    )
    op.create_index("ix_glossaries_tenant_created", "glossaries", ["tenant", "created_at"])
    op.create_table(
        "glossary_entries",
        sa.Column(
            "glossary_id",
            sa.String(64),
            sa.ForeignKey("glossaries.id", ondelete="CASCADE"),
            primary_key=True,
        ),
        sa.Column("position", sa.Integer, primary_key=True),
        sa.Column("source", sa.Text, nullable=False),
        sa.Column("target", sa.Text, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("glossary_entries")
    op.drop_index("ix_glossaries_tenant_created", table_name="glossaries")
    op.drop_table("glossaries")
