"""`repobrief backfill`: every week of a span in one pass over the history."""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from ..output import check_out_folder
from . import app, counted, stoppable
from . import options as opt
from .report import parse_formats


@app.command(no_args_is_help=True)
def backfill(
    path: str = opt.TARGET,
    first: str = typer.Option(..., "--from", help="First ISO week (2024-W44)."),
    last: str = typer.Option("last", "--to", show_default=False, help="Last ISO week (default: the last complete week)."),
    out: Path = typer.Option(..., "--out", "-o", help="Folder for DIR/{owner}__{repo}-{YYYY}-W{WW}.{lang}.{ext}."),
    fmt: list[str] = typer.Option(None, "--format", "-f", show_default=False,
                                  help=f"Comma-separated formats, or the flag again: {opt.FORMATS} (default: json)."),
    name: str = opt.NAME,
    tz: str = opt.TZ,
    lang: str = opt.LANG,
    threshold: float = opt.THRESHOLD,
    config: Path = opt.CONFIG,
    engine: str = opt.ENGINE,
    llm_model: str = opt.LLM_MODEL,
    llm_concurrency: int = opt.LLM_CONCURRENCY,
    db: str = opt.READ_DB,
    source: str = opt.SOURCE,
    github_url: str = opt.GITHUB_URL,
    offline: bool = opt.OFFLINE,
    skip_empty: bool = typer.Option(False, "--skip-empty", help="Write no files for weeks with nothing merged."),
    workers: int = typer.Option(
        0, "--workers", "-j", min=0, show_default=False,
        help="Processes writing weeks in parallel (default 0: every core for offline reports from a clone, else 1).",
    ),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress or summary on stderr."),
) -> None:
    """Write the report of every week from --from to --to, reading the history once."""
    from ..backfill import backfill as run_backfill
    from ..window import parse_timezone, week_range

    formats = parse_formats(fmt or ["json"])
    check_out_folder(out)
    settings = opt.load_cli_settings(path, config=config, name=name, tz=tz, lang=lang, threshold=threshold,
                                     engine=engine, db=db, github_url=github_url, source=source,
                                     llm={"model": llm_model, "concurrency": llm_concurrency})
    opt.note_unused_db(db, path, settings, source)
    weeks = week_range(first, last, parse_timezone(settings.timezone or "UTC"))
    bar = None
    show = not quiet and sys.stderr.isatty()
    weeks_done = 0

    def progress(done: int, total: int) -> None:
        # Redrawn on each call, without rich's refresh thread: `backfill` forks workers
        # while it runs, and a fork must not copy a thread's locks.
        nonlocal bar, weeks_done
        weeks_done = done
        if show and bar is None:
            from rich.console import Console
            from rich.progress import Progress

            # On stderr, as every other line but the reports: stdout stays clean for a pipe.
            bar = Progress(transient=True, auto_refresh=False, console=Console(stderr=True))
            bar.start()
            bar.add_task("weeks", total=total)
        if bar is not None:
            bar.update(bar.task_ids[0], completed=done, refresh=True)

    def stop() -> None:
        if bar is not None:
            bar.stop()

    def said() -> str:
        where = (f"the reports written are in {out} (each whole or not at all); running the same command again "
                 "writes them all again") if out.is_dir() else "no report was written"
        return f"interrupted after {weeks_done} of {len(weeks)} weeks; {where}"

    with stoppable(stop, said):
        res = run_backfill(path, settings, weeks, out, formats, workers=workers or None, skip_empty=skip_empty,
                           progress=progress, source_name=source, offline=offline)
    for w in res.warnings:  # as `report` does, even with -q
        typer.echo(f"warning: {w}", err=True)
    if not quiet:
        typer.echo(
            f"{counted(res.weeks, 'week')} ({weeks[0].label} to {weeks[-1].label}), {counted(res.prs, 'PR')}, "
            f"{counted(res.written, 'week')} written "
            f"to {out} in {res.seconds:.1f} s ({res.workers} worker{'s' if res.workers > 1 else ''}"
            f"{f' + {res.helpers} helper' + ('s' if res.helpers > 1 else '') if res.helpers else ''})",
            err=True,
        )
