"""segment_cache; memories and memory_units

Revision ID: 0009
Revises: 0008
"""

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None

_ID = sa.BigInteger().with_variant(sa.Integer, "sqlite")


def upgrade() -> None:
    op.create_table(
        "segment_cache",
        sa.Column("key", sa.LargeBinary(32), primary_key=True),
        sa.Column("target", sa.Text, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("last_used_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_segment_cache_last_used_at", "segment_cache", ["last_used_at"])
    op.create_table(
        "memories",
        sa.Column("id", _ID, primary_key=True, autoincrement=True),
        sa.Column("tenant", sa.String(128), nullable=False),
        sa.Column("name", sa.String(128), nullable=False),
        sa.Column("units", sa.Integer, nullable=False),
        sa.Column("languages", sa.Text, nullable=False),
        sa.Column("source_lang", sa.String(16)),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.UniqueConstraint("tenant", "name", name="uq_memories_tenant_name"),
        # A deleted memory's id is never given again: a job that resolved it before the
        # deletion must find nothing, never another memory (another tenant's).
        sqlite_autoincrement=True,
    )
    op.create_table(
        "memory_units",
        sa.Column(
            "memory_id",
            _ID,
            sa.ForeignKey("memories.id", ondelete="CASCADE"),
            primary_key=True,
        ),
        sa.Column("key", sa.LargeBinary(32), primary_key=True),
        sa.Column("source_lang", sa.String(16), nullable=False),
        sa.Column("target_lang", sa.String(16), nullable=False),
        sa.Column("source", sa.Text, nullable=False),
        sa.Column("target", sa.Text, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("memory_units")
    op.drop_table("memories")
    op.drop_index("ix_segment_cache_last_used_at", "segment_cache")
    op.drop_table("segment_cache")
