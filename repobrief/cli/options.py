"""Options that several commands share (report, backfill, site), declared once,
and how they become the one Settings object."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from ..config import LANGUAGES, Settings, normal_language
from ..errors import ConfigError, UsageError
from ..registry import RENDERERS

TARGET = typer.Argument(..., help="A local clone (working tree or bare), or github:OWNER/REPO.")
NAME = typer.Option(None, "--name", help="OWNER/REPO; default: from the origin remote, else the folder name.")
TZ = typer.Option(None, "--tz", help="IANA time zone weeks are read in (default: config, else UTC).")
LANG = typer.Option(None, "--lang", help="Report language: zh or en (default: config, else zh).")
THRESHOLD = typer.Option(None, "--threshold", help="Importance threshold for the PR table (default 5.0).")
CONFIG = typer.Option(None, "--config", help="Config file (default: repobrief.toml or pyproject.toml found above PATH).")
ENGINE = typer.Option(None, "--engine", help="Analysis engine: offline (default) or llm.")
DB = typer.Option(None, "--db", help="Store: a SQLite file or a database URL (default: user data dir).")
READ_DB = typer.Option(None, "--db", help="Store the reports read from: the PRs `sync` kept (github source) and the llm "
                       "engine's cached answers; a SQLite file or a database URL (default: user data dir). A clone read "
                       "with the offline engine needs none, and reports are not kept in it (`report --db` keeps a week's).")
FORMATS = ", ".join(RENDERERS.builtin_names())  # for --format's help (a plugin's formats work too)
LLM_MODEL = typer.Option(None, "--llm-model", help="Model name for --engine llm.")
LLM_CONCURRENCY = typer.Option(None, "--llm-concurrency", help="Parallel LLM requests (default 8).")
SOURCE = typer.Option(None, "--source", help="Source of a target without a prefix: git (default) or github (OWNER/REPO); a github: target needs none.")
GITHUB_URL = typer.Option(None, "--github-url", help="GitHub API URL (GitHub Enterprise: https://HOST/api/v3).")
OFFLINE = typer.Option(False, "--offline", help="Read PRs only from the store: no requests to GitHub (an llm engine still asks its model).")


def load_cli_settings(
    target: str,
    *,
    config: Path | None = None,
    name: str | None = None,
    tz: str | None = None,
    lang: str | None = None,
    threshold: float | None = None,
    engine: str | None = None,
    db: str | None = None,
    github_url: str | None = None,
    llm: dict | None = None,
    source: str | None = None,
) -> Settings:
    """Settings from the config file, the environment and these flags; bad flag
    values (a `--source` that contradicts the target too) are reported before
    anything is read or opened."""
    from ..config import load_settings
    from ..targets import resolve_target
    from ..window import parse_timezone, refuse_empty

    for option, value in (("--name", name), ("--tz", tz), ("--engine", engine), ("--db", db), ("--github-url", github_url),
                          ("--llm-model", (llm or {}).get("model"))):
        refuse_empty(option, value)
    kind, location = resolve_target(target, source)
    lang = normal_language(lang)  # `--lang EN` as `en`
    engine = None if engine is None else engine.strip().lower()
    if lang is not None and lang not in LANGUAGES:
        raise UsageError(f"invalid --lang {lang!r}; valid: {', '.join(LANGUAGES)}")
    if tz is not None:
        parse_timezone(tz)
    overrides: dict[str, Any] = {
        "name": name,
        "timezone": tz,
        "language": lang,
        "threshold": threshold,
        "engine": engine,
        "db": db,
        "llm": {k: v for k, v in (llm or {}).items() if v is not None},
        "github": {"url": github_url} if github_url else {},
    }
    try:
        # A clone's config is found above the clone; a github: target's, as `sync` finds
        # it, above the current folder.
        return load_settings(location if kind == "git" else Path.cwd(), config_file=config, overrides=overrides)
    except ConfigError as e:
        # A bad value that came from a flag is a usage error naming the flag, not the option.
        flag = _FLAGS.get(e.option or "")
        section, _, key = (e.option or "").rpartition(".")
        given = overrides.get(section, {}).get(key) if section else overrides.get(key)
        if flag is None or given is None:
            raise
        raise UsageError(e.message.replace(f"option {e.option!r}", flag, 1), e.hint) from None


# The options load_cli_settings takes from flags: a bad value names the flag.
_FLAGS = {"name": "--name", "timezone": "--tz", "language": "--lang", "threshold": "--threshold",
          "engine": "--engine", "llm.model": "--llm-model", "llm.concurrency": "--llm-concurrency",
          "github.url": "--github-url"}


def note_unused_db(db: str | None, target: str, settings, source: str | None = None) -> None:
    """`--db` given to a command that reads no store with these settings (a clone, the
    offline engine): said on stderr, not silently dropped."""
    if not db:
        return
    from ..registry import ENGINES, SOURCES
    from ..targets import needs_store, resolve_target

    kind = resolve_target(target, source)[0]
    if not needs_store(SOURCES.get(kind)) and not needs_store(ENGINES.get(settings.engine)):
        typer.echo(f"note: --db is not used: the {kind} source read with the {settings.engine} engine needs no store, "
                   "and these reports are not kept in one (`report --db` keeps a week's)", err=True)
