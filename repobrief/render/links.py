"""Which URLs a rendered report may link to.

PR URLs and the report link come from sources and flags; a `javascript:` or
`data:` URL in an `href` would run code when clicked, so every output links
only to http(s) URLs and drops anything else.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from ..models import Report


def safe_link(url: str | None) -> str | None:
    """`url` when it is an absolute http(s) URL without control characters, with a port
    from 1 to 65535 if any, else None."""
    if not url or not isinstance(url, str):
        return None
    url = url.strip()
    if any(ord(c) < 0x21 or c in '"<>\\`' for c in url):
        return None
    try:
        parts = urlsplit(url)
        port = parts.port  # ValueError: not a number, or not within 0-65535
    except ValueError:
        return None
    if parts.scheme.lower() not in ("http", "https") or not parts.netloc or port == 0:
        return None
    return url


# The longest report link a card takes: Slack drops a button whose URL is over 3,000
# characters, and WeCom's whole message is at most 4,096 bytes, the link line included.
LINK_MAX = 2000


def link_too_long(url: str) -> str | None:
    """Why `url` is too long for a card's button, or None. Measured as sent: a character
    outside ASCII is several bytes (`周` is 3), and the cards' escaping writes a parenthesis
    as `%28`."""
    url = url.strip()
    sent = len(url.encode("utf-8")) + 2 * (url.count("(") + url.count(")"))
    if sent > LINK_MAX:
        return (f"is {sent:,} bytes long as sent; a card's button takes at most {LINK_MAX:,} "
                "(Slack drops a longer one, and WeCom's whole message is 4,096 bytes)")
    return None


def checked_link(url: str, option: str) -> str:
    """`url` from the user (`option` names where it was given), or a UsageError saying
    why a card would have no button for it."""
    from ..config import http_url_problem
    from ..errors import UsageError

    link = safe_link(url)
    if link is None:
        text = url.strip()
        if any(ord(c) <= 0x20 for c in text):
            why = "contains a space or a control character"
        else:  # an http(s) URL's own problem (a port out of range, a bad host name), if it is one
            why = (text.lower().startswith(("http://", "https://")) and http_url_problem(text)) or \
                "is not an absolute http(s) URL"
        raise UsageError(f"{option} {text!r} {why}; give the full address, e.g. "
                         "https://reports.example.com/2026-W26.html (a space is written %20)")
    too_long = link_too_long(link)
    if too_long:
        raise UsageError(f"{option} {too_long}", "link to a shorter address, e.g. the report's page on its own path")
    return link


def pr_link(report: Report, number: int, url: str | None = None) -> str | None:
    """The PR's own URL when the source knew it, else its GitHub URL for an OWNER/REPO name."""
    if url is None:
        url = next((pr.url for pr in report.pull_requests if pr.number == number), None)
    if url:
        return safe_link(url)
    if report.repository.count("/") == 1 and all(report.repository.split("/")):
        return safe_link(f"https://github.com/{report.repository}/pull/{int(number)}")
    return None
