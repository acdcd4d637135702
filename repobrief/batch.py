"""Batch LLM analysis: the per-PR requests of a week as a dataset, answered
elsewhere, and the answers brought back into the response cache.

A week's PR analyses are independent of each other (the sections, written
after them, are not), so they can be run in bulk wherever a model is cheapest
to run — vLLM's `run-batch`, Ray Data with vLLM on GPU nodes
(`examples/ray_data_vllm.py`), the OpenAI Batch API — and the report run then
only composes:

    from repobrief.batch import export_requests, write_jsonl, import_results
    rows = export_requests("path/to/clone", settings, window)     # what the llm engine would ask
    write_jsonl(rows, "requests.jsonl")
    # … run requests.jsonl through vLLM / Ray Data / a Batch API → results.jsonl …
    with open_store(settings.db or None) as store:
        print(import_results("results.jsonl", store).line())
    generate_report("path/to/clone", settings, window)              # 0 PR requests, 1 composition

Rows are in the OpenAI Batch API input format (`custom_id`, `method`, `url`,
`body`); `body` is exactly the chat request the llm engine sends first and
`custom_id` is that request's cache key, so an answer lands on the entry the
engine looks up. The requests are built by the engine itself
(`LLMEngine.pr_requests`), from the same source reading, offline hints and
prompt budget as a report run: export with the settings the report will use
(model, endpoint, language, time zone) or the keys will not match.

Imported answers are stored as they came, as data: the report run validates
and grounds them exactly as it does a live answer (an answer citing a PR
outside the week gets the same repair request and, failing that, the same
fallback).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from .config import Settings
from .engines.llm import LLMEngine, PRRequest
from .errors import EngineError, RepobriefError, UsageError
from .output import write_file
from .window import Window

__all__ = [
    "BATCH_URL",
    "BatchExport",
    "ImportSummary",
    "export_requests",
    "export_team",
    "import_results",
    "import_rows",
    "read_jsonl",
    "write_jsonl",
]

BATCH_URL = "/v1/chat/completions"
_KEY = re.compile(r"[0-9a-f]{64}")
_SHOWN_PROBLEMS = 5  # per kind, in the summary


# ------------------------------------------------------------------ export


class _Collected(Exception):
    """Carries a week's requests out of the pipeline, which stops there."""

    def __init__(self, repository: str, requests: list[PRRequest]) -> None:
        super().__init__("requests collected")
        self.repository = repository
        self.requests = requests


class _RequestCollector(LLMEngine):
    """The llm engine up to its first requests: it builds them and sends none."""

    needs_store = False  # it reads no cache and writes nothing

    def analyze_all(self, prs, ctx):
        raise _Collected(ctx.repository, self.pr_requests(prs, ctx))


def _check_model(settings: Settings, where: str = "") -> None:
    if not settings.llm.model:
        raise EngineError(
            f"no model is set{where}: batch requests name the model that answers them",
            "pass --llm-model NAME (or set REPOBRIEF_LLM_MODEL or [llm] model) — the same model the report run will use",
        )


def week_requests(
    target: str,
    settings: Settings,
    window: Window,
    *,
    store=None,
    offline: bool = False,
    enrich_github: str | None = None,
    source_name: str | None = None,
) -> tuple[str, list[PRRequest]]:
    """(repository name, the first request of each PR of the week) for `target`, read
    exactly as `repobrief.pipeline.generate_report` reads it (it runs up to the analysis)."""
    from .pipeline import generate_report

    _check_model(settings)
    try:
        generate_report(target, settings, window, store=store, offline=offline, enrich_github=enrich_github,
                        source_name=source_name, engine=_RequestCollector())
    except _Collected as done:
        return done.repository, done.requests
    raise AssertionError("not reached: every week is analysed, even an empty one")


def batch_row(unit: PRRequest) -> dict:
    """One OpenAI Batch API input row."""
    return {"custom_id": unit.key, "method": "POST", "url": BATCH_URL, "body": unit.request}


@dataclass
class ExportedUnit:
    """What a row is for (kept beside the rows; the Batch format has no room for it)."""

    repository: str
    week: str
    lang: str
    pr: int
    key: str


class BatchExport:
    """Requests of one or more repository-weeks, each request once, PRs already
    answered in the store left out (unless `include_cached`)."""

    def __init__(self, *, include_cached: bool = False) -> None:
        self.include_cached = include_cached
        self.rows: list[dict] = []
        self.units: list[ExportedUnit] = []
        self.prs = 0  # PR analyses the weeks need
        self.cached = 0  # already answered in the store: not exported
        self.duplicates = 0  # the same request met again (same cache key)
        self.weeks = 0  # repository-weeks (one per language) read
        self.failed: list[tuple[str, str, str | None]] = []  # (repository, error, hint)
        self._keys: set[str] = set()
        self._stores: dict[str, Any] = {}

    # ---------------------------------------------------------------- adding

    def add(
        self,
        target: str,
        settings: Settings,
        window: Window,
        *,
        store=None,
        offline: bool = False,
        enrich_github: str | None = None,
        source_name: str | None = None,
    ) -> int:
        """Add the requests of `target`'s week; returns how many rows were added.
        `store` is where the report run will look for answers (default: the
        settings' store, opened only if it exists)."""
        if store is not None:
            cache = source_store = store
        else:
            cache = None if self.include_cached else self._open(settings, create=False)
            from .targets import source_needs_store

            source_store = self._open(settings, create=True) if source_needs_store(target, source_name) else None
        repository, units = week_requests(
            target, settings, window, store=source_store, offline=offline, enrich_github=enrich_github, source_name=source_name
        )
        self.weeks += 1
        added = 0
        for unit in units:
            self.prs += 1
            key = unit.key
            if key in self._keys:
                self.duplicates += 1
                continue
            if cache is not None and not self.include_cached and cache.cache_get(key) is not None:
                self.cached += 1
                continue
            self._keys.add(key)
            self.rows.append(batch_row(unit))
            self.units.append(ExportedUnit(repository, window.label, settings.language, unit.number, key))
            added += 1
        return added

    def add_team(
        self,
        config: str | os.PathLike,
        week: str | None,
        *,
        db: str | None = None,
        llm: dict | None = None,
        only: list[str] | None = None,
        digest: bool = False,
        offline: bool = False,
    ) -> None:
        """Add every repository of a team config (`repobrief run`'s format), in every
        language its reports are written in. A repository that cannot be read is
        recorded in `failed`; the others go on."""
        from .team import load_team, plan_jobs

        team = load_team(config)
        if only:
            team.keep_only(only, config)
        jobs, failed = plan_jobs(team, week, db=db, digest=digest, publish=False, offline=offline)
        self.failed += [(r.label, r.error, r.hint) for r in failed]
        overrides = {k: v for k, v in (llm or {}).items() if v is not None}
        for job in jobs:
            settings = replace(job.settings, llm=replace(job.settings.llm, **overrides)) if overrides else job.settings
            _check_model(settings, f" for {job.label}")
            for lang in [*job.languages, *job.extra_languages]:
                try:
                    self.add(job.target, replace(settings, language=lang), job.window, offline=job.offline)
                except RepobriefError as e:
                    self.failed.append((job.label, e.message, e.hint))
                    break
                except Exception as e:  # noqa: BLE001 - one repository's bug must not stop the others
                    self.failed.append((job.label, f"unexpected {type(e).__name__}: {e}", None))
                    break

    # -------------------------------------------------------------- the store

    def _open(self, settings: Settings, *, create: bool):
        """The settings' store, opened once; None when `create` is false and it does
        not exist yet (nothing can be cached there, and nothing is created)."""
        db = settings.db or ""
        if db in self._stores:
            return self._stores[db]
        from .store import open_store, store_exists

        if not create and not store_exists(db or None):
            return None
        store = self._stores[db] = open_store(db or None)
        return store

    def close(self) -> None:
        for store in self._stores.values():
            store.close()
        self._stores = {}

    def __enter__(self) -> BatchExport:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # ---------------------------------------------------------------- output

    def write(self, path: str | os.PathLike) -> int:
        return write_jsonl(self.rows, path)

    def line(self) -> str:
        """A one-line summary for people."""
        parts = [f"{len(self.rows):,} requests from {self.weeks:,} repository-week{'s' if self.weeks != 1 else ''} ({self.prs:,} PRs"]
        if self.cached:
            parts.append(f", {self.cached:,} already answered in the store")
        if self.duplicates:
            parts.append(f", {self.duplicates:,} repeated")
        parts.append(")")
        if self.failed:
            parts.append(f"; {len(self.failed)} repositor{'ies' if len(self.failed) != 1 else 'y'} failed")
        return "".join(parts)


def export_requests(
    target: str,
    settings: Settings,
    window: Window,
    *,
    store=None,
    include_cached: bool = False,
    offline: bool = False,
    enrich_github: str | None = None,
    source_name: str | None = None,
) -> list[dict]:
    """The Batch API input rows for `target`'s week: one per PR not yet answered in
    `store` (default: the settings' store)."""
    with BatchExport(include_cached=include_cached) as export:
        export.add(target, settings, window, store=store, offline=offline, enrich_github=enrich_github, source_name=source_name)
        return export.rows


def export_team(
    config: str | os.PathLike,
    week: str | None,
    *,
    db: str | None = None,
    llm: dict | None = None,
    include_cached: bool = False,
    digest: bool = False,
    offline: bool = False,
) -> BatchExport:
    """The requests of every repository of a team config, deduplicated; failed
    repositories are in the result's `failed`."""
    with BatchExport(include_cached=include_cached) as export:
        export.add_team(config, week, db=db, llm=llm, digest=digest, offline=offline)
    return export


def write_jsonl(rows: Iterable[dict], path: str | os.PathLike) -> int:
    """Write `rows` as JSON Lines (UTF-8), all or nothing; returns the count."""
    lines = [json.dumps(row, ensure_ascii=False, separators=(",", ":")) + "\n" for row in rows]
    write_file(Path(path), "".join(lines), "check that the folder exists and is writable")
    return len(lines)


# ------------------------------------------------------------------ import


def read_jsonl(path: str | os.PathLike) -> Iterator[tuple[str, Any]]:
    """(where, parsed line) for each non-blank line of a JSON Lines file, or of every
    `*.json`/`*.jsonl` file in a folder (Ray Data's `write_json` output). A line that
    is not JSON is an error naming the file and line."""
    path = Path(path)
    if path.is_dir():
        # Ray Data writes one level of files; a deeper tree is looked into too, in name order.
        files = sorted(p for p in path.rglob("*") if p.is_file() and p.suffix in (".json", ".jsonl"))
        if not files:
            raise UsageError(f"{path} has no .json or .jsonl files", "give the results file, or the folder Ray Data wrote")
    elif path.exists():
        files = [path]
    else:
        raise UsageError(f"no such file: {path}", "give the Batch API output file (JSON Lines)")
    for file in files:
        try:
            fh = open(file, encoding="utf-8-sig")  # a byte-order mark (Windows editors) is not part of the JSON
        except OSError as e:
            raise UsageError(f"cannot read {file}: {e.strerror}") from None
        with fh:
            try:
                for n, line in enumerate(fh, 1):
                    if not line.strip():
                        continue
                    try:
                        row = json.loads(line)
                    except json.JSONDecodeError as e:
                        raise UsageError(
                            f"{file} line {n} is not JSON ({e.msg}, column {e.colno})",
                            "the file must hold one JSON object per line (the Batch API output format); nothing was imported",
                        ) from None
                    if isinstance(row, list) and n == 1:
                        raise UsageError(f"{file} holds a JSON array, not JSON Lines",
                                         "give the Batch API output: one JSON object per line; nothing was imported")
                    if isinstance(row, dict) and "custom_id" in row and "body" in row and "response" not in row:
                        raise UsageError(f"{file} is a requests file (its rows have a request body and no response)",
                                         "import the results file the batch run wrote, not the requests it read; "
                                         "nothing was imported")
                    yield f"{file.name}:{n}", row
            except UnicodeDecodeError:
                raise UsageError(f"{file} is not UTF-8 text", "give the Batch API output file (JSON Lines)") from None


@dataclass
class ImportSummary:
    rows: int = 0
    imported: int = 0  # answers stored in the cache
    already: int = 0  # the cache already had an answer under this key: kept
    repeated: int = 0  # the same custom_id earlier in the input
    failed: int = 0  # the row carries an error, or a status other than 200
    empty: int = 0  # a 200 answer with no text
    malformed: int = 0  # not a Batch API output row of repobrief's requests
    problems: list[str] = field(default_factory=list)  # "where: what", the first few of each kind

    @property
    def skipped(self) -> int:
        return self.failed + self.empty + self.malformed

    def line(self) -> str:
        text = f"imported {self.imported:,} of {self.rows:,} {'answer' if self.rows == 1 else 'answers'}"
        why = [
            (self.already, "already in the store"),
            (self.repeated, "repeated"),
            (self.failed, "failed (error or non-200 status)"),
            (self.empty, "empty"),
            (self.malformed, "not in the Batch API output format"),
        ]
        skipped = [f"{n:,} {what}" for n, what in why if n]
        return text + (f"; skipped {', '.join(skipped)}" if skipped else "")

    def _note(self, kind: str, where: str, what: str) -> None:
        setattr(self, kind, getattr(self, kind) + 1)
        if sum(1 for p in self.problems if p.startswith(f"[{kind}]")) < _SHOWN_PROBLEMS:
            self.problems.append(f"[{kind}] {where}: {what}")


def _answer(response: Any) -> tuple[int | None, Any]:
    """(status, chat completion) from a row's `response`: the Batch API's
    `{"status_code", "body"}`, or a bare chat completion."""
    if not isinstance(response, dict):
        return None, None
    if "body" in response:
        status = response.get("status_code", 200)
        return (status if isinstance(status, int) else None), response["body"]
    if "choices" in response:
        return 200, response
    return None, None


def _text(body: dict) -> str | None:
    """The answer's text: a forced tool call's arguments, else the message content
    (as the live client reads it)."""
    choices = body.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        return None
    message = choices[0].get("message")
    if not isinstance(message, dict):
        return None
    for call in message.get("tool_calls") or []:
        fn = call.get("function") if isinstance(call, dict) else None
        if isinstance(fn, dict) and isinstance(fn.get("arguments"), str) and fn["arguments"]:
            return fn["arguments"]
    content = message.get("content")
    return content if isinstance(content, str) else None


def _error_text(error: Any) -> str:
    """A row's error as one short line: OpenAI's `{"code", "message"}`, vLLM's
    `{"error": {"message", …}}`, or plain text."""
    while isinstance(error, dict):
        inner = error.get("message") or error.get("error") or error.get("code")
        if inner is None:
            return json.dumps(error)[:200]
        error = inner
    return str(error).splitlines()[0][:200] if str(error) else "unknown error"


def _tokens(usage: Any, name: str) -> int:
    value = usage.get(name) if isinstance(usage, dict) else None
    return value if isinstance(value, int) and value >= 0 else 0


def import_results(source: str | os.PathLike | Iterable[Any], store, *, prompt_version: str | None = None) -> ImportSummary:
    """Store each successful answer of Batch API output rows in the response cache
    under its `custom_id`. A file (or folder) is read whole before anything is
    stored, so a corrupt file imports nothing. Rows with an error, a non-200 status,
    no text or an unknown shape are counted and never stored; an answer the cache
    already has is kept as it is, so importing twice stores nothing twice."""
    from .llm.prompts import PROMPT_VERSION

    if isinstance(source, str | os.PathLike):
        rows = list(read_jsonl(source))
    else:
        rows = [(f"row {i}", row) for i, row in enumerate(source, 1)]
    return import_rows(rows, store, prompt_version=prompt_version or PROMPT_VERSION)


def import_rows(rows: list[tuple[str, Any]], store, *, prompt_version: str) -> ImportSummary:
    """`import_results` for rows already read: (where, row) pairs, as `read_jsonl` yields them."""
    version = prompt_version
    summary = ImportSummary(rows=len(rows))
    seen: set[str] = set()
    for where, row in rows:
        key = row.get("custom_id") if isinstance(row, dict) else None
        if not isinstance(key, str) or not _KEY.fullmatch(key):
            summary._note("malformed", where, "no custom_id that is a repobrief request key (64 hex digits)")
            continue
        error = row.get("error")
        status, body = _answer(row.get("response"))
        if error:
            summary._note("failed", where, f"error: {_error_text(error)}")
            continue
        if status is not None and status != 200:
            detail = _error_text(body.get("error")) if isinstance(body, dict) and body.get("error") else ""
            summary._note("failed", where, f"HTTP {status}" + (f": {detail}" if detail else ""))
            continue
        if status is None or not isinstance(body, dict):
            summary._note("malformed", where, "no response with a status_code and a chat completion body")
            continue
        text = _text(body)
        if text is None and "choices" not in body:
            summary._note("malformed", where, "the response body is not a chat completion")
            continue
        if not text or not text.strip():
            summary._note("empty", where, "the answer has no text")
            continue
        if key in seen:
            summary.repeated += 1
            continue
        seen.add(key)
        if store.cache_get(key) is not None:
            summary.already += 1
            continue
        usage = body.get("usage")
        model = body.get("model") if isinstance(body.get("model"), str) else ""
        store.cache_put(
            key, model=model, prompt_version=version, response=text,
            prompt_tokens=_tokens(usage, "prompt_tokens"), completion_tokens=_tokens(usage, "completion_tokens"),
        )
        summary.imported += 1
    return summary
