"""The CLI's edge: help, clear errors with exit codes, and all-or-nothing output."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys

import pytest
from clirun import run_cli
from gitrepo import GitRepoBuilder, git


@pytest.fixture(scope="module")
def small_repo(tmp_path_factory):
    b = GitRepoBuilder(tmp_path_factory.mktemp("cli") / "proj")
    b.commit("init", "2026-02-02T10:00:00+00:00", {"src/app.py": b.lines(10)})
    b.commit("feat: add <b>bold</b> | pipe [x](javascript:alert(1)) (#1)", "2026-03-03T10:00:00+00:00",
             {"src/app.py": b.lines(5), "tests/test_app.py": b.lines(5)})
    git(b.path, "remote", "add", "origin", "https://github.com/acme/proj.git")
    return b.path


def test_help_lists_commands_and_options():
    out = subprocess.run([sys.executable, "-m", "repobrief", "--help"], capture_output=True, text=True)
    assert out.returncode == 0
    for cmd in ("report", "backfill"):
        assert cmd in out.stdout
    out = subprocess.run([sys.executable, "-m", "repobrief", "report", "--help"], capture_output=True, text=True)
    for opt in ("--week", "--since", "--tz", "--lang", "--format", "--out", "--threshold", "--config", "--name"):
        assert opt in out.stdout


def test_the_format_help_lists_every_built_in_format_and_no_default_twice():
    """`report --format` said "md, json, …"; `backfill --help` said "(default: json).
    [default: json]"."""
    env = {**os.environ, "COLUMNS": "300"}
    for command, option in (("report", "--format"), ("backfill", "--format"), ("site", "--weeks"), ("publish", "--timeout")):
        out = subprocess.run([sys.executable, "-m", "repobrief", command, "--help"], capture_output=True, text=True, env=env)
        assert out.returncode == 0 and option in out.stdout, out.stderr
        for line in out.stdout.splitlines():
            assert not ("(default" in line and "[default:" in line), line
            if "--format " in line and "Comma-separated" in line:
                assert "md, json, html, feishu, lark, slack, dingtalk, wecom" in line, line


def test_version_needs_no_command():
    from repobrief import __version__

    out = subprocess.run([sys.executable, "-m", "repobrief", "--version"], capture_output=True, text=True)
    assert (out.returncode, out.stdout) == (0, f"repobrief {__version__}\n")


@pytest.mark.parametrize(
    "args, code, message",
    [
        (["--week", "2026-26"], 2, "valid forms: YYYY-Www"),
        (["--since", "yesterday"], 2, "YYYY-MM-DD"),
        (["--tz", "Mars/Olympus"], 2, "unknown time zone"),
        (["--lang", "fr"], 2, "valid: zh, en"),
        (["--format", "md,docx"], 2, "valid formats:"),
        (["--format", "md,json"], 2, "several formats need --out"),
        (["--week", "last", "--since", "2026-01-01"], 2, "either --week or --since"),
        (["--link", "reports.example.com/w26.html"], 2, "'reports.example.com/w26.html' is not an absolute http(s) URL"),
        (["--link", "https://r.example.com/weekly reports/w26.html"], 2, "contains a space or a control character"),
        (["--link", "javascript:alert(1)"], 2, "--link 'javascript:alert(1)' is not an absolute http(s) URL"),
        (["--link", "http://r.example.com:99999/w26.html"], 2, "has a port out of range (99999; ports go from 1 to 65535)"),
        # values the config checks too: named as the flag that gave them, a usage error
        (["--threshold", "12"], 2, "error: --threshold is 12.0; expected a number from 0.0 to 10.0"),
        (["--name", "flask"], 2, "error: --name is 'flask'; expected OWNER/REPO"),
        (["--name", ""], 2, "error: --name is empty"),
        (["--name", "../evil"], 2, "error: --name is '../evil'; expected OWNER/REPO"),
        (["--name", "acme/\x1b[31mproj"], 2, "expected OWNER/REPO"),
        (["--tz", " "], 2, "error: --tz is empty"),
        (["--week", ""], 2, "error: --week is empty"),
        (["--engine", "llm", "--llm-model", ""], 2, "error: --llm-model is empty"),
        (["--engine", "ofline"], 2, "error: --engine is 'ofline'; expected one of llm, offline\n  hint: did you mean 'offline'?"),
    ],
)
def test_bad_flags(small_repo, args, code, message):
    got, out, err = run_cli("report", str(small_repo), *args)
    assert got == code and message in err and out == ""


@pytest.mark.parametrize(
    "args, message",
    [
        (["report", "github:verl-project/verl", "--week", "2026-W26", "--source", "bogus"], "unknown source 'bogus'; valid: git, github"),
        (["sync", "github:verl-project/verl", "--since", "2026-06-15", "--tz", "Mars/Base"], "unknown time zone 'Mars/Base'"),
        (["sync", "github:verl-project/verl", "--since", "2999-06-22"], "--since 2999-06-22 is in the future"),
    ],
)
def test_bad_flags_of_github_commands_are_usage_errors_before_any_request(tmp_path, args, message):
    """The GitHub URL is a port nothing listens on: a request would be a different error."""
    got, out, err = run_cli(*args, "--db", str(tmp_path / "s.db"), "--github-url", "http://127.0.0.1:9")
    assert got == 2 and message in err and out == ""


@pytest.mark.parametrize(
    "command, flags",
    [
        (["report"], ["--week", "2026-W26"]),
        (["report"], ["--week", "2026-W26", "--offline"]),
        (["backfill"], ["--from", "2026-W25", "--to", "2026-W26", "--out", "{out}"]),
        (["site"], ["--out", "{out}"]),
        (["batch", "export"], ["--out", "{out}/requests.jsonl", "--llm-model", "m"]),
    ],
)
def test_a_source_that_contradicts_the_target_is_refused_before_anything_is_opened(small_repo, tmp_path, command, flags):
    """`github:…` with `--source git` used to read GitHub regardless; a clone with
    `--source github` failed as a bad repository name. Both are a usage error naming
    the mix-up, and no store or output is created."""
    db, out = tmp_path / "s.db", tmp_path / "out"
    flags = [f.format(out=out) for f in flags]
    common = ["--db", str(db), "--github-url", "http://127.0.0.1:9"]  # a request would be a different error

    got, stdout, err = run_cli(*command, "github:acme/proj", "--source", "git", *flags, *common)
    assert got == 2 and stdout == ""
    assert "error: --source git contradicts the target 'github:acme/proj', which names the github source" in err
    assert "hint: drop --source git to read it with the github source, or give the path of a local clone" in err

    got, stdout, err = run_cli(*command, str(small_repo), "--source", "github", *flags, *common)
    assert got == 2 and stdout == ""
    assert f"error: --source github reads a GitHub repository, and {str(small_repo)!r} is a local folder" in err
    assert "hint: drop --source github to read the clone with git" in err
    assert not db.exists() and not out.exists()


def test_a_github_target_reads_the_config_above_the_current_folder_as_sync_does(tmp_path, monkeypatch):
    """A `[github] url` (Enterprise) in ./repobrief.toml used to reach `sync` but not `report`."""
    (tmp_path / "repobrief.toml").write_text('thresold = 3\n', encoding="utf-8")
    (tmp_path / "sub").mkdir()
    monkeypatch.chdir(tmp_path / "sub")
    for command in (["sync", "github:acme/proj"], ["report", "github:acme/proj", "--week", "2026-W26"]):
        got, _, err = run_cli(*command, "--db", str(tmp_path / "s.db"), "--github-url", "http://127.0.0.1:9")
        assert got == 3 and "unknown option 'thresold'" in err, (command, err)


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root to give a clone to another user")
def test_a_clone_owned_by_another_user_is_named_as_such_not_as_no_repository(small_repo, tmp_path):
    """git's `safe.directory` check (CI, containers) made it "not a git repository"."""
    clone = tmp_path / "theirs"
    shutil.copytree(small_repo, clone)
    for folder, _, files in os.walk(clone):
        for name in [folder, *(os.path.join(folder, f) for f in files)]:
            os.lchown(name, 65534, 65534)
    got, out, err = run_cli("report", str(clone), "--week", "2026-W26")
    assert got == 4 and out == ""
    assert f"git refuses to read {str(clone)!r}: it is owned by another user" in err
    assert f"hint: if you trust it: git config --global --add safe.directory {clone}" in err


def test_bad_paths_and_config(tmp_path, monkeypatch):
    got, _, err = run_cli("report", str(tmp_path / "nope"))
    assert got == 4 and "does not exist" in err and "github:" not in err
    monkeypatch.chdir(tmp_path)  # OWNER/REPO, as `sync` takes it: the GitHub form is suggested
    got, _, err = run_cli("report", "verl-project/verl")
    assert got == 4 and "hint: give the path of a local git clone, or github:verl-project/verl to read" in err
    got, _, err = run_cli("report", str(tmp_path))
    assert got == 4 and "not a git repository" in err
    git(tmp_path, "init", "-q", "empty")
    got, _, err = run_cli("report", str(tmp_path / "empty"))
    assert got == 4 and "empty" in err
    cfg = tmp_path / "bad.toml"
    cfg.write_text("thresold = 3\n", encoding="utf-8")
    got, _, err = run_cli("report", str(tmp_path / "empty"), "--config", str(cfg))
    assert got == 3 and "'thresold'" in err and "threshold" in err


def test_name_from_origin_and_output_files(small_repo, tmp_path):
    out = tmp_path / "out"
    got, _, err = run_cli("report", str(small_repo), "--week", "2026-W10", "--format", "md,json", "--out", str(out),
                      "--lang", "en")
    assert got == 0
    assert sorted(p.name for p in out.iterdir()) == ["acme__proj-2026-W10.en.json", "acme__proj-2026-W10.en.md"]
    md = (out / "acme__proj-2026-W10.en.md").read_text(encoding="utf-8")
    assert md.startswith("# acme/proj weekly report, 2026 week 10")
    # Untrusted title text is inert in Markdown: no raw HTML, no link, no broken table.
    assert "<b>" not in md and not re.search(r"(?<!\\)\]\(javascript", md) and "&lt;b>" in md
    assert "1 PR " in md or "1 PR)" in md or "1 PR," in md
    assert "https://github.com/acme/proj/pull/1" in (out / "acme__proj-2026-W10.en.json").read_text(encoding="utf-8")
    assert "wrote" in err and "acme/proj 2026-W10: 1 PR merged, 1 with importance ≥ 5, 0 risks; engine offline" in err


@pytest.mark.parametrize("command", ["report", "backfill"])
def test_format_given_twice_writes_both(small_repo, tmp_path, command):
    """`-f md -f json` wrote only the JSON: the second flag replaced the first."""
    out = tmp_path / "out"
    span = ["--week", "2026-W10"] if command == "report" else ["--from", "2026-W10", "--to", "2026-W10"]
    got, _, err = run_cli(command, str(small_repo), *span, "-f", "md", "--format", "json,md", "-f", "html",
                          "--out", str(out), "--lang", "en", "-q")
    assert got == 0, err
    assert sorted(p.suffix for p in out.iterdir()) == [".html", ".json", ".md"]


def test_without_a_remote_the_name_is_the_clones_folder_whatever_path_inside_it_is_given(tmp_path):
    """`report proj/.git` was reported as ".git", `report proj/src` as "src"."""
    b = GitRepoBuilder(tmp_path / "proj")
    b.commit("init", "2026-02-02T10:00:00+00:00", {"src/app.py": b.lines(10)})
    b.commit("feat: add things (#1)", "2026-03-03T10:00:00+00:00", {"src/app.py": b.lines(5)})
    git(tmp_path, "clone", "-q", "--bare", str(b.path), str(tmp_path / "mirror.git"))
    for path in (b.path, b.path / ".git", b.path / "src", tmp_path / "mirror.git"):
        got, out, err = run_cli("report", str(path), "--week", "2026-W10", "--lang", "en", "-q")
        assert got == 0, err
        assert out.startswith("# proj weekly report, 2026 week 10") or out.startswith("# mirror weekly report"), (path, out[:60])
        assert out.startswith("# mirror") == (path.name == "mirror.git")


def test_language_and_engine_flags_take_any_case(small_repo):
    got, out, err = run_cli("report", str(small_repo), "--week", "2026-W10", "--lang", "EN", "--engine", "Offline", "-q")
    assert got == 0, err
    assert out.startswith("# acme/proj weekly report, 2026 week 10")
    # a config file reads them as the flags do: `language = "EN"` was refused there
    cfg = small_repo.parent / "upper.toml"
    cfg.write_text('language = "EN"\n', encoding="utf-8")
    got, out, err = run_cli("report", str(small_repo), "--week", "2026-W10", "--config", str(cfg), "-q")
    assert got == 0 and out.startswith("# acme/proj weekly report, 2026 week 10"), err


def test_a_week_in_progress_says_so_in_the_report_and_on_stderr(small_repo, tmp_path):
    out = tmp_path / "out"
    got, _, err = run_cli("report", str(small_repo), "--week", "this", "--lang", "en", "--format", "md,json", "--out", str(out))
    assert got == 0, err
    notice = "This week is still in progress: it ends "
    assert f"warning: {notice}" in err
    md = next(out.glob("*.md")).read_text(encoding="utf-8")
    assert md.split("\n")[2].startswith(f"> ⚠ {notice}")
    data = json.loads(next(out.glob("*.json")).read_text(encoding="utf-8"))
    assert data["warnings"][0].startswith(notice) and "so this report covers only what was merged until" in data["warnings"][0]
    got, out_text, _ = run_cli("report", str(small_repo), "--week", "2026-W10", "--lang", "en")
    assert got == 0 and "still in progress" not in out_text  # an ended week says nothing of the kind


def test_an_empty_week_long_after_the_clones_newest_commit_says_to_pull(small_repo, tmp_path):
    """A weekly job on a clone nobody pulled posted "nothing was merged" for months. An
    empty week whose clone's newest commit (2026-03-03) is more than a week older says
    so; a quiet week right after it, or an empty week before it, does not."""
    base = ["report", str(small_repo), "--lang", "en", "--format", "json", "--db", str(tmp_path / "rb.db"),
            "--out", str(tmp_path / "out")]
    code, _, err = run_cli(*base, "--week", "2026-W14")
    assert code == 0, err
    said = ("the clone's newest commit is from 2026-03-03, 26 days before this period: "
            "if the clone is not up to date, run `git pull` in it first")
    assert f"warning: {said}" in err
    assert said in json.loads((tmp_path / "out" / "acme__proj-2026-W14.en.json").read_text())["warnings"]
    code, _, err = run_cli(*base[:2], "--lang", "zh", "--week", "2026-W14", "--db", str(tmp_path / "rb.db"), "-q")
    assert "该克隆最新的提交是2026-03-03的，比本期开始早26天" in err
    for quiet in ("2026-W11", "2026-W07"):  # six days after it; between two commits
        code, _, err = run_cli(*base, "--week", quiet)
        assert code == 0 and "warning" not in err, err


def test_nothing_is_written_half_way(small_repo, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder", encoding="utf-8")
    got, _, err = run_cli("report", str(small_repo), "--week", "2026-W10", "--format", "md,json", "--out", str(blocker / "x"))
    assert got == 2 and "is a file, not a folder" in err
    out = tmp_path / "out"
    out.mkdir()
    (out / "acme__proj-2026-W10.zh.json").mkdir()  # the second file cannot be replaced
    got, _, err = run_cli("report", str(small_repo), "--week", "2026-W10", "--format", "md,json", "--out", str(out))
    assert got != 0
    assert not (out / "acme__proj-2026-W10.zh.md").exists()  # the first was not left behind
    assert not [p for p in out.iterdir() if p.name.endswith(".tmp")]


def test_a_standard_output_that_cannot_be_written_is_said_without_a_traceback(small_repo, tmp_path):
    """`report > /dev/full` and `report >&-` ended in Python tracebacks (OSError, then
    'NoneType' object has no attribute 'write'); a reader that leaves early (`| head`)
    ends the command quietly."""
    cmd = [sys.executable, "-c", "from repobrief.cli import main; main()", "report", str(small_repo),
           "--week", "2026-W10", "--db", str(tmp_path / "rb.db")]
    with open("/dev/full", "w") as full:
        r = subprocess.run(cmd, stdout=full, stderr=subprocess.PIPE, text=True, cwd=tmp_path)
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    assert "error: cannot write the report to standard output: No space left on device" in r.stderr
    assert "give --out DIR" in r.stderr
    ascii_out = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp_path, env={**os.environ, "PYTHONIOENCODING": "ascii"})
    assert ascii_out.returncode == 1 and "Traceback" not in ascii_out.stderr, ascii_out.stderr
    assert "cannot write the report to standard output: its encoding (ascii) has no" in ascii_out.stderr
    assert "hint: use a UTF-8 locale" in ascii_out.stderr
    closed = subprocess.run(["sh", "-c", 'exec "$@" >&-', "sh", *cmd], stderr=subprocess.PIPE, text=True, cwd=tmp_path)
    assert closed.returncode == 1 and "Traceback" not in closed.stderr, closed.stderr
    assert "cannot write the report to standard output: it is closed" in closed.stderr
    # a pipe smaller than the page: the reader is gone before the rest is written (or, on a
    # system that keeps a larger pipe, the page fits and the command ends as usual)
    left = subprocess.Popen([*cmd, "--format", "html"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tmp_path,
                            pipesize=4096)
    left.stdout.read(10)
    left.stdout.close()
    assert left.wait(60) in (0, 141) and b"Traceback" not in left.stderr.read()


def test_reports_are_kept_in_the_store(small_repo, tmp_path, monkeypatch):
    from repobrief.store import open_store

    db = tmp_path / "rb.db"
    got, out, _ = run_cli("report", str(small_repo), "--week", "2026-W10", "--db", str(db), "--lang", "en", "-q")
    assert got == 0
    with open_store(str(db)) as store:
        assert store.load_report("acme/proj", "2026-W10", "en", "md") == out
        assert [p.number for p in store.load_pull_requests("acme/proj")] == [1]
    # --store uses the default file in the user data dir; asked for, one that cannot be made
    # fails before any work, as a --db that cannot be opened does (it once warned, exit 0).
    blocker = tmp_path / "blocked"
    blocker.write_text("a file where a folder should be", encoding="utf-8")
    monkeypatch.setenv("XDG_DATA_HOME", str(blocker))
    monkeypatch.delenv("REPOBRIEF_DATA_DIR", raising=False)
    got, out, err = run_cli("report", str(small_repo), "--week", "2026-W10", "--lang", "en", "--store")
    assert got == 6 and out == "" and f"error: cannot make the store's folder {blocker}" in err
    assert "hint: give --db FILE" in err
    got, out, err = run_cli("report", str(small_repo), "--week", "2026-W10", "--lang", "en")
    assert got == 0 and "store" not in err  # no store unless asked for


def test_the_store_file_alone_holds_what_report_kept(small_repo, tmp_path):
    """The console script (`entry`) exits without finalising objects: the store must be
    closed by the command, or its data stays in the -wal file beside it."""
    import shutil
    import sqlite3

    db = tmp_path / "rb.db"
    done = subprocess.run([sys.executable, "-c", "from repobrief.cli import entry; entry()", "report", str(small_repo),
                           "--week", "2026-W10", "--db", str(db), "-q"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert not (tmp_path / "rb.db-wal").exists()
    copy = tmp_path / "copy.db"
    shutil.copy(db, copy)  # what a backup or a CI artifact upload takes
    con = sqlite3.connect(copy)
    assert con.execute("SELECT count(*) FROM reports").fetchone()[0] == 1
    con.close()


@pytest.mark.parametrize("url", ["https://github.com/acme/proj.git", "git@github.com:acme/proj.git"])
def test_a_github_clone_url_is_read_from_github_as_sync_reads_it(url, tmp_path, monkeypatch):
    """It was taken for a local path: "path 'https://github.com/…' does not exist"."""
    for var in ("GITHUB_TOKEN", "GH_TOKEN", "REPOBRIEF_GITHUB_TOKEN"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))  # no `gh` to ask for a token either
    got, _, err = run_cli("report", url, "--week", "2026-W26", "--db", str(tmp_path / "s.db"))
    assert got == 4 and "does not exist" not in err
    assert "no GitHub token found for github.com" in err


@pytest.mark.parametrize("url, problem", [
    ("http://127.0.0.1:abc", "has a port that is not a number"),
    ("http://[zz]", "is not an http(s) URL"),
    ("http://[::1", "is not an http(s) URL"),
    ("http://k3y-s3cret@127.0.0.1:99999/v1", "has a port out of range"),
])
def test_a_malformed_api_or_endpoint_url_is_a_config_error_before_any_work(small_repo, tmp_path, monkeypatch, url, problem):
    """A GitHub API or LLM endpoint URL with a bad port or broken brackets ended in a
    Python traceback (httpx's InvalidURL, urllib's ValueError) once the first request was
    made, and in `run` failed its repository late. Each is refused up front, from a flag,
    an environment variable or a config file, without quoting what may hold a key."""
    monkeypatch.setenv("GITHUB_TOKEN", "x")
    code, _, err = run_cli("report", "github:a/b", "--week", "2026-W26", "--github-url", url)
    assert (code, err.count("Traceback")) == (2, 0) and f"--github-url {problem}" in err, err
    monkeypatch.setenv("OPENAI_BASE_URL", url)
    code, out, err = run_cli("report", str(small_repo), "--week", "2026-W26", "--engine", "llm", "--llm-model", "m")
    assert (code, out) == (3, "") and f"option 'llm.base_url' {problem}" in err, err
    monkeypatch.delenv("OPENAI_BASE_URL")
    config = tmp_path / "repobrief.toml"
    config.write_text(f'[llm]\nbase_url = "{url}"\nmodel = "m"\n[github]\nurl = "{url}"\n')
    code, _, err = run_cli("report", str(small_repo), "--config", str(config), "--week", "2026-W26")
    assert code == 3 and problem in err and "k3y" not in err and "Traceback" not in err, err


def test_an_empty_repository_or_github_flag_is_refused_not_read_as_the_current_folder(small_repo, monkeypatch):
    """`repobrief report "$CLONE"` with CLONE unset reported whatever repository the job
    ran in (the empty path read as "."), and `--github ""` was dropped without a word."""
    monkeypatch.chdir(small_repo)
    for args in (["report", " ", "--week", "2026-W26"], ["backfill", "", "--from", "2026-W26", "--to", "2026-W26", "--out", "out"]):
        code, out, err = run_cli(*args)
        assert (code, out) == (2, ""), (args, err)
        assert "the repository to read is empty" in err and "'.' for the current folder" in err, err
    assert not (small_repo / "out").exists()
    code, out, err = run_cli("report", str(small_repo), "--week", "2026-W26", "--github", "")
    assert (code, out) == (2, "") and "--github is empty" in err


@pytest.mark.parametrize("argv", [
    ["sync", "github:a/b", "--db", ""],
    ["batch", "import", "results.jsonl", "--db", ""],
    ["batch", "export", "--config", "team.toml", "--db", "", "--out", "x.jsonl"],
    ["run", "--config", "team.toml", "--db", ""],
])
def test_an_empty_db_is_refused_by_every_command_that_takes_one(tmp_path, monkeypatch, argv):
    """An unset $DB in `--db "$DB"` made sync and batch import write into the default
    store and run go without its shared one; report refused it already."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    code, _, err = run_cli(*argv)
    assert code == 2 and "--db is empty" in err, err
    assert not (tmp_path / "data").exists()


def test_a_malformed_github_url_given_to_sync_is_a_bad_flag(tmp_path):
    code, _, err = run_cli("sync", "github:a/b", "--since", "2026-01-01", "--github-url", "https://ghe.example.com:abc",
                           "--db", str(tmp_path / "s.db"))
    assert code == 2 and "--github-url has a port that is not a number" in err and not (tmp_path / "s.db").exists()
