"""Fetching merged pull requests, complete with their discussion, from GitHub.

Search finds the pull requests (merged in a time range, or updated since a
moment); every connection of every pull request is then read to its last page.
GitHub's search returns at most 1,000 results per query, so a range whose
`issueCount` exceeds that cap is split in two halves until each part fits.
"""

from __future__ import annotations

from collections.abc import Generator, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from ..analysis import files as fk
from ..conventions import parse_title, reverted_title, reverts_named
from ..errors import SourceError
from ..models import Comment, FileChange, Notice, PullRequest, ReviewThread
from . import queries
from .client import GitHubClient

SEARCH_CAP = 1000  # GitHub search never returns more than this per query
CONNECTIONS = ("files", "labels", "reviews", "reviewThreads", "comments", "closingIssuesReferences")
_STATUS = {"ADDED": "A", "DELETED": "D"}  # everything else (modified, renamed, …) is "M"
REST_FILES_PAGE = 100  # the most GitHub's REST list of a PR's files gives per page


@dataclass(slots=True)
class Fetched:
    """A pull request as fetched, with GitHub's last-modified time (for incremental sync)."""

    pr: PullRequest
    updated_at: datetime


def search_time(d: datetime) -> str:
    """A search-qualifier time: whole seconds, UTC, explicit offset."""
    return d.astimezone(UTC).replace(microsecond=0).isoformat()


def parse_time(text: str | None) -> datetime | None:
    if not text:
        return None
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


class PullRequestFetcher:
    """Reads pull requests of one repository through a `GitHubClient`."""

    def __init__(
        self,
        client: GitHubClient,
        repository: str,
        *,
        search_cap: int = SEARCH_CAP,
        page_size: int = queries.SEARCH_PAGE,
        branch: str | None = None,
        warnings: list[str] | None = None,
    ) -> None:
        self.client = client
        self.repository = repository
        self.owner, _, self.name = repository.partition("/")
        self.search_cap = search_cap
        self.page_size = page_size
        self.splits = 0  # how many times a range was split to stay under the cap
        # the branch a report covers: the configured one, else the repository's
        # default (learnt from the first search); PRs merged elsewhere are left out
        self.branch = branch or None
        self.configured_branch = self.branch  # what the store keeps its PRs under (`sync.stored_name`)
        self.created: datetime | None = None  # when the repository was made (no PR merged before it)
        # parts of PRs GitHub withheld (e.g. a closing issue in a repository the token may not read)
        self.warnings: list[str] = warnings if warnings is not None else []

    def on_branch(self, node: dict) -> bool:
        """Whether a PR node (as searched, before `complete`) was merged into the report's branch."""
        return self.branch is None or node.get("baseRefName") in (None, self.branch)

    # ------------------------------------------------------------------ search

    def base_query(self) -> str:
        return f"repo:{self.repository} is:pr is:merged"

    def search_pages(self, query: str, after: str | None = None) -> Generator[tuple[int, list[dict], str | None, bool], None, None]:
        """Pages of one search query: (issueCount, PR nodes, endCursor, hasNextPage). The
        nodes are as searched: `complete` reads the rest of those a caller keeps (a page
        that is split, a PR of another branch or one unchanged since the last sync costs
        no request for its long discussions or renamed files)."""
        while True:
            data = self.client.graphql(
                queries.SEARCH,
                {"owner": self.owner, "name": self.name, "q": query, "first": self.page_size, "after": after},
                allow_partial=True,
            )
            self._check_repository(data)
            search = data.get("search") or {}
            nodes = [n for n in search.get("nodes") or [] if n and n.get("__typename") == "PullRequest"]
            info = search.get("pageInfo") or {}
            has_next = bool(info.get("hasNextPage"))
            yield int(search.get("issueCount") or 0), nodes, info.get("endCursor"), has_next
            if not has_next or not nodes:
                return
            after = info.get("endCursor")

    def _check_repository(self, data: dict) -> None:
        errors = self._withheld(data, ("search", "nodes"))
        if data.get("repository") is None or errors:
            if data.get("repository") is None and not errors:
                errors = [{"type": "NOT_FOUND", "message": f"Could not resolve to a Repository with the name '{self.repository}'."}]
            raise self.client.graphql_error(errors, self.repository)
        if self.branch is None:
            self.branch = ((data["repository"].get("defaultBranchRef") or {}).get("name")) or None
        self.created = self.created or parse_time(data["repository"].get("createdAt"))

    def _withheld(self, data: dict, prefix: tuple[str, ...]) -> list[dict]:
        """The errors of a partial answer, less those about a part of one PR (under
        `prefix` + the PR's index or alias): GitHub nulls a part the token may not read
        and answers the rest, which is kept, with a warning naming what is missing."""
        errors = []
        for e in data.get("__errors__") or []:
            path = list(e.get("path") or [])
            if tuple(path[: len(prefix)]) != prefix or len(path) <= len(prefix) + 1:
                errors.append(e)
                continue
            node = _at(data, path[: len(prefix) + 1])
            number = f"#{node['number']}" if isinstance(node, dict) and node.get("number") else "a pull request"
            part = path[len(prefix) + 1]
            self._note_withheld(part, number, e.get("message") or e.get("type") or "no reason given")
        return errors

    def _note_withheld(self, part: str, number: str, reason: str) -> None:
        warning = Notice(f"GitHub withheld {part} of {number} ({reason}); the rest of it is kept", "github_withheld",
                         part=part, pr=number, reason=reason)
        if warning not in self.warnings:
            self.warnings.append(warning)

    def merged_between(self, start: datetime, end: datetime) -> Iterator[Fetched]:
        """PRs merged in [start, end), splitting ranges that exceed the search cap."""
        yield from (self.complete(n) for n in self.merged_nodes(start, end))

    def merged_nodes(self, start: datetime, end: datetime, extra: str = "") -> Iterator[dict]:
        """The search nodes of the report's branch's PRs merged in [start, end) (and matching
        the qualifiers `extra`), splitting ranges that exceed the search cap."""
        last = end - timedelta(seconds=1)
        start = start.astimezone(UTC).replace(microsecond=0)
        if last < start:
            return
        query = f"{self.base_query()} merged:{search_time(start)}..{search_time(last)} {extra} sort:created-asc"
        pages = self.search_pages(" ".join(query.split()))
        count, first, _cursor, _more = next(pages)
        if count > self.search_cap:
            pages.close()
            span = (end - start).total_seconds()
            if span < 2:  # (halves of whole seconds: a span under two cannot be split further)
                raise SourceError(
                    f"more than {self.search_cap} pull requests of {self.repository} merged within one second; cannot split the search further"
                )
            self.splits += 1
            middle = start + timedelta(seconds=int(span // 2))
            yield from self.merged_nodes(start, middle, extra)
            yield from self.merged_nodes(middle, end, extra)
            return
        yield from (n for n in first if self.on_branch(n))
        for _count, page, _cursor, _more in pages:
            yield from (n for n in page if self.on_branch(n))

    def by_numbers(self, numbers: list[int], batch: int = 20) -> dict[int, Fetched | None]:
        """Fetch PRs by number, `batch` per request; unknown numbers map to None."""
        out: dict[int, Fetched | None] = {}
        wanted = sorted(set(numbers))
        for i in range(0, len(wanted), batch):
            chunk = wanted[i : i + batch]
            data = self.client.graphql(
                queries.pull_requests_by_number(chunk), {"owner": self.owner, "name": self.name}, allow_partial=True
            )
            repo = data.get("repository")
            errors = [e for e in self._withheld(data, ("repository",)) if not _is_pr_not_found(e)]
            if repo is None or errors:
                raise self.client.graphql_error(errors or [{"type": "NOT_FOUND", "message": "repository not found"}], self.repository)
            for n in chunk:
                node = repo.get(f"pr{n}")
                out[n] = self.complete(node) if node else None
        return out

    def authors_with_earlier_merges(self, logins: list[str], before: datetime, batch: int = 30) -> set[str]:
        """Which of `logins` had a PR merged into the repository before `before`
        (one request per `batch` authors; bots are taken as known)."""
        out: set[str] = set()
        people = sorted({login for login in logins if login and not login.endswith("[bot]") and login != "ghost"})
        out |= {login for login in logins if login.endswith("[bot]") or login == "ghost"}
        last = search_time(before - timedelta(seconds=1))
        for i in range(0, len(people), batch):
            chunk = people[i : i + batch]
            variables = {f"q{j}": f"{self.base_query()} author:{login} merged:<={last}" for j, login in enumerate(chunk)}
            data = self.client.graphql(queries.earlier_pull_request_counts(len(chunk)), variables)
            out |= {login for j, login in enumerate(chunk) if int((data.get(f"a{j}") or {}).get("issueCount") or 0) > 0}
        return out

    # ------------------------------------------------------------------ completion

    def complete(self, node: dict) -> Fetched:
        """Read every connection of a PR node to its end, then convert it."""
        number = int(node["number"])
        for conn in CONNECTIONS:
            block = node.get(conn) or {"nodes": [], "pageInfo": {}}
            nodes = list(block.get("nodes") or [])
            info = block.get("pageInfo") or {}
            while info.get("hasNextPage"):
                data = self.client.graphql(
                    queries.pull_request_connection_page(conn),
                    {"owner": self.owner, "name": self.name, "number": number, "after": info.get("endCursor")},
                )
                page = (((data.get("repository") or {}).get("pullRequest") or {}).get(conn)) or {}
                nodes.extend(page.get("nodes") or [])
                info = page.get("pageInfo") or {}
                if not page.get("nodes"):
                    break
            node[conn] = {"nodes": [n for n in nodes if n]}  # null: an entry the token may not see
        for thread in node["reviewThreads"]["nodes"]:
            comments = thread.get("comments") or {}
            nodes = list(comments.get("nodes") or [])
            info = comments.get("pageInfo") or {}
            while info.get("hasNextPage") and thread.get("id"):
                data = self.client.graphql(
                    queries.THREAD_COMMENTS_PAGE_QUERY, {"id": thread["id"], "after": info.get("endCursor")}
                )
                page = ((data.get("node") or {}).get("comments")) or {}
                nodes.extend(page.get("nodes") or [])
                info = page.get("pageInfo") or {}
                if not page.get("nodes"):
                    break
            thread["comments"] = {"nodes": [n for n in nodes if n]}
        listed, changed = len(node["files"]["nodes"]), int(node.get("changedFiles") or 0)
        if changed > listed:  # GitHub lists at most 3,000 files of a PR
            warning = Notice(f"GitHub lists {listed:,} of the {changed:,} files of #{number}: what the report says of "
                             "its files (modules, risks, core paths) is read from those only; its line counts are "
                             "GitHub's totals", "github_files_cut", pr=f"#{number}", listed=f"{listed:,}",
                             files=f"{changed:,}")
            if warning not in self.warnings:
                self.warnings.append(warning)
        return Fetched(to_pull_request(node, self._moved_from(number, node["files"]["nodes"]), f"{self.owner}/{self.name}"),
                       updated_at(node))

    def _moved_from(self, number: int, files: list[dict]) -> dict[str, str]:
        """Where the PR's renamed modules and config files came from (new path -> old path):
        code that imports a moved module breaks, and so do scripts naming a moved config.
        GraphQL does not give a rename's old path; the REST list of the PR's files does, so
        it is read only for a PR that renames such files (`files.move_matters`).
        The old paths are a detail: a request that fails (after the client's retries) is a
        warning, and the PR is kept without them."""
        renamed = {f["path"] for f in files if f.get("changeType") == "RENAMED" and fk.move_matters(f["path"])}
        found: dict[str, str] = {}
        page = 1
        while renamed - found.keys():
            try:
                entries = self.client.rest(f"/repos/{self.owner}/{self.name}/pulls/{number}/files",
                                           {"per_page": REST_FILES_PAGE, "page": page})
            except SourceError as e:
                self._note_withheld("the old paths of its renamed files", f"#{number}", e.message)
                break
            if not isinstance(entries, list):
                break
            found.update({e["filename"]: e["previous_filename"] for e in entries
                          if isinstance(e, dict) and e.get("filename") in renamed and e.get("previous_filename")})
            if len(entries) < REST_FILES_PAGE:
                break
            page += 1
        return found


def updated_at(node: dict) -> datetime:
    """When GitHub last changed a PR node (now, if it does not say)."""
    return parse_time(node.get("updatedAt")) or datetime.now(UTC)


def _at(data: object, path: list) -> object:
    """The value at a GraphQL error's `path` in `data` (None where there is none)."""
    for key in path:
        if isinstance(data, dict):
            data = data.get(key)
        elif isinstance(data, list) and isinstance(key, int) and 0 <= key < len(data):
            data = data[key]
        else:
            return None
    return data


def _is_pr_not_found(error: dict) -> bool:
    path = error.get("path") or []
    return error.get("type") == "NOT_FOUND" and len(path) >= 2 and str(path[-1]).startswith("pr")


def _login(actor: dict | None) -> str:
    if not actor:
        return "ghost"  # GitHub's name for a deleted account
    login = actor.get("login") or "ghost"
    if actor.get("__typename") == "Bot" and not login.endswith("[bot]"):
        login += "[bot]"
    return login


def to_pull_request(node: dict, moved_from: dict[str, str] | None = None, repository: str | None = None) -> PullRequest:
    """Convert a completed GraphQL PullRequest node (`moved_from`: renamed files' old paths)."""
    moved_from = moved_from or {}
    reviews = [
        Comment(
            author=_login(r.get("author")),
            body=r.get("body") or "",
            kind="review",
            created_at=parse_time(r.get("submittedAt")),
            state=r.get("state"),
            author_association=r.get("authorAssociation"),
        )
        for r in node["reviews"]["nodes"]
    ]
    comments = [
        Comment(
            author=_login(c.get("author")),
            body=c.get("body") or "",
            kind="comment",
            created_at=parse_time(c.get("createdAt")),
            author_association=c.get("authorAssociation"),
        )
        for c in node["comments"]["nodes"]
    ]
    threads = []
    for t in node["reviewThreads"]["nodes"]:
        tc = [
            Comment(
                author=_login(c.get("author")),
                body=c.get("body") or "",
                kind="review_comment",
                created_at=parse_time(c.get("createdAt")),
                path=c.get("path") or t.get("path"),
                diff_hunk=c.get("diffHunk"),
                author_association=c.get("authorAssociation"),
            )
            for c in t["comments"]["nodes"]
        ]
        threads.append(
            ReviewThread(
                path=t.get("path"),
                comments=tc,
                resolved=t.get("isResolved"),
                diff_hunk=tc[0].diff_hunk if tc else None,
            )
        )
    merged_at = parse_time(node.get("mergedAt"))
    if merged_at is None:
        raise SourceError(f"pull request #{node.get('number')} is not merged")
    title, body = node.get("title") or "", node.get("body") or ""
    quoted = reverted_title(title)
    return PullRequest(
        number=int(node["number"]),
        title=title,
        body=body,
        author=_login(node.get("author")),
        merged_at=merged_at,
        files=[
            FileChange(
                path=f["path"],
                added=f.get("additions"),
                deleted=f.get("deletions"),
                status=_STATUS.get(f.get("changeType") or "", "M"),
                previous=moved_from.get(f["path"]),
            )
            for f in node["files"]["nodes"]
        ],
        sha=(node.get("mergeCommit") or {}).get("oid"),
        url=node.get("url"),
        base_branch=node.get("baseRefName"),
        via="api",
        labels=[lbl["name"] for lbl in node["labels"]["nodes"]],
        reviews=reviews,
        comments=comments,
        threads=threads,
        linked_issues=[int(i["number"]) for i in node["closingIssuesReferences"]["nodes"]],
        discussion_known=True,
        additions_total=node.get("additions"),
        deletions_total=node.get("deletions"),
        # GitHub's Revert button names the PR in the body; a quoted squash title, in its "(#N)".
        reverts=None if quoted is None else reverts_named(body, repository) or parse_title(quoted).pr_number,
    )
