"""Incremental sync into a real SQLite store: a first sync, a re-sync with
nothing new (at most 2 requests), updates and new merges, interruptions
(a crash between pages, an outage, a 502 on the way) resumed without losing
or duplicating anything, and offline reads of what was synced."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime, timedelta

import pytest
from github_support import REPO, SHANGHAI, W26_END, W26_START, fetcher_for, serve, verl
from githubserver import FakeGitHub, Fault, actor
from sqlalchemy import text

from repobrief.config import Settings
from repobrief.errors import SourceError
from repobrief.github.sync import sync_repository
from repobrief.sources.github import GitHubSource
from repobrief.store import open_store
from repobrief.window import Window, iso_week_window

SINCE = datetime(2026, 6, 15, tzinfo=SHANGHAI)
UNTIL = datetime(2026, 7, 6, tzinfo=SHANGHAI)  # "now" for the server's data
NOW = datetime(2026, 7, 6, 12, tzinfo=UTC)


@pytest.fixture()
def server():
    with serve(FakeGitHub(), verl(SINCE, UNTIL)) as s:
        yield s


def _rows(store) -> Counter:
    with store._engine.connect() as conn:
        return Counter(n for (n,) in conn.execute(text("SELECT number FROM pull_requests")))


def test_first_sync_then_a_resync_with_nothing_new(server, tmp_path):
    expected = {p.number for p in server.repos[REPO].prs.values()}
    with open_store(tmp_path / "s.db") as store:
        f = fetcher_for(server, page_size=10)
        first = sync_repository(f, store, SINCE, now=NOW)
        assert first.new == len(expected) == 69 and first.updated == 0
        assert first.pages == 8  # 10 PRs, then 9 new per page: each page repeats its boundary PR
        rows = _rows(store)
        assert set(rows) == expected and set(rows.values()) == {1}
        stored = store.get_pull_request(REPO, 6823)
        assert stored.labels == ["breaking", "trainer", "cfg"] and stored.threads[0].path == "verl/workers/engine_workers.py"

        f2 = fetcher_for(server, page_size=10)
        again = sync_repository(f2, store, SINCE, now=NOW + timedelta(hours=1))
        assert f2.client.stats.requests <= 2
        assert (again.new, again.updated) == (0, 0)
        assert set(_rows(store).values()) == {1}


def test_resync_fetches_only_what_changed(server, tmp_path):
    repo = server.repos[REPO]
    with open_store(tmp_path / "s.db") as store:
        sync_repository(fetcher_for(server, page_size=10), store, SINCE, now=NOW)
        seen_before = len(server.log)
        high = max(p.updated_at for p in repo.prs.values())
        boundary = {p.number for p in repo.prs.values() if p.updated_at == high}
        # after the sync: a late review comment on an old PR, and a new merge
        pr = repo.prs[6826]
        later = NOW + timedelta(minutes=30)
        pr.comments.append({"author": actor("reviewer"), "body": "This doc now contradicts the install guide; please fix.", "createdAt": later, "authorAssociation": "MEMBER"})
        pr.updated_at = later
        newest = verl(UNTIL, UNTIL + timedelta(days=2))[0]
        newest.updated_at = later + timedelta(minutes=1)
        repo.prs[newest.number] = newest

        f = fetcher_for(server, page_size=10)
        result = sync_repository(f, store, SINCE, now=later + timedelta(hours=1))
        assert (result.new, result.updated) == (1, 1)
        assert f.client.stats.requests == 1
        returned = set(server.returned_numbers()[sum(len(r.numbers) for r in server.log[:seen_before]):])
        assert returned - boundary == {6826, newest.number}  # plus the PR(s) at the saved boundary
        assert store.get_pull_request(REPO, 6826).comments[-1].author == "reviewer"
        assert set(_rows(store).values()) == {1}


def test_a_pr_a_resync_lists_again_unchanged_costs_no_request_of_its_own(server, tmp_path):
    """A re-sync lists again the PRs updated at its saved boundary. One with a long
    discussion and a renamed module used to be read whole again (its comments' next
    pages, the REST list of its files) only to be found unchanged."""
    repo = server.repos[REPO]
    high = max(p.updated_at for p in repo.prs.values())
    pr = next(p for p in repo.prs.values() if p.updated_at == high)
    pr.comments += [{"author": actor(f"user{i}"), "body": f"comment {i}", "createdAt": high, "authorAssociation": "NONE"}
                    for i in range(150)]
    pr.files.append({"path": "verl/utils/text/detok.py", "additions": 3, "deletions": 1, "changeType": "RENAMED",
                     "previous": "verl/utils/detok.py"})
    with open_store(tmp_path / "s.db") as store:
        first = fetcher_for(server, page_size=10)
        sync_repository(first, store, SINCE, now=NOW)
        assert first.client.stats.rest_calls == 1
        assert len(store.get_pull_request(REPO, pr.number).comments) == len(pr.comments)
        seen_before = len(server.log)
        again = fetcher_for(server, page_size=10)
        result = sync_repository(again, store, SINCE, now=NOW + timedelta(hours=1))
        assert pr.number in server.returned_numbers()[sum(len(r.numbers) for r in server.log[:seen_before]):]
        assert (result.new, result.updated) == (0, 0)
        assert [e.operation for e in server.log[seen_before:]] == ["SearchMergedPullRequests"]
        assert again.client.stats.rest_calls == 0


def test_a_sync_reaching_further_back_reads_only_the_earlier_weeks_whole(server, tmp_path):
    """A sync with an earlier --since than before reads the PRs merged in between whole, and
    of the rest only what changed since, as any re-sync does; it used to read everything
    again. Interrupted while reading the earlier weeks, it resumes as a whole sync."""
    repo = server.repos[REPO]
    later = SINCE + timedelta(days=10)
    expected = {p.number for p in repo.prs.values()}
    earlier = {p.number for p in repo.prs.values() if p.merged_at < later}
    assert 10 < len(earlier) < len(expected) - 10
    with open_store(tmp_path / "s.db") as store:
        sync_repository(fetcher_for(server, page_size=10), store, later, now=NOW)
        assert set(_rows(store)) == expected - earlier
        mark = len(server.log)
        f = fetcher_for(server, page_size=10)
        result = sync_repository(f, store, SINCE, now=NOW + timedelta(hours=1))
        assert (result.new, result.updated) == (len(earlier), 0) and result.since == SINCE
        queries = [r.variables["q"] for r in server.log[mark:]]
        assert all("merged:" in q for q in queries) and "updated:" not in queries[0] and "updated:>=" in queries[-1]
        listed_again = {n for r in server.log[mark:] for n in r.numbers} - earlier
        high = max(p.updated_at for p in repo.prs.values())
        assert listed_again <= {p.number for p in repo.prs.values() if p.updated_at == high}  # the saved boundary only
        assert f.client.stats.requests == len(earlier) // 9 + 2  # pages of the earlier weeks, and one more
        rows = _rows(store)
        assert set(rows) == expected and set(rows.values()) == {1}
        state = store.get_sync_state(REPO, "github")
        assert "pending" not in state.extra and state.extra["since"] == SINCE.astimezone(UTC).isoformat()

    with open_store(tmp_path / "t.db") as store:
        sync_repository(fetcher_for(server, page_size=10), store, later, now=NOW)

        def crash_on_the_first_page(result):
            raise KeyboardInterrupt

        with pytest.raises(KeyboardInterrupt):
            sync_repository(fetcher_for(server, page_size=10), store, SINCE, now=NOW, on_page=crash_on_the_first_page)
        mark = len(server.log)
        result = sync_repository(fetcher_for(server, page_size=10), store, SINCE, now=NOW)
        assert result.resumed and "updated:" not in server.log[mark].variables["q"]
        rows = _rows(store)
        assert set(rows) == expected and set(rows.values()) == {1}


def test_interrupted_sync_resumes_without_refetching(server, tmp_path):
    expected = {p.number for p in server.repos[REPO].prs.values()}
    with open_store(tmp_path / "s.db") as store:
        pages_done = []

        def crash_after_three_pages(result):
            pages_done.append(result.pages)
            if len(pages_done) == 3:
                raise KeyboardInterrupt  # the user pressed Ctrl-C, or the machine went down

        with pytest.raises(KeyboardInterrupt):
            sync_repository(fetcher_for(server, page_size=10), store, SINCE, now=NOW, on_page=crash_after_three_pages)
        stored_before = set(_rows(store))
        assert len(stored_before) == 28  # three pages: 10 + 9 + 9
        served_before = len(server.log)

        # the network then fails part way: a 502 is retried, a lasting outage stops the run
        server.queue.append(Fault("status", status=502))
        server.fail_from = (served_before + 4, 503)
        with pytest.raises(SourceError):
            sync_repository(fetcher_for(server, page_size=10, max_retries=1), store, SINCE, now=NOW)
        after_outage = set(_rows(store))
        assert stored_before < after_outage < expected

        server.fail_from, server.down = None, None
        mark = len(server.log)
        result = sync_repository(fetcher_for(server, page_size=10), store, SINCE, now=NOW)
        assert result.resumed
        rows = _rows(store)
        assert set(rows) == expected and set(rows.values()) == {1}  # everything, exactly once
        refetched = [n for r in server.log[mark:] for n in r.numbers if n in after_outage]
        assert len(refetched) <= 1  # only the PR at the saved boundary is asked for again
        state = store.get_sync_state(REPO, "github")
        assert "pending" not in state.extra


def test_offline_report_source_reads_the_synced_week_without_network(server, tmp_path):
    with open_store(tmp_path / "s.db") as store:
        sync_repository(fetcher_for(server), store, SINCE, now=NOW)
    server.stop()  # no network from here on
    with open_store(tmp_path / "s.db") as store:
        settings = Settings(github=Settings().github)
        settings.github.url = "http://127.0.0.1:9"  # would fail if used
        src = GitHubSource("github:verl-project/verl", settings, store=store, offline=True)
        week = iso_week_window(W26_START.date(), SHANGHAI)
        prs = list(src.iter_pull_requests(week))
        assert len(prs) == 22 and all(p.discussion_known for p in prs)
        assert {p.number for p in prs if p.reviews} == {6823, 6825}
        assert src.began() == datetime(2016, 1, 4, tzinfo=UTC)  # the sync kept when GitHub says it was made
        # three weeks of store cannot tell who is new: unknown, rather than everyone "first-time"
        assert src.earlier_authors(W26_START) is None
        # and says so once, however often it is asked
        assert src.earlier_authors(W26_START) is None
        assert [w for w in src.warnings if w.startswith("first-time contributors are not counted")] == [
            "first-time contributors are not counted: telling them needs the PRs of verl-project/verl merged in the "
            "year before 2026-06-22, which the store does not hold; run "
            "`repobrief sync github:verl-project/verl --github-url http://127.0.0.1:9 --since 2025-06-22 --tz Asia/Shanghai` "
            "to count them"]  # the server the settings name, not api.github.com
        later = iso_week_window((UNTIL + timedelta(days=14)).date(), SHANGHAI)
        with pytest.raises(SourceError) as e:
            list(src.iter_pull_requests(later))
        # what is stored, from its first day to its last, in the report's zone
        assert "not in the store" in str(e.value)
        assert "stored: the PRs merged from 2026-06-15 00:00 to 2026-07-06 20:00 (Asia/Shanghai)" in str(e.value)


def test_online_source_stores_the_week_it_read(tmp_path):
    with serve(FakeGitHub(), verl(W26_START, W26_END)) as server, open_store(tmp_path / "s.db") as store:
        settings = Settings()
        settings.github.url = server.url
        settings.github.token = "test-token"
        src = GitHubSource("verl-project/verl", settings, store=store)
        week = iso_week_window(W26_START.date(), SHANGHAI)
        prs = list(src.iter_pull_requests(week))
        assert [p.merged_at for p in prs] == sorted(p.merged_at for p in prs)
        assert len(prs) == 22 and src.stats["requests"] == 1 and src.stats["graphql_points"] > 0
        # the pipeline asks for overlapping windows: they cost nothing more
        day = Window(W26_START, W26_START + timedelta(days=1), SHANGHAI, "day")
        assert [p.number for p in src.iter_pull_requests(day)] == [p.number for p in prs if day.contains(p.merged_at)]
        assert src.stats["requests"] == 1
        src.close()
        offline = GitHubSource("verl-project/verl", Settings(), store=store, offline=True)
        assert [p.number for p in offline.iter_pull_requests(week)] == [p.number for p in prs]


def test_many_prs_updated_in_the_same_second_do_not_stall_the_sync(tmp_path):
    prs = verl(W26_START, W26_END)
    for p in prs:  # e.g. a bulk relabelling touched every PR at once
        p.updated_at = NOW
    with serve(FakeGitHub(), prs) as server, open_store(tmp_path / "s.db") as store:
        result = sync_repository(fetcher_for(server, page_size=5), store, W26_START, now=NOW)
        assert result.new == 22 and set(_rows(store).values()) == {1}
        assert result.pages <= 6  # the cursor moved on instead of repeating the same page


def test_more_prs_updated_in_one_second_than_a_search_returns_are_all_synced(tmp_path):
    """A search returns at most 1,000 results (here 10): a bulk edit touching 1,100 PRs in one
    second left the cursor at the cap, and the sync stored 1,000 and said it had them all.
    That second's PRs are read by merge time, split until each part fits."""
    prs = verl(W26_START, W26_END)
    for p in prs:
        p.updated_at = NOW
    with serve(FakeGitHub(search_cap=10), prs) as server, open_store(tmp_path / "s.db") as store:
        f = fetcher_for(server, page_size=5, search_cap=10)
        result = sync_repository(f, store, W26_START, now=NOW)
        assert result.new == 22 and set(_rows(store).values()) == {1}
        assert len(store.load_pull_requests(REPO, None, None)) == 22
        assert f.splits >= 1
