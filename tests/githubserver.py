"""A GitHub-compatible GraphQL server on 127.0.0.1 for tests and benchmarks.

It executes the documents a client really sends against GitHub's published
schema (`../shared/data/github-schema.graphql`) with graphql-core, so a query
that GitHub would reject for a misspelt field or a wrong argument fails here
too. Data is built from the real verl history (titles, bodies, authors, merge
times, files with line counts) and `verl-project__verl.threads.json` (issue
comments and review threads with paths, diff hunks and text).

What the export does not hold is derived and documented here:
- labels are the title's module tags (`[trainer, cfg]` -> `trainer`, `cfg`)
  plus `breaking` for `[BREAKING]`; verl itself labels few PRs;
- every author of a review thread gets a `COMMENTED` review (GitHub creates
  one per batch of review comments);
- `updatedAt` is five minutes after the merge, or the latest comment's date.

Behaviour a client must cope with is reproduced on request: GitHub's search
cap (`search_cap`, 1,000 on GitHub) with the real `issueCount`; GraphQL cost
computed the way GitHub documents it; rate-limit headers and budgets; primary
and secondary limits, 5xx answers and outages (`queue`, `down`); 401 for an
unknown token, `X-OAuth-Scopes`, NOT_FOUND for unknown or unreadable
repositories; as an HTTPS proxy (CONNECT), a 407 for a proxy that wants
credentials (`proxy_auth`). Every request is logged with the PR numbers it returned.
"""

from __future__ import annotations

import base64
import json
import math
import re
import threading
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from email.utils import formatdate
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from gitrepo import SHARED_DATA, load_history
from graphql import (
    FieldNode,
    FragmentSpreadNode,
    GraphQLError,
    InlineFragmentNode,
    IntValueNode,
    OperationDefinitionNode,
    VariableNode,
    build_schema,
    parse,
    validate,
)
from graphql.execution import execute

SCHEMA_PATH = SHARED_DATA / "github-schema.graphql"
_SCHEMA = None
_SCHEMA_LOCK = threading.Lock()


def github_schema():
    global _SCHEMA
    with _SCHEMA_LOCK:
        if _SCHEMA is None:
            schema = build_schema(SCHEMA_PATH.read_text(encoding="utf-8"), assume_valid_sdl=True)
            # GitHub's published schema deprecates some implementations of
            # interface fields that the interface itself does not deprecate;
            # graphql-core's schema check rejects that, although it does not
            # affect validating or executing a query. Mark it checked.
            schema._validation_errors = []
            _SCHEMA = schema
    return _SCHEMA


# --------------------------------------------------------------------------- data


@dataclass
class FakePullRequest:
    number: int
    title: str
    body: str
    author: str
    merged_at: datetime
    updated_at: datetime
    created_at: datetime
    files: list[dict] = field(default_factory=list)  # path, additions, deletions, changeType
    labels: list[str] = field(default_factory=list)
    reviews: list[dict] = field(default_factory=list)  # author, state, body, submittedAt, authorAssociation
    threads: list[dict] = field(default_factory=list)  # id, isResolved, path, comments
    comments: list[dict] = field(default_factory=list)  # author, body, createdAt, authorAssociation
    closing: list[int] = field(default_factory=list)
    closing_private: list[int] = field(default_factory=list)  # closing issues in a repository the token may not read
    base: str = "main"
    oid: str = ""
    listed_files: int = 3000  # GitHub's API lists at most 3,000 of a PR's files (changedFiles counts all)

    @property
    def additions(self) -> int:
        return sum(f["additions"] for f in self.files)

    @property
    def deletions(self) -> int:
        return sum(f["deletions"] for f in self.files)


@dataclass
class FakeRepository:
    name: str
    private: bool = False
    prs: dict[int, FakePullRequest] = field(default_factory=dict)
    default_branch: str = "main"
    created: str = "2016-01-04T00:00:00Z"  # createdAt: when the repository was made on GitHub


_NUMBER = re.compile(r"\s*\(#(\d+)\)\s*$")
_TAGS = re.compile(r"^\s*((?:\[[^\]]*\]\s*)+)")
_NOREPLY = re.compile(r"^(?:\d+\+)?([^@]+)@users\.noreply\.github\.com$")


def actor(login: str) -> dict:
    if login.endswith("[bot]"):
        return {"__typename": "Bot", "login": login[: -len("[bot]")]}
    return {"__typename": "User", "login": login}


def _login(person: dict) -> str:
    m = _NOREPLY.match(person.get("email", ""))
    return m.group(1) if m else re.sub(r"\s+", "", person.get("name") or "ghost")


def title_labels(title: str) -> list[str]:
    m = _TAGS.match(title)
    if not m:
        return []
    labels: list[str] = []
    for group in re.findall(r"\[([^\]]*)\]", m.group(1)):
        for tag in group.split(","):
            tag = tag.strip().lower()
            if tag and tag not in labels:
                labels.append(tag)
    return labels


def _day(date: str | None, fallback: datetime) -> datetime:
    if not date:
        return fallback
    return datetime.fromisoformat(date).replace(hour=12, tzinfo=UTC)


def verl_pull_requests(
    start: datetime | None = None,
    end: datetime | None = None,
    *,
    unresolved: set[int] = frozenset(),
) -> list[FakePullRequest]:
    """PRs of the verl history merged in [start, end) (all when not given), with
    the discussion of `verl-project__verl.threads.json`. Review threads are
    resolved except on the PRs in `unresolved`."""
    rows = list(reversed(load_history("verl-project__verl")))  # oldest first
    threads = {p["number"]: p for p in json.loads((SHARED_DATA / "verl-project__verl.threads.json").read_text())}
    seen_paths: set[str] = set()
    out: list[FakePullRequest] = []
    thread_ids = 0
    for row in rows:
        files = []
        for f in row["files"]:
            files.append(
                {
                    "path": f["path"],
                    "additions": f["added"] or 0,
                    "deletions": f["deleted"] or 0,
                    "changeType": "MODIFIED" if f["path"] in seen_paths else "ADDED",
                }
            )
            seen_paths.add(f["path"])
        m = _NUMBER.search(row["subject"])
        if not m:
            continue
        merged = datetime.fromisoformat(row["committer"]["date"]).astimezone(UTC)
        if (start and merged < start) or (end and merged >= end):
            continue
        number = int(m.group(1))
        title = row["subject"][: m.start()].rstrip()
        labels = title_labels(title)
        if title.upper().startswith("[BREAKING]"):
            labels = ["breaking"] + [lbl for lbl in labels if lbl != "breaking"]
        pr = FakePullRequest(
            number=number,
            title=title,
            body=row.get("body") or "",
            author=_login(row["author"]),
            merged_at=merged,
            updated_at=merged + timedelta(minutes=5),
            created_at=datetime.fromisoformat(row["author"]["date"]).astimezone(UTC),
            files=files,
            labels=labels,
            oid=row["sha"],
        )
        reviewers: dict[str, datetime] = {}  # reviewer -> their first review comment
        for e in threads.get(number, {}).get("entries", []):
            when = _day(e.get("date"), merged)
            text = re.sub(r"^\*\*[^*]+\*\*:\s*\n?", "", e.get("text") or "")
            if e["kind"] == "comment":
                pr.comments.append({"author": actor(e["author"]), "body": text, "createdAt": when, "authorAssociation": "CONTRIBUTOR"})
            elif e["kind"] == "review thread":
                thread_ids += 1
                path = re.sub(r":\d+$", "", e.get("path") or "")
                pr.threads.append(
                    {
                        "__typename": "PullRequestReviewThread",
                        "id": f"PRRT_{number}_{thread_ids}",
                        "isResolved": number not in unresolved,
                        "path": path,
                        "comments": [
                            {
                                "author": actor(e["author"]),
                                "body": text,
                                "createdAt": when,
                                "diffHunk": e.get("diff_hunk") or "",
                                "path": path,
                                "authorAssociation": "CONTRIBUTOR",
                            }
                        ],
                    }
                )
                reviewers.setdefault(e["author"], when)
            if e["kind"] in ("comment", "review thread") and when > pr.updated_at:
                pr.updated_at = when
        for r, when in reviewers.items():
            pr.reviews.append({"author": actor(r), "state": "COMMENTED", "body": "", "submittedAt": when, "authorAssociation": "CONTRIBUTOR"})
        out.append(pr)
    return out


# --------------------------------------------------------------------------- connections


def _cursor(i: int) -> str:
    return base64.b64encode(f"cursor:{i}".encode()).decode()


def _offset(after: str | None) -> int:
    if not after:
        return 0
    try:
        return int(base64.b64decode(after).decode().split(":", 1)[1]) + 1
    except Exception:
        raise GraphQLError(f"`{after}` does not appear to be a valid cursor.") from None


def connection(items: list, first: int | None = None, after: str | None = None, total: int | None = None, **_: Any) -> dict:
    if first is None:
        raise GraphQLError("You must provide a `first` or `last` value to properly paginate the connection.")
    if first > 100:
        raise GraphQLError(f"Requesting {first} records on the connection exceeds the `first` limit of 100 records.")
    start = _offset(after)
    page = items[start : start + first]
    return {
        "nodes": page,
        "edges": [{"node": n, "cursor": _cursor(start + i)} for i, n in enumerate(page)],
        "totalCount": len(items) if total is None else total,
        "issueCount": len(items) if total is None else total,
        "pageInfo": {
            "hasNextPage": start + first < len(items),
            "hasPreviousPage": start > 0,
            "endCursor": _cursor(start + len(page) - 1) if page else after,
            "startCursor": _cursor(start) if page else None,
        },
    }


def _iso(d: datetime) -> str:
    return d.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class TypedError(GraphQLError):
    """A GraphQL error with GitHub's top-level `type` (NOT_FOUND, …)."""

    def __init__(self, message: str, type_: str) -> None:
        super().__init__(message)
        self.github_type = type_


# --------------------------------------------------------------------------- faults


@dataclass
class Fault:
    """One scripted answer: `status` (an HTTP error), `primary` (rate limit
    exhausted until `seconds` from now), `secondary` (403 with Retry-After),
    `secondary_date` (429 with Retry-After as an HTTP date, as proxies send it),
    `graphql_rate_limited` (200 with a RATE_LIMITED error), `body` (200 with
    `body` as the raw JSON answer), `drop` (the connection is closed without an
    answer, as a proxy dropping it does), `echo` (400 whose message repeats the
    Authorization header, as some proxies do)."""

    kind: str
    status: int = 502
    seconds: int = 1
    body: bytes = b""


@dataclass
class LoggedRequest:
    operation: str | None
    variables: dict
    status: int
    path: str
    numbers: list[int] = field(default_factory=list)
    cost: int = 0


class FakeGitHub:
    """The server. Use as a context manager; `url` is its API base URL."""

    def __init__(
        self,
        *,
        tokens: dict[str, str] | None = None,
        search_cap: int = 1000,
        enterprise: bool = False,
        budget: int = 5000,
    ) -> None:
        self.tokens = {"test-token": "repo, read:org"} if tokens is None else tokens
        self.search_cap = search_cap
        self.enterprise = enterprise
        self.repos: dict[str, FakeRepository] = {}
        self.queue: list[Fault] = []
        self.down: int | None = None  # every request answers this status while set
        self.fail_from: tuple[int, int] | None = None  # (request index, status): outage from then on
        self.delay = 0.0  # seconds before each answer: a slow GitHub
        self.arrived = 0  # requests received, answered or still waiting out `delay`
        self.rest_missing = False  # the REST list of a PR's files answers 404
        self.proxy_auth = False  # as an HTTPS proxy (CONNECT), answer 407: a proxy that wants credentials
        self.connects: list[str] = []  # the hosts CONNECT asked for
        self.log: list[LoggedRequest] = []
        self.errors: list[str] = []
        self.limit = budget
        self.remaining = budget
        self.reset_at = time.time() + 3600
        self._lock = threading.Lock()
        self._nodes: dict[str, dict] = {}
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # ------------------------------------------------------------------ setup

    def add_repository(self, name: str, prs: list[FakePullRequest], *, private: bool = False) -> FakeRepository:
        repo = FakeRepository(name, private, {p.number: p for p in prs})
        self.repos[name] = repo
        for p in prs:
            for t in p.threads:
                self._nodes[t["id"]] = t
        return repo

    def set_budget(self, remaining: int, reset_in: float) -> None:
        self.remaining = remaining
        self.reset_at = time.time() + reset_in

    @property
    def url(self) -> str:
        assert self._httpd is not None
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}" + ("/api/v3" if self.enterprise else "")

    def __enter__(self) -> FakeGitHub:
        handler = type("Handler", (_Handler,), {"server_state": self})
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop(self) -> None:
        """Stop answering (idempotent): later requests find nothing listening."""
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    # ------------------------------------------------------------------ queries

    def returned_numbers(self) -> list[int]:
        return [n for r in self.log for n in r.numbers]

    def graphql_requests(self) -> list[LoggedRequest]:
        return [r for r in self.log if r.status == 200]

    # ------------------------------------------------------------------ answering

    def answer(self, path: str, headers: dict[str, str], body: bytes) -> tuple[int, dict[str, str], bytes]:
        with self._lock:
            self.arrived += 1
        time.sleep(self.delay)
        with self._lock:
            index = len(self.log) + 1
            entry = LoggedRequest(None, {}, 0, path)
            self.log.append(entry)
            try:
                status, out_headers, payload = self._answer(index, entry, path, headers, body)
            except Exception as e:  # a bug in this server: answer 500 and keep it for the test to see
                self.errors.append(repr(e))
                status, out_headers, payload = 500, {}, {"message": f"test server error: {e!r}"}
            entry.status = status
            return status, out_headers, json.dumps(payload).encode() if not isinstance(payload, bytes) else payload

    def _rate_headers(self) -> dict[str, str]:
        return {
            "X-RateLimit-Limit": str(self.limit),
            "X-RateLimit-Remaining": str(max(0, self.remaining)),
            "X-RateLimit-Reset": str(math.ceil(self.reset_at)),
            "X-RateLimit-Resource": "graphql",
        }

    def _answer(self, index: int, entry: LoggedRequest, path: str, headers: dict[str, str], body: bytes):
        expected = "/api/graphql" if self.enterprise else "/graphql"
        rest = _REST_FILES.match(path)
        if path != expected and not (rest and bool(rest["v3"]) == self.enterprise):
            return 404, {}, {"message": "Not Found", "documentation_url": "https://docs.github.com/rest"}
        if self.fail_from and index >= self.fail_from[0]:
            self.down = self.fail_from[1]
        if self.down:
            return self.down, {"Content-Type": "text/html"}, b"<html><body><h1>Service unavailable</h1></body></html>"
        auth = headers.get("authorization", "")
        token = auth.split(" ", 1)[1] if " " in auth else ""
        if token not in self.tokens:
            return 401, {}, {"message": "Bad credentials", "documentation_url": "https://docs.github.com/graphql", "status": "401"}
        scopes = [s.strip() for s in self.tokens[token].split(",") if s.strip()]
        base_headers = {"X-OAuth-Scopes": ", ".join(scopes), "Content-Type": "application/json; charset=utf-8"}
        if time.time() >= self.reset_at:
            self.remaining = self.limit
            self.reset_at = time.time() + 3600
        if self.queue:
            fault = self.queue.pop(0)
            if fault.kind == "status":
                return fault.status, {"Content-Type": "text/html"}, b"<html><body>Bad gateway</body></html>"
            if fault.kind == "secondary":
                return 403, {**base_headers, **self._rate_headers(), "Retry-After": str(fault.seconds)}, {
                    "message": "You have exceeded a secondary rate limit. Please wait a few minutes before you try again.",
                    "documentation_url": "https://docs.github.com/graphql/overview/rate-limits-and-node-limits-for-the-graphql-api#secondary-rate-limits",
                }
            if fault.kind == "secondary_date":
                return 429, {**base_headers, "Retry-After": formatdate(time.time() + fault.seconds, usegmt=True)}, {
                    "message": "You have exceeded a secondary rate limit. Please wait a few minutes before you try again.",
                }
            if fault.kind == "echo":
                return 400, base_headers, {"message": f"bad request; header was {auth}"}
            if fault.kind == "drop":
                return 0, {}, b""
            if fault.kind == "body":
                return 200, base_headers, fault.body
            if fault.kind == "primary":
                self.set_budget(0, fault.seconds)
                return 403, {**base_headers, **self._rate_headers()}, {
                    "message": "API rate limit exceeded for user ID 1.",
                    "documentation_url": "https://docs.github.com/graphql/overview/rate-limits-and-node-limits-for-the-graphql-api",
                }
            if fault.kind == "graphql_rate_limited":
                self.set_budget(0, fault.seconds)
        if rest:
            return self._rest_files(entry, rest, base_headers, scopes)
        request = json.loads(body or b"{}")
        query, variables = request.get("query", ""), request.get("variables") or {}
        entry.variables = variables
        try:
            document = parse(query)
        except GraphQLError as e:
            return 200, base_headers, {"errors": [{"message": e.message, "type": "PARSE"}]}
        ops = [d for d in document.definitions if isinstance(d, OperationDefinitionNode)]
        entry.operation = ops[0].name.value if ops and ops[0].name else None
        problems = validate(github_schema(), document)
        if problems:
            return 200, base_headers, {"errors": [{"message": p.message, "type": "INVALID"} for p in problems]}
        cost = query_cost(document, variables)
        entry.cost = cost
        if self.remaining < cost:
            msg = "API rate limit already exceeded for user ID 1."
            return 200, {**base_headers, **self._rate_headers()}, {"errors": [{"type": "RATE_LIMITED", "code": "graphql_rate_limit", "message": msg}]}
        self.remaining -= cost
        root = _Root(self, scopes, cost, entry)
        result = execute(github_schema(), document, root_value=root, variable_values=variables)
        payload: dict[str, Any] = {"data": result.data}
        if result.errors:
            payload["errors"] = [_format_error(e) for e in result.errors]
        return 200, {**base_headers, **self._rate_headers()}, payload


    def _rest_files(self, entry: LoggedRequest, m: re.Match, headers: dict[str, str], scopes: list[str]):
        """REST's list of a PR's files, with a renamed file's `previous_filename`."""
        entry.operation = "rest:pulls/files"
        query = dict(p.split("=", 1) for p in (m["query"] or "").split("&") if "=" in p)
        per_page, page = int(query.get("per_page", 30)), int(query.get("page", 1))
        repo = self.repos.get(m["repo"])
        readable = repo is not None and (not repo.private or "repo" in scopes)
        pr = repo.prs.get(int(m["number"])) if readable else None
        if pr is None or self.rest_missing:
            return 404, headers, {"message": "Not Found", "documentation_url": "https://docs.github.com/rest"}
        # the REST budget ("core"), which is not GraphQL's points
        headers = {**headers, "X-RateLimit-Resource": "core", "X-RateLimit-Remaining": "4321",
                   "X-RateLimit-Reset": str(math.ceil(self.reset_at))}
        status = {"ADDED": "added", "DELETED": "removed", "RENAMED": "renamed"}
        files = [{"filename": f["path"], "status": status.get(f["changeType"], "modified"), "additions": f["additions"],
                  "deletions": f["deletions"], **({"previous_filename": f["previous"]} if f.get("previous") else {})}
                 for f in pr.files]
        return 200, headers, files[(page - 1) * per_page : page * per_page]


# GET /repos/OWNER/NAME/pulls/N/files?per_page=…&page=… (REST: the one call repobrief makes)
_REST_FILES = re.compile(r"^(?P<v3>/api/v3)?/repos/(?P<repo>[^/]+/[^/]+)/pulls/(?P<number>\d+)/files(?:\?(?P<query>.*))?$")


def _format_error(e: GraphQLError) -> dict:
    d = e.formatted
    original = e.original_error if e.original_error is not None else e
    type_ = getattr(original, "github_type", None) or getattr(e, "github_type", None)
    if type_:
        d["type"] = type_
    return d


def query_cost(document, variables: dict) -> int:
    """GitHub's documented cost: the requests needed for every connection
    (`first` multiplied down the tree), divided by 100, at least 1."""
    fragments = {d.name.value: d for d in document.definitions if d.__class__.__name__ == "FragmentDefinitionNode"}
    total = 0

    def arg_first(node: FieldNode) -> int | None:
        for a in node.arguments or ():
            if a.name.value == "first":
                if isinstance(a.value, IntValueNode):
                    return int(a.value.value)
                if isinstance(a.value, VariableNode):
                    return int(variables.get(a.value.name.value) or 0)
        return None

    def walk(selection_set, multiplier: int) -> None:
        nonlocal total
        if selection_set is None:
            return
        for sel in selection_set.selections:
            if isinstance(sel, FieldNode):
                first = arg_first(sel)
                if first is not None:
                    total += multiplier
                    walk(sel.selection_set, multiplier * max(first, 1))
                else:
                    walk(sel.selection_set, multiplier)
            elif isinstance(sel, InlineFragmentNode):
                walk(sel.selection_set, multiplier)
            elif isinstance(sel, FragmentSpreadNode):
                walk(fragments[sel.name.value].selection_set, multiplier)

    for d in document.definitions:
        if isinstance(d, OperationDefinitionNode):
            walk(d.selection_set, 1)
    return max(1, round(total / 100))


# --------------------------------------------------------------------------- resolvers


_QUALIFIER = re.compile(r"^(-?)(\w+):(.*)$")


def _range(value: str) -> tuple[datetime | None, datetime | None, bool]:
    """`A..B` (inclusive), `>=A`, `>A`, `<=B`, `<B`; returns (lo, hi, lo_strict)."""

    def t(s: str) -> datetime:
        d = datetime.fromisoformat(s.replace("Z", "+00:00"))
        return d if d.tzinfo else d.replace(tzinfo=UTC)

    if ".." in value:
        a, b = value.split("..", 1)
        return (None if a == "*" else t(a)), (None if b == "*" else t(b)), False
    for op in (">=", "<=", ">", "<"):
        if value.startswith(op):
            d = t(value[len(op) :])
            if op == ">=":
                return d, None, False
            if op == ">":
                return d, None, True
            if op == "<=":
                return None, d, False
            return None, d - timedelta(seconds=1), False
    d = t(value)
    return d, d + timedelta(days=1) - timedelta(seconds=1), False


def _in(d: datetime, rng: tuple[datetime | None, datetime | None, bool]) -> bool:
    lo, hi, strict = rng
    if lo is not None and (d <= lo if strict else d < lo):
        return False
    return not (hi is not None and d > hi)


class _Root(dict):
    def __init__(self, server: FakeGitHub, scopes: list[str], cost: int, entry: LoggedRequest) -> None:
        super().__init__()
        self.server, self.scopes, self.cost, self.entry = server, scopes, cost, entry
        self["repository"] = self.repository
        self["search"] = self.search
        self["rateLimit"] = self.rate_limit
        self["node"] = self.node

    def _readable(self, name: str) -> FakeRepository | None:
        repo = self.server.repos.get(name)
        if repo is None or (repo.private and "repo" not in self.scopes):
            return None
        return repo

    def rate_limit(self, info, dryRun: bool = False) -> dict:
        s = self.server
        return {
            "cost": self.cost,
            "remaining": max(0, s.remaining),
            "resetAt": _iso(datetime.fromtimestamp(s.reset_at, UTC)),
            "limit": s.limit,
            "used": s.limit - s.remaining,
            "nodeCount": 0,
        }

    def repository(self, info, owner: str, name: str, **_: Any) -> dict:
        repo = self._readable(f"{owner}/{name}")
        if repo is None:
            raise TypedError(f"Could not resolve to a Repository with the name '{owner}/{name}'.", "NOT_FOUND")

        def pull_request(info, number: int) -> dict | None:
            pr = repo.prs.get(number)
            if pr is None:
                raise TypedError(f"Could not resolve to a PullRequest with the number of {number}.", "NOT_FOUND")
            self.entry.numbers.append(number)
            return _pr_value(repo, pr)

        return {
            "__typename": "Repository",
            "nameWithOwner": repo.name,
            "defaultBranchRef": {"name": repo.default_branch},
            "isPrivate": repo.private,
            "createdAt": repo.created,
            "url": f"https://github.com/{repo.name}",
            "pullRequest": pull_request,
        }

    def node(self, info, id: str) -> dict | None:
        return self.server._nodes.get(id) and _thread_value(self.server._nodes[id])

    def search(self, info, query: str, type: str, first: int | None = None, after: str | None = None, **_: Any) -> dict:
        repo_name, merged, updated, sort, author = None, None, None, ("best", "desc"), None
        flags = set()
        for token in query.split():
            m = _QUALIFIER.match(token)
            if not m:
                raise GraphQLError(f"the test server does not understand the search term {token!r}")
            neg, key, value = m.groups()
            if key == "repo":
                repo_name = value
            elif key == "is":
                flags.add(value)
            elif key == "merged":
                merged = _range(value)
            elif key == "updated":
                updated = _range(value)
            elif key == "author":
                author = value
            elif key == "sort":
                field_, _, direction = value.partition("-")
                sort = (field_, direction or "desc")
            else:
                raise GraphQLError(f"the test server does not understand the qualifier {key!r}")
        repo = self._readable(repo_name or "")
        if repo is None or type != "ISSUE":
            raise TypedError(
                "The listed users and repositories cannot be searched either because the resources do not exist or you do not have permission to view them.",
                "INVALID",
            )
        prs = [p for p in repo.prs.values() if ("merged" not in flags or p.merged_at)]
        if merged:
            prs = [p for p in prs if _in(p.merged_at, merged)]
        if updated:
            prs = [p for p in prs if _in(p.updated_at, updated)]
        if author:
            prs = [p for p in prs if p.author == author]
        key = {"updated": lambda p: (p.updated_at, p.number), "created": lambda p: (p.created_at, p.number)}.get(
            sort[0], lambda p: p.number
        )
        prs.sort(key=key, reverse=sort[1] == "desc")
        total = len(prs)
        reachable = prs[: self.server.search_cap]
        conn = connection(reachable, first, after, total=total)
        self.entry.numbers.extend(p.number for p in conn["nodes"])
        conn["nodes"] = [_pr_value(repo, p) for p in conn["nodes"]]
        return conn


def _pr_value(repo: FakeRepository, pr: FakePullRequest) -> dict:
    files = pr.files
    return {
        "__typename": "PullRequest",
        "id": f"PR_{pr.number}",
        "number": pr.number,
        "title": pr.title,
        "body": pr.body,
        "url": f"https://github.com/{repo.name}/pull/{pr.number}",
        "author": actor(pr.author),
        "mergedAt": _iso(pr.merged_at),
        "updatedAt": _iso(pr.updated_at),
        "createdAt": _iso(pr.created_at),
        "merged": True,
        "baseRefName": pr.base,
        "additions": pr.additions,
        "deletions": pr.deletions,
        "changedFiles": len(files),
        "mergeCommit": {"oid": pr.oid},
        "labels": lambda info, **kw: connection([{"name": n} for n in pr.labels], **kw),
        "files": lambda info, **kw: connection(files[: pr.listed_files], **kw),
        "reviews": lambda info, **kw: connection(
            [{**r, "submittedAt": _iso(r["submittedAt"])} for r in pr.reviews], **kw
        ),
        "reviewThreads": lambda info, **kw: connection([_thread_value(t) for t in pr.threads], **kw),
        "comments": lambda info, **kw: connection([{**c, "createdAt": _iso(c["createdAt"])} for c in pr.comments], **kw),
        "closingIssuesReferences": lambda info, **kw: connection(
            [{"number": n} for n in pr.closing] + [{"number": _forbidden} for _n in pr.closing_private], **kw
        ),
    }


def _forbidden(info) -> None:
    """A field the token may not read: GitHub nulls the node and reports where."""
    raise TypedError("Resource not accessible by personal access token", "FORBIDDEN")


def _thread_value(t: dict) -> dict:
    comments = [{**c, "createdAt": _iso(c["createdAt"])} for c in t["comments"]]
    return {**t, "comments": lambda info, **kw: connection(comments, **kw)}


class _Handler(BaseHTTPRequestHandler):
    server_state: FakeGitHub
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
        pass

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length)
        headers = {k.lower(): v for k, v in self.headers.items()}
        status, out_headers, payload = self.server_state.answer(self.path, headers, body)
        if status == 0:  # a dropped connection
            self.close_connection = True
            return
        self.send_response(status)
        for k, v in out_headers.items():
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def do_GET(self) -> None:
        self.do_POST()

    def do_CONNECT(self) -> None:
        """The server as an HTTPS proxy: only ever the one that wants credentials."""
        state = self.server_state
        state.connects.append(self.path)
        status = 407 if state.proxy_auth else 502
        self.send_response(status)
        if status == 407:
            self.send_header("Proxy-Authenticate", 'Basic realm="proxy"')
        self.send_header("Content-Length", "0")
        self.end_headers()
        self.close_connection = True
