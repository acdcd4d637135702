"""Incremental sync of a repository's merged pull requests into the store.

The search is ordered by last update (`sort:updated-asc`) and paged by moving
its lower bound (`updated:>=T`, T = the newest update time seen so far)
instead of by cursor. That one rule gives the three properties sync needs:

- **incremental**: a later sync starts from the newest update time stored, so
  a re-sync with nothing new is a single request that returns at most the
  boundary PR (which is recognised as unchanged and not rewritten);
- **resumable**: after every page the PRs are upserted and the bound saved in
  `sync_state`; an interrupted sync continues from that bound;
- **no 1,000-result cap**: every page is the first page of a fresh query, so
  the search cap never applies (a run of more than a page of PRs updated in
  the same second falls back to the cursor for that run).

PRs updated during a sync move to the end of the order and are picked up by
the same run, never skipped, which cursor-paging an updated-sorted search
could do. Time ranges that have been synced are recorded in the sync state's
`extra["ranges"]`, so that an offline report knows whether a week is stored.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from ..errors import SourceError
from .auth import github_url_flag
from .pulls import Fetched, PullRequestFetcher, parse_time, search_time, updated_at

SOURCE = "github"


@dataclass
class SyncResult:
    repository: str
    since: datetime
    new: int = 0
    updated: int = 0
    unchanged: int = 0
    pages: int = 0
    resumed: bool = False
    numbers: list[int] = field(default_factory=list)  # PRs written, in order
    seen: set[int] = field(default_factory=set, repr=False)  # PRs this run has looked at

    def summary(self) -> str:
        text = f"{self.repository}: {self.new} new, {self.updated} updated, {self.unchanged} unchanged"
        return text + (" (resumed an interrupted sync)" if self.resumed else "")


# ---------------------------------------------------------------- coverage


def _stored_time(text: str) -> datetime:
    """A time the sync wrote into its own state (never empty, unlike the API's)."""
    return datetime.fromisoformat(text)


def _ranges(extra: dict | None) -> list[tuple[datetime, datetime]]:
    out = []
    for a, b in (extra or {}).get("ranges", []):
        out.append((_stored_time(a), _stored_time(b)))
    return out


def add_range(extra: dict | None, start: datetime, end: datetime) -> dict:
    """Record that PRs merged in [start, end) are stored (ranges are merged)."""
    extra = dict(extra or {})
    ranges = sorted(_ranges(extra) + [(start.astimezone(UTC), end.astimezone(UTC))])
    merged: list[list[datetime]] = []
    for a, b in ranges:
        if merged and a <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], b)
        else:
            merged.append([a, b])
    extra["ranges"] = [[a.isoformat(), b.isoformat()] for a, b in merged]
    return extra


def stored_created(extra: dict | None) -> datetime | None:
    """When GitHub says the repository was made, as a sync kept it (see `sync_repository`)."""
    return parse_time((extra or {}).get("created"))


def covered(extra: dict | None, start: datetime, end: datetime) -> bool:
    """Whether [start, end) lies inside one stored range."""
    return any(a <= start and end <= b for a, b in _ranges(extra))


# ---------------------------------------------------------------- sync


def stored_name(repository: str, branch: str | None, store=None) -> str:
    """The name the PRs of `repository` merged into `branch` (the default branch: None)
    and their sync state are stored under: OWNER/REPO, or OWNER/REPO@BRANCH, so that a
    release branch's report neither reads nor adds to the default branch's PRs. A branch
    `store` knows as the one OWNER/REPO's PRs were read from (a sync records it: the
    default branch, named in the config) is OWNER/REPO's."""
    if not branch:
        return repository
    state = store.get_sync_state(repository, SOURCE) if store is not None else None
    if state is not None and (state.extra or {}).get("branch") == branch:
        return repository
    return f"{repository}@{branch}"


def sync_repository(
    fetcher: PullRequestFetcher,
    store,
    since: datetime,
    *,
    now: datetime | None = None,
    overlap: timedelta = timedelta(0),
    on_page: Callable[[SyncResult], None] | None = None,
) -> SyncResult:
    """Fetch PRs merged since `since` that are new or changed since the last sync
    and upsert them into `store` (under `stored_name`). Safe to interrupt and run again."""
    repo = stored_name(fetcher.repository, fetcher.configured_branch, store)
    since = since.astimezone(UTC)
    run_start = (now or datetime.now(UTC)).astimezone(UTC)
    result = SyncResult(repo, since)

    state = store.get_sync_state(repo, SOURCE)
    extra = dict((state.extra if state else None) or {})
    pending = extra.get("pending")
    known = store.pull_request_updated_at(repo)
    high = state.last_updated if state else None

    low: datetime | None = None
    merged_from = since
    synced_since = parse_time(extra.get("since"))
    gap: datetime | None = None  # with an earlier --since than before: merged from `since` up to this, read whole
    if pending and _stored_time(pending["since"]) <= since:
        # an interrupted sync that covers what is asked: continue it
        merged_from = _stored_time(pending["since"])
        low = parse_time(pending.get("low"))
        run_start = parse_time(pending.get("started")) or run_start
        result.resumed = True
    elif synced_since is not None and high is not None:
        # incremental: everything merged since the first sync, updated since the last one;
        # reaching further back than before, the PRs merged in between are read whole first
        low = high - overlap
        if since < synced_since:
            gap = synced_since
        else:
            merged_from = synced_since
    # else: a first sync: everything
    result.since = merged_from

    # The checkpoint is written after the first page is stored, so that a sync that fails
    # at once (bad token, no network) leaves the sync state as it was. While the earlier
    # range is read it says "everything since `since`" (its low is no updated time of the
    # rest): an interrupted sync then resumes as a whole one.
    pending = {"since": merged_from.isoformat(), "started": run_start.isoformat(),
               "low": low.isoformat() if low and gap is None else None}
    extra["pending"] = pending
    last_synced = state.last_synced_at if state else None
    # each phase: the merged range [start, end) it reads (the last one open: up to now), and its low
    phases: list[tuple[datetime, datetime | None, datetime | None]] = [(gap or merged_from, None, low)]
    if gap is not None:  # the earlier range first, whole
        phases.insert(0, (merged_from, gap, None))
    for i, (phase_start, phase_end, low) in enumerate(phases):
        merged = (f"merged:>={search_time(phase_start)}" if phase_end is None
                  else f"merged:{search_time(phase_start)}..{search_time(phase_end - timedelta(seconds=1))}")
        last_phase = i == len(phases) - 1
        cursor: str | None = None
        paged = 0  # results of this query read through its cursor
        while True:
            query = f"{fetcher.base_query()} {merged}"
            if low is not None:
                query += f" updated:>={search_time(low)}"
            query += " sort:updated-asc"
            pages = fetcher.search_pages(query, after=cursor)
            count, page, end_cursor, has_next = next(pages)
            pages.close()
            result.pages += 1
            _save(fetcher, store, repo, page, known, result)
            if not page:
                break
            page_max = max(updated_at(n) for n in page)
            high = page_max if high is None else max(high, page_max)
            paged += len(page)
            if low is not None and page_max <= low and not has_next and count > paged:
                # More PRs updated in one second (a bulk edit) than a search returns: the
                # cursor stopped at the cap. That second's PRs are read by merge time,
                # split until each part fits, and the sync goes on after it.
                second = search_time(low)
                nodes = fetcher.merged_nodes(phase_start, phase_end or run_start + timedelta(seconds=1),
                                             f"updated:{second}..{second}")
                _save(fetcher, store, repo, list(nodes), known, result)
                low, cursor, paged = low + timedelta(seconds=1), None, 0
                continue
            if not has_next:
                break
            if low is not None and page_max <= low:
                # a full page of PRs updated in the same second: only the cursor moves on
                cursor = end_cursor
            else:
                cursor, paged = None, 0
                low = page_max
            if last_phase:
                pending["low"] = low.isoformat() if low else None
            store.set_sync_state(repo, SOURCE, last_updated=high, extra=extra, last_synced_at=last_synced)
            if on_page is not None:
                on_page(result)

    extra.pop("pending", None)
    extra["since"] = merged_from.isoformat()
    if fetcher.branch:  # the branch read (the default one, learnt from the first search): see `stored_name`
        extra["branch"] = fetcher.branch
    if fetcher.created is not None:  # what `began` says offline
        extra["created"] = fetcher.created.isoformat()
    extra = add_range(extra, merged_from, run_start)
    store.set_sync_state(repo, SOURCE, last_updated=high, last_synced_at=run_start, extra=extra)
    return result


_ABSENT = object()


def _save(fetcher, store, repo: str, page: list[dict], known: dict, result: SyncResult) -> None:
    """Upsert the PRs of a page (nodes as searched) that are new or changed; count what was
    skipped. Only those are completed: an unchanged PR costs no further request."""
    changed = []
    for node in page:
        if not fetcher.on_branch(node):
            continue  # merged into another branch (a release branch): not the report's
        number, updated = int(node["number"]), updated_at(node)
        if number in result.seen and known.get(number) == updated:
            continue  # the boundary PR that starts the next page: already counted
        result.seen.add(number)
        before = known.get(number, _ABSENT)
        if before is _ABSENT:
            result.new += 1
        elif before is not None and before == updated:
            result.unchanged += 1
            continue
        else:  # changed on GitHub, or stored by another source (git) without discussion
            result.updated += 1
        changed.append(fetcher.complete(node))
    if changed:
        store.save_pull_requests(
            repo, [f.pr for f in changed], source=SOURCE, updated_at={f.pr.number: f.updated_at for f in changed}
        )
        for f in changed:
            known[f.pr.number] = f.updated_at
            result.numbers.append(f.pr.number)


def save_fetched(store, repo: str, fetched: list[Fetched], start: datetime | None = None, end: datetime | None = None,
                 created: datetime | None = None, branch: str | None = None) -> None:
    """Store PRs fetched outside a sync (a report's week, an enrichment); with
    [start, end) the range is recorded as stored, with when the repository was made."""
    if fetched:
        store.save_pull_requests(repo, [f.pr for f in fetched], source=SOURCE, updated_at={f.pr.number: f.updated_at for f in fetched})
    if start is not None and end is not None:
        state = store.get_sync_state(repo, SOURCE)
        extra = add_range(state.extra if state else None, start, end)
        if created is not None:
            extra["created"] = created.isoformat()
        if branch:
            extra["branch"] = branch
        store.set_sync_state(
            repo,
            SOURCE,
            cursor=state.cursor if state else None,
            last_updated=state.last_updated if state else None,
            last_synced_at=state.last_synced_at if state else None,
            extra=extra,
        )


def require_covered(store, repo: str, start: datetime, end: datetime, label: str, api_url: str | None = None) -> None:
    """Raise unless the PRs of `repo` merged in [start, end) are all stored; the error
    says what is stored instead (times in the zone of `start`) and which sync to run."""
    state = store.get_sync_state(repo, SOURCE)
    extra = state.extra if state else None
    if covered(extra, start, end):
        return
    in_store = f"in the store {getattr(store, 'display', '')}".rstrip()
    pending = (extra or {}).get("pending")
    if pending and _stored_time(pending["since"]) < end and start < _stored_time(pending["started"]):
        # an interrupted sync reached into the range: part of it is stored, and finishing that sync stores the rest
        stored = len(store.load_pull_requests(repo, start, end))
        raise SourceError(
            f"{label} of {repo} is only partly {in_store}: a sync of the PRs merged since "
            f"{_local(_stored_time(pending['since']), start)} ({_zone_name(start)}) did not finish "
            f"({stored} PR{'s' if stored != 1 else ''} of it stored so far)",
            f"run `repobrief sync github:{repo.partition('@')[0]}{github_url_flag(api_url)}` to finish that sync "
            "(it continues where it stopped), or drop --offline",
        )
    ranges = _ranges(extra)
    if ranges:
        shown = " and ".join(f"from {_local(a, start)} to {_local(b, start)}" for a, b in ranges[-3:])
        have = f"; stored: the PRs merged {'… and ' if len(ranges) > 3 else ''}{shown} ({_zone_name(start)})"
    else:
        have = "; nothing of it is stored"
    raise SourceError(
        f"{label} of {repo} is not {in_store}{have}",
        f"run `{sync_command(repo, start, api_url)}` first, or drop --offline",
    )


def _zone_name(d: datetime) -> str:
    return getattr(d.tzinfo, "key", None) or "UTC"


def _local(d: datetime, like: datetime) -> str:
    """`d` in the zone of `like` (its name is said once, by the caller)."""
    zone = like.tzinfo if getattr(like.tzinfo, "key", None) else UTC
    return f"{d.astimezone(zone):%Y-%m-%d %H:%M}"


def sync_command(repo: str, start: datetime, api_url: str | None = None) -> str:
    """The `repobrief sync` that stores the PRs of `repo` merged from `start` on
    (with `--github-url` when `api_url` is not GitHub.com's: the same server)."""
    # --since is read in --tz (else the config's zone): name the zone the date is in
    zone = getattr(start.tzinfo, "key", None)
    since = start.date() if zone else start.astimezone(UTC).date()
    # (a branch's PRs, stored as OWNER/REPO@BRANCH, are synced with the config that names the branch)
    return (f"repobrief sync github:{repo.partition('@')[0]}{github_url_flag(api_url)} --since {since.isoformat()} "
            f"--tz {zone or 'UTC'}")
