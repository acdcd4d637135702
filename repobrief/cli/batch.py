"""`repobrief batch export|import`: the per-PR LLM requests of a week as an OpenAI
Batch API file for vLLM, Ray Data or a Batch API, and the answers back into the
store's response cache (see `repobrief.batch`)."""

from __future__ import annotations

from pathlib import Path

import typer

from ..errors import RepobriefError, UsageError
from . import app, counted, write_out
from . import options as opt

batch_app = typer.Typer(
    name="batch",
    help=(
        "Batch LLM analysis: export a week's per-PR requests (OpenAI Batch API format) for vLLM run-batch, "
        "Ray Data + vLLM or a Batch API, then import the answers so that `report --engine llm` only composes."
    ),
    no_args_is_help=True,
)
app.add_typer(batch_app, name="batch")


# Flags of a one-repository export, and the option of a team config's repository table that
# does their work.
_TABLE_OPTION = {"--name": "name", "--tz": "timezone", "--lang": "languages", "--threshold": "threshold",
                 "--source": "source (github:OWNER/REPO or a clone's path)", "--github-url": "github.url"}


class PartialBatch(RepobriefError):
    """Part of a batch step failed (a repository's export, rows of a results file); the rest was done."""

    exit_code = 8


@batch_app.command("export")
def export(
    path: str = typer.Argument(None, help="A local clone or github:OWNER/REPO. Omit it to export a team config (--config)."),
    config: Path = typer.Option(
        None, "--config", "-c",
        help="With PATH: its repobrief.toml (as for `report`). Without PATH: a team config (as for `run`): every repository in it.",
    ),
    out: str = typer.Option(..., "--out", "-o", help="Requests file to write (JSON Lines); '-' for stdout."),
    week: str = typer.Option(None, "--week", help="ISO week (2026-W26), 'last' (default: the last complete week) or 'this'."),
    since: str = typer.Option(None, "--since", help="Start date (YYYY-MM-DD), instead of --week (PATH only)."),
    until: str = typer.Option(None, "--until", help="End date, inclusive (YYYY-MM-DD) (PATH only)."),
    tz: str = opt.TZ,
    lang: str = opt.LANG,
    name: str = opt.NAME,
    threshold: float = opt.THRESHOLD,
    llm_model: str = typer.Option(None, "--llm-model", help="The model that will answer (required somewhere: flag, config or REPOBRIEF_LLM_MODEL)."),
    db: str = opt.DB,
    source: str = opt.SOURCE,
    github: str = typer.Option(None, "--github", help="Enrich a clone with labels and discussion from GitHub OWNER/REPO (as the report run will)."),
    github_url: str = opt.GITHUB_URL,
    offline: bool = opt.OFFLINE,
    only: list[str] = typer.Option(None, "--only", help="With a team config: only this repository (its name or source); repeatable."),
    digest: bool = typer.Option(False, "--digest", help="With a team config: also the digest languages, as `run --digest` writes them."),
    include_cached: bool = typer.Option(False, "--include-cached", help="Also export PRs whose answer is already in the store."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No summary on stderr."),
) -> None:
    """Write a week's per-PR LLM requests as an OpenAI Batch API file.

    One row per PR the llm engine would ask about, its custom_id the engine's cache key; PRs already answered in the store are left out. Export with the settings the report run will use (model, endpoint, language, time zone): the requests, and so the keys, depend on them.
    """
    from ..batch import BatchExport
    from ..window import refuse_empty

    if path is None and config is None:
        raise UsageError("give PATH (one repository) or --config team.toml (every repository of a team config)")
    refuse_empty("--db", db)
    if out != "-" and Path(out).is_dir():
        raise UsageError(f"--out {out!r} is a folder", f"give the requests file to write, e.g. {Path(out) / 'requests.jsonl'}")
    with BatchExport(include_cached=include_cached) as export:
        if path is None:
            single = {"--name": name, "--tz": tz, "--lang": lang, "--threshold": threshold, "--source": source,
                      "--github": github, "--github-url": github_url, "--since": since, "--until": until}
            given = [flag for flag, value in single.items() if value is not None]
            if given:
                flag = given[0]
                raise UsageError(f"{flag} applies to one repository (PATH), not to a team config",
                                 "a team config's weeks are given with --week" if flag in ("--since", "--until")
                                 else "a team config has no such option: give PATH to export one clone enriched from GitHub"
                                 if flag == "--github" else f"set {_TABLE_OPTION[flag]} in the repository's table of {config} instead")
            export.add_team(config, week, db=db, llm={"model": llm_model}, only=only, digest=digest, offline=offline)
        else:
            if only or digest:
                raise UsageError(f"{'--only' if only else '--digest'} applies to a team config (--config without PATH)")
            from ..window import parse_timezone, resolve_window

            settings = opt.load_cli_settings(
                path, config=config, name=name, tz=tz, lang=lang, threshold=threshold, engine="llm", db=db,
                github_url=github_url, llm={"model": llm_model}, source=source,
            )
            window = resolve_window(week, since, until, parse_timezone(settings.timezone or "UTC"))
            export.add(path, settings, window, offline=offline, enrich_github=github, source_name=source)
        if export.weeks == 0 and export.failed:
            _report_failures(export.failed)
            raise PartialBatch(f"{counted(len(export.failed), 'repository', 'repositories')} failed; nothing was written",
                               "see the errors above")
        if out == "-":
            _echo_rows(export.rows)
        else:
            export.write(out)
    if not quiet:
        typer.echo(f"wrote {'stdout' if out == '-' else out}: {export.line()}", err=True)
    if export.failed:
        _report_failures(export.failed)
        raise PartialBatch(f"{len(export.failed)} repositor{'ies' if len(export.failed) != 1 else 'y'} failed; "
                            "the others' requests were written", "fix them and export again with --only NAME")


def _echo_rows(rows: list[dict]) -> None:
    import json

    write_out("".join(json.dumps(row, ensure_ascii=False, separators=(",", ":")) + "\n" for row in rows), "the requests")


def _report_failures(failed) -> None:
    for label, error, hint in failed:
        typer.echo(f"error: {label}: {error}", err=True)
        if hint:
            typer.echo(f"  hint: {hint}", err=True)


@batch_app.command("import", no_args_is_help=True)
def import_(
    results: Path = typer.Argument(..., help="Batch API output (JSON Lines), or a folder of .json/.jsonl files."),
    db: str = opt.DB,
    quiet: bool = typer.Option(False, "--quiet", "-q", help="Only errors on stderr."),
) -> None:
    """Store the answers of a Batch API output file in the response cache.

    Each answer goes under its custom_id; failed, empty and unknown rows are reported and never stored. Use the store (--db) the report run will use; importing again stores nothing twice.
    """
    from ..batch import import_rows, read_jsonl
    from ..config import load_settings
    from ..llm.prompts import PROMPT_VERSION
    from ..store import open_store
    from ..window import refuse_empty

    refuse_empty("--db", db)  # an unset variable would import into the default store
    settings = load_settings(None, overrides={"db": db})
    rows = list(read_jsonl(results))  # all of it before the store is touched: a corrupt file imports nothing
    if not rows:  # a batch run that failed may leave an empty file
        raise UsageError(f"{results} holds no rows", "give the Batch API output of a finished batch run; nothing was imported")
    with open_store(settings.db or None) as store:
        summary = import_rows(rows, store, prompt_version=PROMPT_VERSION)
        where = store.display
    if not quiet:
        typer.echo(f"{summary.line()} (store: {where})", err=True)
    for problem in summary.problems:
        typer.echo(f"  {problem}", err=True)
    if summary.skipped:
        raise PartialBatch(
            f"{summary.skipped} of {summary.rows} {'row was' if summary.rows == 1 else 'rows were'} not imported",
            "their PRs will be asked live by the report run; rerun them in a batch and import again to avoid that",
        )


__all__ = ["batch_app", "export", "import_"]
