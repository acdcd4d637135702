"""The Ray executor: `repobrief run --executor ray`, every repository of a team
config as a Ray task on a cluster, and one shared pool of LLM endpoints for all
of them.

- Each repository's pipeline (`repobrief.team.run_job`) is one Ray task with
  declared resources (`[ray] num_cpus`, `memory_mb`). A task whose worker dies
  (killed, out of memory, node lost) is re-run up to `max_retries` times; a
  report that fails (a broken source, a bad option) is not retried, because it
  would fail again, and it fails alone. Re-running a job is harmless: files are
  written all-or-none and rendered reports are upserts keyed by repository,
  week, language and format, so the shared store holds each report once.
- With the llm engine, every request of every worker goes through one
  `LLMPool` actor: a bounded pool of OpenAI-compatible endpoints (several vLLM
  replicas, say) with a concurrency limit per endpoint, the least busy one
  chosen for each request and the others tried when one fails. The actor holds
  the requests in flight and the answers of this run by cache key (model,
  prompt version, request), and reads and fills the shared store's LLM cache,
  so a PR asked for by two workers — or again by a task re-run after its worker
  died — is sent to an endpoint once.

Only this module imports `ray` (the `ray` extra); the core finds it through
`repobrief.registry.EXECUTORS`. Workers need repobrief installed (the cluster's
image or `runtime_env`), the clones (or `github:` sources) reachable from every
node, the output folder on shared storage and the store on PostgreSQL — see
docs/scaling.md.
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from .errors import RepobriefError, UsageError
from .executors import Executor, OnResult
from .llm.client import public_endpoint
from .team import EndpointSettings, JobResult, RaySettings, RepoJob, run_job

__all__ = ["LLMPool", "PoolClient", "RayExecutor"]

LOCAL_OBJECT_STORE_BYTES = 200 * 1024 * 1024  # a started-here cluster moves small job records only
ENDPOINT_FAILURES_BEFORE_REST = 3  # an endpoint failing this often in a row is down or overloaded:
ENDPOINT_REST_SECONDS = 30.0  # send elsewhere for this long, then try it again


class RayUnavailable(UsageError):
    exit_code = 2


def _import_ray():
    try:
        import ray
    except ImportError:
        raise RayUnavailable(
            "--executor ray needs Ray, which is not installed",
            "pip install 'ray[data]>=2.30' (repobrief's `ray` extra), or pick --executor local",
        ) from None
    return ray


# ----------------------------------------------------------------------------- the LLM pool


@dataclass
class _Endpoint:
    base_url: str
    limit: int
    api_key: str = field(default="", repr=False)
    busy: int = 0
    sent: int = 0  # requests sent, failures included
    failed: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    streak: int = 0  # consecutive failures
    resting_until: float = 0.0  # skipped until then while another endpoint can take the request
    client: Any = field(default=None, repr=False)

    def failed_once(self) -> None:
        self.failed += 1
        self.streak += 1
        if self.streak >= ENDPOINT_FAILURES_BEFORE_REST:
            self.resting_until = time.monotonic() + ENDPOINT_REST_SECONDS


class LLMPool:
    """A Ray async actor: the one door to the LLM endpoints for a whole run.

    `complete` answers one chat request (the same body `ChatClient` would send)
    as a plain dict. Per cache key it sends at most once per run: a second ask
    while the first is in flight waits for it, a later one gets its answer. An
    endpoint that fails (connection, timeout, 429, 5xx) hands the request to the
    next least busy endpoint; when all have failed the error goes back to the
    worker's `ChatClient`, whose retries, backoff and budget apply as usual."""

    def __init__(self, endpoints: list[dict]) -> None:
        self._endpoints = [
            _Endpoint(e["base_url"].rstrip("/"), max(1, int(e.get("concurrency") or 1)),
                      os.environ.get(e.get("api_key_env") or "", "") or e.get("api_key", ""))
            for e in endpoints
        ]
        self._cond: asyncio.Condition | None = None
        self._inflight: dict[str, asyncio.Future] = {}
        self._answers: dict[str, dict] = {}
        self.shared = 0  # asks answered by a request another worker had sent

    async def complete(self, key: str, request: dict, timeout: float) -> dict:
        # The response cache is the workers' own (`ChatClient`): asked before the pool, it
        # keeps an answer only once its unit passed the checks, so an answer that failed
        # them is asked again in the next run. The pool only shares this run's answers.
        if key in self._answers:
            self.shared += 1
            return {**self._answers[key], "shared": True}
        if key in self._inflight:
            self.shared += 1
            answer = await asyncio.shield(self._inflight[key])
            return {**answer, "shared": True}
        fut = asyncio.get_running_loop().create_future()
        self._inflight[key] = fut
        try:
            answer = await self._send(request, timeout)
            if "error" not in answer:
                self._answers[key] = answer
            fut.set_result(answer)
            return answer
        except BaseException as e:
            fut.set_result({"error": "connection", "message": f"the LLM pool failed: {type(e).__name__}"})
            raise
        finally:
            del self._inflight[key]

    def _condition(self) -> asyncio.Condition:
        # Made on first use, inside the actor's event loop.
        if self._cond is None:
            self._cond = asyncio.Condition()
        return self._cond

    async def _acquire(self, tried: set[str]) -> _Endpoint | None:
        cond = self._condition()
        async with cond:
            while True:
                left = [e for e in self._endpoints if e.base_url not in tried]
                if not left:
                    return None
                now = time.monotonic()
                awake = [e for e in left if e.resting_until <= now]
                left = awake or left  # when every endpoint rests, try them anyway
                free = [e for e in left if e.busy < e.limit]
                if free:
                    ep = min(free, key=lambda e: (e.busy / e.limit, e.sent))
                    ep.busy += 1
                    return ep
                await cond.wait()

    async def _release(self, ep: _Endpoint) -> None:
        cond = self._condition()
        async with cond:
            ep.busy -= 1
            cond.notify_all()

    async def _send(self, request: dict, timeout: float) -> dict:
        import openai

        tried: set[str] = set()
        last: dict = {"error": "connection", "message": "no LLM endpoint configured"}
        while True:
            ep = await self._acquire(tried)
            if ep is None:
                return last
            tried.add(ep.base_url)
            try:
                if ep.client is None:
                    ep.client = openai.AsyncOpenAI(api_key=ep.api_key or "not-needed", base_url=ep.base_url,
                                                   max_retries=0, timeout=timeout)
                ep.sent += 1
                resp = await ep.client.chat.completions.create(**request, timeout=timeout)
            except openai.APIStatusError as e:
                headers = {k: v for k, v in e.response.headers.items() if k.lower() in ("retry-after", "retry-after-ms")}
                last = {"error": "status", "status": e.status_code, "message": str(getattr(e, "message", ""))[:500],
                        "headers": headers}
                if e.status_code < 500 and e.status_code not in (408, 409, 429):
                    ep.failed += 1
                    return last  # the request itself is wrong (or the key): another replica says the same
                ep.failed_once()
                continue
            except openai.APITimeoutError:
                ep.failed_once()
                last = {"error": "timeout", "message": f"timed out at {public_endpoint(ep.base_url)}"}
                continue
            except openai.APIConnectionError:
                ep.failed_once()
                last = {"error": "connection", "message": f"{public_endpoint(ep.base_url)} unreachable"}
                continue
            finally:
                await self._release(ep)
            return self._answer(ep, resp)

    @staticmethod
    def _answer(ep: _Endpoint, resp: Any) -> dict:
        ep.streak = 0
        usage = getattr(resp, "usage", None)
        pt = int(getattr(usage, "prompt_tokens", 0) or 0)
        ct = int(getattr(usage, "completion_tokens", 0) or 0)
        ep.prompt_tokens += pt
        ep.completion_tokens += ct
        content, tool_args = "", None
        choices = getattr(resp, "choices", None) or []
        if choices:
            msg = choices[0].message
            content = msg.content or ""
            for call in getattr(msg, "tool_calls", None) or []:
                if call.function is not None and call.function.arguments:
                    tool_args = call.function.arguments
                    break
        return {"content": content, "tool_args": tool_args, "prompt_tokens": pt, "completion_tokens": ct,
                "endpoint": ep.base_url}

    def stats(self) -> dict:
        """What the pool sent where, for the run's summary (no keys)."""
        return {
            "endpoints": [{"base_url": e.base_url, "concurrency": e.limit, "sent": e.sent, "failed": e.failed,
                           "prompt_tokens": e.prompt_tokens, "completion_tokens": e.completion_tokens}
                          for e in self._endpoints],
            "shared": self.shared,
            "answers": len(self._answers),
        }


class _Namespace:
    def __init__(self, **kw: Any) -> None:
        self.__dict__.update(kw)


class PoolClient:
    """The worker's side of the pool: the `AsyncOpenAI` shape `ChatClient` uses
    (`chat.completions.create`, `close`), answered by the `LLMPool` actor."""

    def __init__(self, settings, pool) -> None:
        self._settings = settings
        self._pool = pool
        self.chat = _Namespace(completions=_Namespace(create=self._create))

    async def _create(self, *, timeout: float | None = None, **request: Any):
        import httpx2
        import openai

        from .llm.prompts import PROMPT_VERSION
        from .store import cache_key

        key = cache_key(request.get("model", ""), PROMPT_VERSION, request)
        url = (self._settings.base_url or "llm-pool").rstrip("/") + "/chat/completions"
        http_request = httpx2.Request("POST", url)
        try:
            answer = await self._pool.complete.remote(key, request, timeout or self._settings.timeout)
        except Exception as e:  # noqa: BLE001 - the actor died or the cluster went away: an unreachable endpoint
            raise openai.APIConnectionError(message=f"the LLM pool failed: {type(e).__name__}", request=http_request) from None
        error = answer.get("error")
        if error == "timeout":
            raise openai.APITimeoutError(request=http_request)
        if error == "connection":
            raise openai.APIConnectionError(message=answer.get("message", ""), request=http_request)
        if error == "status":
            status = int(answer["status"])
            response = httpx2.Response(status, request=http_request, headers=answer.get("headers") or {})
            cls = {400: openai.BadRequestError, 401: openai.AuthenticationError, 403: openai.PermissionDeniedError,
                   404: openai.NotFoundError, 409: openai.ConflictError, 422: openai.UnprocessableEntityError,
                   429: openai.RateLimitError}.get(status, openai.InternalServerError if status >= 500 else openai.APIStatusError)
            raise cls(answer.get("message", ""), response=response, body=None)
        calls = []
        if answer.get("tool_args") is not None:
            calls = [_Namespace(function=_Namespace(name="", arguments=answer["tool_args"]))]
        message = _Namespace(content=answer.get("content", ""), tool_calls=calls)
        return _Namespace(
            choices=[_Namespace(message=message)],
            usage=_Namespace(prompt_tokens=answer.get("prompt_tokens", 0), completion_tokens=answer.get("completion_tokens", 0)),
        )

    async def close(self) -> None:
        pass


# ----------------------------------------------------------------------------- the tasks


def _run_repository(job: RepoJob, pool) -> JobResult:
    """One repository's report, in a Ray worker. Runs `run_job` (which never raises)
    with the worker's LLM requests routed through the shared pool."""
    if pool is not None:
        from .llm import client

        client.CLIENT_FACTORY = lambda settings: PoolClient(settings, pool)
    return run_job(job)


def tokens_of(result: JobResult) -> int:
    """Tokens the LLM endpoints reported for a job's reports (0 for the offline engine)."""
    return sum(int((r.get("engine") or {}).get("total_tokens") or 0) for r in result.reports.values())


def _probe(address: str, timeout: float = 5.0) -> None:
    """Fail in seconds when nothing listens at HOST:PORT: Ray itself keeps retrying for minutes."""
    import socket

    hostport = address.split("://", 1)[-1].rstrip("/")
    host, _, port = hostport.rpartition(":")
    if not host or not port.isdigit():
        raise ValueError(f"expected HOST:PORT, ray://HOST:10001 or auto, got {address!r}")
    with socket.create_connection((host.strip("[]"), int(port)), timeout=timeout):
        pass


class RayExecutor(Executor):
    """Repository jobs as Ray tasks, on the cluster at `address` or on a local one started here."""

    name = "ray"

    def __init__(self, workers: int | None = None, *, address: str | None = None,
                 settings: RaySettings | dict | None = None, quiet: bool = False) -> None:
        super().__init__(workers)
        if isinstance(settings, dict):
            settings = RaySettings(**{**settings, "endpoints": [EndpointSettings(**e) if isinstance(e, dict) else e
                                                                  for e in settings.get("endpoints", [])]})
        self.settings = settings or RaySettings()
        self.address = address if address is not None else self.settings.address
        self.quiet = quiet
        self.pool_stats: dict | None = None

    # ------------------------------------------------------------------ cluster

    def _connect(self, ray, jobs: int) -> bool:
        """Join or start the cluster; True when this call started it (and must stop it)."""
        if ray.is_initialized():
            return False
        os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")  # no phoning home from a report run
        where = self.address
        try:
            if where and where != "auto":
                _probe(where)
            if where:
                ray.init(address=where, log_to_driver=False, logging_level="ERROR")
            else:
                ray.init(num_cpus=self.workers or os.cpu_count() or 1, include_dashboard=False, log_to_driver=False,
                         object_store_memory=LOCAL_OBJECT_STORE_BYTES, logging_level="ERROR")
        except (ConnectionError, TimeoutError, RuntimeError, ValueError, OSError) as e:
            if not where:
                raise RepobriefError(f"could not start a local Ray cluster: {e}",
                                     "check `ray start --head` on this machine, or use --executor local") from None
            raise UsageError(
                f"cannot reach the Ray cluster at {where}: {str(e).splitlines()[0] if str(e) else type(e).__name__}",
                "start it (`ray start --head`, or a KubeRay RayCluster), check --ray-address (auto, or "
                "ray://HEAD:10001 for a remote head), or leave --ray-address out to start a local cluster",
            ) from None
        return True

    def _pool(self, ray, jobs: Sequence[RepoJob]):
        """The `LLMPool` actor when any job uses the llm engine, else None."""
        llm_jobs = [j for j in jobs if j.settings.engine == "llm" and not j.offline]
        if not llm_jobs:
            return None
        endpoints: list[dict[str, Any]]
        if self.settings.endpoints:
            endpoints = [{"base_url": e.base_url, "concurrency": e.concurrency, "api_key_env": e.api_key_env}
                         for e in self.settings.endpoints]
        else:  # no pool configured: the jobs' own endpoint, shared (and deduplicated) across workers
            llm = llm_jobs[0].settings.llm
            endpoints = [{"base_url": llm.base_url or "https://api.openai.com/v1", "concurrency": llm.concurrency,
                          "api_key": llm.api_key}]
        limit = sum(e["concurrency"] for e in endpoints)
        actor = ray.remote(num_cpus=0, max_concurrency=max(64, 4 * limit), max_restarts=1)(LLMPool)
        return actor.remote(endpoints)

    # --------------------------------------------------------------------- run

    def check(self) -> None:
        """Settings errors, before any cluster is joined or started."""
        s = self.settings
        if s.num_cpus < 0 or s.memory_mb < 0 or s.max_retries < 0:
            raise UsageError("options 'ray.num_cpus', 'ray.memory_mb' and 'ray.max_retries' must not be negative")
        for i, e in enumerate(s.endpoints):
            if not e.base_url.startswith(("http://", "https://")):
                raise UsageError(f"option 'ray.endpoints[{i}].base_url' is {public_endpoint(e.base_url)!r}, not an http(s) URL",
                                 'e.g. base_url = "http://vllm-0:8000/v1"')
            if e.concurrency < 1:
                raise UsageError(f"option 'ray.endpoints[{i}].concurrency' is {e.concurrency}; expected at least 1")

    def run(self, jobs: Sequence[RepoJob], on_result: OnResult | None = None) -> list[JobResult]:
        ray = _import_ray()
        self.check()
        if not jobs:
            return []
        started = self._connect(ray, len(jobs))
        try:
            return self._run(ray, jobs, on_result)
        finally:
            if started:
                ray.shutdown()

    def _run(self, ray, jobs: Sequence[RepoJob], on_result: OnResult | None) -> list[JobResult]:
        s = self.settings
        options: dict[str, Any] = {"num_cpus": s.num_cpus, "max_retries": s.max_retries, "retry_exceptions": False}
        if s.memory_mb:
            options["memory"] = s.memory_mb * 1024 * 1024
        task = ray.remote(**options)(_run_repository)
        pool = self._pool(ray, jobs)
        refs = {task.remote(job, pool): job for job in jobs}
        results: dict[int, JobResult] = {}
        pending = list(refs)
        t0 = time.perf_counter()
        while pending:
            # Whatever finished within a short while, not one at a time: each `ray.wait` call
            # walks every pending reference, which adds up over thousands of repositories.
            done, pending = ray.wait(pending, num_returns=len(pending), timeout=0.25)
            for ref in done:
                job = refs[ref]
                try:
                    res = ray.get(ref)
                except Exception as e:  # noqa: BLE001 - the worker died more than max_retries times, or the node was lost
                    res = JobResult(job.index, job.label, False, error=f"the Ray task failed after {s.max_retries} "
                                    f"retries ({type(e).__name__})", exit_code=1, stage="worker",
                                    hint="see `ray logs` on the cluster; raise [ray] memory_mb if workers run out of memory")
                results[job.index] = res
                if on_result:
                    on_result(res)
        if pool is not None:
            try:
                self.pool_stats = ray.get(pool.stats.remote())
            except Exception:  # noqa: BLE001 - the summary is optional
                self.pool_stats = None
            ray.kill(pool)
        if not self.quiet:
            self._summary(list(results.values()), time.perf_counter() - t0)
        return [results[job.index] for job in jobs]

    def _summary(self, results: list[JobResult], seconds: float) -> None:
        ok = sum(1 for r in results if r.ok)
        line = f"ray: {ok} done, {len(results) - ok} failed in {seconds:.1f} s, {sum(tokens_of(r) for r in results):,} tokens"
        if self.pool_stats:
            eps = ", ".join(f"{public_endpoint(e['base_url'])} {e['sent']} sent" + (f" ({e['failed']} failed)" if e["failed"] else "")
                            for e in self.pool_stats["endpoints"])
            spent = sum(e["prompt_tokens"] + e["completion_tokens"] for e in self.pool_stats["endpoints"])
            line += f"; llm pool: {eps}; {spent:,} tokens spent, {self.pool_stats['shared']} asks shared"
        print(line, file=sys.stderr)
