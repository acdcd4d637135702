"""`repobrief sync` as a user runs it: a real process, a real SQLite file, the
token from the environment, the local GitHub-compatible server as the API."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from datetime import datetime

import pytest
from github_support import SHANGHAI, TOKEN, serve, verl
from githubserver import FakeGitHub, Fault
from netguard import NODNS

SINCE = datetime(2026, 6, 15, tzinfo=SHANGHAI)
UNTIL = datetime(2026, 7, 6, tzinfo=SHANGHAI)


def run(args: list[str], tmp_path, token: str | None = TOKEN, **extra: str) -> subprocess.CompletedProcess:
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path),
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "REPOBRIEF_GITHUB_BACKOFF": "0.01",  # retries in milliseconds, not seconds
        "PYTHONPATH": os.pathsep.join(NODNS),  # `.invalid` hosts: no DNS query
    }
    if token is not None:
        env["GITHUB_TOKEN"] = token
    env.update(extra)
    return subprocess.run(
        [sys.executable, "-c", "from repobrief.cli import main; main()", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=120,
    )


@pytest.fixture()
def server():
    with serve(FakeGitHub(tokens={TOKEN: "repo"}), verl(SINCE, UNTIL)) as s:
        yield s


def test_sync_then_resync_from_the_command_line(server, tmp_path):
    db = tmp_path / "store.db"
    first = run(["sync", "github:verl-project/verl", "--since", "2026-06-15", "--tz", "Asia/Shanghai", "--db", str(db), "--github-url", server.url], tmp_path)
    assert first.returncode == 0, first.stderr
    assert first.stdout.startswith("verl-project/verl: 69 new, 0 updated, 0 unchanged; 3 requests,")
    assert "GraphQL points" in first.stdout
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT count(*), count(DISTINCT number) FROM pull_requests").fetchone() == (69, 69)

    again = run(["sync", "github:verl-project/verl", "--db", str(db), "--github-url", server.url], tmp_path)
    assert again.returncode == 0, again.stderr
    assert "0 new, 0 updated" in again.stdout and "; 1 request," in again.stdout


def test_sync_errors_are_clear_and_exit_non_zero(server, tmp_path):
    db = tmp_path / "store.db"
    bad = run(["sync", "github:verl-project/verl", "--since", "2026-06-15", "--db", str(db), "--github-url", server.url], tmp_path, token="ghp_NotTheRightOne")
    assert bad.returncode == 4
    assert "error: GitHub at" in bad.stderr and "rejected the token from GITHUB_TOKEN" in bad.stderr
    assert "ghp_NotTheRightOne" not in bad.stderr + bad.stdout

    first_without_since = run(["sync", "github:verl-project/verl", "--db", str(db), "--github-url", server.url], tmp_path)
    assert first_without_since.returncode == 2 and "give --since" in first_without_since.stderr

    no_token = run(["sync", "github:verl-project/verl", "--since", "2026-06-15", "--db", str(db), "--github-url", server.url], tmp_path, token=None)
    assert no_token.returncode == 4 and "no GitHub token found" in no_token.stderr
    assert "set REPOBRIEF_GITHUB_TOKEN (or GITHUB_TOKEN or GH_TOKEN)" in no_token.stderr  # the first place looked at

    bad_date = run(["sync", "github:verl-project/verl", "--since", "June", "--db", str(db)], tmp_path)
    assert bad_date.returncode == 2 and "YYYY-MM-DD" in bad_date.stderr


def test_interrupted_command_resumes(server, tmp_path):
    db = tmp_path / "store.db"
    server.fail_from = (2, 503)  # the first page arrives, then GitHub goes down
    down = run(["sync", "github:verl-project/verl", "--since", "2026-06-15", "--tz", "Asia/Shanghai", "--db", str(db), "--github-url", server.url], tmp_path)
    assert down.returncode == 4 and "kept failing (503" in down.stderr
    assert "\ngithub: GitHub answered 503; retrying" in down.stderr  # waits are announced, as `report` announces them
    with sqlite3.connect(db) as conn:
        stored = conn.execute("SELECT count(*) FROM pull_requests").fetchone()[0]
    assert stored == 25
    server.fail_from, server.down = None, None
    up = run(["sync", "github:verl-project/verl", "--db", str(db), "--github-url", server.url], tmp_path)
    assert up.returncode == 0, up.stderr
    assert "resumed an interrupted sync" in up.stdout and "44 new" in up.stdout
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT count(*), count(DISTINCT number) FROM pull_requests").fetchone() == (69, 69)


def test_a_synced_week_reports_offline_and_the_hint_for_a_missing_one_works(server, tmp_path):
    db = str(tmp_path / "store.db")
    week = ["report", "github:verl-project/verl", "--tz", "Asia/Shanghai", "--offline", "--db", db, "-f", "json"]
    missing = run([*week, "--week", "2026-W26"], tmp_path)
    assert missing.returncode == 4 and "week 2026-W26 of verl-project/verl is not in the store" in missing.stderr
    hint = missing.stderr.split("`")[1].split()
    assert hint[:2] == ["repobrief", "sync"] and hint[-2:] == ["--tz", "Asia/Shanghai"]
    synced = run([*hint[1:], "--db", db, "--github-url", server.url], tmp_path)  # what the hint says, and no more
    assert synced.returncode == 0, synced.stderr
    offline = run([*week, "--week", "2026-W26"], tmp_path)  # only that week is stored, not the weeks before
    assert offline.returncode == 0, offline.stderr
    assert len(json.loads(offline.stdout)["pull_requests"]) == 22


def test_an_offline_report_warns_when_its_trend_weeks_were_not_synced_and_says_how_to_sync_them(server, tmp_path):
    db = str(tmp_path / "store.db")
    only_the_week = run(["sync", "github:verl-project/verl", "--since", "2026-06-22", "--tz", "Asia/Shanghai",
                         "--db", db, "--github-url", server.url], tmp_path)
    assert only_the_week.returncode == 0, only_the_week.stderr
    # --source github with a bare OWNER/REPO names the same repository as github:OWNER/REPO
    report = ["report", "verl-project/verl", "--source", "github", "--week", "2026-W26", "--tz", "Asia/Shanghai",
              "--offline", "--db", db, "-f", "md,html,json", "--lang", "en", "-q"]

    out = tmp_path / "partial"
    partial = run([*report, "-o", str(out)], tmp_path)
    assert partial.returncode == 0, partial.stderr
    # the 12 baseline weeks start on 2026-03-30 (Monday of 2026-W14), the week on 2026-06-22
    command = "repobrief sync github:verl-project/verl --since 2026-03-30 --tz Asia/Shanghai"
    warnings = json.loads(next(out.glob("*.json")).read_text(encoding="utf-8"))["warnings"]
    warning = [w for w in warnings if not w.startswith("first-time contributors are not counted")]
    assert len(warnings) == 2 and len(warning) == 1 and warning[0].startswith("trends compare with weeks that were not synced")
    assert "merged from 2026-03-30 to 2026-06-22 are not all in the store" in warning[0]
    assert f"run `{command}` to sync them" in warning[0]
    assert f"warning: {warning[0]}" in partial.stderr  # on stderr even with -q
    assert "trends compare with weeks that were not synced" in next(out.glob("*.md")).read_text(encoding="utf-8")
    assert "trends compare with weeks that were not synced" in next(out.glob("*.html")).read_text(encoding="utf-8")

    # What the warning says, and no more: the baseline weeks had no PRs, but they were synced
    synced = run([*command.split()[1:], "--db", db, "--github-url", server.url], tmp_path)
    assert synced.returncode == 0, synced.stderr
    out = tmp_path / "trends"
    trends = run([*report, "-o", str(out)], tmp_path)
    assert trends.returncode == 0, trends.stderr
    assert "not synced" not in trends.stderr
    # Twelve weeks are not the year that telling first-time contributors needs: said, with its sync.
    first_time = "repobrief sync github:verl-project/verl --since 2025-06-22 --tz Asia/Shanghai"
    (warning,) = json.loads(next(out.glob("*.json")).read_text(encoding="utf-8"))["warnings"]
    assert warning.startswith("first-time contributors are not counted") and f"run `{first_time}`" in warning
    assert json.loads(next(out.glob("*.json")).read_text(encoding="utf-8"))["stats"]["first_time_contributors"] is None
    synced = run([*first_time.split()[1:], "--db", db, "--github-url", server.url], tmp_path)
    assert synced.returncode == 0, synced.stderr
    out = tmp_path / "complete"
    complete = run([*report, "-o", str(out)], tmp_path)
    assert complete.returncode == 0, complete.stderr
    d = json.loads(next(out.glob("*.json")).read_text(encoding="utf-8"))
    assert d["warnings"] == [] and d["stats"]["first_time_contributors"] is not None
    assert "warning" not in complete.stderr


def test_an_offline_report_from_a_read_only_store_is_written_and_not_kept(server, tmp_path):
    db = tmp_path / "store.db"
    synced = run(["sync", "github:verl-project/verl", "--since", "2026-06-22", "--tz", "Asia/Shanghai", "--db", str(db),
                  "--github-url", server.url], tmp_path)
    assert synced.returncode == 0, synced.stderr
    ro = f"sqlite:///file:{db}?mode=ro&uri=true"  # docs/store.md: opens read-only
    out = tmp_path / "out"
    report = run(["report", "github:verl-project/verl", "--week", "2026-W26", "--tz", "Asia/Shanghai", "--offline",
                  "--db", ro, "-f", "md,json", "-o", str(out)], tmp_path)
    assert report.returncode == 0, report.stderr
    assert "is read-only: the report was not kept in it" in report.stderr
    assert len(list(out.iterdir())) == 2


def test_a_rejected_token_is_blamed_on_where_it_came_from(server, tmp_path):
    env_token = run(["sync", "github:verl-project/verl", "--since", "2026-06-15", "--db", str(tmp_path / "s.db"),
                     "--github-url", server.url], tmp_path, token=None, REPOBRIEF_GITHUB_TOKEN="ghp_wrongwrongwrong")
    assert env_token.returncode == 4
    assert "rejected the token from REPOBRIEF_GITHUB_TOKEN" in env_token.stderr
    assert "set REPOBRIEF_GITHUB_TOKEN to a valid token, or unset it" in env_token.stderr
    assert "ghp_wrongwrongwrong" not in env_token.stderr


def test_a_token_with_a_line_break_is_said_to_be_one_before_any_request(server, tmp_path):
    """`GITHUB_TOKEN=$(cat file)` of a two-line file: every request failed in httpx and was
    retried five times, then blamed on "a proxy or an unstable network"."""
    sent = len(server.log)
    r = run(["sync", "github:verl-project/verl", "--since", "2026-06-15", "--db", str(tmp_path / "s.db"),
             "--github-url", server.url], tmp_path, token=f"{TOKEN}\nsecond line")
    assert r.returncode == 4 and len(server.log) == sent
    assert "the GitHub token from GITHUB_TOKEN contains a line break" in r.stderr
    assert TOKEN not in r.stderr and "network" not in r.stderr


def test_ctrl_c_during_a_report_says_nothing_was_written(server, tmp_path):
    server.delay = 3.0  # the report is still waiting for GitHub when Ctrl-C comes
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "XDG_DATA_HOME": str(tmp_path / "data"), "GITHUB_TOKEN": TOKEN}
    proc = subprocess.Popen(
        [sys.executable, "-c", "from repobrief.cli import main; main()", "report", "github:verl-project/verl",
         "--week", "2026-W26", "--tz", "Asia/Shanghai", "--db", str(tmp_path / "s.db"), "--github-url", server.url,
         "-o", str(tmp_path / "out")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=tmp_path,
        # As at a terminal: a suite started in the background (`pytest &`) has SIGINT
        # ignored, and Python keeps an ignored SIGINT ignored.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    deadline = time.monotonic() + 30
    while not server.arrived and time.monotonic() < deadline:  # the server holds the request: no answer for 3 s
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and "interrupted; no report was written" in err and out == ""
    assert not (tmp_path / "out").exists()


def test_sync_takes_a_clone_url_as_report_does(server, tmp_path):
    db = str(tmp_path / "store.db")
    for target in ("https://github.com/verl-project/verl.git", "git@github.com:verl-project/verl.git"):
        synced = run(["sync", target, "--since", "2026-06-15", "--tz", "Asia/Shanghai", "--db", db, "--github-url", server.url],
                     tmp_path)
        assert synced.returncode == 0, synced.stderr
        assert synced.stdout.startswith("verl-project/verl: ")
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT count(DISTINCT number) FROM pull_requests").fetchone() == (69,)
    # a clone URL names its server: one that is not the API's is not read from github.com by mistake
    ghe = run(["sync", "https://ghe.example.com/verl-project/verl.git", "--since", "2026-06-15", "--db", db], tmp_path)
    assert ghe.returncode == 2 and "the clone URL is on ghe.example.com, and the GitHub API in use is https://api.github.com" in ghe.stderr
    assert "give --github-url https://ghe.example.com/api/v3" in ghe.stderr
    # no GitHub Enterprise Server on GitLab: the way there is a clone
    gitlab = run(["sync", "https://gitlab.com/acme/app.git", "--since", "2026-06-15", "--db", db], tmp_path)
    assert gitlab.returncode == 2 and "is on gitlab.com, a GitLab server: repobrief reads the GitHub API only" in gitlab.stderr
    assert "git clone https://gitlab.com/acme/app.git" in gitlab.stderr and "--github-url" not in gitlab.stderr
    # report reads such a URL as sync does: not as a local path ("path 'https:/ghe…' does not exist"),
    # and not from a store synced from another server either
    for argv in (["report", "https://ghe.example.com/verl-project/verl.git", "--week", "2026-W26"],
                 ["report", "git@ghe.example.com:verl-project/verl.git", "--week", "2026-W26", "--source", "github",
                  "--offline", "--db", db]):
        other = run(argv, tmp_path)
        assert other.returncode == 2 and "the clone URL is on ghe.example.com" in other.stderr, other.stderr
    (tmp_path / "clone").mkdir()
    folder = run(["sync", str(tmp_path / "clone"), "--db", db], tmp_path)
    assert folder.returncode == 2 and "it is a local folder, and sync reads GitHub" in folder.stderr


def test_a_host_name_that_does_not_resolve_is_called_that(tmp_path):
    typo = run(["sync", "github:verl-project/verl", "--since", "2026-06-15", "--db", str(tmp_path / "s.db"),
                "--github-url", "https://ghe.exmaple.invalid"], tmp_path)
    assert typo.returncode == 4
    assert "error: cannot reach GitHub at https://ghe.exmaple.invalid/api/v3: the host name ghe.exmaple.invalid" in typo.stderr
    assert "connection refused" not in typo.stderr and "does not resolve" in typo.stderr
    assert "retrying" not in typo.stderr  # a name that does not exist is not asked for again
    assert "for a typo in the host name" in typo.stderr


def test_a_github_url_with_a_query_string_is_refused_and_never_shown(server, tmp_path):
    secret = "ghp_InTheQueryString123"
    for url in (f"{server.url}/x?access_token={secret}", f"{server.url}#{secret}"):
        bad = run(["sync", "github:verl-project/verl", "--since", "2026-06-15", "--db", str(tmp_path / "s.db"),
                   "--github-url", url], tmp_path)
        assert bad.returncode == 2 and "must not contain a query string or a fragment" in bad.stderr
        assert secret not in bad.stderr + bad.stdout
    assert server.log == []  # nothing was sent anywhere


def test_a_429_without_retry_after_is_a_rate_limit_with_a_hint(server, tmp_path):
    server.queue.append(Fault("status", status=429))
    limited = run(["sync", "github:verl-project/verl", "--since", "2026-06-15", "--db", str(tmp_path / "s.db"),
                   "--github-url", server.url], tmp_path, REPOBRIEF_GITHUB_MAX_WAIT="30")
    assert limited.returncode == 4
    assert "asks to wait 60 s (429 Too Many Requests), beyond the longest wait (30 s" in limited.stderr
    assert "hint: wait a few minutes and run again (`repobrief sync` continues where it stopped)" in limited.stderr


def _hint(stderr: str) -> list[str]:
    """The command a hint suggests, as argv."""
    return stderr.split("hint: run `", 1)[1].split("`", 1)[0].split()


def test_an_offline_week_before_the_store_says_what_is_stored_and_the_hint_syncs_from_the_same_server(server, tmp_path):
    db = str(tmp_path / "store.db")
    synced = run(["sync", "github:verl-project/verl", "--since", "2026-06-22", "--tz", "Asia/Shanghai", "--db", db,
                  "--github-url", server.url], tmp_path)
    assert synced.returncode == 0, synced.stderr
    week = ["report", "github:verl-project/verl", "--week", "2026-W25", "--tz", "Asia/Shanghai", "--offline", "--db", db,
            "--github-url", server.url, "-f", "json"]
    before = run(week, tmp_path)
    assert before.returncode == 4
    # from the first synced day on, not "up to" a day after the week (which reads as if it were there)
    assert "week 2026-W25 of verl-project/verl is not in the store" in before.stderr
    assert "; stored: the PRs merged from 2026-06-22 00:00 to " in before.stderr and "(Asia/Shanghai)" in before.stderr
    hint = _hint(before.stderr)
    assert hint == ["repobrief", "sync", "github:verl-project/verl", "--github-url", server.url, "--since", "2026-06-15",
                    "--tz", "Asia/Shanghai"]
    followed = run([*hint[1:], "--db", db], tmp_path)  # what the hint says (no GITHUB URL added by hand)
    assert followed.returncode == 0, followed.stderr
    after = run(week, tmp_path)
    assert after.returncode == 0, after.stderr
    assert len(json.loads(after.stdout)["pull_requests"]) == len(verl(SINCE, datetime(2026, 6, 22, tzinfo=SHANGHAI)))


def test_an_offline_week_of_an_unfinished_sync_is_partly_stored_and_the_hint_finishes_it(server, tmp_path):
    db = str(tmp_path / "store.db")
    server.fail_from = (2, 503)  # the first page arrives, then GitHub goes down
    down = run(["sync", "github:verl-project/verl", "--since", "2026-06-15", "--tz", "Asia/Shanghai", "--db", db,
                "--github-url", server.url], tmp_path)
    assert down.returncode == 4
    server.fail_from, server.down = None, None
    week = ["report", "github:verl-project/verl", "--week", "2026-W25", "--tz", "Asia/Shanghai", "--offline", "--db", db,
            "--github-url", server.url, "-f", "json"]
    partly = run(week, tmp_path)
    assert partly.returncode == 4
    assert ("week 2026-W25 of verl-project/verl is only partly in the store "
            f"{db}: a sync of the PRs merged since 2026-06-15 00:00 (Asia/Shanghai) did not finish") in partly.stderr
    assert "PRs of it stored so far" in partly.stderr and "nothing of it is stored" not in partly.stderr
    hint = _hint(partly.stderr)
    assert hint == ["repobrief", "sync", "github:verl-project/verl", "--github-url", server.url]
    assert "to finish that sync (it continues where it stopped)" in partly.stderr
    finished = run([*hint[1:], "--db", db], tmp_path)
    assert finished.returncode == 0, finished.stderr
    assert "resumed an interrupted sync" in finished.stdout
    assert run(week, tmp_path).returncode == 0


def test_an_https_proxy_that_wants_credentials_is_named_with_what_to_do(server, tmp_path):
    server.proxy_auth = True  # the local server is the proxy HTTPS_PROXY names; it answers CONNECT with 407
    proxied = run(["sync", "github:verl-project/verl", "--since", "2026-06-15", "--db", str(tmp_path / "s.db"),
                   "--github-url", "https://ghe.example.com"], tmp_path, HTTPS_PROXY=server.url)
    assert proxied.returncode == 4
    assert ("error: a proxy between here and GitHub at https://ghe.example.com/api/v3 asks for its own credentials "
            "(407 Proxy Authentication Required)") in proxied.stderr
    assert "HTTPS_PROXY=http://USER:PASSWORD@PROXY:PORT" in proxied.stderr and "retrying" not in proxied.stderr
    assert server.connects == ["ghe.example.com:443"]  # asked once: the answer will not change by itself
