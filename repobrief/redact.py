"""Passwords out of URLs before they are shown: a module of its own, so that what
masks an error message does not import the store. The patterns are compiled on
first use (`re` caches them), not when a run starts: most runs mask nothing."""

from __future__ import annotations

import re

# The password runs to the `@` the host follows (a host, then `/`, `?`, `#` or the end):
# an unencoded `@` or `/` in it is the password's, not the host's or the path's. In a
# message a URL ends at whitespace; a URL given alone (`mask_url`) may hold spaces in its
# password, which a database takes as they are.
PASSWORD = r"(://[^:/@\s]*:)\S*?(@)(?=[^@/?#\s]*(?:[/?#]|$))"
_QUERY_PASSWORD = r"(?i)([?&]password=)[^&#\s]*"
_WHOLE_PASSWORD = r"(://[^:/@\s]*:)(.*?)(@)(?=[^@/?#\s]*(?:[/?#]|$))"
_WHOLE_QUERY_PASSWORD = r"(?i)([?&]password=)([^&#]*)"
# Passwords `mask_url` has masked, masked in every message after it as well: a driver's
# error can quote the password apart from its URL.
_seen: set[str] = set()
_SHORTEST_SEEN = 4  # a shorter password would mask ordinary words


def mask_url(url: str) -> str:
    """A URL given alone (a store's, an endpoint's) with any password (in the user part
    or `?password=`) replaced by `***`, safe for messages and logs; `mask_text` masks the
    password in later messages too."""
    for rx in (_WHOLE_PASSWORD, _WHOLE_QUERY_PASSWORD):
        for m in re.finditer(rx, url):
            if len(m.group(2)) >= _SHORTEST_SEEN:
                _seen.add(m.group(2))
    url = re.sub(_WHOLE_QUERY_PASSWORD, r"\1***", re.sub(_WHOLE_PASSWORD, r"\1***\3", url))
    return mask_text(url)


def mask_text(text: str) -> str:
    """A message with the password of each URL in it, and each password `mask_url` has
    masked, replaced by `***`."""
    text = re.sub(_QUERY_PASSWORD, r"\1***", re.sub(PASSWORD, r"\1***\2", text))
    for secret in sorted(_seen, key=len, reverse=True):
        text = text.replace(secret, "***")
    return text
