"""`repobrief site`: a static archive of weekly HTML reports with an index and a trends page."""

from __future__ import annotations

from pathlib import Path

import typer

from . import app, stoppable
from . import options as opt


@app.command(no_args_is_help=True)
def site(
    path: str = opt.TARGET,
    out: Path = typer.Option(..., "--out", "-o", help="Site folder (created; an existing repobrief site is extended)."),
    weeks: int = typer.Option(12, "--weeks", help="How many weeks, ending with the last complete week (or --until-week)."),
    until_week: str = typer.Option(None, "--until-week", help="The newest week to include (2026-W26); default: the last complete week."),
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
    workers: int = typer.Option(
        0, "--workers", "-j", min=0, show_default=False,
        help="Processes drawing the weekly pages (default 0: every core; few pages take one).",
    ),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress on stderr."),
) -> None:
    """Write (or extend) a static site: index of repositories and weeks, weekly HTML reports, trends."""
    from functools import partial

    from ..pipeline import generate_reports
    from ..site import MANIFEST, SiteResult, build_site

    settings = opt.load_cli_settings(path, config=config, name=name, tz=tz, lang=lang, threshold=threshold,
                                     engine=engine, db=db, github_url=github_url, source=source,
                                     llm={"model": llm_model, "concurrency": llm_concurrency})
    opt.note_unused_db(db, path, settings, source)
    had_site = (out / MANIFEST).is_file()
    built: list[str] = []
    drawn: list[str] = []
    done: list[SiteResult] = []

    # A week's report is built, then its page drawn, in memory; the site's files are all
    # written at the end.
    def progress(week: str) -> None:
        built.append(week)
        if not quiet:
            typer.echo(f"{week} built", err=True)

    def rendered(week: str) -> None:
        drawn.append(week)
        if not quiet:
            typer.echo(f"{week} page drawn", err=True)

    def said() -> str:
        if done:
            r = done[0]
            return (f"interrupted; the site was written first ({len(r.pages)} pages for {r.repository}, "
                    f"{r.weeks[0]} … {r.weeks[-1]}, in {r.out})")
        unchanged = f"the site in {out} was not changed" if had_site else f"nothing was written to {out}"
        pages = f" and {len(drawn)} of their pages drawn" if len(built) == weeks else ""
        return f"interrupted after {len(built)} of {weeks} weeks were built{pages}; {unchanged}"

    with stoppable(lambda: None, said):
        result = build_site(
            path,
            settings,
            out,
            weeks=weeks,
            until_week=until_week,
            generate=partial(generate_reports, source_name=source, offline=offline),
            progress=progress,
            written=done.append,
            workers=workers or None,
            rendered=rendered,
        )
    for w in result.warnings:  # as `report` does, even with -q
        typer.echo(f"warning: {w}", err=True)
    if not quiet:
        typer.echo(f"wrote {len(result.pages)} pages for {result.repository} ({result.weeks[0]} … {result.weeks[-1]}) to {result.out}", err=True)
        typer.echo(f"open {result.out / 'index.html'}", err=True)
