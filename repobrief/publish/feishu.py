"""Feishu (and Lark, its international edition) custom bots: interactive card, signed in the body.

Signing (bot security setting "signature verification"): `timestamp` is the
current time in seconds, `sign` is base64(HMAC-SHA256 keyed by
"{timestamp}\\n{secret}" over an empty message); both go into the JSON body.
Feishu answers HTTP 200 even when it refuses a message, with a non-zero `code`.
"""

from __future__ import annotations

import base64
import hashlib
import hmac

import httpx

from ..models import Report
from ..render.cards import feishu_payload
from .base import Outgoing, Publisher


def feishu_sign(timestamp: str, secret: str) -> str:
    key = f"{timestamp}\n{secret}".encode()
    return base64.b64encode(hmac.new(key, b"", hashlib.sha256).digest()).decode("ascii")


class FeishuPublisher(Publisher):
    name = "feishu"
    signs = True
    code_keys = ("code", "StatusCode")  # StatusCode: the older answers
    transient_codes = frozenset({11232})  # "frequency limited"
    pace = ((5, 1.0), (100, 60.0))
    pace_why = "a custom bot takes 5 messages a second and 100 a minute"
    hints = {
        19021: "the signature was refused: check --secret, and that this machine's clock is right",
        19022: "the bot only accepts some IP addresses; allow this machine's address in the bot's settings",
        19024: "the bot requires a keyword in every message; add it to the bot's settings or remove the rule",
        9499: "the request was malformed; run `repobrief report … --format feishu` to inspect the card",
        19001: "the webhook token is wrong or the bot was removed; copy the webhook URL again",
    }

    def build(self, report: Report, now: float) -> Outgoing:
        body = feishu_payload(report)
        if self.secret:
            timestamp = str(int(now))
            body = {"timestamp": timestamp, "sign": feishu_sign(timestamp, self.secret), **body}
        return Outgoing(httpx.URL(self.webhook), body)


class LarkPublisher(FeishuPublisher):
    name = "lark"
