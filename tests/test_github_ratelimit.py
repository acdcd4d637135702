"""Rate limits and flaky servers: waited out with a message, retried with
backoff, counted; the data that arrives is complete either way."""

from __future__ import annotations

import time

import pytest
from github_support import W26_END, W26_START, fetcher_for, serve, verl
from githubserver import FakeGitHub, Fault

from repobrief.errors import SourceError


def _week_numbers(f) -> list[int]:
    return sorted(x.pr.number for x in f.merged_between(W26_START, W26_END))


def test_primary_limit_403_is_waited_out_until_the_reset():
    with serve(FakeGitHub(), verl(W26_START, W26_END)) as server:
        server.queue.append(Fault("primary", seconds=1))
        waits: list[str] = []
        f = fetcher_for(server, waits=waits)
        t0 = time.monotonic()
        assert len(_week_numbers(f)) == 22
        assert time.monotonic() - t0 >= 0.9  # it did wait for the reset
        assert [r.status for r in server.log] == [403, 200]
        assert len(waits) == 1 and "rate limit exhausted" in waits[0] and "waiting" in waits[0]
        assert f.client.stats.requests == 2 and f.client.stats.retries == 1


def test_graphql_rate_limited_answer_is_waited_out():
    with serve(FakeGitHub(), verl(W26_START, W26_END)) as server:
        server.queue.append(Fault("graphql_rate_limited", seconds=1))
        waits: list[str] = []
        f = fetcher_for(server, waits=waits)
        assert len(_week_numbers(f)) == 22
        assert len(server.log) == 2 and "GraphQL rate limit" in waits[0]
        assert f.client.stats.graphql_calls == 1


def test_a_nearly_spent_budget_is_waited_for_before_the_next_call():
    with serve(FakeGitHub(), verl(W26_START, W26_END)) as server:
        f = fetcher_for(server, waits=(waits := []), page_size=10)
        # the first page costs 4 points; 5 left means the second page would be refused
        server.set_budget(5, reset_in=1.5)
        assert len(_week_numbers(f)) == 22
        assert len(server.log) == 3  # no request was refused: the client waited instead
        assert all(r.status == 200 for r in server.log)
        assert len(waits) == 1 and "left; waiting" in waits[0]
        assert f.client.stats.waited_seconds > 0


def test_secondary_limit_honours_retry_after():
    with serve(FakeGitHub(), verl(W26_START, W26_END)) as server:
        server.queue.append(Fault("secondary", seconds=1))
        waits: list[str] = []
        f = fetcher_for(server, waits=waits)
        t0 = time.monotonic()
        assert len(_week_numbers(f)) == 22
        assert time.monotonic() - t0 >= 1.0
        assert "secondary rate limit" in waits[0] and "Retry-After" in waits[0]


def test_502_and_503_are_retried_with_backoff():
    with serve(FakeGitHub(), verl(W26_START, W26_END)) as server:
        server.queue += [Fault("status", status=502), Fault("status", status=503)]
        waits: list[str] = []
        f = fetcher_for(server, waits=waits)
        assert len(_week_numbers(f)) == 22
        assert [r.status for r in server.log] == [502, 503, 200]
        assert f.client.stats.requests == 3 and f.client.stats.retries == 2
        assert "502" in waits[0] and "503" in waits[1]


def test_a_server_that_keeps_failing_ends_in_a_clear_error():
    with serve(FakeGitHub(), verl(W26_START, W26_END)) as server:
        server.down = 503
        f = fetcher_for(server, max_retries=2)
        with pytest.raises(SourceError) as e:
            _week_numbers(f)
        assert "kept failing (503" in str(e.value) and "try again later" in str(e.value)
        assert len(server.log) == 3  # the first try and two retries
        assert e.value.exit_code == 4


def test_a_reset_beyond_the_longest_wait_is_an_error_not_a_hang():
    with serve(FakeGitHub(), verl(W26_START, W26_END)) as server:
        server.queue.append(Fault("primary", seconds=7200))
        f = fetcher_for(server, max_wait=60)
        t0 = time.monotonic()
        with pytest.raises(SourceError) as e:
            _week_numbers(f)
        assert time.monotonic() - t0 < 5
        assert "rate limit is exhausted" in str(e.value) and "continues where it stopped" in str(e.value)


def test_secondary_limit_that_outlasts_the_longest_wait_is_a_clear_error():
    with serve(FakeGitHub(), verl(W26_START, W26_END)) as server:
        server.queue.append(Fault("secondary", seconds=600))
        f = fetcher_for(server, max_wait=5)
        with pytest.raises(SourceError) as e:
            _week_numbers(f)
        assert "secondary rate limit" in str(e.value) and "wait a few minutes" in str(e.value)
        assert len(server.log) == 1


def test_retry_after_as_an_http_date_is_waited_out():
    """RFC 9110 lets Retry-After be a date; proxies and GHES front-ends send one."""
    with serve(FakeGitHub(), verl(W26_START, W26_END)) as server:
        server.queue.append(Fault("secondary_date", seconds=2))
        waits: list[str] = []
        f = fetcher_for(server, waits=waits)
        t0 = time.monotonic()
        assert len(_week_numbers(f)) == 22
        assert time.monotonic() - t0 >= 0.5
        assert [r.status for r in server.log] == [429, 200]
        assert "secondary rate limit" in waits[0] and "Retry-After" in waits[0]


def test_dropped_connections_are_retried_up_to_max_retries():
    with serve(FakeGitHub(), verl(W26_START, W26_END)) as server:
        server.queue += [Fault("drop")] * 3
        waits: list[str] = []
        f = fetcher_for(server, waits=waits, max_retries=5)
        assert len(_week_numbers(f)) == 22
        assert len(server.log) == 4 and f.client.stats.retries == 3
        assert "the connection was closed before an answer came" in waits[0]

        server.queue += [Fault("drop")] * 3
        f = fetcher_for(server, max_retries=2)
        with pytest.raises(SourceError) as e:
            _week_numbers(f)
        msg = str(e.value)
        assert f"no answer from GitHub at {server.url} (the connection was closed before an answer came), 3 tries" in msg
        assert "cannot reach" not in msg and "RemoteProtocolError" not in msg and e.value.exit_code == 4
