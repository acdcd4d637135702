"""Where the GitHub token comes from, and which host an API URL belongs to.

Order, as the config loader puts the environment over the file:
`REPOBRIEF_GITHUB_TOKEN`, `GITHUB_TOKEN`, `GH_TOKEN`, `github.token` in the
config file, then `gh auth token` for the API's host. The token itself is never
part of any message: errors say where a token was looked for, not what it is.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
from dataclasses import dataclass
from urllib.parse import urlsplit

from ..errors import SourceError, UsageError

DEFAULT_API_URL = "https://api.github.com"


@dataclass(frozen=True, slots=True)
class Token:
    value: str
    origin: str  # "config", "GITHUB_TOKEN", "GH_TOKEN", "gh auth token"

    def __repr__(self) -> str:  # keeps the secret out of tracebacks and debug logs
        return f"Token(origin={self.origin!r})"


def normalize_api_url(url: str | None) -> str:
    """The REST base URL: `https://api.github.com`, or `https://HOST/api/v3` for
    GitHub Enterprise Server (a bare `https://HOST` gets `/api/v3` added)."""
    url = (url or DEFAULT_API_URL).strip().rstrip("/")
    from ..config import http_url_problem

    problem = http_url_problem(url)
    if problem:  # not quoted: it may hold credentials
        raise UsageError(f"--github-url {problem}",
                         "use https://api.github.com, or https://HOST/api/v3 for GitHub Enterprise Server")
    parts = urlsplit(url)
    # a URL that may carry a secret is refused without being shown
    if parts.username or parts.password:
        raise UsageError(
            "--github-url must not contain credentials",
            "pass the token through REPOBRIEF_GITHUB_TOKEN or GITHUB_TOKEN instead",
        )
    if "?" in url or "#" in url:
        raise UsageError(
            "--github-url must not contain a query string or a fragment (the part from '?' or '#')",
            "give the API's base URL alone (https://api.github.com, or https://HOST/api/v3 for GitHub Enterprise "
            "Server); pass the token through REPOBRIEF_GITHUB_TOKEN or GITHUB_TOKEN",
        )
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise UsageError(
            f"invalid --github-url {url!r}; expected an http(s) URL",
            "use https://api.github.com, or https://HOST/api/v3 for GitHub Enterprise Server",
        )
    host = parts.hostname or ""
    if parts.path in ("", "/") and host not in ("api.github.com",) and not _is_loopback(host):
        url = url + "/api/v3"
    return url


def github_url_flag(url: str | None) -> str:
    """` --github-url URL` for a suggested command, when `url` is not GitHub.com's API
    (a command without it would ask api.github.com); empty otherwise."""
    api_url = normalize_api_url(url)
    return "" if api_url == DEFAULT_API_URL else f" --github-url {shlex.quote(api_url)}"


def is_local(api_url: str) -> bool:
    """An API on this machine (a local proxy or test server), which may stand in for any GitHub."""
    return _is_loopback(urlsplit(api_url).hostname or "")


def _is_loopback(host: str) -> bool:
    return host in ("localhost", "127.0.0.1", "::1")


def web_host(api_url: str) -> str:
    """The host `gh` knows the server by: api.github.com -> github.com."""
    host = urlsplit(api_url).hostname or "github.com"
    return "github.com" if host == "api.github.com" else host


def resolve_token(configured: str | None, api_url: str, env: dict[str, str] | None = None) -> Token:
    """The token to send, and where it came from; one no HTTP header can carry is an error."""
    return _checked(_resolve_token(configured, api_url, env))


def _checked(token: Token) -> Token:
    """A token with a space, a line break or a non-ASCII character inside (`$(cat file)` of a
    file with two lines) cannot go in a header: httpx failed on every retry as if the network
    dropped the connection. Said here, without the token."""
    bad = next((c for c in token.value if not 0x20 < ord(c) < 0x7F), None)
    if bad is not None:
        what = {"\n": "a line break", "\r": "a carriage return", " ": "a space", "\t": "a tab"}.get(
            bad, f"the character U+{ord(bad):04X}")
        where = "github.token in the config" if token.origin == "config" else token.origin
        raise SourceError(f"the GitHub token from {where} contains {what}, which no HTTP header can carry",
                          "set it to the token alone: one line, as GitHub shows it (ghp_…, github_pat_…)")
    return token


def _resolve_token(configured: str | None, api_url: str, env: dict[str, str] | None = None) -> Token:
    env = dict(os.environ) if env is None else env
    if configured:
        # the config loader copies GITHUB_TOKEN/GH_TOKEN into github.token: name the real origin
        origin = next(
            (v for v in ("REPOBRIEF_GITHUB_TOKEN", "GITHUB_TOKEN", "GH_TOKEN") if env.get(v, "").strip() == configured.strip()),
            "config",
        )
        return Token(configured.strip(), origin)
    for var in ("REPOBRIEF_GITHUB_TOKEN", "GITHUB_TOKEN", "GH_TOKEN"):
        if env.get(var, "").strip():
            return Token(env[var].strip(), var)
    from_gh = _gh_auth_token(web_host(api_url), env)
    if from_gh:
        return Token(from_gh, "gh auth token")
    host = web_host(api_url)
    login = "gh auth login" + ("" if host == "github.com" else f" --hostname {host}")
    raise SourceError(
        f"no GitHub token found for {host}",
        "set REPOBRIEF_GITHUB_TOKEN (or GITHUB_TOKEN or GH_TOKEN), set github.token in repobrief.toml, "
        f"or run `{login}`; they are looked at in that order",
    )


def fix_hint(origin: str) -> str:
    """How to replace a rejected token, given where it came from (earlier places win)."""
    if origin == "config":
        return "fix or remove github.token in repobrief.toml, or set GITHUB_TOKEN (which is used instead of it)"
    if origin == "gh auth token":
        return "run `gh auth login` again, or set GITHUB_TOKEN to a valid token"
    later = {"REPOBRIEF_GITHUB_TOKEN": "GITHUB_TOKEN and GH_TOKEN", "GITHUB_TOKEN": "GH_TOKEN"}.get(origin)
    return f"set {origin} to a valid token, or unset it" + (f" (it is used before {later})" if later else "") + "; or run `gh auth login`"


def _gh_auth_token(host: str, env: dict[str, str]) -> str | None:
    gh = shutil.which("gh", path=env.get("PATH"))
    if gh is None:
        return None
    try:
        out = subprocess.run(
            [gh, "auth", "token", "--hostname", host],
            capture_output=True,
            text=True,
            timeout=10,
            env=env,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    token = out.stdout.strip()
    return token if out.returncode == 0 and token else None
