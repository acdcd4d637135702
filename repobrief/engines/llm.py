"""The `llm` engine: per-PR analysis and the weekly prose written by a model on
any OpenAI-compatible endpoint, grounded in the computed data.

For each PR the offline engine's analysis goes in as hints and the model's
answer comes back in the same `PRAnalysis` shape; the week's six sections and
card are written from the computed aggregate. Every answer is validated
(pydantic) and grounded (`repobrief.llm.grounding`); an invalid or ungrounded
answer gets one retry naming the problems, and a unit (a PR or a section) that
still fails — or whose requests failed — falls back to the offline engine,
with the reason recorded. Responses are cached in the store, so a re-run of
the same week sends no request (`refresh=True` bypasses the cache).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from ..config import MODEL_SETTING, OFFLINE_INSTEAD, LLMSettings, Settings
from ..errors import EngineError
from ..models import Card, Item, Notice, PRAnalysis, PullRequest, Reason, Risk, Sections
from . import Engine

if TYPE_CHECKING:
    from ..aggregate import WeekFacts
    from ..analysis.context import AnalysisContext

def _preload(store=None) -> None:
    """Import the answer schemas (pydantic) and build their JSON Schemas.

    Run in a background thread from the engine's constructor, which the pipeline
    calls before it reads the source: the work overlaps with git's. It waits for
    a store still opening first: the response cache is needed before the first
    answer is validated, so the store's import should not share the CPU with this."""
    try:
        if hasattr(store, "wait_open"):
            store.wait_open()
        from ..llm import grounding, prompts  # noqa: F401
        from ..llm.schema import PRAnalysisOut, SectionsOut, json_schema

        json_schema(PRAnalysisOut)
        json_schema(SectionsOut)
    except Exception:  # noqa: BLE001 - the engine imports these again and reports errors itself
        pass


DEFAULT_OPENAI_MODEL = "gpt-4o-mini"
DIFF_MAX_BYTES = 24_000  # per PR, read once; the prompt budget picks hunks from it
# how far the model's importance may move from the offline hint: without a reason
# in its disagreements, and with one (docs/llm.md, "What the model gets")
IMPORTANCE_DRIFT = 1.0
IMPORTANCE_REASONED = 3.0
SECTION_UNITS = ("summary", "key_changes", "trends", "risks", "recommendations", "closing", "card")


def check_settings(llm: LLMSettings, *, endpoint: bool = True) -> LLMSettings:
    """Fail early, before any work, when the endpoint cannot be used at all.
    `endpoint=False` (exporting requests for a batch run) needs no key or endpoint."""
    from ..llm.client import public_endpoint  # the URL as it may be shown (no password, no query)

    if endpoint and not llm.api_key and not llm.base_url:
        raise EngineError(
            "the llm engine needs an endpoint or an API key, and neither is set",
            "set OPENAI_API_KEY (OpenAI) or OPENAI_BASE_URL (a local vLLM/Ollama server), or REPOBRIEF_LLM_API_KEY / "
            "REPOBRIEF_LLM_BASE_URL, or [llm] api_key / base_url in repobrief.toml; " + OFFLINE_INSTEAD,
        )
    if llm.base_url and not llm.base_url.startswith(("http://", "https://")):
        raise EngineError(
            f"the LLM endpoint {public_endpoint(llm.base_url)!r} is not an http(s) URL",
            "set OPENAI_BASE_URL / REPOBRIEF_LLM_BASE_URL to e.g. http://127.0.0.1:8000/v1, " + OFFLINE_INSTEAD,
        )
    if not llm.model:
        if llm.base_url and "api.openai.com" not in llm.base_url:
            raise EngineError(
                f"no model is set for the LLM endpoint {public_endpoint(llm.base_url)}",
                f"set {MODEL_SETTING}; {OFFLINE_INSTEAD}",
            )
        llm = replace(llm, model=DEFAULT_OPENAI_MODEL)
    return llm.validate()  # settings built in code skip `Settings.validate`


@dataclass
class FactsView:
    """What composition needs from the aggregate, in plain data."""

    repository: str
    week: str
    lang: str
    first_day: str
    last_day: str
    stats: dict
    themes: list[dict]
    risks: list[dict]
    prs: list[PullRequest]
    analyses: dict[int, PRAnalysis]
    extra_numbers: set[float] = field(default_factory=set)
    days: int | None = None  # a date range's length; None: an ISO week
    # What the offline summary says of releases and security fixes (sentences in the
    # report's language), and the advisories the summary must name.
    release_notes: list[str] = field(default_factory=list)
    advisories: list[str] = field(default_factory=list)

    def count_kinds(self) -> dict[str, set[float]]:
        """The statistics a count may equal, per what it says it counts (`Grounds.kinds`):
        "4 PRs" must be a number of PRs — of the week, a type, module or theme, a
        week of the history — not files_changed or the baseline's 12 weeks."""
        from ..llm.grounding import collect_numbers, numbers_in_data

        s = self.stats
        wow = s.get("week_over_week") or {}

        def compared(key: str) -> list:
            d = wow.get(key) or {}
            return [d.get("previous"), abs(d.get("delta") or 0)]

        baseline = s.get("baseline") or {}
        prs = collect_numbers(
            [
                len(self.prs), s.get("merged_prs"), s.get("above_threshold"), len(s.get("breaking_prs") or []),
                len(s.get("reverts") or []), s.get("by_type"), s.get("by_module"), s.get("by_theme"),
                baseline.get("mean_merged_prs"), baseline.get("max_merged_prs"),
                (s.get("trend") or {}).get("merged_prs"), (s.get("trend") or {}).get("themes"), compared("merged_prs"),
                [[t["count"], t["previous_week"], t["baseline_mean"], len(t["prs"])] for t in self.themes],
                [len(r["prs"]) for r in self.risks],
            ]
        )
        added = collect_numbers([s.get("lines_added"), compared("lines_added"), [p.lines_added for p in self.prs]])
        deleted = collect_numbers([s.get("lines_deleted"), compared("lines_deleted"), [p.lines_deleted for p in self.prs]])
        total = [(s.get("lines_added") or 0) + (s.get("lines_deleted") or 0), [p.lines for p in self.prs]]
        # the detectors' evidence counts lines too ("#6779: 1,698 lines in verl/trainer")
        evidence = [e for r in self.risks for e in r.get("evidence") or []]
        evidence += [e for a in self.analyses.values() for r in a.risks for e in r.evidence]
        return {
            "prs": prs,
            "contributors": collect_numbers([s.get("contributors")]),
            "first_time": collect_numbers([s.get("first_time_contributors")]),
            "lines_added": added,
            "lines_deleted": deleted,
            "lines": added | deleted | collect_numbers(total) | numbers_in_data(evidence),
        }

    def count_ties(self) -> dict[str, set[float]]:
        """What a number stated as the span's total of merged PRs, the previous span's, or
        their difference must be (`Grounds.ties`): "merged 27 PRs" is not true because
        some theme or earlier week had 27."""
        s = self.stats
        wow = (s.get("week_over_week") or {}).get("merged_prs") or {}
        total = {float(len(self.prs))} | ({float(s["merged_prs"])} if s.get("merged_prs") is not None else set())
        previous = wow.get("previous")
        return {
            "total": total,
            "previous": set() if previous is None else {float(previous)},
            "delta": set() if previous is None else {float(abs(wow.get("delta") or 0))},
        }

    def topics(self) -> dict[str, set[float]]:
        """Themes, modules and types by the names a sentence may use for them, with the
        figures a true sentence about one may state (`Grounds.topics`)."""
        from ..i18n import catalog

        out: dict[str, set[float]] = {}

        def add(name: str, values) -> None:
            name = (name or "").strip()
            if len(name) < 2:
                return
            parts = {name} | {p.strip() for p in re.split(r"[()（）/、,，]", name) if len(p.strip()) >= 2}
            for part in parts:
                out.setdefault(part, set()).update(float(v) for v in values if v is not None)

        for t in self.themes:
            previous = t.get("previous_week")
            values = [t["count"], previous, t.get("baseline_mean"), len(t.get("prs") or [])]
            if previous is not None:
                values.append(abs(t["count"] - previous))
            add(t["name"], values)
        names = self.stats.get("theme_names") or {}
        for key, count in (self.stats.get("by_theme") or {}).items():
            add(names.get(key, ""), [count])
            add(key.split(":", 1)[-1], [count])
        for key, count in (self.stats.get("by_module") or {}).items():
            add(key, [count])
        cat = catalog(self.lang if self.lang in ("zh", "en") else "en")
        for key, count in (self.stats.get("by_type") or {}).items():
            add(key, [count])
            add(cat.type_name(key), [count])
        return out


@dataclass
class PRRequest:
    """One PR's first analysis request, built exactly as the live run sends it."""

    number: int
    messages: list[dict]
    schema: dict
    grounds: Any  # repobrief.llm.grounding.Grounds: what the answer may cite
    cuts: list[str]  # what the prompt budget left out
    llm: LLMSettings
    schema_name: str = "pr_analysis"

    @property
    def request(self) -> dict:
        """The chat-completions body: the canonical request of this unit."""
        from ..llm.client import chat_request, choose_mode

        return chat_request(self.llm, choose_mode(self.llm), self.messages, self.schema_name, self.schema)

    @property
    def key(self) -> str:
        """The response cache key the live run looks this request up under."""
        from ..llm.prompts import PROMPT_VERSION
        from ..store import cache_key

        return cache_key(self.llm.model, PROMPT_VERSION, self.request)


def facts_view(facts: Any) -> FactsView:
    from ..llm.grounding import collect_numbers

    window = getattr(facts, "window", None)
    first = getattr(facts, "first_day", None) or (window.first_day if window else "")
    last = getattr(facts, "last_day", None) or (window.last_day if window else "")
    week = getattr(facts, "week", None) or (window.label if window else "")
    themes = []
    for t in getattr(facts, "report_themes", None) or getattr(facts, "themes", []) or []:
        themes.append(
            {
                "name": t.name,
                "count": t.count,
                "prs": list(t.prs),
                "kind": t.kind,
                "baseline_mean": round(t.baseline_mean, 1),
                "previous_week": t.previous,
                "rank_in_history": t.rank_in_history,
                "history_weeks": t.history_weeks,
            }
        )
    risks = [
        {"kind": r.kind, "severity": r.severity, "prs": list(r.prs), "title": r.title, "evidence": list(r.evidence)[:3]}
        for r in getattr(facts, "risks", []) or []
    ]
    stats = getattr(facts, "stats", {}) or {}
    extra = collect_numbers([stats, themes])
    allowed = getattr(facts, "allowed_numbers", None)
    if callable(allowed):
        extra |= set(allowed())
    settings = getattr(facts, "settings", None)
    extra.add(float(getattr(settings, "threshold", 5.0) or 5.0))
    extra.add(float(getattr(settings, "baseline_weeks", 12) or 12))
    # a record is "the most of any week in the last N", N counting this week with the history
    extra |= {float(t["history_weeks"] + 1) for t in themes if t.get("history_weeks") is not None}
    extra.add(float(((stats.get("baseline") or {}).get("weeks") or 0) + 1))
    from ..aggregate import WeekFacts as Facts  # what the pipeline gives; tests may give less

    notes, advisories = [], []
    if isinstance(facts, Facts):
        from ..compose import advisory_ids, release_notes

        notes, advisories = release_notes(facts), advisory_ids(facts)
    return FactsView(
        repository=getattr(facts, "repository", ""),
        week=str(week),
        lang=getattr(facts, "lang", "zh"),
        first_day=str(first),
        last_day=str(last),
        stats=stats,
        themes=themes,
        risks=risks,
        prs=list(getattr(facts, "pull_requests", None) or getattr(facts, "prs", []) or []),
        analyses=dict(getattr(facts, "analyses", {}) or {}),
        extra_numbers=extra,
        days=_days(window),
        release_notes=notes,
        advisories=advisories,
    )


def _days(window) -> int | None:
    """A date range's length in days; None for an ISO week (or no window)."""
    return window.range_days if window is not None else None


def _nothing_cached(store, settings: Settings) -> bool:
    """The run's store is new (or not created yet): every answer will be a request."""
    if store is not None:
        return getattr(store, "new", False)
    from ..store import store_exists

    return not store_exists(settings.db or None)


def _run(coro):
    """Run `coro` to completion, also when called from inside a running event loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    box: dict = {}

    def target() -> None:
        try:
            box["value"] = asyncio.run(coro)
        except BaseException as e:  # noqa: BLE001 - re-raised in the caller's thread
            box["error"] = e

    t = threading.Thread(target=target)
    t.start()
    t.join()
    if "error" in box:
        raise box["error"]
    return box["value"]


class LLMEngine(Engine):
    """Model-written analysis and prose with per-unit fallback to the offline engine."""

    name = "llm"
    needs_store = True  # the response cache lives in the store

    def __init__(
        self,
        settings: Settings | None = None,
        *,
        store=None,
        refresh: bool = False,
        progress: Callable[[str, int, int], None] | None = None,
    ) -> None:
        self.settings = settings
        self._llm = check_settings(settings.llm) if settings is not None else None
        self._store = store
        self._own_store = False
        self.refresh = refresh
        self.progress = progress
        from ..llm.client import Accounting

        self.acct = Accounting(model=self._llm.model if self._llm else "")
        self.input_cuts: dict[int, list[str]] = {}
        self.disagreements: dict[int, list[dict]] = {}  # where the model departed from the offline hints, and why
        self._to_save: list[tuple[PRAnalysis, str]] = []
        self._deadline: float | None = None
        self._endpoint: Any = None  # repobrief.llm.client.EndpointState: what this report's requests learnt
        self._days: int | None = None
        self._offline = None
        self._ctx: AnalysisContext | None = None
        self._lang = settings.language if settings else "zh"
        threading.Thread(target=_preload, args=(store,), name="repobrief-llm-preload", daemon=True).start()
        if settings is not None and (refresh or _nothing_cached(store, settings)):
            from ..llm.client import preload_sdk

            preload_sdk()

    # ------------------------------------------------------------- plumbing

    @property
    def llm_settings(self) -> LLMSettings:
        """The model's settings: from the constructor, or the first report's (`_setup`)."""
        if self._llm is None:
            raise EngineError("the llm engine has no settings", "create it as LLMEngine(settings)")
        return self._llm

    def _budget_deadline(self) -> float:
        """When the model's time budget runs out; it starts with the first use."""
        if self._deadline is None:
            self._deadline = time.monotonic() + self.llm_settings.budget_seconds
        return self._deadline

    def _setup(self, settings: Settings | None) -> None:
        if self._llm is None:
            if settings is None:
                raise EngineError("the llm engine has no settings", "create it as LLMEngine(settings)")
            self.settings = settings
            self._llm = check_settings(settings.llm)
            self.acct.model = self._llm.model
        self._budget_deadline()
        if self._store is None:
            from ..store import open_store

            self._store = open_store(self.settings.db if self.settings else None)
            self._own_store = True

    def offline(self):
        if self._offline is None:
            from ..registry import ENGINES

            cls = ENGINES.get("offline")
            try:
                self._offline = cls(self.settings)
            except TypeError:
                self._offline = cls()
        return self._offline

    def _client(self):
        from ..llm.client import ChatClient
        from ..llm.prompts import PROMPT_VERSION

        if self._endpoint is None:
            from ..llm.client import EndpointState

            self._endpoint = EndpointState()
        return ChatClient(
            self.llm_settings,
            store=self._store,
            refresh=self.refresh,
            prompt_version=PROMPT_VERSION,
            accounting=self.acct,
            deadline=self._budget_deadline(),
            state=self._endpoint,  # an endpoint found down while analysing PRs is down for the composition too
        )

    def _fallback(self, unit: str, reason: str, kind: str = "checks") -> None:
        self.acct.fallbacks.append({"unit": unit, "reason": reason, "kind": kind})

    def close(self) -> None:
        if self._own_store and self._store is not None:
            self._store.close()
            self._store = None

    # ------------------------------------------------------------ per PR

    def analyze(self, pr: PullRequest, ctx: AnalysisContext) -> PRAnalysis:
        return self.analyze_all([pr], ctx)[pr.number]

    def analyze_all(self, prs: list[PullRequest], ctx: AnalysisContext) -> dict[int, PRAnalysis]:
        self._setup(getattr(ctx, "settings", None))
        # One engine may write several weeks (backfill): budget and accounting are per report.
        from ..llm.client import Accounting

        self._deadline = time.monotonic() + self.llm_settings.budget_seconds
        self.acct = Accounting(model=self.llm_settings.model)
        self.input_cuts = {}
        self.disagreements = {}
        self._endpoint = None
        self._ctx = ctx
        hints, diffs = self._prepare(prs, ctx)
        return _run(self._analyze_all(prs, ctx, hints, diffs))

    def pr_requests(self, prs: list[PullRequest], ctx: AnalysisContext) -> list[PRRequest]:
        """The first request `analyze_all` would send for each PR, without sending
        anything or opening a store (`repobrief.batch` exports them)."""
        settings = getattr(ctx, "settings", None) or self.settings
        if settings is None:
            raise EngineError("the llm engine has no settings", "create it as LLMEngine(settings)")
        self.settings = settings
        self._llm = check_settings(settings.llm, endpoint=False)
        hints, diffs = self._prepare(prs, ctx)
        week_prs = [p.number for p in prs]
        return [self.pr_request(pr, ctx, hints[pr.number], diffs.get(pr.number, ""), week_prs) for pr in prs]

    def _prepare(self, prs: list[PullRequest], ctx) -> tuple[dict[int, PRAnalysis], dict[int, str]]:
        """The offline engine's analyses (the prompts' hints) and the PRs' diffs."""
        self._lang = getattr(ctx, "lang", None) or (self.settings.language if self.settings else self._lang)
        return self.offline().analyze_all(prs, ctx), self._read_diffs(prs, ctx)

    def _read_diffs(self, prs: list[PullRequest], ctx) -> dict[int, str]:
        source = getattr(ctx, "source", None)
        if source is not None and hasattr(source, "read_diffs"):
            try:
                paths = {pr.number: [f.path for f in pr.files] for pr in prs}
                return source.read_diffs(prs, paths, DIFF_MAX_BYTES) or {}
            except Exception as e:  # noqa: BLE001 - diffs are an optional input
                self.acct.fallbacks.append({"unit": "diffs", "reason": f"could not read diffs: {e}"})
        return dict(getattr(ctx, "diffs", {}) or {})

    async def _analyze_all(self, prs, ctx, hints, diffs) -> dict[int, PRAnalysis]:
        client = self._client()
        done = 0
        total = len(prs)

        async def one(pr: PullRequest) -> PRAnalysis:
            nonlocal done
            try:
                return await self._analyze_one(client, pr, ctx, hints.get(pr.number), diffs.get(pr.number, ""), [p.number for p in prs])
            finally:
                done += 1
                if self.progress:
                    self.progress("analyze", done, total)

        try:
            results = await asyncio.gather(*(one(pr) for pr in prs), return_exceptions=True)
        finally:
            await client.aclose()
        self._save_analyses()
        out: dict[int, PRAnalysis] = {}
        for pr, res in zip(prs, results, strict=True):
            if isinstance(res, EngineError):
                raise res
            if isinstance(res, BaseException):
                if isinstance(res, KeyboardInterrupt | SystemExit | asyncio.CancelledError):
                    raise res
                reason = f"unexpected error: {type(res).__name__}: {res}"
                self._fallback(f"pr:{pr.number}", reason, "error")
                res = replace(hints[pr.number], engine="offline", fallback_reason=reason)
            out[pr.number] = res
        return out

    def pr_request(self, pr: PullRequest, ctx, hint: PRAnalysis, diff: str, week_prs: list[int]) -> PRRequest:
        """Build one PR's prompt (within the token budget) and what its answer may cite."""
        from ..conventions import clean_body, migration_notes
        from ..llm.grounding import Grounds, collect_numbers, numbers_in_data, urls_in
        from ..llm.prompts import build_pr_input, schema_for
        from ..llm.schema import PRAnalysisOut, json_schema

        window = getattr(ctx, "window", None)
        days = _days(window)
        schema = schema_for(json_schema(PRAnalysisOut), days)
        cleaned = clean_body(pr.body or "")
        inp = build_pr_input(
            pr,
            hint,
            repository=getattr(ctx, "repository", ""),
            week=getattr(window, "label", ""),
            days=days,
            lang=self._lang,
            week_prs=week_prs,
            diff=diff,
            clean_body=cleaned.text,
            budget_tokens=self.llm_settings.prompt_tokens_per_pr,
            schema=schema,
            migration=migration_notes(pr),
        )
        data_texts = [pr.title, pr.body or "", diff] + [c.body for c in pr.comments + pr.reviews] + [
            c.body for t in pr.threads for c in t.comments
        ]
        stats = {"lines": [pr.lines_added, pr.lines_deleted, pr.lines], "files": len(pr.files)}
        grounds = Grounds(
            days=days,
            week_prs=set(week_prs),
            counts=collect_numbers(stats),
            # the hints are computed data too: their evidence may quote sizes and counts
            figures=numbers_in_data(data_texts + [r.text for r in hint.importance_reasons] + [e for r in hint.risks for e in r.evidence])
            | collect_numbers([hint.importance, [r.points for r in hint.importance_reasons]]),
            extra_refs=set(pr.linked_issues) | _quoted_refs(pr),
            urls=urls_in(data_texts),
            kinds={
                "prs": {float(len(week_prs)), 1.0},
                "lines_added": {float(pr.lines_added)},
                "lines_deleted": {float(pr.lines_deleted)},
                "lines": collect_numbers(stats["lines"]),
            },
        )
        return PRRequest(number=pr.number, messages=inp.messages, schema=schema, grounds=grounds, cuts=list(inp.cuts), llm=self.llm_settings)

    async def _analyze_one(self, client, pr: PullRequest, ctx, hint: PRAnalysis, diff: str, week_prs: list[int]) -> PRAnalysis:
        from ..llm.schema import PRAnalysisOut

        unit = self.pr_request(pr, ctx, hint, diff, week_prs)
        if unit.cuts:
            self.input_cuts[pr.number] = unit.cuts
        asked = await _ask_grounded(client, unit.messages, unit.schema_name, unit.schema, PRAnalysisOut,
                                    lambda out: self._ground_pr(out, unit.grounds, self._lang), echo=6000)
        if asked.out is None:
            reason = f"request failed: {asked.failed.reason}" if asked.failed else "; ".join(asked.problems[:3])
            self._fallback(f"pr:{pr.number}", reason, asked.failed.kind if asked.failed else "checks")
            return replace(hint, engine="offline", fallback_reason=reason)
        analysis, said = self._merge_pr(pr, hint, asked.out)
        if said:
            self.disagreements[pr.number] = said
        if not asked.cached:  # a cached answer's analysis was stored when it was new
            self._to_save.append((analysis, _hash_messages(unit.messages)))
        return analysis

    @staticmethod
    def _ground_pr(out, grounds, lang: str = "en") -> list[str]:
        problems: list[str] = too_long([("key_contribution", out.key_contribution, TEXT_MAX["sentence"]),
                                        ("discussion_summary", out.discussion_summary or "", TEXT_MAX["item"])]
                                       + [(f"risks[{i}]", f"{r.title}\n{r.text}", TEXT_MAX["item"])
                                          for i, r in enumerate(out.risks)])
        if not 0.0 <= out.importance <= 10.0:
            problems.append(f"importance {out.importance} is outside 0.0-10.0")
        for r in out.importance_reasons:
            if not -10.0 <= r.points <= 10.0:
                problems.append(f"importance reason {r.text!r} has {r.points} points, outside -10..10")
        if not out.key_contribution.strip():
            problems.append("key_contribution is empty")
        elif lang == "zh" and not _has_cjk(out.key_contribution):
            problems.append("key_contribution must be written in Simplified Chinese")
        # the model's own scores are figures it may restate
        g = replace(grounds, figures=grounds.figures | {round(out.importance, 1), out.importance} | {r.points for r in out.importance_reasons})
        problems += g.check_text("key_contribution", out.key_contribution)
        # labels and reasons reach the JSON too
        problems += g.check_text("modules/themes", " ; ".join(out.modules + out.themes))
        for r in out.importance_reasons:
            problems += g.check_text("importance_reasons", r.text)
        for d in list(out.disagreements) + list(out.dismissed_hints):
            problems += g.check_text("disagreements", d.reason)
        for i, r in enumerate(out.risks):
            problems += g.check_text(f"risks[{i}]", f"{r.title}\n{r.text}\n" + "\n".join(r.evidence))
        if out.discussion_summary:
            problems += g.check_text("discussion_summary", out.discussion_summary)
        return problems

    def _merge_pr(self, pr: PullRequest, hint: PRAnalysis, out) -> tuple[PRAnalysis, list[dict]]:
        """The model's answer over the offline hints, and where it departed from them.

        The model may depart from a hint only with a reason (its `disagreements`),
        and only so far: a breaking change the data shows stays breaking, a type
        changes only with a reason, and importance moves at most
        IMPORTANCE_DRIFT from the hint without a reason, IMPORTANCE_REASONED with
        one. A PR body cannot talk the model into anything beyond that. Each
        departure is returned as {about, reason}, with an `outcome` when it was
        not (or not fully) taken."""
        said = [{"about": d.about, "reason": d.reason} for d in out.disagreements if d.reason.strip()]

        def reason(topic: str) -> str:
            return next((d.reason.strip() for d in out.disagreements if topic in d.about.lower() and d.reason.strip()), "")

        def refuse(topic: str, outcome: str) -> None:
            entry = next((e for e in said if topic in e["about"].lower()), None)
            if entry is None:
                said.append(entry := {"about": topic, "reason": ""})
            entry["outcome"] = outcome

        breaking = out.breaking
        if out.breaking != hint.breaking and (hint.breaking or not reason("breaking")):
            breaking = hint.breaking
            refuse("breaking", "kept the hint: a breaking change the data shows stays breaking" if hint.breaking else "kept the hint: no reason given")
        ptype = out.type
        if out.type != hint.type and not reason("type"):
            ptype = hint.type
            refuse("type", f"kept the hint {hint.type!r}: no reason given")
        limit = IMPORTANCE_REASONED if reason("importance") else IMPORTANCE_DRIFT
        importance = round(min(10.0, max(0.0, hint.importance - limit, min(hint.importance + limit, out.importance))), 1)
        if importance != round(out.importance, 1):
            refuse(
                "importance",
                f"limited to {importance:.1f}: at most {limit:g} from the hint {hint.importance:.1f}"
                + ("" if reason("importance") else " without a reason"),
            )
        reasons = [Reason(code="llm", points=round(r.points, 2), text=r.text) for r in out.importance_reasons]
        gap = round(importance - sum(r.points for r in reasons), 2)
        if abs(gap) >= 0.05:  # keep the reasons adding up to the score
            reasons.append(Reason(code="llm_judgement", points=gap, text="model judgement" if self._lang == "en" else "模型综合判断"))
        risks = [
            Risk(kind=r.kind, severity=r.severity, prs=[pr.number], evidence=list(r.evidence), title=r.title, text=r.text)
            for r in out.risks
        ]
        # A hinted risk the model neither kept nor dismissed with a reason stays: a PR
        # body cannot talk the model into dropping what the detectors found. Nor can a
        # breaking PR lose its breaking-change risk: the report would contradict itself.
        kept = {r.kind for r in risks}
        for d in out.dismissed_hints:
            if d.reason.strip():
                said.append({"about": f"risk:{d.kind}", "reason": d.reason})
        dismissed = {d.kind for d in out.dismissed_hints if d.reason.strip()}
        for h in hint.risks:
            if h.kind not in kept and h.kind in dismissed and breaking and h.kind == "breaking_change":
                refuse(f"risk:{h.kind}", "kept the hint: the PR is breaking")
                dismissed.discard(h.kind)
            if h.kind not in kept and h.kind not in dismissed:
                risks.append(h)
        analysis = PRAnalysis(
            number=pr.number,
            modules=[m.lower() for m in out.modules] or hint.modules,
            type=ptype,
            themes=list(out.themes),
            breaking=breaking,
            importance=importance,
            importance_reasons=reasons,
            key_contribution=out.key_contribution.strip(),
            risks=risks,
            discussion_summary=((out.discussion_summary or "").strip() or hint.discussion_summary) if pr.discussion_known else None,
            gist=hint.gist,
            engine="llm",
            fallback_reason=None,
        )
        return analysis, said

    def _save_analyses(self) -> None:
        """Keep the model's analyses in the store (one transaction), for history and audits."""
        from ..llm.prompts import PROMPT_VERSION

        items, self._to_save = self._to_save, []
        repo = getattr(self._ctx, "repository", "") or "unknown/unknown"
        try:
            self._store.save_analyses(repo, items, model=self.llm_settings.model, prompt_version=PROMPT_VERSION)
        except Exception as e:  # noqa: BLE001 - the report does not depend on this copy
            self.acct.fallbacks.append({"unit": "store", "reason": f"analyses not stored: {e}"})

    # --------------------------------------------------------- composition

    def compose(self, facts: WeekFacts) -> tuple[Sections, Card]:
        from ..compose import compose_offline

        base_sections, base_card = compose_offline(facts)
        self._setup(getattr(facts, "settings", None) or self.settings)
        view = facts_view(facts)
        self._lang = view.lang or self._lang
        if not view.prs:  # nothing merged: the offline composer's short report says all there is
            return base_sections, base_card
        if self.progress:
            self.progress("compose", 0, 1)
        out = _run(self._compose(view, base_sections, base_card))
        if self.progress:
            self.progress("compose", 1, 1)
        return out

    async def _compose(self, view: FactsView, base: Sections, base_card: Card) -> tuple[Sections, Card]:
        from ..llm.prompts import build_compose_input, schema_for
        from ..llm.schema import SectionsOut, json_schema

        self._days = view.days
        schema = schema_for(json_schema(SectionsOut), view.days)
        messages = build_compose_input(view, view.lang, schema)
        grounds = compose_grounds(view)
        client = self._client()
        try:
            good, problems_by_unit, failed = await self._converse(client, messages, schema, grounds, view)
        finally:
            await client.aclose()

        sources = dict(base.sources) if base.sources else {}
        written = f"llm:{self.llm_settings.model}"
        for unit in SECTION_UNITS:
            if unit in problems_by_unit:
                self._fallback(f"section:{unit}", "; ".join(problems_by_unit[unit][:3]), failed or "checks")
        sections = Sections(
            summary=good.get("summary", base.summary),
            key_changes=good.get("key_changes", base.key_changes),
            trends=good.get("trends", base.trends),
            risks=good.get("risks", base.risks),
            table=base.table,
            recommendations=good.get("recommendations", base.recommendations),
            closing=good.get("closing") or base.closing,
            sources=sources,
        )
        for unit in ("summary", "key_changes", "trends", "risks", "recommendations"):
            sources[unit] = written if unit in good else "offline"
        sources["table"] = "computed"
        sources["card"] = written if "card" in good else "offline"
        card = base_card
        if "card" in good:
            highlights, risks = good["card"]
            card = Card(title=base_card.title, highlights=highlights, risks=risks, button=base_card.button, link=base_card.link)
        return sections, card

    async def _converse(self, client, messages, schema, grounds, view: FactsView):
        """The composition conversation: the request and, when sections fail, one re-ask
        naming the problems (asked again live if the cache answered it and it fails: see
        `_ask_grounded`). Returns the grounded sections, the problems of the others, and
        the kind of a request failure (None when the answers came back)."""
        from ..llm.schema import SectionsOut

        good: dict[str, Any] = {}  # sections that passed, on whichever attempt
        problems_by_unit: dict[str, list[str]] = {}

        def check(out) -> list[str]:
            problems_by_unit.clear()
            for unit in SECTION_UNITS:
                if unit not in good:
                    value = _unit_value(out, unit)
                    probs = _ground_unit(unit, value, grounds, view.lang, view)
                    if probs:
                        problems_by_unit[unit] = probs
                    else:
                        good[unit] = value
            return [p for ps in problems_by_unit.values() for p in ps]

        asked = await _ask_grounded(client, messages, "weekly_report", schema, SectionsOut, check, echo=12000)
        if asked.out is not None:
            return good, {}, None
        if asked.failed or not asked.parsed:  # no sections to check: every one left fails alike
            why = [f"request failed: {asked.failed.reason}"] if asked.failed else asked.problems
            return good, {u: why for u in SECTION_UNITS if u not in good}, asked.failed.kind if asked.failed else None
        return good, problems_by_unit, None

    # ------------------------------------------------------------ accounting

    def info(self) -> dict:
        from ..llm.client import public_endpoint

        a = self.acct
        llm = self._llm or (self.settings.llm if self.settings else LLMSettings())
        cost = None
        if llm.price_prompt_per_mtok or llm.price_completion_per_mtok:
            cost = round(
                a.prompt_tokens * llm.price_prompt_per_mtok / 1e6 + a.completion_tokens * llm.price_completion_per_mtok / 1e6, 6
            )
        return {
            "name": self.name,
            "model": a.model,
            "endpoint": public_endpoint(llm.base_url),
            "requests": a.requests,
            "prompt_tokens": a.prompt_tokens,
            "completion_tokens": a.completion_tokens,
            "total_tokens": a.prompt_tokens + a.completion_tokens,
            "cache_hits": a.cache_hits,
            "cached_tokens": a.cached_prompt_tokens + a.cached_completion_tokens,
            "retries": a.retries,
            "repair_retries": a.repair_retries,
            "connection_failures": a.connection_failures,
            "fallbacks": list(a.fallbacks),
            "input_cuts": {str(k): v for k, v in sorted(self.input_cuts.items())},
            "disagreements": {str(k): v for k, v in sorted(self.disagreements.items())},
            "prompt_tokens_estimated": a.prompt_tokens_estimated,
            "estimated_cost": cost,
        }

    @property
    def warnings(self) -> list[str]:
        """What the report should tell its reader about units the model did not write:
        in the report's language, the sections by their headings and why in a short form
        (the full reasons are in the JSON `engine.fallbacks`)."""
        prs = [f["unit"] for f in self.acct.fallbacks if f["unit"].startswith("pr:")]
        sections = [f["unit"] for f in self.acct.fallbacks if f["unit"].startswith("section:")]
        out: list[str] = []
        if prs:
            en, why = self._why(prs)
            out.append(Notice(f"llm: the analyses of {len(prs)} PRs fell back to the offline engine{en}", "llm_prs",
                              count=len(prs), why=why))
        if sections:
            names = [u.split(":", 1)[1] for u in sections]
            en, why = self._why(sections)
            out.append(Notice(f"llm: sections fell back to the offline composer: {_unit_names(names, 'en', self._days)}{en}",
                              "llm_sections", sections=_unit_names(names, self._lang, self._days), why=why))
        out += [f"llm: {f['reason']}" for f in self.acct.fallbacks if f["unit"] in ("cache", "store")]
        return out

    def _why(self, units: list[str]) -> tuple[str, str]:
        """Why `units` fell back, in a short form: in English, and in the report's language."""
        kinds: dict[str, int] = {}
        for u in units:
            k = next((f["kind"] for f in self.acct.fallbacks if f["unit"] == u), "checks")
            k = k if k in _WHY_KINDS else "failed"
            kinds[k] = kinds.get(k, 0) + 1
        order = sorted(kinds, key=lambda k: (-kinds[k], _WHY_KINDS.index(k)))
        budget = f"{self.llm_settings.budget_seconds:g}" if self._llm else ""
        return tuple(_why_text(order, lang, budget) for lang in ("en", self._lang))  # type: ignore[return-value]


# why units fell back, as the reader is told (catalog `[llm] why_…`)
_WHY_KINDS = ("unreachable", "budget", "rate_limited", "timeout", "cut", "not_json", "checks", "failed")


def _why_text(kinds: list[str], lang: str, budget: str) -> str:
    from ..i18n import catalog

    cat = catalog(lang if lang in ("zh", "en") else "en")
    parts = [cat.t(f"llm.why_{k}", seconds=budget) if k == "budget" else cat.t(f"llm.why_{k}") for k in kinds]
    return cat.t("llm.why", reasons=cat.t("llm.why_sep").join(parts)) if parts else ""


def _unit_names(units: list[str], lang: str, days: int | None) -> str:
    """Section units by the headings the report shows them under (the closing line and the
    card have none: the catalog's `[llm]` names them)."""
    from ..i18n import catalog

    cat = catalog(lang if lang in ("zh", "en") else "en")
    headings = cat.headings(days)
    return cat.join([headings.get(u) or cat.get("llm", f"unit_{u}") or u for u in units])


def compose_grounds(view: FactsView):
    """What the week's sections may cite and state (`repobrief.llm.grounding.Grounds`)."""
    from ..llm.grounding import Grounds, collect_numbers, numbers_in_data, urls_in

    counts = collect_numbers(view.stats) | collect_numbers(view.themes) | {float(len(view.prs))} | view.extra_numbers
    figures = (
        view.extra_numbers
        | numbers_in_data([p.title for p in view.prs])
        # the PRs' own text: the key changes retell it ("verl issue/PR 6117", "40% faster")
        | numbers_in_data([p.body or "" for p in view.prs])
        | numbers_in_data([a.key_contribution for a in view.analyses.values()])
        | {round(a.importance, 1) for a in view.analyses.values()}
    )
    return Grounds(
        week_prs={p.number for p in view.prs},
        counts=counts,
        figures=figures,
        kinds=view.count_kinds(),
        # what the week's PRs revert or quote in their titles may be named too ("reverts #5")
        extra_refs={n for p in view.prs for n in _quoted_refs(p)},
        days=view.days,
        ties=view.count_ties(),
        topics=view.topics(),
        urls=urls_in([p.title for p in view.prs] + [p.body or "" for p in view.prs]
                     + [a.key_contribution for a in view.analyses.values()]),
    )


def ground_sections(view: FactsView, sections: Sections, card: Card) -> dict[str, list[str]]:
    """The grounding problems of written sections and card, per unit (none: all pass).
    The offline composer's own text must always pass (tests/test_llm_grounding.py)."""
    grounds = compose_grounds(view)
    values = {
        "summary": sections.summary,
        "key_changes": sections.key_changes,
        "trends": sections.trends,
        "risks": sections.risks,
        "recommendations": sections.recommendations,
        "closing": sections.closing,
        "card": (list(card.highlights), list(card.risks)),
    }
    out = {}
    for unit, value in values.items():
        problems = _ground_unit(unit, value, grounds, view.lang, view)
        if problems:
            out[unit] = problems
    return out


def _quoted_refs(pr: PullRequest) -> set[int]:
    """PR numbers a true statement about `pr` may cite besides the week's: the PR it
    reverts and the numbers in its own title ('Revert "feat: old thing (#5)"')."""
    from ..llm.grounding import pr_refs

    return set(pr_refs(pr.title)) | ({pr.reverts} if pr.reverts is not None else set())


def _hash_messages(messages: list[dict]) -> str:
    return hashlib.sha256(json.dumps(messages, ensure_ascii=False, sort_keys=True).encode()).hexdigest()


@dataclass
class _Asked:
    """How asking for one unit ended: `out`, the answer that passed; else its last problems,
    whether that last answer parsed, or the request failure that ended it."""

    out: Any = None
    cached: bool = False  # the answer that passed came from the cache
    problems: list[str] = field(default_factory=list)
    parsed: bool = False
    failed: Any = None  # llm.client.UnitFailed


async def _ask_grounded(client, messages: list[dict], name: str, schema: dict, model, check: Callable[[Any], list[str]],
                        *, echo: int) -> _Asked:
    """Ask for a unit and `check` the answer (parsed into the pydantic `model`); re-ask once
    with the problems, echoing `echo` characters of the answer. An answer is cached only
    once it passed (with the re-ask that repaired it), so an answer that failed is asked
    again in the next run; a re-ask the cache answered that fails (a cache from an older
    version, an imported batch) is asked again live rather than replayed as the last word."""
    from ..llm.client import UnitFailed
    from ..llm.extract import ExtractionError, extract_json
    from ..llm.prompts import retry_message

    keep: list = []
    conv, fresh, attempt = messages, False, 0
    while True:
        where: dict = {}
        try:
            text = await client.complete(conv, name, schema, where, fresh=fresh, keep=keep, repair=attempt > 0)
        except UnitFailed as e:
            return _Asked(failed=e)
        parsed = False
        try:
            out = model.model_validate(extract_json(text))
        except ExtractionError as e:
            problems = [str(e)]
        except Exception as e:  # pydantic.ValidationError, kept lazy to avoid the import
            problems = [f"the answer does not match the schema: {_short_validation(e)}"]
        else:
            parsed, problems = True, check(out)
        if not problems:
            client.remember(keep)
            return _Asked(out=out, cached=bool(where.get("cached")))
        if attempt == 0:
            attempt = 1
            conv = messages + [{"role": "assistant", "content": (text or "")[:echo]}, retry_message(problems)]
        elif where.get("cached") and not fresh:
            fresh = True
        else:
            return _Asked(problems=problems, parsed=parsed)


def _short_validation(e: Exception) -> str:
    errors = getattr(e, "errors", None)
    if callable(errors):
        try:
            parts = [f"{'.'.join(str(x) for x in err['loc'])}: {err['msg']}" for err in errors()[:5]]
            return "; ".join(parts)
        except Exception:  # noqa: BLE001
            pass
    return str(e).splitlines()[0][:300]


def _unit_value(out, unit: str):
    if unit == "summary":
        return out.summary.strip()
    if unit == "closing":
        return out.closing.strip()
    if unit == "card":
        return ([h.strip() for h in out.card_highlights if h.strip()], [r.strip() for r in out.card_risks if r.strip()])
    return [Item(name=i.name.strip(), text=i.text.strip(), prs=list(i.prs)) for i in getattr(out, unit)]


def _has_cjk(text: str) -> bool:
    return any("\u4e00" <= ch <= "\u9fff" for ch in text)


def _risk_coverage(where: str, cited: set[int], view: FactsView) -> list[str]:
    """What a text that presents the week's risks leaves out: it must cite the PRs of
    the two most severe detected risks and of every breaking change."""
    from ..analysis.risks import SEVERITY_ORDER

    ranked = sorted(view.risks, key=lambda r: SEVERITY_ORDER.get(r["severity"], len(SEVERITY_ORDER)))
    must = ranked[:2] + [r for r in ranked[2:] if r["kind"] == "breaking_change"]
    problems = []
    for r in must:
        if r["prs"] and not cited & set(r["prs"]):
            problems.append(f"{where} leaves out the risk {r['title']!r} ({', '.join(f'#{n}' for n in r['prs'][:3])})")
    missing = [n for n in view.stats.get("breaking_prs") or [] if n not in cited]
    if missing:
        problems.append(f"{where} leaves out the breaking change in {', '.join(f'#{n}' for n in missing)}")
    return problems


def _card_risk_problems(lines: list[str], view: FactsView) -> list[str]:
    """The card shows the week's top 2-3 risks (report-format.md, "Chat card"), so it
    cannot say "no risks" over a report that lists some."""
    from ..llm.grounding import pr_refs

    problems = []
    if view.risks and not lines:
        problems.append(f"card_risks is empty, but the week has {len(view.risks)} detected risks: list the top 2-3")
    return problems + _risk_coverage("card_risks", {n for line in lines for n in pr_refs(line)}, view)


def _risk_section_problems(items: list[Item], view: FactsView) -> list[str]:
    """Section 4 presents the week's risks (report-format.md): like the card, it names
    every breaking change and the most severe risks, whatever else it chooses."""
    from ..llm.grounding import pr_refs

    cited = {n for item in items for n in [*item.prs, *pr_refs(f"{item.name} {item.text}")]}
    return _risk_coverage("risks", cited, view) if view.risks else []


def _denial_problems(where: str, text: str, view: FactsView) -> list[str]:
    """A text that says there are no risks (or no breaking change) when some were detected."""
    from ..llm.grounding import denies_breaking, denies_risks

    problems = []
    if view.risks and denies_risks(text):
        titles = ", ".join(repr(r["title"]) for r in view.risks[:3])
        problems.append(f"{where} says there are no risks, but {len(view.risks)} were detected ({titles}, …): "
                        "name the main ones or leave the claim out")
    breaking = view.stats.get("breaking_prs") or []
    if breaking and denies_breaking(text):
        problems.append(f"{where} says there is no breaking change, but {', '.join(f'#{n}' for n in breaking)} "
                        f"{'is' if len(breaking) == 1 else 'are'} breaking")
    return problems


def _advisory_problems(where: str, texts: list[str], view: FactsView | None) -> list[str]:
    """A security fix is what a downstream team acts on first: the summary names every
    advisory the period fixes, and the first recommendation is to upgrade for them."""
    said = "\n".join(texts).lower()
    missing = [a for a in (view.advisories if view is not None else []) if a.lower() not in said]
    return [f"{where} leaves out the security fix for {', '.join(missing)}"] if missing else []


# The longest text one field of an answer may hold, in characters: a report is read in
# minutes, and an answer padded with pages (a model looping, or doing what a PR's body
# asks) would reach every output and the store. The offline texts of verl's busiest weeks
# are half of these at most.
TEXT_MAX = {"sentence": 400, "item": 1500, "summary": 3000}


def too_long(fields: list[tuple[str, str, int]]) -> list[str]:
    return [f"{where} is {len(text):,} characters long, more than the {limit:,} it may have: say it shorter"
            for where, text, limit in fields if len(text) > limit]


def _ground_unit(unit: str, value, grounds, lang: str = "en", view: FactsView | None = None) -> list[str]:
    problems: list[str] = []
    if unit == "summary":
        problems += too_long([("summary", value or "", TEXT_MAX["summary"])])
    elif unit == "closing":
        problems += too_long([("closing", value or "", TEXT_MAX["sentence"])])
    elif unit == "card":
        problems += too_long([(f"card line {i}", line, TEXT_MAX["sentence"]) for i, line in enumerate([*value[0], *value[1]])])
    else:
        problems += too_long([(f"{unit}[{i}]", f"{item.name}\n{item.text}", TEXT_MAX["item"]) for i, item in enumerate(value or [])])
    def denials(where: str, text: str) -> list[str]:
        return _denial_problems(where, text, view) if view is not None else []

    if unit == "summary":
        if not value:
            return ["summary is empty"]
        if lang == "zh" and not _has_cjk(value):
            problems.append("summary must be written in Simplified Chinese")
        return (problems + grounds.check_text("summary", value) + denials("summary", value)
                + _advisory_problems("summary", [value], view))
    if unit == "closing":
        return problems + grounds.check_text("closing", value) + denials("closing", value) if value else []
    if unit == "card":
        highlights, risks = value
        if not highlights:
            problems.append("card_highlights is empty")
        from ..llm.grounding import pr_refs

        for i, line in enumerate(highlights):
            problems += grounds.check_text(f"card_highlights[{i}]", line) + denials(f"card_highlights[{i}]", line)
            if not pr_refs(line):
                problems.append(f"card_highlights[{i}] names no PR (write it as #NUMBER)")
        for i, line in enumerate(risks):
            problems += grounds.check_text(f"card_risks[{i}]", line) + denials(f"card_risks[{i}]", line)
        return problems + (_card_risk_problems(risks, view) if view is not None else [])
    if not value:
        if unit == "risks" and view is not None and not view.risks:
            return []  # nothing was detected: the report says there are no notable risks, not a made-up one
        return [f"{unit} has no entries"]
    from ..llm.grounding import pr_refs

    for i, item in enumerate(value):
        where = f"{unit}[{i}]"
        problems += grounds.check_prs(where, item.prs)
        # an item's name says what its text is about: a trend's counts are its theme's
        problems += grounds.check_text(where, f"{item.name}\n{item.text}", context=item.name)
        problems += denials(where, f"{item.name}\n{item.text}")  # a risk or a recommendation may deny one too
        if unit in ("key_changes", "trends", "risks") and not item.prs and not pr_refs(item.text):
            problems.append(f"{where} cites no pull request of {grounds.span}")
    if unit == "risks" and view is not None:
        problems += _risk_section_problems(value, view)
    if unit == "recommendations":
        problems += _advisory_problems("recommendations[0]", [f"{value[0].name}\n{value[0].text}"], view)
    return problems
