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

from .config import (
    LANGUAGES,
    NOT_OPTIONS,
    PublishTarget,
    Settings,
    _build,
    check_publish_target,
    load_settings,
    normal_language,
    read_config_file,
)
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
    "check_output_folders",
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
    positions: list[int] = field(default_factory=list)  # each entry's N in `repositories[N]` (kept by keep_only)

    def position(self, i: int) -> int:
        return self.positions[i] if self.positions else i

    def keep_only(self, only: list[str], config: str | os.PathLike) -> None:
        """Keep the repositories named in `only`: by `name`, `source`, or the name their reports,
        progress and errors show (their own config's, else the origin remote's OWNER/REPO, else
        the folder's); an unknown one is a usage error."""
        shown = [e.name for e in self.entries]
        if set(only) - {*shown, *(e.source for e in self.entries)}:  # finding the others' names costs a git call
            shown = [e.name or _report_name(e, _own_settings_name(self.base_dir, e, rest), *_locate(self.base_dir, e.source))
                     for e, rest in zip(self.entries, self.overrides, strict=True)]
        labels = [{name, e.source} for name, e in zip(shown, self.entries, strict=True)]
        keep = [i for i, own in enumerate(labels) if own & set(only)]
        missing = set(only) - set().union(*labels)
        if missing:
            raise UsageError(f"--only {sorted(missing)[0]!r} is not in {config}", "valid: " + ", ".join(shown))
        self.positions = [self.position(i) for i in keep]
        self.entries = [self.entries[i] for i in keep]
        self.overrides = [self.overrides[i] for i in keep]


_ENTRY_KEYS = {f for f in RepositoryEntry.__dataclass_fields__}


def load_team(path: str | os.PathLike) -> Team:
    """Read and check a team config; relative paths are resolved against its folder. An
    error in it names the file, as a repository config's does."""
    path = Path(path)
    if path.is_dir():
        raise ConfigError(f"team config {str(path)!r} is a folder", "give the team.toml file with --config")
    data = read_config_file(path)
    try:
        return _load_team(path, data)
    except ConfigError as e:
        if str(path) in e.message:
            raise
        hint = e.hint
        repository_keys = {f.name for f in dataclasses.fields(Settings)}
        if (e.option is not None and "repositories" not in data and e.message.startswith("unknown option")
                and e.option.partition(".")[0] in repository_keys):  # not a typo ([[repository]]): did-you-mean
            hint = (f"{path} looks like a repository's config, not a team config: give it to `repobrief report "
                    "--config`, or list repositories in [[repositories]] tables (docs/scaling.md)")
        raise ConfigError(f"{e.message} (in {path})", hint, option=e.option) from None


def _load_team(path: Path, data: dict) -> Team:
    team = _build(TeamSettings, data)
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
    from .registry import ENGINES, EXECUTORS

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
    names: dict[str, int] = {}  # repository name → its table
    sources: dict[str, list[int]] = {}  # clone path or remote source → its tables
    entries: list[RepositoryEntry] = []
    overrides: list[dict] = []
    settings_keys = [f.name for f in dataclasses.fields(Settings) if f.name not in NOT_OPTIONS]
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
        if ":" in entry.source:  # a source's own form (github:OWNER/REPO), before any work; a clone is its job's
            from .registry import SOURCES
            from .targets import resolve_target

            try:
                kind, location = resolve_target(entry.source.strip())
                # a registered source need not derive from Source: the check is optional
                check = getattr(SOURCES.get(kind), "check_location", None) if kind != "git" else None
                if check is not None:
                    check(location)
            except UsageError as e:
                raise ConfigError(f"option '{where}.source': {e.message}", e.hint, option=f"{where}.source") from None
        _check_languages(f"{where}.languages", entry.languages)
        _check_formats(f"{where}.formats", entry.formats, parse_formats)
        if entry.timezone:
            _check_timezone(f"{where}.timezone", entry.timezone)
        # Other keys are repobrief options for this repository; check them now, naming the table.
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
            check_publish_target(f"{where}.publish[{j}]", target)  # as a repobrief.toml's targets are
            if not target.webhook.strip():
                raise ConfigError(f"option '{where}.publish[{j}]' needs webhook", 'webhook = "https://…" (the bot\'s URL)')
        if entry.name in names:
            raise ConfigError(f"option '{where}' repeats repositories[{names[entry.name]}] ({entry.name})",
                              "list each repository once")
        # One clone may be listed under several spellings (./x, x/, its absolute path): compare
        # where they lead. The same clone under two names (e.g. two branches) is two repositories.
        target, is_remote = _locate(path.resolve().parent, entry.source)
        for j in sources.get(target, []):
            if not (entry.name and entries[j].name):
                first = entries[j].source
                same = (f"({first})" if is_remote or first == entry.source else
                        f"({first!r} and {entry.source!r} are the same clone, {target})")
                raise ConfigError(f"option '{where}' repeats repositories[{j}] {same}",
                                  "list each repository once, or give each table its own `name`")
        if entry.name:
            names[entry.name] = i
        sources.setdefault(target, []).append(i)
        entries.append(entry)
        overrides.append(rest)
    return Team(team, entries, overrides, path.resolve().parent, list(range(len(entries))))


def _check_languages(option: str, langs: list[str]) -> None:
    """Check a list of languages, read in any case ("EN" as `--lang EN` reads it)."""
    langs[:] = [normal_language(lang) for lang in langs]
    for lang in langs:
        if lang not in LANGUAGES:
            raise ConfigError(f"option {option!r} has {lang!r}; expected a list of {', '.join(LANGUAGES)}")


def _check_backend(option: str, name: str, registry: Registry) -> None:
    if name not in registry:
        near = difflib.get_close_matches(name, registry.names(), n=1)
        raise ConfigError(f"option {option!r} is {name!r}; expected one of {', '.join(registry.names())}",
                          f"did you mean {near[0]!r}?" if near else None)


def _check_formats(option: str, formats: list[str], parse: Callable[[list[str]], list[str]]) -> None:
    if not formats:
        return
    try:
        parse(formats)
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
    refresh: bool = False  # ignore cached LLM answers and kept git facts


@dataclass
class JobResult:
    """What one repository's job produced. `reports` maps a language to the report's JSON dict;
    `ok` says its reports were written (and saved in the store), `not_posted` which of its
    cards were not posted."""

    index: int
    label: str
    ok: bool
    seconds: float = 0.0
    files: list[str] = field(default_factory=list)
    reports: dict[str, dict] = field(default_factory=dict)
    published: list[str] = field(default_factory=list)
    # Cards refused or not delivered (one message per target). A repository whose reports were
    # written is reported (`ok`) even so: a chat card is a delivery, not the report.
    not_posted: list[str] = field(default_factory=list)
    error: str = ""  # what went wrong (without the repository's name)
    hint: str | None = None  # how to fix the error, or else the first card not posted
    exit_code: int = 0
    stage: str = ""  # where it failed: settings, report, write, store, worker


def plan_jobs(
    team: Team,
    week: str | None,
    *,
    db: str | None = None,
    digest: bool = False,
    publish: bool = True,
    offline: bool = False,
    out: str | Path | None = None,
    refresh: bool = False,
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
    names: dict[int, str] = {}  # per job: the OWNER/REPO its reports are written under
    for i, (entry, rest) in enumerate(zip(team.entries, team.overrides, strict=True)):
        target, is_remote = _locate(base, entry.source)
        label = entry.name or entry.source
        scheme = target.partition(":")[0]
        if is_remote and scheme not in SOURCES:
            import difflib

            near = difflib.get_close_matches(scheme, SOURCES.names(), n=1)
            failed.append(JobResult(
                i, label, False, error=f"unknown source {scheme!r} in repositories[{team.position(i)}].source ({entry.source!r})",
                hint=(f"did you mean {near[0]}:…? " if near else "")
                + f"valid: a clone path, or {', '.join(n + ':…' for n in SOURCES.names() if n != 'git')}",
                exit_code=SourceError.exit_code, stage="settings"))
            continue
        overrides: dict[str, Any] = dict(rest)
        if "db" in rest:
            overrides["db"] = _relative_to(base, rest["db"])
        for key, value in (("name", entry.name), ("timezone", entry.timezone or ts.timezone),
                           ("db", db if db is not None else _relative_to(base, ts.db)),
                           ("engine", rest.get("engine") or ts.engine)):  # a table's own engine wins
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
        name = names[i] = _report_name(entry, settings.name, target, is_remote)
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
            out=str(base / entry.out) if entry.out else str(out_root / name.replace("/", "__")),
            publish=list(entry.publish) if publish else [],
            extra_languages=extra,
            db=settings.db if (db or ts.db) else "",
            offline=offline,
            refresh=refresh,
        ))
    _one_week(jobs)
    _check_names_differ(team, names, jobs)
    return jobs, failed


def _one_week(jobs: list[RepoJob]) -> None:
    """Every repository reports the same ISO week, each in its own time zone. `last` or
    `this` can name different weeks in different zones (Monday 01:00 UTC is still Sunday
    in Los Angeles): the run takes the earliest, the last week complete in all of them,
    rather than a digest that adds two weeks together."""
    from .window import parse_timezone, resolve_window

    labels = {job.window.label for job in jobs}
    if len(labels) > 1:
        common = min(labels)  # YYYY-Www labels sort as their weeks do
        for job in jobs:
            if job.window.label != common:
                job.window = resolve_window(common, None, None, parse_timezone(job.settings.timezone or "UTC"))


def check_output_folders(team: Team, out: str | os.PathLike | None, digest: bool) -> None:
    """An output folder of the config that is a file is said before a run does any work,
    naming the option, not found by every repository's job failing to write into it at
    the end. `out`: the --out flag, which replaces `out` and `[digest] out` (its caller
    checks it). `batch export` writes no folder, so it does not ask."""
    base, ts = team.base_dir, team.settings
    folders = [] if out is not None else [("out", ts.out), *([("digest.out", ts.digest.out)] if digest else [])]
    folders += [(f"repositories[{team.position(i)}].out", e.out) for i, e in enumerate(team.entries)]
    for option, value in folders:
        if not value:
            continue
        path = base / value
        # the folder, or a file in the way above it ("team.toml/digest")
        blocker = next((p for p in (path, *path.parents) if p.exists() and not p.is_dir()), None)
        if blocker is not None:
            raise ConfigError(f"option {option!r} is {value!r}, " + (f"a file ({path})" if blocker == path else
                              f"under a file ({blocker})") + "; expected a folder",
                              "give a folder to write the reports into (relative paths start at the team config's folder)")


def _check_names_differ(team: Team, names: dict[int, str], jobs: list[RepoJob]) -> None:
    """Two repositories reported under one name would write the same files (and the same
    rows of a shared store), one silently replacing the other: a config error before any work."""
    first: dict[str, int] = {}
    for job in jobs:
        name = names[job.index]
        j = first.setdefault(name, job.index)
        if j == job.index:
            continue
        a, b = team.entries[j], team.entries[job.index]
        folders = {jb.out for jb in jobs if jb.index in (j, job.index)}
        raise ConfigError(
            f"repositories[{team.position(j)}] (source {a.source!r}) and repositories[{team.position(job.index)}] "
            f"(source {b.source!r}) are both reported as {name!r}, "
            + (f"into {folders.pop()}: " if len(folders) == 1 else "in reports and a store keyed by that name: ")
            + "one would replace the other",
            'set `name = "OWNER/REPO"` in their [[repositories]] tables, a different one each',
        )


def _locate(base: Path, source: str) -> tuple[str, bool]:
    """(target, is_remote): a clone as its absolute, resolved path (so that `./x`, `x/` and
    `/abs/x` are one clone), or a `scheme:OWNER/REPO` source as written."""
    if ":" in source and not Path(source).exists() and not (base / source).exists() and not _looks_like_path(source):
        return source, True
    return str((base / Path(source).expanduser()).resolve()), False


def _report_name(entry: RepositoryEntry, settings_name: str, target: str, is_remote: bool) -> str:
    """The name a repository's reports are written under, as `generate_report` finds it: its
    `name`, else its own config's, else OWNER/REPO of a remote source or of the clone's origin
    remote, else the clone's folder."""
    if entry.name or settings_name:
        return entry.name or settings_name
    if is_remote:
        scheme, _, rest = target.partition(":")
        if scheme == "github":
            from .sources.github import parse_repository

            try:
                return parse_repository(target)
            except UsageError:  # the job says what is wrong with it
                pass
        return rest.strip("/") or target
    from .sources.git import folder_name, origin_remote

    remote = origin_remote(Path(target))
    return remote[1] if remote else folder_name(Path(target))


def _own_settings_name(base: Path, entry: RepositoryEntry, rest: dict) -> str:
    """The `name` a repository's own repobrief.toml (or the environment) gives it; "" when
    none, or when its settings cannot be read (that repository then fails alone)."""
    target, is_remote = _locate(base, entry.source)
    try:
        return load_settings(None if is_remote else target, config_file=str(base / entry.config) if entry.config else None,
                             overrides=dict(rest)).name
    except RepobriefError:
        return ""


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
    from .redact import mask_text
    from .serialize import report_to_dict

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
                                  offline=job.offline, refresh=job.refresh)
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
        result.ok = True  # reported: what follows is delivery
        if job.publish and first is not None:
            from .publish import publish

            for target in job.publish:
                # One refused or unreachable target must not keep the card from the others.
                try:
                    posted = publish(first, target)
                except RepobriefError as e:
                    result.not_posted.append(mask_text(e.message))
                    result.hint = result.hint or e.hint
                    result.exit_code = e.exit_code
                except Exception as e:  # noqa: BLE001 - a publisher's bug must not undo the report
                    result.not_posted.append(f"{target.target}: unexpected {type(e).__name__}: {mask_text(str(e))}")
                    result.exit_code = result.exit_code or 1
                else:
                    result.published.append(f"{posted.target} at {posted.host}")
    except RepobriefError as e:
        result.error, result.hint, result.exit_code = mask_text(e.message), e.hint, e.exit_code
    except Exception as e:  # noqa: BLE001 - one repository's bug must not stop the others
        result.error, result.exit_code = f"unexpected {type(e).__name__}: {mask_text(str(e))}", 1
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
    The jobs start longest first, by the time each took last time (`repobrief.durations`).
    `options` go to executors that take more than `workers` (e.g. the Ray executor's address)."""
    from . import durations
    from .registry import EXECUTORS

    cls = EXECUTORS.get(executor)
    runner = cls(workers=workers or None, **options) if options else cls(workers=workers or None)
    results = runner.run(durations.longest_first(jobs), on_result=on_result)
    durations.remember(jobs, results)
    by_index = {r.index: r for r in results}
    return [by_index[job.index] for job in jobs]
