"""The flow: source → (store) → analyze → aggregate → compose → render.

`generate_report` is the library entry point the CLI, the site builder and
the multi-repository runner all call.
"""

from __future__ import annotations

import time
from bisect import bisect_right
from collections.abc import Callable
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path

from .aggregate import build_facts
from .analysis.classify import classify
from .analysis.context import AnalysisContext, default_core_paths
from .analysis.risks import DIFF_GLOBS, week_risks
from .analysis.themes import WeekSample, build_themes
from .config import Settings
from .errors import UsageError
from .i18n import catalog
from .models import Report
from .registry import ENGINES, RENDERERS, SOURCES
from .window import Window

Progress = Callable[[str, int, int], None]
# Weeks before the report's week whose PRs are read in full (line counts) to calibrate sizes.
CALIBRATION_WEEKS = 4


class _Clock:
    """Wall time per stage, reported in the JSON `engine.timings_ms` (where the time goes)."""

    def __init__(self) -> None:
        self.laps: dict[str, float] = {}
        self._t = time.perf_counter()

    def lap(self, stage: str) -> None:
        now = time.perf_counter()
        self.laps[stage] = round((now - self._t) * 1000, 1)
        self._t = now


def resolve_target(target: str, source: str | None = None) -> tuple[str, str]:
    """`github:OWNER/REPO` → ("github", "OWNER/REPO"); a path → ("git", path)."""
    if ":" in target and not Path(target).exists():
        scheme, _, rest = target.partition(":")
        if scheme in SOURCES.names() and not (len(scheme) == 1 and rest.startswith(("\\", "/"))):
            return scheme, rest
    return (source or "git"), target


def _periods(window: Window, count: int) -> list[Window]:
    """The `count` windows of the same shape before `window`, oldest first."""
    if window.is_week:
        return [window.shifted(-k) for k in range(count, 0, -1)]
    span = window.end - window.start
    return [Window(window.start - span * k, window.end - span * k, window.tz, f"P-{k}") for k in range(count, 0, -1)]


def open_store_for(settings: Settings):
    from .store import open_store

    return open_store(settings.db or None, lazy=True)  # opens while the source is read


def generate_report(
    target: str,
    settings: Settings,
    window: Window,
    *,
    refresh: bool = False,
    progress: Progress | None = None,
    enrich_github: str | None = None,
    source_name: str | None = None,
    offline: bool = False,
    store=None,
    now: datetime | None = None,
) -> Report:
    """Build the weekly report for `target` (a clone path or `github:OWNER/REPO`)."""
    name, location = resolve_target(target, source_name)
    source_cls = SOURCES.get(name)
    engine_cls = ENGINES.get(settings.engine)
    if store is None and (getattr(engine_cls, "needs_store", False) or getattr(source_cls, "needs_store", False) or enrich_github):
        store = open_store_for(settings)
    source = source_cls(location, settings, store=store, offline=offline)
    try:
        return _generate(source, engine_cls, settings, window, store, refresh, progress, enrich_github, now, offline)
    finally:
        source.close()


def _generate(source, engine_cls, settings, window, store, refresh, progress, enrich_github, now, offline=False) -> Report:
    clock = _Clock()
    # OWNER/REPO from the flag or config, else the origin remote, else the folder name.
    repository = settings.name or source.repository_name() or "repository"
    cat = catalog(settings.language)
    project = repository.rsplit("/", 1)[-1].lower()

    source.prefetch_authors(window.start)
    periods = _periods(window, settings.baseline_weeks)
    calib_start = periods[-CALIBRATION_WEEKS].start if len(periods) >= CALIBRATION_WEEKS else window.start
    history_prs = list(source.history(Window(periods[0].start, window.end, window.tz, "history")))
    detailed = list(source.iter_pull_requests(Window(calib_start, window.end, window.tz, "calibration")))
    week_prs = sorted((p for p in detailed if window.contains(p.merged_at)), key=lambda p: p.merged_at)
    direct = source.direct_commits(window)
    clock.lap("read")
    if progress:
        progress("read", len(week_prs), len(week_prs))
    if enrich_github and week_prs:
        gh = SOURCES.get("github")(enrich_github, settings, store=store, offline=offline)
        try:
            gh.enrich(week_prs)
        finally:
            gh.close()
        source.warnings.extend(gh.warnings)

    classified = {p.number: classify(p, settings, project) for p in week_prs}
    buckets: dict[int, list] = {i: [] for i in range(len(periods))}
    starts = [w.start for w in periods]
    for p in history_prs:
        i = bisect_right(starts, p.merged_at) - 1
        if 0 <= i < len(periods) and periods[i].contains(p.merged_at):
            buckets[i].append(p)
    history = [
        WeekSample(w.label, buckets[i], {p.number: classify(p, settings, project) for p in buckets[i]})
        for i, w in enumerate(periods)
    ]
    week = WeekSample(window.label, week_prs, classified)
    themes = build_themes(week, history, settings, cat.term, cat.lang)
    clock.lap("classify")

    earlier = source.earlier_authors(window.start)
    first_time = None
    if earlier is not None:
        first_time = {
            p.author for p in week_prs
            if p.author.lower() not in earlier and (p.author_email or "").lower() not in earlier
        }
    calib = [p for p in detailed if p.lines_known and p.files]
    ctx = AnalysisContext(
        settings=settings,
        window=window,
        lang=settings.language,
        repository=repository,
        classified=classified,
        calibration_lines=sorted(p.lines for p in calib),
        calibration_files=sorted(len(p.files) for p in calib),
        core_paths=list(settings.core_paths) or default_core_paths(calib, project),
        diffs=source.read_diffs(week_prs, DIFF_GLOBS, settings.diff_max_bytes) if week_prs else {},
        themes=themes,
        first_time_authors=first_time or set(),
        source=source,
    )
    clock.lap("context")
    engine = engine_cls(settings, store=store, refresh=refresh, progress=progress)
    analyses = engine.analyze_all(week_prs, ctx)
    clock.lap("analyze")
    previous = periods[-1] if periods else None
    previous_detail = [p for p in detailed if previous.contains(p.merged_at)] if previous and previous.start >= calib_start else None
    facts = build_facts(
        repository=repository,
        window=window,
        settings=settings,
        catalog=cat,
        prs=week_prs,
        analyses=analyses,
        direct=direct,
        history=history,
        themes=themes,
        week_risks=week_risks(week_prs, classified, ctx),
        first_time=first_time,
        previous_detail=previous_detail,
    )
    facts.stats["core_paths"] = list(ctx.core_paths)
    clock.lap("aggregate")
    sections, card = engine.compose(facts)
    clock.lap("compose")
    info = {"name": engine.name, **engine.info()}
    info["timings_ms"] = clock.laps
    info["source"] = type(source).__name__
    if hasattr(source, "stats"):
        info["source_stats"] = dict(source.stats)
    report = Report(
        repository=repository,
        week=window.label,
        timezone=window.tz_name,
        start=window.start,
        end=window.end,
        lang=settings.language,
        threshold=settings.threshold,
        stats=facts.stats,
        pull_requests=week_prs,
        analyses=analyses,
        themes=themes,
        risks=facts.risks,
        sections=sections,
        card=card,
        engine=info,
        direct_commits=direct,
        warnings=list(source.warnings) + list(getattr(engine, "warnings", [])),
        generated_at=(now or datetime.now(timezone.utc)).replace(microsecond=0),
    )
    if store is not None and not getattr(source, "stores_itself", False):  # the github source upserts with sync metadata
        store.save_pull_requests(repository, week_prs, type(source).__name__)
    return report


def render_report(report: Report, fmt: str) -> str:
    """The report in one format (`md`, `json`, and any registered renderer)."""
    return RENDERERS.get(fmt)(report)


def output_name(report: Report, fmt: str) -> str:
    """`{owner}__{repo}-{YYYY}-W{WW}.{lang}.{ext}`."""
    ext = {"md": "md", "json": "json", "html": "html"}.get(fmt, f"{fmt}.json")
    safe = report.repository.replace("/", "__")
    return f"{safe}-{report.week}.{report.lang}.{ext}"


def with_language(settings: Settings, lang: str) -> Settings:
    if lang not in ("zh", "en"):
        raise UsageError(f"unknown language {lang!r}; valid: zh, en")
    return replace(settings, language=lang)


__all__ = ["generate_report", "render_report", "output_name", "resolve_target"]
