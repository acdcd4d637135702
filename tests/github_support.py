"""Shared pieces of the GitHub tests: the verl data, windows, and a client
pointed at a `FakeGitHub` with short backoffs so retries take milliseconds."""

from __future__ import annotations

import copy
import functools
from datetime import datetime
from zoneinfo import ZoneInfo

from githubserver import FakeGitHub, FakePullRequest, verl_pull_requests

from repobrief.github.auth import Token
from repobrief.github.client import GitHubClient
from repobrief.github.pulls import PullRequestFetcher

REPO = "verl-project/verl"
SHANGHAI = ZoneInfo("Asia/Shanghai")
W26_START = datetime(2026, 6, 22, tzinfo=SHANGHAI)
W26_END = datetime(2026, 6, 29, tzinfo=SHANGHAI)
TOKEN = "test-token"


@functools.cache
def _verl(start: datetime | None, end: datetime | None, unresolved: frozenset[int]) -> list[FakePullRequest]:
    return verl_pull_requests(start, end, unresolved=set(unresolved))


def verl(start: datetime | None = None, end: datetime | None = None, unresolved: frozenset[int] = frozenset()) -> list[FakePullRequest]:
    """A fresh copy (tests may change it) of verl's PRs merged in [start, end)."""
    return copy.deepcopy(_verl(start, end, frozenset(unresolved)))


def serve(server: FakeGitHub, prs: list[FakePullRequest], name: str = REPO) -> FakeGitHub:
    server.add_repository(name, prs)
    return server


def client_for(server: FakeGitHub, token: str = TOKEN, *, waits: list | None = None, **kw) -> GitHubClient:
    kw.setdefault("backoff", 0.01)
    on_wait = (lambda msg, secs: waits.append(msg)) if waits is not None else None
    return GitHubClient(Token(token, "GITHUB_TOKEN"), server.url, on_wait=on_wait, **kw)


def fetcher_for(server: FakeGitHub, repo: str = REPO, **kw) -> PullRequestFetcher:
    page_size = kw.pop("page_size", None)
    cap = kw.pop("search_cap", 1000)
    branch = kw.pop("branch", None)
    f = PullRequestFetcher(client_for(server, **kw), repo, search_cap=cap, branch=branch)
    if page_size:
        f.page_size = page_size
    return f
