"""Many repositories in one run: the team config, one job per repository, and the run.

A team config (`team.toml`) lists repositories, each with its own source (a
clone path or `github:OWNER/REPO`), name, time zone, languages, formats, output
folder and publish targets, plus any repobrief option (`threshold`, `[[modules]]`
…) for that repository alone:

    out = "reports"                 # default output folder (relative to team.toml)
    formats = ["md", "json"]
    db = "postgresql://…"           # optional shared store: PRs and rendered reports (a path: relative to team.toml)

    [[repositories]]
    source = "/srv/clones/verl"
    name = "verl-project/verl"
    timezone = "Asia/Shanghai"
    languages = ["zh", "en"]

`load_team` reads and checks it (errors name the option, e.g.
`repositories[2].timezone`), `plan_jobs` turns it into picklable `RepoJob`s for
one week, and `run_jobs` hands them to an executor (`repobrief.executors`),
which calls `run_job` for each, in this process, in worker processes, or on a
Ray cluster (`repobrief.executors_ray`). A failing repository gives a failed
`JobResult` with its message; the others go on.
"""

from __future__ import annotations

import dataclasses
import difflib
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .config import LANGUAGES, PublishTarget, Settings, _build, load_settings, read_config_file
from .errors import ConfigError, RepobriefError, SourceError, UsageError
from .window import Window

if TYPE_CHECKING:
    from .registry import Registry

__all__ = [
    "DigestSettings",
    "EndpointSettings",
    "JobResult",
    "RepoJob",
    "Team",
    "RaySettings",
    "RepositoryEntry",
    "TeamSettings",
    "load_team",
    "plan_jobs",
    "run_job",
    "run_jobs",
]


@dataclass
class RepositoryEntry:
    """One `[[repositories]]` table: what to read and where its reports go."""

    source: str  # a clone path (relative to team.toml) or github:OWNER/REPO
    name: str = ""  # OWNER/REPO; default: the origin remote, else the folder
    timezone: str = ""  # default: the team's, else the repository's config, else UTC
    languages: list[str] = field(default_factory=list)  # default: the team's
    formats: list[str] = field(default_factory=list)  # default: the team's
    out: str = ""  # default: TEAM_OUT/OWNER__REPO
    config: str = ""  # a repobrief.toml for this repository; default: found above the clone
    publish: list[PublishTarget] = field(default_factory=list)


@dataclass
class DigestSettings:
    """The `[digest]` table: the ecosystem digest across the repositories."""

    languages: list[str] = field(default_factory=lambda: ["zh", "en"])
    out: str = ""  # default: the team's `out`
    highlights: int = 3  # top PRs per repository


@dataclass
class EndpointSettings:
    """One `[[ray.endpoints]]` table: an OpenAI-compatible server of the shared LLM pool."""

    base_url: str  # e.g. http://vllm-0.vllm:8000/v1
    concurrency: int = 8  # requests in flight at this endpoint at once
    api_key_env: str = ""  # the name of an environment variable holding its key (never the key)


@dataclass
class RaySettings:
    """The `[ray]` table: how `--executor ray` runs the repositories on a Ray cluster."""

    address: str = ""  # "" starts a local cluster; "auto" joins the running one; ray://HOST:10001
    num_cpus: float = 1.0  # per repository task
    memory_mb: int = 0  # per repository task (0 = not declared)
    max_retries: int = 2  # re-runs of a task whose worker died (a failing report is not retried)
    endpoints: list[EndpointSettings] = field(default_factory=list)  # the LLM pool; empty = each job's own endpoint


@dataclass
class TeamSettings:
    """A team config: defaults for every repository, and the repositories."""

    out: str = "reports"
    formats: list[str] = field(default_factory=lambda: ["md", "json"])
    languages: list[str] = field(default_factory=list)  # default: each repository's `language`
    timezone: str = ""
    db: str = ""  # a shared store (SQLite path or database URL); empty = none
    engine: str = ""
    executor: str = "local"
    workers: int = 0  # 0 = one per CPU, at most one per repository
    digest: DigestSettings = field(default_factory=DigestSettings)
    ray: RaySettings = field(default_factory=RaySettings)
    repositories: list[dict] = field(default_factory=list)  # checked one by one in `load_team`


@dataclass
class Team:
    """A checked team config: its settings and one entry (plus other options) per repository."""

    settings: TeamSettings
    entries: list[RepositoryEntry]
    overrides: list[dict]  # per repository: the other repobrief options of its table
    base_dir: Path  # the team config's folder; relative paths start here

    def keep_only(self, only: list[str], config: str | os.PathLike) -> None:
        """Keep the repositories named in `only` (by name or source); an unknown one is a usage error."""
        keep = [i for i, e in enumerate(self.entries) if e.name in only or e.source in only]
        missing = set(only) - {self.entries[i].name for i in keep} - {self.entries[i].source for i in keep}
        if missing:
            raise UsageError(f"--only {sorted(missing)[0]!r} is not in {config}",
                             "valid: " + ", ".join(e.name or e.source for e in self.entries))
        self.entries = [self.entries[i] for i in keep]
        self.overrides = [self.overrides[i] for i in keep]


_ENTRY_KEYS = {f for f in RepositoryEntry.__dataclass_fields__}


def load_team(path: str | os.PathLike) -> Team:
    """Read and check a team config; relative paths are resolved against its folder."""
    path = Path(path)
    if path.is_dir():
        raise ConfigError(f"team config {str(path)!r} is a folder", "give the team.toml file with --config")
    team = _build(TeamSettings, read_config_file(path))
    if not team.repositories:
        raise ConfigError(
            f"team config {str(path)!r} lists no repositories",
            'add one [[repositories]] table per repository, with at least source = "PATH" or "github:OWNER/REPO"',
        )
    for option, langs in [("languages", team.languages), ("digest.languages", team.digest.languages)]:
        _check_languages(option, langs)
    if not team.digest.languages:  # a digest in no language would be no digest at all
        raise ConfigError("option 'digest.languages' is empty; expected a list of " + ", ".join(LANGUAGES),
                          f"leave it out for {' and '.join(LANGUAGES)}, or list the languages the digest is written in")
    from .registry import ENGINES, EXECUTORS, PUBLISHERS

    if team.engine:
        _check_backend("engine", team.engine, ENGINES)
    _check_backend("executor", team.executor, EXECUTORS)
    from .cli.report import parse_formats

    _check_formats("formats", team.formats, parse_formats)
    if team.workers < 0:
        raise ConfigError(f"option 'workers' is {team.workers}; expected 0 (one per CPU) or a positive whole number")
    if team.digest.highlights < 1:
        raise ConfigError(f"option 'digest.highlights' is {team.digest.highlights}; expected a positive whole number")
    if team.timezone:
        _check_timezone("timezone", team.timezone)
    seen: dict[str, int] = {}
    entries, overrides = [], []
    for i, raw in enumerate(team.repositories):
        where = f"repositories[{i}]"
        if not isinstance(raw, dict):
            raise ConfigError(f"option {where!r} must be a table, got {type(raw).__name__}")
        own = {k: v for k, v in raw.items() if k in _ENTRY_KEYS}
        rest = {k: v for k, v in raw.items() if k not in _ENTRY_KEYS}
        if "source" not in own:
            raise ConfigError(f"option {where!r} needs source", 'source = "path/to/clone" or "github:OWNER/REPO"')
        entry = _build(RepositoryEntry, own, where)
        if not entry.source.strip():
            raise ConfigError(f"option '{where}.source' is empty", 'source = "path/to/clone" or "github:OWNER/REPO"')
        _check_languages(f"{where}.languages", entry.languages)
        _check_formats(f"{where}.formats", entry.formats, parse_formats)
        if entry.timezone:
            _check_timezone(f"{where}.timezone", entry.timezone)
        # Other keys are repobrief options for this repository; check them now, naming the table.
        settings_keys = [f.name for f in dataclasses.fields(Settings) if f.name != "source_file"]
        for key in rest:
            if key not in settings_keys:  # neither a repository key nor a repobrief option
                near = difflib.get_close_matches(key, sorted(_ENTRY_KEYS) + settings_keys, n=1)
                raise ConfigError(f"unknown option '{where}.{key}'",
                                  f"did you mean '{where}.{near[0]}'?" if near else
                                  f"valid here: {', '.join(sorted(_ENTRY_KEYS))} and any repobrief option")
        try:  # the values too (threshold = 42, name = "noslash"), not only their types: before any work
            _build(Settings, {**rest, "name": entry.name} if entry.name else rest).validate()
        except ConfigError as e:
            raise ConfigError(e.message.replace("option '", f"option '{where}.", 1), e.hint) from None
        if "engine" in rest:
            _check_backend(f"{where}.engine", rest["engine"], ENGINES)
        for j, target in enumerate(entry.publish):
            _check_backend(f"{where}.publish[{j}].target", target.target, PUBLISHERS)
            if not target.webhook.strip():
                raise ConfigError(f"option '{where}.publish[{j}]' needs webhook", 'webhook = "https://…" (the bot\'s URL)')
        key = entry.name or entry.source
        if key in seen:
            raise ConfigError(f"option '{where}' repeats repositories[{seen[key]}] ({key})", "list each repository once")
        seen[key] = i
        entries.append(entry)
        overrides.append(rest)
    return Team(team, entries, overrides, path.resolve().parent)


def _check_languages(option: str, langs: list[str]) -> None:
    for lang in langs:
        if lang not in LANGUAGES:
            raise ConfigError(f"option {option!r} has {lang!r}; expected a list of {', '.join(LANGUAGES)}")


def _check_backend(option: str, name: str, registry: Registry) -> None:
    if name not in registry:
        near = difflib.get_close_matches(name, registry.names(), n=1)
        raise ConfigError(f"option {option!r} is {name!r}; expected one of {', '.join(registry.names())}",
                          f"did you mean {near[0]!r}?" if near else None)


def _check_formats(option: str, formats: list[str], parse: Callable[[str], list[str]]) -> None:
    if not formats:
        return
    try:
        parse(",".join(formats))
    except UsageError as e:
        raise ConfigError(f"option {option!r}: {e.message}", e.hint) from None


def _check_timezone(option: str, tz: str) -> None:
    from .window import parse_timezone

    try:
        parse_timezone(tz)
    except RepobriefError as e:
        raise ConfigError(f"option {option!r}: {e.message}", e.hint) from None


# ----------------------------------------------------------------------------- jobs


@dataclass
class RepoJob:
    """Everything a worker needs to report one repository for one week (picklable)."""

    index: int
    label: str  # the name shown in progress and errors (OWNER/REPO or the source)
    target: str  # a clone path or github:OWNER/REPO
    settings: Settings  # language set per report
    window: Window
    languages: list[str]  # reports written
    formats: list[str]
    out: str
    publish: list[PublishTarget] = field(default_factory=list)
    extra_languages: list[str] = field(default_factory=list)  # generated for the digest only
    db: str = ""
    offline: bool = False


@dataclass
class JobResult:
    """What one repository's job produced. `reports` maps a language to the report's JSON dict."""

    index: int
    label: str
    ok: bool
    seconds: float = 0.0
    files: list[str] = field(default_factory=list)
    reports: dict[str, dict] = field(default_factory=dict)
    published: list[str] = field(default_factory=list)
    error: str = ""  # what went wrong (without the repository's name)
    hint: str | None = None
    exit_code: int = 0
    stage: str = ""  # where it failed: settings, report, write, store, publish


def plan_jobs(
    team: Team,
    week: str | None,
    *,
    db: str | None = None,
    digest: bool = False,
    publish: bool = True,
    offline: bool = False,
    out: str | Path | None = None,
) -> tuple[list[RepoJob], list[JobResult]]:
    """One job per repository for `week`. A repository whose settings cannot even be
    loaded (e.g. a bad option in its own repobrief.toml) becomes a failed result
    instead of a job, so the others still run."""
    from .registry import SOURCES
    from .window import parse_timezone, resolve_window

    base = team.base_dir
    ts = team.settings
    out_root = Path(out) if out is not None else base / ts.out
    jobs: list[RepoJob] = []
    failed: list[JobResult] = []
    for i, (entry, rest) in enumerate(zip(team.entries, team.overrides, strict=True)):
        target = entry.source
        is_remote = ":" in target and not Path(target).exists() and not (base / target).exists() and not _looks_like_path(target)
        if not is_remote:
            target = str((base / target).resolve()) if not Path(target).is_absolute() else target
        label = entry.name or entry.source
        scheme = target.partition(":")[0]
        if is_remote and scheme not in SOURCES:
            import difflib

            near = difflib.get_close_matches(scheme, SOURCES.names(), n=1)
            failed.append(JobResult(
                i, label, False, error=f"unknown source {scheme!r} in repositories[{i}].source ({entry.source!r})",
                hint=(f"did you mean {near[0]}:…? " if near else "")
                + f"valid: a clone path, or {', '.join(n + ':…' for n in SOURCES.names() if n != 'git')}",
                exit_code=SourceError.exit_code, stage="settings"))
            continue
        overrides: dict[str, Any] = dict(rest)
        if "db" in rest:
            overrides["db"] = _relative_to(base, rest["db"])
        for key, value in (("name", entry.name), ("timezone", entry.timezone or ts.timezone),
                           ("db", db if db is not None else _relative_to(base, ts.db)), ("engine", ts.engine)):
            if value:
                overrides[key] = value
        config_file = str(base / entry.config) if entry.config else None
        try:
            settings = load_settings(None if is_remote else target, config_file=config_file, overrides=overrides)
            window = resolve_window(week, None, None, parse_timezone(settings.timezone or "UTC"))
        except UsageError:
            raise  # a bad --week is the same for every repository: stop before any work
        except RepobriefError as e:
            failed.append(JobResult(i, label, False, error=e.message, hint=e.hint, exit_code=e.exit_code,
                                    stage="settings"))
            continue
        languages = entry.languages or ts.languages or [settings.language]
        extra = [lang for lang in (ts.digest.languages if digest else []) if lang not in languages]
        jobs.append(RepoJob(
            index=i,
            label=label,
            target=target,
            settings=settings,
            window=window,
            languages=list(languages),
            formats=list(entry.formats or ts.formats),
            out=str(base / entry.out) if entry.out else str(out_root / (entry.name or Path(entry.source).name).replace("/", "__")),
            publish=list(entry.publish) if publish else [],
            extra_languages=extra,
            db=settings.db if (db or ts.db) else "",
            offline=offline,
        ))
    return jobs, failed


def _relative_to(base: Path, db: str) -> str:
    """A store path written in the team config starts at its folder, as its other paths do
    (not at the current directory, which differs under cron); a URL is kept as it is."""
    if not db or "://" in db:
        return db
    path = Path(db).expanduser()
    return str(path if path.is_absolute() else base / path)


def _looks_like_path(target: str) -> bool:
    # C:\clones\x or ./x:y — a colon that is not a source scheme
    scheme = target.partition(":")[0]
    return len(scheme) == 1 or "/" in scheme or "\\" in scheme or scheme.startswith(".")


def run_job(job: RepoJob) -> JobResult:
    """Report one repository: every language and format, files written all or none,
    rendered reports saved to the shared store, cards posted. Never raises: a
    failure is a `JobResult` with `ok=False` and a message naming the repository."""
    from .output import write_atomically
    from .pipeline import generate_report, output_name, render_report
    from .serialize import report_to_dict
    from .store import mask_url

    started = time.perf_counter()
    result = JobResult(job.index, job.label, False)
    stage = "store"
    store = None
    try:
        if job.db:
            from .store import open_store

            store = open_store(job.db)
        files: dict[Path, str] = {}
        rendered: list[tuple[str, str, str, str]] = []  # repository, lang, format, text
        first = None
        for lang in [*job.languages, *job.extra_languages]:
            stage = "report"
            rep = generate_report(job.target, replace(job.settings, language=lang), job.window, store=store,
                                  offline=job.offline)
            if not job.settings.name:  # named after the origin remote or the folder, now known
                result.label = rep.repository
            result.reports[lang] = report_to_dict(rep)
            if lang not in job.languages:
                continue
            first = first or rep
            for fmt in job.formats:
                text = render_report(rep, fmt)
                files[Path(job.out) / output_name(rep, fmt)] = text
                rendered.append((rep.repository, lang, fmt, text))
        stage = "write"
        write_atomically(files)
        result.files = [str(p) for p in files]
        if store is not None:
            stage = "store"
            for repository, lang, fmt, text in rendered:
                store.save_report(repository, job.window.label, lang, fmt, text)
        if job.publish and first is not None:
            stage = "publish"
            from .publish import publish

            for target in job.publish:
                posted = publish(first, target)
                result.published.append(f"{posted.target} at {posted.host}")
        result.ok = True
    except RepobriefError as e:
        result.error, result.hint, result.exit_code = mask_url(e.message), e.hint, e.exit_code
    except Exception as e:  # noqa: BLE001 - one repository's bug must not stop the others
        result.error, result.exit_code = f"unexpected {type(e).__name__}: {mask_url(str(e))}", 1
    finally:
        if store is not None:
            store.close()
    if not result.ok:
        result.stage = stage
    result.seconds = round(time.perf_counter() - started, 3)
    return result


def run_jobs(
    jobs: list[RepoJob],
    *,
    executor: str = "local",
    workers: int = 0,
    on_result: Callable[[JobResult], None] | None = None,
    options: dict[str, Any] | None = None,
) -> list[JobResult]:
    """Run `jobs` on the named executor (see `repobrief.registry.EXECUTORS`); results in job order.
    `options` go to executors that take more than `workers` (e.g. the Ray executor's address)."""
    from .registry import EXECUTORS

    cls = EXECUTORS.get(executor)
    runner = cls(workers=workers or None, **options) if options else cls(workers=workers or None)
    return runner.run(jobs, on_result=on_result)
