"""WeCom (企业微信) group robots: markdown message. No signing: the `key` in the URL is the secret."""

from __future__ import annotations

import httpx

from ..models import Report
from ..render.cards import wecom_payload
from .base import Outgoing, Publisher


class WeComPublisher(Publisher):
    name = "wecom"
    code_keys = ("errcode",)
    transient_codes = frozenset({45009})  # "api freq out of limit": 20 messages a minute per robot
    pace = ((20, 60.0),)
    pace_why = "WeCom takes 20 messages a minute per robot"
    hints = {93000: "the webhook key is wrong or the robot was removed; copy the webhook URL again"}

    def build(self, report: Report, now: float) -> Outgoing:
        return Outgoing(httpx.URL(self.webhook), wecom_payload(report))
