"""`Retry-After` read once for every client that honours it (GitHub, the LLM endpoint,
chat webhooks): seconds, or an HTTP date (RFC 9110; proxies and gateways send one)."""

from __future__ import annotations

import math
from datetime import UTC
from email.utils import parsedate_to_datetime


def retry_after_seconds(value: str | None, now: float) -> float | None:
    """Seconds a `Retry-After` value asks to wait from `now` (epoch seconds), at least 0;
    None when there is none or it is neither a number nor an HTTP date."""
    if value is None or not value.strip():
        return None
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError):
            return None
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        seconds = when.timestamp() - now
    return max(0.0, seconds) if math.isfinite(seconds) else None
