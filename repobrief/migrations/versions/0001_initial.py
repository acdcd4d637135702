"""The first schema: repositories, pull requests, analyses, LLM cache, reports, sync state.

Revision ID: 0001_initial
Revises:
"""

import sqlalchemy as sa
from alembic import op

revision = "0001_initial"
down_revision = None
branch_labels = None
depends_on = None


def _repo_fk() -> sa.Column:
    return sa.Column("repository_id", sa.Integer, sa.ForeignKey("repositories.id", ondelete="CASCADE"), nullable=False)


def upgrade() -> None:
    op.create_table(
        "repositories",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("name", sa.String(255), nullable=False, unique=True),
        sa.Column("url", sa.String(1024)),
        sa.Column("default_branch", sa.String(255)),
        sa.Column("created_at", sa.DateTime, nullable=False),
    )
    op.create_table(
        "pull_requests",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        _repo_fk(),
        sa.Column("number", sa.Integer, nullable=False),
        sa.Column("title", sa.Text, nullable=False),
        sa.Column("body", sa.Text, nullable=False),
        sa.Column("author", sa.String(255), nullable=False),
        sa.Column("author_email", sa.String(255)),
        sa.Column("url", sa.String(1024)),
        sa.Column("sha", sa.String(64)),
        sa.Column("base_branch", sa.String(255)),
        sa.Column("via", sa.String(255), nullable=False),
        sa.Column("merged_at", sa.DateTime),
        sa.Column("labels", sa.JSON, nullable=False),
        sa.Column("files", sa.JSON, nullable=False),
        sa.Column("discussion", sa.JSON, nullable=False),
        sa.Column("discussion_known", sa.Boolean, nullable=False),
        sa.Column("linked_issues", sa.JSON, nullable=False),
        sa.Column("reverts", sa.Integer),
        sa.Column("reverts_title", sa.Text),
        sa.Column("additions_total", sa.Integer),
        sa.Column("deletions_total", sa.Integer),
        sa.Column("source", sa.String(64), nullable=False),
        sa.Column("updated_at", sa.DateTime),
        sa.Column("stored_at", sa.DateTime, nullable=False),
        sa.UniqueConstraint("repository_id", "number", name="uq_pull_requests_repo_number"),
    )
    op.create_index("ix_pull_requests_repo_merged", "pull_requests", ["repository_id", "merged_at"])
    op.create_table(
        "analyses",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        _repo_fk(),
        sa.Column("number", sa.Integer, nullable=False),
        sa.Column("engine", sa.String(64), nullable=False),
        sa.Column("model", sa.String(255), nullable=False),
        sa.Column("prompt_version", sa.String(64), nullable=False),
        sa.Column("input_hash", sa.String(64), nullable=False),
        sa.Column("json", sa.JSON, nullable=False),
        sa.Column("created_at", sa.DateTime, nullable=False),
        sa.UniqueConstraint(
            "repository_id", "number", "engine", "model", "prompt_version", "input_hash", name="uq_analyses_unit"
        ),
    )
    op.create_table(
        "llm_cache",
        sa.Column("key", sa.String(64), primary_key=True),
        sa.Column("model", sa.String(255), nullable=False),
        sa.Column("prompt_version", sa.String(64), nullable=False),
        sa.Column("response", sa.Text, nullable=False),
        sa.Column("prompt_tokens", sa.Integer, nullable=False),
        sa.Column("completion_tokens", sa.Integer, nullable=False),
        sa.Column("created_at", sa.DateTime, nullable=False),
    )
    op.create_table(
        "reports",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        _repo_fk(),
        sa.Column("week", sa.String(64), nullable=False),
        sa.Column("lang", sa.String(8), nullable=False),
        sa.Column("format", sa.String(32), nullable=False),
        sa.Column("content", sa.Text, nullable=False),
        sa.Column("created_at", sa.DateTime, nullable=False),
        sa.UniqueConstraint("repository_id", "week", "lang", "format", name="uq_reports_unit"),
    )
    op.create_table(
        "sync_state",
        sa.Column("repository_id", sa.Integer, sa.ForeignKey("repositories.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("source", sa.String(64), primary_key=True),
        sa.Column("cursor", sa.Text),
        sa.Column("last_updated", sa.DateTime),
        sa.Column("last_synced_at", sa.DateTime),
        sa.Column("extra", sa.JSON),
    )


def downgrade() -> None:
    for name in ("sync_state", "reports", "llm_cache", "analyses", "pull_requests", "repositories"):
        op.drop_table(name)
