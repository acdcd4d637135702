"""`repobrief backfill`: every week of a span in one pass over the history."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import typer

from ..errors import UsageError
from . import app
from .report import parse_formats, write_atomically


@app.command(no_args_is_help=True)
def backfill(
    path: str = typer.Argument(..., help="A local clone, or github:OWNER/REPO."),
    first: str = typer.Option(..., "--from", help="First ISO week (2024-W44)."),
    last: str = typer.Option("last", "--to", help="Last ISO week (default: the last complete week)."),
    out: Path = typer.Option(..., "--out", "-o", help="Folder for DIR/{owner}__{repo}-{YYYY}-W{WW}.{lang}.{ext}."),
    fmt: str = typer.Option("json", "--format", "-f", help="Comma-separated formats (default: json)."),
    name: str = typer.Option(None, "--name", help="OWNER/REPO; default: from the origin remote, else the folder name."),
    tz: str = typer.Option(None, "--tz", help="IANA time zone the weeks are read in."),
    lang: str = typer.Option(None, "--lang", help="zh or en."),
    threshold: float = typer.Option(None, "--threshold", help="Importance threshold for the PR table."),
    config: Path = typer.Option(None, "--config", help="Config file."),
    engine: str = typer.Option(None, "--engine", help="offline (default) or llm."),
    db: str = typer.Option(None, "--db", help="Store: a SQLite file or a database URL."),
    source: str = typer.Option(None, "--source", help="Force a source: git or github."),
    offline: bool = typer.Option(False, "--offline", help="Read only from the store; no network."),
    skip_empty: bool = typer.Option(False, "--skip-empty", help="Write no files for weeks with nothing merged."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress or summary on stderr."),
) -> None:
    """Write the report of every week from --from to --to, reading the history once."""
    from ..config import load_settings
    from ..pipeline import generate_reports, output_name, render_report
    from ..window import parse_timezone, week_range

    if lang is not None and lang not in ("zh", "en"):
        raise UsageError(f"invalid --lang {lang!r}; valid: zh, en")
    formats = parse_formats(fmt)
    if tz is not None:
        parse_timezone(tz)
    overrides = {"name": name, "timezone": tz, "language": lang, "threshold": threshold, "engine": engine, "db": db}
    settings = load_settings(path if not path.startswith("github:") else None, config_file=config, overrides=overrides)
    weeks = week_range(first, last, parse_timezone(settings.timezone or "UTC"))
    started = time.perf_counter()
    bar = None
    if not quiet and sys.stderr.isatty():
        from rich.progress import Progress

        bar = Progress(transient=True)
        bar.start()
        task = bar.add_task("weeks", total=len(weeks))

    def progress(stage: str, done: int, total: int) -> None:
        if bar is not None:
            bar.update(task, completed=done)

    written = prs = 0
    try:
        for rep in generate_reports(path, settings, weeks, progress=progress, source_name=source, offline=offline):
            prs += rep.stats["merged_prs"]
            if skip_empty and not rep.pull_requests:
                continue
            write_atomically({out / output_name(rep, f): render_report(rep, f) for f in formats})
            written += 1
    finally:
        if bar is not None:
            bar.stop()
    if not quiet:
        typer.echo(
            f"{len(weeks)} weeks ({weeks[0].label} to {weeks[-1].label}), {prs} PRs, {written} weeks written "
            f"to {out} in {time.perf_counter() - started:.1f} s",
            err=True,
        )
