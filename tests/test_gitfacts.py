"""Git facts kept between weekly reports (authors' first commits, line counts): a report
that reuses them says exactly what one that reads everything from git says."""

from __future__ import annotations

import json
import os
from pathlib import Path

from clirun import run_cli
from gitrepo import GitRepoBuilder, git
from test_run import _strip_volatile as _stable

from repobrief import pipeline
from repobrief.config import load_settings
from repobrief.render.json import render
from repobrief.window import parse_timezone, week_range

VERL = ["--name", "verl-project/verl", "--tz", "Asia/Shanghai", "--lang", "en"]


def _report(path: Path, week: str, *, refresh: bool = False) -> dict:
    settings = load_settings(path, env={}, overrides={"name": "o/r", "language": "en"})
    window = week_range(week, week, parse_timezone("UTC"))[0]
    return json.loads(render(pipeline.generate_report(str(path), settings, window, refresh=refresh)))


def _kept(root: Path) -> list[Path]:
    return sorted((root / "repobrief" / "git").glob("*/*.json"))


def _cli_report(repo: Path, out: Path, *extra: str) -> dict:
    code, _, err = run_cli("report", str(repo), *VERL, "--week", "2026-W26", "--format", "json", "--out", str(out), *extra)
    assert code == 0, err
    return json.loads((out / "verl-project__verl-2026-W26.en.json").read_text())


def test_a_second_report_reuses_what_the_first_kept_and_says_the_same(verl_repo, tmp_path):
    cache = Path(os.environ["XDG_CACHE_HOME"])
    first = _cli_report(verl_repo, tmp_path / "a")
    assert [p.name for p in _kept(cache)] == ["authors.json", "numstat.json"]
    second = _cli_report(verl_repo, tmp_path / "b")
    assert _stable(second) == _stable(first)
    cold, warm = first["engine"]["source_stats"], second["engine"]["source_stats"]
    assert cold["numstat_kept"] == 0
    # Every line count of the calibration weeks came from the first run; no history walk for authors.
    assert warm["numstat_kept"] > 100
    assert warm["git_calls"] < cold["git_calls"]
    # --refresh reads everything again, and says the same.
    fresh = _cli_report(verl_repo, tmp_path / "c", "--refresh")
    assert fresh["engine"]["source_stats"]["numstat_kept"] == 0
    assert _stable(fresh) == _stable(first)


def test_a_pull_adds_the_new_commits_authors_to_what_was_kept(tmp_path):
    b = GitRepoBuilder(tmp_path / "r")
    b.commit("initial", "2026-05-04T10:00:00+00:00", {"src/app.py": b.lines(30)}, author="founder")
    b.commit("feat: one (#10)", "2026-06-16T10:00:00+00:00", {"src/a.py": b.lines(8)}, author="dev0")
    week1 = _report(b.path, "2026-W25")
    assert week1["stats"]["first_time_contributor_names"] == ["dev0"]
    # The clone is pulled: a newcomer and a known author merge the week after.
    b.commit("feat: two (#11)", "2026-06-23T10:00:00+00:00", {"src/b.py": b.lines(5)}, author="zoe")
    b.commit("fix: three (#12)", "2026-06-24T10:00:00+00:00", {"src/a.py": b.lines(3)}, author="dev0")
    week2 = _report(b.path, "2026-W26")
    assert week2["stats"]["first_time_contributor_names"] == ["zoe"]
    assert week2["engine"]["source_stats"]["numstat_kept"] == 1  # #10, read for week 1
    # Week 1's tip is among the commits week 2 read, so it is known to lie below the new
    # tip without asking `git merge-base`: a pulled week costs no more git calls than the first.
    assert week2["engine"]["source_stats"]["git_calls"] == week1["engine"]["source_stats"]["git_calls"]
    assert _stable(week2) == _stable(_report(b.path, "2026-W26", refresh=True))
    authors = json.loads(next(p for p in _kept(Path(os.environ["XDG_CACHE_HOME"])) if p.name == "authors.json").read_text())
    assert authors["tip"] == git(b.path, "rev-parse", "HEAD").strip()


def test_rewritten_history_is_read_afresh(tmp_path):
    """What was kept for a tip the clone no longer has below its head says nothing about
    the new history: bob's only earlier commit was dropped, so his PR is his first."""
    b = GitRepoBuilder(tmp_path / "r")
    base = b.commit("initial", "2026-05-04T10:00:00+00:00", {"src/app.py": b.lines(30)}, author="founder")
    b.commit("feat: bob's first try (#10)", "2026-06-16T10:00:00+00:00", {"src/a.py": b.lines(8)}, author="bob")
    assert _report(b.path, "2026-W25")["stats"]["first_time_contributor_names"] == ["bob"]
    git(b.path, "reset", "-q", "--hard", base)
    b.commit("feat: bob again (#11)", "2026-06-23T10:00:00+00:00", {"src/b.py": b.lines(5)}, author="bob")
    week = _report(b.path, "2026-W26")
    assert week["stats"]["first_time_contributor_names"] == ["bob"]
    assert _stable(week) == _stable(_report(b.path, "2026-W26", refresh=True))


def test_a_damaged_or_unwritable_cache_is_only_slower(verl_repo, tmp_path, monkeypatch):
    cache = Path(os.environ["XDG_CACHE_HOME"])
    good = _cli_report(verl_repo, tmp_path / "a")
    authors, numstat = _kept(cache)
    # Well-formed files holding the wrong shapes, then files cut short.
    kept = json.loads(numstat.read_text())
    kept["commits"] = {sha: [["path", "7", 1]] for sha in kept["commits"]}
    numstat.write_text(json.dumps(kept), encoding="utf-8")
    authors.write_text(json.dumps({"version": 1, "tip": "abc", "seen": {"dev": "yesterday"}}), encoding="utf-8")
    damaged = _cli_report(verl_repo, tmp_path / "b1")
    assert _stable(damaged) == _stable(good)
    assert damaged["engine"]["source_stats"]["numstat_kept"] == 0
    for path in (authors, numstat):
        path.write_text('{"version": 1, "tip": 7, "commits": [1, 2', encoding="utf-8")
    damaged = _cli_report(verl_repo, tmp_path / "b2")
    assert _stable(damaged) == _stable(good)
    assert damaged["engine"]["source_stats"]["numstat_kept"] == 0
    # Rewritten whole by the run that found them damaged.
    assert _cli_report(verl_repo, tmp_path / "c")["engine"]["source_stats"]["numstat_kept"] > 100
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("", encoding="utf-8")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocked))
    assert _stable(_cli_report(verl_repo, tmp_path / "d")) == _stable(good)


def test_a_team_run_reuses_kept_facts_and_refresh_reads_everything_again(verl_repo, tmp_path):
    team = tmp_path / "team.toml"
    team.write_text(f'out = "out"\nformats = ["json"]\nlanguages = ["en"]\n\n[[repositories]]\nsource = "{verl_repo}"\n'
                    'name = "verl-project/verl"\ntimezone = "Asia/Shanghai"\n', encoding="utf-8")

    def run(*extra: str) -> dict:
        code, _, err = run_cli("run", "--config", str(team), "--week", "2026-W26", "-q", *extra)
        assert code == 0, err
        return json.loads((tmp_path / "out" / "verl-project__verl" / "verl-project__verl-2026-W26.en.json").read_text())

    first, second, fresh = run(), run(), run("--refresh")
    kept = [r["engine"]["source_stats"]["numstat_kept"] for r in (first, second, fresh)]
    assert kept[0] == 0 and kept[1] > 100 and kept[2] == 0
    assert _stable(first) == _stable(second) == _stable(fresh)


def test_a_shallow_clone_keeps_nothing_so_deepening_it_counts(tmp_path):
    """A shallow clone's first-time contributors are those of its few commits; after
    `git fetch --unshallow` (what its warning says to do) they are right, not kept."""
    import subprocess

    b = GitRepoBuilder(tmp_path / "r")
    b.commit("initial", "2026-05-04T10:00:00+00:00", {"src/app.py": b.lines(30)}, author="dev0")
    for i in range(3):
        b.commit(f"feat: step {i} (#{10 + i})", f"2026-06-2{2 + i}T10:00:00+00:00", {f"src/s{i}.py": b.lines(5)},
                 author="dev0")
    clone = tmp_path / "shallow"
    subprocess.run(["git", "clone", "-q", "--depth", "2", f"file://{b.path}", str(clone)], check=True)
    shallow = _report(clone, "2026-W26")
    assert shallow["stats"]["first_time_contributor_names"] == ["dev0"]  # its first commit is cut off
    assert any("shallow" in w for w in shallow["warnings"]) and not _kept(Path(os.environ["XDG_CACHE_HOME"]))
    subprocess.run(["git", "-C", str(clone), "fetch", "-q", "--unshallow"], check=True)
    deep = _report(clone, "2026-W26")
    assert deep["stats"]["first_time_contributor_names"] == [] and deep["warnings"] == []
