"""`repobrief publish`: post a saved report's card to Feishu/Lark, Slack, DingTalk, WeCom or a webhook."""

from __future__ import annotations

from pathlib import Path

import typer

from ..errors import PublishError, RepobriefError
from . import app


@app.command(no_args_is_help=True)
def publish(
    report_file: Path = typer.Argument(..., metavar="REPORT.json", help="A report written by `repobrief report --format json`."),
    target: str = typer.Option(None, "--target", "-t", help="feishu, lark, slack, dingtalk, wecom or webhook (env REPOBRIEF_PUBLISH_TARGET)."),
    webhook: str = typer.Option(None, "--webhook", help="The bot's webhook URL (env REPOBRIEF_PUBLISH_WEBHOOK; prefer the env: flags show in process lists)."),
    secret: str = typer.Option(None, "--secret", help="Signing secret for feishu, lark, dingtalk, webhook (env REPOBRIEF_PUBLISH_SECRET)."),
    link: str = typer.Option(None, "--link", help="URL of the full report for the card's button (env REPOBRIEF_PUBLISH_LINK)."),
    config: Path = typer.Option(None, "--config", help="Config file with \\[\\[publish]] targets (default: repobrief.toml found above the current folder)."),
    retries: int = typer.Option(3, "--retries", min=0, max=10, help="Retries on rate limits, 5xx answers and network errors."),
    timeout: float = typer.Option(10.0, "--timeout", min=0.1, help="Seconds to wait for each answer."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="Print nothing on success."),
) -> None:
    """Post the chat card of REPORT.json (signed where the platform signs) and check the platform's answer."""
    from ..config import load_settings
    from ..publish import load_report, resolve_targets
    from ..publish import publish as post

    report = load_report(report_file)
    settings = load_settings(Path.cwd(), config_file=config)
    targets = resolve_targets(settings, target, webhook, secret, link)
    failures: list[tuple[str, RepobriefError]] = []
    for t in targets:
        try:
            result = post(report, t, retries=retries, timeout=timeout)
        except RepobriefError as e:
            if len(targets) == 1:
                raise
            # One bad or unreachable target must not keep the card from the others.
            failures.append((t.target, e))
            typer.echo(f"error: {e}", err=True)
            continue
        if not quiet:
            tries = "" if result.attempts == 1 else f" after {result.attempts} attempts"
            typer.echo(f"posted {report.repository} {report.week} to {result.target} at {result.host}{tries}", err=True)
    if failures:
        names = ", ".join(name for name, _ in failures)
        raise PublishError(f"{len(failures)} of {len(targets)} targets failed ({names})")
