"""`repobrief site`: a static archive of weekly HTML reports with an index and a trends page."""

from __future__ import annotations

from pathlib import Path

import typer

from ..errors import UsageError
from . import app


@app.command(no_args_is_help=True)
def site(
    path: str = typer.Argument(..., help="A local clone (working tree or bare), or github:OWNER/REPO."),
    out: Path = typer.Option(..., "--out", "-o", help="Site folder (created; an existing repobrief site is extended)."),
    weeks: int = typer.Option(12, "--weeks", help="How many weeks, ending with the last complete week (or --until-week)."),
    until_week: str = typer.Option(None, "--until-week", help="The newest week to include (2026-W26); default: the last complete week."),
    name: str = typer.Option(None, "--name", help="OWNER/REPO; default: from the origin remote, else the folder name."),
    tz: str = typer.Option(None, "--tz", help="IANA time zone the weeks are read in (default: config, else UTC)."),
    lang: str = typer.Option(None, "--lang", help="Report language: zh or en (default: config, else zh)."),
    threshold: float = typer.Option(None, "--threshold", help="Importance threshold for the PR table (default 5.0)."),
    config: Path = typer.Option(None, "--config", help="Config file (default: repobrief.toml or pyproject.toml found above PATH)."),
    engine: str = typer.Option(None, "--engine", help="Analysis engine: offline (default) or llm."),
    db: str = typer.Option(None, "--db", help="Store: a SQLite file or a database URL (default: user data dir)."),
    source: str = typer.Option(None, "--source", help="Force a source: git or github."),
    github_url: str = typer.Option(None, "--github-url", help="GitHub API URL (GitHub Enterprise)."),
    offline: bool = typer.Option(False, "--offline", help="Read only from the store; no network."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress on stderr."),
) -> None:
    """Write (or extend) a static site: index of repositories and weeks, weekly HTML reports, trends."""
    from functools import partial

    from ..config import load_settings
    from ..pipeline import generate_reports
    from ..site import build_site
    from ..window import parse_timezone

    if lang is not None and lang not in ("zh", "en"):
        raise UsageError(f"invalid --lang {lang!r}; valid: zh, en")
    if tz is not None:
        parse_timezone(tz)
    overrides = {
        "name": name,
        "timezone": tz,
        "language": lang,
        "threshold": threshold,
        "engine": engine,
        "db": db,
        "github": {"url": github_url} if github_url else {},
    }
    settings = load_settings(path if not path.startswith("github:") else None, config_file=config, overrides=overrides)

    def progress(week: str) -> None:
        if not quiet:
            typer.echo(f"{week} done", err=True)

    result = build_site(
        path,
        settings,
        out,
        weeks=weeks,
        until_week=until_week,
        generate=partial(generate_reports, source_name=source, offline=offline),
        progress=progress,
    )
    if not quiet:
        typer.echo(f"wrote {len(result.pages)} pages for {result.repository} ({result.weeks[0]} … {result.weeks[-1]}) to {result.out}", err=True)
        typer.echo(f"open {result.out / 'index.html'}", err=True)
