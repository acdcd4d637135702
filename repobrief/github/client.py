"""A GraphQL client for GitHub (GitHub.com or Enterprise Server) on top of githubkit.

What it adds to githubkit:

- a retry policy (githubkit's `auto_retry` hook) that waits out primary rate
  limits until their reset, secondary limits and bare 429s for `Retry-After`
  (or a minute, doubling, when none is given), and retries 502/503/504, dropped
  connections and GitHub's GraphQL timeouts with exponential backoff; waits and
  retries have budgets of their own; every wait is announced through `on_wait`
  so that a long pause is never silent;
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
from typing import Any
from urllib.parse import urlsplit

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
from ..netcause import dns_failure, lookup_unavailable
from ..retry_after import retry_after_seconds
from .auth import Token, fix_hint, normalize_api_url

log = logging.getLogger(__name__)

WaitCallback = Callable[[str, float], None]

RETRYABLE_STATUS = (502, 503, 504)
SECONDARY_MESSAGE = re.compile(r"secondary rate limit|abuse detection", re.IGNORECASE)
# GitHub's answer (200, in `errors`) when a query ran out of time on its side; its advice is to retry
TRANSIENT_GRAPHQL = re.compile(
    r"something went wrong while executing your query|couldn't respond to your request in time", re.IGNORECASE
)


@dataclass
class RequestStats:
    """What talking to GitHub cost."""

    requests: int = 0  # HTTP requests sent, retries included
    graphql_calls: int = 0  # GraphQL documents answered
    graphql_cost: int = 0  # points, as GitHub's `rateLimit.cost` reports them
    rest_calls: int = 0  # REST requests answered (a renamed file's old path: GraphQL has none)
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
    """githubkit's `auto_retry` decision: which failures to retry, after how long.

    A GraphQL document has two budgets, counted apart (`begin` renews them): failures
    (502/503/504, dropped connections, timeouts, GitHub's "something went wrong"
    answers) get `max_retries` retries with a backoff that starts at `backoff` and
    doubles; rate limits get `max_retries` waits of their own, each as long as
    GitHub asks (never more than `max_wait`). A rate-limit wait thus neither
    lengthens a later backoff nor uses up the retries meant for failures."""

    def __init__(
        self,
        stats: RequestStats,
        notify: Callable[[str, float], None],
        *,
        max_retries: int = 5,
        backoff: float = 1.0,
        max_wait: float = 3600.0,
        unnamed_wait: float = 60.0,
    ) -> None:
        self.stats = stats
        self.notify = notify
        self.max_retries = max_retries
        self.backoff = backoff
        self.max_wait = max_wait
        self.unnamed_wait = unnamed_wait  # a rate limit that names no wait: GitHub asks for a minute
        self.begin()

    def begin(self) -> None:
        """A new document: both budgets full again."""
        self.failures = 0  # retries after failures
        self.limit_waits = 0  # waits for rate limits
        self.gave_up: str | None = None  # why the last rate limit was not waited out: "retries" or "wait"
        self.asked_wait = 0.0  # how long the last rate limit asked to wait

    @property
    def tries(self) -> int:
        """Requests sent for the current document."""
        return 1 + self.failures + self.limit_waits

    def __call__(self, exc: GitHubException, retry_count: int) -> RetryOption:
        # githubkit's retry_count counts every retry of one HTTP request alike; the
        # budgets above are kept per document and per kind instead
        if isinstance(exc, SecondaryRateLimitExceeded):
            if "retry-after" in exc.response.headers:
                return self.rate_limited(_seconds(exc.retry_after) + 0.05, "secondary rate limit", "Retry-After")
            return self.rate_limited(max(_seconds(exc.retry_after), self._doubling_wait()), "secondary rate limit", "a minute, doubling")
        if isinstance(exc, PrimaryRateLimitExceeded):
            return self.rate_limited(_seconds(exc.retry_after) + 1.0, "rate limit exhausted", "the reset time")
        if isinstance(exc, RequestFailed) and not isinstance(exc, RateLimitExceeded):
            status = exc.response.status_code
            if _is_unnamed_rate_limit(exc.response.raw_response):
                # a secondary limit without Retry-After, or a bare 429 (a proxy's, or GitHub's
                # with an HTML page): GitHub asks for at least a minute, longer each time
                what = "secondary rate limit" if status == 403 else f"rate limit ({status} without Retry-After)"
                return self.rate_limited(self._doubling_wait(), what, "a minute, doubling")
            if status in RETRYABLE_STATUS:
                return self.failed(f"GitHub answered {status}")
            return RetryOption(False)
        if isinstance(exc, RequestError):
            dns = dns_failure(exc)
            if dns is not None and not lookup_unavailable(dns):
                return RetryOption(False)  # a name that does not exist will not exist in a second either
            if _proxy_refusal(exc) == 407:
                return RetryOption(False)  # the proxy wants credentials: asking again will not give them
            if _unreachable(exc) and self.failures >= 2:
                # nothing listening (refused, no route) is rarely a blip: a run without network ends soon
                return RetryOption(False)
            # a dropped connection or a timeout is retried like a 5xx
            return self.failed(f"no answer from GitHub ({_describe_transport_error(exc)})")
        return RetryOption(False)

    def failed(self, what: str) -> RetryOption:
        """A failure that may pass: retried with exponential backoff, `max_retries` times."""
        if self.failures >= self.max_retries:
            return RetryOption(False)
        delay = self.backoff * (2**self.failures)
        self.failures += 1
        self.stats.retries += 1
        self.notify(f"{what}; retrying in {delay:.1f} s (retry {self.failures} of {self.max_retries})", delay)
        return RetryOption(True, timedelta(seconds=delay))

    def rate_limited(self, seconds: float, what: str, until: str) -> RetryOption:
        """A rate limit: waited out, unless the wait is too long or the waits are used up."""
        seconds = max(0.0, seconds)
        self.asked_wait = seconds
        if self.limit_waits >= self.max_retries:
            self.gave_up = "retries"
            return RetryOption(False)
        if seconds > self.max_wait:
            self.gave_up = "wait"
            return RetryOption(False)
        self.gave_up = None
        self.limit_waits += 1
        self.stats.retries += 1
        self.stats.waited_seconds += seconds
        message = f"GitHub {what}: waiting {seconds:.0f} s ({until})"
        self.stats.waits.append(message)
        self.notify(message, seconds)
        return RetryOption(True, timedelta(seconds=seconds))

    def _doubling_wait(self) -> float:
        return self.unnamed_wait * (2**self.limit_waits)


def _plain_rate_headers(response: httpx.Response) -> None:
    """Rewrite rate-limit headers githubkit would fail to read into ones it can:
    `Retry-After` may be an HTTP date (RFC 9110; proxies and GHES front-ends send
    one), which becomes seconds; a value that is neither is dropped (the policy
    then waits a minute), and so is an `x-ratelimit-reset` that is not a number."""
    value = response.headers.get("retry-after")
    if value is not None and not value.strip().isdigit():
        seconds = retry_after_seconds(value, time.time())
        if seconds is None:
            del response.headers["retry-after"]
        else:
            response.headers["retry-after"] = str(math.ceil(seconds))
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


def _is_unnamed_rate_limit(response: httpx.Response) -> bool:
    """A rate limit githubkit does not recognise (no Retry-After, no exhausted budget):
    any 429, or a 403 that says "secondary rate limit"."""
    if response.status_code == 429:
        return True
    return response.status_code == 403 and bool(SECONDARY_MESSAGE.search(response.text or ""))


def _unreachable(exc: GitHubException) -> bool:
    """Nothing answered the connection (refused, no route, no such host)."""
    return isinstance(getattr(exc, "exc", None), httpx.ConnectError)


def _proxy_refusal(exc: GitHubException) -> int | None:
    """The status with which an HTTPS proxy refused to connect to GitHub (407: it wants credentials)."""
    inner = getattr(exc, "exc", None)
    if not isinstance(inner, httpx.ProxyError):
        return None
    m = re.match(r"\s*(\d{3})\b", str(inner))
    return int(m.group(1)) if m else 0


def _describe_transport_error(exc: GitHubException) -> str:
    inner = getattr(exc, "exc", None)
    if isinstance(exc, RequestTimeout) or isinstance(inner, httpx.TimeoutException):
        return "timed out"
    dns = dns_failure(exc)
    if dns is not None:
        reason = dns.strerror or str(dns)
        return f"its host name could not be looked up: {reason}" if lookup_unavailable(dns) else f"its host name does not resolve: {reason}"
    if isinstance(inner, httpx.ProxyError):
        return f"the proxy refused to connect to it ({inner})"
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
        unnamed_wait: float = 60.0,
    ) -> None:
        self.api_url = normalize_api_url(api_url)
        self.token = token
        self.stats = RequestStats()
        self._on_wait = on_wait
        self.policy = RetryPolicy(
            self.stats, self._notify, max_retries=max_retries, backoff=backoff, max_wait=max_wait, unnamed_wait=unnamed_wait
        )
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
        self.policy.begin()
        while True:
            self._wait_for_budget()
            response, body = self._send("POST", self.graphql_url, json=payload)
            if not _is_graphql_answer(body):
                raise SourceError(
                    f"GitHub at {self.api_url} answered with JSON that is not a GraphQL response",
                    "check --github-url (GitHub Enterprise Server: https://HOST/api/v3); if it is right, "
                    "a proxy or GitHub itself is misbehaving: try again later (`repobrief sync` continues where it stopped)",
                )
            errors = body.get("errors") or []
            if any(e.get("type") in ("RATE_LIMITED", "RATE_LIMIT") for e in errors):
                reset = self._reset_in(response.headers)
                option = self.policy.rate_limited(reset + 1.0, "GraphQL rate limit exhausted", "the reset time")
                if not option.do_retry:
                    raise self._rate_limit_error()
                time.sleep(option.retry_after.total_seconds() if option.retry_after else 60)
                continue
            transient = next((e for e in errors if TRANSIENT_GRAPHQL.search(str(e.get("message", "")))), None)
            if transient is not None:
                # GitHub gave up on the query (a timeout on its side): retried like a 502
                option = self.policy.failed("GitHub could not finish the query in time")
                if not option.do_retry:
                    raise self._transient_error(transient)
                time.sleep(option.retry_after.total_seconds() if option.retry_after else 0)
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

    def rest(self, path: str, params: dict[str, Any] | None = None) -> Any:
        """GET one REST resource (`/repos/OWNER/NAME/…`), retried and rate-limited as
        GraphQL requests are; returns its JSON."""
        self.policy.begin()
        _, body = self._send("GET", path, params=params)
        self.stats.rest_calls += 1
        return body

    def _send(self, method: str, url: str, **kw: Any) -> tuple[Any, Any]:
        """One request (retried by the policy) and its JSON body; errors as `SourceError`s."""
        try:
            response = self._gh.request(method, url, **kw)
        except GitHubException as exc:
            raise self._error(exc) from None
        self._record_headers(response.headers)
        try:
            return response, response.raw_response.json()
        except ValueError:
            raise SourceError(
                f"GitHub at {self.api_url} answered with something that is not JSON",
                "check --github-url (GitHub Enterprise Server: https://HOST/api/v3)",
            ) from None

    # ------------------------------------------------------------------ rate limits

    def _record_headers(self, headers: httpx.Headers) -> None:
        if "x-oauth-scopes" in headers:
            self._scopes = headers["x-oauth-scopes"]
        # GraphQL's points only: a REST answer's headers count another budget ("core")
        if "x-ratelimit-remaining" in headers and headers.get("x-ratelimit-resource", "graphql") == "graphql":
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
        if self.policy.gave_up == "retries":
            return SourceError(
                f"GitHub at {self.api_url} still reports its rate limit exhausted after {self.policy.tries} tries "
                f"(it resets{when or ' later'})",
                "run again after the reset; `repobrief sync` continues where it stopped"
                f"{self._more_waits_hint()}",
            )
        return SourceError(
            f"GitHub's rate limit is exhausted and resets{when or ' later'}, beyond the longest wait ({self.max_wait:.0f} s)",
            "run again after the reset; `repobrief sync` continues where it stopped",
        )

    def _secondary_limit_error(self, what: str) -> SourceError:
        """A secondary (or unnamed) rate limit that was not waited out: why not, and what to do."""
        where = self.api_url
        hint = "wait a few minutes and run again (`repobrief sync` continues where it stopped); avoid running several syncs at once"
        if self.policy.gave_up == "wait":
            return SourceError(
                f"GitHub at {where} asks to wait {self.policy.asked_wait:.0f} s ({what}), beyond the longest wait "
                f"({self.max_wait:.0f} s, github.max_wait)",
                hint,
            )
        return SourceError(
            f"GitHub at {where} is still rate-limiting after {self.policy.tries} tries ({what}; "
            f"it last asked to wait {self.policy.asked_wait:.0f} s)",
            hint + self._more_waits_hint(),
        )

    def _more_waits_hint(self) -> str:
        return f"; github.max_retries ({self.policy.max_retries}) is how many rate-limit waits one request may take"

    # ------------------------------------------------------------------ errors

    def _error(self, exc: GitHubException) -> SourceError:
        where = self.api_url
        if isinstance(exc, SecondaryRateLimitExceeded):
            return self._secondary_limit_error("secondary rate limit")
        if isinstance(exc, RateLimitExceeded):
            self._record_headers(exc.response.headers)
            return self._rate_limit_error()
        if isinstance(exc, RequestFailed):
            status = exc.response.status_code
            # some proxies echo the request's headers, the token among them
            message = _scrub(_github_message(exc.response.raw_response), self.token.value)
            self._record_headers(exc.response.headers)
            if status == 401:
                raw = exc.response.raw_response
                if raw.history and raw.request.url.host != raw.history[0].request.url.host:
                    # httpx sends no token to another host: that host's 401 says nothing of the token
                    return SourceError(
                        f"GitHub at {where} redirected the request to {raw.request.url.scheme}://{raw.request.url.netloc.decode()}, "
                        "which answered 401; the token is not sent to another host",
                        "check --github-url (or github.url): give the API's own address, to which nothing redirects "
                        "(GitHub Enterprise Server: https://HOST/api/v3)",
                    )
                return SourceError(
                    f"GitHub at {where} rejected the token from {self.token.origin} (401 {message or 'Bad credentials'})",
                    f"the token is wrong, expired or revoked; {fix_hint(self.token.origin)}",
                )
            if _is_unnamed_rate_limit(exc.response.raw_response):
                reason = message or exc.response.reason_phrase or "Too Many Requests"
                return self._secondary_limit_error(f"{status} {reason}")
            if status == 400:
                return SourceError(
                    f"GitHub at {where} answered 400 {message or exc.response.reason_phrase or 'Bad Request'}".rstrip(),
                    "GitHub (or a proxy in between) could not read the request: check --github-url "
                    "(GitHub Enterprise Server: https://HOST/api/v3) and any HTTPS_PROXY setting; if both are right, "
                    "report it as a repobrief bug, with the command that failed",
                )
            if status == 407:
                return self._proxy_auth_error()
            if status == 403:
                return SourceError(
                    f"GitHub at {where} refused the request (403 {message or 'Forbidden'})",
                    _sso_hint(message) or self._scope_hint() or "the token lacks access to this repository or API; check its scopes and the organization's SSO authorization",
                )
            if status == 404:
                raw = exc.response.raw_response
                moved = f", redirected from {raw.history[0].request.url}" if raw.history else ""
                api = "GraphQL API" if raw.request.url.path.endswith("graphql") else "resource"
                return SourceError(
                    f"no GitHub {api} at {raw.request.url} (404{moved})",
                    "check --github-url; for GitHub Enterprise Server use https://HOST/api/v3",
                )
            if status in RETRYABLE_STATUS or status >= 500:
                failed = "kept failing" if self.policy.failures else "failed"
                return SourceError(
                    f"GitHub at {where} {failed} ({status} {exc.response.reason_phrase}){self._tries()}",
                    "GitHub may be having an outage; try again later (`repobrief sync` continues where it stopped)",
                )
            return SourceError(
                f"GitHub at {where} answered {status} {message or exc.response.reason_phrase}".rstrip(),
                "check --github-url (GitHub Enterprise Server: https://HOST/api/v3) and any proxy in between; "
                "if they are right, try again later",
            )
        if isinstance(exc, RequestError) and _proxy_refusal(exc) == 407:
            return self._proxy_auth_error()
        dns = dns_failure(exc) if isinstance(exc, RequestError) else None
        if dns is not None:
            host = urlsplit(where).hostname or where
            if lookup_unavailable(dns):
                return SourceError(
                    f"cannot reach GitHub at {where}: the host name {host} could not be looked up "
                    f"(no DNS server answered){self._tries()}",
                    "check the network connection and its DNS server, and the host name in --github-url",
                )
            return SourceError(
                f"cannot reach GitHub at {where}: the host name {host} does not resolve (no such name in DNS)",
                "check --github-url (or github.url in repobrief.toml) for a typo in the host name; "
                "GitHub Enterprise Server: https://HOST/api/v3",
            )
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

    def _proxy_auth_error(self) -> SourceError:
        return SourceError(
            f"a proxy between here and GitHub at {self.api_url} asks for its own credentials (407 Proxy Authentication Required)",
            "give the proxy's user and password in its URL (HTTPS_PROXY=http://USER:PASSWORD@PROXY:PORT), "
            "or ask the network's administrator; the GitHub token is not sent to the proxy",
        )

    def _tries(self) -> str:
        n = self.policy.tries
        return f", {n} tries" if n > 1 else ""

    def _transient_error(self, error: dict) -> SourceError:
        message = _scrub(str(error.get("message", "")), self.token.value)
        failed = "kept failing to answer" if self.policy.failures else "could not answer"
        return SourceError(
            f"GitHub at {self.api_url} {failed} the query in time ({message}){self._tries()}",
            "GitHub gives up on queries that take too long when it is busy; run `repobrief sync` again later "
            "(it continues where it stopped), or raise github.max_retries",
        )

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
                _sso_hint(first) or self._scope_hint()
                or "grant the token read access to the repository's pull requests (classic token: the 'repo' scope)",
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


def _sso_hint(message: str) -> str | None:
    """GitHub's answer for an organization that enforces SAML single sign-on ("Resource
    protected by organization SAML enforcement"): the token needs authorizing, not scopes."""
    if "saml" not in message.lower():
        return None
    return ("the organization requires SAML single sign-on: authorize the token for it (GitHub: Settings → "
            "Developer settings → Personal access tokens → Configure SSO → Authorize), or `gh auth refresh` for gh's")


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
