"""Conversions between the records of `repobrief.models` and the store's rows.

Datetimes are stored as naive UTC (portable across SQLite and PostgreSQL) and
come back timezone-aware in UTC; discussion (reviews, comments, threads) is one
JSON document so that sources that have none store an empty one.
"""

from __future__ import annotations

from dataclasses import asdict
from datetime import UTC, datetime
from typing import overload

from ..models import Comment, FileChange, PRAnalysis, PullRequest, Reason, ReviewThread, Risk


def to_utc_naive(d: datetime | None) -> datetime | None:
    if d is None:
        return None
    if d.tzinfo is None:  # a naive time is taken to be UTC already
        return d
    return d.astimezone(UTC).replace(tzinfo=None)


@overload
def from_utc_naive(d: datetime | str) -> datetime: ...
@overload
def from_utc_naive(d: None) -> None: ...


def from_utc_naive(d: datetime | str | None) -> datetime | None:
    if d is None:
        return None
    if isinstance(d, str):  # some drivers hand back text for JSON-embedded times
        d = datetime.fromisoformat(d)
    return d.replace(tzinfo=UTC) if d.tzinfo is None else d.astimezone(UTC)


def _iso(d: datetime | None) -> str | None:
    d = to_utc_naive(d)
    return d.isoformat() if d else None


def _comment_to_json(c: Comment) -> dict:
    d = asdict(c)
    d["created_at"] = _iso(c.created_at)
    return d


def _comment_from_json(d: dict) -> Comment:
    d = dict(d)
    d["created_at"] = from_utc_naive(datetime.fromisoformat(d["created_at"])) if d.get("created_at") else None
    return Comment(**d)


def discussion_to_json(pr: PullRequest) -> dict:
    return {
        "reviews": [_comment_to_json(c) for c in pr.reviews],
        "comments": [_comment_to_json(c) for c in pr.comments],
        "threads": [
            {
                "path": t.path,
                "resolved": t.resolved,
                "diff_hunk": t.diff_hunk,
                "comments": [_comment_to_json(c) for c in t.comments],
            }
            for t in pr.threads
        ],
    }


def pr_to_row(pr: PullRequest, *, repository_id: int, source: str, updated_at: datetime | None, now: datetime) -> dict:
    return {
        "repository_id": repository_id,
        "number": pr.number,
        "title": pr.title,
        "body": pr.body or "",
        "author": pr.author or "",
        "author_email": pr.author_email,
        "url": pr.url,
        "sha": pr.sha,
        "base_branch": pr.base_branch,
        "via": pr.via,
        "merged_at": to_utc_naive(pr.merged_at),
        "labels": list(pr.labels),
        "files": [[f.path, f.added, f.deleted, f.status, *([f.previous] if f.previous else [])] for f in pr.files],
        "discussion": discussion_to_json(pr),
        "discussion_known": bool(pr.discussion_known),
        "linked_issues": list(pr.linked_issues),
        "reverts": pr.reverts,
        "reverts_title": pr.reverts_title,
        "additions_total": pr.additions_total,
        "deletions_total": pr.deletions_total,
        "source": source,
        "updated_at": to_utc_naive(updated_at),
        "stored_at": to_utc_naive(now),
    }


def pr_from_row(row) -> PullRequest:
    m = row._mapping
    disc = m["discussion"] or {}
    return PullRequest(
        number=m["number"],
        title=m["title"],
        body=m["body"],
        author=m["author"],
        merged_at=from_utc_naive(m["merged_at"]),
        files=[FileChange(path=f[0], added=f[1], deleted=f[2], status=f[3], previous=f[4] if len(f) > 4 else None)
               for f in m["files"] or []],
        sha=m["sha"],
        url=m["url"],
        author_email=m["author_email"],
        base_branch=m["base_branch"],
        via=m["via"],
        labels=list(m["labels"] or []),
        reviews=[_comment_from_json(c) for c in disc.get("reviews", [])],
        comments=[_comment_from_json(c) for c in disc.get("comments", [])],
        threads=[
            ReviewThread(
                path=t.get("path"),
                resolved=t.get("resolved"),
                diff_hunk=t.get("diff_hunk"),
                comments=[_comment_from_json(c) for c in t.get("comments", [])],
            )
            for t in disc.get("threads", [])
        ],
        linked_issues=list(m["linked_issues"] or []),
        discussion_known=bool(m["discussion_known"]),
        reverts=m["reverts"],
        reverts_title=m["reverts_title"],
        additions_total=m["additions_total"],
        deletions_total=m["deletions_total"],
    )


def analysis_to_json(a: PRAnalysis) -> dict:
    return asdict(a)


def analysis_from_json(d: dict) -> PRAnalysis:
    d = dict(d)
    d["importance_reasons"] = [Reason(**r) for r in d.get("importance_reasons", [])]
    d["risks"] = [Risk(**r) for r in d.get("risks", [])]
    return PRAnalysis(**d)
