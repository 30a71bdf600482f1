"""Alembic environment: dragoman runs migrations itself, on a connection it passes in."""

from alembic import context

from dragoman.store.tables import metadata

connection = context.config.attributes["connection"]
context.configure(connection=connection, target_metadata=metadata, render_as_batch=True)
with context.begin_transaction():
    context.run_migrations()
