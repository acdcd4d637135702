"""Alembic migrations for the store, shipped as package data and applied by
`repobrief.store.open_store` when the database's revision is not the head."""
