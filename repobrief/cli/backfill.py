"""`repobrief backfill`: every week of a span in one pass over the history."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import typer

from . import app
from . import options as opt
from .report import parse_formats, write_atomically


@app.command(no_args_is_help=True)
def backfill(
    path: str = opt.TARGET,
    first: str = typer.Option(..., "--from", help="First ISO week (2024-W44)."),
    last: str = typer.Option("last", "--to", help="Last ISO week (default: the last complete week)."),
    out: Path = typer.Option(..., "--out", "-o", help="Folder for DIR/{owner}__{repo}-{YYYY}-W{WW}.{lang}.{ext}."),
    fmt: str = typer.Option("json", "--format", "-f", help="Comma-separated formats (default: json)."),
    name: str = opt.NAME,
    tz: str = opt.TZ,
    lang: str = opt.LANG,
    threshold: float = opt.THRESHOLD,
    config: Path = opt.CONFIG,
    engine: str = opt.ENGINE,
    db: str = opt.DB,
    source: str = opt.SOURCE,
    github_url: str = opt.GITHUB_URL,
    offline: bool = opt.OFFLINE,
    skip_empty: bool = typer.Option(False, "--skip-empty", help="Write no files for weeks with nothing merged."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress or summary on stderr."),
) -> None:
    """Write the report of every week from --from to --to, reading the history once."""
    from ..pipeline import generate_reports, output_name, render_report
    from ..window import parse_timezone, week_range

    formats = parse_formats(fmt)
    settings = opt.load_cli_settings(path, config=config, name=name, tz=tz, lang=lang, threshold=threshold,
                                     engine=engine, db=db, github_url=github_url)
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
