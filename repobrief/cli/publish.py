"""`repobrief publish`: post a saved report's card to Feishu/Lark, Slack, DingTalk, WeCom or a webhook."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer

from ..errors import PublishError, RepobriefError
from . import app, stoppable

if TYPE_CHECKING:
    from ..publish import Delivery


@app.command(no_args_is_help=True)
def publish(
    report_file: Path = typer.Argument(..., metavar="REPORT.json", help="A report written by `repobrief report --format json`."),
    target: str = typer.Option(None, "--target", "-t", help="feishu, lark, slack, dingtalk, wecom or webhook (env REPOBRIEF_PUBLISH_TARGET)."),
    webhook: str = typer.Option(None, "--webhook", help="The bot's webhook URL (env REPOBRIEF_PUBLISH_WEBHOOK; prefer the env: flags show in process lists)."),
    secret: str = typer.Option(None, "--secret", help="Signing secret for feishu, lark, dingtalk, webhook (env REPOBRIEF_PUBLISH_SECRET)."),
    link: str = typer.Option(None, "--link", help="URL of the full report for the card's button (env REPOBRIEF_PUBLISH_LINK)."),
    config: Path = typer.Option(None, "--config", help="Config file with \\[\\[publish]] targets (default: repobrief.toml, or a pyproject.toml with \\[tool.repobrief], found above the current folder)."),
    retries: int = typer.Option(3, "--retries", min=0, max=10, help="Retries on rate limits, 5xx answers and failed connections (never after the card was sent)."),
    timeout: float = typer.Option(10.0, "--timeout", min=0.1, help="Seconds to wait for each answer."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="Print nothing on success."),
) -> None:
    """Post the chat card of REPORT.json (signed where the platform signs) and check the platform's answer."""
    from ..config import load_settings
    from ..publish import Delivery, load_report, resolve_targets
    from ..publish import publish as post

    progress = _Progress()
    with stoppable(lambda: None, progress.said):
        report = load_report(report_file)
        settings = load_settings(Path.cwd(), config_file=config)
        targets = resolve_targets(settings, target, webhook, secret, link)
        progress.targets = [(t.target, t.webhook) for t in targets]
        failures: list[tuple[str, RepobriefError]] = []
        for t in targets:
            progress.delivery = Delivery()
            try:
                result = post(report, t, retries=retries, timeout=timeout, delivery=progress.delivery)
            except RepobriefError as e:
                progress.done("failed")
                if len(targets) == 1:
                    raise
                # One bad or unreachable target must not keep the card from the others.
                failures.append((t.target, e))
                typer.echo(f"error: {e}", err=True)
                continue
            progress.done("posted")
            if not quiet:
                tries = "" if result.attempts == 1 else f" after {result.attempts} attempts"
                typer.echo(f"posted {report.repository} {report.week} to {result.target} at {result.host}{tries}", err=True)
    if failures:
        names = ", ".join(name for name, _ in failures)
        raise PublishError(f"{len(failures)} of {len(targets)} targets failed ({names})",
                           "post to each again with --target NAME: publish without --target posts to every "
                           "target again, the ones that took the card too")


class _Progress:
    """Where `publish` is, for the line it prints when Ctrl-C or SIGTERM stops it."""

    def __init__(self) -> None:
        self.targets: list[tuple[str, str]] = []  # (target, webhook URL), in posting order
        self.outcomes: list[str] = []  # "posted" or "failed", for the targets done so far
        self.delivery: Delivery | None = None  # how far the card to the next target got

    def done(self, outcome: str) -> None:
        self.outcomes.append(outcome)
        self.delivery = None

    def said(self) -> str:
        from ..publish import redact_url
        from ..publish.base import MAY_HAVE_BEEN_POSTED, POSTED

        if not self.targets:
            return "interrupted; nothing was posted"
        n = len(self.outcomes)
        parts = ["interrupted"]
        if self.delivery is not None and n < len(self.targets):
            name, webhook = self.targets[n]
            where = f"{name} at {redact_url(webhook)}"
            if self.delivery.state == POSTED:
                parts = [f"interrupted; the card was posted to {where}"]
            elif self.delivery.state == MAY_HAVE_BEEN_POSTED:
                parts = [f"interrupted while posting to {where}: the card was sent and may or may not have been "
                         "posted; check the chat before running publish again"]
            else:
                parts = [f"interrupted while posting to {where}: the card was not posted"]
            n += 1
        done = list(zip(self.targets, self.outcomes, strict=False))
        posted = [name for (name, _), outcome in done if outcome == "posted"]
        failed = [name for (name, _), outcome in done if outcome == "failed"]
        if posted:
            parts.append("posted to " + ", ".join(posted))
        if failed:
            parts.append("failed: " + ", ".join(failed) + " (see above)")
        if n < len(self.targets):
            parts.append("not posted to " + ", ".join(name for name, _ in self.targets[n:]))
        return "; ".join(parts)
