"""The archive site: a static folder of weekly HTML reports, one index, a trends page per repository.

`build_site(target, settings, out, weeks=12)` generates the reports of the last
`weeks` complete weeks (or the weeks up to `until_week`) with the pipeline's
`generate_reports` (one read of the history for all of them), and writes:

    OUT/index.html                  every repository in the folder, with its weeks
    OUT/site.json                   the manifest the indexes are built from
    OUT/OWNER/REPO/index.html       the repository's weeks
    OUT/OWNER/REPO/trends.html      merged PRs and top themes over the archived weeks
    OUT/OWNER/REPO/2026-W26.html    each week's standalone report (with site navigation)
    OUT/OWNER/REPO/2026-W26.json    the same report as JSON (for `repobrief publish`)

Every link is relative, so the folder can be served from any path, opened from
disk, or pushed to a GitHub Pages branch. Running it again for another
repository, or for later weeks, adds to the manifest instead of replacing it.
A site is in one language and one time zone (its weeks must line up), both
recorded in the manifest. A run writes all its files or none (site.json last),
so a full disk or an unwritable folder leaves the site as it was and running
again works.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from markupsafe import Markup

from .config import Settings
from .errors import RepobriefError, UsageError
from .models import Report
from .output import check_out_folder, read_json, write_atomically
from .render import charts
from .render.html import environment, last_day, page_assets, render_page
from .render.json import inert_json
from .stopping import signals_deferred
from .window import Window

MANIFEST = "site.json"
MANIFEST_VERSION = 1
TREND_THEMES = 5
_SAFE_PART = re.compile(r"[^A-Za-z0-9._-]+")


@dataclass
class SiteResult:
    out: Path
    repository: str
    weeks: list[str]
    pages: list[Path] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)  # the reports' warnings (a shallow clone, …), each once


def repo_dir(repository: str) -> tuple[str, str]:
    """OWNER/REPO as two safe path parts (a name without an owner goes under `local/`)."""
    owner, _, repo = repository.rpartition("/")
    parts = []
    for p in (owner or "local", repo):
        p = _SAFE_PART.sub("-", p).strip(".-") or "repository"
        parts.append(p)
    return parts[0], parts[1]


def _free_path(manifest: dict, repository: str) -> str:
    """The folder of a repository new to the site: OWNER/REPO made safe, with a number
    added when another repository's name made the same folder ("a b" and "a-b")."""
    owner, repo = repo_dir(repository)
    used = {e.get("path") for e in manifest["repositories"].values()}
    path, n = f"{owner}/{repo}", 1
    while path in used:
        n += 1
        path = f"{owner}/{repo}-{n}"
    return path


def week_windows(last: Window, weeks: int) -> list[Window]:
    """`weeks` consecutive windows ending with `last`, oldest first."""
    if weeks < 1 or weeks > 520:
        raise UsageError(f"--weeks {weeks} is out of range; give a whole number from 1 to 520")
    windows = [last.shifted(-i) for i in range(weeks - 1, -1, -1)]
    from .window import YEARS

    fits = [w for w in windows if int(w.label[:4]) >= YEARS[0]]  # an ISO year: 1970-W01 starts on 1969-12-29
    if len(fits) < len(windows):
        raise UsageError(f"--weeks {weeks} up to {last.label} reaches back to {windows[0].label}, before the years "
                         f"repobrief reports on ({YEARS[0]}–{YEARS[1]})", f"give --weeks {len(fits)} or fewer")
    return windows


def build_site(
    target: str,
    settings: Settings,
    out: str | Path,
    *,
    weeks: int = 12,
    until_week: str | None = None,
    now: datetime | None = None,
    generate: Callable[[str, Settings, list[Window]], Iterable[Report]] | None = None,
    progress: Callable[[str], None] | None = None,
    backend: str | None = None,
    written: Callable[[SiteResult], None] | None = None,
    workers: int | None = None,
    rendered: Callable[[str], None] | None = None,
) -> SiteResult:
    """Generate the weekly reports of `target` and write (or extend) the site in `out`.

    `progress` is called with each week's label once its report is built, `rendered`
    once its page is (in memory: nothing is written before every page is rendered);
    `written` once the files are in place, even when a stop (Ctrl-C, SIGTERM) that
    came during the write is raised right after it. The pages are rendered by
    `workers` processes (default: one per CPU) when there are enough of them."""
    from .pipeline import said_once
    from .window import WEEK_FORMS, parse_timezone, refuse_empty, week_or_last

    if generate is None:
        # Every week from one read of the history, not one read per week.
        from .pipeline import generate_reports

        generate = generate_reports
    refuse_empty("--until-week", until_week, WEEK_FORMS)
    out = Path(out)
    check_out_folder(out)
    manifest = _read_manifest(out)
    site_lang = manifest.get("lang") or next((e.get("lang") for e in manifest["repositories"].values()), None)
    if site_lang and site_lang != settings.language and "language" not in settings.given:
        # A run that asks for no language (no --lang, no config's or environment's) takes the site's.
        settings = dataclasses.replace(settings, language=site_lang)
    if site_lang and site_lang != settings.language:
        # The index, the trends pages and the week summaries are in the site's language.
        raise UsageError(
            f"the site in {str(out)!r} is in {site_lang!r}; a report in {settings.language!r} would mix languages on its pages",
            f"run with --lang {site_lang}, or give another --out for a {settings.language!r} site",
        )
    settings = _in_site_timezone(settings, out, manifest)
    tz = parse_timezone(settings.timezone)
    last = week_or_last(until_week, tz, now or datetime.now(tz), "--until-week")
    windows = week_windows(last, weeks)

    reports: list[Report] = []
    for r in generate(target, settings, windows):
        reports.append(r)
        if progress:
            progress(r.week)
    repository = reports[-1].repository
    entry = manifest["repositories"].get(repository)
    if entry is None:
        entry = manifest["repositories"][repository] = {"path": _free_path(manifest, repository), "weeks": {}}
    folder = out / entry["path"]
    manifest["lang"] = entry["lang"] = reports[-1].lang
    manifest["timezone"] = entry["timezone"] = settings.timezone
    for r in reports:
        entry["weeks"][r.week] = _week_summary(r)
    _complete_summaries(entry, folder)

    result = SiteResult(out, repository, [r.week for r in reports],
                        warnings=said_once(list(dict.fromkeys(w for r in reports for w in r.warnings)), settings.language))
    all_weeks = sorted(entry["weeks"])
    t = _strings(settings.language)
    from .serialize import report_to_dict

    def page(r: Report) -> tuple[Report, list[tuple[str, str]]]:
        i = all_weeks.index(r.week)
        nav = [(t["index"], "../../index.html"), (repository, "index.html"), (t["trends"], "trends.html")]
        if i > 0:
            nav.append((f"← {all_weeks[i - 1]}", f"{all_weeks[i - 1]}.html"))
        if i + 1 < len(all_weeks):
            nav.append((f"{all_weeks[i + 1]} →", f"{all_weeks[i + 1]}.html"))
        return r, nav

    # Every file of the run, written at the end all together; site.json goes last.
    files: dict[Path, str] = {}
    for r in reports:
        files[folder / f"{r.week}.json"] = inert_json(json.dumps(report_to_dict(r), ensure_ascii=False, indent=2)) + "\n"
    pages = [page(r) for r in reports]
    # Weeks archived earlier next to the new ones need their previous/next links updated;
    # they are rendered again from their saved JSON.
    new_weeks = {r.week for r in reports}
    for week in _neighbours(all_weeks, new_weeks):
        saved = folder / f"{week}.json"
        if saved.is_file():
            pages.append(page(_saved_report(saved)))
    for week, text in _render_pages(pages, backend, workers, rendered, new_weeks):
        files[folder / f"{week}.html"] = text

    env = environment()
    assets = page_assets(env)
    lang = settings.language
    html_lang = "zh-CN" if lang == "zh" else "en"
    week_rows = _week_rows(entry)
    common = {"t": t, "html_lang": html_lang, **assets}
    files[folder / "index.html"] = env.get_template("site_repo.html.j2").render(
        name=repository, weeks=week_rows, nav=[(t["index"], "../../index.html")], **common
    )
    files[folder / "trends.html"] = env.get_template("site_trends.html.j2").render(
        title=t["trends_title"].format(repository=repository, count=len(all_weeks)),
        charts=_trend_charts(entry, t, backend),
        weeks=week_rows,
        nav=[(t["index"], "../../index.html"), (repository, "index.html")],
        **common,
    )
    files[out / "index.html"] = env.get_template("site_index.html.j2").render(
        repositories=_repo_rows(manifest), nav=[], **common
    )
    files[out / MANIFEST] = json.dumps(manifest, ensure_ascii=False, indent=2, sort_keys=True) + "\n"
    result.pages.extend(p for p in files if p.suffix == ".html")
    _write_site(files, [folder, folder.parent, out], (lambda: written(result)) if written else None)
    return result


# Fewer pages than this per process are not worth a fork.
MIN_PAGES_PER_WORKER = 2


@dataclasses.dataclass
class _PageFailed:
    week: str
    error: str


def _render_pages(pages: list[tuple[Report, list[tuple[str, str]]]], backend: str | None, workers: int | None,
                  rendered: Callable[[str], None] | None, counted: set[str]) -> list[tuple[str, str]]:
    """(week, HTML) of each page, in order. matplotlib draws a week's four charts in
    ≈ 0.7 s, most of a site's time (the plain SVG drawer's page takes 5 ms): its pages
    are drawn in processes forked from this one (they inherit the reports and the
    imported modules), unless another thread is running (a fork would copy its locks
    mid-work) or there is no `fork`. `rendered` hears of each week in `counted` as its
    page is done."""
    import threading

    def work(job: tuple[Report, list[tuple[str, str]]]) -> tuple[str, str]:
        return job[0].week, render_page(job[0], nav=job[1], backend=backend)

    def done(result) -> None:
        if rendered is not None and not isinstance(result, _PageFailed) and result[0] in counted:
            rendered(result[0])

    n = min(workers or os.cpu_count() or 1, len(pages) // MIN_PAGES_PER_WORKER) if charts.uses_matplotlib(backend) else 1
    if n <= 1 or not hasattr(os, "fork") or threading.active_count() > 1:
        out = []
        for job in pages:
            out.append(work(job))
            done(out[-1])
        return out
    from .executors import worker_started
    from .forkpool import ForkPool

    charts.warm(backend)  # matplotlib imported once, here: the workers share it
    results = ForkPool(pages, work, lambda job, e: _PageFailed(job[0].week, f"{type(e).__name__}: {e}"), done,
                       worker_started=worker_started).run(n)
    for r in results:
        if isinstance(r, _PageFailed):
            raise RepobriefError(f"the page of {r.week} could not be rendered ({r.error}); nothing was written",
                                 "run again with --workers 1 to see the error")
    return results


# --------------------------------------------------------------------------- helpers


def _strings(lang: str) -> dict[str, str]:
    from .i18n import catalog

    return dict(catalog(lang).m["site"])


def _write_site(files: dict[Path, str], folders: list[Path], done: Callable[[], None] | None = None) -> None:
    """Write `files` all or none, then call `done`. Of `folders` (innermost first), those
    that a failed write created are removed again: a folder left holding only empty
    folders and no site.json would be refused as "not a repobrief site" by the next run.

    A stop (Ctrl-C, SIGTERM) that comes during the write takes effect after it
    (`write_atomically` waits for it), and is held here until `done` has run: the
    command can then say that the site was written, not that it was left as it was."""
    new = [d for d in folders if not d.exists()]
    with signals_deferred():
        try:
            write_atomically(files)
        except BaseException:  # a failed write, or a stop raised by what it called
            for d in new:
                with contextlib.suppress(OSError):
                    d.rmdir()
            raise
        if done is not None:
            done()


def _read_manifest(out: Path) -> dict:
    path = out / MANIFEST
    rebuild = f"delete it and run `repobrief site` again: it is rebuilt from the weeks' JSON files in {str(out)!r}"
    if not path.exists():
        # Hidden entries (a gh-pages checkout's .git, .nojekyll) do not make a folder "used".
        if out.is_dir() and any(not p.name.startswith(".") for p in out.iterdir()):
            manifest = _rebuilt_manifest(out)
            if manifest is None:
                raise UsageError(
                    f"--out {str(out)!r} is not empty and has no {MANIFEST}; it is not a repobrief site",
                    "give an empty or new folder, or the folder of an earlier `repobrief site` run",
                )
            return manifest
        return {"version": MANIFEST_VERSION, "repositories": {}}
    data = read_json(path, rebuild)
    problem = _manifest_problem(data)
    if problem:
        raise UsageError(f"{str(path)!r} is damaged: {problem}", rebuild)
    for entry in data["repositories"].values():
        for week, summary in entry["weeks"].items():
            if _summary_problem(summary):  # written again from the week's own JSON
                saved = out / entry["path"] / f"{week}.json"
                try:
                    entry["weeks"][week] = _week_summary(_saved_report(saved))
                except OSError as e:
                    raise UsageError(f"{str(path)!r} is damaged: the summary of {week} is broken, and "
                                     f"{str(saved)!r} cannot be read ({e.strerror})", rebuild) from None
    return data


# A repository's folder as `_free_path` makes it: two parts, neither hidden (no `..`).
_SITE_PATH = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9._-]*/[A-Za-z0-9_-][A-Za-z0-9._-]*")
_WEEK_FILE = re.compile(r"\d{4}-W\d{2}")


def _manifest_problem(data: object) -> str | None:
    """What makes a manifest unusable (a hand edit, a bad merge of a gh-pages branch), or
    None. A repository's folder must stay inside the site; a week's summary that is
    broken is not a problem here: it is written again from the week's JSON."""
    if not isinstance(data, dict) or not isinstance(data.get("repositories"), dict):
        return "it has no `repositories` table"
    for name, entry in data["repositories"].items():
        where = f"repositories[{name!r}]"
        if not isinstance(entry, dict):
            return f"{where} is not a table"
        if not isinstance(entry.get("path"), str) or not _SITE_PATH.fullmatch(entry["path"]):
            return f"{where}.path is {entry.get('path')!r}, not a folder OWNER/REPO inside the site"
        if not isinstance(entry.get("weeks"), dict):
            return f"{where}.weeks is not a table of weeks"
        bad = next((w for w in entry["weeks"] if not _WEEK_FILE.fullmatch(w)), None)
        if bad is not None:
            return f"{where}.weeks has {bad!r}, not a week like 2026-W26"
    return None


def _summary_problem(summary: object) -> bool:
    if not isinstance(summary, dict):
        return True
    if not isinstance(summary.get("dates"), str) or not isinstance(summary.get("merged_prs"), int):
        return True
    if not isinstance(summary.get("top_themes"), list):
        return True
    # the counts of older sites may be missing (see _complete_summaries), not of another shape
    return any(k in summary and not isinstance(summary[k], dict) for k in ("by_theme", "theme_keys", "by_type", "by_module"))


def _rebuilt_manifest(out: Path) -> dict | None:
    """The manifest of a site whose site.json was deleted, from the weeks' JSON files
    (OUT/OWNER/REPO/2026-W26.json); None when the folder holds none."""
    manifest: dict = {"version": MANIFEST_VERSION, "repositories": {}}
    for saved in sorted(out.glob("*/*/*.json")):
        folder = saved.parent.relative_to(out).as_posix()
        if not _WEEK_FILE.fullmatch(saved.stem) or not _SITE_PATH.fullmatch(folder):
            continue
        r = _saved_report(saved)
        entry = manifest["repositories"].setdefault(r.repository, {"path": folder, "weeks": {}})
        if entry["path"] != folder:
            raise UsageError(f"the weeks of {r.repository} are in two folders of {str(out)!r}: {entry['path']} and {folder}",
                             "remove the one that is not wanted, then run `repobrief site` again")
        entry["weeks"][r.week] = _week_summary(r)
        manifest["lang"] = entry["lang"] = r.lang
        manifest["timezone"] = entry["timezone"] = r.timezone
    return manifest if manifest["repositories"] else None


def _saved_report(path: Path) -> Report:
    """An archived week's report, read back from its JSON to render its page again."""
    from .serialize import report_from_dict

    data = read_json(path, "delete it, then run `repobrief site` again for that week")
    return report_from_dict(data, where=repr(str(path)))


def _same_weeks(a: str, b: str) -> bool:
    """Whether weeks in the time zones `a` and `b` start at the same instants: the same
    zone however it is written (`asia/shanghai`, `PRC`), or one with the same rules from
    1970 to 2100."""
    from datetime import UTC, timedelta

    from .window import parse_timezone

    za, zb = parse_timezone(a), parse_timezone(b)
    if za.key == zb.key:
        return True
    monday = datetime(1970, 1, 5)
    while monday.year < 2100:
        if monday.replace(tzinfo=za).astimezone(UTC) != monday.replace(tzinfo=zb).astimezone(UTC):
            return False
        monday += timedelta(days=7)
    return True


def _in_site_timezone(settings: Settings, out: Path, manifest: dict) -> Settings:
    """`settings` with the site's time zone: the weeks of a site must line up, so a run
    that names none takes the site's, and one that names another is refused."""
    site_tz = _site_timezone(out, manifest)
    if site_tz is None:
        return dataclasses.replace(settings, timezone=settings.timezone or "UTC")
    if not settings.timezone or _same_weeks(settings.timezone, site_tz):
        return dataclasses.replace(settings, timezone=site_tz)
    if settings.timezone != site_tz:
        raise UsageError(
            f"the site in {str(out)!r} has its weeks in the time zone {site_tz!r}; weeks in {settings.timezone!r} "
            "would not line up with them (hours between weeks missing or counted twice)",
            f"run with --tz {site_tz} (or without --tz and the config's timezone), "
            f"or give another --out for a site in {settings.timezone!r}",
        )
    return settings


def _site_timezone(out: Path, manifest: dict) -> str | None:
    """The time zone the site's weeks are in: recorded in the manifest, or, for a site
    written before it was recorded, the one its newest reports' JSON all give."""
    if manifest.get("timezone"):
        return str(manifest["timezone"])
    found: set[str] = set()
    for entry in manifest["repositories"].values():
        weeks = sorted(entry.get("weeks") or {})
        if weeks:
            try:
                found.add(json.loads((out / entry["path"] / f"{weeks[-1]}.json").read_text(encoding="utf-8"))["timezone"])
            except (OSError, ValueError, KeyError, TypeError):
                continue
    return found.pop() if len(found) == 1 else None


def _week_summary(r: Report) -> dict:
    from .i18n import catalog

    cat = catalog(r.lang)
    names = {**(r.stats.get("theme_names") or {}), **{th.key: th.name for th in r.themes}}
    return {
        "title": cat.title(r),
        "dates": cat.date_range(r.start.date(), last_day(r)),
        "merged_prs": len(r.pull_requests),
        "top_themes": [th.name for th in r.themes[:3]],
        **_theme_counts(r.stats, names),
    }


def _theme_counts(stats: dict, names: dict[str, str]) -> dict:
    """A week's counts for the trends chart: its themes' PRs by name (`by_theme`), each
    name's theme key, and the PRs per type and per module, which every week has
    (a type or module is a theme only in the weeks it stands out)."""
    by_theme = stats.get("by_theme") or {}
    return {
        "by_theme": {names.get(k, k): int(v) for k, v in by_theme.items()},
        "theme_keys": {names.get(k, k): k for k in by_theme},
        "by_type": {k: int(v) for k, v in (stats.get("by_type") or {}).items()},
        "by_module": {k: int(v) for k, v in (stats.get("by_module") or {}).items()},
    }


def _complete_summaries(entry: dict, folder: Path) -> None:
    """Weeks archived before the summaries kept the counts per type and module get them
    from their saved JSON (once: the manifest keeps them)."""
    for week, summary in entry["weeks"].items():
        if "by_type" in summary:
            continue
        try:
            saved = json.loads((folder / f"{week}.json").read_text(encoding="utf-8"))
            stats = saved["stats"]
            names = {**(stats.get("theme_names") or {}), **{t["key"]: t["name"] for t in saved.get("themes") or []}}
            summary.update(_theme_counts(stats, names))
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            continue  # its trend lines keep gaps where its count is not known


def _neighbours(all_weeks: list[str], new: set[str]) -> list[str]:
    """Archived weeks directly before or after a newly written week."""
    out: set[str] = set()
    for i, week in enumerate(all_weeks):
        if week in new:
            out.update(all_weeks[j] for j in (i - 1, i + 1) if 0 <= j < len(all_weeks) and all_weeks[j] not in new)
    return sorted(out)


def _week_rows(entry: dict) -> list[dict]:
    rows = []
    for week, w in sorted(entry["weeks"].items(), reverse=True):
        rows.append({"week": week, "href": f"{week}.html", **{k: w[k] for k in ("dates", "merged_prs", "top_themes")}})
    return rows


def _repo_rows(manifest: dict) -> list[dict]:
    rows = []
    for name, entry in sorted(manifest["repositories"].items()):
        path = entry["path"]
        weeks = sorted(entry["weeks"], reverse=True)
        rows.append(
            {
                "name": name,
                "href": f"{path}/index.html",
                "trends": f"{path}/trends.html",
                "latest": {"week": weeks[0], "href": f"{path}/{weeks[0]}.html"} if weeks else None,
                "weeks": [{"week": w, "href": f"{path}/{w}.html"} for w in weeks],
            }
        )
    return rows


def _trend_charts(entry: dict, t: dict[str, str], backend: str | None) -> dict[str, Markup | None]:
    weeks = sorted(entry["weeks"])
    summaries = [entry["weeks"][w] for w in weeks]
    merged = [s["merged_prs"] for s in summaries]
    # Themes are told apart by key: a module and a topic can share a name ("rollout").
    totals: dict[str, int] = {}
    names: dict[str, str] = {}
    for s in summaries:
        for key, name, count in _themes_of(s):
            totals[key] = totals.get(key, 0) + count
            names[key] = name  # the newest week's name
    top = sorted(totals, key=lambda k: (-totals[k], names[k], k))[:TREND_THEMES]
    shared = {n for n in (names[k] for k in top) if [names[k] for k in top].count(n) > 1}
    series = [(f"{names[k]} ({k})" if names[k] in shared else names[k], _theme_line(k, summaries)) for k in top]
    prs = charts.line_chart(weeks, [], t["chart_prs"], "chart-site-prs", total=(t["merged_prs"], merged), backend=backend)
    themes = charts.line_chart(weeks, series, t["chart_themes"], "chart-site-themes", backend=backend) if series else None
    return {"prs": Markup(prs), "themes": Markup(themes) if themes else None}


def _themes_of(summary: dict) -> list[tuple[str, str, int]]:
    """A week's themes as (key, name, PRs); a week summarised before keys were kept
    (and whose JSON is gone) has its names for keys."""
    keys = summary.get("theme_keys") or {}
    return [(keys.get(name, f"name:{name}"), name, int(count)) for name, count in (summary.get("by_theme") or {}).items()]


def _theme_line(key: str, summaries: list[dict]) -> list[int | None]:
    """The PRs of a top theme in each week. A week's themes are only what stood out that
    week, so a theme missing from a week is not a week without its PRs: a type's or a
    module's count comes from the week's PRs per type or module (every week has them);
    a discovered topic or configured theme is not counted in the weeks it was not a
    theme, and those weeks are a gap in its line (None), not 0."""
    kind, _, part = key.partition(":")
    every_week = {"type": "by_type", "module": "by_module"}.get(kind)
    line: list[int | None] = []
    for s in summaries:
        if every_week and every_week in s:
            line.append(int(s[every_week].get(part, 0)))
        else:
            line.append(next((count for k, _, count in _themes_of(s) if k == key), None))
    return line
