"""The records that flow through repobrief: what a source yields, what an engine
adds, and the report that renderers turn into text.

Everything here is plain data (dataclasses) so that every stage can be tested
on its own and the JSON renderer is a straight dump of `Report.to_dict()`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime
from functools import lru_cache

SCHEMA_VERSION = "1.0"

# Characters no report should carry from untrusted text: C0 and C1 controls other than
# tab and newline (an ESC sequence in a PR title clears the screen and retitles the
# terminal of whoever reads the report there), and the bidirectional embedding,
# override and isolate controls (one left open reverses how the rest of a line or
# paragraph is displayed: other PR numbers, text). Titles and names lose them when they
# enter, the parts of bodies a report quotes when they are taken; marks (U+200E/F) stay.
_UNSAFE_CHARS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def inert_text(text: str) -> str:
    """`text` without control characters other than tab and newline, and without
    bidirectional controls. (Printable text is returned at once.)"""
    return text if not text or text.isprintable() or not _UNSAFE_CHARS.search(text) else _UNSAFE_CHARS.sub("", text)


@dataclass(slots=True)
class FileChange:
    """One file of a change, with `git log --numstat` line counts (None for binary)."""

    path: str
    added: int | None = 0
    deleted: int | None = 0
    status: str = "M"  # "A" created, "D" deleted, "M" modified (or moved with edits), "R" moved unchanged (a clone)
    previous: str | None = None  # where the file was moved from: "R", or "M" (a rename on GitHub; a module's in a clone)

    @property
    def lines(self) -> int:
        return (self.added or 0) + (self.deleted or 0)


@dataclass(slots=True)
class Comment:
    """A piece of discussion: an issue comment, a review, or a review-thread comment."""

    author: str
    body: str
    kind: str = "comment"  # "comment" | "review" | "review_comment"
    created_at: datetime | None = None
    state: str | None = None  # reviews: APPROVED, CHANGES_REQUESTED, COMMENTED, DISMISSED
    path: str | None = None
    diff_hunk: str | None = None
    author_association: str | None = None  # OWNER, MEMBER, CONTRIBUTOR, ...

    def __post_init__(self) -> None:
        self.author = inert_text(self.author)  # the body reaches reports through first_sentence


@dataclass(slots=True)
class ReviewThread:
    """A review thread on a line of the diff."""

    path: str | None
    comments: list[Comment] = field(default_factory=list)
    resolved: bool | None = None
    diff_hunk: str | None = None


@dataclass(slots=True)
class PullRequest:
    """A pull request merged into the default branch, as a source sees it."""

    number: int
    title: str
    body: str
    author: str
    merged_at: datetime  # timezone-aware
    files: list[FileChange] = field(default_factory=list)
    sha: str | None = None
    url: str | None = None
    author_email: str | None = None
    base_branch: str | None = None
    via: str = "squash"  # "squash" | "merge" | "branch:<name>" | "api"
    labels: list[str] = field(default_factory=list)
    reviews: list[Comment] = field(default_factory=list)
    comments: list[Comment] = field(default_factory=list)
    threads: list[ReviewThread] = field(default_factory=list)
    linked_issues: list[int] = field(default_factory=list)
    discussion_known: bool = False  # True when the source can see discussion at all
    reverts: int | None = None  # the PR number this PR reverts, when known
    reverts_title: str | None = None
    additions_total: int | None = None  # from an API, when file lists are truncated
    deletions_total: int | None = None
    lines_known: bool = True  # False: files are known, their line counts were not read

    def __post_init__(self) -> None:
        # Bodies are long and reach reports only through `conventions` (first_sentence,
        # the breaking-change note), which clean what they take.
        self.title, self.author = inert_text(self.title), inert_text(self.author)

    # Plain loops: these run for every PR of every week, and a generator per sum cost
    # three times as much.
    @property
    def lines_added(self) -> int:
        if self.additions_total is not None:
            return self.additions_total
        n = 0
        for f in self.files:
            n += f.added or 0
        return n

    @property
    def lines_deleted(self) -> int:
        if self.deletions_total is not None:
            return self.deletions_total
        n = 0
        for f in self.files:
            n += f.deleted or 0
        return n

    @property
    def lines(self) -> int:
        return self.lines_added + self.lines_deleted


@dataclass(slots=True)
class Commit:
    """A commit on the default branch that no pull request explains (a direct commit)."""

    sha: str
    subject: str
    author: str
    committed_at: datetime
    files: list[FileChange] = field(default_factory=list)
    reverts: int | None = None  # the PR number this commit reverts, when known
    author_email: str | None = None  # as for PRs: who is new is judged by name or e-mail

    def __post_init__(self) -> None:
        self.subject, self.author = inert_text(self.subject), inert_text(self.author)


@dataclass(slots=True)
class Reason:
    """One term of an importance score: `new feature +3.0`."""

    code: str
    points: float
    text: str

    def __str__(self) -> str:
        return f"{self.text} {_signed(self.points)}"


@lru_cache(maxsize=1024)
def _signed(points: float) -> str:
    """A score's figure, `+3.0`: scores take a few hundred values, and formatting a float
    costs more than looking it up (a backfill writes ~13,000 reasons per 100 weeks)."""
    return f"{'+' if points >= 0 else '-'}{abs(points):.1f}"


@dataclass(slots=True)
class Risk:
    """A risk: what kind, how bad, which PRs, and the evidence for it."""

    kind: str
    severity: str  # "high" | "medium" | "low"
    prs: list[int]
    evidence: list[str]
    title: str = ""
    text: str = ""

    def to_dict(self) -> dict:
        # Written out: `asdict` deep-copies each value, and a backfill writes thousands of these.
        return {"kind": self.kind, "severity": self.severity, "prs": list(self.prs), "evidence": list(self.evidence),
                "title": self.title, "text": self.text}


@dataclass(slots=True)
class PRAnalysis:
    """What an engine concluded about one pull request."""

    number: int
    modules: list[str]
    type: str
    themes: list[str]
    breaking: bool
    importance: float
    importance_reasons: list[Reason]
    key_contribution: str
    risks: list[Risk] = field(default_factory=list)
    discussion_summary: str | None = None
    gist: str = ""  # the title without tags, for tables
    engine: str = "offline"
    fallback_reason: str | None = None


@dataclass(slots=True)
class Theme:
    """A module or cross-cutting topic of the week, with its PRs and the counts behind it."""

    key: str
    name: str
    prs: list[int]
    kind: str = "module"  # "module" | "configured" | "discovered" | "type"
    baseline_mean: float = 0.0
    previous: int = 0
    rank_in_history: int | None = None  # 1 = most of any week in the baseline span
    history_weeks: int = 0

    @property
    def count(self) -> int:
        return len(self.prs)

    def to_dict(self) -> dict:
        return {"key": self.key, "name": self.name, "prs": list(self.prs), "kind": self.kind,
                "baseline_mean": self.baseline_mean, "previous": self.previous, "rank_in_history": self.rank_in_history,
                "history_weeks": self.history_weeks, "count": self.count}


class Notice(str):
    """A warning for the report's reader, written in English, that the report words in its
    own language when the catalogs have `[warnings] key` (filled with `params`)."""

    key: str
    params: dict

    def __new__(cls, text: str, key: str, **params) -> Notice:
        self = super().__new__(cls, text)
        self.key, self.params = key, params
        return self

    def __reduce__(self):  # pickled with its key (reports cross process boundaries)
        return (_notice, (str(self), self.key, self.params))


def _notice(text: str, key: str, params: dict) -> Notice:
    return Notice(text, key, **params)


@dataclass(slots=True)
class Item:
    """One entry of a section: a short name, its text, and the PRs it cites."""

    name: str
    text: str
    prs: list[int] = field(default_factory=list)


@dataclass(slots=True)
class TableRow:
    number: int
    gist: str
    importance: float
    key_contribution: str
    url: str | None = None


@dataclass(slots=True)
class Sections:
    """The six sections of `report-format.md`, already written in the report's language."""

    summary: str
    key_changes: list[Item]
    trends: list[Item]
    risks: list[Item]
    table: list[TableRow]
    recommendations: list[Item]
    closing: str = ""
    sources: dict[str, str] = field(default_factory=dict)  # section -> engine that wrote it


@dataclass(slots=True)
class Card:
    """The chat card's text (`report-format.md`, "Chat card")."""

    title: str
    highlights: list[str]
    risks: list[str]
    button: str
    link: str | None = None


@dataclass(slots=True)
class Report:
    """A weekly report: the data, the computed statistics, and the written sections."""

    repository: str
    week: str  # "2026-W26" (or "2026-06-01..2026-06-10" for a custom range)
    timezone: str
    start: datetime
    end: datetime  # exclusive
    lang: str
    threshold: float
    stats: dict
    pull_requests: list[PullRequest]
    analyses: dict[int, PRAnalysis]
    themes: list[Theme]
    risks: list[Risk]
    sections: Sections
    card: Card
    engine: dict
    direct_commits: list[Commit] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    generated_at: datetime | None = None

    @property
    def owner(self) -> str:
        return self.repository.split("/", 1)[0] if "/" in self.repository else ""

    @property
    def repo(self) -> str:
        return self.repository.split("/", 1)[-1]
