"""`repobrief run --config team.toml`: every repository of a team config, concurrently,
and an optional ecosystem digest across them."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import typer

from ..errors import PublishError, RepobriefError, UsageError
from ..output import check_out_folder
from . import app, counted, stoppable


class PartialFailure(RepobriefError):
    """Some repositories of a run failed; the others were reported."""

    exit_code = 8


def _repositories(n: int) -> str:
    return counted(n, "repository", "repositories")


class _RunProgress:
    """One line per finished repository on stderr; a progress bar as well when stderr is a terminal."""

    def __init__(self, total: int, enabled: bool) -> None:
        self.total = total
        self.done = 0
        self.failed = 0
        self.tokens = 0
        self.enabled = enabled
        self._started = False
        self._bar = None
        if enabled and sys.stderr.isatty():
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            self._bar = Progress(TextColumn("repositories"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                                 console=Console(stderr=True), transient=True)
            self._task = self._bar.add_task("run", total=total)

    def start(self) -> None:
        # The bar's refresh thread starts with the first finished repository, after the
        # local executor has forked its workers: forking a process that runs threads
        # can leave a lock held in the children.
        self._started = True

    def __call__(self, res) -> None:
        if self._bar is not None and self._started and not self._bar.live.is_started:
            self._bar.start()
        self.done += 1
        self.failed += 0 if res.ok else 1
        # tokens the LLM endpoints reported for this repository's reports (none offline)
        tokens = sum(int((r.get("engine") or {}).get("total_tokens") or 0) for r in res.reports.values())
        self.tokens += tokens
        if not self.enabled:
            return
        count = f"[{self.done}/{self.total}" + (f", {self.failed} failed]" if self.failed else "]")
        if res.ok:
            first = next(iter(res.reports.values()), None)
            prs = f"{counted(first['stats']['merged_prs'], 'PR')}, " if first else ""
            line = f"{count} {res.label}: {prs}{counted(len(res.files), 'file')} in {res.seconds:.1f} s"
            if tokens:
                line += f", {counted(tokens, 'token')} ({self.tokens:,} in all)"
            if res.published:
                line += f", posted to {', '.join(res.published)}"
            if res.not_posted:  # reported all the same: its files are written
                line += f"; {_not_posted(res)}"
        else:
            line = f"{count} FAILED {res.label}: {res.error}"
        if self._bar is not None:
            self._bar.console.print(line, markup=False, highlight=False)
            self._bar.advance(self._task)
        else:
            typer.echo(line, err=True)

    def stop(self) -> None:
        if self._bar is not None:
            self._bar.stop()


@app.command(no_args_is_help=True)
def run(
    config: Path = typer.Option(..., "--config", "-c", help="Team config (TOML) listing the repositories; see docs/scaling.md."),
    week: str = typer.Option(None, "--week", help="ISO week (2026-W26), 'last' (default: the last complete week) or 'this'."),
    digest: bool = typer.Option(False, "--digest", help="Also write the ecosystem digest (Markdown + JSON, in the \\[digest] languages)."),
    out: Path = typer.Option(None, "--out", "-o", help="Output folder (default: the config's `out`, relative to it)."),
    db: str = typer.Option(None, "--db", help="Shared store for PRs and rendered reports: a SQLite file or postgresql://… URL."),
    workers: int = typer.Option(None, "--workers", "-j", min=0, help="Repositories at a time; 0: one per CPU (default: the config's `workers`, else one per CPU)."),
    executor: str = typer.Option(None, "--executor", help="Where jobs run: local (processes, default), threads, serial or ray (a Ray cluster; the `ray` extra)."),
    ray_address: str = typer.Option(None, "--ray-address", help="With --executor ray: 'auto' (the running cluster), ray://HEAD:10001, or none to start a local one."),
    only: list[str] = typer.Option(None, "--only", help="Run only this repository (its name, as progress and errors show it, or its source); repeatable."),
    no_publish: bool = typer.Option(False, "--no-publish", help="Write files but post no cards."),
    offline: bool = typer.Option(False, "--offline", help="No requests to GitHub: git sources read clones, github sources read the store (an llm engine still asks its model)."),
    refresh: bool = typer.Option(False, "--refresh", help="Ignore cached LLM answers and the git facts kept by earlier reports (first commits, line counts)."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="Print only warnings and errors."),
) -> None:
    """Report every repository of a team config for one week, concurrently (the longest first, by the last run's times); one failing repository does not stop the others."""
    from ..registry import EXECUTORS
    from ..team import check_output_folders, load_team, plan_jobs, run_jobs
    from ..window import refuse_empty

    refuse_empty("--db", db)  # an unset variable, not the team's store or none
    check_out_folder(out)  # a bad flag, said before the config is even read
    team = load_team(config)
    ts = team.settings
    if executor is not None and executor not in EXECUTORS:  # the config's own `executor` is checked by load_team
        import difflib

        near = difflib.get_close_matches(executor, EXECUTORS.names(), n=1)
        raise UsageError(f"unknown executor {executor!r}; valid: {', '.join(EXECUTORS.names())}",
                         f"did you mean {near[0]!r}?" if near else None)
    executor = executor or ts.executor
    if only:
        team.keep_only(only, config)
    check_output_folders(team, out, digest)
    jobs, failed = plan_jobs(team, week, db=db, digest=digest, publish=not no_publish, offline=offline, out=out,
                             refresh=refresh)
    store_url = next((j.db for j in jobs if j.db), "")
    if store_url:
        # A store that cannot be opened (bad URL, server down, wrong password) stops the run before any work.
        from ..store import open_store

        open_store(store_url).close()

    progress = _RunProgress(len(jobs) + len(failed), not quiet)
    for res in failed:
        progress(res)
    progress.start()
    options = {"address": ray_address, "settings": ts.ray, "quiet": quiet} if executor == "ray" else None
    with stoppable(progress.stop, lambda: f"interrupted; {progress.done} of {_repositories(progress.total)} finished, "
                   "the others were stopped (a report's files are written whole or not at all)"
                   + ("; no digest" if digest else "")):
        results = run_jobs(jobs, executor=executor, workers=ts.workers if workers is None else workers,
                           on_result=progress, options=options)
    results = sorted(failed + results, key=lambda r: r.index)

    for r in results:  # as `report` does, even with -q; once per repository, not per language
        for w in dict.fromkeys(w for rep in r.reports.values() for w in rep.get("warnings", [])):
            typer.echo(f"warning: {r.label}: {w}", err=True)
    for r in results:
        if r.ok and not r.not_posted:
            continue
        typer.echo(f"error: {r.label}: {r.error if not r.ok else _not_posted(r)}", err=True)
        if r.hint:
            typer.echo(f"  hint: {r.hint}", err=True)
    digest_error = None
    if digest:
        # A run of some repositories (--only) updates their rows of the week's digest; the
        # others keep theirs from the earlier digest instead of dropping out of it. Written
        # after the repositories' errors are said: a digest that cannot be written must not
        # hide them, nor the exit code they give.
        try:
            _write_digest(results, ts, out if out is not None else team.base_dir / (ts.digest.out or ts.out), quiet,
                          merge=bool(only))
        except RepobriefError as e:
            digest_error = e
            typer.echo(f"error: digest: {e.message}", err=True)
            if e.hint:
                typer.echo(f"  hint: {e.hint}", err=True)
    _end(results, quiet, digest_error)


def _not_posted(r) -> str:
    """A repository whose reports were written but whose cards were not all posted."""
    # "not confirmed": refused, or sent with no answer (it may have been posted)
    return f"{'card' if len(r.not_posted) == 1 else 'cards'} not confirmed: {'; '.join(r.not_posted)}"


def _end(results, quiet: bool, digest_error: RepobriefError | None = None) -> None:
    """The run's one summary line: on stderr when all went well, else as the error it ends with
    (exit 8 when some repositories were not reported, 7 when all were but a card was not posted,
    else the digest's own error's when it could not be written)."""
    failed = sum(1 for r in results if not r.ok)
    cards = sum(len(r.not_posted) for r in results)
    summary = (f"{len(results) - failed} of {_repositories(len(results))} reported"
               + (f", {failed} failed" if failed else "")
               + (f"; {counted(cards, 'card')} not confirmed" if cards else "")
               + ("; the digest was not written" if digest_error else ""))
    if failed:
        raise PartialFailure(summary, "see the errors above" if failed == len(results) else
                             "fix the failing repositories and run again with --only NAME")
    if cards:
        raise PublishError(summary, "the reports are written; fix the publish targets above, then post each card "
                           "not confirmed with `repobrief publish REPORT.json --target TARGET --webhook URL` "
                           "(running again with --only NAME posts to all of its targets again)")
    if digest_error:
        ended = RepobriefError(summary, digest_error.hint)
        ended.exit_code = digest_error.exit_code
        raise ended
    if not quiet:
        typer.echo(summary + _into(results), err=True)


def _into(results) -> str:
    """Where the files went: the out folder that holds a folder per repository, or the
    folders themselves when a repository names its own `out`."""
    folders = sorted({Path(f).parent.absolute() for r in results for f in r.files})
    if not folders:
        return ""
    common = Path(os.path.commonpath(folders))
    if all(f == common or f.parent == common for f in folders):
        return f" into {common}"
    return f" into {', '.join(map(str, folders))}" if len(folders) <= 3 else f" into {len(folders)} folders"


def _write_digest(results, ts, folder: Path, quiet: bool, *, merge: bool = False) -> None:
    from ..digest import build_digest, digest_file_name, render_digest_md
    from ..output import write_atomically
    from ..render.json import inert_json

    # A card that could not be posted is a delivery failure, not a reporting one: the
    # repository's reports were written, so its numbers stay in the digest.
    reported = [r for r in results if r.ok]
    failed = [{"repository": r.label, "error": r.error} for r in results if not r.ok]
    not_published = [{"repository": r.label, "error": "; ".join(r.not_posted)} for r in reported if r.not_posted]
    files: dict[Path, str] = {}
    for lang in ts.digest.languages:
        reports = [r.reports[lang] for r in reported if lang in r.reports]
        if not reports:
            continue
        d = build_digest(reports, lang, highlights=ts.digest.highlights, failed=failed, not_published=not_published)
        earlier = folder / digest_file_name(d, "json")
        if merge and earlier.is_file():
            d = build_digest(reports, lang, highlights=ts.digest.highlights, failed=failed, not_published=not_published,
                             earlier=_read_digest(earlier))
            if d["carried_over"] and not quiet:
                typer.echo(f"digest: kept {', '.join(d['carried_over'])} from the earlier {earlier.name}", err=True)
        files[folder / digest_file_name(d, "md")] = render_digest_md(d)
        files[folder / digest_file_name(d, "json")] = inert_json(json.dumps(d, ensure_ascii=False, indent=2)) + "\n"
    if not files:
        if not quiet:
            typer.echo("no digest: no repository was reported", err=True)
        return
    write_atomically(files)
    if not quiet:
        for p in files:
            typer.echo(f"wrote {p}", err=True)


def _read_digest(path: Path) -> dict:
    try:
        d = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise RepobriefError(f"cannot read the earlier digest {str(path)!r} to add this run to it ({e})",
                             "delete it and run again without --only to rebuild the digest of every repository") from None
    if not isinstance(d, dict) or d.get("kind") != "ecosystem_digest":
        raise RepobriefError(f"{str(path)!r} is not an ecosystem digest",
                             "delete it and run again without --only to rebuild the digest of every repository")
    return d


__all__ = ["PartialFailure", "run"]
