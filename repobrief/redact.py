"""Passwords out of URLs before they are shown: a module of its own, so that what
masks an error message does not import the store. The patterns are compiled on
first use (`re` caches them), not when a run starts: most runs mask nothing."""

from __future__ import annotations

import re

# The password runs to the `@` the host follows (a host, then `/`, `?`, `#` or the end):
# an unencoded `@` or `/` in it is the password's, not the host's or the path's.
PASSWORD = r"(://[^:/@\s]*:)\S*?(@)(?=[^@/?#\s]*(?:[/?#]|$))"
_QUERY_PASSWORD = r"(?i)([?&]password=)[^&#\s]*"


def mask_url(url: str) -> str:
    """The URL with any password (in the user part or `?password=`) replaced by `***`
    (safe for messages and logs)."""
    return re.sub(_QUERY_PASSWORD, r"\1***", re.sub(PASSWORD, r"\1***\2", url))
