"""`repobrief report`: one week of one repository, to stdout or files."""

from __future__ import annotations

import sys
from contextlib import nullcontext
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from ..errors import UsageError
from ..output import check_out_folder, write_atomically
from . import app, counted, stoppable, write_out
from . import options as opt

if TYPE_CHECKING:
    from rich.status import Status


def parse_formats(given: str | list[str]) -> list[str]:
    """The formats of every --format given (`-f md,json` or `-f md -f json`), each once."""
    from ..registry import RENDERERS

    texts = [given] if isinstance(given, str) else given
    formats = [f.strip().lower() for text in texts for f in text.split(",") if f.strip()]
    if not formats:
        raise UsageError(f"--format is empty; valid formats: {', '.join(RENDERERS.names())} (comma-separated, e.g. md,json)")
    for f in formats:
        if f not in RENDERERS:
            import difflib

            valid = RENDERERS.names()
            near = difflib.get_close_matches(f, valid, n=1)
            raise UsageError(
                f"unknown format {f!r}; valid formats: {', '.join(valid)} (comma-separated, e.g. md,json)",
                f"did you mean {near[0]!r}?" if near else None,
            )
    return list(dict.fromkeys(formats))


class _Progress:
    """Progress on stderr when it is a terminal; silent otherwise (CI logs stay clean)."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled and sys.stderr.isatty()
        self._status: Status | None = None

    def __call__(self, stage: str, done: int, total: int) -> None:
        if not self.enabled:
            return
        if self._status is None:
            from rich.console import Console

            self._status = Console(stderr=True).status("")
            self._status.start()
        self._status.update(f"{stage}: {done}/{total}")

    def stop(self) -> None:
        if self._status is not None:
            self._status.stop()


@app.command(no_args_is_help=True)
def report(
    path: str = opt.TARGET,
    name: str = opt.NAME,
    week: str = typer.Option(None, "--week", help="ISO week (2026-W26), 'last' (default: the last complete week) or 'this'."),
    since: str = typer.Option(None, "--since", help="Start date (YYYY-MM-DD), instead of --week."),
    until: str = typer.Option(None, "--until", help="End date, inclusive (YYYY-MM-DD); default today."),
    tz: str = opt.TZ,
    lang: str = opt.LANG,
    fmt: list[str] = typer.Option(None, "--format", "-f", show_default=False,
                                  help=f"Comma-separated formats, or the flag again: {opt.FORMATS} (default: md)."),
    out: Path = typer.Option(None, "--out", "-o", help="Folder to write the files into, named OWNER__REPO-WEEK.LANG.EXT (a date range: …-START..END.LANG.EXT); default: stdout."),
    threshold: float = opt.THRESHOLD,
    config: Path = opt.CONFIG,
    engine: str = opt.ENGINE,
    llm_model: str = opt.LLM_MODEL,
    llm_concurrency: int = opt.LLM_CONCURRENCY,
    db: str = opt.DB,
    refresh: bool = typer.Option(False, "--refresh", help="Ignore cached LLM answers and the git facts kept by earlier reports (first commits, line counts)."),
    source: str = opt.SOURCE,
    github: str = typer.Option(None, "--github", help="Enrich a clone with labels and discussion from GitHub OWNER/REPO."),
    github_url: str = opt.GITHUB_URL,
    offline: bool = opt.OFFLINE,
    link: str = typer.Option(None, "--link", help="URL of the full report, for the card's button."),
    keep: bool = typer.Option(
        None, "--store/--no-store",
        help="Keep the PRs and the rendered report in the store (default: when --db or the config's db is set).",
    ),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress or summary on stderr."),
) -> None:
    """Write the weekly report of PATH for one week (or --since/--until)."""
    from ..pipeline import generate_report, output_name, render_report
    from ..window import parse_timezone, refuse_empty, resolve_window

    refuse_empty("--github", github, "OWNER/REPO")
    formats = parse_formats(fmt) if fmt else None
    settings = opt.load_cli_settings(
        path, config=config, name=name, tz=tz, lang=lang, threshold=threshold, engine=engine, db=db,
        github_url=github_url, llm={"model": llm_model, "concurrency": llm_concurrency}, source=source,
    )
    formats = formats or parse_formats(settings.formats)
    if len(formats) > 1 and out is None:
        raise UsageError("several formats need --out DIR (one file per format)")
    check_out_folder(out)
    window = resolve_window(week, since, until, parse_timezone(settings.timezone or "UTC"))
    if link:
        from ..render.links import checked_link

        link = checked_link(link, "--link")
    # The offline report needs no store, and importing SQLAlchemy alone costs ~0.4 s of a
    # one-second budget, so the store is used when asked for (--db, db=, --store).
    store = _open_store(settings) if (keep if keep is not None else bool(settings.db)) else None
    # Closed at the end: a SQLite file takes its WAL back, so the file alone holds the data.
    with store if store is not None else nullcontext():
        progress = _Progress(not quiet)
        with stoppable(progress.stop, lambda: "interrupted; no report was written"):  # files come at the end
            rep = generate_report(path, settings, window, refresh=refresh, progress=progress,
                                  enrich_github=github, source_name=source, offline=offline, store=store)
        if link:
            rep.card.link = link
        for w in rep.warnings:
            typer.echo(f"warning: {w}", err=True)
        rendered = {f: render_report(rep, f) for f in formats}
        if out is None:
            write_out(rendered[formats[0]], "the report")
        else:
            files = {out / output_name(rep, f): text for f, text in rendered.items()}
            write_atomically(files)
            if not quiet:
                for p in files:
                    typer.echo(f"wrote {p}", err=True)
        if store is not None:
            _keep(store, rep, rendered)
        if not quiet:
            eng = rep.engine
            typer.echo(
                f"{rep.repository} {rep.week}: {counted(rep.stats['merged_prs'], 'PR')} merged, "
                f"{len(rep.sections.table)} with importance ≥ {rep.threshold:g}, {counted(len(rep.risks), 'risk')}; "
                f"engine {eng.get('name')}{_all_offline(rep)}",
                err=True,
            )
            if "requests" in eng:  # the llm engine's accounting, one line
                cost = eng.get("estimated_cost")
                # Units that fell back (PRs, sections), not the problems noted beside them (cache, store).
                fallbacks = sum(1 for f in eng.get("fallbacks", []) if f.get("unit", "").startswith(("pr:", "section:")))
                refused = eng.get("connection_failures", 0)
                typer.echo(
                    f"llm {eng.get('model')}: {counted(eng['requests'], 'request')}, "
                    f"{eng['prompt_tokens']}+{eng['completion_tokens']} tokens, {eng['cache_hits']} cached, "
                    f"{counted(eng['retries'], 'retry', 'retries')}, {counted(eng.get('repair_retries', 0), 're-ask')}, "
                    + (f"{counted(refused, 'failed connection')}, " if refused else "")
                    + f"{counted(fallbacks, 'fallback')}" + (f", ~${cost:.4f}" if cost is not None else ""),
                    err=True,
                )
                # why the endpoint was given up on, which the warnings above only name
                down = next((f["reason"] for f in eng.get("fallbacks", []) if f.get("kind") == "unreachable"), None)
                if down:
                    typer.echo(f"llm: {down}", err=True)


def _all_offline(rep) -> str:
    """` (nothing from the model: …)` for an llm report whose every part fell back to the
    offline engine (an endpoint that is down): the report exists, but a job that reads
    only this line must not take it for the model's."""
    if rep.engine.get("name") != "llm" or not rep.engine.get("fallbacks"):  # an empty week asks nothing
        return ""
    if any(a.engine == "llm" for a in rep.analyses.values()) or any(
            s.startswith("llm") for s in rep.sections.sources.values()):
        return ""
    return " (nothing from the model: every part fell back to the offline engine, see the warnings)"


def _open_store(settings):
    """The store, opened in the background while git is read (SQLAlchemy's import alone
    would cost a third of the report's time budget if done up front). Asked for with
    `--store` and no --db, the default file's folder that cannot be made fails the
    command before any work, as a --db that cannot be opened does."""
    from ..errors import StoreError
    from ..store import default_db_path, open_store

    if not settings.db:
        try:
            default_db_path().parent.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise StoreError(f"cannot make the store's folder {e.filename} ({e.strerror})",
                             "give --db FILE, or fix REPOBRIEF_DATA_DIR / XDG_DATA_HOME; or run without --store") from None
    return open_store(settings.db or None, lazy=True)


def _keep(store, rep, rendered: dict[str, str]) -> None:
    """Save the rendered formats (the pipeline saved the PRs); a store is opened only when
    asked for (--db, the config's db, --store), so one that fails here fails the command."""
    if store.read_only:  # a read-only use of a store opened read-only is no failure
        typer.echo(f"warning: the store {store.display} is read-only: the report was not kept in it", err=True)
        return
    for f, text in rendered.items():
        store.save_report(rep.repository, rep.week, rep.lang, f, text)
