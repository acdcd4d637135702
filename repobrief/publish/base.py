"""The publisher base class: post one JSON body, check the answer, retry what is transient.

A platform module subclasses `Publisher` and implements `build(report, now)`,
which returns the request to send (URL with any query signature, body, headers);
answer checking has a default that fits every supported platform (HTTP status,
then the platform's success answer: a JSON `code` / `errcode` of 0, or Slack's
`ok`), with per-platform codes that mean "rate limited, try again" and hints for
the common refusals.

A retry must never post the card twice, so only what certainly did not post it
is retried: a connection that failed before the whole request was sent, or an
answer saying the message was not taken for now (429, 5xx, a rate-limit code).
A request sent whole and left unanswered (a read timeout, a connection closed
after sending) may have posted the card; that is said, and not retried. Whether
the request went out whole is read from httpcore's trace events.
"""

from __future__ import annotations

import json
import logging
import math
import time
import typing
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import ClassVar
from urllib.parse import urljoin, urlsplit

import httpx

from ..config import http_url_problem
from ..errors import PublishError, UsageError
from ..models import Report
from ..netcause import dns_failure, lookup_unavailable
from ..retry_after import retry_after_seconds
from .pacing import Window, take_slot

log = logging.getLogger("repobrief.publish")

# httpx logs every request with its full URL at INFO; a webhook URL carries the
# bot's token, so keep httpx's own request log out of any handler we configure.
logging.getLogger("httpx").setLevel(logging.WARNING)
logging.getLogger("httpcore").setLevel(logging.WARNING)

MAX_RETRY_AFTER = 30.0  # seconds; a longer Retry-After is not worth blocking a cron job for

# How far a card got, as `Delivery.state`.
NOT_POSTED = "not posted"
MAY_HAVE_BEEN_POSTED = "may have been posted"
POSTED = "posted"

CHECK_BEFORE_POSTING_AGAIN = "check the chat before running publish again: posting again may post the card twice"


def redact_url(url: str) -> str:
    """`https://open.feishu.cn/…`: the scheme and host, never the path or query (the token)."""
    try:
        parts = urlsplit(url)
        port = f":{parts.port}" if parts.port else ""
    except ValueError:
        return "<invalid URL>"
    if not parts.scheme or not parts.hostname:
        return "<invalid URL>"
    host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
    return f"{parts.scheme}://{host}{port}/…"


@dataclass
class Outgoing:
    """One request to send: the URL (signature in its query when the platform wants it), body, headers."""

    url: httpx.URL
    body: dict
    headers: dict[str, str] = field(default_factory=dict)

    def content(self) -> bytes:
        return json.dumps(self.body, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


@dataclass
class PublishResult:
    target: str
    host: str
    attempts: int
    status: int


@dataclass
class Delivery:
    """How far the card got, kept current while a publisher sends: a caller stopped by
    Ctrl-C or SIGTERM part way says whether the card was posted, not, or may have been."""

    state: str = NOT_POSTED


class _Transient(Exception):
    def __init__(self, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class _RequestTrace:
    """Follows one request through httpcore's trace events (the `trace` request extension):
    whether the card's bytes started to go out, and whether sending them failed."""

    def __init__(self, delivery: Delivery) -> None:
        self.delivery = delivery
        self.traced = False
        self.body_started = False
        self.write_failed = False

    def __call__(self, event: str, info: dict) -> None:
        request = info.get("request")
        if request is not None and getattr(request, "method", None) == b"CONNECT":
            return  # a proxy's tunnel being set up (it shares our request's trace), not the card
        self.traced = True
        step = event.partition(".")[2]  # "http11.send_request_body.started" -> "send_request_body.started"
        if step == "send_request_body.started":
            self.body_started = True
            self.delivery.state = MAY_HAVE_BEEN_POSTED
        elif step in ("send_request_headers.failed", "send_request_body.failed") and isinstance(info.get("exception"), Exception):
            # The request did not go out whole (httpcore goes on to read an answer anyway):
            # the platform cannot have taken a card it did not get. An interrupt is not
            # such a failure: the bytes may all be out by the time it arrives.
            self.write_failed = True
            self.delivery.state = NOT_POSTED

    def may_have_arrived(self, error: httpx.TransportError) -> bool:
        """Whether the card may have reached the platform, given the error that ended the request."""
        if isinstance(error, (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout, httpx.ProxyError,
                              httpx.UnsupportedProtocol)):
            return False  # raised only while connecting, before a byte of the request
        if self.traced:
            return self.body_started and not self.write_failed
        # A transport that does not trace (a test's, a custom one): judge by the error alone.
        return not isinstance(error, (httpx.WriteError, httpx.WriteTimeout))


class Publisher(ABC):
    """Posts a report's card to one webhook."""

    name: ClassVar[str]
    signs: ClassVar[bool] = False  # whether the platform has a signing secret
    transient_codes: ClassVar[frozenset[int]] = frozenset()  # answer codes meaning "rate limited"
    # The platform's limits for one robot, (posts, seconds) each, kept by waiting (`pacing`),
    # and how the wait is explained.
    pace: ClassVar[tuple[Window, ...]] = ()
    pace_why: ClassVar[str] = ""
    hints: ClassVar[dict[int, str]] = {}  # answer code -> what the user should check
    # The keys of the platform's JSON answer holding its result code (0 = posted), or
    # () when the answer is not JSON (Slack, an arbitrary webhook receiver).
    code_keys: ClassVar[tuple[str, ...]] = ()
    # A text answer that alone means "posted" (Slack's `ok`); None: any 2xx answer
    # without a code is taken (the generic webhook: a receiver's own vocabulary).
    ok_text: ClassVar[str | None] = None

    def __init__(
        self,
        webhook: str,
        secret: str = "",
        *,
        timeout: float = 10.0,
        retries: int = 3,
        backoff: float = 1.0,
        client: httpx.Client | None = None,
        clock: Callable[[], float] = time.time,
        sleep: Callable[[float], None] = time.sleep,
        delivery: Delivery | None = None,
    ) -> None:
        if not webhook:
            raise UsageError(f"no webhook URL for target {self.name!r}", "pass --webhook URL or set REPOBRIEF_PUBLISH_WEBHOOK")
        problem = http_url_problem(webhook)
        if not problem:
            try:
                httpx.URL(webhook)
            except (UnicodeError, ValueError, httpx.InvalidURL):
                problem = "is not an http(s) URL"
        if problem:
            raise UsageError(
                f"the webhook URL for target {self.name!r} {problem}",
                "copy the whole URL from the bot's settings, starting with https://",
            )
        if secret and not self.signs:
            raise UsageError(
                f"target {self.name!r} has no signing secret; its webhook URL is the secret",
                "drop --secret for this target (REPOBRIEF_PUBLISH_SECRET goes only to the targets that sign)",
            )
        self.webhook = webhook
        self.secret = secret
        self.timeout = timeout
        self.retries = max(0, retries)
        self.backoff = backoff
        self._client = client
        self.clock = clock
        self.sleep = sleep
        self.delivery = delivery if delivery is not None else Delivery()

    @property
    def host(self) -> str:
        return redact_url(self.webhook)

    @property
    def label(self) -> str:
        """How errors name the target: `feishu webhook at https://open.feishu.cn/…`."""
        return f"webhook at {self.host}" if self.name == "webhook" else f"{self.name} webhook at {self.host}"

    @abstractmethod
    def build(self, report: Report, now: float) -> Outgoing:
        """The request that posts `report`'s card, signed for time `now` (seconds since the epoch)."""

    # ----------------------------------------------------------------- sending

    def send(self, report: Report) -> PublishResult:
        client = self._client or httpx.Client(timeout=self.timeout, follow_redirects=False)
        try:
            return self._send(report, client)
        finally:
            if self._client is None:
                client.close()

    def _send(self, report: Report, client: httpx.Client) -> PublishResult:
        attempts = self.retries + 1
        last, hint = "", ""
        for attempt in range(1, attempts + 1):
            take_slot(self.webhook, self.pace, clock=self.clock, sleep=self.sleep, why=f"{self.label}: {self.pace_why}")
            # Signed again on every attempt (after any wait): platforms reject stale timestamps.
            out = self.build(report, self.clock())
            log.info("posting %s card to %s (attempt %d of %d)", self.name, self.host, attempt, attempts)
            self.delivery.state = NOT_POSTED
            trace = _RequestTrace(self.delivery)
            retry = True
            try:
                response = client.post(
                    out.url,
                    content=out.content(),
                    headers={"Content-Type": "application/json; charset=utf-8", **out.headers},
                    extensions={"trace": trace},
                )
            except (UnicodeError, httpx.InvalidURL) as e:
                # A URL the checks above let through but the resolver refuses: not worth retrying.
                raise PublishError(
                    f"{self.label}: the URL is invalid ({self._scrub(type(e).__name__ + ': ' + str(e))})",
                    "copy the whole URL from the bot's settings, starting with https://",
                ) from None
            except httpx.TransportError as e:
                if trace.may_have_arrived(e):
                    self.delivery.state = MAY_HAVE_BEEN_POSTED
                    raise self._unanswered(e, attempt) from None
                self.delivery.state = NOT_POSTED
                last, hint, retry = self._not_sent(e, attempt)
                wait = None
            else:
                self.delivery.state = MAY_HAVE_BEEN_POSTED  # answered: being read
                try:
                    self.check(response)
                except _Transient as e:
                    # The platform said it did not take the message, for now.
                    self.delivery.state = NOT_POSTED
                    last, wait = str(e), e.retry_after
                    hint = "the platform is down or rate-limiting; run publish again later"
                    if wait is not None and wait > MAX_RETRY_AFTER:
                        raise PublishError(
                            f"{self.label} asks to wait {math.ceil(wait)} s before posting again ({last}); "
                            "the card was not posted",
                            f"that is longer than publish waits ({MAX_RETRY_AFTER:g} s): run `repobrief publish` "
                            "again later",
                        ) from None
                else:
                    self.delivery.state = POSTED
                    return PublishResult(self.name, self.host, attempt, response.status_code)
            if not retry:
                break
            if attempt < attempts:
                delay = wait if wait is not None else self.backoff * 2 ** (attempt - 1)
                log.warning("%s: %s; retrying in %.1f s", self.label, last, delay)
                self.sleep(delay)
        else:
            raise PublishError(f"{self.label} failed after {attempts} attempt(s): {last}", hint)
        raise PublishError(f"{self.label}: {last}", hint)

    def _not_sent(self, error: httpx.TransportError, attempt: int) -> tuple[str, str, bool]:
        """A request that failed before the card went out whole: (what happened, hint, worth retrying)."""
        cause = _root_cause(error)
        network = "check this machine's network and proxy settings"
        dns = dns_failure(error)
        if dns is not None:
            name = urlsplit(self.webhook).hostname
            if lookup_unavailable(dns):
                # The resolver's own "try again": once, not at every retry's length of backoff.
                return (f"cannot look up the host name {name!r} ({dns.strerror})",
                        f"{network}, and its DNS server", attempt == 1)
            return (f"the host name {name!r} does not resolve ({dns.strerror}); the card was not posted",
                    "check the webhook URL's host for a typo: copy the URL from the bot's settings", False)
        if isinstance(error, httpx.ConnectTimeout):
            return (f"cannot connect: no connection within {self.timeout:g} s",
                    f"check the webhook URL's host and {network}, or raise --timeout", True)
        if isinstance(error, httpx.ProxyError):
            return f"the proxy failed ({self._describe(error)})", network, True
        if isinstance(error, httpx.ConnectError):
            reason = cause.strerror if isinstance(cause, OSError) and cause.strerror else self._describe(error)
            return f"cannot connect ({self._scrub(reason)})", f"check the webhook URL's host and {network}", True
        return (f"the connection failed before the card was sent whole ({self._describe(error)})",
                network, True)

    def _unanswered(self, error: httpx.TransportError, attempt: int) -> PublishError:
        """The card went out whole and no answer came: it may have been posted; not retried."""
        tries = f" (attempt {attempt})" if attempt > 1 else ""
        if isinstance(error, httpx.TimeoutException):
            what = f"no answer within {self.timeout:g} s after the card was sent{tries}"
            hint = f"{CHECK_BEFORE_POSTING_AGAIN}; if the platform is slow, raise --timeout"
        else:
            what = f"the connection was closed after the card was sent, without an answer{tries} ({self._describe(error)})"
            hint = CHECK_BEFORE_POSTING_AGAIN
        return PublishError(f"{self.label}: {what}; the card may or may not have been posted", hint)

    def _describe(self, error: Exception) -> str:
        return self._scrub(f"{type(error).__name__}: {error}")

    def check(self, response: httpx.Response) -> None:
        """Raise `PublishError` (or retry, for transient answers) unless the platform accepted the message."""
        status = response.status_code
        if status == 429 or status >= 500:
            raise _Transient(f"HTTP {status} {self._answer_text(response)}".rstrip(), _retry_after(response, self.clock()))
        if 300 <= status < 400:
            self._redirected(response)
        if not 200 <= status < 300:
            raise PublishError(
                f"{self.label} refused the message: HTTP {status} {self._answer_text(response)}".rstrip(),
                self._hint_for_status(status),
            )
        if self.ok_text is not None:
            if response.text.strip() != self.ok_text:
                self._unconfirmed(response, repr(self.ok_text))
            return
        if not self.code_keys:
            return
        try:
            answer = response.json()
        except ValueError:
            answer = None
        if not isinstance(answer, dict) or not any(k in answer for k in self.code_keys):
            # A 200 from something that is not the platform (a proxy, a login page, a
            # mistyped host that answers anything) says nothing about the message.
            self._unconfirmed(response, f'{{"{self.code_keys[0]}": 0}}')
        code = next(answer[k] for k in self.code_keys if k in answer)
        if code in (0, "0"):
            return
        message = answer.get("msg") or answer.get("errmsg") or answer.get("StatusMessage") or ""
        text = f"code {code}: {self._scrub(str(message))[:200]}"
        try:
            code_int = int(code)
        except (TypeError, ValueError):
            code_int = None
        if code_int in self.transient_codes:
            raise _Transient(text)
        raise PublishError(
            f"{self.label} refused the message: {text}",
            self.hints.get(code_int) if code_int is not None else None,
        )

    def _redirected(self, response: httpx.Response) -> typing.NoReturn:
        # Redirects are not followed: a POST redirected may arrive as a GET, without the card.
        location = response.headers.get("Location")
        to = redact_url(urljoin(self.webhook, location)) if location else ""
        hint = "the webhook URL redirects: copy the URL from the bot's settings again"
        if to.startswith("https://") and self.webhook.lower().startswith("http://"):
            hint += ", with https:// (not http://)"
        else:
            hint += " (check http:// vs https:// and the host)"
        raise PublishError(
            f"{self.label} did not take the message: HTTP {response.status_code}, "
            + (f"a redirect to {to}" if to else "a redirect"),
            hint,
        )

    def _unconfirmed(self, response: httpx.Response, expected: str) -> typing.NoReturn:
        raise PublishError(
            f"{self.label} did not confirm the message: HTTP {response.status_code} "
            f"{self._answer_text(response) or '(empty answer)'}",
            f"{self.name} answers {expected} when it posts; check that the webhook URL is the bot's "
            "(not a proxy or a web page) and whether the card arrived",
        )

    def _hint_for_status(self, status: int) -> str | None:
        if status in (404, 410):
            return "check the webhook URL: the bot may have been removed; copy the URL again from the bot's settings"
        if status in (401, 403):
            if self.signs:
                return "check the webhook URL (the bot may have been removed) and the secret"
            return ("check the webhook URL: it is the bot's only credential, and it is refused once the bot is "
                    "removed or the URL revoked; copy it again from the bot's settings")
        if status == 400:
            return "the platform rejected the payload; run `repobrief report … --format " + self.name + "` to inspect it"
        return None

    def _answer_text(self, response: httpx.Response) -> str:
        return self._scrub(" ".join(response.text.split()))[:200]

    def _scrub(self, text: str) -> str:
        """Remove the secret and the webhook's path/query from text that may end up in an error."""
        for token in {self.secret, self.webhook, *_url_tokens(self.webhook)}:
            if token and len(token) >= 4:
                text = text.replace(token, "***")
        return text


def _url_tokens(url: str) -> list[str]:
    parts = urlsplit(url)
    tokens = [parts.path, parts.query] + [p for p in parts.path.split("/") if len(p) >= 8]
    tokens += [kv.partition("=")[2] for kv in parts.query.split("&")]
    return [t for t in tokens if t and t != "/"]


def _root_cause(error: BaseException) -> BaseException:
    """The OS error under httpx's and httpcore's wrappers (a refused connection, an unreachable network)."""
    seen = {id(error)}
    while (inner := error.__cause__ or error.__context__) is not None and id(inner) not in seen:
        seen.add(id(inner))
        error = inner
    return error


def _retry_after(response: httpx.Response, now: float) -> float | None:
    """Seconds the answer asks to wait (`Retry-After`); None without one."""
    return retry_after_seconds(response.headers.get("Retry-After"), now)
