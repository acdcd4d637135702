"""Alembic environment: runs migrations on the connection `open_store` passes in
(`config.attributes["connection"]`), or on `sqlalchemy.url` for the alembic CLI."""

from __future__ import annotations

from alembic import context
from sqlalchemy import create_engine

config = context.config


def _run(connection) -> None:
    # render_as_batch lets SQLite alter tables (it has no ALTER COLUMN).
    context.configure(connection=connection, target_metadata=None, render_as_batch=True)
    with context.begin_transaction():
        context.run_migrations()


connection = config.attributes.get("connection")
if connection is not None:
    _run(connection)
else:
    url = config.get_main_option("sqlalchemy.url")
    if not url:
        raise RuntimeError("set sqlalchemy.url (repobrief's store passes its database URL or a connection)")
    engine = create_engine(url)
    with engine.begin() as conn:
        _run(conn)
