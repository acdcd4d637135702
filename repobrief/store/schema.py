"""The store's tables, as SQLAlchemy Core `Table` objects.

Types are portable (SQLite and PostgreSQL share one code path): integers,
strings, text, booleans, `JSON` (text in SQLite, `json` in PostgreSQL) and
naive `DateTime` columns that always hold UTC. Changing a table here needs a
new migration under `repobrief/migrations/versions/` and a new
`SCHEMA_REVISION`; `tests/test_store.py` checks that the two agree.
"""

from __future__ import annotations

from sqlalchemy import (
    JSON,
    Boolean,
    Column,
    DateTime,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
)

#: The Alembic revision the tables below correspond to (the migrations' head).
SCHEMA_REVISION = "0001_initial"

metadata = MetaData()

repositories = Table(
    "repositories",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("name", String(255), nullable=False, unique=True),  # owner/repo
    Column("url", String(1024)),
    Column("default_branch", String(255)),
    Column("created_at", DateTime, nullable=False),
)

pull_requests = Table(
    "pull_requests",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("repository_id", Integer, ForeignKey("repositories.id", ondelete="CASCADE"), nullable=False),
    Column("number", Integer, nullable=False),
    Column("title", Text, nullable=False),
    Column("body", Text, nullable=False),
    Column("author", String(255), nullable=False),
    Column("author_email", String(255)),
    Column("url", String(1024)),
    Column("sha", String(64)),
    Column("base_branch", String(255)),
    Column("via", String(255), nullable=False),
    Column("merged_at", DateTime),  # UTC; NULL for a PR the source saw unmerged
    Column("labels", JSON, nullable=False),
    Column("files", JSON, nullable=False),
    # reviews, comments, review threads: one JSON document
    Column("discussion", JSON, nullable=False),
    Column("discussion_known", Boolean, nullable=False),
    Column("linked_issues", JSON, nullable=False),
    Column("reverts", Integer),
    Column("reverts_title", Text),
    Column("additions_total", Integer),
    Column("deletions_total", Integer),
    Column("source", String(64), nullable=False),  # "git" | "github" | …
    Column("updated_at", DateTime),  # the source's last-modified time, for incremental sync
    Column("stored_at", DateTime, nullable=False),
    UniqueConstraint("repository_id", "number", name="uq_pull_requests_repo_number"),
)
Index("ix_pull_requests_repo_merged", pull_requests.c.repository_id, pull_requests.c.merged_at)

analyses = Table(
    "analyses",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("repository_id", Integer, ForeignKey("repositories.id", ondelete="CASCADE"), nullable=False),
    Column("number", Integer, nullable=False),
    Column("engine", String(64), nullable=False),
    Column("model", String(255), nullable=False),  # "" for the offline engine
    Column("prompt_version", String(64), nullable=False),
    Column("input_hash", String(64), nullable=False),
    Column("json", JSON, nullable=False),
    Column("created_at", DateTime, nullable=False),
    UniqueConstraint(
        "repository_id", "number", "engine", "model", "prompt_version", "input_hash", name="uq_analyses_unit"
    ),
)

llm_cache = Table(
    "llm_cache",
    metadata,
    Column("key", String(64), primary_key=True),  # sha256 of model + prompt version + request
    Column("model", String(255), nullable=False),
    Column("prompt_version", String(64), nullable=False),
    Column("response", Text, nullable=False),
    Column("prompt_tokens", Integer, nullable=False),
    Column("completion_tokens", Integer, nullable=False),
    Column("created_at", DateTime, nullable=False),
)

reports = Table(
    "reports",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("repository_id", Integer, ForeignKey("repositories.id", ondelete="CASCADE"), nullable=False),
    Column("week", String(64), nullable=False),
    Column("lang", String(8), nullable=False),
    Column("format", String(32), nullable=False),
    Column("content", Text, nullable=False),
    Column("created_at", DateTime, nullable=False),
    UniqueConstraint("repository_id", "week", "lang", "format", name="uq_reports_unit"),
)

sync_state = Table(
    "sync_state",
    metadata,
    Column("repository_id", Integer, ForeignKey("repositories.id", ondelete="CASCADE"), primary_key=True),
    Column("source", String(64), primary_key=True),
    Column("cursor", Text),  # an opaque pagination cursor or ETag
    Column("last_updated", DateTime),  # the newest `updated_at` seen
    Column("last_synced_at", DateTime),
    Column("extra", JSON),
)

__all__ = [
    "SCHEMA_REVISION",
    "analyses",
    "llm_cache",
    "metadata",
    "pull_requests",
    "reports",
    "repositories",
    "sync_state",
]
