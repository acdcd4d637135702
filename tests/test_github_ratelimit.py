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


def test_rate_limits_that_outlast_the_retries_say_so_not_that_the_wait_is_too_long():
    """Three secondary limits asking for 1 s each, two waits allowed: the third is not
    'beyond the longest wait' (1 s is not), it is one rate limit too many."""
    with serve(FakeGitHub(), verl(W26_START, W26_END)) as server:
        server.queue += [Fault("secondary", seconds=1)] * 3
        f = fetcher_for(server, max_retries=2)
        with pytest.raises(SourceError) as e:
            _week_numbers(f)
        msg = str(e.value)
        assert f"GitHub at {server.url} is still rate-limiting after 3 tries (secondary rate limit; it last asked to wait 1 s)" in msg
        assert "beyond the longest wait" not in msg
        assert "wait a few minutes and run again (`repobrief sync` continues where it stopped)" in msg
        assert "github.max_retries (2)" in msg and e.value.exit_code == 4
        assert [r.status for r in server.log] == [403, 403, 403]


def test_a_429_without_retry_after_is_waited_for_a_minute_doubling():
    """docs/github.md: a limit that names no wait is waited for a minute, doubling (shortened here)."""
    with serve(FakeGitHub(), verl(W26_START, W26_END)) as server:
        server.queue += [Fault("status", status=429)] * 2  # HTML body, no Retry-After, no rate headers
        waits: list[str] = []
        f = fetcher_for(server, waits=waits, unnamed_wait=0.2)
        t0 = time.monotonic()
        assert len(_week_numbers(f)) == 22
        assert time.monotonic() - t0 >= 0.6  # 0.2 s, then 0.4 s
        assert [r.status for r in server.log] == [429, 429, 200]
        assert len(waits) == 2 and all("rate limit (429 without Retry-After)" in w and "a minute, doubling" in w for w in waits)
        assert f.client.stats.waited_seconds == pytest.approx(0.6)


def test_a_429_whose_minute_is_beyond_the_longest_wait_ends_with_a_hint():
    with serve(FakeGitHub(), verl(W26_START, W26_END)) as server:
        server.queue.append(Fault("status", status=429))
        f = fetcher_for(server, max_wait=30)
        with pytest.raises(SourceError) as e:
            _week_numbers(f)
        assert f"GitHub at {server.url} asks to wait 60 s (429 Too Many Requests), beyond the longest wait (30 s" in e.value.message
        assert "wait a few minutes and run again" in e.value.hint
        assert len(server.log) == 1


TIMEOUT_ANSWER = (b'{"data": null, "errors": [{"message": "Something went wrong while executing your query. This may be '
                  b'the result of a timeout, or it could be a GitHub bug. Please include `C3D4:5E6F` when reporting this issue."}]}')


def test_githubs_something_went_wrong_answer_is_retried_like_a_502():
    with serve(FakeGitHub(), verl(W26_START, W26_END)) as server:
        server.queue += [Fault("body", body=TIMEOUT_ANSWER)] * 2
        waits: list[str] = []
        f = fetcher_for(server, waits=waits)
        assert len(_week_numbers(f)) == 22
        assert len(server.log) == 3 and f.client.stats.retries == 2
        assert waits[0].startswith("GitHub could not finish the query in time; retrying in")


def test_githubs_something_went_wrong_answer_that_persists_says_sync_resumes():
    with serve(FakeGitHub(), verl(W26_START, W26_END)) as server:
        server.queue += [Fault("body", body=TIMEOUT_ANSWER)] * 3
        f = fetcher_for(server, max_retries=2)
        with pytest.raises(SourceError) as e:
            _week_numbers(f)
        assert e.value.message.startswith(f"GitHub at {server.url} kept failing to answer the query in time (Something went wrong")
        assert e.value.message.endswith("C3D4:5E6F` when reporting this issue.), 3 tries")
        assert "run `repobrief sync` again later (it continues where it stopped)" in e.value.hint
        assert len(server.log) == 3 and e.value.exit_code == 4


def test_rate_limit_waits_neither_lengthen_the_5xx_backoff_nor_use_up_its_retries():
    """docs/github.md: `backoff` is the wait before the first 5xx retry, doubling; max_retries
    is per kind. Three rate limits come first, then three 502s: each is retried as if alone."""
    with serve(FakeGitHub(), verl(W26_START, W26_END)) as server:
        server.queue += [Fault("secondary", seconds=0)] * 3 + [Fault("status", status=502)] * 3
        waits: list[str] = []
        f = fetcher_for(server, waits=waits, max_retries=3, backoff=0.1)
        assert len(_week_numbers(f)) == 22
        assert [r.status for r in server.log] == [403] * 3 + [502] * 3 + [200]
        assert [w for w in waits if "502" in w] == [
            "GitHub answered 502; retrying in 0.1 s (retry 1 of 3)",
            "GitHub answered 502; retrying in 0.2 s (retry 2 of 3)",
            "GitHub answered 502; retrying in 0.4 s (retry 3 of 3)",
        ]
