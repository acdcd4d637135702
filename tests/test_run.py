"""`repobrief run`: several repositories in one run (real replayed histories and small
synthetic repositories), one failing without stopping the others, reports equal
to single `repobrief report` runs, the ecosystem digest, config errors, the
executor seam and per-repository publish targets (a real loopback receiver)."""

from __future__ import annotations

import json
import os
import re
import signal
from datetime import UTC, datetime
from pathlib import Path

import pytest
from clirun import run_cli
from gitrepo import git, squash_repo
from receivers import Receiver, json_response, loopback_server_fixture

from repobrief.errors import ConfigError, SourceError

WEEK = "2026-W04"  # verl merged 22 PRs and flask 8 commits that week
server = loopback_server_fixture()


def cli(argv: list[str]) -> tuple[int, str, str]:
    return run_cli(*argv)


def write_team(folder: Path, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    cfg = folder / "team.toml"
    cfg.write_text(text, encoding="utf-8")
    return cfg


def _strip_volatile(report: dict) -> dict:
    report = dict(report)
    report.pop("generated_at", None)
    # How long it took and how much git was read (less when earlier reports kept git facts).
    report["engine"] = {k: v for k, v in report["engine"].items() if k not in ("timings_ms", "source_stats")}
    return report


# ------------------------------------------------------------------ verl + flask + two failures


@pytest.fixture(scope="module")
def team_run(verl_repo, flask_repo, tmp_path_factory):
    root = tmp_path_factory.mktemp("team")
    (root / "plain").mkdir()  # a folder that is not a git repository: a broken source
    cfg = write_team(root, f"""
out = "out"
formats = ["md", "json"]

[digest]
languages = ["zh", "en"]
highlights = 3

[[repositories]]
source = "{verl_repo}"
name = "verl-project/verl"
timezone = "Asia/Shanghai"
languages = ["zh", "en"]

[[repositories]]
source = "missing-clone"          # relative to team.toml: does not exist
name = "acme/missing"

[[repositories]]
source = "{flask_repo}"
name = "pallets/flask"
timezone = "America/Los_Angeles"
threshold = 4.0

[[repositories]]
source = "plain"
name = "acme/plain"
""")
    code, out, err = cli(["run", "--config", str(cfg), "--week", WEEK, "--digest"])
    return {"root": root, "out": root / "out", "code": code, "stdout": out, "stderr": err,
            "verl": verl_repo, "flask": flask_repo}


def test_one_failing_repository_does_not_stop_the_others(team_run):
    assert team_run["code"] == 8, team_run["stderr"]
    err = team_run["stderr"]
    missing = team_run["root"] / "missing-clone"
    assert f"error: acme/missing: path '{missing}' does not exist" in err
    assert "error: acme/plain:" in err and "git" in err.split("error: acme/plain:")[1].splitlines()[0]
    assert err.count("2 of 4 repositories reported, 2 failed") == 1  # the summary, once
    assert "[4/4" in err  # progress: one line per finished repository
    out = team_run["out"]
    written = sorted(str(p.relative_to(out)) for p in out.rglob("*") if p.is_file())
    assert written == sorted([
        f"ecosystem-{WEEK}.en.json", f"ecosystem-{WEEK}.en.md", f"ecosystem-{WEEK}.zh.json", f"ecosystem-{WEEK}.zh.md",
        f"pallets__flask/pallets__flask-{WEEK}.zh.json", f"pallets__flask/pallets__flask-{WEEK}.zh.md",
        f"verl-project__verl/verl-project__verl-{WEEK}.en.json", f"verl-project__verl/verl-project__verl-{WEEK}.en.md",
        f"verl-project__verl/verl-project__verl-{WEEK}.zh.json", f"verl-project__verl/verl-project__verl-{WEEK}.zh.md",
    ])


@pytest.mark.parametrize("repo,name,args,lang", [
    ("verl", "verl-project/verl", ["--tz", "Asia/Shanghai"], "zh"),
    ("verl", "verl-project/verl", ["--tz", "Asia/Shanghai"], "en"),
    ("flask", "pallets/flask", ["--tz", "America/Los_Angeles", "--threshold", "4.0"], "zh"),
])
def test_reports_equal_single_report_runs(team_run, tmp_path, repo, name, args, lang):
    code, _, err = cli(["report", str(team_run[repo]), "--name", name, "--week", WEEK, "--lang", lang, *args,
                        "--format", "md,json", "--out", str(tmp_path), "-q"])
    assert code == 0, err
    stem = f"{name.replace('/', '__')}-{WEEK}.{lang}"
    ran = team_run["out"] / name.replace("/", "__")
    assert (ran / f"{stem}.md").read_text() == (tmp_path / f"{stem}.md").read_text()
    single = json.loads((tmp_path / f"{stem}.json").read_text())
    assert _strip_volatile(json.loads((ran / f"{stem}.json").read_text())) == _strip_volatile(single)
    assert single["stats"]["merged_prs"] > 0


def test_digest_summarises_the_repositories_reports(team_run):
    out = team_run["out"]
    reports = {
        "verl-project/verl": json.loads((out / "verl-project__verl" / f"verl-project__verl-{WEEK}.en.json").read_text()),
        "pallets/flask": json.loads((out / "pallets__flask" / f"pallets__flask-{WEEK}.zh.json").read_text()),
    }
    d = json.loads((out / f"ecosystem-{WEEK}.en.json").read_text())
    assert d["kind"] == "ecosystem_digest" and d["week"] == WEEK and d["language"] == "en"
    assert [r["repository"] for r in d["repositories"]] == ["pallets/flask", "verl-project/verl"]
    assert d["totals"]["merged_prs"] == sum(r["stats"]["merged_prs"] for r in reports.values())
    assert d["totals"]["lines_added"] == sum(r["stats"]["lines_added"] for r in reports.values())
    verl = next(r for r in d["repositories"] if r["repository"] == "verl-project/verl")
    top = sorted(reports["verl-project/verl"]["pull_requests"], key=lambda p: (-p["importance"], p["number"]))[:3]
    assert [h["number"] for h in verl["highlights"]] == [p["number"] for p in top]
    assert [h["key_contribution"] for h in verl["highlights"]] == [p["key_contribution"] for p in top]
    assert verl["merged_prs"] == reports["verl-project/verl"]["stats"]["merged_prs"]
    # every cross-repository theme is in both repositories' reports, with their PRs: one of
    # their themes, or the union of those a reader sees under one name (verl's title word
    # "Documentation" and flask's docs folder; the keys differ)
    by_repo = {name: {t["key"]: set(t["prs"]) for t in r["themes"]} for name, r in reports.items()}
    for theme in d["themes"]:
        assert len(theme["repositories"]) == 2
        for x in theme["repositories"]:
            parts = [prs for prs in by_repo[x["repository"]].values() if prs <= set(x["prs"])]
            assert parts and set().union(*parts) == set(x["prs"]) and x["count"] == len(x["prs"])
    for key in set(by_repo["verl-project/verl"]) & set(by_repo["pallets/flask"]):  # a key both have is shared
        assert any(by_repo[x["repository"]][key] <= set(x["prs"]) for t in d["themes"] for x in t["repositories"])
    assert d["themes"]
    risk_kinds = [{r["kind"] for r in rep["risks"]} for rep in reports.values()]
    assert {r["kind"] for r in d["shared_risks"]} == risk_kinds[0] & risk_kinds[1]
    assert {f["repository"] for f in d["failed"]} == {"acme/missing", "acme/plain"}
    md_en = (out / f"ecosystem-{WEEK}.en.md").read_text()
    md_zh = (out / f"ecosystem-{WEEK}.zh.md").read_text()
    assert md_en.startswith(f"# Ecosystem digest, {WEEK} (2 repositories)")
    assert md_zh.startswith(f"# 生态周报：{WEEK}（2 个仓库）")
    for md in (md_en, md_zh):
        assert f"#{top[0]['number']}" in md and "verl-project/verl" in md and "pallets/flask" in md
        assert "acme/missing" in md
    assert "## 2. Highlights per repository" in md_en and "## 2. 各仓库要点" in md_zh
    zh = json.loads((out / f"ecosystem-{WEEK}.zh.json").read_text())
    assert zh["totals"] == d["totals"]  # the same numbers in both languages


# ------------------------------------------------------------------ synthetic repositories


def small_repo(path: Path, prs: list[tuple[str, dict]], author: str = "dev") -> Path:
    return squash_repo(path, prs, "2026-06-22", author, initial="2026-06-01")


@pytest.fixture(scope="module")
def trio(tmp_path_factory):
    root = tmp_path_factory.mktemp("trio")
    bump = ("Bump torch from 2.5 to 2.6", {"requirements.txt": "torch==2.6\n"})
    return {
        "alpha": small_repo(root / "alpha", [("feat: add streaming API", {"src/stream.py": 80, "tests/test_stream.py": 20}), bump]),
        "beta": small_repo(root / "beta", [("fix: handle empty input", {"src/app.py": 5}), bump], author="b"),
        "torch": small_repo(root / "torch", [("feat: faster kernels", {"src/kernels.py": 60})], author="t"),
    }


def trio_config(folder: Path, trio: dict, extra: str = "") -> Path:
    body = 'out = "out"\nformats = ["md", "json"]\nlanguages = ["en"]\n' + extra
    for name, path in trio.items():
        body += f'\n[[repositories]]\nsource = "{path}"\nname = "acme/{name}"\n'
    return write_team(folder, body)


def test_digest_names_a_dependency_bump_shared_by_several_repositories(trio, tmp_path):
    cfg = trio_config(tmp_path, trio, '[digest]\nlanguages = ["en", "zh"]\n')
    code, _, err = cli(["run", "--config", str(cfg), "--week", "2026-W26", "--digest", "-q"])
    assert code == 0, err
    d = json.loads((tmp_path / "out" / "ecosystem-2026-W26.en.json").read_text())
    (dep,) = d["dependencies"]
    assert dep["package"] == "torch" and dep["upstream_in_run"] == "acme/torch"
    assert dep["repositories"] == [{"repository": "acme/alpha", "prs": [11]}, {"repository": "acme/beta", "prs": [11]}]
    assert any(r["kind"] == "dependency_change" and {x["repository"] for x in r["repositories"]} == {"acme/alpha", "acme/beta"}
               for r in d["shared_risks"])
    assert d["themes"] and all(len(t["repositories"]) >= 2 for t in d["themes"])
    assert d["totals"]["merged_prs"] == 5 and [r["merged_prs"] for r in d["repositories"]] == [2, 2, 1]
    md = (tmp_path / "out" / "ecosystem-2026-W26.en.md").read_text()
    assert "acme/torch (torch) is part of this run" in md and "acme/alpha#11" in md and "acme/beta#11" in md
    zh = (tmp_path / "out" / "ecosystem-2026-W26.zh.md").read_text()
    assert "acme/torch（torch）也在本次运行中" in zh
    # the digest languages were generated for the digest only; the repositories' own files stay English
    assert sorted(p.name for p in (tmp_path / "out" / "acme__alpha").iterdir()) == [
        "acme__alpha-2026-W26.en.json", "acme__alpha-2026-W26.en.md"]


def test_a_repository_whose_week_holds_only_direct_commits_says_so_in_the_digest(trio, tmp_path):
    """Its row counted the commits' lines while its highlights said "No PRs merged this week"."""
    from gitrepo import GitRepoBuilder

    b = GitRepoBuilder(tmp_path / "quiet")
    b.commit("initial", "2026-06-01T10:00:00+00:00", {"src/app.py": b.lines(30)})
    for day in (23, 24):
        b.commit(f"tweak the app on the {day}th", f"2026-06-{day}T10:00:00+00:00", {"src/app.py": b.lines(30)})
    cfg = trio_config(tmp_path, {"alpha": trio["alpha"], "quiet": b.path}, '[digest]\nlanguages = ["en", "zh"]\n')
    code, _, err = cli(["run", "--config", str(cfg), "--week", "2026-W26", "--digest", "-q"])
    assert code == 0, err
    d = json.loads((tmp_path / "out" / "ecosystem-2026-W26.en.json").read_text())
    quiet = next(r for r in d["repositories"] if r["repository"] == "acme/quiet")
    assert quiet["merged_prs"] == 0 and quiet["direct_commits"] == 2 and quiet["lines_added"] == 60
    md = (tmp_path / "out" / "ecosystem-2026-W26.en.md").read_text()
    assert ("### acme/quiet\n\nNo PRs merged this week, but 2 commits landed directly on the default branch, "
            "without a PR and so without a review record.\n") in md
    assert "本周没有合并的PR，但有2个提交未经PR直接进入默认分支" in (tmp_path / "out" / "ecosystem-2026-W26.zh.md").read_text()


def test_rerunning_one_repository_keeps_the_others_in_the_weeks_digest(trio, tmp_path):
    cfg = trio_config(tmp_path, trio, '[digest]\nlanguages = ["en"]\n')
    code, _, err = cli(["run", "--config", str(cfg), "--week", "2026-W26", "--digest", "-q"])
    assert code == 0, err
    digest = tmp_path / "out" / "ecosystem-2026-W26.en.json"
    before = json.loads(digest.read_text())
    md_before = digest.with_suffix(".md").read_text()
    code, _, err = cli(["run", "--config", str(cfg), "--week", "2026-W26", "--digest", "--only", "acme/beta"])
    assert code == 0, err
    assert "digest: kept acme/alpha, acme/torch from the earlier ecosystem-2026-W26.en.json" in err
    after = json.loads(digest.read_text())
    assert after["carried_over"] == ["acme/alpha", "acme/torch"]
    assert after["totals"] == before["totals"] and after["totals"]["repositories"] == 3
    # the shared sections still see every repository: the torch bump of alpha and beta, alpha's upstream
    for key in ("repositories", "themes", "shared_risks", "dependencies", "failed"):
        assert after[key] == before[key], key
    assert digest.with_suffix(".md").read_text() == md_before


def test_digest_escapes_repository_names_in_every_line(trio, tmp_path):
    """A name is untrusted text: `*` or `<` in it must not turn into emphasis or HTML,
    in the dependency line's `name#PR` references too, nor in the PR links made from it."""
    body = 'out = "out"\nformats = ["json"]\nlanguages = ["en"]\n[digest]\nlanguages = ["en"]\n'
    for name, path in (("ml*ops/alpha<x>", trio["alpha"]), ("ml*ops/beta", trio["beta"])):
        body += f'[[repositories]]\nsource = "{path}"\nname = "{name}"\n'
    cfg = write_team(tmp_path, body)
    code, _, err = cli(["run", "--config", str(cfg), "--week", "2026-W26", "--digest", "-q"])
    assert code == 0, err
    md = (tmp_path / "out" / "ecosystem-2026-W26.en.md").read_text()
    (dep,) = [line for line in md.splitlines() if line.startswith("- Dependency torch")]
    assert "(ml\\*ops/alpha\\<x\\>#11, ml\\*ops/beta#11)" in dep
    assert "<x>" not in md  # not even in a link: a URL holding `<` is dropped
    outside_links = re.sub(r"\]\(https://[^()\s]*\)", "]", md)
    assert "ml*ops" not in outside_links


@pytest.mark.parametrize("executor", ["threads", "serial"])
def test_executors_write_the_same_reports(trio, tmp_path, executor):
    cfg = trio_config(tmp_path, trio)
    assert cli(["run", "--config", str(cfg), "--week", "2026-W26", "-q", "--out", str(tmp_path / "local")])[0] == 0
    code, _, err = cli(["run", "--config", str(cfg), "--week", "2026-W26", "-q", "--executor", executor,
                        "--out", str(tmp_path / executor)])
    assert code == 0, err
    mds = sorted((tmp_path / "local").rglob("*.md"))
    assert len(mds) == 3
    for p in mds:
        assert (tmp_path / executor / p.relative_to(tmp_path / "local")).read_text() == p.read_text()


def _started(err: str) -> list[str]:
    """The repositories in the order the serial executor reported them, which is the
    order they started in."""
    return re.findall(r"^\[\d/\d\] (acme/\w+):", err, re.M)


def test_repositories_start_longest_first_by_the_time_each_took_last_run(trio, tmp_path):
    """A run ends when its last job does: the repository that took longest last time
    starts first, and one never timed before all (a first report is the slowest); files,
    digest and summary keep the config's order."""
    cfg = trio_config(tmp_path, trio, '[digest]\nlanguages = ["en"]\n')
    run = ["run", "--config", str(cfg), "--week", "2026-W26", "--executor", "serial", "--digest"]
    code, _, err = cli(run)
    assert code == 0, err
    assert _started(err) == ["acme/alpha", "acme/beta", "acme/torch"]  # nothing kept: the config's order
    kept = Path(os.environ["XDG_CACHE_HOME"]) / "repobrief" / "durations.json"
    times = json.loads(kept.read_text())["jobs"]
    assert len(times) == 3 and all(0 < seconds < 60 for seconds, _ in times.values())
    source = {name: next(k for k in times if k.endswith(f"/{name}")) for name in trio}

    # as if torch had taken longest last week and beta less, and alpha were new to the config;
    # a repository of another config, timed 100 days ago, is forgotten
    day = next(iter(times.values()))[1]
    kept.write_text(json.dumps({"version": 1, "jobs": {
        source["torch"]: [9.0, day - 7], source["beta"]: [4.0, day - 7], "/srv/gone": [1.0, day - 100],
        "/srv/other": [2.0, day - 10]}}))
    code, _, err = cli(run)
    assert code == 0, err
    assert _started(err) == ["acme/alpha", "acme/torch", "acme/beta"]
    digest = json.loads((tmp_path / "out" / "ecosystem-2026-W26.en.json").read_text())
    assert [r["repository"] for r in digest["repositories"]] == ["acme/alpha", "acme/beta", "acme/torch"]
    times = json.loads(kept.read_text())["jobs"]
    assert sorted(times) == sorted([*source.values(), "/srv/other"])
    assert times[source["torch"]][0] < 9.0 and times[source["torch"]][1] == day  # this run's time replaced it


@pytest.mark.parametrize("damage", ["not json", '{"version": 1, "jobs": {"x": ["a", 1]}}', '{"version": 99}', "folder"])
def test_a_damaged_or_unwritable_durations_file_means_the_configs_order(trio, tmp_path, damage):
    kept = Path(os.environ["XDG_CACHE_HOME"]) / "repobrief" / "durations.json"
    kept.parent.mkdir(parents=True, exist_ok=True)
    if damage == "folder":  # a folder where the file should be: nothing can be kept
        kept.mkdir()
    else:
        kept.write_text(damage)
    cfg = trio_config(tmp_path, trio)
    code, _, err = cli(["run", "--config", str(cfg), "--week", "2026-W26", "--executor", "serial"])
    assert code == 0, err
    assert _started(err) == ["acme/alpha", "acme/beta", "acme/torch"]
    assert (tmp_path / "out" / "acme__torch" / "acme__torch-2026-W26.en.md").is_file()
    if damage != "folder":
        assert len(json.loads(kept.read_text())["jobs"]) == 3  # rewritten whole


def test_a_new_executor_plugs_in_through_the_registry(trio, tmp_path):
    from repobrief.executors import SerialExecutor
    from repobrief.registry import EXECUTORS

    seen = []

    class Recording(SerialExecutor):
        name = "recording"

        def run(self, jobs, on_result=None):
            seen.extend((j.label, j.window.label, tuple(j.languages)) for j in jobs)
            return super().run(jobs, on_result)

    EXECUTORS.register("recording", Recording)
    cfg = trio_config(tmp_path, trio)
    code, _, err = cli(["run", "--config", str(cfg), "--week", "2026-W26", "--executor", "recording",
                        "--only", "acme/beta", "--only", "acme/torch"])
    assert code == 0, err
    assert seen == [("acme/beta", "2026-W26", ("en",)), ("acme/torch", "2026-W26", ("en",))]
    assert not (tmp_path / "out" / "acme__alpha").exists()
    code, _, err = cli(["run", "--config", str(cfg), "--executor", "rey"])
    assert code == 2 and "unknown executor 'rey'" in err and "local" in err


def test_publish_targets_per_repository(trio, tmp_path, server):
    good, refusing = Receiver("slack"), Receiver("wecom")
    server.expect_request("/slack/T000/B000/secret-slack-token", method="POST").respond_with_handler(good)
    server.expect_request("/cgi-bin/webhook/send", method="POST").respond_with_handler(refusing)
    base = f"http://127.0.0.1:{server.port}"
    body = 'out = "out"\nformats = ["json"]\nlanguages = ["en"]\n'
    body += f'''
[[repositories]]
source = "{trio['alpha']}"
name = "acme/alpha"
[[repositories.publish]]
target = "slack"
webhook = "{base}/slack/T000/B000/secret-slack-token"

[[repositories]]
source = "{trio['beta']}"
name = "acme/beta"
[[repositories.publish]]
target = "wecom"
webhook = "{base}/cgi-bin/webhook/send?key=secret-wecom-key-123"
'''
    refusing.script = [json_response({"errcode": 93000, "errmsg": "invalid webhook url"})]  # not retried
    cfg = write_team(tmp_path, body)
    code, _, err = cli(["run", "--config", str(cfg), "--week", "2026-W26"])
    assert code == 7, err  # every repository was reported; a card was not posted
    assert len(good.received) == 1 and good.refusals == []
    assert "acme/alpha" in json.dumps(good.received[0].body, ensure_ascii=False)
    assert "posted to slack at http://127.0.0.1" in err
    assert "error: acme/beta: card not confirmed: wecom webhook at http://127.0.0.1" in err and "93000" in err
    assert "secret-wecom-key-123" not in err and "secret-slack-token" not in err
    # the refused card does not undo the files already written
    assert (tmp_path / "out" / "acme__beta" / "acme__beta-2026-W26.en.json").is_file()
    assert (tmp_path / "out" / "acme__alpha" / "acme__alpha-2026-W26.en.json").is_file()


def test_a_refused_card_keeps_the_repository_in_the_digest(trio, tmp_path, server):
    refusing = Receiver("wecom")
    server.expect_request("/refusing/webhook/send", method="POST").respond_with_handler(refusing)
    refusing.script = [json_response({"errcode": 93000, "errmsg": "invalid webhook url"})]
    cfg = trio_config(tmp_path, {"alpha": trio["alpha"], "beta": trio["beta"]}, '[digest]\nlanguages = ["en"]\n')
    with cfg.open("a", encoding="utf-8") as fh:  # the publish target belongs to the last repository, acme/beta
        fh.write(f'[[repositories.publish]]\ntarget = "wecom"\nwebhook = "http://127.0.0.1:{server.port}/refusing/webhook/send?key=k"\n')
    code, _, err = cli(["run", "--config", str(cfg), "--week", "2026-W26", "--digest"])
    assert code == 7 and "error: acme/beta: card not confirmed: wecom webhook" in err, err
    d = json.loads((tmp_path / "out" / "ecosystem-2026-W26.en.json").read_text())
    assert [r["repository"] for r in d["repositories"]] == ["acme/alpha", "acme/beta"]
    assert d["totals"]["merged_prs"] == 4 and d["dependencies"][0]["package"] == "torch"
    assert d["failed"] == []
    assert [f["repository"] for f in d["not_published"]] == ["acme/beta"] and "93000" in d["not_published"][0]["error"]
    md = (tmp_path / "out" / "ecosystem-2026-W26.en.md").read_text()
    assert "## Repositories reported whose cards could not be posted" in md and "could not be reported" not in md


def test_a_shallow_clone_is_warned_about_once_per_repository(trio, tmp_path):
    shallow = tmp_path / "shallow"
    git(tmp_path, "clone", "-q", "--depth", "1", f"file://{trio['alpha']}", str(shallow))
    cfg = write_team(tmp_path, 'out = "out"\nformats = ["json"]\nlanguages = ["en", "zh"]\n'
                               f'[[repositories]]\nsource = "{shallow}"\nname = "acme/alpha"\n'
                               f'[[repositories]]\nsource = "{trio["beta"]}"\nname = "acme/beta"\n')
    code, _, err = cli(["run", "--config", str(cfg), "--week", "2026-W26", "-q"])
    assert code == 0, err
    assert err.count("warning: acme/alpha: this clone is shallow") == 1 and "acme/beta" not in err


# ------------------------------------------------------------------ bad input


@pytest.mark.parametrize("text,message", [
    ('[[repositories]]\nsource = "x"\nthresold = 3\n', "unknown option 'repositories[0].thresold'"),
    ('[[repositories]]\nsource = "x"\nlanguags = ["en"]\n', "did you mean 'repositories[0].languages'?"),
    ('[[repositories]]\nsource = "x"\ntimezone = "Mars/Olympus"\n', "option 'repositories[0].timezone'"),
    ('[[repositories]]\nname = "a/b"\n', "option 'repositories[0]' needs source"),
    ('[[repositories]]\nsource = "x"\nlanguages = ["fr"]\n', "option 'repositories[0].languages' has 'fr'"),
    ('formats = ["md", "pdf"]\n[[repositories]]\nsource = "x"\n', "option 'formats': unknown format 'pdf'"),
    ('out = "o"\n', "lists no repositories"),
    ('[[repositories]]\nsource = "x"\n[[repositories]]\nsource = "x"\n', "repeats repositories[0]"),
    ('wrokers = 2\n[[repositories]]\nsource = "x"\n', "unknown option 'wrokers'"),
    ('[[repositories]]\nsource = "x"\nname = "a/x"\n[[repositories]]\nsource = "./x/"\n',
     "repeats repositories[0] ('x' and './x/' are the same clone"),
    ('[digest]\nlanguages = []\n[[repositories]]\nsource = "x"\n', "option 'digest.languages' is empty"),
    ('engine = "ofline"\n[[repositories]]\nsource = "x"\n', "option 'engine' is 'ofline'; expected one of llm, offline"),
    ('executor = "thread"\n[[repositories]]\nsource = "x"\n', "option 'executor' is 'thread'"),
])
def test_config_errors_name_the_option_before_any_work(tmp_path, text, message):
    cfg = write_team(tmp_path, text)
    code, _, err = cli(["run", "--config", str(cfg), "--week", "2026-W26"])
    assert code == ConfigError.exit_code, err
    assert message in err
    assert not (tmp_path / "reports").exists() and not (tmp_path / "o").exists()


@pytest.mark.parametrize("option,message", [
    ("threshold = 42", "option 'repositories[1].threshold' is 42.0; expected a number from 0.0 to 10.0"),
    ('name = "noslash"', "option 'repositories[1].name' is 'noslash'; expected OWNER/REPO"),
    ('language = "fr"', "option 'repositories[1].language' is 'fr'"),
    ("baseline_weeks = 0", "option 'repositories[1].baseline_weeks' is 0"),
    ("diff_max_bytes = -1", "option 'repositories[1].diff_max_bytes' is -1; expected a positive number of bytes"),
    ('[repositories.llm]\nbase_url = "http://127.0.0.1:abc/v1"', "option 'repositories[1].llm.base_url' has a port that is not a number"),
    ('engine = "ofline"', "option 'repositories[1].engine' is 'ofline'"),
    ('[[repositories.publish]]\ntarget = "slak"\nwebhook = "http://127.0.0.1:9/x"',
     "option 'repositories[1].publish[0].target' is 'slak'"),
    ('[[repositories.publish]]\ntarget = "slack"', "option 'repositories[1].publish[0]' needs webhook"),
    ('[[repositories.publish]]\ntarget = "slack"\nwebhook = "https://hooks..slack.com/services/T/B/x"',
     "option 'repositories[1].publish[0].webhook' has an invalid host name"),
    ('[[repositories.publish]]\ntarget = "slack"\nwebhook = "https://hooks.slack.com/services/T/B/x"\nsecret = "s3cret"',
     "option 'repositories[1].publish[0].secret' is set, but slack messages are not signed"),
])
def test_a_bad_repository_option_stops_the_run_before_any_repository_is_read(trio, tmp_path, option, message):
    body = f'out = "out"\n[[repositories]]\nsource = "{trio["alpha"]}"\nname = "acme/alpha"\n'
    body += f'[[repositories]]\nsource = "{trio["beta"]}"\n{option}\n'
    cfg = write_team(tmp_path, body)
    code, _, err = cli(["run", "--config", str(cfg), "--week", "2026-W26"])
    assert code == ConfigError.exit_code, err
    assert message in err
    assert not (tmp_path / "out").exists()  # acme/alpha, whose options are fine, was not reported either


def test_a_repositorys_own_settings_win_over_the_teams_defaults(trio, tmp_path):
    """The team's engine once replaced a table's own `engine`; its time zone is the
    default of tables that set none."""
    from repobrief.team import load_team, plan_jobs

    cfg = write_team(tmp_path, f'engine = "llm"\ntimezone = "Asia/Shanghai"\n'
                               f'[[repositories]]\nsource = "{trio["alpha"]}"\nengine = "offline"\ntimezone = "UTC"\n'
                               f'[[repositories]]\nsource = "{trio["beta"]}"\n')
    jobs, failed = plan_jobs(load_team(cfg), "2026-W26")
    assert not failed
    assert [(j.settings.engine, j.settings.timezone) for j in jobs] == [("offline", "UTC"), ("llm", "Asia/Shanghai")]


def test_one_clone_listed_under_two_spellings_is_a_config_error(trio, tmp_path):
    """`./x/`, `x` and `/abs/x` are one clone: listed twice it would be reported twice and
    counted twice in the digest."""
    import os

    relative = os.path.relpath(trio["alpha"], tmp_path) + "/"
    cfg = write_team(tmp_path, f'out = "out"\n[[repositories]]\nsource = "{trio["alpha"]}"\n'
                               f'[[repositories]]\nsource = "{trio["beta"]}"\n[[repositories]]\nsource = "./{relative}"\n')
    code, _, err = cli(["run", "--config", str(cfg), "--week", "2026-W26", "--digest"])
    assert code == ConfigError.exit_code, err
    assert f"option 'repositories[2]' repeats repositories[0] ('{trio['alpha']}' and './{relative}' are the same clone" in err
    assert not (tmp_path / "out").exists()


@pytest.fixture(scope="module")
def namesakes(tmp_path_factory):
    """Clones whose folders share a name: two without a remote, two with different origins."""
    root = tmp_path_factory.mktemp("namesakes")
    small_repo(root / "teamA" / "service", [("feat: A only feature", {"a.py": 10})])
    small_repo(root / "teamB" / "service", [("feat: B only feature", {"b.py": 10})])
    for folder, owner in (("x", "acme"), ("y", "other")):
        small_repo(root / folder / "lib", [(f"feat: {owner} lib feature", {"lib.py": 10})])
        git(root / folder / "lib", "remote", "add", "origin", f"https://github.com/{owner}/lib.git")
    return root


def test_clones_with_one_folder_name_are_reported_under_their_remotes_names_or_refused(namesakes, tmp_path):
    body = 'out = "out"\nformats = ["md"]\nlanguages = ["en"]\n'
    body += "".join(f'[[repositories]]\nsource = "{namesakes / f}"\n' for f in ("x/lib", "y/lib"))
    cfg = write_team(tmp_path / "remotes", body)
    code, _, err = cli(["run", "--config", str(cfg), "--week", "2026-W26", "-q"])
    assert code == 0, err
    out = tmp_path / "remotes" / "out"
    assert sorted(str(p.relative_to(out)) for p in out.rglob("*.md")) == [
        "acme__lib/acme__lib-2026-W26.en.md", "other__lib/other__lib-2026-W26.en.md"]
    assert "acme lib feature" in (out / "acme__lib" / "acme__lib-2026-W26.en.md").read_text().lower()

    # No remote: both would be 'service', written to one folder, one report replacing the other.
    body = 'out = "out"\n' + "".join(f'[[repositories]]\nsource = "{namesakes / f}"\n' for f in ("teamA/service", "teamB/service"))
    cfg = write_team(tmp_path / "plain", body)
    code, _, err = cli(["run", "--config", str(cfg), "--week", "2026-W26"])
    assert code == ConfigError.exit_code, err
    assert (f"repositories[0] (source '{namesakes / 'teamA/service'}') and repositories[1] "
            f"(source '{namesakes / 'teamB/service'}') are both reported as 'service'") in err
    assert 'set `name = "OWNER/REPO"` in their [[repositories]] tables' in err
    assert not (tmp_path / "plain" / "out").exists()


def test_only_accepts_the_name_progress_and_errors_show(namesakes, tmp_path):
    """An unnamed clone is shown as its origin remote's OWNER/REPO; `--only` takes that name."""
    body = 'out = "out"\nformats = ["md"]\nlanguages = ["en"]\n'
    body += "".join(f'[[repositories]]\nsource = "{namesakes / f}"\n' for f in ("x/lib", "teamA/service"))
    cfg = write_team(tmp_path, body)
    code, _, err = cli(["run", "--config", str(cfg), "--week", "2026-W26", "--only", "acme/lib"])
    assert code == 0, err
    assert "acme/lib: 1 PR, 1 file in" in err and "1 of 1 repository reported" in err
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["acme__lib"]
    code, _, err = cli(["run", "--config", str(cfg), "--week", "2026-W26", "--only", "acme/nope"])
    assert code == 2 and "--only 'acme/nope' is not in" in err and "valid: acme/lib, service" in err


def test_bad_week_and_missing_config(tmp_path, trio):
    cfg = trio_config(tmp_path, trio)
    code, _, err = cli(["run", "--config", str(cfg), "--week", "2026-W99"])
    assert code == 2 and "week" in err and not (tmp_path / "out").exists()
    code, _, err = cli(["run", "--config", str(tmp_path / "nope.toml")])
    assert code == ConfigError.exit_code and "does not exist" in err


def test_all_failing_repositories_fail_the_run(tmp_path):
    cfg = write_team(tmp_path, '[[repositories]]\nsource = "gone"\nname = "a/gone"\n')
    code, _, err = cli(["run", "--config", str(cfg), "--week", "2026-W26", "--digest"])
    assert code == 8 and "error: 0 of 1 repository reported, 1 failed" in err and "no digest" in err
    assert f"{SourceError.__name__}" not in err  # a message, not a traceback


def test_a_dying_worker_takes_only_its_own_job_with_it(trio, tmp_path):
    """A source that takes its worker process down (as an out-of-memory kill would): the
    job running beside it in the other worker finishes there, started once; a new
    worker takes the job left; the dead worker's job runs once more alone, dies again
    and fails with a message; the others are reported."""
    import os
    import time

    from repobrief.registry import SOURCES
    from repobrief.sources.git import GitSource

    log = tmp_path / "started.log"

    def started(name: str) -> None:
        with log.open("a") as fh:
            fh.write(name + "\n")

    def wait_for(name: str) -> None:
        deadline = time.monotonic() + 60
        while name not in log.read_text().split() and time.monotonic() < deadline:
            time.sleep(0.02)

    class Beside(GitSource):
        """Still reading when its neighbour's worker dies, and for a while after."""

        def __init__(self, location, settings=None, *, store=None, offline=False):
            started("beside")
            wait_for("doomed")
            time.sleep(0.5)
            super().__init__(location, settings, store=store, offline=offline)

    class Counted(GitSource):
        def __init__(self, location, settings=None, *, store=None, offline=False):
            started("after")
            super().__init__(location, settings, store=store, offline=offline)

    class Doomed:
        needs_store = False

        def __init__(self, location, settings, store=None, offline=False):
            wait_for("beside")
            started("doomed")
            os._exit(9)

    for scheme, cls in (("beside", Beside), ("counted", Counted), ("doomed", Doomed)):
        SOURCES.register(scheme, cls)  # inherited by the forked workers
    log.write_text("")
    body = 'out = "out"\nformats = ["md"]\nlanguages = ["en"]\nworkers = 2\n'
    body += f'[[repositories]]\nsource = "beside:{trio["alpha"]}"\nname = "acme/alpha"\n'
    body += '[[repositories]]\nsource = "doomed:acme/doomed"\nname = "acme/doomed"\n'
    body += f'[[repositories]]\nsource = "counted:{trio["beta"]}"\nname = "acme/beta"\n'
    cfg = write_team(tmp_path, body)
    code, _, err = cli(["run", "--config", str(cfg), "--week", "2026-W26"])
    assert code == 8, err
    assert "error: acme/doomed: the worker process died" in err
    assert "2 of 3 repositories reported, 1 failed" in err
    assert sorted(log.read_text().split()) == ["after", "beside", "doomed", "doomed"]
    for name in ("alpha", "beta"):
        assert (tmp_path / "out" / f"acme__{name}" / f"acme__{name}-2026-W26.en.md").is_file()


def test_without_fork_the_local_executor_spawns_its_workers(trio, tmp_path, monkeypatch):
    """Where the platform cannot fork, the workers are fresh interpreters: same reports."""
    import os

    cfg = trio_config(tmp_path, trio)
    code, _, err = cli(["run", "--config", str(cfg), "--week", "2026-W26", "-q", "--out", str(tmp_path / "forked")])
    assert code == 0, err
    monkeypatch.delattr(os, "fork")
    code, _, err = cli(["run", "--config", str(cfg), "--week", "2026-W26", "-q", "--out", str(tmp_path / "spawned")])
    assert code == 0, err
    forked = sorted(p.relative_to(tmp_path / "forked") for p in (tmp_path / "forked").rglob("*.md"))
    assert len(forked) == 3
    for rel in forked:
        assert (tmp_path / "spawned" / rel).read_text() == (tmp_path / "forked" / rel).read_text()


def test_reports_and_prs_go_to_a_shared_sqlite_store(trio, tmp_path):
    """Worker processes writing one SQLite file at once (WAL, busy timeout)."""
    from repobrief.store import open_store

    cfg = trio_config(tmp_path, trio)
    db = tmp_path / "team.db"
    code, _, err = cli(["run", "--config", str(cfg), "--week", "2026-W26", "--db", str(db), "-q"])
    assert code == 0, err
    with open_store(db) as store:
        assert store.repositories() == ["acme/alpha", "acme/beta", "acme/torch"]
        for name, prs in (("acme/alpha", [10, 11]), ("acme/beta", [10, 11]), ("acme/torch", [10])):
            assert [p.number for p in store.load_pull_requests(name)] == prs
            written = (tmp_path / "out" / name.replace("/", "__") / f"{name.replace('/', '__')}-2026-W26.en.md").read_text()
            assert store.load_report(name, "2026-W26", "en", "md") == written


def test_a_relative_db_in_team_toml_starts_at_its_folder_whatever_the_current_directory(trio, tmp_path, monkeypatch):
    """Run from cron or another folder, `db = "team.db"` is still the store next to team.toml."""
    from repobrief.store import open_store

    cfg = write_team(tmp_path / "cfg", f'db = "team.db"\nformats = ["md"]\nlanguages = ["en"]\n'
                                       f'[[repositories]]\nsource = "{trio["torch"]}"\nname = "acme/torch"\n')
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")
    code, _, err = cli(["run", "--config", str(cfg), "--week", "2026-W26", "-q"])
    assert code == 0, err
    assert not (tmp_path / "elsewhere" / "team.db").exists()
    with open_store(tmp_path / "cfg" / "team.db") as store:
        assert store.load_report("acme/torch", "2026-W26", "en", "md") == (
            tmp_path / "cfg" / "reports" / "acme__torch" / "acme__torch-2026-W26.en.md").read_text()


def test_a_github_source_with_nothing_synced_fails_alone_offline(trio, tmp_path):
    body = 'out = "out"\nformats = ["md"]\nlanguages = ["en"]\n[[repositories]]\nsource = "github:acme/never-synced"\n'
    body += f'[[repositories]]\nsource = "{trio["alpha"]}"\nname = "acme/alpha"\n'
    cfg = write_team(tmp_path, body)
    code, _, err = cli(["run", "--config", str(cfg), "--week", "2026-W26", "--offline", "--db", str(tmp_path / "rb.db")])
    assert code == 8, err
    assert "error: github:acme/never-synced:" in err and "not in the store" in err
    assert "repobrief sync github:acme/never-synced" in err  # the hint says what to do
    assert (tmp_path / "out" / "acme__alpha" / "acme__alpha-2026-W26.en.md").is_file()


def test_an_unknown_source_scheme_fails_that_repository_with_the_valid_ones(trio, tmp_path):
    body = 'out = "out"\nformats = ["md"]\nlanguages = ["en"]\n[[repositories]]\nsource = "githbu:acme/typo"\n'
    body += f'[[repositories]]\nsource = "{trio["alpha"]}"\nname = "acme/alpha"\n'
    cfg = write_team(tmp_path, body)
    code, _, err = cli(["run", "--config", str(cfg), "--week", "2026-W26"])
    assert code == 8, err
    assert "error: githbu:acme/typo: unknown source 'githbu' in repositories[0].source" in err
    assert "did you mean github:" in err
    assert (tmp_path / "out" / "acme__alpha" / "acme__alpha-2026-W26.en.md").is_file()


@pytest.mark.parametrize("title,names", [
    ("Bump torch from 2.5 to 2.6 (#3)", ["torch"]),
    ("[ci] fix: pin transformers==4.52.0 (#12)", ["transformers"]),
    ("chore(deps): update vllm to 0.9.1", ["vllm"]),
    ("[ci] fix: fix Megatron-Bridge version in e2e_ppo (#6816)", ["megatron-bridge"]),
    ("upgrade sglang to v0.4.6.post1 and flashinfer>=0.2.5", ["sglang", "flashinfer"]),
    ("bump version to 0.8.0", []),
    ("build(deps): bump the pip group across 1 directory with 2 updates", []),
    ("Update README", []),
    # a local clone's commit subject has no length limit: one long word is read in one pass
    # (searched from each of its letters, it took minutes at this length)
    ("pin ==" + "a" * 65_536 + "x", []), ("update " + "a-" * 32_768, []),
])
def test_dependency_names_from_titles(title, names):
    from repobrief.digest import dependency_names

    assert dependency_names(title) == names


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL])
def test_a_run_stopped_or_killed_takes_its_workers_with_it(verl_repo, flask_repo, tmp_path, sig):
    """SIGTERM, sent to the parent alone (timeout, CI), stops the run as Ctrl-C does, its
    worker processes at once; a parent killed outright takes them with it too. None
    writes on as an orphan, nor hangs writing its result to a parent that is gone.
    The workers are held in their publish step by a webhook that never answers, so the
    signal always finds them at work, however fast or slow the machine."""
    import contextlib
    import socket
    import threading

    from clirun import live_processes, start_cli, wait_until

    silent = socket.create_server(("127.0.0.1", 0))
    held: list[socket.socket] = []

    def hold() -> None:
        with contextlib.suppress(OSError):  # the server closed at the test's end
            for _ in range(8):
                held.append(silent.accept()[0])

    threading.Thread(target=hold, daemon=True).start()
    hook = f"http://127.0.0.1:{silent.getsockname()[1]}/services/T/B/silent-token"
    body = 'out = "out"\nformats = ["md", "json"]\nlanguages = ["zh", "en"]\nworkers = 2\n'
    for name, repo in (("verl-project/verl", verl_repo), ("pallets/flask", flask_repo)):
        body += f'[[repositories]]\nsource = "{repo}"\nname = "{name}"\n'
        body += f'[[repositories.publish]]\ntarget = "slack"\nwebhook = "{hook}"\n'
    cfg = write_team(tmp_path, body)
    proc = start_cli("run", "--config", str(cfg), "--week", WEEK, cwd=tmp_path)
    try:
        assert wait_until(lambda: len(held) >= 2 or proc.poll() is not None, timeout=120), "no worker reached its publish step"
        assert proc.poll() is None, proc.communicate()
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=60)
        assert wait_until(lambda: not live_processes(proc.pid)), "worker processes outlived the run"
    finally:
        for pid in live_processes(proc.pid):
            os.kill(pid, signal.SIGKILL)
        silent.close()
        for conn in held:
            conn.close()
    assert proc.returncode == (130 if sig == signal.SIGTERM else -sig)
    if sig == signal.SIGTERM:  # said, not a silent exit
        assert "interrupted; 0 of 2 repositories finished, the others were stopped" in err
    assert [p.name for p in tmp_path.rglob(".*") if p.is_file()] == []  # nothing half-written


# ------------------------------------------------------------------ what a run says and how it ends


def test_a_card_refused_with_http_404_leaves_its_repository_reported(trio, tmp_path, server):
    """A webhook that answers 404 refuses the card, not the report: the repository's line
    says it was reported and why its card was not posted (no FAILED), its other target
    still gets the card, the summary is printed once, and the run exits 7 (a publish
    target), not 8 (repositories not reported)."""
    good = Receiver("slack")
    server.expect_request("/gone/T404/B404/gone-token", method="POST").respond_with_data("no_service", status=404)
    server.expect_request("/after/T404/B404/after-token", method="POST").respond_with_handler(good)
    base = f"http://127.0.0.1:{server.port}"
    cfg = trio_config(tmp_path, {"alpha": trio["alpha"], "beta": trio["beta"]}, '[digest]\nlanguages = ["en"]\n')
    with cfg.open("a", encoding="utf-8") as fh:  # both targets belong to the last repository, acme/beta
        for path in ("gone/T404/B404/gone-token", "after/T404/B404/after-token"):
            fh.write(f'[[repositories.publish]]\ntarget = "slack"\nwebhook = "{base}/{path}"\n')
    code, _, err = cli(["run", "--config", str(cfg), "--week", "2026-W26", "--digest"])
    assert code == 7, err
    assert "FAILED" not in err and "failed" not in err
    line = next(x for x in err.splitlines() if x.startswith("[") and "acme/beta" in x)
    assert re.fullmatch(r"\[\d/2\] acme/beta: 2 PRs, 2 files in [\d.]+ s, posted to slack at http://127\.0\.0\.1:\d+/…; "
                        r"card not confirmed: slack webhook at http://127\.0\.0\.1:\d+/… refused the message: HTTP 404 no_service",
                        line), line
    assert len(good.received) == 1  # the refused target did not keep the card from the next one
    assert "error: acme/beta: card not confirmed: slack webhook at http://127.0.0.1" in err
    assert err.count("repositories reported") == 1
    assert "error: 2 of 2 repositories reported; 1 card not confirmed" in err
    assert "gone-token" not in err and "after-token" not in err
    for name in ("alpha", "beta"):
        assert (tmp_path / "out" / f"acme__{name}" / f"acme__{name}-2026-W26.en.md").is_file()
    d = json.loads((tmp_path / "out" / "ecosystem-2026-W26.en.json").read_text())
    assert d["failed"] == [] and [r["repository"] for r in d["repositories"]] == ["acme/alpha", "acme/beta"]
    assert [f["repository"] for f in d["not_published"]] == ["acme/beta"] and "HTTP 404" in d["not_published"][0]["error"]

    # -q prints only errors: the card not posted and the summary, still once
    code, _, err = cli(["run", "--config", str(cfg), "--week", "2026-W26", "-q"])
    assert code == 7 and "[" not in err
    assert err.count("repositories reported") == 1 and "error: acme/beta: card not confirmed:" in err


@pytest.mark.parametrize("config,args,code,message", [
    ("", ["--out", "afile"], 2, "error: --out 'afile' is a file; give a folder"),
    ('out = "afile"\n', [], ConfigError.exit_code, "error: option 'out' is 'afile', a file ("),
    ('[digest]\nout = "afile"\n', ["--digest"], ConfigError.exit_code, "error: option 'digest.out' is 'afile', a file ("),
    ("", ["--only", "acme/beta"], ConfigError.exit_code, "error: option 'repositories[1].out' is 'afile', a file ("),
])
def test_an_output_folder_that_is_a_file_is_refused_before_any_work(trio, tmp_path, monkeypatch, config, args, code, message):
    """As `report`, `backfill` and `site` refuse it: said up front, naming the flag or the
    option, nothing written, no repository run (not every repository failing to write)."""
    body = 'formats = ["md"]\nlanguages = ["en"]\n' + config
    body += f'[[repositories]]\nsource = "{trio["alpha"]}"\nname = "acme/alpha"\n'
    body += f'[[repositories]]\nsource = "{trio["beta"]}"\nname = "acme/beta"\n'
    if "repositories[1]" in message:
        body += 'out = "afile"\n'
    cfg = write_team(tmp_path, body)
    (tmp_path / "afile").write_text("keep me\n")
    monkeypatch.chdir(tmp_path)
    code_, _, err = cli(["run", "--config", str(cfg), "--week", "2026-W26", *args])
    assert code_ == code, err
    assert message in err
    assert "[1/" not in err and "reported" not in err  # no repository was run
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["afile", "team.toml"]
    assert (tmp_path / "afile").read_text() == "keep me\n"


def test_workers_0_is_one_per_cpu_on_the_command_line_as_in_the_config(trio, tmp_path, monkeypatch):
    from repobrief.executors import SerialExecutor
    from repobrief.registry import EXECUTORS

    counts: list[int] = []

    class Counting(SerialExecutor):
        name = "counting"

        def run(self, jobs, on_result=None):
            counts.append(self.worker_count(len(jobs)))
            return super().run(jobs, on_result)

    EXECUTORS.register("counting", Counting)
    monkeypatch.setattr(os, "cpu_count", lambda: 8)
    cfg = trio_config(tmp_path, trio, 'workers = 1\nexecutor = "counting"\n')
    for args in ([], ["--workers", "0"], ["-j", "2"]):
        code, _, err = cli(["run", "--config", str(cfg), "--week", "2026-W26", "-q", *args])
        assert code == 0, err
    assert counts == [1, 3, 2]  # the config's 1; 0: one per CPU, at most one per repository; the flag's 2
    code, _, err = cli(["run", "--config", str(cfg), "--workers", "-1"])
    assert code == 2 and "-1" in err
    code, out, _ = cli(["run", "--help"])
    assert code == 0 and "0: one per CPU" in " ".join(re.sub(r"[│╭╮╰╯─]", " ", out).split())


def test_where_the_files_went_with_a_relative_out_and_a_repositorys_own(trio, tmp_path, monkeypatch):
    """A relative --out beside a repository's absolute `out` ended the run in a traceback
    after all its work (os.path.commonpath mixes them), or would have said "into /"."""
    own = tmp_path / "own"
    cfg = write_team(tmp_path, 'out = "out"\nformats = ["md"]\nlanguages = ["en"]\n'
                               f'[[repositories]]\nsource = "{trio["alpha"]}"\nname = "acme/alpha"\n'
                               f'[[repositories]]\nsource = "{trio["beta"]}"\nname = "acme/beta"\nout = "{own}"\n')
    monkeypatch.chdir(tmp_path)
    code, _, err = cli(["run", "--config", str(cfg), "--week", "2026-W26", "--out", "rel"])
    assert code == 0 and "Traceback" not in err, err
    assert f"2 of 2 repositories reported into {own}, {tmp_path / 'rel' / 'acme__alpha'}\n" in err, err


def test_one_repository_and_one_pr_are_said_in_the_singular(trio, tmp_path):
    """English counts agree with their numbers ("1 repository", "1 PR", "1 file") in the
    progress, the summary and the digest; the Chinese digest keeps its wording."""
    cfg = write_team(tmp_path, 'out = "out"\nformats = ["md"]\nlanguages = ["en"]\n[digest]\nlanguages = ["en", "zh"]\n'
                               f'[[repositories]]\nsource = "{trio["torch"]}"\nname = "acme/torch"\n')
    code, _, err = cli(["run", "--config", str(cfg), "--week", "2026-W26", "--digest"])
    assert code == 0, err
    assert re.search(r"^\[1/1\] acme/torch: 1 PR, 1 file in [\d.]+ s$", err, re.M), err
    out = tmp_path / "out"
    assert f"\n1 of 1 repository reported into {out / 'acme__torch'}\n" in err  # where the files went
    en = (out / "ecosystem-2026-W26.en.md").read_text()
    assert en.startswith("# Ecosystem digest, 2026-W26 (1 repository)\n")
    assert "This week 1 repository merged 1 PR, adding " in en and "breaking changes: 0." in en
    assert json.loads((out / "ecosystem-2026-W26.en.json").read_text())["title"] == "Ecosystem digest, 2026-W26 (1 repository)"
    for text in (err, en):
        assert not re.search(r"\b1 (repositories|PRs|files)\b", text), text
    zh = (out / "ecosystem-2026-W26.zh.md").read_text()
    assert zh.startswith("# 生态周报：2026-W26（1 个仓库）\n") and "本周 1 个仓库共合并 1 个PR" in zh

    cfg = write_team(tmp_path / "gone", '[[repositories]]\nsource = "gone"\nname = "a/gone"\n')
    code, _, err = cli(["run", "--config", str(cfg), "--week", "2026-W26"])
    assert code == 8 and "error: 0 of 1 repository reported, 1 failed\n" in err
    assert "1 repositories" not in err


def test_a_team_config_typo_gets_a_did_you_mean_and_every_error_names_the_file(tmp_path):
    """`[[repository]]` was answered "looks like a repository's config", and errors found
    after the file was read ("option 'workers' is -2") did not name it."""
    cfg = write_team(tmp_path, '[[repository]]\nsource = "x"\n')
    code, _, err = cli(["run", "--config", str(cfg), "--week", "2026-W26"])
    assert code == ConfigError.exit_code and f"error: unknown option 'repository' (in {cfg})" in err
    assert "hint: did you mean 'repositories'?" in err and "looks like" not in err
    cfg = write_team(tmp_path, '[[repositories]]\nsource = "github:a"\n')  # its form, before any work (was exit 8)
    code, _, err = cli(["run", "--config", str(cfg), "--week", "2026-W26"])
    assert code == ConfigError.exit_code and "option 'repositories[0].source': invalid GitHub repository" in err
    cfg = write_team(tmp_path, 'workers = -2\n[[repositories]]\nsource = "x"\n')
    code, _, err = cli(["run", "--config", str(cfg), "--week", "2026-W26"])
    assert code == ConfigError.exit_code and f"option 'workers' is -2; expected 0 (one per CPU) or a positive whole number (in {cfg})" in err


def test_a_repository_config_given_to_run_says_so(tmp_path):
    cfg = write_team(tmp_path, 'language = "en"\n[[modules]]\nname = "npu"\npaths = ["npu/**"]\n')
    code, _, err = cli(["run", "--config", str(cfg), "--week", "2026-W26"])
    assert code == ConfigError.exit_code
    assert f"error: unknown option 'language' (in {cfg})" in err
    assert f"hint: {cfg} looks like a repository's config, not a team config: give it to `repobrief report --config`" in err


def test_last_week_is_one_week_for_every_time_zone_of_a_run(trio, tmp_path, monkeypatch):
    """At Monday 01:00 UTC (the docs' schedule), `--week last` is 2026-W26 in Shanghai and
    still 2026-W25 in Los Angeles: each repository took its own, and the digest added the
    two weeks together as "this week". The run reports the last week complete in every zone."""
    import repobrief.window as window
    from repobrief.team import load_team, plan_jobs

    class Frozen(datetime):
        @classmethod
        def now(cls, tz=None):
            return datetime(2026, 6, 29, 1, 0, tzinfo=UTC).astimezone(tz)

    monkeypatch.setattr(window, "datetime", Frozen)
    cfg = write_team(tmp_path, f'[[repositories]]\nsource = "{trio["alpha"]}"\nname = "acme/alpha"\ntimezone = "Asia/Shanghai"\n'
                               f'[[repositories]]\nsource = "{trio["beta"]}"\nname = "acme/beta"\ntimezone = "America/Los_Angeles"\n')
    jobs, failed = plan_jobs(load_team(cfg), "last")
    assert failed == []
    assert [(j.window.label, str(j.window.start)) for j in jobs] == [
        ("2026-W25", "2026-06-15 00:00:00+08:00"), ("2026-W25", "2026-06-15 00:00:00-07:00")]


def test_a_digest_that_cannot_be_written_hides_no_repositorys_error_nor_the_exit_code(trio, tmp_path):
    """The digest was written before the repositories' errors were said: one it could not
    write ended the run with its own error (exit 1), and the failing repository's error,
    the summary and its exit code 8 were never shown. A digest folder under a file is
    refused up front, as a repository's folder is."""
    (tmp_path / "afile").write_text("x")
    body = (f'out = "out"\nformats = ["md"]\nlanguages = ["en"]\n[digest]\nout = "afile/digest"\n'
            f'[[repositories]]\nsource = "{trio["alpha"]}"\nname = "acme/alpha"\n'
            f'[[repositories]]\nsource = "{tmp_path / "missing"}"\nname = "acme/missing"\n')
    cfg = write_team(tmp_path, body)
    code, _, err = cli(["run", "--config", str(cfg), "--week", "2026-W26", "--digest"])
    assert code == ConfigError.exit_code and "option 'digest.out' is 'afile/digest', under a file" in err, err
    assert not (tmp_path / "out").exists()
    write_team(tmp_path, body.replace('out = "afile/digest"', 'out = "dg"'))
    (tmp_path / "dg" / "ecosystem-2026-W26.en.md").mkdir(parents=True)  # the digest's file cannot be replaced
    code, _, err = cli(["run", "--config", str(cfg), "--week", "2026-W26", "--digest"])
    assert code == 8, err
    assert "error: acme/missing: path" in err and "error: digest: cannot write" in err
    assert "1 of 2 repositories reported, 1 failed; the digest was not written" in err
    assert (tmp_path / "out" / "acme__alpha" / "acme__alpha-2026-W26.en.md").is_file()
