"""Posting a report's card to team chat: one publisher per platform, looked up by name.

`publish(report, target)` builds the publisher registered for `target.target`
(see `repobrief.registry.PUBLISHERS`), posts the card with the platform's
signing, checks the platform's answer and retries transient failures. Errors
are `PublishError`s that name the target and the webhook's host, never the
secret or the full webhook URL (the URL's path or query is the bot's token).
"""

from __future__ import annotations

from ..config import PublishTarget
from ..models import Report
from .base import Publisher, PublishResult, redact_url

__all__ = ["PublishResult", "Publisher", "publish", "redact_url"]


def publish(report: Report, target: PublishTarget, **options) -> PublishResult:
    """Post `report`'s card to `target`; `options` go to the publisher (timeout, retries, client…)."""
    from ..registry import PUBLISHERS

    cls = PUBLISHERS.get(target.target)
    if target.link:
        report.card.link = target.link
    return cls(target.webhook, target.secret, **options).send(report)
