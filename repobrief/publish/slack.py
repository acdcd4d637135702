"""Slack incoming webhooks: Block Kit message. No signing: the webhook URL is the secret.

Slack answers `ok` with HTTP 200, and an HTTP 4xx with a short reason
(`invalid_payload`, `no_service`, …) otherwise.
"""

from __future__ import annotations

import httpx

from ..models import Report
from ..render.cards import slack_payload
from .base import Outgoing, Publisher


class SlackPublisher(Publisher):
    name = "slack"
    ok_text = "ok"
    pace = ((1, 1.0),)
    pace_why = "Slack takes about one message a second per webhook"

    def build(self, report: Report, now: float) -> Outgoing:
        return Outgoing(httpx.URL(self.webhook), slack_payload(report))
