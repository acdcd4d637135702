"""Bad input: unknown repository, bad token, missing scope, no network, wrong
URL, no token. Each error says what is wrong and what to do, never shows the
token, and leaves the store as it was."""

from __future__ import annotations

import logging
import os
import socket
import stat
from datetime import datetime

import pytest
from github_support import REPO, W26_END, W26_START, client_for, fetcher_for, serve, verl
from githubserver import FakeGitHub, Fault

from repobrief.config import Settings, load_settings
from repobrief.errors import SourceError, UsageError
from repobrief.github.auth import fix_hint, normalize_api_url, resolve_token
from repobrief.github.pulls import PullRequestFetcher
from repobrief.github.sync import sync_repository
from repobrief.sources.github import GitHubSource, parse_repository
from repobrief.store import open_store

SECRET = "ghp_SuperSecretTokenValue123"


def _fetch(f):
    return list(f.merged_between(W26_START, W26_END))


@pytest.fixture()
def server():
    with serve(FakeGitHub(tokens={SECRET: "repo", "public-token": "public_repo"}), verl(W26_START, W26_END)) as s:
        s.add_repository("verl-project/private-verl", verl(W26_START, W26_END), private=True)
        yield s


def test_unknown_repository(server, caplog):
    caplog.set_level(logging.DEBUG)
    f = fetcher_for(server, "verl-project/nope", token=SECRET)
    with pytest.raises(SourceError) as e:
        _fetch(f)
    msg = str(e.value)
    assert "repository verl-project/nope was not found" in msg and "check OWNER/REPO" in msg
    assert SECRET not in msg and SECRET not in caplog.text
    assert e.value.exit_code == 4


def test_bad_token(server, caplog):
    caplog.set_level(logging.DEBUG)
    f = fetcher_for(server, token="ghp_wrong_" + SECRET)
    with pytest.raises(SourceError) as e:
        _fetch(f)
    msg = str(e.value)
    assert "rejected the token from GITHUB_TOKEN (401 Bad credentials)" in msg
    assert "gh auth login" in msg
    assert SECRET not in msg and SECRET not in caplog.text and SECRET not in repr(e.value.__dict__)
    assert len(server.log) == 1  # a 401 is not retried


def test_a_401_from_the_host_a_redirect_led_to_is_not_blamed_on_the_token(server):
    """An API URL that redirects to another host: httpx rightly sends the token no further,
    that host answers 401, and the error told the user to replace a valid token."""
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
    from types import SimpleNamespace

    seen: list[str | None] = []

    class Other(BaseHTTPRequestHandler):
        def log_message(self, *a):
            pass

        def do_POST(self):
            seen.append(self.headers.get("Authorization"))
            body = b'{"message":"Bad credentials"}'
            self.send_response(401)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    other = ThreadingHTTPServer(("127.0.0.1", 0), Other)

    class Redirect(BaseHTTPRequestHandler):
        def log_message(self, *a):
            pass

        def do_POST(self):
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            self.send_response(307)
            self.send_header("Location", f"http://localhost:{other.server_address[1]}/graphql")
            self.send_header("Content-Length", "0")
            self.end_headers()

    first = ThreadingHTTPServer(("127.0.0.1", 0), Redirect)
    for srv in (other, first):
        threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        f = fetcher_for(SimpleNamespace(url=f"http://127.0.0.1:{first.server_address[1]}"), token="ghp_" + SECRET)
        with pytest.raises(SourceError) as e:
            _fetch(f)
    finally:
        for srv in (other, first):
            srv.shutdown()
    msg = str(e.value)
    assert seen == [None]  # the token stayed home
    assert f"redirected the request to http://localhost:{other.server_address[1]}, which answered 401" in msg
    assert "rejected the token" not in msg and "--github-url" in msg and SECRET not in msg


def test_missing_scope_for_a_private_repository(server):
    f = fetcher_for(server, "verl-project/private-verl", token="public-token")
    with pytest.raises(SourceError) as e:
        _fetch(f)
    msg = str(e.value)
    assert "verl-project/private-verl was not found" in msg
    assert "scopes are: public_repo" in msg and "'repo' scope" in msg
    # the same repository with a token that has the scope works
    assert len(_fetch(fetcher_for(server, "verl-project/private-verl", token=SECRET))) == 22


def test_no_network():
    with socket.socket() as s:  # a port that nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    from repobrief.github.auth import Token
    from repobrief.github.client import GitHubClient

    client = GitHubClient(Token(SECRET, "GH_TOKEN"), f"http://127.0.0.1:{port}", backoff=0.01)
    with pytest.raises(SourceError) as e:
        _fetch(PullRequestFetcher(client, REPO))
    msg = str(e.value)
    assert f"cannot reach GitHub at http://127.0.0.1:{port}" in msg and "check the network" in msg
    assert SECRET not in msg


def test_wrong_api_url(server):
    from repobrief.github.auth import Token
    from repobrief.github.client import GitHubClient

    client = GitHubClient(Token(SECRET, "config"), server.url + "/api/v3", backoff=0.01)
    with pytest.raises(SourceError) as e:
        _fetch(PullRequestFetcher(client, REPO))
    assert f"no GitHub GraphQL API at {server.url}/api/graphql (404)" in str(e.value) and "--github-url" in str(e.value)


def test_failed_sync_leaves_the_store_intact(server, tmp_path):
    with open_store(tmp_path / "s.db") as store:
        sync_repository(fetcher_for(server, token=SECRET), store, W26_START, now=W26_END)
        before = [(p.number, p.title, len(p.reviews)) for p in store.load_pull_requests(REPO)]
        state = store.get_sync_state(REPO, "github")
        assert len(before) == 22
        for bad in (fetcher_for(server, token="nope"), fetcher_for(server, "verl-project/nope", token=SECRET)):
            with pytest.raises(SourceError):
                sync_repository(bad, store, W26_START, now=W26_END)
        assert [(p.number, p.title, len(p.reviews)) for p in store.load_pull_requests(REPO)] == before
        assert store.get_sync_state(REPO, "github").last_updated == state.last_updated
    with open(tmp_path / "s.db", "rb") as fh:
        assert SECRET.encode() not in fh.read()


# ------------------------------------------------------------------ tokens and URLs


def _fake_gh(tmp_path, token: str) -> str:
    """A real `gh` executable that prints a token for github.com only."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    gh = bin_dir / "gh"
    gh.write_text(f'#!/bin/sh\n[ "$1 $2 $3 $4" = "auth token --hostname github.com" ] && echo {token} && exit 0\nexit 1\n')
    gh.chmod(gh.stat().st_mode | stat.S_IEXEC)
    return str(bin_dir)


def test_token_sources_in_order(tmp_path):
    path = _fake_gh(tmp_path, "from-gh") + os.pathsep + "/usr/bin:/bin"
    env = {"PATH": path, "GITHUB_TOKEN": "from-github-token", "GH_TOKEN": "from-gh-token"}
    assert resolve_token("from-config", "https://api.github.com", env).value == "from-config"
    assert resolve_token("", "https://api.github.com", env).origin == "GITHUB_TOKEN"
    assert resolve_token("", "https://api.github.com", {**env, "GITHUB_TOKEN": ""}).value == "from-gh-token"
    t = resolve_token("", "https://api.github.com", {"PATH": path})
    assert (t.value, t.origin) == ("from-gh", "gh auth token")
    assert "from-gh" not in repr(t)
    # gh knows no token for an Enterprise host: the error says where to put one
    with pytest.raises(SourceError) as e:
        resolve_token("", "https://ghe.example.com/api/v3", {"PATH": path})
    assert "no GitHub token found for ghe.example.com" in str(e.value)
    # every place that is looked at, the first one first
    assert e.value.hint == ("set REPOBRIEF_GITHUB_TOKEN (or GITHUB_TOKEN or GH_TOKEN), set github.token in repobrief.toml, "
                            "or run `gh auth login --hostname ghe.example.com`; they are looked at in that order")


def test_environment_token_comes_before_the_config_files(tmp_path):
    """What the docs promise a user with a token in repobrief.toml and another in the shell."""
    (tmp_path / "repobrief.toml").write_text('[github]\ntoken = "from-file"\n')
    base = {"PATH": "/usr/bin:/bin"}
    for env, origin, value in (
        ({"GH_TOKEN": "from-gh-token"}, "GH_TOKEN", "from-gh-token"),
        ({"GH_TOKEN": "from-gh-token", "GITHUB_TOKEN": "from-github-token"}, "GITHUB_TOKEN", "from-github-token"),
        ({"GITHUB_TOKEN": "from-github-token", "REPOBRIEF_GITHUB_TOKEN": "ours"}, "REPOBRIEF_GITHUB_TOKEN", "ours"),
        ({}, "config", "from-file"),
    ):
        settings = load_settings(tmp_path, env=env)
        token = resolve_token(settings.github.token, settings.github.url, {**base, **env})
        assert (token.origin, token.value) == (origin, value)
    assert "GITHUB_TOKEN" in fix_hint("config") and "github.token" in fix_hint("config")


def test_api_urls():
    assert normalize_api_url(None) == "https://api.github.com"
    assert normalize_api_url("https://ghe.example.com/") == "https://ghe.example.com/api/v3"
    assert normalize_api_url("https://ghe.example.com/api/v3") == "https://ghe.example.com/api/v3"
    with pytest.raises(UsageError):
        normalize_api_url("ftp://x")
    with pytest.raises(UsageError) as e:
        normalize_api_url(f"https://user:{SECRET}@ghe.example.com")
    assert SECRET not in str(e.value)


def test_a_proxy_that_wants_credentials_is_named_with_what_to_do(server):
    server.queue.append(Fault("status", status=407))
    with pytest.raises(SourceError) as e:
        _fetch(fetcher_for(server, token=SECRET))
    assert e.value.message == f"a proxy between here and GitHub at {server.url} asks for its own credentials (407 Proxy Authentication Required)"
    assert "HTTPS_PROXY=http://USER:PASSWORD@PROXY:PORT" in e.value.hint and e.value.exit_code == 4
    assert len(server.log) == 1  # not retried: it will not change by itself


def test_a_url_with_a_query_string_or_fragment_is_refused_without_showing_it():
    for url in (f"http://127.0.0.1:8080/x?access_token={SECRET}", f"https://ghe.example.com/api/v3#{SECRET}",
                "https://ghe.example.com/api/v3?"):
        with pytest.raises(UsageError) as e:
            normalize_api_url(url)
        assert "must not contain a query string or a fragment" in str(e.value) and SECRET not in str(e.value)


def test_repository_argument_forms():
    assert parse_repository("github:verl-project/verl") == "verl-project/verl"
    assert parse_repository("https://github.com/verl-project/verl.git") == "verl-project/verl"
    assert parse_repository("git@github.com:verl-project/verl.git") == "verl-project/verl"
    with pytest.raises(UsageError) as e:
        parse_repository("verl")
    assert "expected OWNER/REPO" in str(e.value)


def test_offline_source_without_a_synced_week_says_what_to_run(tmp_path):
    with open_store(tmp_path / "s.db") as store:
        src = GitHubSource("github:verl-project/verl", Settings(), store=store, offline=True)
        from repobrief.window import iso_week_window

        with pytest.raises(SourceError) as e:
            list(src.iter_pull_requests(iso_week_window(datetime(2026, 6, 22).date(), W26_START.tzinfo)))
        msg = str(e.value)
        assert "week 2026-W26 of verl-project/verl is not in the store" in msg
        assert "repobrief sync github:verl-project/verl --since 2026-06-22" in msg


def test_client_repr_and_stats_never_hold_the_token(server):
    c = client_for(server, token=SECRET)
    assert SECRET not in repr(c.token) and SECRET not in repr(c.stats)


@pytest.mark.parametrize("body", [b"null", b"[]", b'{"errors": "boom"}', b'{"data": [1]}'])
def test_an_answer_that_is_not_a_graphql_response_is_a_clear_error(server, body):
    server.queue.append(Fault("body", body=body))
    with pytest.raises(SourceError) as e:
        _fetch(fetcher_for(server, token=SECRET))
    assert f"GitHub at {server.url} answered with JSON that is not a GraphQL response" in str(e.value)
    assert e.value.exit_code == 4


def test_an_http_error_never_shows_the_token_and_a_500_is_not_said_to_be_retried(server):
    server.queue.append(Fault("echo"))
    with pytest.raises(SourceError) as e:
        _fetch(fetcher_for(server, token=SECRET))
    assert SECRET not in str(e.value) and "answered 400 bad request; header was token ***" in str(e.value)
    assert "could not read the request: check --github-url" in e.value.hint and "HTTPS_PROXY" in e.value.hint

    server.queue.append(Fault("status", status=500))
    with pytest.raises(SourceError) as e:
        _fetch(fetcher_for(server, token=SECRET))
    assert f"GitHub at {server.url} failed (500 Internal Server Error)" in str(e.value) and "retr" not in e.value.message
    assert [r.status for r in server.log][-1] == 500


def test_an_organization_that_enforces_saml_sso_is_told_apart_from_missing_scopes(server):
    """GitHub's answer for a token not authorized for an organization's SAML single sign-on
    got the "needs the 'repo' scope" hint; the fix is authorizing the token, not its scopes."""
    saml = ("Resource protected by organization SAML enforcement. You must grant your Personal Access token access to "
            "this organization.")
    with client_for(server) as client:
        err = client.graphql_error([{"type": "FORBIDDEN", "message": saml}], "verl-project/verl")
        plain = client.graphql_error([{"type": "FORBIDDEN", "message": "Resource not accessible by integration"}])
    assert "SAML single sign-on" in err.hint and "Configure SSO" in err.hint and "'repo' scope" not in err.hint
    assert "SAML" not in (plain.hint or "")
