"""A GraphQL client for GitHub (GitHub.com or Enterprise Server) on top of githubkit.

What it adds to githubkit:

- a retry policy (githubkit's `auto_retry` hook) that waits out primary rate
  limits until their reset, secondary limits for `Retry-After` (or a minute
  when GitHub gives none), and retries 502/503/504 and dropped connections with
  exponential backoff; every wait is announced through `on_wait` so that a
  long pause is never silent;
- GraphQL-level rate limiting: a `RATE_LIMITED` error in a 200 answer is
  waited out too, and when the remaining budget is below the last call's cost
  the client waits for the reset before sending the next call;
- counts: HTTP requests actually sent (retries included) and GraphQL points;
- errors turned into `SourceError`s that say what is wrong and what to do,
  and never contain the token.
"""

from __future__ import annotations

import logging
import math
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from email.utils import parsedate_to_datetime
from typing import Any

import httpx
from githubkit import GitHub
from githubkit.exception import (
    GitHubException,
    PrimaryRateLimitExceeded,
    RateLimitExceeded,
    RequestError,
    RequestFailed,
    RequestTimeout,
    SecondaryRateLimitExceeded,
)
from githubkit.retry import RetryOption

from ..errors import SourceError
from .auth import Token, fix_hint, normalize_api_url

log = logging.getLogger(__name__)

WaitCallback = Callable[[str, float], None]

RETRYABLE_STATUS = (502, 503, 504)
SECONDARY_MESSAGE = re.compile(r"secondary rate limit|abuse detection", re.IGNORECASE)


@dataclass
class RequestStats:
    """What talking to GitHub cost."""

    requests: int = 0  # HTTP requests sent, retries included
    graphql_calls: int = 0  # GraphQL documents answered
    graphql_cost: int = 0  # points, as GitHub's `rateLimit.cost` reports them
    retries: int = 0
    waited_seconds: float = 0.0
    remaining: int | None = None
    reset_at: datetime | None = None
    waits: list[str] = field(default_factory=list)

    def summary(self) -> str:
        text = f"{self.requests} request{'s' if self.requests != 1 else ''}, {self.graphql_cost} GraphQL point{'s' if self.graphql_cost != 1 else ''}"
        if self.retries:
            text += f", {self.retries} retried"
        if self.waited_seconds:
            text += f", {self.waited_seconds:.0f} s waiting for rate limits"
        return text


class RetryPolicy:
    """githubkit's `auto_retry` decision: which failures to retry, after how long."""

    def __init__(
        self,
        stats: RequestStats,
        notify: Callable[[str, float], None],
        *,
        max_retries: int = 5,
        backoff: float = 1.0,
        max_wait: float = 3600.0,
    ) -> None:
        self.stats = stats
        self.notify = notify
        self.max_retries = max_retries
        self.backoff = backoff
        self.max_wait = max_wait
        self.retried = 0

    def __call__(self, exc: GitHubException, retry_count: int) -> RetryOption:
        self.retried = retry_count  # of the request that failed: its error says how often it was tried
        if retry_count >= self.max_retries:
            return RetryOption(False)
        if isinstance(exc, SecondaryRateLimitExceeded):
            wait = _seconds(exc.retry_after)
            if "retry-after" not in exc.response.headers:
                wait = max(wait, 60.0 * (2**retry_count))
            return self._wait(wait + 0.05, "secondary rate limit", "Retry-After")
        if isinstance(exc, PrimaryRateLimitExceeded):
            return self._wait(_seconds(exc.retry_after) + 1.0, "rate limit exhausted", "the reset time")
        if isinstance(exc, RequestFailed) and not isinstance(exc, RateLimitExceeded):
            status = exc.response.status_code
            if status in (403, 429) and SECONDARY_MESSAGE.search(exc.response.raw_response.text or ""):
                # a secondary limit without Retry-After: GitHub asks for at least a minute
                return self._wait(60.0 * (2**retry_count), "secondary rate limit", "a minute")
            if status in RETRYABLE_STATUS:
                delay = self.backoff * (2**retry_count)
                self.stats.retries += 1
                self.notify(f"GitHub answered {status}; retrying in {delay:.1f} s (attempt {retry_count + 2})", delay)
                return RetryOption(True, timedelta(seconds=delay))
            return RetryOption(False)
        if isinstance(exc, RequestError) and not (_unreachable(exc) and retry_count >= 2):
            # a dropped connection or a timeout is retried like a 5xx; nothing listening
            # (refused, no route) is rarely a blip, so a run without network ends soon
            delay = self.backoff * (2**retry_count)
            self.stats.retries += 1
            self.notify(f"no answer from GitHub ({_describe_transport_error(exc)}); retrying in {delay:.1f} s", delay)
            return RetryOption(True, timedelta(seconds=delay))
        return RetryOption(False)

    def _wait(self, seconds: float, what: str, until: str) -> RetryOption:
        seconds = max(0.0, seconds)
        if seconds > self.max_wait:
            return RetryOption(False)
        self.stats.retries += 1
        self.stats.waited_seconds += seconds
        message = f"GitHub {what}: waiting {seconds:.0f} s ({until})"
        self.stats.waits.append(message)
        self.notify(message, seconds)
        return RetryOption(True, timedelta(seconds=seconds))


def _plain_rate_headers(response: httpx.Response) -> None:
    """Rewrite rate-limit headers githubkit would fail to read into ones it can:
    `Retry-After` may be an HTTP date (RFC 9110; proxies and GHES front-ends send
    one), which becomes seconds; a value that is neither is dropped (the policy
    then waits a minute), and so is an `x-ratelimit-reset` that is not a number."""
    value = response.headers.get("retry-after")
    if value is not None and not value.strip().isdigit():
        try:
            when = parsedate_to_datetime(value)
            response.headers["retry-after"] = str(max(0, math.ceil((when - datetime.now(UTC)).total_seconds())))
        except (TypeError, ValueError):
            del response.headers["retry-after"]
    reset = response.headers.get("x-ratelimit-reset")
    if reset is not None and not reset.strip().isdigit():
        del response.headers["x-ratelimit-reset"]


def _is_graphql_answer(body: Any) -> bool:
    """A JSON object whose `data` is an object or null and whose `errors` is a list of objects."""
    if not isinstance(body, dict) or not isinstance(body.get("data") or {}, dict):
        return False
    errors = body.get("errors") or []
    return isinstance(errors, list) and all(isinstance(e, dict) for e in errors)


def _seconds(d: timedelta | None) -> float:
    return d.total_seconds() if d is not None else 60.0


def _unreachable(exc: GitHubException) -> bool:
    """Nothing answered the connection (refused, no route, no such host)."""
    return isinstance(getattr(exc, "exc", None), httpx.ConnectError)


def _describe_transport_error(exc: GitHubException) -> str:
    inner = getattr(exc, "exc", None)
    if isinstance(exc, RequestTimeout) or isinstance(inner, httpx.TimeoutException):
        return "timed out"
    if isinstance(inner, httpx.ConnectError):
        return "connection refused or host unreachable"
    if isinstance(inner, (httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError)):
        return "the connection was closed before an answer came"
    return type(inner).__name__ if inner is not None else type(exc).__name__


class GitHubClient:
    """Sends GraphQL documents to one GitHub server with one token."""

    def __init__(
        self,
        token: Token,
        api_url: str | None = None,
        *,
        on_wait: WaitCallback | None = None,
        max_retries: int = 5,
        backoff: float = 1.0,
        max_wait: float = 3600.0,
        timeout: float = 60.0,
    ) -> None:
        self.api_url = normalize_api_url(api_url)
        self.token = token
        self.stats = RequestStats()
        self._on_wait = on_wait
        self.policy = RetryPolicy(self.stats, self._notify, max_retries=max_retries, backoff=backoff, max_wait=max_wait)
        self.max_wait = max_wait
        self._last_cost = 1
        self._scopes: str | None = None
        self._gh = GitHub(
            token.value,
            base_url=self.api_url,
            user_agent="repobrief",
            timeout=timeout,
            http_cache=False,  # POSTs only; a cache would hide requests from the counts
            auto_retry=self.policy,
            event_hooks={"request": [self._count_request], "response": [_plain_rate_headers]},
        )
        self._gh.__enter__()  # one connection pool for the client's lifetime

    # ------------------------------------------------------------------ plumbing

    def close(self) -> None:
        self._gh.__exit__(None, None, None)

    def __enter__(self) -> GitHubClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _count_request(self, request: httpx.Request) -> None:
        self.stats.requests += 1

    def _notify(self, message: str, seconds: float) -> None:
        if self._on_wait is not None:
            log.info("%s", message)
            self._on_wait(message, seconds)
        else:  # nobody shows progress: a warning, so that a long pause is never silent
            log.warning("%s", message)

    @property
    def graphql_url(self) -> str:
        return self._gh.graphql._get_graphql_endpoint()

    # ------------------------------------------------------------------ calls

    def graphql(self, query: str, variables: dict[str, Any] | None = None, *, allow_partial: bool = False) -> dict:
        """Run one document; returns `data`. GraphQL errors raise `SourceError`
        unless `allow_partial` (then errors are in `data["__errors__"]`)."""
        payload: dict[str, Any] = {"query": query, "variables": variables or {}}
        for attempt in range(self.policy.max_retries + 1):
            self._wait_for_budget()
            try:
                response = self._gh.request("POST", self.graphql_url, json=payload)
            except GitHubException as exc:
                raise self._error(exc) from None
            self._record_headers(response.headers)
            try:
                body = response.raw_response.json()
            except ValueError:
                raise SourceError(
                    f"GitHub at {self.api_url} answered with something that is not JSON",
                    "check --github-url (GitHub Enterprise Server: https://HOST/api/v3)",
                ) from None
            if not _is_graphql_answer(body):
                raise SourceError(
                    f"GitHub at {self.api_url} answered with JSON that is not a GraphQL response",
                    "check --github-url (GitHub Enterprise Server: https://HOST/api/v3); if it is right, "
                    "a proxy or GitHub itself is misbehaving: try again later (`repobrief sync` continues where it stopped)",
                )
            errors = body.get("errors") or []
            if any(e.get("type") in ("RATE_LIMITED", "RATE_LIMIT") for e in errors):
                reset = self._reset_in(response.headers)
                option = self.policy._wait(reset + 1.0, "GraphQL rate limit exhausted", "the reset time")
                if not option.do_retry or attempt == self.policy.max_retries:
                    raise self._rate_limit_error()
                time.sleep(option.retry_after.total_seconds() if option.retry_after else 60)
                continue
            data = body.get("data") or {}
            self.stats.graphql_calls += 1
            rate = data.get("rateLimit") if isinstance(data, dict) else None
            if rate:
                self._last_cost = max(1, int(rate.get("cost") or 1))
                self.stats.graphql_cost += int(rate.get("cost") or 0)
                self.stats.remaining = rate.get("remaining", self.stats.remaining)
                if rate.get("resetAt"):
                    self.stats.reset_at = _parse_time(rate["resetAt"])
            if errors:
                if allow_partial:
                    data = dict(data)
                    data["__errors__"] = errors
                    return data
                raise self.graphql_error(errors)
            return data
        raise self._rate_limit_error()

    # ------------------------------------------------------------------ rate limits

    def _record_headers(self, headers: httpx.Headers) -> None:
        if "x-oauth-scopes" in headers:
            self._scopes = headers["x-oauth-scopes"]
        if "x-ratelimit-remaining" in headers:
            try:
                self.stats.remaining = int(headers["x-ratelimit-remaining"])
                if "x-ratelimit-reset" in headers:
                    self.stats.reset_at = datetime.fromtimestamp(int(headers["x-ratelimit-reset"]), UTC)
            except ValueError:
                pass

    def _reset_in(self, headers: httpx.Headers) -> float:
        if "retry-after" in headers:
            try:
                return float(headers["retry-after"])
            except ValueError:
                pass
        if self.stats.reset_at is not None:
            return max(0.0, (self.stats.reset_at - datetime.now(UTC)).total_seconds())
        return 60.0

    def _wait_for_budget(self) -> None:
        """Wait for the reset when the budget left cannot pay for another call."""
        remaining, reset_at = self.stats.remaining, self.stats.reset_at
        if remaining is None or reset_at is None or remaining >= self._last_cost:
            return
        seconds = (reset_at - datetime.now(UTC)).total_seconds() + 1.0
        if seconds <= 0:
            self.stats.remaining = None
            return
        if seconds > self.max_wait:
            raise self._rate_limit_error()
        message = f"GitHub rate limit: {remaining} point{'s' if remaining != 1 else ''} left; waiting {seconds:.0f} s for the reset at {reset_at:%H:%M:%S} UTC"
        self.stats.waited_seconds += seconds
        self.stats.waits.append(message)
        self._notify(message, seconds)
        time.sleep(seconds)
        self.stats.remaining = None

    def _rate_limit_error(self) -> SourceError:
        when = f" at {self.stats.reset_at:%Y-%m-%d %H:%M} UTC" if self.stats.reset_at else ""
        return SourceError(
            f"GitHub's rate limit is exhausted and resets{when or ' later'}, beyond the longest wait ({self.max_wait:.0f} s)",
            "run again after the reset; `repobrief sync` continues where it stopped",
        )

    # ------------------------------------------------------------------ errors

    def _error(self, exc: GitHubException) -> SourceError:
        where = self.api_url
        if isinstance(exc, SecondaryRateLimitExceeded):
            return SourceError(
                f"GitHub at {where} asks to wait {_seconds(exc.retry_after):.0f} s (secondary rate limit), beyond the longest wait ({self.max_wait:.0f} s)",
                "wait a few minutes and run again (`repobrief sync` continues where it stopped); avoid running several syncs at once",
            )
        if isinstance(exc, RateLimitExceeded):
            self._record_headers(exc.response.headers)
            return self._rate_limit_error()
        if isinstance(exc, RequestFailed):
            status = exc.response.status_code
            # some proxies echo the request's headers, the token among them
            message = _scrub(_github_message(exc.response.raw_response), self.token.value)
            self._record_headers(exc.response.headers)
            if status == 401:
                return SourceError(
                    f"GitHub at {where} rejected the token from {self.token.origin} (401 {message or 'Bad credentials'})",
                    f"the token is wrong, expired or revoked; {fix_hint(self.token.origin)}",
                )
            if status in (403, 429) and SECONDARY_MESSAGE.search(message):
                return SourceError(
                    f"GitHub at {where} keeps applying its secondary rate limit ({status} {message})",
                    "wait a few minutes and run again (`repobrief sync` continues where it stopped); avoid running several syncs at once",
                )
            if status == 403:
                return SourceError(
                    f"GitHub at {where} refused the request (403 {message or 'Forbidden'})",
                    self._scope_hint() or "the token lacks access to this repository or API; check its scopes and the organization's SSO authorization",
                )
            if status == 404:
                raw = exc.response.raw_response
                moved = f", redirected from {raw.history[0].request.url}" if raw.history else ""
                return SourceError(
                    f"no GitHub GraphQL API at {raw.request.url} (404{moved})",
                    "check --github-url; for GitHub Enterprise Server use https://HOST/api/v3",
                )
            if status in RETRYABLE_STATUS or status >= 500:
                failed = "kept failing" if self.policy.retried else "failed"
                return SourceError(
                    f"GitHub at {where} {failed} ({status} {exc.response.reason_phrase}){self._tries()}",
                    "GitHub may be having an outage; try again later (`repobrief sync` continues where it stopped)",
                )
            return SourceError(f"GitHub at {where} answered {status} {message}".rstrip())
        if isinstance(exc, RequestError) and _unreachable(exc):
            return SourceError(
                f"cannot reach GitHub at {where}: {_describe_transport_error(exc)}",
                "check the network connection and --github-url",
            )
        if isinstance(exc, RequestError):
            return SourceError(
                f"no answer from GitHub at {where} ({_describe_transport_error(exc)}){self._tries()}",
                "a proxy or an unstable network may be dropping connections; try again later "
                "(`repobrief sync` continues where it stopped), or raise github.max_retries",
            )
        return SourceError(f"GitHub request failed: {type(exc).__name__}")

    def _tries(self) -> str:
        n = self.policy.retried
        return f", {n + 1} tries" if n else ""

    def graphql_error(self, errors: list[dict], repository: str | None = None) -> SourceError:
        types = {e.get("type") for e in errors}
        first = _scrub(str(errors[0].get("message", "unknown error")), self.token.value)
        if "NOT_FOUND" in types and repository:
            return SourceError(
                f"repository {repository} was not found at {self.api_url}, or the token from {self.token.origin} cannot see it",
                self._scope_hint() or "check OWNER/REPO; for a private repository the token needs read access to it",
            )
        if types & {"INSUFFICIENT_SCOPES", "FORBIDDEN"}:
            return SourceError(
                f"the token from {self.token.origin} may not read this: {first}",
                self._scope_hint() or "grant the token read access to the repository's pull requests (classic token: the 'repo' scope)",
            )
        return SourceError(f"GitHub GraphQL error: {first}")

    def _scope_hint(self) -> str | None:
        if self._scopes is None:
            return None
        scopes = [s.strip() for s in self._scopes.split(",") if s.strip()]
        if "repo" in scopes:
            return None
        have = ", ".join(scopes) or "none"
        return f"the token's scopes are: {have}; a private repository needs the 'repo' scope (classic token) or read access to pull requests (fine-grained token)"


def _github_message(response: httpx.Response) -> str:
    try:
        body = response.json()
    except ValueError:
        return ""
    return str(body.get("message", "")) if isinstance(body, dict) else ""


def _scrub(text: str, secret: str) -> str:
    return text.replace(secret, "***") if secret else text


def _parse_time(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))
