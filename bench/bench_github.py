"""Benchmark of the GitHub source: requests and GraphQL points.

A GitHub-compatible server on 127.0.0.1 (tests/githubserver.py: GitHub's
schema, GitHub's documented cost rule) serves the real verl history as it
stood at the end of 2026-W26 (Asia/Shanghai), with the discussion of
`verl-project__verl.threads.json`. Measured through the real client:

- `sync --since 2026-06-22`: the 22-PR week into an empty store;
- a re-sync with nothing new (target: <= 2 requests);
- a re-sync after one PR got a new comment;
- the week read for a report (`report github:…`, no store);
- a sync of the whole verl history (2,883 PRs) and its re-sync;
- a full `repobrief report github:verl-project/verl --week 2026-W26` through
  the CLI: the week, 12 baseline weeks for trends, and first-time contributors.

    .venv/bin/python bench/bench_github.py
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT))

from githubserver import FakeGitHub, actor, github_schema, verl_pull_requests  # noqa: E402

from repobrief.github.auth import Token  # noqa: E402
from repobrief.github.client import GitHubClient  # noqa: E402
from repobrief.github.pulls import PullRequestFetcher  # noqa: E402
from repobrief.github.sync import sync_repository  # noqa: E402
from repobrief.store import open_store  # noqa: E402

REPO = "verl-project/verl"
TZ = ZoneInfo("Asia/Shanghai")
WEEK_START = datetime(2026, 6, 22, tzinfo=TZ)
WEEK_END = datetime(2026, 6, 29, tzinfo=TZ)
TOKEN = "bench-token"


def measure(label: str, server: FakeGitHub, action, repo: str = REPO) -> tuple:
    client = GitHubClient(Token(TOKEN, "bench"), server.url)
    fetcher = PullRequestFetcher(client, repo)
    before = len(server.log)
    t0 = time.perf_counter()
    detail = action(fetcher)
    seconds = time.perf_counter() - t0
    client.close()
    served = len(server.log) - before
    assert served == client.stats.requests, (served, client.stats.requests)
    return label, detail, client.stats.requests, client.stats.graphql_cost, seconds


def main() -> None:
    github_schema()  # build the schema once, outside the timings
    prs = [p for p in verl_pull_requests() if p.merged_at < WEEK_END]
    rows = []
    with tempfile.TemporaryDirectory() as tmp, FakeGitHub(tokens={TOKEN: "repo"}) as server:
        server.add_repository(REPO, prs)
        now = WEEK_END + timedelta(hours=1)
        with open_store(Path(tmp) / "bench.db") as store:
            rows.append(measure("sync --since 2026-06-22 (empty store)", server,
                                lambda f: sync_repository(f, store, WEEK_START, now=now).summary()))
            rows.append(measure("re-sync, nothing new", server,
                                lambda f: sync_repository(f, store, WEEK_START, now=now + timedelta(hours=1)).summary()))
            pr = server.repos[REPO].prs[6823]
            later = now + timedelta(hours=2)
            pr.comments.append({"author": actor("reviewer"), "body": "A late follow-up question on the new default.", "createdAt": later, "authorAssociation": "MEMBER"})
            pr.updated_at = later
            rows.append(measure("re-sync, one PR commented", server,
                                lambda f: sync_repository(f, store, WEEK_START, now=later + timedelta(hours=1)).summary()))
        rows.append(measure("the week for a report (no store)", server,
                            lambda f: f"{len(list(f.merged_between(WEEK_START, WEEK_END)))} PRs"))

        whole = verl_pull_requests()
        server.add_repository("verl-project/verl-all", whole)
        with open_store(Path(tmp) / "whole.db") as store:
            first = min(p.merged_at for p in whole)
            rows.append(measure(f"sync of the whole history ({len(whole):,} PRs)", server,
                                lambda f: sync_repository(f, store, first, now=datetime(2026, 9, 1, tzinfo=TZ)).summary(),
                                repo="verl-project/verl-all"))
            rows.append(measure("re-sync of the whole history, nothing new", server,
                                lambda f: sync_repository(f, store, first, now=datetime(2026, 9, 2, tzinfo=TZ)).summary(),
                                repo="verl-project/verl-all"))

        before = len(server.log)
        t0 = time.perf_counter()
        env = {**os.environ, "GITHUB_TOKEN": TOKEN, "XDG_DATA_HOME": str(Path(tmp) / "xdg")}
        out = subprocess.run(
            [sys.executable, "-c", "from repobrief.cli import main; main()", "report", f"github:{REPO}",
             "--week", "2026-W26", "--tz", "Asia/Shanghai", "--lang", "en", "-f", "md",
             "--db", str(Path(tmp) / "report.db"), "--github-url", server.url, "-q"],
            capture_output=True, text=True, env=env, cwd=tmp,
        )
        seconds = time.perf_counter() - t0
        if out.returncode != 0:
            sys.exit(out.stderr)
        log = server.log[before:]
        rows.append(("repobrief report github:… --week 2026-W26 (CLI)", "week + 12 baseline weeks + authors",
                     len(log), sum(r.cost for r in log), seconds))

    w = max(len(r[0]) for r in rows)
    print(f"{'scenario':<{w}}  {'requests':>8}  {'points':>6}  {'seconds':>7}  result")
    for label, detail, requests, cost, seconds in rows:
        print(f"{label:<{w}}  {requests:>8}  {cost:>6}  {seconds:>7.2f}  {detail}")
    resync = rows[1][2]
    print(f"\nre-sync with nothing new: {resync} request(s) (target <= 2): {'ok' if resync <= 2 else 'OVER TARGET'}")


if __name__ == "__main__":
    import argparse

    argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter).parse_args()
    main()
