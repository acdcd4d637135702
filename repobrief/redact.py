"""Passwords out of URLs before they are shown: a module of its own, so that what
masks an error message does not import the store."""

from __future__ import annotations

import re

# The password runs to the `@` the host follows (a host, then `/`, `?`, `#` or the end):
# an unencoded `@` or `/` in it is the password's, not the host's or the path's.
PASSWORD_RE = re.compile(r"(://[^:/@\s]*:)\S*?(@)(?=[^@/?#\s]*(?:[/?#]|$))")
_QUERY_PASSWORD_RE = re.compile(r"([?&]password=)[^&#\s]*", re.IGNORECASE)


def mask_url(url: str) -> str:
    """The URL with any password (in the user part or `?password=`) replaced by `***`
    (safe for messages and logs)."""
    return _QUERY_PASSWORD_RE.sub(r"\1***", PASSWORD_RE.sub(r"\1***\2", url))
