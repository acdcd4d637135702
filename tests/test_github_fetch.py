"""Fetching merged PRs from a GitHub-compatible server that executes the real
queries against GitHub's schema: one verl week, every connection paginated to
its end, windows split under the search cap, GitHub Enterprise paths."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from github_support import REPO, W26_END, W26_START, fetcher_for, serve, verl
from githubserver import FakeGitHub, FakePullRequest, actor


def test_a_verl_week_arrives_whole_in_one_request():
    with serve(FakeGitHub(), verl()) as server:
        f = fetcher_for(server)
        got = {x.pr.number: x.pr for x in f.merged_between(W26_START, W26_END)}
        assert server.errors == []
        assert len(got) == 22
        assert f.client.stats.requests == 1
        assert f.client.stats.graphql_cost == server.log[0].cost > 1

        pr = got[6823]
        assert pr.title == "[BREAKING][trainer, cfg] chore: enable V1 trainer by default"
        assert pr.labels == ["breaking", "trainer", "cfg"]
        assert pr.url == "https://github.com/verl-project/verl/pull/6823"
        assert pr.base_branch == "main" and pr.via == "api" and pr.discussion_known
        assert len(pr.files) == 24 and pr.additions_total == sum(f.added for f in pr.files)
        assert [(r.author, r.state) for r in pr.reviews] == [("wuxibin89", "COMMENTED")]
        (thread,) = pr.threads
        assert thread.path == "verl/workers/engine_workers.py" and thread.resolved is True
        assert thread.comments[0].kind == "review_comment"
        assert thread.comments[0].body.startswith("temperature has been explicitly set in trainer")
        assert "+            temperature=1.0," in thread.diff_hunk
        assert [c.author for c in pr.comments] == ["wuxibin89"]
        # the bot's threads keep their bot-ness for the discussion analysis
        assert {c.author for t in got[6825].threads for c in t.comments} == {"gemini-code-assist[bot]"}
        assert all(W26_START <= p.merged_at < W26_END for p in got.values())


def _big_pr(number: int, merged: datetime) -> FakePullRequest:
    people = [actor(f"rev{i}") for i in range(7)]
    return FakePullRequest(
        number=number,
        title="[trainer] feat: a very large change",
        body="body",
        author="alice",
        merged_at=merged,
        updated_at=merged,
        created_at=merged - timedelta(days=2),
        files=[{"path": f"verl/mod{i}.py", "additions": i, "deletions": 1, "changeType": "MODIFIED"} for i in range(257)],
        labels=[f"label-{i}" for i in range(63)],
        reviews=[
            {"author": people[i % 7], "state": "CHANGES_REQUESTED" if i == 0 else "COMMENTED", "body": f"review {i}", "submittedAt": merged, "authorAssociation": "MEMBER"}
            for i in range(71)
        ],
        threads=[
            {
                "__typename": "PullRequestReviewThread",
                "id": f"T{number}_{t}",
                "isResolved": t % 2 == 0,
                "path": f"verl/mod{t}.py",
                "comments": [
                    {"author": people[c % 7], "body": f"thread {t} comment {c}", "createdAt": merged, "diffHunk": "@@ -1 +1 @@", "path": f"verl/mod{t}.py", "authorAssociation": "MEMBER"}
                    for c in range(45 if t == 3 else 2)
                ],
            }
            for t in range(37)
        ],
        comments=[{"author": people[i % 7], "body": f"comment {i}", "createdAt": merged, "authorAssociation": "NONE"} for i in range(123)],
        closing=list(range(1000, 1013)),
        oid="f" * 40,
    )


def test_every_connection_is_read_to_its_last_page():
    merged = datetime(2026, 6, 24, 3, 0, tzinfo=UTC)
    big = _big_pr(9999, merged)
    with serve(FakeGitHub(), verl(W26_START, W26_END) + [big]) as server:
        f = fetcher_for(server, page_size=5)
        got = {x.pr.number: x.pr for x in f.merged_between(W26_START, W26_END)}
        assert server.errors == []
        assert len(got) == 23  # 5 search pages of 5
        pr = got[9999]
        assert [x.path for x in pr.files] == [x["path"] for x in big.files]
        assert pr.labels == big.labels
        assert [r.body for r in pr.reviews] == [r["body"] for r in big.reviews]
        assert [c.body for c in pr.comments] == [c["body"] for c in big.comments]
        assert pr.linked_issues == big.closing
        assert len(pr.threads) == 37
        assert [c.body for c in pr.threads[3].comments] == [f"thread 3 comment {c}" for c in range(45)]
        assert [t.resolved for t in pr.threads[:4]] == [True, False, True, False]
        ops = [r.operation for r in server.log]
        assert ops.count("SearchMergedPullRequests") == 5
        assert "PullRequestConnectionPage" in ops and "ReviewThreadCommentsPage" in ops
        assert f.client.stats.requests == len(server.log)


def test_a_window_over_the_search_cap_is_split_and_nothing_is_lost_or_repeated():
    prs = verl(W26_START, W26_END)
    talked = min(prs, key=lambda p: p.created_at)  # on the first page of the search that is split
    talked.comments += [{"author": actor(f"user{i}"), "body": f"comment {i}", "createdAt": talked.merged_at,
                         "authorAssociation": "NONE"} for i in range(150)]
    with serve(FakeGitHub(search_cap=8), prs) as server:
        f = fetcher_for(server, search_cap=8)
        got = {x.pr.number: x.pr for x in f.merged_between(W26_START, W26_END)}
        assert f.splits >= 2
        assert sorted(got) == sorted(p.number for p in prs) and len(got) == 22
        # every answered search stayed under the cap
        searches = [r for r in server.log if r.operation == "SearchMergedPullRequests"]
        assert all(len(r.numbers) <= 8 for r in searches)
        assert any(talked.number in r.numbers for r in searches[:1])
        # its discussion is read to the end once: not for the page the split threw away
        assert [r.operation for r in server.log].count("PullRequestConnectionPage") == 1
        assert len(got[talked.number].comments) == len(talked.comments)


def test_github_enterprise_server_path():
    with serve(FakeGitHub(enterprise=True), verl(W26_START, W26_END)) as server:
        assert server.url.endswith("/api/v3")
        f = fetcher_for(server)
        assert len(list(f.merged_between(W26_START, W26_END))) == 22
        assert {r.path for r in server.log} == {"/api/graphql"}


def test_fetch_by_number_for_enriching_a_clone():
    with serve(FakeGitHub(), verl(W26_START, W26_END)) as server:
        f = fetcher_for(server)
        got = f.by_numbers([6823, 6825, 123456])
        assert got[123456] is None
        assert got[6823].pr.reviews[0].author == "wuxibin89"
        assert len(got[6825].pr.threads) == 2
        assert f.client.stats.requests == 1


def test_first_time_contributors_are_asked_of_github_in_one_request():
    prs = verl()
    with serve(FakeGitHub(), prs) as server:
        week = [p for p in prs if W26_START <= p.merged_at < W26_END]
        candidates = sorted({p.author for p in week}) + ["someone[bot]"]
        f = fetcher_for(server)
        known = f.authors_with_earlier_merges(candidates, W26_START)
        assert f.client.stats.requests == 1
        expected = {a for a in candidates if any(p.author == a and p.merged_at < W26_START for p in prs)}
        assert known == expected | {"someone[bot]"}
        assert 0 < len(expected) < len(candidates) - 1  # some return, some are new this week


def test_prs_merged_into_other_branches_are_left_out(tmp_path):
    from repobrief.github.sync import sync_repository
    from repobrief.store import open_store

    prs = verl(W26_START, W26_END)
    backport = _big_pr(9001, datetime(2026, 6, 25, tzinfo=UTC))
    backport.base = "release/v0.8"
    with serve(FakeGitHub(), prs + [backport]) as server:
        f = fetcher_for(server)
        numbers = {x.pr.number for x in f.merged_between(W26_START, W26_END)}
        assert f.branch == "main" and 9001 not in numbers and len(numbers) == 22
        with open_store(tmp_path / "s.db") as store:
            result = sync_repository(fetcher_for(server), store, W26_START, now=W26_END)
            assert result.new == 22 and store.get_pull_request("verl-project/verl", 9001) is None
        # a report on the release branch (config `branch`) sees only that one
        assert [x.pr.number for x in fetcher_for(server, branch="release/v0.8").merged_between(W26_START, W26_END)] == [9001]


def test_a_closing_issue_the_token_may_not_read_is_left_out_with_a_warning(tmp_path):
    """GitHub answers the rest of the page, nulls the issue and names it in `errors`."""
    from repobrief.github.sync import sync_repository
    from repobrief.store import open_store

    prs = verl(W26_START, W26_END)
    prs[3].closing, prs[3].closing_private = [11], [1234]
    with serve(FakeGitHub(), prs) as server, open_store(tmp_path / "s.db") as store:
        f = fetcher_for(server)
        result = sync_repository(f, store, W26_START, now=W26_END)
        assert result.new == 22
        assert store.get_pull_request(REPO, prs[3].number).linked_issues == [11]
        assert f.warnings == [f"GitHub withheld closingIssuesReferences of #{prs[3].number} "
                              "(Resource not accessible by personal access token); the rest of it is kept"]


def test_a_pr_whose_file_list_github_cut_short_is_said_to_be_read_in_part():
    """GitHub lists at most 3,000 of a PR's files: a larger PR's `setup.py` past the cut went
    unseen (no dependency risk), with nothing in the report saying its files were read in
    part; `changedFiles` counts them all. (The server cuts this PR's list at 2 files.)"""
    prs = verl(W26_START, W26_END)
    big = max(prs, key=lambda p: len(p.files))
    big.listed_files = 2
    with serve(FakeGitHub(), prs) as server:
        f = fetcher_for(server)
        got = {x.pr.number: x.pr for x in f.merged_between(W26_START, W26_END)}
    assert len(got[big.number].files) == 2 < len(big.files)
    assert f.warnings == [f"GitHub lists 2 of the {len(big.files)} files of #{big.number}: what the report says of its "
                          "files (modules, risks, core paths) is read from those only; its line counts are GitHub's totals"]
    # its line counts are the PR's, not those of the files listed
    assert got[big.number].lines_added == big.additions


def test_a_renamed_module_or_config_file_keeps_where_it_came_from_in_one_rest_request(tmp_path):
    """GraphQL lists a renamed file at its new path only; code that imports the old path
    breaks, and so do scripts naming a moved config file, so for a PR that renames Python
    modules or config files the REST list of its files (paged, 100 a page) gives the old
    path. PRs renaming nothing else, or only docs, cost no request."""
    from repobrief.analysis.risks import module_changes
    from repobrief.github.sync import sync_repository
    from repobrief.store import open_store

    prs = {p.number: p for p in verl(W26_START, W26_END)}
    prs[6779].files.append({"path": "verl/utils/text/detok.py", "additions": 3, "deletions": 1,
                            "changeType": "RENAMED", "previous": "verl/utils/detok.py"})
    many = prs[6572]  # the renamed file on the REST list's second page
    many.files += [{"path": f"verl/gen/m{i}.py", "additions": 1, "deletions": 0, "changeType": "ADDED"} for i in range(140)]
    many.files.append({"path": "verl/models/qwen.py", "additions": 0, "deletions": 0, "changeType": "RENAMED",
                       "previous": "verl/models/qwen2.py"})
    prs[6823].files.append({"path": "docs/new_name.md", "additions": 0, "deletions": 0, "changeType": "RENAMED",
                            "previous": "docs/old_name.md"})
    prs[6818].files.append({"path": "verl/trainer/config/legacy/ppo_trainer.yaml", "additions": 1, "deletions": 0,
                            "changeType": "RENAMED", "previous": "verl/trainer/config/ppo_trainer.yaml"})
    with serve(FakeGitHub(), list(prs.values())) as server:
        f = fetcher_for(server)
        got = {x.pr.number: x.pr for x in f.merged_between(W26_START, W26_END)}
        assert server.errors == []
        rest = [e for e in server.log if e.operation == "rest:pulls/files"]
        assert sorted(e.path.split("/pulls/")[1] for e in rest) == [
            "6572/files?per_page=100&page=1", "6572/files?per_page=100&page=2", "6779/files?per_page=100&page=1",
            "6818/files?per_page=100&page=1"]
        assert f.client.stats.rest_calls == 4
        # the REST answers' budget ("core") is not taken for GraphQL's points
        assert f.client.stats.remaining == server.remaining != 4321
        moved = {(x.path, x.status, x.previous) for x in got[6779].files if x.previous}
        assert moved == {("verl/utils/text/detok.py", "M", "verl/utils/detok.py")}
        assert module_changes(got[6779], frozenset({"verl"})) == ["module moved: verl.utils.detok -> verl.utils.text.detok"]
        assert [x.previous for x in got[6572].files if x.previous] == ["verl/models/qwen2.py"]
        assert not any(x.previous for x in got[6823].files)  # a renamed doc: GraphQL's path is enough
        # a renamed config file: where it came from, as a clone's rename detection gives it
        assert [x.previous for x in got[6818].files if x.previous] == ["verl/trainer/config/ppo_trainer.yaml"]
        from repobrief.analysis.risks import _config_changes

        assert "config file renamed verl/trainer/config/ppo_trainer.yaml -> verl/trainer/config/legacy/ppo_trainer.yaml" in (
            _config_changes(got[6818], ""))
        # the old path is kept in the store, for reports read from it
        with open_store(tmp_path / "s.db") as store:
            sync_repository(fetcher_for(server), store, W26_START, now=W26_END + timedelta(days=1))
            stored = store.get_pull_request(REPO, 6779)
        assert {(x.path, x.previous) for x in stored.files if x.previous} == {("verl/utils/text/detok.py", "verl/utils/detok.py")}
        # an old path GitHub does not give is a warning; the PR is kept without it
        server.rest_missing = True
        f = fetcher_for(server)
        got = {x.pr.number: x.pr for x in f.merged_between(W26_START, W26_END)}
        assert len(got) == 22 and not any(x.previous for p in got.values() for x in p.files)
        assert [w.key for w in f.warnings] == ["github_withheld"] * 3  # one per PR: #6572, #6779, #6818
        assert str(f.warnings[0]).startswith("GitHub withheld the old paths of its renamed files of #")
        assert "no GitHub resource at" in str(f.warnings[0]) and "test-token" not in str(f.warnings)


def test_a_revert_names_the_pr_it_undoes(tmp_path):
    """GitHub's Revert button titles a PR `Revert "<title>"` and writes "Reverts
    owner/repo#N" in its body: #5333 undid #5330 three days after it was merged (verl,
    2026-W08). A body naming another repository's PR is not this repository's, and a
    PR that merely quotes a title is no revert. The store keeps what it reverts."""
    from repobrief.github.sync import sync_repository
    from repobrief.store import open_store

    start, end = datetime(2026, 2, 9, tzinfo=UTC), datetime(2026, 2, 23, tzinfo=UTC)
    prs = {p.number: p for p in verl(start, end)}
    assert prs[5333].body.startswith("Reverts verl-project/verl#5330")
    upstream = prs[5333]
    other = FakePullRequest(**{**upstream.__dict__, "number": 5400, "title": 'Revert "[vllm] bump to 0.11 (#77)"',
                               "body": "Reverts vllm-project/vllm#12345 upstream, so we follow"})
    quoting = FakePullRequest(**{**upstream.__dict__, "number": 5401, "title": '[doc] explain "Revert" buttons',
                                 "body": "Reverts verl-project/verl#5330 is what the button writes"})
    with serve(FakeGitHub(), [*prs.values(), other, quoting]) as server:
        got = {x.pr.number: x.pr for x in fetcher_for(server).merged_between(start, end)}
        assert got[5333].reverts == 5330 and got[5330].reverts is None
        assert got[5400].reverts == 77  # the quoted title's own "(#N)", not vllm's #12345
        assert got[5401].reverts is None
        with open_store(tmp_path / "s.db") as store:
            sync_repository(fetcher_for(server), store, start, now=end)
            assert store.get_pull_request(REPO, 5333).reverts == 5330
