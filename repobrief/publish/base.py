"""The publisher base class: post one JSON body, check the answer, retry what is transient.

A platform module subclasses `Publisher` and implements `build(report, now)`,
which returns the request to send (URL with any query signature, body, headers);
answer checking has a default that fits every supported platform (HTTP status,
then the platform's success answer: a JSON `code` / `errcode` of 0, or Slack's
`ok`), with per-platform codes that mean "rate limited, try again" and hints for
the common refusals.
"""

from __future__ import annotations

import json
import logging
import time
import typing
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import ClassVar
from urllib.parse import urlsplit

import httpx

from ..config import webhook_url_problem
from ..errors import PublishError, UsageError
from ..models import Report

log = logging.getLogger("repobrief.publish")

# httpx logs every request with its full URL at INFO; a webhook URL carries the
# bot's token, so keep httpx's own request log out of any handler we configure.
logging.getLogger("httpx").setLevel(logging.WARNING)
logging.getLogger("httpcore").setLevel(logging.WARNING)

MAX_RETRY_AFTER = 30.0  # seconds; a longer Retry-After is not worth blocking a cron job for


def redact_url(url: str) -> str:
    """`https://open.feishu.cn/…`: the scheme and host, never the path or query (the token)."""
    try:
        parts = urlsplit(url)
        port = f":{parts.port}" if parts.port else ""
    except ValueError:
        return "<invalid URL>"
    if not parts.scheme or not parts.hostname:
        return "<invalid URL>"
    return f"{parts.scheme}://{parts.hostname}{port}/…"


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


class _Transient(Exception):
    def __init__(self, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class Publisher(ABC):
    """Posts a report's card to one webhook."""

    name: ClassVar[str]
    signs: ClassVar[bool] = False  # whether the platform has a signing secret
    transient_codes: ClassVar[frozenset[int]] = frozenset()  # answer codes meaning "rate limited"
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
    ) -> None:
        if not webhook:
            raise UsageError(f"no webhook URL for target {self.name!r}", "pass --webhook URL or set REPOBRIEF_PUBLISH_WEBHOOK")
        problem = webhook_url_problem(webhook)
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
                "drop --secret (or REPOBRIEF_PUBLISH_SECRET) for this target",
            )
        self.webhook = webhook
        self.secret = secret
        self.timeout = timeout
        self.retries = max(0, retries)
        self.backoff = backoff
        self._client = client
        self.clock = clock
        self.sleep = sleep

    @property
    def host(self) -> str:
        return redact_url(self.webhook)

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
            # Signed again on every attempt: platforms reject stale timestamps.
            out = self.build(report, self.clock())
            log.info("posting %s card to %s (attempt %d of %d)", self.name, self.host, attempt, attempts)
            try:
                response = client.post(
                    out.url, content=out.content(), headers={"Content-Type": "application/json; charset=utf-8", **out.headers}
                )
                self.check(response)
                return PublishResult(self.name, self.host, attempt, response.status_code)
            except _Transient as e:
                last, wait = str(e), e.retry_after
                hint = "the platform is down or rate-limiting; run publish again later"
            except httpx.TimeoutException:
                last, wait = f"no answer within {self.timeout:g} s", None
                hint = "the platform or the network is slow; try again later or raise --timeout"
            except httpx.TransportError as e:
                last, wait = f"cannot connect ({self._scrub(type(e).__name__ + ': ' + str(e))})", None
                hint = "check the webhook URL's host and this machine's network and proxy settings"
            except (UnicodeError, httpx.InvalidURL) as e:
                # A URL the checks above let through but the resolver refuses: not worth retrying.
                raise PublishError(
                    f"{self.name} webhook at {self.host}: the URL is invalid ({self._scrub(type(e).__name__ + ': ' + str(e))})",
                    "copy the whole URL from the bot's settings, starting with https://",
                ) from None
            if attempt < attempts:
                delay = min(MAX_RETRY_AFTER, wait) if wait is not None else self.backoff * 2 ** (attempt - 1)
                log.warning("%s at %s: %s; retrying in %.1f s", self.name, self.host, last, delay)
                self.sleep(delay)
        raise PublishError(
            f"{self.name} webhook at {self.host} failed after {attempts} attempt(s): {last}", hint
        )

    def check(self, response: httpx.Response) -> None:
        """Raise `PublishError` (or retry, for transient answers) unless the platform accepted the message."""
        status = response.status_code
        if status == 429 or status >= 500:
            raise _Transient(f"HTTP {status} {self._answer_text(response)}".rstrip(), _retry_after(response))
        if not 200 <= status < 300:
            raise PublishError(
                f"{self.name} webhook at {self.host} refused the message: HTTP {status} {self._answer_text(response)}".rstrip(),
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
            f"{self.name} webhook at {self.host} refused the message: {text}",
            self.hints.get(code_int) if code_int is not None else None,
        )

    def _unconfirmed(self, response: httpx.Response, expected: str) -> typing.NoReturn:
        raise PublishError(
            f"{self.name} webhook at {self.host} did not confirm the message: HTTP {response.status_code} "
            f"{self._answer_text(response) or '(empty answer)'}",
            f"{self.name} answers {expected} when it posts; check that the webhook URL is the bot's "
            "(not a proxy or a web page) and whether the card arrived",
        )

    def _hint_for_status(self, status: int) -> str | None:
        if status in (401, 403, 404):
            return "check the webhook URL (the bot may have been removed) and the secret"
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


def _retry_after(response: httpx.Response) -> float | None:
    value = response.headers.get("Retry-After")
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None
