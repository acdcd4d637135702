"""End to end: the verl week 2026-W26 served by the local GitHub-compatible
server becomes a report whose key changes carry what the review discussion
surfaced, whose JSON has labels and reviews; the same week then renders from
the store with the server gone (--offline); and a replayed clone is enriched
with GitHub's labels and discussion (--github)."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys

import pytest
from github_support import TOKEN, serve, verl
from githubserver import FakeGitHub, Fault

TEMPERATURE = "temperature has been explicitly set in trainer, shouldn't be set here again."


def run(args: list[str], cwd) -> subprocess.CompletedProcess:
    env = {**os.environ, "GITHUB_TOKEN": TOKEN, "REPOBRIEF_GITHUB_BACKOFF": "0.01"}
    return subprocess.run(
        [sys.executable, "-c", "from repobrief.cli import main; main()", *args],
        capture_output=True, text=True, env=env, cwd=cwd, timeout=300,
    )


@pytest.fixture(scope="module")
def server():
    with serve(FakeGitHub(tokens={TOKEN: "repo"}), verl()) as s:
        yield s


WEEK = ["--week", "2026-W26", "--tz", "Asia/Shanghai"]


def test_report_from_github_then_offline_from_the_store(server, tmp_path):
    db = str(tmp_path / "store.db")
    server.queue.append(Fault("status", status=502))  # GitHub hiccups once on the way
    online = run(["report", "github:verl-project/verl", *WEEK, "--lang", "en", "-f", "json,md", "-o", str(tmp_path / "on"),
                  "--db", db, "--github-url", server.url], tmp_path)
    assert online.returncode == 0, online.stderr
    rep = json.loads((tmp_path / "on" / "verl-project__verl-2026-W26.en.json").read_text())
    prs = {p["number"]: p for p in rep["pull_requests"]}
    assert len(prs) == 22
    pr = prs[6823]
    assert pr["labels"] == ["breaking", "trainer", "cfg"]
    assert [(r["author"], r["state"]) for r in pr["reviews"]] == [("wuxibin89", "COMMENTED")]
    assert pr["discussion_known"] and TEMPERATURE in pr["discussion_summary"]
    assert any(t.startswith("discussion: 1 review comment") for t in pr["importance_reasons"])
    # the key change of #6823 says what the reviewer questioned
    md = (tmp_path / "on" / "verl-project__verl-2026-W26.en.md").read_text()
    key_changes = md.split("## 2.")[1].split("## 3.")[0]
    line = next(p for p in key_changes.split("\n\n") if "(#6823)" in p)
    assert "wuxibin89 questioned on verl/workers/engine_workers.py" in line and TEMPERATURE in line
    stats = rep["engine"]["source_stats"]
    assert stats["requests"] == len(server.log) and stats["graphql_points"] > 0 and stats["retries"] == 1
    assert "github: GitHub answered 502; retrying" in online.stderr  # the pause is announced

    url = server.url
    server.stop()  # no network: the store must be enough
    try:
        offline = run(["report", "github:verl-project/verl", *WEEK, "--lang", "zh", "-f", "md", "--db", db, "--offline",
                       "--github-url", url], tmp_path)
    finally:
        server.__enter__()  # back up (on a new port) for the other tests
    assert offline.returncode == 0, offline.stderr
    assert "wuxibin89（verl/workers/engine_workers.py）提出质疑：“" + TEMPERATURE in offline.stdout
    assert "共合并22个PR" in offline.stdout


def test_enrich_a_clone_with_github_discussion(server, verl_repo, tmp_path):
    out = run(["report", str(verl_repo), "--name", "verl-project/verl", "--github", "verl-project/verl", *WEEK,
               "--lang", "en", "-f", "json", "--db", str(tmp_path / "s.db"), "--github-url", server.url], tmp_path)
    assert out.returncode == 0, out.stderr
    rep = json.loads(out.stdout)
    prs = {p["number"]: p for p in rep["pull_requests"]}
    assert len(prs) == 22
    pr = prs[6823]
    assert pr["via"] != "api"  # merges and files come from the clone
    assert pr["labels"] == ["breaking", "trainer", "cfg"] and pr["reviews"][0]["author"] == "wuxibin89"
    assert TEMPERATURE in pr["discussion_summary"]
    assert all(p["discussion_known"] for p in prs.values())

    # the same enrichment from the store, with GitHub unreachable; without --name the report is
    # of the repository --github names (the clone has no remote: it was named after its folder)
    again = run(["report", str(verl_repo), "--github", "verl-project/verl", *WEEK,
                 "--lang", "en", "-f", "json", "--db", str(tmp_path / "s.db"), "--offline", "--github-url", "http://127.0.0.1:9"],
                tmp_path)
    assert again.returncode == 0, again.stderr
    rep = json.loads(again.stdout)
    assert rep["repository"] == "verl-project/verl"
    pr = {p["number"]: p for p in rep["pull_requests"]}[6823]
    assert pr["labels"] == ["breaking", "trainer", "cfg"] and TEMPERATURE in pr["discussion_summary"]


def test_a_clone_report_into_the_same_store_keeps_the_synced_discussion(server, verl_repo, tmp_path):
    db = str(tmp_path / "s.db")
    synced = run(["sync", "github:verl-project/verl", "--since", "2026-05-18", "--tz", "Asia/Shanghai", "--db", db,
                  "--github-url", server.url], tmp_path)
    assert synced.returncode == 0, synced.stderr
    clone = run(["report", str(verl_repo), "--name", "verl-project/verl", *WEEK, "-f", "json", "--db", db], tmp_path)
    assert clone.returncode == 0, clone.stderr
    con = sqlite3.connect(db)
    rows = con.execute("SELECT source, discussion_known, count(*) FROM pull_requests WHERE number = 6823 GROUP BY 1, 2").fetchall()
    con.close()
    assert rows == [("github", 1, 1)]
    offline = run(["report", "github:verl-project/verl", *WEEK, "--lang", "en", "-f", "json", "--db", db, "--offline"], tmp_path)
    assert offline.returncode == 0, offline.stderr
    pr = {p["number"]: p for p in json.loads(offline.stdout)["pull_requests"]}[6823]
    assert TEMPERATURE in pr["discussion_summary"]

    # a clone's own rows are stored under the source's registered name
    alone = str(tmp_path / "alone.db")
    assert run(["report", str(verl_repo), "--name", "verl-project/verl", *WEEK, "--db", alone], tmp_path).returncode == 0
    con = sqlite3.connect(alone)
    assert {r[0] for r in con.execute("SELECT source FROM pull_requests")} == {"git"}
    con.close()


def test_an_offline_enrichment_names_the_whole_sync_that_adds_what_is_missing(server, verl_repo, tmp_path):
    db = str(tmp_path / "s.db")
    report = ["report", str(verl_repo), "--name", "verl-project/verl", "--github", "verl-project/verl", *WEEK,
              "--lang", "en", "-f", "json", "--db", db, "--offline", "--github-url", server.url]
    empty = run(report, tmp_path)  # nothing synced yet
    assert empty.returncode == 0, empty.stderr
    (warning,) = [w for w in json.loads(empty.stdout)["warnings"] if w.startswith("no discussion for")]
    # the full command: which repository, from when, and from the same (non-default) server
    command = warning.split("run `", 1)[1].split("`", 1)[0]
    assert command == f"repobrief sync github:verl-project/verl --github-url {server.url} --since 2026-06-22 --tz Asia/Shanghai"
    assert warning.startswith("no discussion for 22 PR(s) ") and warning.endswith("to add them")
    # worded in the report's language, the command as it is
    zh = run([*report[:report.index("--lang")], "--lang", "zh", *report[report.index("--lang") + 2:]], tmp_path)
    (warning,) = [w for w in json.loads(zh.stdout)["warnings"] if "没有评审讨论" in w]
    assert warning.startswith("22个PR（#") and warning.endswith(f"存储中找不到它们；运行 `{command}` 即可补充")
    synced = run([*command.split()[1:], "--db", db], tmp_path)
    assert synced.returncode == 0, synced.stderr
    enriched = run(report, tmp_path)
    assert enriched.returncode == 0, enriched.stderr
    rep = json.loads(enriched.stdout)
    assert not [w for w in rep["warnings"] if w.startswith("no discussion for")]
    assert all(p["discussion_known"] for p in rep["pull_requests"])


def test_a_young_repository_on_github_is_compared_with_the_weeks_since_it_was_made(tmp_path):
    """GitHub says when the repository was made (createdAt, in the search the report
    sends anyway): no week before it is a baseline week, online or from the store."""
    from datetime import datetime

    from github_support import SHANGHAI

    made = datetime(2026, 6, 1, 9, tzinfo=SHANGHAI)  # Monday of 2026-W23
    with FakeGitHub(tokens={TOKEN: "repo"}) as young:
        young.add_repository("verl-project/verl", verl(start=made)).created = "2026-06-01T01:00:00Z"
        db = str(tmp_path / "store.db")
        online = run(["report", "github:verl-project/verl", *WEEK, "--lang", "en", "-f", "json", "--db", db,
                      "--github-url", young.url], tmp_path)
        assert online.returncode == 0, online.stderr
        url = young.url
    offline = run(["report", "github:verl-project/verl", *WEEK, "--lang", "en", "-f", "json", "--db", db, "--offline",
                   "--github-url", url], tmp_path)
    assert offline.returncode == 0, offline.stderr
    for out in (online, offline):
        stats = json.loads(out.stdout)["stats"]
        assert stats["baseline"]["weeks"] == 3
        assert stats["trend"]["weeks"] == ["2026-W23", "2026-W24", "2026-W25", "2026-W26"]


def test_a_branchs_report_and_the_default_branchs_keep_apart_in_one_store(tmp_path):
    """One store held every PR of a repository under its name: after a default-branch report,
    a report of `branch = "release-1.0"` added the default branch's PRs of the week to its
    own (its history, covered in the store, is read from there), and the next default-branch
    report counted the release branch's too."""
    prs = verl()
    release = {p.number for p in prs[::5]}
    for p in prs:
        if p.number in release:
            p.base = "release-1.0"
    (tmp_path / "rel").mkdir()
    (tmp_path / "rel" / "repobrief.toml").write_text('branch = "release-1.0"\n', encoding="utf-8")
    (tmp_path / "main").mkdir()  # the default branch named in the config: the same PRs, the same rows
    (tmp_path / "main" / "repobrief.toml").write_text('branch = "main"\n', encoding="utf-8")
    db = str(tmp_path / "store.db")
    with serve(FakeGitHub(tokens={TOKEN: "repo"}), prs) as gh:
        def week(*config: str) -> set[int]:
            r = run(["report", "github:verl-project/verl", *WEEK, "-f", "json", "--db", db, "--github-url", gh.url,
                     "-q", *config], tmp_path)
            assert r.returncode == 0, r.stderr
            return {p["number"] for p in json.loads(r.stdout)["pull_requests"]}

        main = week()
        released = week("--config", str(tmp_path / "rel" / "repobrief.toml"))
        again = week()
        named = week("--config", str(tmp_path / "main" / "repobrief.toml"))
    assert main and released and not main & released
    assert released <= release and main == again == named
    with sqlite3.connect(db) as conn:  # naming the default branch stored nothing apart
        names = {row[0] for row in conn.execute("SELECT name FROM repositories")}
    assert names == {"verl-project/verl", "verl-project/verl@release-1.0"}
    # the sync a branch's offline report asks for is run with its config, on OWNER/REPO
    r = run(["report", "github:verl-project/verl", "--week", "2025-W01", "--tz", "Asia/Shanghai", "--db", db, "--offline",
             "--config", str(tmp_path / "rel" / "repobrief.toml")], tmp_path)
    assert r.returncode != 0 and "of verl-project/verl@release-1.0 is not in the store" in r.stderr
    assert "repobrief sync github:verl-project/verl --since" in r.stderr
