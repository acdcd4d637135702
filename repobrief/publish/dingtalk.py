"""DingTalk custom robots: actionCard (markdown without a link), signed in the query string.

Signing ("加签"): `timestamp` in milliseconds, `sign` = base64(HMAC-SHA256 keyed
by the secret over "{timestamp}\\n{secret}"), both appended to the webhook URL's
query (URL-encoded). Errors come back as HTTP 200 with a non-zero `errcode`.
"""

from __future__ import annotations

import base64
import hashlib
import hmac

import httpx

from ..models import Report
from ..render.cards import dingtalk_payload
from .base import Outgoing, Publisher


def dingtalk_sign(timestamp: str, secret: str) -> str:
    """The signature before URL-encoding (httpx encodes it in the query)."""
    digest = hmac.new(secret.encode(), f"{timestamp}\n{secret}".encode(), hashlib.sha256).digest()
    return base64.b64encode(digest).decode("ascii")


class DingTalkPublisher(Publisher):
    name = "dingtalk"
    signs = True
    code_keys = ("errcode",)
    pace = ((20, 60.0),)
    pace_why = "DingTalk takes 20 messages a minute per robot"
    hints = {
        # "send too fast": not retried, the robot is blocked for ten minutes
        130101: "DingTalk blocks a robot for 10 minutes once it gets more than 20 messages in a minute (repobrief "
                "keeps to that; other senders to the same robot count too): publish again after that",
        310000: "DingTalk refused the security check: check --secret, the robot's keyword rule and IP allow-list",
        300001: "the access_token is wrong or the robot was removed; copy the webhook URL again",
        400101: "the access_token is missing from the webhook URL; copy the whole URL",
    }

    def build(self, report: Report, now: float) -> Outgoing:
        url = httpx.URL(self.webhook)
        if self.secret:
            timestamp = str(int(now * 1000))
            url = url.copy_merge_params({"timestamp": timestamp, "sign": dingtalk_sign(timestamp, self.secret)})
        return Outgoing(url, dingtalk_payload(report))
