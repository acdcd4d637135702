"""A chat client for any OpenAI-compatible endpoint, with what a report run needs
around it: the response cache in the store, bounded concurrency, retries with
backoff that honour `Retry-After`, a per-request timeout and an overall budget,
a circuit breaker for an endpoint that went down, and token accounting.

The `openai` SDK is imported only when a request must actually be sent, so a
fully cached re-run does not pay for importing it; a run that will certainly send
requests starts the import early, in the background (`preload_sdk`).
"""

from __future__ import annotations

import asyncio
import json
import random
import re
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from ..config import MODEL_SETTING, LLMSettings
from ..errors import EngineError, StoreError
from ..netcause import dns_failure, lookup_unavailable
from ..retry_after import retry_after_seconds

#: providers that reject `response_format: json_schema` (they take `json_object`)
_JSON_OBJECT_PROVIDERS = ("deepseek", "moonshot", "bigmodel", "zhipu", "glm-", "kimi")

MAX_ATTEMPTS = 4  # one request plus three retries on 429 / 5xx / timeouts
BACKOFF_BASE = 0.5
BACKOFF_CAP = 20.0
# Retries that could not reach the endpoint, one after another with no answer in between,
# before it is taken as down. First attempts do not count: a proxy that drops idle
# connections fails many concurrent first attempts whose retries all succeed.
BREAKER_THRESHOLD = 3
# The least time a request is started with before the budget's end, while no answer has
# shown how long answers take (after that: the typical answer time so far).
MIN_REQUEST_SECONDS = 0.25
LATENCY_MARGIN = 1.25


#: When set, a callable `(LLMSettings) -> client` whose client has the `AsyncOpenAI` shape used
#: here (`chat.completions.create(**request, timeout=…)`, `close()`). A cluster executor sets
#: it in its workers so that every request goes through one shared, bounded endpoint pool
#: (`repobrief.executors_ray`); the cache, retries and accounting here stay as they are.
CLIENT_FACTORY: Callable[[LLMSettings], Any] | None = None


def preload_sdk() -> None:
    """Start importing the `openai` SDK in a background thread.

    The import costs about a second of CPU; started before the source is read, it
    overlaps the time spent waiting on git. Only for runs that will send requests
    (`--refresh`, a new store): in a cached re-run it would only compete with the
    report's own work. A later `import openai` waits for this one to finish."""
    if CLIENT_FACTORY is None and "openai" not in sys.modules:
        threading.Thread(target=_import_sdk, name="repobrief-openai-import", daemon=True).start()


def _import_sdk() -> None:
    try:
        import openai  # noqa: F401
    except Exception:  # noqa: BLE001 - the import is repeated, and its error reported, where it is needed
        pass


class UnitFailed(Exception):
    """A request for one unit failed for good (after retries); the unit falls back.

    `kind` says why, for the reader's warning: `unreachable`, `budget` (the run's time
    budget), `rate_limited` (the endpoint asked to wait longer than the budget allows),
    `not_json` (the endpoint's answer is not a chat completion) or `error`."""

    def __init__(self, reason: str, kind: str = "error") -> None:
        super().__init__(reason)
        self.reason = reason
        self.kind = kind


@dataclass
class EndpointState:
    """What a report's requests have learnt about the endpoint, shared by the clients of
    its PR analyses and of its composition."""

    down: str | None = None  # why the endpoint is taken as down: the remaining units fall back at once
    blocked: str | None = None  # it asked to wait beyond the budget: the remaining units fall back at once
    blocked_kind: str = "rate_limited"
    failed_retries: int = 0  # retries that could not connect, one after another, with no answer between
    latencies: list[float] = field(default_factory=list)  # seconds each answer took

    def typical_latency(self) -> float:
        """How long an answer takes, from the recent ones (0 before the first)."""
        recent = sorted(self.latencies[-16:])
        return recent[len(recent) // 2] if recent else 0.0


@dataclass
class Accounting:
    model: str = ""
    requests: int = 0  # HTTP requests that reached the endpoint, retries and re-asks included
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cache_hits: int = 0
    retries: int = 0  # transport retries sent (429, 5xx, timeouts, dropped connections)
    repair_retries: int = 0  # re-asks sent after invalid or ungrounded answers (not those the cache answered)
    connection_failures: int = 0  # attempts that could not connect (not requests: nothing was sent)
    fallbacks: list[dict] = field(default_factory=list)
    prompt_tokens_estimated: int = 0  # our own count of what we sent or would send
    cached_prompt_tokens: int = 0  # tokens the cache saved
    cached_completion_tokens: int = 0


# where the model is set, in every command's terms (`report` and `batch export` also take a flag)


def choose_mode(settings: LLMSettings) -> str:
    """`json_schema` unless the config says otherwise or the provider only takes `json_object`."""
    mode = (settings.response_format or "auto").lower()
    if mode != "auto":
        return mode
    where = f"{settings.base_url} {settings.model}".lower()
    return "json_object" if any(p in where for p in _JSON_OBJECT_PROVIDERS) else "json_schema"


# The request field that caps an answer's tokens: OpenAI's own API wants
# `max_completion_tokens` (its reasoning models reject `max_tokens`); the servers that
# speak its protocol (vLLM, Ollama, DeepSeek, Qwen, …) all take `max_tokens`. An
# endpoint that rejects the one sent is asked with the other (`ChatClient._send`).
TOKEN_FIELDS = ("max_tokens", "max_completion_tokens")


def token_field(settings: LLMSettings) -> str:
    host = (urlsplit(settings.base_url).hostname or "") if settings.base_url else "api.openai.com"
    return "max_completion_tokens" if host == "api.openai.com" else "max_tokens"


def chat_request(
    settings: LLMSettings, mode: str, messages: list[dict], schema_name: str, schema: dict, *, temperature: bool = True
) -> dict:
    """The chat-completions request body for `messages` in response-format `mode`.

    With `mode=choose_mode(settings)` and `temperature=True` it is the canonical
    request: the first one a run sends, and the input of the unit's cache key
    (what `repobrief.batch` exports, so that a batch answer lands on that key)."""
    req: dict[str, Any] = {"model": settings.model, "messages": messages}
    if temperature:
        req["temperature"] = 0
    if settings.max_output_tokens:
        req[token_field(settings)] = settings.max_output_tokens
    if mode == "json_schema":
        req["response_format"] = {
            "type": "json_schema",
            "json_schema": {"name": schema_name, "schema": schema, "strict": False},
        }
    elif mode == "json_object":
        req["response_format"] = {"type": "json_object"}
    elif mode == "tools":
        req["tools"] = [
            {"type": "function", "function": {"name": schema_name, "description": "Submit the answer.", "parameters": schema}}
        ]
        req["tool_choice"] = {"type": "function", "function": {"name": schema_name}}
    return req


def _rejects_field(message: str, field: str) -> bool:
    """A 400's (lower-cased) message says the request field `field` is not taken
    ("Unsupported parameter: 'max_tokens' is not supported with this model"), rather
    than that its value is out of range."""
    if not re.search(rf"(?<![a-z_]){field}(?![a-z_])", message):
        return False
    return any(w in message for w in ("unsupported", "not supported", "unrecognized", "unknown", "extra", "not permitted"))


def estimate_tokens(text: str) -> int:
    """A tokenizer-free estimate: ~4 characters per token for Latin text, ~1 per CJK character."""
    cjk = len(re.findall(r"[\u3000-\u9fff\uac00-\ud7af\uff00-\uffef]", text))
    return cjk + (len(text) - cjk + 3) // 4


def public_endpoint(base_url: str) -> str:
    """The endpoint as it may be shown: no user:password, no query string (some put keys there)."""
    from ..store import mask_url

    return mask_url((base_url or "https://api.openai.com/v1").split("?", 1)[0])


def redact(text: str, secret: str) -> str:
    if secret and len(secret) >= 4:
        text = text.replace(secret, "***")
    return re.sub(r"\b(sk-[A-Za-z0-9_-]{2})[A-Za-z0-9_-]{6,}", r"\1***", text)


def _retry_after(exc: Any) -> float | None:
    """Seconds from a `Retry-After` (or `retry-after-ms`) header, if the server sent one."""
    resp = getattr(exc, "response", None)
    headers = getattr(resp, "headers", None)
    if headers is None:
        return None
    ms = headers.get("retry-after-ms")
    if ms:
        try:
            return max(0.0, float(ms) / 1000)
        except ValueError:
            pass
    return retry_after_seconds(headers.get("retry-after"), time.time())


def _sends_schema(req: dict) -> bool:
    return (req.get("response_format") or {}).get("type") == "json_schema"


def _as_json_object(req: dict) -> dict:
    """`req` in json_object mode, for a server that rejects json_schema."""
    return {**req, "response_format": {"type": "json_object"}}


def _reached(e: BaseException) -> bool:
    """Whether a failed attempt reached the endpoint (a request was sent): not when the
    connection could not be made."""
    seen: BaseException | None = e.__cause__ or e.__context__
    while seen is not None:
        if type(seen).__name__ in ("ConnectError", "ConnectTimeout"):
            return False
        seen = seen.__cause__ or seen.__context__
    import openai

    # an APIConnectionError with no cause (a pool that found no endpoint) sent nothing here
    return not (isinstance(e, openai.APIConnectionError) and not isinstance(e, openai.APITimeoutError) and e.__cause__ is None)


def _describe_body(body: str) -> str:
    text = (body or "").lstrip("\ufeff \t\r\n")
    if text[:1] == "<" or "<html" in text[:500].lower():
        return "an HTML page"
    return f"text starting {text[:60]!r}" if text else "an empty body"


class ChatClient:
    """One run's connection to the endpoint. Create it inside the event loop that uses it."""

    def __init__(
        self,
        settings: LLMSettings,
        *,
        store=None,
        refresh: bool = False,
        prompt_version: str,
        accounting: Accounting,
        deadline: float,
        state: EndpointState | None = None,
    ) -> None:
        self.settings = settings
        self.store = store
        self.refresh = refresh
        self.prompt_version = prompt_version
        self.acct = accounting
        self.deadline = deadline
        self.state = state if state is not None else EndpointState()
        self.mode = choose_mode(settings)
        self.initial_mode = self.mode
        self._temperature = True  # dropped for models that refuse it (reasoning models)
        self._token_field: str | None = None  # the other one, once the endpoint rejected the first
        self._sem = asyncio.Semaphore(max(1, settings.concurrency))
        self._client = None
        self.fatal: EngineError | None = None

    # ------------------------------------------------------------- the request

    def _request(self, messages: list[dict], schema_name: str, schema: dict, *, canonical: bool = False) -> dict:
        """The request body. `canonical=True` gives the cache key's input: the body as
        the settings ask for it, before this run adapted to the server (a mode switch,
        a dropped temperature, the other token field), so that the key is the same in every run."""
        mode = self.initial_mode if canonical else self.mode
        req = chat_request(self.settings, mode, messages, schema_name, schema, temperature=canonical or self._temperature)
        return req if canonical else self._with_token_field(req)

    def _with_token_field(self, req: dict) -> dict:
        """`req` with its token cap under the field this endpoint takes (see TOKEN_FIELDS)."""
        if self._token_field is None or self._token_field in req:
            return req
        out = {k: v for k, v in req.items() if k not in TOKEN_FIELDS}
        out[self._token_field] = self.settings.max_output_tokens
        return out

    async def complete(
        self,
        messages: list[dict],
        schema_name: str,
        schema: dict,
        info: dict | None = None,
        *,
        fresh: bool = False,
        keep: list | None = None,
        repair: bool = False,
    ) -> str:
        """The answer's text (tool-call arguments in `tools` mode), from the cache or the
        endpoint; `info["cached"]` tells which.

        `fresh=True` asks the endpoint even when the cache has an answer (one that failed
        the checks is not replayed). With a `keep` list, a new answer is not cached yet
        but added to it: `remember(keep)` caches the answers of a unit that passed its
        checks, so that an answer that did not is asked again in the next run. `repair`
        marks a re-ask after an invalid or ungrounded answer (for the accounting)."""
        if info is not None:
            info["cached"] = False
        if self.fatal is not None:
            raise self.fatal
        req = self._request(messages, schema_name, schema)
        canonical = self._request(messages, schema_name, schema, canonical=True)
        sent_tokens = estimate_tokens(json.dumps(messages, ensure_ascii=False))
        self.acct.prompt_tokens_estimated += sent_tokens
        key = None
        if self.store is not None:
            from ..store import cache_key

            key = cache_key(self.settings.model, self.prompt_version, canonical)
            if not (self.refresh or fresh):
                try:
                    hit = self.store.cache_get(key)
                except StoreError as e:  # a broken cache costs a request, not the unit
                    self._cache_problem(e)
                    hit = None
                if hit is not None:
                    self.acct.cache_hits += 1
                    self.acct.cached_prompt_tokens += hit.prompt_tokens
                    self.acct.cached_completion_tokens += hit.completion_tokens
                    if info is not None:
                        info["cached"] = True
                    return hit.response
        text, pt, ct = await self._send(req, sent_tokens, repair=repair)
        if self.store is not None and key is not None:
            entry = (key, text, pt, ct)
            if keep is not None:
                keep.append(entry)
            else:
                self.remember([entry])
        return text

    def remember(self, entries: list) -> None:
        """Cache answers held back by `complete(keep=…)`."""
        if self.store is None:
            return
        for key, text, pt, ct in entries:
            try:
                self.store.cache_put(
                    key, model=self.settings.model, prompt_version=self.prompt_version, response=text,
                    prompt_tokens=pt, completion_tokens=ct,
                )
            except StoreError as e:
                self._cache_problem(e)
                return

    def _cache_problem(self, e: Exception) -> None:
        if not any(f["unit"] == "cache" for f in self.acct.fallbacks):
            self.acct.fallbacks.append({"unit": "cache", "reason": f"the response cache is not usable: {e}".splitlines()[0]})

    def _get_client(self):
        if self._client is None and CLIENT_FACTORY is not None:
            self._client = CLIENT_FACTORY(self.settings)
        if self._client is None:
            from openai import AsyncOpenAI

            self._client = AsyncOpenAI(
                api_key=self.settings.api_key or "not-needed",
                base_url=self.settings.base_url or None,
                max_retries=0,  # retries are ours: they honour Retry-After and the budget
                timeout=self.settings.timeout,
            )
        return self._client

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.close()
            self._client = None

    # ------------------------------------------------------------- sending

    def _check_open(self) -> None:
        """Fail at once when the run is stopped (a refused key, an unknown model: requests
        waiting for a slot are not sent), the endpoint is taken as down, or it asked to
        wait beyond the budget."""
        if self.fatal is not None:
            raise self.fatal
        if self.state.down:
            raise UnitFailed(self.state.down, "unreachable")
        if self.state.blocked:
            raise UnitFailed(self.state.blocked, self.state.blocked_kind)

    def _budget(self) -> str:
        return f"time budget of {self.settings.budget_seconds:g}s"

    def _needed(self) -> float:
        """The least time left in the budget for a request to be worth starting: the
        typical answer time so far, with a margin for a slower one."""
        return min(self.settings.timeout, max(MIN_REQUEST_SECONDS, LATENCY_MARGIN * self.state.typical_latency()))

    def _check_budget(self, after: str | None) -> float:
        """The time left in the budget; UnitFailed when too little is left to start a request."""
        left = self.deadline - time.monotonic()
        need = self._needed()
        if left < need:
            why = f"{max(0.0, left):.1f}s left, less than a request needs (about {need:.1f}s)" if left > 0 else "no time left"
            raise UnitFailed(f"{self._budget()} used up: {why}" + (f"; the attempt before: {after}" if after else ""), "budget")
        return left

    def _not_json(self, body: str | None, *, said: str = "did not return JSON") -> None:
        """The endpoint answered 200 with something that is not a chat completion: with no
        answer received yet it is not the API (a web page at the base URL), else one unit fails."""
        what = _describe_body(body) if body is not None else "no choices"
        reason = f"the endpoint {said} ({what}: is the base URL the API's, ending in /v1?)"
        if not self.state.latencies:  # no answer received yet
            self.fatal = EngineError(
                f"the LLM endpoint {self._where()} {said} ({what})",
                "set OPENAI_BASE_URL / REPOBRIEF_LLM_BASE_URL (or [llm] base_url) to the API's URL, which usually ends "
                "in /v1 (e.g. http://127.0.0.1:8000/v1); or run with --engine offline",
            )
            raise self.fatal from None
        raise UnitFailed(reason, "not_json") from None

    async def _send(self, req: dict, sent_tokens: int, *, repair: bool = False) -> tuple[str, int, int]:
        import openai

        self._check_open()
        client = self._get_client()
        last: str | None = None  # what went wrong in the attempt before
        kind = "error"
        retrying = False  # the next attempt is a transport retry (not a re-send after a 400 we adapted to)
        repair_counted = False
        for attempt in range(MAX_ATTEMPTS):
            self._check_budget(last)
            wait: float | None = None
            sent = False
            try:
                async with self._sem:
                    self._check_open()
                    left = self._check_budget(last)  # the wait for a slot may have been long
                    if self.mode == "json_object" and _sends_schema(req):  # built before the switch
                        req = _as_json_object(req)
                    timeout = min(self.settings.timeout, left)
                    started = time.monotonic()
                    try:
                        resp = await client.chat.completions.create(**req, timeout=timeout)
                        sent = True
                    except Exception as e:
                        sent = _reached(e)
                        if not sent:  # could not connect: nothing was sent
                            self.acct.connection_failures += 1
                        raise
                    finally:
                        if sent:
                            self.acct.requests += 1
                            self.acct.retries += retrying
                            if repair and not repair_counted:
                                self.acct.repair_retries += 1
                                repair_counted = True
                if isinstance(resp, str | bytes):  # a body that is not JSON, served as text/html or the like
                    text = resp.decode(errors="replace") if isinstance(resp, bytes) else resp
                    raise json.JSONDecodeError("not JSON", text, 0)
                out = self._read(resp, sent_tokens)
                self.state.failed_retries = 0
                self.state.latencies.append(time.monotonic() - started)
                return out
            except UnitFailed:
                raise
            except (openai.AuthenticationError, openai.PermissionDeniedError) as e:
                self.fatal = EngineError(
                    f"the LLM endpoint {self._where()} refused the API key (HTTP {e.status_code})",
                    "check OPENAI_API_KEY / REPOBRIEF_LLM_API_KEY (or llm.api_key), or run with --engine offline",
                )
                raise self.fatal from None
            except openai.NotFoundError:
                self.fatal = EngineError(
                    f"the LLM endpoint {self._where()} does not know model {self.settings.model!r} (HTTP 404)",
                    f"check the model name ({MODEL_SETTING}) and the base URL (OPENAI_BASE_URL / REPOBRIEF_LLM_BASE_URL), "
                    "or run with --engine offline",
                )
                raise self.fatal from None
            except openai.BadRequestError as e:
                body = redact(str(getattr(e, "message", "")), self.settings.api_key)
                low = body.lower()
                if "model" in low and ("not exist" in low or "not found" in low or "unknown" in low or "invalid model" in low):
                    self.fatal = EngineError(
                        f"the LLM endpoint {self._where()} does not know model {self.settings.model!r}",
                        f"check the model name ({MODEL_SETTING}), or run with --engine offline",
                    )
                    raise self.fatal from None
                if "temperature" in low and "temperature" in req:
                    # Reasoning models (o1, o3, …) take only their default temperature.
                    self._temperature = False
                    req = {k: v for k, v in req.items() if k != "temperature"}
                    retrying = False
                    continue
                sent_field = next((f for f in TOKEN_FIELDS if f in req), None)
                if sent_field and self._token_field is None and _rejects_field(low, sent_field):
                    # OpenAI's reasoning models take only `max_completion_tokens`; some
                    # servers only `max_tokens`.
                    self._token_field = TOKEN_FIELDS[1 - TOKEN_FIELDS.index(sent_field)]
                    req = self._with_token_field(req)
                    retrying = False
                    continue
                if _sends_schema(req) and ("response_format" in low or "json_schema" in low):
                    # The provider does not take schemas: carry on in json_object mode
                    # (the schema is in the prompt as well). The request's own format
                    # decides, not the run's: requests sent before the first rejection
                    # came back are asked again too.
                    self.mode = "json_object"
                    req = _as_json_object(req)
                    retrying = False
                    continue
                raise UnitFailed(f"the endpoint rejected the request (HTTP 400: {body[:200]})") from None
            except (openai.RateLimitError, openai.InternalServerError, openai.APITimeoutError, openai.APIConnectionError, openai.APIStatusError) as e:
                status = getattr(e, "status_code", None)
                if isinstance(e, openai.APIStatusError) and not isinstance(e, (openai.RateLimitError, openai.InternalServerError)):
                    if status is None or (status < 500 and status not in (408, 409, 429)):
                        raise UnitFailed(f"HTTP {status} from the endpoint") from None
                if isinstance(e, openai.APITimeoutError):
                    if timeout < self.settings.timeout:  # cut short by the budget, not the endpoint's fault
                        raise UnitFailed(f"{self._budget()} used up (no answer in the {timeout:.1f}s that were left)", "budget") from None
                    last, kind = f"timed out after {timeout:g}s", "timeout"
                elif isinstance(e, openai.APIConnectionError):
                    last, kind = ("connection dropped" if sent else "endpoint unreachable"), "unreachable"
                    dns = dns_failure(e)
                    if dns is not None and not lookup_unavailable(dns):
                        # a name that does not exist will not exist in a second either: no retry,
                        # and no other request tries it (a typo in the URL, or no network here)
                        host = urlsplit(self._where()).hostname  # the default endpoint has no base_url
                        self.state.down = self.state.down or (
                            f"endpoint {self._where()} unreachable: its host name {host!r} does not resolve "
                            f"({dns.strerror}); check the base URL, or this machine's network")
                        raise UnitFailed(self.state.down, "unreachable") from None
                    if retrying:
                        self.state.failed_retries += 1
                        if self.state.failed_retries >= BREAKER_THRESHOLD and not self.state.down:
                            self.state.down = f"endpoint {self._where()} unreachable"
                        if self.state.down:
                            raise UnitFailed(self.state.down, "unreachable") from None
                else:
                    last, kind = f"HTTP {status}", ("rate_limited" if status == 429 else "error")
                wait = _retry_after(e)
            except json.JSONDecodeError as e:  # a 200 whose body is not JSON
                if not (e.doc or "").lstrip().startswith("{"):
                    self._not_json(e.doc or "")
                # JSON cut short (a proxy or server that dropped the end of the body): a
                # glitch of this answer, not a web page at the base URL; asked again
                last, kind = "the answer's JSON was cut short", "error"
            if attempt + 1 >= MAX_ATTEMPTS:
                break
            asked = wait is not None
            if wait is None:
                wait = min(BACKOFF_CAP, BACKOFF_BASE * 2**attempt) * (0.75 + random.random() / 2)
            left = self.deadline - time.monotonic()
            if wait + self._needed() > left:
                if asked:
                    reason = (f"the endpoint asked to wait {wait:g}s before retrying ({last}), longer than the "
                              f"{max(0.0, left):.0f}s left of the {self._budget()}")
                    if wait > left:  # every other request would be told the same: they fall back now
                        self.state.blocked, self.state.blocked_kind = reason, kind
                    raise UnitFailed(reason, kind)
                raise UnitFailed(f"{self._budget()} used up: no time left for a retry after {last}", "budget")
            await asyncio.sleep(wait)
            retrying = True
        if kind == "unreachable":
            # every attempt of this request failed to connect: the endpoint is down
            self.state.down = self.state.down or f"endpoint {self._where()} unreachable"
            raise UnitFailed(self.state.down, "unreachable")
        raise UnitFailed(f"{last} after {MAX_ATTEMPTS} attempts", kind)

    def _read(self, resp: Any, sent_tokens: int) -> tuple[str, int, int]:
        choices = getattr(resp, "choices", None)
        if choices is None:  # JSON, but not a chat completion (another API's answer, an error page as JSON)
            self._not_json(None, said="did not return a chat completion")
        choices = choices or []
        text = ""
        if choices:
            msg = choices[0].message
            calls = [c.function.arguments for c in getattr(msg, "tool_calls", None) or [] if getattr(c, "function", None) and c.function.arguments]
            text = calls[0] if calls else (msg.content or "")
        # a server that reports no usage (some vLLM/Ollama proxies) gets our estimates
        usage = getattr(resp, "usage", None)
        pt = int(getattr(usage, "prompt_tokens", 0) or 0) or sent_tokens
        ct = int(getattr(usage, "completion_tokens", 0) or 0) or estimate_tokens(text)
        self.acct.prompt_tokens += pt
        self.acct.completion_tokens += ct
        if choices and getattr(choices[0], "finish_reason", None) == "length":  # a JSON answer cut short
            cap = self.settings.max_output_tokens
            raise UnitFailed(f"the answer was cut at the llm.max_output_tokens limit of {cap} tokens: raise it" if cap else
                             "the answer was cut at the endpoint's token limit: set llm.max_output_tokens higher "
                             "than its default, or use a model with longer answers", "cut")
        return text, pt, ct

    def _where(self) -> str:
        return public_endpoint(self.settings.base_url)
