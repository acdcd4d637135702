"""A throwaway PostgreSQL database on the test server (`REPOBRIEF_TEST_PG_URL`,
started by `.ci/start-postgres`), dropped afterwards."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def fresh_database(base_url: str, prefix: str) -> Iterator[str]:
    """Create a new database next to `base_url`'s and yield its URL."""
    from sqlalchemy import create_engine, text
    from sqlalchemy.engine import make_url

    admin_url = make_url(base_url).set(drivername="postgresql+psycopg")
    name = f"{prefix}_{uuid.uuid4().hex[:12]}"
    admin = create_engine(admin_url, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    try:
        yield admin_url.set(database=name, drivername="postgresql").render_as_string(hide_password=False)
    finally:
        with admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()
