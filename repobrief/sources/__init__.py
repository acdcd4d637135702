"""Sources: where pull requests come from. One module per backend, looked up in
`repobrief.registry.SOURCES`; this module holds only the interface."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator
from datetime import datetime

from ..models import Commit, PullRequest
from ..window import Window


class Source(ABC):
    """A place that knows which pull requests were merged when.

    Only `iter_pull_requests` is required. The other methods let a source share
    what it knows cheaply; their defaults say "unknown".
    """

    #: the name the source is registered under in `SOURCES`; the store records it with each PR
    name: str = ""
    #: whether it reads or writes the store (the GitHub source's synced PRs); one that does
    #: not is opened once by a backfill and shared by its forked workers
    needs_store: bool = False
    #: warnings for the user (shallow clone, truncated data, …)
    warnings: list[str]

    def __init__(self) -> None:
        self.warnings = []

    @abstractmethod
    def iter_pull_requests(self, window: Window) -> Iterator[PullRequest]:
        """Yield the PRs merged into the default branch inside `window`."""

    @classmethod  # noqa: B027 - an optional hook
    def check_location(cls, location: str) -> None:
        """Raise `UsageError` when `location` (a target given with `--source NAME`) is
        nothing this source can read, before anything is opened."""

    def require(self, window: Window) -> None:  # noqa: B027 - an optional hook
        """The weeks about to be reported: a source that cannot give all of them says so
        here, before anything is read. The weeks read before them (for trends and to
        calibrate sizes) may then come as far as the source has them."""

    def history(self, window: Window) -> Iterator[PullRequest]:
        """PRs of earlier weeks for trends: titles and paths are needed, line counts
        are not (`lines_known` may be False). Sources that can skip work override it."""
        return self.iter_pull_requests(window)

    def direct_commits(self, window: Window) -> list[Commit]:
        """Commits on the default branch inside `window` that no PR explains."""
        return []

    def repository_name(self) -> str | None:
        """`owner/repo`, when the source can tell."""
        return None

    def began(self) -> datetime | None:
        """When the repository's history begins, when what was read reaches that far
        (None: it begins before, or the source cannot tell). Weeks before it are no
        baseline: a repository three weeks old has three weeks to compare with."""
        return None

    def newest_commit(self) -> datetime | None:
        """When the newest change the source holds was made (a clone's branch head), when
        it can tell: a clone that was not pulled reads as weeks without changes."""
        return None

    def remember(self, refresh: bool = False) -> None:  # noqa: B027 - an optional hook
        """Keep what this source derives the same way every run (per commit, say) for
        the next run, and reuse what an earlier run kept; `refresh`: recompute it. A
        weekly report calls it; sources with nothing worth keeping ignore it."""

    def prefetch_authors(self, before: datetime) -> None:  # noqa: B027 - an optional hook
        """A hint that `earlier_authors(before)` will be asked for; sources may start early."""

    def earlier_authors(self, before: datetime) -> set[str] | None:
        """Everyone who authored a change before `before` (None: unknown)."""
        return None

    def as_of(self, end: datetime) -> Source:
        """The source as it stood at `end`, for reading a week that has ended: sources
        whose reads start from the newest change (a clone's log) skip what came later."""
        return self

    def author_first_seen(self) -> dict[str, datetime] | None:
        """When each author (name and e-mail, lower-case) first committed; None: unknown.
        Used when many weeks are reported at once."""
        return None

    def index(self) -> None:  # noqa: B027 - an optional hook
        """Read the cheap facts about the whole history that many weeks share (e.g.
        `author_first_seen`) now, once: a backfill calls it before forking its workers."""

    def commits_per_window(self, windows: list[Window]) -> list[int] | None:
        """How many changes each window holds, from what `index` read (None: unknown);
        a backfill balances its workers with it."""
        return None

    def read_diffs(
        self, prs: list[PullRequest], paths: dict[int, list[str]], max_bytes: int, *, lines: str | None = None
    ) -> dict[int, str]:
        """Unified diffs (added/removed lines) of `prs`, each limited to its files in
        `paths` (by PR number; paths relative to the repository root), at most
        `max_bytes` per PR. With `lines` (a regular expression), only `diff --git`
        headers and the +/- lines it matches are kept. Empty when the source has no diffs."""
        return {}

    def latest_release(self, before: datetime) -> str | None:
        """The newest release's version (a tag such as `v0.8.0`) made before `before`, when known."""
        return None

    def default_timezone(self) -> str | None:
        """The repository's configured time zone, when the source has one."""
        return None

    def close(self) -> None:  # noqa: B027 - an optional hook
        """Release resources (processes, connections)."""
