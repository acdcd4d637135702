"""`repobrief sync`: copy a GitHub repository's merged pull requests (with labels,
reviews and discussion) into the store, incrementally, so that reports can be
written from the store with `--offline`."""

from __future__ import annotations

from pathlib import Path

import typer

from ..errors import UsageError
from . import app, interrupted


@app.command(no_args_is_help=True)
def sync(
    target: str = typer.Argument(..., help="github:OWNER/REPO, OWNER/REPO or a clone URL (https://github.com/OWNER/REPO.git)."),
    since: str = typer.Option(None, "--since", help="Sync PRs merged on or after this date (YYYY-MM-DD); default: the last sync's."),
    tz: str = typer.Option(None, "--tz", help="IANA time zone --since is read in (default: config, else UTC)."),
    db: str = typer.Option(None, "--db", help="Store: a SQLite file or a database URL (default: user data dir)."),
    github_url: str = typer.Option(None, "--github-url", help="GitHub API URL (GitHub Enterprise: https://HOST/api/v3)."),
    config: Path = typer.Option(None, "--config", help="Config file (default: repobrief.toml, or a pyproject.toml with \\[tool.repobrief], found above the current folder)."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="Only errors and rate-limit waits on stderr."),
) -> None:
    """Fetch what is new or updated since the last sync; safe to interrupt and run again."""
    from datetime import datetime, time

    from ..config import load_settings
    from ..github.auth import github_url_flag, normalize_api_url, resolve_token
    from ..github.client import GitHubClient
    from ..github.pulls import PullRequestFetcher
    from ..github.sync import SOURCE, stored_name, sync_repository
    from ..sources.github import check_clone_host, parse_repository
    from ..store import open_store
    from ..window import parse_date, parse_timezone, refuse_empty

    try:
        repository = parse_repository(target)  # the forms `report --source github` takes, clone URLs among them
    except UsageError:
        local = Path(target).expanduser().exists()
        raise UsageError(
            f"invalid sync target {target!r}" + ("; it is a local folder, and sync reads GitHub" if local else "")
            + "; expected github:OWNER/REPO, OWNER/REPO or a clone URL",
            "e.g. repobrief sync github:verl-project/verl (a clone's reports need no sync)",
        ) from None
    for option, value in (("--tz", tz), ("--db", db), ("--github-url", github_url)):
        refuse_empty(option, value)  # an unset variable, not the default store or server
    if tz:
        parse_timezone(tz)  # a bad flag is a usage error (2), before the config would call it a bad option (3)
    if github_url:
        normalize_api_url(github_url)  # likewise
    overrides = {"timezone": tz, "db": db, "github": {"url": github_url} if github_url else {}}
    settings = load_settings(Path.cwd(), config_file=config, overrides=overrides)
    zone = parse_timezone(tz or settings.timezone or "UTC")
    url = normalize_api_url(settings.github.url)
    check_clone_host(target, url)

    def on_wait(message: str, seconds: float) -> None:
        typer.echo(f"github: {message}", err=True)  # always shown (a silent pause looks like a hang), as `report` shows it

    with open_store(settings.db or None) as store:
        if since is not None:
            start = datetime.combine(parse_date(since, "--since"), time(0), zone)
            if start > datetime.now(zone):
                # nothing can have merged yet, and the date would become every later sync's start
                raise UsageError(f"--since {since} is in the future", "give the first day of the PRs to sync, e.g. --since 2026-01-01")
        else:
            state = store.get_sync_state(stored_name(repository, settings.branch or None, store), SOURCE)
            first = (state.extra or {}).get("since") if state else None
            pending = (state.extra or {}).get("pending") if state else None
            first = first or (pending or {}).get("since")
            if not first:
                raise UsageError(
                    f"{repository} has not been synced into {store.display} yet: give --since",
                    f"e.g. repobrief sync github:{repository}{github_url_flag(url)} --since 2026-06-01",
                )
            start = datetime.fromisoformat(first)
        token = resolve_token(settings.github.token, url)
        gh = settings.github
        with GitHubClient(token, url, on_wait=on_wait, max_retries=gh.max_retries, backoff=gh.backoff, max_wait=gh.max_wait) as client:
            fetcher = PullRequestFetcher(client, repository, branch=settings.branch or None)

            def on_page(result) -> None:
                if not quiet:
                    typer.echo(f"  {len(result.numbers)} PRs stored so far ({client.stats.summary()})", err=True)

            try:
                result = sync_repository(fetcher, store, start, on_page=on_page)
            except KeyboardInterrupt:
                interrupted(f"interrupted; what was fetched is stored in {store.display}. "
                            "Run the same command to continue.")
        for w in fetcher.warnings:
            typer.echo(f"warning: {w}", err=True)
        if not quiet:
            typer.echo(f"{result.summary()}; {client.stats.summary()}; store {store.display}")
