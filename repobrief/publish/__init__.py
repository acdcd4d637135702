"""Posting a report's card to team chat: one publisher per platform, looked up by name.

`publish(report, target)` builds the publisher registered for `target.target`
(see `repobrief.registry.PUBLISHERS`), posts the card with the platform's
signing, checks the platform's answer and retries transient failures. Errors
are `PublishError`s that name the target and the webhook's host, never the
secret or the full webhook URL (the URL's path or query is the bot's token).

`resolve_targets` decides where to post: flags first, then the
`REPOBRIEF_PUBLISH_*` environment variables, then the config file's
`[[publish]]` entries. A secret from the flag or the environment goes only to
targets that sign (Slack's and WeCom's webhook URL is their secret).
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

from ..config import PublishTarget, Settings
from ..errors import UsageError
from ..models import Report
from .base import Delivery, Publisher, PublishResult, redact_url

__all__ = ["Delivery", "PublishResult", "Publisher", "load_report", "publish", "redact_url", "resolve_targets"]


def publish(report: Report, target: PublishTarget, **options) -> PublishResult:
    """Post `report`'s card to `target`; `options` go to the publisher (timeout, retries, client,
    a `Delivery` that says how far the card got if the caller is interrupted…)."""
    from ..registry import PUBLISHERS

    cls = PUBLISHERS.get(target.target)
    if target.link:
        # A copy: the caller's report (and the next target) keep their own link.
        report = replace(report, card=replace(report.card, link=target.link))
    return cls(target.webhook, target.secret, **options).send(report)


def resolve_targets(
    settings: Settings,
    target: str | None = None,
    webhook: str | None = None,
    secret: str | None = None,
    link: str | None = None,
    env: dict[str, str] | None = None,
) -> list[PublishTarget]:
    """The targets to post to: one from flags/environment (completed from the config), or all configured."""
    env = dict(os.environ) if env is None else env
    target = target or env.get("REPOBRIEF_PUBLISH_TARGET") or None
    webhook_from = "--webhook" if webhook else "REPOBRIEF_PUBLISH_WEBHOOK"
    webhook = webhook or env.get("REPOBRIEF_PUBLISH_WEBHOOK") or None
    env_secret = env.get("REPOBRIEF_PUBLISH_SECRET") or None
    if link or env.get("REPOBRIEF_PUBLISH_LINK"):  # a link a card cannot use is an error, not a missing button
        from ..render.links import checked_link

        link = checked_link(link, "--link") if link else checked_link(env["REPOBRIEF_PUBLISH_LINK"], "REPOBRIEF_PUBLISH_LINK")
    configured = list(settings.publish)
    if target is None and webhook is None:
        if not configured:
            raise UsageError(
                "no publish target",
                "pass --target feishu|lark|slack|dingtalk|wecom|webhook and --webhook URL, set "
                "REPOBRIEF_PUBLISH_TARGET and REPOBRIEF_PUBLISH_WEBHOOK, or add a [[publish]] entry to repobrief.toml",
            )
        # One --secret or REPOBRIEF_PUBLISH_SECRET cannot name its target: it signs
        # the targets that sign, and Slack or WeCom beside them post unsigned.
        shared = secret if secret is not None else env_secret
        return [_with(t, shared if _signs(t.target) else None, link) for t in configured]
    if target is None:
        if len(configured) == 1:
            target = configured[0].target
        elif webhook_from == "--webhook":
            raise UsageError("--webhook needs a target",
                             "pass --target feishu|lark|slack|dingtalk|wecom|webhook (or set REPOBRIEF_PUBLISH_TARGET)")
        else:
            raise UsageError(
                "the webhook URL in the environment variable REPOBRIEF_PUBLISH_WEBHOOK needs a target",
                "set REPOBRIEF_PUBLISH_TARGET=feishu|lark|slack|dingtalk|wecom|webhook beside it, or pass --target",
            )
    if secret is None and _signs(target):
        # A --secret flag for a target that does not sign stays an error; a secret
        # left in the environment for another target does not stop this one.
        secret = env_secret
    base = next((t for t in configured if t.target == target), PublishTarget(target))
    return [_with(PublishTarget(target, webhook or base.webhook, base.secret, base.link), secret, link)]


def _signs(target: str) -> bool:
    from ..registry import PUBLISHERS

    try:
        return PUBLISHERS.get(target).signs
    except UsageError:
        return True  # an unknown target: `publish` reports it, with the nearest name


def _with(t: PublishTarget, secret: str | None, link: str | None) -> PublishTarget:
    return PublishTarget(t.target, t.webhook, t.secret if secret is None else secret, link or t.link)


def load_report(path: str | Path) -> Report:
    """A `Report` from a REPORT.json written by `repobrief report --format json` (or the site)."""
    from ..output import read_json
    from ..serialize import report_from_dict

    path = Path(path)
    try:
        data = read_json(path, "give the .json file written by `repobrief report --format json`")
    except FileNotFoundError:
        raise UsageError(f"report file {str(path)!r} does not exist", "write one with `repobrief report PATH --format json --out DIR`") from None
    except IsADirectoryError:
        raise UsageError(f"{str(path)!r} is a folder; give the REPORT.json file") from None
    return report_from_dict(data, where=repr(str(path)))
