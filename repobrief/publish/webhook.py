"""A generic JSON webhook: the card's fields and the full report JSON, optionally signed.

Body: `{"event": "repobrief.report", "repository", "week", "title",
"card": {title, highlights, risks, button, link}, "report": <report JSON>}`.
With a secret, two headers let the receiver check origin and freshness (the
scheme Slack and Stripe use): `X-Repobrief-Timestamp: <seconds>` and
`X-Repobrief-Signature: sha256=<hex HMAC-SHA256 keyed by the secret over
"{timestamp}." + raw body>`.
"""

from __future__ import annotations

import hashlib
import hmac
from dataclasses import asdict

import httpx

from ..models import Report
from .base import Outgoing, Publisher


def webhook_signature(timestamp: str, body: bytes, secret: str) -> str:
    return "sha256=" + hmac.new(secret.encode(), timestamp.encode() + b"." + body, hashlib.sha256).hexdigest()



class WebhookPublisher(Publisher):
    name = "webhook"
    signs = True

    def build(self, report: Report, now: float) -> Outgoing:
        from ..serialize import report_to_dict

        body = {
            "event": "repobrief.report",
            "repository": report.repository,
            "week": report.week,
            "title": report.card.title,
            "card": asdict(report.card),
            "report": report_to_dict(report),
        }
        out = Outgoing(httpx.URL(self.webhook), body)
        if self.secret:
            timestamp = str(int(now))
            out.headers["X-Repobrief-Timestamp"] = timestamp
            out.headers["X-Repobrief-Signature"] = webhook_signature(timestamp, out.content(), self.secret)
        return out
