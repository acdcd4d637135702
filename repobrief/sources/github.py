"""The `github` source: merged pull requests with labels, reviews, review threads,
comments and closing issues, from GitHub.com or GitHub Enterprise Server.

`repobrief report github:OWNER/REPO` reads a week through the GraphQL API and
stores what it read; with `--offline` it reads only the store (filled by
`repobrief sync`) and says so when the week is not there. `enrich(prs)` adds
GitHub's discussion and labels to PRs that a local clone found.
"""

from __future__ import annotations

import logging
import re
import sys
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING

from ..config import Settings
from ..errors import SourceError, UsageError
from ..models import Notice, PullRequest
from ..window import Window, parse_timezone
from . import Source

if TYPE_CHECKING:
    from ..github.client import GitHubClient, RequestStats
    from ..github.pulls import PullRequestFetcher

log = logging.getLogger(__name__)

_REPO = re.compile(r"^[A-Za-z0-9][A-Za-z0-9-]{0,38}/[A-Za-z0-9._-]{1,100}$")
_URL = re.compile(r"^(?:https?://([^/]+)/|git@([^:]+):)([^/]+/[^/]+?)(?:\.git)?/?$")


def parse_repository(location: str) -> str:
    """`OWNER/REPO` from `OWNER/REPO`, `github:OWNER/REPO` or a clone URL."""
    text = location.strip()
    if text.startswith("github:"):
        text = text[len("github:") :]
    m = _URL.match(text)
    if m:
        text = m.group(3)
    if not _REPO.match(text):
        raise UsageError(
            f"invalid GitHub repository {location!r}; expected OWNER/REPO",
            "e.g. github:verl-project/verl",
        )
    return text


def check_clone_host(location: str, api_url: str | None) -> None:
    """A clone URL names its server too: one that is not the API's would be read from
    the wrong GitHub (a GitHub Enterprise clone URL without --github-url)."""
    from ..github.auth import is_local, normalize_api_url, web_host

    m = _URL.match(location.strip().removeprefix("github:"))
    if not m:
        return
    host = (m.group(1) or m.group(2) or "").rpartition("@")[2].split(":")[0].lower()
    api = normalize_api_url(api_url)
    if host and host != web_host(api).lower() and not is_local(api):  # a local proxy or test server stands in for any
        other = next((name for name in ("GitLab", "Bitbucket", "Gitee", "Codeberg") if name.lower() in host), None)
        if other:  # no GitHub Enterprise Server there
            raise UsageError(f"the clone URL is on {host}, a {other} server: repobrief reads the GitHub API only",
                             f"clone the repository (git clone {location.strip().removeprefix('github:')}) and "
                             "report from its folder (repobrief report PATH): a local clone needs no API")
        raise UsageError(
            f"the clone URL is on {host}, and the GitHub API in use is {api}",
            f"give --github-url https://{host}/api/v3 (GitHub Enterprise Server), or github:{m.group(3)} for "
            f"the repository of that name at {api}",
        )


def _announce(message: str, seconds: float) -> None:
    """Rate-limit waits and retries go to stderr: a silent pause looks like a hang."""
    print(f"github: {message}", file=sys.stderr, flush=True)


class GitHubSource(Source):
    """Pull requests of one GitHub repository."""

    name = "github"
    needs_store = True
    stores_itself = True  # upserts what it reads, with GitHub's update times for sync

    def __init__(
        self,
        location: str,
        settings: Settings,
        *,
        store=None,
        offline: bool = False,
        on_wait: Callable[[str, float], None] | None = None,
        search_cap: int | None = None,
    ) -> None:
        super().__init__()
        self.repository = parse_repository(location)
        from ..github.sync import stored_name

        # the name its PRs and sync state are stored under: a configured branch's apart
        self.stored_as = stored_name(self.repository, settings.branch or None if settings is not None else None, store)
        self.location = location
        self.settings = settings
        # a clone URL names its server: one that is not the API's is another GitHub's
        # repository, whose PRs neither the API nor the store (offline) holds
        check_clone_host(location, settings.github.url if settings is not None else None)
        self.store = store
        self.offline = offline
        self._on_wait = on_wait or _announce
        self._search_cap = search_cap
        self._client: GitHubClient | None = None
        self._closed_stats: RequestStats | None = None
        self._fetcher: PullRequestFetcher | None = None
        # what this run already read, so that the pipeline's overlapping windows
        # (history, calibration weeks, the week) cost one fetch
        self._read: list[tuple[datetime, datetime, list[PullRequest]]] = []
        self._required: Window | None = None  # the weeks to report (see `require`)

    @classmethod
    def check_location(cls, location: str) -> None:
        """`--source github` with a clone's folder is a mix-up, not a repository name."""
        try:
            parse_repository(location)
        except UsageError:
            if not Path(location).expanduser().exists():
                raise
            raise UsageError(
                f"--source github reads a GitHub repository, and {location!r} is a local folder",
                "drop --source github to read the clone with git (--github OWNER/REPO adds GitHub's labels and "
                "discussion to it), or give github:OWNER/REPO",
            ) from None

    # ------------------------------------------------------------------ plumbing

    @property
    def fetcher(self):
        """The API reader, created on first use (offline use needs no token)."""
        if self.offline:
            raise SourceError("the GitHub source is offline: it reads only the store", "drop --offline to use the network")
        if self._fetcher is None:
            from ..github.auth import normalize_api_url, resolve_token
            from ..github.client import GitHubClient
            from ..github.pulls import SEARCH_CAP, PullRequestFetcher

            url = normalize_api_url(self.settings.github.url)
            token = resolve_token(self.settings.github.token, url)
            gh = self.settings.github
            self._client = client = GitHubClient(
                token, url, on_wait=self._on_wait, max_retries=gh.max_retries, backoff=gh.backoff, max_wait=gh.max_wait
            )
            self._fetcher = PullRequestFetcher(
                client, self.repository, search_cap=self._search_cap or SEARCH_CAP, branch=self.settings.branch or None,
                warnings=self.warnings,
            )
        return self._fetcher

    @property
    def stats(self) -> dict:
        """Requests sent and GraphQL points spent so far (zero when offline)."""
        st = self._client.stats if self._client is not None else self._closed_stats
        return {
            "requests": st.requests if st else 0,
            "graphql_points": st.graphql_cost if st else 0,
            "retries": st.retries if st else 0,
            "rate_limit_wait_seconds": round(st.waited_seconds, 1) if st else 0.0,
            "offline": self.offline,
        }

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._closed_stats = self._client.stats  # still reported after closing
            self._client = None
            self._fetcher = None

    def repository_name(self) -> str | None:
        return self.repository

    def began(self) -> datetime | None:
        """When the repository was made on GitHub (no PR was merged before): learnt with
        the first search, or offline from the store (a sync keeps it)."""
        if self._fetcher is not None and self._fetcher.created is not None:
            return self._fetcher.created
        if self.store is None:
            return None
        from ..github.sync import SOURCE, stored_created

        state = self.store.get_sync_state(self.stored_as, SOURCE)
        return stored_created(state.extra if state else None)

    # ------------------------------------------------------------------ reading

    def require(self, window: Window) -> None:
        """Offline, the weeks to report must be in the store; the weeks before them
        (read with them to calibrate sizes) are read as far as they are stored."""
        if self.offline:
            self._check_stored(window)
            self._required = window

    def iter_pull_requests(self, window: Window) -> Iterator[PullRequest]:
        if self.offline:
            req = self._required
            if req is not None and window.start <= req.start and req.end <= window.end:
                yield from self._from_store(window, require=False)  # `require` checked what counts
            else:
                yield from self._from_store(window, require=True)
            return
        for start, end, prs in self._read:
            if start <= window.start and window.end <= end:
                yield from (p for p in prs if window.contains(p.merged_at))
                return
        from ..github.sync import save_fetched

        fetched = list(self.fetcher.merged_between(window.start, window.end))
        if self.store is not None:
            now = datetime.now(window.start.tzinfo)
            save_fetched(self.store, self.stored_as, fetched, window.start, min(window.end, now), self.fetcher.created,
                         self.fetcher.branch)
        prs = [f.pr for f in sorted(fetched, key=lambda f: (f.pr.merged_at, f.pr.number))]
        self._read.append((window.start, window.end, prs))
        yield from (p for p in prs if window.contains(p.merged_at))

    def history(self, window: Window) -> Iterator[PullRequest]:
        """Earlier weeks: from the store when it has them (no requests), else fetched.
        Offline, weeks that were never synced are read as they are (often empty), and
        the report says that its trends compare with them."""
        if self.store is not None:
            from ..github.sync import SOURCE, covered, stored_created

            state = self.store.get_sync_state(self.stored_as, SOURCE)
            extra = state.extra if state else None
            if self.offline:
                baseline_end = self._required.start if self._required is not None else window.end
                start = max(window.start, stored_created(extra) or window.start)  # no PR was merged before it
                if start < baseline_end and not covered(extra, start, baseline_end):
                    self._warn_unsynced(start, baseline_end)
            if self.offline or covered(extra, window.start, window.end):
                yield from self._from_store(window, require=False)
                return
        yield from self.iter_pull_requests(window)

    def _warn_unsynced(self, start: datetime, end: datetime) -> None:
        from ..github.sync import sync_command

        command = sync_command(self.repository, start, self.settings.github.url)
        self._warn(Notice(
            f"trends compare with weeks that were not synced: the PRs of {self.repository} merged from "
            f"{start:%Y-%m-%d} to {end:%Y-%m-%d} are not all in the store, so those weeks may look quieter "
            f"than they were; run `{command}` to sync them",
            "github_unsynced", repository=self.repository, start=f"{start:%Y-%m-%d}", end=f"{end:%Y-%m-%d}",
            command=command,
        ))

    def _warn(self, warning: str) -> None:
        """A warning for the report, once however often its cause is met."""
        if warning not in self.warnings:
            self.warnings.append(warning)

    def _from_store(self, window: Window, *, require: bool) -> Iterator[PullRequest]:
        self._check_stored(window, require=require)
        # every stored row of the repository: a report run on a clone with --github
        # may have replaced a synced row with an enriched one (a bare clone's cannot)
        yield from self.store.load_pull_requests(self.stored_as, window.start, window.end)

    def _check_stored(self, window: Window, *, require: bool = True) -> None:
        from ..github.sync import require_covered

        if self.store is None:
            raise SourceError(
                "--offline needs the store, and none is open",
                "pass --db PATH (the database `repobrief sync` wrote)",
            )
        if require:
            label = f"week {window.label}" if window.is_week else window.label
            require_covered(self.store, self.stored_as, window.start, window.end, label, self.settings.github.url)

    def earlier_authors(self, before: datetime) -> set[str] | None:
        """Authors (lower-cased) known to have had a PR merged before `before`.

        Online, GitHub is asked directly for the authors of the PRs read from
        `before` on (one request per 30 authors), so that first-time contributors
        are exact. Offline, the store answers only when it reaches back a year;
        otherwise None (unknown) rather than calling everyone new."""
        if self.offline:
            if self.store is None:
                return None
            from ..github.sync import SOURCE, _ranges, sync_command

            state = self.store.get_sync_state(self.stored_as, SOURCE)
            ranges = _ranges(state.extra if state else None)
            year = before - timedelta(days=365)
            if not ranges or min(a for a, _b in ranges) > year:
                command = sync_command(self.repository, year, self.settings.github.url)
                self._warn(Notice(
                    f"first-time contributors are not counted: telling them needs the PRs of {self.repository} "
                    f"merged in the year before {before:%Y-%m-%d}, which the store does not hold; run "
                    f"`{command}` to count them",
                    "github_first_time", repository=self.repository, before=f"{before:%Y-%m-%d}", command=command,
                ))
                return None
            return {p.author.lower() for p in self.store.load_pull_requests(self.stored_as, None, before)}
        authors = {p.author for _s, _e, prs in self._read for p in prs if p.merged_at >= before}
        if not authors:
            return None
        return {a.lower() for a in self.fetcher.authors_with_earlier_merges(sorted(authors), before)}

    # ------------------------------------------------------------------ enriching a clone

    def enrich(self, prs: list[PullRequest]) -> None:
        """Fill labels, reviews, comments, threads and linked issues of PRs found in a
        clone, from the store (offline) or from GitHub; files stay the clone's."""
        if not prs:
            return
        found: dict[int, PullRequest | None] = {}
        if self.offline:
            if self.store is None:
                raise SourceError("--offline needs the store to enrich a clone", "pass --db PATH")
            for pr in prs:
                stored = self.store.get_pull_request(self.stored_as, pr.number)
                found[pr.number] = stored if stored is not None and stored.discussion_known else None
        else:
            from ..github.sync import save_fetched

            fetched = self.fetcher.by_numbers([p.number for p in prs])
            if self.store is not None:
                save_fetched(self.store, self.stored_as, [f for f in fetched.values() if f is not None])
            found = {n: (f.pr if f is not None else None) for n, f in fetched.items()}
        missing = []
        for pr in prs:
            gh = found.get(pr.number)
            if gh is None:
                missing.append(pr.number)
                continue
            pr.labels = list(gh.labels)
            pr.reviews = list(gh.reviews)
            pr.comments = list(gh.comments)
            pr.threads = list(gh.threads)
            pr.linked_issues = list(gh.linked_issues)
            pr.discussion_known = True
            pr.url = pr.url or gh.url
            pr.base_branch = pr.base_branch or gh.base_branch
        if missing:
            shown = ", ".join(f"#{n}" for n in missing[:10]) + (" …" if len(missing) > 10 else "")
            head = f"no discussion for {len(missing)} PR(s) {shown}: not found"
            if self.offline:
                command = self._sync_for(prs, missing)
                self.warnings.append(Notice(f"{head} in the store; run `{command}` to add them",
                                            "github_no_discussion_stored", count=len(missing), prs=shown, command=command))
            else:
                self.warnings.append(Notice(f"{head} on GitHub as pull requests of {self.repository}",
                                            "github_no_discussion", count=len(missing), prs=shown,
                                            repository=self.repository))

    def _sync_for(self, prs: list[PullRequest], numbers: list[int]) -> str:
        """The sync that stores the PRs `numbers` (of `prs`): from the day the first merged,
        in the configured zone (the one `sync --tz` would read the date in)."""
        from ..github.sync import sync_command

        first = min(p.merged_at for p in prs if p.number in numbers)
        start = first.astimezone(parse_timezone(self.settings.timezone)) if self.settings.timezone else first
        return sync_command(self.repository, start, self.settings.github.url)
