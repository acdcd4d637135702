"""The flow: source → (store) → analyze → aggregate → compose → render.

`generate_report` is the library entry point the CLI, the site builder and
the multi-repository runner all call.
"""

from __future__ import annotations

import time
from bisect import bisect_left
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from functools import lru_cache
from typing import Protocol

from .aggregate import build_facts
from .analysis.classify import Classified, classify
from .analysis.context import AnalysisContext, default_core_paths
from .analysis.risks import DIFF_LINES, files_to_read, week_risks, worth_reading
from .analysis.themes import WeekSample, build_themes
from .background import Background
from .config import Settings
from .i18n import catalog
from .models import Notice, PullRequest, Report
from .registry import ENGINES, RENDERERS, SOURCES
from .targets import needs_store, open_source, resolve_target
from .window import Window

Progress = Callable[[str, int, int], None]
# Weeks before the report's week whose PRs are read in full (line counts) to calibrate sizes.
CALIBRATION_WEEKS = 4
# Weeks read at a time by `generate_reports` (each part is read with its baseline).
PART_WEEKS = 52


class _Clock:
    """Wall time per stage, reported in the JSON `engine.timings_ms` (where the time goes)."""

    def __init__(self) -> None:
        self.laps: dict[str, float] = {}
        self._t = time.perf_counter()

    def lap(self, stage: str) -> None:
        now = time.perf_counter()
        self.laps[stage] = round((now - self._t) * 1000, 1)
        self._t = now


@lru_cache(maxsize=256)  # a backfill asks for each week's baseline in several places
def _periods(window: Window, count: int) -> tuple[Window, ...]:
    """The `count` windows of the same shape before `window`, oldest first."""
    if window.is_week:
        return tuple(window.shifted(-k) for k in range(count, 0, -1))
    span = window.end - window.start
    return tuple(Window(window.start - span * k, window.end - span * k, window.tz, f"P-{k}") for k in range(count, 0, -1))


def open_store_for(settings: Settings):
    from .store import open_store

    return open_store(settings.db or None, lazy=True)  # opens while the source is read


def _open(target: str, settings: Settings, source_name: str | None, offline: bool, store, enrich_github: str | None,
          engine=None, source=None):
    source_cls = type(source) if source is not None else SOURCES.get(resolve_target(target, source_name)[0])
    engine_cls = type(engine) if engine is not None else ENGINES.get(settings.engine)
    own_store = store is None and (needs_store(engine_cls) or needs_store(source_cls) or bool(enrich_github))
    if own_store:
        store = open_store_for(settings)
    if source is None:
        try:
            source = open_source(target, settings, source_name=source_name, offline=offline, store=store)
        except BaseException:
            _close_own(store, own_store)  # a source that cannot be opened leaves no store open
            raise
    return source, engine_cls, store


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
    engine=None,
) -> Report:
    """Build the weekly report for `target` (a clone path or `github:OWNER/REPO`).
    `engine` replaces the configured engine (an instance, e.g. one that only
    collects the requests a model would be sent)."""
    own_store = store is None
    source, engine_cls, store = _open(target, settings, source_name, offline, store, enrich_github, engine)
    reader = source
    try:
        clock = _Clock()
        # The engine first: a missing key or endpoint is an error before any reading.
        if engine is None:
            engine = engine_cls(settings, store=store, refresh=refresh, progress=progress)
        source.remember(refresh)
        source.prefetch_authors(window.start)
        # Read as of the week's end (as a backfill reads each part), while everyone who
        # committed before the week still comes from the whole clone.
        reader = source.as_of(window.end)
        span = read_span(reader, settings, window, window, store=store, enrich_github=enrich_github, offline=offline)
        clock.lap("read")
        if progress:
            progress("read", len(span.week(window)), len(span.week(window)))
        earlier = source.earlier_authors(window.start)
        return build_week(span, engine, window, store=store, now=now, clock=clock,
                          earlier_authors=earlier, diffs=None)
    finally:
        if reader is not source:
            reader.close()
        source.close()
        _close_own(store, own_store)


def _close_own(store, own: bool) -> None:
    """Close a store this run opened: a SQLite file's WAL is written back into it on
    close, so that the file alone holds the data (a copy, a CI artifact)."""
    if own and store is not None:
        store.close()


def generate_reports(
    target: str,
    settings: Settings,
    windows: list[Window],
    *,
    refresh: bool = False,
    progress: Progress | None = None,
    enrich_github: str | None = None,
    source_name: str | None = None,
    offline: bool = False,
    store=None,
    now: datetime | None = None,
    source=None,
    delegate: Delegate | None = None,
):
    """Reports for many weeks from one read of the history (backfill). Yields
    `Report`s oldest first; trends come from the same in-memory history. `source`:
    one already opened (and indexed) to use instead of opening `target`.
    `delegate`: offered the weeks still to do, it may take a tail of them over
    (see `Delegate`); their reports are then not yielded here.

    A source that can be read in parts (`view`, the git source) is read
    `PART_WEEKS` weeks at a time, each part with its baseline, while the previous
    part's reports are built: memory stays that of one part, however long the
    history, and git works while Python builds. Other sources are read at once."""
    if not windows:
        return
    windows = sorted(windows, key=lambda w: w.start)
    own_store = store is None
    source, engine_cls, store = _open(target, settings, source_name, offline, store, enrich_github, source=source)
    try:
        engine = engine_cls(settings, store=store, refresh=refresh, progress=None)
        parts = [windows]  # other sources (an API and its store) are read once, as before
        if hasattr(source, "view"):
            parts = [windows[i:i + PART_WEEKS] for i in range(0, len(windows), PART_WEEKS)]
        views: list = [source] * len(parts)
        if hasattr(source, "view"):  # each part ends where its weeks do, not at the branch head
            tips = source.mainline_tips([p[-1].end for p in parts])
            views = [source.view(t) if t else None for t in tips]  # None: nothing was merged yet
        first_seen = Background(source.author_first_seen)
        pending = Background(_read_part, views[0], settings, parts[0], store, enrich_github, offline, source)
        done = k = 0
        while k < len(parts):
            span, diffs = pending.result()
            seen = first_seen.result()
            # No thread runs here: a delegate may fork a process that reads later parts itself.
            if delegate is not None and k + 1 < len(parts):
                del parts[len(parts) - delegate.give_parts(parts[k + 1:]):]
            last = k + 1 == len(parts)
            if not last:  # the next part is read while this one is built, from where this one ends
                pending = Background(_read_part, views[k + 1], settings, parts[k + 1], store, enrich_github, offline,
                                      source, views[k] if views[k] is not source else None)

            def build(w: Window, span=span, diffs=diffs, seen=seen) -> Report:
                earlier = _SeenBefore(seen, w.start) if seen is not None else None
                return build_week(span, engine, w, store=store, now=now, clock=_Clock(), earlier_authors=earlier,
                                  diffs=diffs)

            todo = list(parts[k])
            while todo:
                yield build(todo.pop(0))
                done += 1
                if progress:
                    progress("weeks", done, len(windows))
                if delegate is not None and last and todo:  # a process forked here builds from this span
                    del todo[len(todo) - delegate.give_weeks(todo, build):]
            if views[k] not in (None, source):
                views[k].close()
            views[k] = None  # let the part's history go before the next one is read
            del span, diffs, build
            k += 1
    finally:
        source.close()
        _close_own(store, own_store)


class Delegate(Protocol):
    """Takes work over from `generate_reports` (the backfill's idle cores). Each method
    returns how many trailing items it took; it is called only while no thread of
    `generate_reports` runs, so it may fork."""

    def give_parts(self, parts: list[list[Window]]) -> int:
        """Offered the parts not read yet (weeks per part, in order)."""

    def give_weeks(self, weeks: list[Window], build: Callable[[Window], Report]) -> int:
        """Offered the rest of the last part, read already: `build` makes a week's report."""


def _read_part(source, settings: Settings, part: list[Window], store, enrich_github: str | None,
               offline: bool, whole=None, previous=None) -> tuple[Span, dict[int, str]]:
    """The span of `part` (its weeks and their baseline) and the diffs its detectors need;
    `source` None: the part ends before the first commit (`whole` is the clone).
    `previous`: the view of the part before, read already (its last weeks are this
    part's baseline)."""
    from concurrent.futures import ThreadPoolExecutor

    if source is None:  # its weeks, and so their baselines, all end before the repository begins
        return Span(whole, settings, settings.name or whole.repository_name() or "repository", [], [],
                    _calibration_start(_periods(part[0], settings.baseline_weeks), part[0]), part[-1].end), {}

    # Everything but the diffs first (the diffs need the paths), in one pass where the
    # source can: a run of weeks needs the line counts of nearly every commit.
    start = span_start(part[0], settings)
    if hasattr(source, "preload"):
        # The detectors' diffs come with the line counts (`preload`): one diff of each blob.
        source.preload(start, _calibration_start(_periods(part[0], settings.baseline_weeks), part[0]), previous,
                       diff_files=worth_reading, diff_lines=DIFF_LINES)
    else:
        list(source.history(Window(start, part[-1].end, part[0].tz, "history")))
    with ThreadPoolExecutor(1) as pool:
        pending = pool.submit(_span_diffs, source, settings, part)
        span = read_span(source, settings, part[0], part[-1], store=store, enrich_github=enrich_github,
                         offline=offline)
        return span, pending.result()


def _span_diffs(source, settings: Settings, windows: list[Window]) -> dict[int, str]:
    prs = list(source.history(Window(windows[0].start, windows[-1].end, windows[0].tz, "diffs")))
    return read_diffs(source, prs, settings)


def read_diffs(source, prs: list[PullRequest], settings: Settings) -> dict[int, str]:
    """The diffs detectors need, for all `prs` in one source call."""
    paths = {pr.number: files for pr in prs if (files := files_to_read(pr))}
    return source.read_diffs(prs, paths, settings.diff_max_bytes, lines=DIFF_LINES) if paths else {}


class _SeenBefore:
    """`author in seen` ⇔ the author committed before `when` (from first-seen times)."""

    def __init__(self, first_seen: dict[str, datetime], when: datetime) -> None:
        self.first_seen, self.when = first_seen, when

    def __contains__(self, key: str) -> bool:
        t = self.first_seen.get(key)
        return t is not None and t < self.when


class Span:
    """What a source said about a run of weeks, read once: every PR (paths for the
    baseline, line counts from the calibration weeks on), direct commits, and a
    cache of each PR's classification."""

    def __init__(self, source, settings: Settings, repository: str, prs: list[PullRequest], direct: list,
                 detail_start: datetime, began: datetime | None = None) -> None:
        self.source = source
        self.began = began  # the repository's first commit, when read (see `baseline`)
        self.settings = settings
        self.repository = repository
        self.project = repository.rsplit("/", 1)[-1].lower()
        self.catalog = catalog(settings.language)
        self.prs = sorted(prs, key=lambda p: p.merged_at)
        self.direct = direct
        self.detail_start = detail_start
        self._classified: dict[int, Classified] = {}
        self._lines: dict[int, int] = {}  # line counts, summed once per PR
        self.core_dirs: dict = {}  # each PR's share of `default_core_paths`
        self._samples: dict[tuple, WeekSample] = {}
        self._times = [p.merged_at for p in self.prs]
        # The direct commits' positions by commit time: a week's are found by bisection, as
        # its PRs are (a scan of every direct commit per week was 14 % of flask's backfill).
        self._direct_order = sorted(range(len(direct)), key=lambda i: direct[i].committed_at)
        self._direct_times = [direct[i].committed_at for i in self._direct_order]

    def between(self, start: datetime, end: datetime) -> list[PullRequest]:
        return self.prs[bisect_left(self._times, start):bisect_left(self._times, end)]

    def week(self, window: Window) -> list[PullRequest]:
        return self.between(window.start, window.end)

    def direct_between(self, window: Window) -> list:
        """The direct commits of `window` (`Window.contains`), in the source's order."""
        times = self._direct_times
        found = self._direct_order[bisect_left(times, window.start):bisect_left(times, window.end)]
        return [self.direct[i] for i in sorted(found)]

    def classified(self, pr: PullRequest) -> Classified:
        c = self._classified.get(pr.number)
        if c is None:
            c = self._classified[pr.number] = classify(pr, self.settings, self.project)
        return c

    def lines(self, pr: PullRequest) -> int:
        n = self._lines.get(pr.number)
        if n is None:
            n = self._lines[pr.number] = pr.lines
        return n

    def baseline(self, window: Window) -> tuple[Window, ...]:
        """The periods a report of `window` compares with: the `baseline_weeks` before it,
        less those that ended before the repository's first commit (a young repository's
        week is "the most of any week in the last 4", not of 13 with 9 it did not exist)."""
        periods = _periods(window, self.settings.baseline_weeks)
        return tuple(p for p in periods if p.end > self.began) if self.began is not None else periods

    def sample(self, window: Window) -> WeekSample:
        key = (window.start, window.end)
        s = self._samples.get(key)
        if s is None:
            prs = self.week(window)
            s = self._samples[key] = WeekSample(window.label, prs, {p.number: self.classified(p) for p in prs})
        return s


def _calibration_start(periods: tuple[Window, ...], first: Window) -> datetime:
    """Where line counts are read from: `CALIBRATION_WEEKS` before `first` (its `periods`)."""
    return periods[-CALIBRATION_WEEKS].start if len(periods) >= CALIBRATION_WEEKS else first.start


def span_start(first: Window, settings: Settings) -> datetime:
    """Where the history a report of `first` needs begins (its baseline weeks)."""
    periods = _periods(first, settings.baseline_weeks)
    return periods[0].start if periods else first.start


def read_span(source, settings: Settings, first: Window, last: Window, *, store=None,
              enrich_github: str | None = None, offline: bool = False) -> Span:
    """Read everything the reports of `first` … `last` need, in as few source calls as possible."""
    periods = _periods(first, settings.baseline_weeks)
    hist_start = span_start(first, settings)
    calib_start = _calibration_start(periods, first)
    tz = first.tz
    source.require(first if first is last else Window(first.start, last.end, tz, f"{first.label}..{last.label}"))
    prs = {p.number: p for p in source.history(Window(hist_start, last.end, tz, "history"))}
    # Line counts only from the calibration weeks on: blob diffs are the expensive part of reading git.
    for p in source.iter_pull_requests(Window(calib_start, last.end, tz, "detail")):
        prs[p.number] = p
    # Direct commits from the week before the first: its lines are compared with the first's.
    direct = source.direct_commits(Window(periods[-1].start if periods else first.start, last.end, tz, "span"))
    repository = settings.name or _github_name(enrich_github) or source.repository_name() or "repository"
    span = Span(source, settings, repository, list(prs.values()), direct, calib_start, source.began())
    if enrich_github:
        enrich = [p for p in span.prs if p.merged_at >= first.start]
        if enrich:
            gh = SOURCES.get("github")(enrich_github, settings, store=store, offline=offline)
            try:
                gh.enrich(enrich)
            finally:
                gh.close()
            source.warnings.extend(gh.warnings)
    return span


def _github_name(enrich_github: str | None) -> str | None:
    """The OWNER/REPO that `--github` names: what the report is of, when `--name` is not given."""
    if not enrich_github:
        return None
    from .sources.github import parse_repository

    return parse_repository(enrich_github)


def _in_progress(window: Window, now: datetime, cat) -> list[str]:
    """The warning of a report whose period has not ended (`--week this`): its figures are so far."""
    if window.end <= now:
        return []
    return [cat.period("in_progress", window.range_days, end=f"{window.end.astimezone(window.tz):%Y-%m-%d %H:%M}",
                       tz=window.tz_name, now=f"{now.astimezone(window.tz):%Y-%m-%d %H:%M}")]


def _stale(source, window: Window, changed: list, cat) -> list[str]:
    """The warning of an empty period after a clone's newest commit by more than a week:
    a clone nobody pulled reads as a project gone quiet (a weekly job would post empty
    reports for months)."""
    if changed:
        return []
    newest = source.newest_commit()
    if newest is None or newest >= window.start - timedelta(days=7):
        return []
    params = {"date": f"{newest.astimezone(window.tz):%Y-%m-%d}", "days": (window.start - newest).days}
    # A Notice: a backfill says the weeks after the clone's newest commit once (`said_once`).
    return [Notice(cat.t("warnings.stale", **params), "stale", period=window.label, **params)]


def said_once(warnings: list[str], language: str) -> list[str]:
    """The reports' warnings, with the weeks after a clone's newest commit said in one
    warning instead of one per week ("… 10 days before this period", "… 17 days …", …)."""
    stale = sorted((w for w in warnings if isinstance(w, Notice) and w.key == "stale"), key=lambda w: w.params["period"])
    if len(stale) < 2:
        return warnings
    said = catalog(language).t("warnings.stale_weeks", date=stale[0].params["date"], count=len(stale),
                               first=stale[0].params["period"], last=stale[-1].params["period"])
    return [said if w is stale[0] else w for w in warnings if w is stale[0] or w not in stale]


def _worded(warning: str, cat) -> str:
    """A warning in the report's language, when its catalog words it."""
    if isinstance(warning, Notice) and cat.get("warnings", warning.key) is not None:
        return cat.t(f"warnings.{warning.key}", **warning.params)
    return str(warning)


def build_week(span: Span, engine, window: Window, *, store=None, now: datetime | None = None,
               clock: _Clock | None = None, earlier_authors: set[str] | _SeenBefore | None = None,
               diffs: dict[int, str] | None = None) -> Report:
    """The report of one week from a span that covers it and its baseline."""
    clock = clock or _Clock()
    settings, cat, source = span.settings, span.catalog, span.source
    periods = span.baseline(window)
    week_prs = span.week(window)
    classified = {p.number: span.classified(p) for p in week_prs}
    history = [span.sample(w) for w in periods]
    themes = build_themes(WeekSample(window.label, week_prs, classified), history, settings, cat.term, cat.lang)
    clock.lap("classify")

    direct = span.direct_between(window)
    # The same authors as the week's contributors: PR authors and direct committers.
    first_time = None
    if earlier_authors is not None:
        from .aggregate import people

        # a person is new when none of the names or addresses they went by this week is known
        known = {p.author for p in [*week_prs, *direct]
                 if p.author.lower() in earlier_authors or (p.author_email or "").lower() in earlier_authors}
        first_time = {names[0] for names in people([*week_prs, *direct]) if not known.intersection(names)}
    calib_start = _calibration_start(_periods(window, settings.baseline_weeks), window)
    calib = [p for p in span.between(calib_start, window.end) if p.lines_known and p.files]
    if diffs is None:
        diffs = read_diffs(source, week_prs, settings)
    ctx = AnalysisContext(
        settings=settings,
        window=window,
        lang=settings.language,
        repository=span.repository,
        classified=classified,
        calibration_lines=sorted(span.lines(p) for p in calib),
        calibration_files=sorted(len(p.files) for p in calib),
        core_paths=list(settings.core_paths) or default_core_paths(calib, span.project, cache=span.core_dirs),
        diffs={p.number: diffs[p.number] for p in week_prs if p.number in diffs},
        themes=themes,
        first_time_authors=first_time or set(),
        source=source,
    )
    clock.lap("context")
    analyses = engine.analyze_all(week_prs, ctx)
    clock.lap("analyze")
    previous = periods[-1] if periods else None
    previous_detail = None  # the week before, when its line counts were read
    if previous and previous.start >= span.detail_start:
        previous_detail = (span.week(previous), span.direct_between(previous))
    facts = build_facts(
        repository=span.repository,
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
    generated = (now or datetime.now(UTC)).replace(microsecond=0)
    report = Report(
        repository=span.repository,
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
        warnings=_in_progress(window, generated, cat) + _stale(source, window, week_prs or direct, cat)
        + [_worded(w, cat) for w in [*source.warnings, *getattr(engine, "warnings", [])]],
        generated_at=generated,
    )
    # the github source upserts with sync metadata; a store opened read-only keeps nothing
    if store is not None and not getattr(source, "stores_itself", False) and not store.read_only:
        store.save_pull_requests(span.repository, week_prs, source.name or type(source).__name__)
    return report


def warm_up(sources: set[str], engines: set[str], formats: set[str], languages: set[str]) -> None:
    """Import and load what reports of these kinds need, once, before a process forks its
    workers, so each does not: modules, message catalogs, and compiled templates (the
    first Markdown render of a process costs more than the rendering itself)."""
    from . import serialize  # noqa: F401

    for name in sources:  # resolved names (`resolve_target`), not targets
        SOURCES.get(name)
    for name in engines:
        ENGINES.get(name)
    for fmt in formats:
        RENDERERS.get(fmt)
    for lang in languages:
        catalog(lang)
    from .compose import compose_offline  # noqa: F401 - engines import it at their first composition

    if "md" in formats:
        from .render import template_environment

        template_environment().get_template("report.md.j2")
    if "html" in formats:
        from .render.html import environment

        environment().get_template("report.html.j2")


def render_report(report: Report, fmt: str) -> str:
    """The report in one format (`md`, `json`, and any registered renderer)."""
    return RENDERERS.get(fmt)(report)


def output_name(report: Report, fmt: str) -> str:
    """`{owner}__{repo}-{YYYY}-W{WW}.{lang}.{ext}`."""
    ext = {"md": "md", "json": "json", "html": "html"}.get(fmt, f"{fmt}.json")
    safe = report.repository.replace("/", "__")
    return f"{safe}-{report.week}.{report.lang}.{ext}"


__all__ = ["generate_report", "generate_reports", "render_report", "output_name", "resolve_target"]
