"""glossaries: one dictionary per language pair, and a revision per change

Revision ID: 0018
Revises: 0017

A glossary of before is a glossary of one dictionary, written at revision 1: its pair and
entry count move to ``glossary_dictionaries``, its entries to ``dictionary_entries``.
"""

import sqlalchemy as sa
from alembic import op

revision = "0018"
down_revision = "0017"
branch_labels = None
depends_on = None


def _pair() -> list[sa.Column[str]]:
    """The key columns of a dictionary: its glossary and its pair."""
    return [
        sa.Column("glossary_id", sa.String(64), primary_key=True),
        sa.Column("source_lang", sa.String(16), primary_key=True),
        sa.Column("target_lang", sa.String(16), primary_key=True),
    ]


def upgrade() -> None:
    op.add_column(
        "glossaries",
        sa.Column("revision", sa.Integer, nullable=False, server_default=sa.text("1")),
    )
    op.create_table(
        "glossary_dictionaries",
        *_pair(),
        sa.Column("position", sa.Integer, nullable=False),
        sa.Column("entry_count", sa.Integer, nullable=False),
        sa.Column("revision", sa.Integer, nullable=False),
        sa.ForeignKeyConstraint(["glossary_id"], ["glossaries.id"], ondelete="CASCADE"),
    )
    op.create_table(
        "dictionary_entries",
        *_pair(),
        sa.Column("position", sa.Integer, primary_key=True),
        sa.Column("source", sa.Text, nullable=False),
        sa.Column("target", sa.Text, nullable=False),
        sa.ForeignKeyConstraint(
            ["glossary_id", "source_lang", "target_lang"],
            [
                "glossary_dictionaries.glossary_id",
                "glossary_dictionaries.source_lang",
                "glossary_dictionaries.target_lang",
            ],
            ondelete="CASCADE",
        ),
    )
    op.execute(
        "INSERT INTO glossary_dictionaries"
        " (glossary_id, source_lang, target_lang, position, entry_count, revision)"
        " SELECT id, source_lang, target_lang, 0, entry_count, 1 FROM glossaries"
    )
    op.execute(
        "INSERT INTO dictionary_entries"
        " (glossary_id, source_lang, target_lang, position, source, target)"
        " SELECT e.glossary_id, g.source_lang, g.target_lang, e.position, e.source, e.target"
        " FROM glossary_entries e JOIN glossaries g ON g.id = e.glossary_id"
    )
    op.drop_table("glossary_entries")
    # Dropped in place (SQLite 3.35+ and PostgreSQL): rebuilding ``glossaries`` would delete
    # its dictionaries through their foreign key, which SQLite enforces here.
    for column in ("entry_count", "target_lang", "source_lang"):
        op.drop_column("glossaries", column)


# A glossary keeps its first dictionary only.
_FIRST = (
    "SELECT {column} FROM glossary_dictionaries d WHERE d.glossary_id = glossaries.id"
    " ORDER BY d.position LIMIT 1"
)


def downgrade() -> None:
    op.add_column("glossaries", sa.Column("source_lang", sa.String(16)))
    op.add_column("glossaries", sa.Column("target_lang", sa.String(16)))
    op.add_column("glossaries", sa.Column("entry_count", sa.Integer))
    for column in ("source_lang", "target_lang", "entry_count"):
        op.execute(f"UPDATE glossaries SET {column} = ({_FIRST.format(column=column)})")
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
    op.execute(
        "INSERT INTO glossary_entries (glossary_id, position, source, target)"
        " SELECT e.glossary_id, e.position, e.source, e.target FROM dictionary_entries e"
        " JOIN glossaries g ON g.id = e.glossary_id"
        " AND g.source_lang = e.source_lang AND g.target_lang = e.target_lang"
    )
    op.drop_table("dictionary_entries")
    op.drop_table("glossary_dictionaries")
    op.drop_column("glossaries", "revision")
    if op.get_bind().dialect.name == "postgresql":
        # SQLite keeps them nullable: NOT NULL there rebuilds the table, and the rebuild
        # would delete the entries through their foreign key.
        for column in ("source_lang", "target_lang", "entry_count"):
            op.alter_column("glossaries", column, nullable=False)
