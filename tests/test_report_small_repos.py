"""Reports of small repositories made commit by commit: a repository younger than the
baseline is compared with the weeks it has existed, never with weeks before its first
commit (they would read as quiet weeks); the migration note asks for what the week's
changes call for."""

from __future__ import annotations

import json
import subprocess
from datetime import date, timedelta
from pathlib import Path

import pytest
from clirun import run_cli
from gitrepo import GitRepoBuilder

# PRs merged in each week from 2026-W02 on; the first commit is on Monday 2026-01-05 (W02).
WEEKS = [1, 2, 1, 2, 1, 6]


@pytest.fixture(scope="module")
def young(tmp_path_factory) -> Path:
    b = GitRepoBuilder(tmp_path_factory.mktemp("young") / "repo")
    b.commit("initial", "2026-01-05T10:00:00+00:00", {"src/app.py": b.lines(30)})
    n = 10
    for week, count in enumerate(WEEKS):
        for i in range(count):
            day = date(2026, 1, 6) + timedelta(days=7 * week + i)
            b.commit(f"[trainer] feat: step {n} (#{n})", f"{day}T09:00:00+00:00", {f"trainer/t{n}.py": b.lines(20)},
                     author=f"dev{n % 3}")
            n += 1
    return b.path


def _report(repo: Path, week: str, lang: str = "en") -> dict:
    code, out, err = run_cli("report", str(repo), "--name", "acme/young", "--week", week, "--lang", lang,
                             "--format", "json", "-q")
    assert code == 0, err
    return json.loads(out)


def _one_file_prs(b: GitRepoBuilder, prs: list[tuple[str, str]], first_day: int = 13) -> None:
    """One PR per (title, path), numbered from #10, a day apart in 2026-W03, each adding 30 lines to its file."""
    for i, (title, path) in enumerate(prs):
        b.commit(f"{title} (#{10 + i})", f"2026-01-{first_day + i % 5}T09:00:00+00:00", {path: b.lines(30)})


def test_a_young_repository_is_compared_with_the_weeks_it_has_existed(young):
    d = _report(young, "2026-W07")
    s = d["stats"]
    assert s["baseline"]["weeks"] == 5 and s["baseline"]["mean_merged_prs"] == 1.4
    assert s["trend"]["weeks"] == ["2026-W02", "2026-W03", "2026-W04", "2026-W05", "2026-W06", "2026-W07"]
    assert s["trend"]["merged_prs"] == WEEKS
    summary = d["sections"]["summary"]["text"]
    assert "(the most of any week in the last 6)" in summary and "last 13" not in summary
    trend = next(i["text"] for i in d["sections"]["trends"]["items"] if i["name"] == "trainer")
    assert "the most of any week in the last 6" in trend


def test_its_trends_say_how_few_weeks_there_were(young):
    d = _report(young, "2026-W04")
    assert d["stats"]["baseline"]["weeks"] == 2
    trend = next(i["text"] for i in d["sections"]["trends"]["items"] if i["name"] == "trainer")
    assert "2 the week before, 1.5 per week on average over the previous 2 weeks" in trend
    zh = _report(young, "2026-W04", "zh")
    assert "前2周平均每周1.5个" in next(i["text"] for i in zh["sections"]["trends"]["items"] if i["name"] == "trainer")


def test_its_first_week_has_no_earlier_week(young):
    d = _report(young, "2026-W02")
    assert d["stats"]["baseline"] == {"weeks": 0, "mean_merged_prs": None, "max_merged_prs": None,
                                      "rank_merged_prs": None}
    assert d["stats"]["week_over_week"]["merged_prs"]["previous"] is None
    assert "no earlier week to compare with" in d["sections"]["summary"]["text"]
    assert d["stats"]["trend"]["weeks"] == ["2026-W02"]


def test_an_older_repository_keeps_the_whole_baseline(young):
    """Thirteen weeks after the first commit the baseline is whole again."""
    assert _report(young, "2026-W15")["stats"]["baseline"]["weeks"] == 12
    assert _report(young, "2026-W14")["stats"]["baseline"]["weeks"] == 12


def test_a_shallow_clones_cut_off_is_not_its_first_commit(young, tmp_path):
    """A shallow clone's oldest commit has no parents either; the repository began
    before it, so the baseline stays whole (and the report says the clone is shallow)."""
    clone = tmp_path / "shallow"
    subprocess.run(["git", "clone", "-q", "--shallow-since=2026-01-19", f"file://{young}", str(clone)], check=True)
    d = _report(clone, "2026-W07")
    assert d["stats"]["baseline"]["weeks"] == 12
    assert any("shallow" in w for w in d["warnings"])


@pytest.mark.parametrize("change, says", [
    ({"conf/train.yaml": "learning_rate: 0.1\nepochs: 3\n"}, "with the old and new names side by side"),
    ({"conf/train.yaml": "lr: 0.1\nepochs: 3\nwarmup: 1\n"}, "how to keep the old behaviour where that is possible"),
])
def test_the_migration_note_asks_for_old_and_new_names_only_when_a_key_was_renamed(tmp_path, change, says):
    b = GitRepoBuilder(tmp_path / "repo")
    b.commit("initial", "2026-01-05T10:00:00+00:00", {"conf/train.yaml": "lr: 0.1\nepochs: 3\n", "src/app.py": b.lines(5)})
    b.commit("feat!: new training defaults (#10)", "2026-01-13T09:00:00+00:00", change)
    d = _report(b.path, "2026-W03")
    note = next(i["text"] for i in d["sections"]["recommendations"]["items"] if i["name"] == "Publish a migration note")
    assert says in note and "#10" in note


def test_a_first_pr_after_quiet_weeks_is_no_record(tmp_path):
    """Two PRs after eight weeks without one are "none in the previous 8 weeks", not
    "the most of any week in the last 9": true, but it reads as a trend."""
    b = GitRepoBuilder(tmp_path / "repo")
    b.commit("initial", "2026-01-05T10:00:00+00:00", {"src/app.py": b.lines(5)})
    for week in range(8):  # direct commits only: no PR
        b.commit(f"tweak {week}", f"{date(2026, 1, 6) + timedelta(days=7 * week)}T09:00:00+00:00", {"src/app.py": b.lines(5)})
    for i in (10, 11):
        b.commit(f"[docs] Add guide {i} (#{i})", f"2026-03-0{i - 7}T09:00:00+00:00", {f"docs/g{i}.md": b.lines(30)})
    en, zh = _report(b.path, "2026-W10"), _report(b.path, "2026-W10", "zh")
    assert en["stats"]["baseline"]["weeks"] == 8 and en["stats"]["baseline"]["max_merged_prs"] == 0
    assert "merged 2 PRs (none in the previous 8 weeks)" in en["sections"]["summary"]["text"]
    assert "共合并2个PR（此前8周没有）" in zh["sections"]["summary"]["text"]
    (docs,) = [i["text"] for i in en["sections"]["trends"]["items"] if i["name"] == "Documentation"]
    assert docs.startswith("2 PRs this week (none in the previous 8 weeks)")
    assert "the most of any week" not in json.dumps(en["sections"])


def test_a_week_after_an_empty_one_is_not_compared_with_zero(tmp_path):
    """verl 2024-W47 read "merged 2 PRs (1 more than the previous week's 0)"."""
    b = GitRepoBuilder(tmp_path / "repo")
    b.commit("initial", "2026-01-05T10:00:00+00:00", {"src/app.py": b.lines(5)})
    b.commit("feat: first (#1)", "2026-01-07T09:00:00+00:00", {"src/a.py": b.lines(5)})  # 2026-W02
    b.commit("feat: second (#2)", "2026-01-21T09:00:00+00:00", {"src/b.py": b.lines(5)})  # 2026-W04; W03 had none
    en, zh = _report(b.path, "2026-W04"), _report(b.path, "2026-W04", "zh")
    assert "merged 1 PR (none the week before)" in en["sections"]["summary"]["text"], en["sections"]["summary"]["text"]
    assert "（上周没有）" in zh["sections"]["summary"]["text"], zh["sections"]["summary"]["text"]
    assert en["stats"]["week_over_week"]["merged_prs"]["previous"] == 0


def test_a_file_moved_unchanged_is_a_move_not_every_line_deleted_and_added(tmp_path):
    """A pure move (same content, new path) counts no lines, as GitHub counts a rename:
    it makes no PR large and puts no core path at risk. A moved module is a risk to its
    importers (see the test below), and a moved config file to the scripts that name it:
    moved, not removed. A file replaced by other content elsewhere is still a deletion
    and an addition."""
    b = GitRepoBuilder(tmp_path / "repo")
    big = b.lines(400)
    b.commit("initial", "2026-01-05T10:00:00+00:00",
             {"pkg/core/engine.py": big, "conf/train.yaml": "lr: 0.1\n", "pkg/util.py": b.lines(50)})
    b.commit("refactor: move the engine (#10)", "2026-01-13T09:00:00+00:00",
             {"pkg/core/engine.py": None, "pkg/core/runtime/engine.py": big,
              "conf/train.yaml": None, "configs/train.yaml": "lr: 0.1\n"})
    b.commit("refactor: move and edit util (#11)", "2026-01-14T09:00:00+00:00",
             {"pkg/util.py": None, "pkg/tools/util.py": b.lines(50)})
    d = _report(b.path, "2026-W03")
    prs = {p["number"]: p for p in d["pull_requests"]}
    moved = {f["path"]: (f["status"], f["added"], f["deleted"]) for f in prs[10]["files"]}
    assert moved == {"pkg/core/runtime/engine.py": ("R", 0, 0), "configs/train.yaml": ("R", 0, 0)}
    # The risks left are to code that imports the module, and scripts that name the config, by the old path.
    assert {r["kind"]: r["evidence"] for r in prs[10]["risks"]} == {
        "config_change": ["config file renamed conf/train.yaml -> configs/train.yaml"],
        "module_removed": ["module moved: pkg.core.engine -> pkg.core.runtime.engine"]}
    assert d["stats"]["lines_added"] == 50 and d["stats"]["lines_deleted"] == 50
    assert {f["status"] for f in prs[11]["files"]} == {"A", "D"}


def test_routine_bumps_of_ci_actions_are_no_dependency_risk_and_no_ci_churn(tmp_path):
    """Dependabot bumping four GitHub Actions changes no user's environment and fixes no
    flaky pipeline; a real CI fix wave still reads as churn."""
    b = GitRepoBuilder(tmp_path / "repo")
    b.commit("initial", "2026-01-05T10:00:00+00:00", {"src/app.py": b.lines(5), ".github/workflows/tests.yaml": "on: push\n"})
    for i, action in enumerate(["actions/checkout", "actions/setup-python", "actions/cache",
                                "slsa-framework/slsa-github-generator"]):
        b.commit(f"Bump {action} from 1.{i}.0 to 1.{i + 1}.0 (#{10 + i})", f"2026-01-1{3 + i}T09:00:00+00:00",
                 {".github/workflows/tests.yaml": f"on: push\n# {action}@1.{i + 1}.0\n"}, author="dependabot[bot]")
    kinds = {r["kind"] for r in _report(b.path, "2026-W03")["risks"]}
    assert not kinds & {"dependency_change", "ci_churn"}
    for i in range(3):
        b.commit(f"fix: flaky ci job {i} (#{20 + i})", f"2026-01-2{i}T09:00:00+00:00",
                 {".github/workflows/tests.yaml": f"on: push\n# retry {i}\n"})
    assert "ci_churn" in {r["kind"] for r in _report(b.path, "2026-W04")["risks"]}


@pytest.mark.parametrize("pyproject, risk", [
    ('[project]\nname = "app"\nversion = "3.1.0"\ndependencies = ["werkzeug>=3.0"]\n', False),
    ('[project]\nname = "app"\nversion = "3.0.0"\ndependencies = ["werkzeug>=3.1"]\n', True),
])
def test_a_release_that_only_sets_its_own_version_changes_no_dependency(tmp_path, pyproject, risk):
    b = GitRepoBuilder(tmp_path / "repo")
    b.commit("initial", "2026-01-05T10:00:00+00:00",
             {"src/app.py": b.lines(5), "pyproject.toml": '[project]\nname = "app"\nversion = "3.0.0"\ndependencies = ["werkzeug>=3.0"]\n'})
    b.commit("release version 3.1.0 (#10)", "2026-01-13T09:00:00+00:00", {"pyproject.toml": pyproject})
    kinds = {r["kind"] for r in _report(b.path, "2026-W03")["risks"]}
    assert ("dependency_change" in kinds) is risk


@pytest.mark.parametrize("title, body, files, says", [
    ("feat: deterministic rollout (#10)", "Adds determinism.\n\nDefaults preserve existing behavior.",
     {"src/roll.py": 60}, "The PR describes the change as compatible with existing setups."),
    ("refactor: rename the scheduler key (#10)", "Renames it.", {"conf/train.yaml": "scheduler: cosine\n"},
     "It removes or renames configuration"),
    ("fix: read the right key (#10)", "A fix.", {"conf/train.yaml": "sched: linear\nwarmup: 1\n", "src/app.py": 3},
     "The PR does not state a default or a compatibility impact."),
])
def test_key_changes_say_what_the_pr_says_about_compatibility(tmp_path, title, body, files, says):
    """What a key change says of defaults and compatibility follows the PR: a description
    that promises compatibility, a renamed key; a fix that touches configuration files
    is not said to need no configuration change."""
    b = GitRepoBuilder(tmp_path / "repo")
    b.commit("initial", "2026-01-05T10:00:00+00:00", {"src/app.py": b.lines(5), "conf/train.yaml": "sched: linear\n"})
    b.commit(f"{title}\n\n{body}", "2026-01-13T09:00:00+00:00",
             {k: (b.lines(v) if isinstance(v, int) else v) for k, v in files.items()})
    (item,) = _report(b.path, "2026-W03")["sections"]["key_changes"]["items"]
    assert says in item["text"]
    assert "No configuration change is needed" not in item["text"]


def test_what_the_week_concentrated_on_is_its_areas_of_code(tmp_path):
    """The changelog line every code PR adds makes none of them documentation, a
    "[misc]" tag names no area, tooling folders (.devcontainer) are no core path, and
    the summary names areas of two PRs or more, the largest first."""
    b = GitRepoBuilder(tmp_path / "repo")
    b.commit("initial", "2026-01-05T10:00:00+00:00", {"src/app/views.py": b.lines(50), "src/app/cli.py": b.lines(50),
                                                      "CHANGES.rst": b.lines(5)})
    day = 12
    for i, (title, files) in enumerate([
        ("Add async views", {"src/app/views.py": 40, "CHANGES.rst": 2}),
        ("Fix view caching", {"src/app/views.py": 30, "CHANGES.rst": 1}),
        ("Add streaming views", {"src/app/views.py": 20, "CHANGES.rst": 1}),
        ("Add a cli flag", {"src/app/cli.py": 20, "CHANGES.rst": 1}),
        ("Tidy cli imports", {"src/app/cli.py": 5}),
        ("[misc] add devcontainer", {".devcontainer/on-create.sh": 300}),
    ]):
        b.commit(f"{title} (#{10 + i})", f"2026-01-{day + i % 5}T09:00:00+00:00",
                 {k: b.lines(v) for k, v in files.items()})
    d = _report(b.path, "2026-W03")
    summary = d["sections"]["summary"]["text"]
    assert "The week concentrated on views (3 PRs) and cli (2 PRs)." in summary
    assert "Documentation" not in summary and "misc" not in json.dumps(d["themes"])
    assert not any(p.startswith(".") for p in d["stats"]["core_paths"])


def test_risks_the_titles_do_not_support_and_breaking_changes_named(tmp_path):
    """'Drop … keys' of a state dict names no setting; a typo fix needs no test of its
    own; two breaking changes are each named in the summary with their gists."""
    b = GitRepoBuilder(tmp_path / "repo")
    b.commit("initial", "2026-01-05T10:00:00+00:00", {"src/merge.py": b.lines(40), "src/train.py": b.lines(40)})
    _one_file_prs(b, [
        ("fix: drop tied target keys before save_pretrained", "src/merge.py"),
        ("fix: typo in clip_cov_ratio", "src/train.py"),
        ("[BREAKING] refactor: move the server manager", "src/server.py"),
        ("feat!: switch the rollout backend by default", "src/rollout.py"),
    ])
    d = _report(b.path, "2026-W03")
    risky = {r["kind"]: r["prs"] for r in d["risks"]}
    assert "config_change" not in risky and 11 not in risky.get("missing_tests", [])
    summary = d["sections"]["summary"]["text"]
    assert "Breaking changes: #13 (Switch the rollout backend by default, which changes a default) and " \
           "#12 (Move the server manager); users upgrading" in summary


def test_a_release_is_said_in_the_summary(tmp_path):
    """A release PR changes a line, but it is what downstream teams pin to: the summary
    says which version was released, and which development version the branch moved to."""
    b = GitRepoBuilder(tmp_path / "repo")
    b.commit("initial", "2026-01-05T10:00:00+00:00", {"src/app.py": b.lines(30), "CHANGES.rst": b.lines(3)})
    b.commit("Add streaming (#9)", "2026-01-12T09:00:00+00:00", {"src/app.py": b.lines(20)})
    b.commit("chore: bump version to 3.1.0.dev (#8)", "2026-01-12T10:00:00+00:00", {"CHANGES.rst": b.lines(1)})
    b.commit("release version 3.1.0 (#10)", "2026-01-13T09:00:00+00:00", {"CHANGES.rst": b.lines(1)})
    b.commit("[misc] chore: bump version to 3.2.0.dev (#11)", "2026-01-14T09:00:00+00:00", {"CHANGES.rst": b.lines(1)})
    en, zh = _report(b.path, "2026-W03"), _report(b.path, "2026-W03", "zh")
    assert "acme/young released 3.1.0 (#10) this week." in en["sections"]["summary"]["text"]
    assert "The development version on the default branch became 3.2.0.dev (#11)." in en["sections"]["summary"]["text"]
    assert "#8" not in en["sections"]["summary"]["text"]  # where the branch ended, not every bump on the way
    assert "(#10)" not in en["sections"]["summary"]["text"].split("this week.", 1)[1]  # not a "notable change" again
    release = next(i["text"] for i in en["sections"]["key_changes"]["items"] if 10 in i["prs"])
    assert "It releases version 3.1.0" in release and "does not state" not in release
    assert "本周acme/young发布了3.1.0版本（#10）。" in zh["sections"]["summary"]["text"]
    assert "released" not in _report(b.path, "2026-W02")["sections"]["summary"]["text"]


def test_a_security_fix_is_said_first_even_when_it_landed_without_a_pr(tmp_path):
    """GitHub merges an advisory's fix from a private fork ("Merge pull request from
    GHSA-…", no PR number): the summary names it, and the first recommendation is to upgrade."""
    b = GitRepoBuilder(tmp_path / "repo")
    b.commit("initial", "2026-01-05T10:00:00+00:00", {"src/sessions.py": b.lines(30)})
    sha = b.commit("Merge pull request from GHSA-m2qf-hxjv-5gpq\n\nset Vary: Cookie consistently",
                   "2026-01-12T09:00:00+00:00", {"src/sessions.py": b.lines(5)})
    en = _report(b.path, "2026-W03")
    assert f"Security fix: GHSA-m2qf-hxjv-5gpq (commit {sha[:7]})." in en["sections"]["summary"]["text"]
    first = en["sections"]["recommendations"]["items"][0]
    assert first["name"] == "Upgrade for the security fix" and "GHSA-m2qf-hxjv-5gpq" in first["text"]
    b.commit("fix: CVE-2026-12345 in the cookie parser (#10)", "2026-01-13T09:00:00+00:00", {"src/sessions.py": b.lines(3)})
    zh = _report(b.path, "2026-W03", "zh")
    assert f"安全修复：GHSA-m2qf-hxjv-5gpq（提交{sha[:7]}）和CVE-2026-12345（#10）。" in zh["sections"]["summary"]["text"]
    assert zh["sections"]["recommendations"]["items"][0]["name"] == "升级以获得安全修复"


def test_a_removal_is_not_a_new_feature(tmp_path):
    """'feat: remove the mindspeed backend' removes something users rely on: its key change
    says so, and its contribution is a removal, not a new feature; a clean-up is neither."""
    b = GitRepoBuilder(tmp_path / "repo")
    b.commit("initial", "2026-01-05T10:00:00+00:00", {"src/engine/mindspeed.py": b.lines(300), "src/app.py": b.lines(30)})
    b.commit("[engine] feat: remove the mindspeed backend (#10)", "2026-01-13T09:00:00+00:00", {"src/engine/mindspeed.py": None})
    b.commit("chore: remove unused imports (#11)", "2026-01-14T09:00:00+00:00", {"src/app.py": b.lines(2)})
    en, zh = _report(b.path, "2026-W03"), _report(b.path, "2026-W03", "zh")
    items = {i["prs"][0]: i["text"] for i in en["sections"]["key_changes"]["items"]}
    # What it removes, when that is a module others import; else that it removes something.
    assert "It removes the module engine.mindspeed: code that imports it fails" in items[10]
    assert "removes" not in items[11]
    rows = {r["number"]: r["key_contribution"] for r in zh["sections"]["table"]["rows"]}
    contributions = {p["number"]: p["key_contribution"] for p in zh["pull_requests"]}
    assert contributions[10].startswith("移除：") and not contributions[11].startswith("移除")
    assert all(v == contributions[k] for k, v in rows.items())


@pytest.mark.parametrize("body", [
    "> Add a concise overview of what this PR aims to achieve or\naccomplish.\n\nMore text follows.",
    "This PR adds support for several agent frameworks such as:\n\n- LangGraph\n- AutoGen",
])
def test_a_template_remnant_or_a_lead_in_is_no_description(tmp_path, body):
    b = GitRepoBuilder(tmp_path / "repo")
    b.commit("initial", "2026-01-05T10:00:00+00:00", {"src/app.py": b.lines(30)})
    b.commit(f"feat: support agent frameworks (#10)\n\n{body}", "2026-01-13T09:00:00+00:00", {"src/agents.py": b.lines(40)})
    (item,) = _report(b.path, "2026-W03")["sections"]["key_changes"]["items"]
    assert "accomplish" not in item["text"] and ":." not in item["text"] and "such as" not in item["text"]


def test_a_folder_named_after_a_known_topic_is_that_topics_theme_not_a_second_one(tmp_path):
    """`docs/ascend_tutorial` is Ascend NPU work: a week of Ascend docs and scripts read as
    two themes with mostly the same PRs, the folder's name first (verl 2025-W38). The
    topic's theme stays."""
    b = GitRepoBuilder(tmp_path / "repo")
    b.commit("initial", "2026-01-05T10:00:00+00:00", {"src/app.py": b.lines(30), "docs/index.md": b.lines(5)})
    _one_file_prs(b, [
        ("[doc] chore: update the quick start", "docs/ascend_tutorial/quick_start.rst"),
        ("[doc] chore: update owners for ascend_tutorial documents", ".github/CODEOWNERS"),
        ("[model] feat: add a qwen3 grpo script on ASCEND NPU", "docs/ascend_tutorial/qwen3_grpo.sh"),
        ("[model] feat: add a qwen3 ppo script on ASCEND NPU", "docs/ascend_tutorial/qwen3_ppo.sh"),
        ("[recipe] feat: add a DAPO NPU example script", "recipe/dapo/run_npu.sh")], first_day=12)
    d = _report(b.path, "2026-W03")
    names = [i["name"] for i in d["sections"]["trends"]["items"]]
    assert "Ascend NPU" in names and "ascend_tutorial" not in names
    assert not any("ascend_tutorial" in t for p in d["pull_requests"] for t in p["themes"])


def test_a_theme_within_a_stronger_one_is_not_written_twice(tmp_path):
    """Every "[mcore]" PR is also a "[megatron]" one: the report writes about megatron,
    not about mcore with the same PRs and examples again."""
    b = GitRepoBuilder(tmp_path / "repo")
    b.commit("initial", "2026-01-05T10:00:00+00:00", {"src/app.py": b.lines(30)})
    for i in range(6):
        tags = "[megatron, mcore]" if i < 2 else "[megatron]" if i < 4 else "[rollout]"
        word = ["pipeline stages", "fused kernels", "expert routing", "weight sync", "async sampling", "reward shaping"][i]
        b.commit(f"{tags} feat: {word} (#{10 + i})", f"2026-01-1{2 + i % 5}T09:00:00+00:00", {f"src/m{i}.py": b.lines(20)})
    b.commit("[docs] add a guide (#20)", "2026-01-13T11:00:00+00:00", {"docs/guide.md": b.lines(20)})
    names = [i["name"] for i in _report(b.path, "2026-W03")["sections"]["trends"]["items"]]
    assert "megatron" in names and "rollout" in names and "mcore" not in names


def test_counts_are_not_said_twice_and_one_change_is_singular(tmp_path):
    """zh: "本周有6个PR修改了配置文件（#…等）", not "…等6个PR" after the count; en: "The
    most notable change:" for one; "touches the core path X and configuration files"."""
    b = GitRepoBuilder(tmp_path / "repo")
    b.commit("initial", "2026-01-05T10:00:00+00:00", {"src/pkg/__init__.py": b.lines(5), "configs/a.yaml": "a: 1\n"})
    for i in range(6):
        b.commit(f"feat: tune setting {i} (#{10 + i})", f"2026-01-1{2 + i % 5}T09:00:00+00:00",
                 {"configs/a.yaml": f"a: 1\nb{i}: 2\n", "src/pkg/__init__.py": b.lines(3)})
    zh = _report(b.path, "2026-W03", "zh")
    churn = next(r["text"] for r in zh["risks"] if r["kind"] == "config_churn")
    assert "本周有6个PR修改了配置文件（" in churn and "等）" in churn and "等6个PR" not in churn
    en = _report(b.path, "2026-W03")
    text = json.dumps(en["sections"])
    assert "touches the core path src/pkg and configuration files" in text and "and touches" not in text
    one = GitRepoBuilder(tmp_path / "one")
    one.commit("initial", "2026-01-05T10:00:00+00:00", {"src/app.py": one.lines(5)})
    one.commit("feat: add a flag (#10)", "2026-01-13T09:00:00+00:00", {"src/app.py": one.lines(30)})
    assert "The most notable change: Add a flag (#10)" in _report(one.path, "2026-W03")["sections"]["summary"]["text"]


def test_modules_removed_or_moved_are_a_risk_to_code_that_imports_them(tmp_path):
    """Downstream code imports a project's modules by path: a PR that deletes or moves
    one (moved unchanged, or deleted beside one of the same name added elsewhere) is a
    risk with the old and new import paths, a reason in its key change and a
    recommendation. Tests, examples, private modules and a module turned into a package
    of the same name are not."""
    b = GitRepoBuilder(tmp_path / "repo")
    loop = b.lines(10)
    b.commit("initial", "2026-01-05T10:00:00+00:00", {
        "acme/__init__.py": "", "acme/utils/tokenizer.py": b.lines(40), "acme/utils/chat.py": b.lines(30),
        "acme/trainer/main_sync.py": b.lines(60), "acme/_impl.py": b.lines(10), "acme/legacy/__init__.py": "",
        "acme/legacy/a.py": b.lines(10), "acme/legacy/b.py": b.lines(10), "tests/test_chat.py": b.lines(5),
        "examples/run.py": b.lines(5), "acme/loop.py": loop})
    b.commit("[trainer] feat: one trainer for sync and async (#10)", "2026-01-13T09:00:00+00:00",
             {"acme/trainer/main_sync.py": None, "acme/trainer/main.py": b.lines(80), "tests/test_main.py": b.lines(5)})
    b.commit("[rollout] feat: continuous tokens (#11)", "2026-01-14T09:00:00+00:00",
             {"acme/utils/chat.py": None, "acme/utils/tokenizer/chat.py": b.lines(31),  # moved and edited
              "acme/utils/tokenizer.py": None, "acme/utils/tokenizer/__init__.py": b.lines(41),  # now a package
              "acme/loop.py": None, "acme/agent/loop.py": loop,  # moved unchanged (same content)
              "tests/test_chat.py": None, "examples/run.py": None, "acme/_impl.py": None,
              "tests/test_tok.py": b.lines(5)})
    b.commit("[misc] chore: drop the legacy package (#12)", "2026-01-15T09:00:00+00:00",
             {"acme/legacy/__init__.py": None, "acme/legacy/a.py": None, "acme/legacy/b.py": None})
    d = _report(b.path, "2026-W03")
    prs = {p["number"]: p for p in d["pull_requests"]}
    evidence = {n: next((r["evidence"] for r in p["risks"] if r["kind"] == "module_removed"), None) for n, p in prs.items()}
    assert evidence == {
        10: ["module removed: acme.trainer.main_sync"],
        11: ["module moved: acme.loop -> acme.agent.loop", "module moved: acme.utils.chat -> acme.utils.tokenizer.chat"],
        12: ["module removed: acme.legacy"],  # the package, not each of its modules
    }
    assert next(f for f in prs[11]["files"] if f["path"] == "acme/agent/loop.py")["previous"] == "acme/loop.py"
    (risk,) = [i["text"] for i in d["sections"]["risks"]["items"] if i["name"] == "Removed or moved modules"]
    assert "acme.trainer.main_sync removed" in risk and "acme.utils.chat moved to acme.utils.tokenizer.chat" in risk
    assert "ImportError" in risk and all(f"#{n}" in risk for n in (10, 11, 12))
    (rec,) = [i for i in d["sections"]["recommendations"]["items"] if i["name"] == "Update imports before upgrading"]
    assert "acme.trainer.main_sync" in rec["text"]
    key = next(i["text"] for i in d["sections"]["key_changes"]["items"] if i["prs"] == [10])
    assert "It removes the module acme.trainer.main_sync: code that imports it fails after upgrading." in key
    zh = _report(b.path, "2026-W03", "zh")
    (risk_zh,) = [i["text"] for i in zh["sections"]["risks"]["items"] if i["name"] == "模块被删除或移动"]
    assert "删除了acme.trainer.main_sync" in risk_zh and "acme.utils.chat移至acme.utils.tokenizer.chat" in risk_zh
    assert "该PR删除了模块acme.trainer.main_sync，导入它的代码在升级后会失败。" in json.dumps(zh["sections"], ensure_ascii=False)


def test_a_module_renamed_with_edits_reads_as_moved_in_report_and_backfill(tmp_path):
    """A clone's log lists a module renamed with edits as a deletion and an addition: git's
    rename detection pairs them, so the risk says where it went (verl #4931 renamed
    `patch_v012` to `patch` and edited it) and the PR's size is the edit, as GitHub
    counts it. A module deleted beside an unrelated new one in the same package is still
    removed; the backfill reads the same as the single report."""
    b = GitRepoBuilder(tmp_path / "repo")
    patch = "".join(f"def patch_{i}(model):\n    return model.layers[{i}]\n" for i in range(60))
    b.commit("initial", "2026-01-05T10:00:00+00:00", {
        "acme/__init__.py": "", "acme/mcore/patch_v012.py": patch, "acme/mcore/legacy.py": b.lines(40)})
    b.commit("[megatron] fix: patch mcore for MLA support (#10)", "2026-01-13T09:00:00+00:00", {
        "acme/mcore/patch_v012.py": None, "acme/mcore/patch.py": patch + "def patch_mla(model):\n    return model\n"})
    b.commit("[misc] chore: replace the legacy loader (#11)", "2026-01-14T09:00:00+00:00", {
        "acme/mcore/legacy.py": None, "acme/mcore/loader.py": b.lines(35)})
    d = _report(b.path, "2026-W03")
    prs = {p["number"]: p for p in d["pull_requests"]}
    evidence = {n: next(r["evidence"] for r in p["risks"] if r["kind"] == "module_removed") for n, p in prs.items()}
    assert evidence == {10: ["module moved: acme.mcore.patch_v012 -> acme.mcore.patch"],
                        11: ["module removed: acme.mcore.legacy"]}
    assert prs[10]["files"] == [{"path": "acme/mcore/patch.py", "added": 2, "deleted": 0, "status": "M",
                                 "previous": "acme/mcore/patch_v012.py"}]
    assert prs[10]["lines_added"] == 2 and prs[10]["lines_deleted"] == 0
    (risk,) = [i["text"] for i in d["sections"]["risks"]["items"] if i["name"] == "Removed or moved modules"]
    assert "acme.mcore.patch_v012 moved to acme.mcore.patch" in risk and "acme.mcore.legacy removed" in risk
    code, _, err = run_cli("backfill", str(b.path), "--name", "acme/young", "--from", "2026-W03", "--to", "2026-W03",
                           "--lang", "en", "--out", str(tmp_path / "out"), "-q")
    assert code == 0, err
    (week,) = (tmp_path / "out").glob("*.json")
    backfilled = {p["number"]: p for p in json.loads(week.read_text())["pull_requests"]}
    assert backfilled[10]["files"] == prs[10]["files"] and backfilled[10]["risks"] == prs[10]["risks"]


def test_a_config_file_moved_with_edits_is_renamed_configuration_not_a_deleted_file(tmp_path):
    """A config file moved (and edited) breaks the scripts that name its old path, as a
    deleted one does, but the reader needs where it went: git's rename detection gives
    it in a clone, as GitHub's REST list of files does."""
    b = GitRepoBuilder(tmp_path / "repo")
    config = "".join(f"key_{i}: {i}\n" for i in range(40))
    b.commit("initial", "2026-01-05T10:00:00+00:00", {"acme/__init__.py": "", "acme/config/ppo_trainer.yaml": config})
    b.commit("[trainer] refactor: move the legacy trainer config (#10)", "2026-01-13T09:00:00+00:00", {
        "acme/config/ppo_trainer.yaml": None, "acme/config/legacy/ppo_trainer.yaml": config + "extra: 1\n"})
    d = _report(b.path, "2026-W03")
    (pr,) = d["pull_requests"]
    (risk,) = [r for r in pr["risks"] if r["kind"] == "config_change"]
    assert risk["severity"] == "high"
    assert risk["evidence"] == ["config file renamed acme/config/ppo_trainer.yaml -> acme/config/legacy/ppo_trainer.yaml"]
    assert pr["files"] == [{"path": "acme/config/legacy/ppo_trainer.yaml", "added": 1, "deleted": 0, "status": "M",
                            "previous": "acme/config/ppo_trainer.yaml"}]
    (text,) = [i["text"] for i in d["sections"]["risks"]["items"] if i["prs"] == [10] and "config" in i["text"].lower()]
    assert "acme/config/ppo_trainer.yaml moved to acme/config/legacy/ppo_trainer.yaml" in text and "deleted" not in text
    (rec,) = [i["text"] for i in d["sections"]["recommendations"]["items"] if i["name"] == "Publish a migration note"]
    assert rec.startswith("Maintainers should list the config files #10 moved in the release notes, with their old and new paths")
    zh = _report(b.path, "2026-W03", "zh")
    zh_text = json.dumps(zh["sections"], ensure_ascii=False)
    assert "acme/config/ppo_trainer.yaml移至acme/config/legacy/ppo_trainer.yaml" in zh_text and "#10移动的配置文件及其新旧路径" in zh_text


def test_a_default_only_the_diff_changes_is_a_risk_with_its_old_and_new_value(tmp_path):
    """A PR that changes a default of the code's configuration without saying so (a
    "tidy" chore, no description) gives users who upgrade new behaviour all the same:
    the diff shows the key with its old and new value. A comment changed, a value in an
    example's config, and a value moved unchanged are no change of a default."""
    b = GitRepoBuilder(tmp_path / "repo")
    trainer = "actor:\n  lr: 1e-6  # learning rate\n  clip: 0.2\n  mode: plain\n  warmup: 10\nrollout:\n  n: 4\n"
    b.commit("initial", "2026-01-05T10:00:00+00:00", {
        "acme/__init__.py": "", "acme/config/ppo_trainer.yaml": trainer, "examples/ppo/config/run.yaml": "lr: 1\n",
        "acme/workers/config/actor.py": "@dataclass\nclass ActorConfig:\n    ppo_mini_batch_size: int = 256\n"})
    b.commit("[trainer] chore: tidy the trainer config (#10)", "2026-01-13T09:00:00+00:00", {
        "acme/config/ppo_trainer.yaml": 'rollout:\n  n: 4\nactor:\n  lr: 5e-7  # the learning rate\n  clip: 0.2  # PPO\n'
                                        '  mode: "<img src=x> [x](http://e.test) *m*"\n  warmup: 20\n',
        "examples/ppo/config/run.yaml": "lr: 2\n"})
    b.commit("[worker] refactor: move the actor config (#11)", "2026-01-14T09:00:00+00:00", {
        "acme/workers/config/actor.py": "@dataclass\nclass ActorConfig:\n    ppo_mini_batch_size: int = 128\n"})
    b.commit("[trainer] docs: comment the rollout config (#12)", "2026-01-15T09:00:00+00:00", {
        "acme/config/ppo_trainer.yaml": 'rollout:\n  n: 4  # samples per prompt\nactor:\n  lr: 5e-7  # the learning rate\n'
                                        '  clip: 0.2  # PPO\n  mode: "<img src=x> [x](http://e.test) *m*"\n  warmup: 20\n'})
    d = _report(b.path, "2026-W03")
    evidence = {p["number"]: [e for r in p["risks"] if r["kind"] == "default_change" for e in r["evidence"]]
                for p in d["pull_requests"]}
    assert evidence == {
        10: ["config default changed: lr in acme/config/ppo_trainer.yaml: 1e-6 -> 5e-7",
             "config default changed: mode in acme/config/ppo_trainer.yaml: plain -> <img src=x> [x](http://e.test) *m*",
             "config default changed: warmup in acme/config/ppo_trainer.yaml: 10 -> 20"],
        11: ["config default changed: ppo_mini_batch_size in acme/workers/config/actor.py: 256 -> 128"],
        12: [],
    }
    (text,) = [i["text"] for i in d["sections"]["risks"]["items"] if i["prs"] == [10, 11]]
    assert text.startswith("#10, #11: defaults changed (#10: lr from 1e-6 to 5e-7 in acme/config/ppo_trainer.yaml, "
                           "mode from plain to <img src=x> [x](http://e.test) *m* in acme/config/ppo_trainer.yaml and 1 more; "
                           "#11: ppo_mini_batch_size from 256 to 128 in acme/workers/config/actor.py)"), text
    (rec,) = [i for i in d["sections"]["recommendations"]["items"] if i["name"] == "Check configuration before upgrading"]
    assert rec["prs"] == [10, 11]
    zh = json.dumps(_report(b.path, "2026-W03", "zh")["sections"], ensure_ascii=False)
    assert "acme/config/ppo_trainer.yaml中的lr由1e-6改为5e-7" in zh
    # The values are the diff's text, anyone's: inert in Markdown.
    code, md, err = run_cli("report", str(b.path), "--name", "acme/young", "--week", "2026-W03", "--lang", "en",
                            "--format", "md", "-q")
    assert code == 0, err
    assert "&lt;img src=x> \\[x\\](`http://e.test`) \\*m\\*" in md and "<img" not in md


def test_many_modules_removed_are_counted_per_pr(tmp_path):
    """A PR removing a whole subsystem is summed up (how many modules, two of them), so the
    risk stays readable; the recommendation lists three and counts the rest. Removing its
    configuration too, its key change says both (verl #6162 said only the first)."""
    b = GitRepoBuilder(tmp_path / "repo")
    b.commit("initial", "2026-01-05T10:00:00+00:00", {
        **{f"acme/vla/m{i}.py": b.lines(10) for i in range(7)}, "acme/utils/old.py": b.lines(10),
        "acme/vla/config/vla_trainer.yaml": b.lines(10)})
    b.commit("[repo] refactor: move vla to its own repository (#10)", "2026-01-13T09:00:00+00:00",
             {**{f"acme/vla/m{i}.py": None for i in range(7)}, "acme/vla/config/vla_trainer.yaml": None})
    b.commit("[misc] chore: remove an old helper (#11)", "2026-01-14T09:00:00+00:00", {"acme/utils/old.py": None})
    en, zh = _report(b.path, "2026-W03"), _report(b.path, "2026-W03", "zh")
    (risk,) = [i["text"] for i in en["sections"]["risks"]["items"] if i["name"] == "Removed or moved modules"]
    assert "(#10: 7 modules, among them acme.vla.m0 and acme.vla.m1; #11: acme.utils.old removed)" in risk
    (rec,) = [i["text"] for i in en["sections"]["recommendations"]["items"] if i["name"] == "Update imports before upgrading"]
    assert "stop importing acme.vla.m0, acme.vla.m1, acme.vla.m2 and 5 more (#10, #11)" in rec
    (risk_zh,) = [i["text"] for i in zh["sections"]["risks"]["items"] if i["name"] == "模块被删除或移动"]
    assert "（#10：7个模块，包括acme.vla.m0和acme.vla.m1；#11：删除了acme.utils.old）" in risk_zh
    (rec_zh,) = [i["text"] for i in zh["sections"]["recommendations"]["items"] if i["name"] == "升级前更新导入"]
    assert "停止导入acme.vla.m0、acme.vla.m1、acme.vla.m2等8个模块（#10、#11）" in rec_zh
    key = next(i["text"] for i in en["sections"]["key_changes"]["items"] if i["prs"] == [10])
    assert ("It removes or renames configuration: settings written for the old names may be rejected or ignored. "
            "It removes the modules acme.vla.m0, acme.vla.m1, acme.vla.m2 and 4 more: code that imports them fails") in key


def test_ci_bumps_are_no_notable_change_beside_a_change_to_the_code(tmp_path):
    """'The most notable changes' of a quiet week named Dependabot's CI bumps next to the one
    change to the code; they are the week's CI trend, not its news. A week of nothing
    else still names them."""
    b = GitRepoBuilder(tmp_path / "repo")
    b.commit("initial", "2026-01-05T10:00:00+00:00", {"src/app.py": b.lines(30), ".github/workflows/ci.yml": b.lines(5)})
    for n, day in ((10, 12), (11, 13)):
        b.commit(f"Bump actions/checkout from 3.{n} to 3.{n + 1} (#{n})", f"2026-01-{day}T09:00:00+00:00",
                 {".github/workflows/ci.yml": b.lines(5)})
    quiet = _report(b.path, "2026-W03")["sections"]["summary"]["text"]
    assert "The most notable changes: Bump actions/checkout" in quiet
    b.commit("fix: keep the session cookie (#12)", "2026-01-14T09:00:00+00:00", {"src/app.py": b.lines(3)})
    summary = _report(b.path, "2026-W03")["sections"]["summary"]["text"]
    assert "The most notable change: Keep the session cookie (#12)" in summary and "Bump" not in summary
    assert "merged 3 PRs (none the week before)" in summary


def test_a_module_risk_in_a_models_own_words_is_still_written_whole(tmp_path):
    """With the llm engine a model that keeps the module risk writes its own evidence. The
    offline composer, which writes any section the model's answer could not, then names
    the PR's gist instead of the modules, and leaves out what needs the module names."""
    from repobrief.config import load_settings
    from repobrief.engines.offline import OfflineEngine
    from repobrief.pipeline import generate_report, render_report
    from repobrief.window import parse_timezone, parse_week

    class ModelWorded(OfflineEngine):
        def analyze_all(self, prs, ctx):
            out = super().analyze_all(prs, ctx)
            for a in out.values():
                for r in a.risks:
                    if r.kind == "module_removed":
                        r.evidence = ["drops the synchronous trainer's entry point"]
            return out

    b = GitRepoBuilder(tmp_path / "repo")
    b.commit("initial", "2026-01-05T10:00:00+00:00", {"acme/trainer/main_sync.py": b.lines(60)})
    b.commit("[trainer] feat: one trainer for sync and async (#10)", "2026-01-13T09:00:00+00:00",
             {"acme/trainer/main_sync.py": None, "acme/trainer/main.py": b.lines(80)})
    settings = load_settings(b.path, env={}, overrides={"name": "acme/young", "language": "en"})
    rep = generate_report(str(b.path), settings, parse_week("2026-W03", parse_timezone("UTC")), engine=ModelWorded(settings))
    md = render_report(rep, "md")
    assert "**Removed or moved modules**: #10: Python modules removed or moved (One trainer for sync and async)." in md
    assert "It removes the module" not in md and "Update imports" not in md and "()" not in md


def test_the_cards_risks_of_one_pr_share_a_line(tmp_path):
    """The card has room for three risk lines: risks of the same PRs share one, so the
    three lines are three concerns, not one PR three times."""
    b = GitRepoBuilder(tmp_path / "repo")
    b.commit("initial", "2026-01-05T10:00:00+00:00", {"acme/old/engine.py": b.lines(50), "acme/app.py": b.lines(20),
                                                       "requirements.txt": "torch==2.1\n"})
    b.commit("[engine] refactor: drop the old engine (#10)", "2026-01-13T09:00:00+00:00", {"acme/old/engine.py": None})
    b.commit("[deps] chore: pin torch (#11)", "2026-01-14T09:00:00+00:00", {"requirements.txt": "torch==2.4\n"})
    d = _report(b.path, "2026-W03")
    assert {r["kind"] for r in d["pull_requests"][0]["risks"] + d["pull_requests"][1]["risks"]} >= {
        "module_removed", "missing_tests", "dependency_change"}
    lines = d["card"]["risks"]
    (ten,) = [line for line in lines if line.endswith(": #10")]
    assert "removed or moved modules" in ten.lower() and "changes without tests" in ten.lower(), lines
    assert any(line == "Dependency and image changes: #11" for line in lines), lines
    zh = _report(b.path, "2026-W03", "zh")["card"]["risks"]
    assert any("模块被删除或移动" in line and "缺少测试" in line and line.endswith("：#10") for line in zh), zh


def test_a_cards_risk_line_counts_the_prs_past_the_third(tmp_path):
    """verl 2026-W24's card read "Configuration churn: #6710, #6593, #6505" where the
    report named four PRs: the fourth was dropped without a word."""
    b = GitRepoBuilder(tmp_path / "repo")
    b.commit("initial", "2026-01-05T10:00:00+00:00", {"conf/train.yaml": "lr: 1\n", "acme/app.py": b.lines(20)})
    for n in range(10, 15):
        b.commit(f"[cfg] chore: tune value {n} (#{n})", f"2026-01-{n + 2}T09:00:00+00:00",
                 {"conf/train.yaml": f"lr: 1\nv{n}: {n}\n", "tests/test_conf.py": b.lines(3)})
    lines = _report(b.path, "2026-W03")["card"]["risks"]
    assert any(line.startswith("Configuration churn: #") and line.endswith(" and 2 more") for line in lines), lines
    zh = _report(b.path, "2026-W03", "zh")["card"]["risks"]
    assert any(line.endswith("等5个PR") for line in zh), zh


def test_the_largest_pr_is_larger_than_99_percent_of_recent_ones_not_100(tmp_path):
    """A PR is among the recent PRs it is compared with: the reason in the JSON and the key
    change both say 99%, never 100%."""
    b = GitRepoBuilder(tmp_path / "repo")
    b.commit("initial", "2026-01-05T10:00:00+00:00", {"src/app.py": b.lines(10)})
    for n in range(100, 220):  # more than a hundred recent PRs: the largest is above 99.5% of them
        b.commit(f"fix: small {n} (#{n})", f"2026-01-{6 + (n - 100) // 8:02d}T{(n % 8) + 8:02d}:00:00+00:00",
                 {f"src/m{n % 7}.py": b.lines(5)})
    b.commit("feat: a very large engine (#30)", "2026-01-21T09:00:00+00:00", {"src/engine.py": b.lines(900)})
    d = _report(b.path, "2026-W04")
    (pr,) = [p for p in d["pull_requests"] if p["number"] == 30]
    size = [r["text"] for r in pr["importance_terms"] if r["code"] == "size"]
    assert size == ["size 900 lines (larger than 99% of recent PRs)"], pr["importance_reasons"]
    key = next(i["text"] for i in d["sections"]["key_changes"]["items"] if i["prs"] == [30])
    assert "larger than 99% of the repository's recent PRs (900 lines)" in key and "100%" not in json.dumps(d)


def test_a_risk_named_in_a_sentence_keeps_its_acronyms(tmp_path):
    """The summary read "The main risk to watch: very large prs (#30)"."""
    b = GitRepoBuilder(tmp_path / "repo")
    b.commit("initial", "2026-01-05T10:00:00+00:00", {"src/app.py": b.lines(10), "docs/index.md": "# Docs\n"})
    b.commit("docs: a long guide to every option (#30)", "2026-01-21T09:00:00+00:00", {"docs/guide.md": b.lines(1500)})
    summary = _report(b.path, "2026-W04")["sections"]["summary"]["text"]
    assert "The main risk to watch: very large PRs (#30)." in summary, summary


def test_a_risks_titles_say_how_many_more_prs_it_names(tmp_path):
    """verl 2026-W20: "#6135, #6270, #6332, #6322, #6363 and 1 more: … (A, B and C)" read
    as if three PRs lacked tests; the titles now end with how many more there are, or,
    when the list before them has counted the rest already, only that they go on: "#259 …
    #370 and 4 more: … (A, B, C and 6 more)" read as two sets of PRs (verl 2025-W09)."""
    b = GitRepoBuilder(tmp_path / "repo")
    b.commit("initial", "2026-01-05T10:00:00+00:00", {"src/app.py": b.lines(10), "tests/test_app.py": b.lines(3)})
    for n in range(10, 15):
        b.commit(f"feat: step {n} (#{n})", f"2026-01-{n + 2}T09:00:00+00:00", {f"src/m{n}.py": b.lines(20)})
    en, zh = _report(b.path, "2026-W03"), _report(b.path, "2026-W03", "zh")
    (text,) = [i["text"] for i in en["sections"]["risks"]["items"] if i["name"] == "Changes without tests"]
    assert "(Step 10, Step 11, Step 12 and 2 more)" in text, text
    (text,) = [i["text"] for i in zh["sections"]["risks"]["items"] if i["name"] == "缺少测试的改动"]
    assert "等5个PR）" in text, text
    # a cherry-pick shares its gist with the PR it picks: said once, and counted as told
    b.commit("feat: step 10 (#15)", "2026-01-17T09:00:00+00:00", {"src/m15.py": b.lines(20)})
    (text,) = [i["text"] for i in _report(b.path, "2026-W03")["sections"]["risks"]["items"] if i["name"] == "Changes without tests"]
    assert "and 1 more: " in text and "(Step 10, Step 11, Step 12, …)" in text and text.count("Step 10") == 1, text
    (text,) = [i["text"] for i in _report(b.path, "2026-W03", "zh")["sections"]["risks"]["items"] if i["name"] == "缺少测试的改动"]
    assert "等6个PR" in text and "Step 12等）" in text, text


def test_a_new_default_said_outside_the_summary_is_a_default_change_not_compatible(tmp_path):
    """verl #6526 made bf16 optimizer states the default: its "Backward compatibility"
    section said existing bf16 runs get other numerics and how to opt back into the old
    layout, its table "bf16 (new default)". Because the same body also said a kwarg's
    default "preserves previous behavior", the report told readers the PR was compatible
    with existing setups."""
    b = GitRepoBuilder(tmp_path / "repo")
    b.commit("initial", "2026-01-05T10:00:00+00:00", {"acme/optim.py": b.lines(40)})
    body = ("### What does this PR do?\n\nThe optimizer keeps its Adam moments in the model dtype.\n\n"
            "### API and Usage Example\n\nThe new `bf16` kwarg defaults to True, preserving previous behavior for callers.\n\n"
            "```python\n# Opt back into the old fp32 layout via override:\n# +optim.precision_aware=False\n```\n\n"
            "### Backward compatibility\n\n- Existing bf16 runs will see slightly different numerics.\n")
    b.commit(f"[megatron] feat: align optimizer states with model precision (#10)\n\n{body}",
             "2026-01-13T09:00:00+00:00", {"acme/optim.py": b.lines(60)})
    d = _report(b.path, "2026-W03")
    key = next(i["text"] for i in d["sections"]["key_changes"]["items"] if i["prs"] == [10])
    assert "It changes a default, so behaviour changes even for users who change no setting." in key
    assert "compatible with existing setups" not in key
    assert "changes a default behaviour" in d["sections"]["summary"]["text"]


def _breaking_week(tmp_path, noted: bool, lang: str = "en") -> dict:
    b = GitRepoBuilder(tmp_path / "repo")
    b.commit("initial", "2026-01-05T10:00:00+00:00", {"acme/io.py": b.lines(40), "conf/train.yaml": "sched: linear\n"})
    notes = ("\n\n## Migration guide\n\n### Example\n```yaml\nsched: linear\n```\n\n"
             "Rename `sched` to `scheduler` in your training config.\n" if noted else
             "\n\n## Breaking changes\n\nNone\n")
    b.commit(f"[BREAKING][trainer] feat: a scheduler config of its own (#10)\n\nMoves the scheduler settings.{notes}",
             "2026-01-13T09:00:00+00:00", {"acme/io.py": b.lines(60), "conf/train.yaml": "scheduler: linear\n"})
    b.commit("[BREAKING][io] feat: one loader for every format (#11)\n\nReplaces the readers.",
             "2026-01-14T09:00:00+00:00", {"acme/io.py": b.lines(90)})
    return _report(b.path, "2026-W03", lang)


def test_the_migration_notes_a_pr_gives_are_quoted_and_pointed_to(tmp_path):
    """verl #3984 had a "Migration Guide" and #6974 "Breaking / migration notes"; the report
    said neither, and asked maintainers to write the migration note they had written."""
    d = _breaking_week(tmp_path, noted=True)
    key = next(i["text"] for i in d["sections"]["key_changes"]["items"] if i["prs"] == [10])
    assert ('Its migration notes ("Migration guide") say: Rename `sched` to `scheduler` in your training config.'
            in key), key
    recs = {i["name"]: i["text"] for i in d["sections"]["recommendations"]["items"]}
    assert "Migration notes are in the description of #10." in recs["Check configuration before upgrading"]
    # the note to write is asked for the PR that gives none
    assert "#11" in recs["Publish a migration note"] and "#10" not in recs["Publish a migration note"]
    zh = _breaking_week(tmp_path / "zh", noted=True, lang="zh")
    key = next(i["text"] for i in zh["sections"]["key_changes"]["items"] if i["prs"] == [10])
    assert "其迁移说明（“Migration guide”）写道：Rename `sched` to `scheduler` in your training config。" in key


def test_a_breaking_changes_section_that_says_none_is_no_migration_note(tmp_path):
    d = _breaking_week(tmp_path, noted=False)
    text = json.dumps(d["sections"])
    assert "migration notes" not in text.lower() and "Migration notes" not in text
    assert "#10" in next(i["text"] for i in d["sections"]["recommendations"]["items"]
                         if i["name"] == "Publish a migration note")


def test_a_pr_whose_notes_are_all_there_is_pointed_to_not_asked_for_a_note(tmp_path):
    """#6974 was not marked breaking, but its notes tell users to update config strings."""
    b = GitRepoBuilder(tmp_path / "repo")
    b.commit("initial", "2026-01-05T10:00:00+00:00", {"acme/io.py": b.lines(40)})
    b.commit("[io] feat: sharded sync (#10)\n\nAdds a sharded sync engine.\n\n## Breaking / migration notes\n\n"
             "- The loader moved to `acme.io.load` (update `loader` config strings).\n",
             "2026-01-13T09:00:00+00:00", {"acme/io.py": b.lines(60)})
    d = _report(b.path, "2026-W03")
    (key,) = d["sections"]["key_changes"]["items"]
    assert "does not state a default or a compatibility impact" not in key["text"]
    assert "Its migration notes (\"Breaking / migration notes\") say: The loader moved to" in key["text"]
    recs = {i["name"]: i["text"] for i in d["sections"]["recommendations"]["items"]}
    assert recs["Publish a migration note"] == ("Maintainers should carry over the migration notes of #10 into the "
                                                "release notes, so that users upgrading find them.")
    assert recs["Check configuration before upgrading"].endswith("Migration notes are in the description of #10.")


def test_a_tools_own_folder_is_neither_configuration_nor_source(tmp_path):
    """verl 2026-W31's main risk was "#7219 (.gemini/config.yaml deleted)", a code-review
    bot's settings; flask #4969 (.devcontainer/ and CONTRIBUTING.rst) was asked for tests."""
    b = GitRepoBuilder(tmp_path / "repo")
    b.commit("initial", "2026-01-05T10:00:00+00:00", {"src/app.py": b.lines(40), ".gemini/config.yaml": "review: true\n",
                                                       ".devcontainer/on-create-command.sh": b.lines(5)})
    b.commit("[ci] chore: remove gemini code review (#10)", "2026-01-13T09:00:00+00:00", {".gemini/config.yaml": None})
    b.commit("feat: a dev container that installs the extras (#11)", "2026-01-14T09:00:00+00:00",
             {".devcontainer/on-create-command.sh": b.lines(25), ".devcontainer/devcontainer.json": "{}\n"})
    d = _report(b.path, "2026-W03")
    risky = {r["kind"]: r["prs"] for r in d["risks"]}
    assert "config_change" not in risky and 11 not in risky.get("missing_tests", []), risky
    assert "Check configuration before upgrading" not in json.dumps(d["sections"]["recommendations"])


def test_docs_and_run_scripts_kept_beside_the_core_code_are_not_core_code(tmp_path):
    """verl keeps READMEs and run scripts in its core folders (`verl/experimental/
    fully_async_policy/shell/*.sh`): "[doc] fix: repair broken Ascend tutorial links and
    shell filename" (#7074) read as a large change in core code with no tests, and a
    README-only PR as one that touches a core path."""
    b = GitRepoBuilder(tmp_path / "repo")
    core = "pkg/engine"
    b.commit("initial", "2026-01-05T10:00:00+00:00", {f"{core}/main.py": b.lines(400), f"{core}/README.md": b.lines(50),
                                                       f"{core}/shell/run_8gpu.sh": b.lines(150)})
    b.commit("[doc] fix: repair the run script's name (#10)", "2026-01-13T09:00:00+00:00",
             {f"{core}/shell/run_8gpu.sh": None, f"{core}/shell/run_8_gpu.sh": b.lines(150)})
    b.commit("[doc] chore: explain the engine (#11)", "2026-01-14T09:00:00+00:00", {f"{core}/README.md": b.lines(300)})
    b.commit("[engine] fix: step the engine once (#12)", "2026-01-15T09:00:00+00:00", {f"{core}/main.py": b.lines(400)})
    (b.path / "repobrief.toml").write_text(f'core_paths = ["{core}"]\n', encoding="utf-8")
    code, out, err = run_cli("report", str(b.path), "--config", str(b.path / "repobrief.toml"), "--name", "acme/pkg",
                             "--week", "2026-W03", "--format", "json", "-q")
    assert code == 0, err
    prs = {p["number"]: p for p in json.loads(out)["pull_requests"]}
    for n in (10, 11):
        assert [t for t in prs[n]["importance_terms"] if t["code"] == "core_path"] == [], prs[n]["importance_reasons"]
        assert {r["kind"] for r in prs[n]["risks"]} & {"core_path", "missing_tests"} == set(), prs[n]["risks"]
    # the code beside them still is core code, and a fix to it without tests is asked for them
    assert any(t["code"] == "core_path" for t in prs[12]["importance_terms"])
    assert {"core_path", "missing_tests"} <= {r["kind"] for r in prs[12]["risks"]}


def test_a_titles_stray_spaces_and_full_stop_leave_no_gap_in_the_report(tmp_path):
    """verl #239 "clean unused package . (#239)" read "Clean unused package  (#239)" in the
    trends and risks; #1442's "add `engine_kwargs`  in vllm_rollout_spmd" kept its two spaces."""
    b = GitRepoBuilder(tmp_path / "repo")
    b.commit("initial", "2026-01-05T10:00:00+00:00", {"src/app.py": b.lines(40)})
    _one_file_prs(b, [("[trainer] chore: clean unused package .", "src/trainer/a.py"),
                      ("[trainer] feat: add `engine_kwargs`  in the rollout", "src/trainer/b.py"),
                      ("[trainer] fix: wrong args desc  .", "src/trainer/c.py")])
    d = _report(b.path, "2026-W03")
    assert [p["gist"] for p in d["pull_requests"]] == ["Clean unused package", "Add `engine_kwargs` in the rollout",
                                                      "Fix wrong args desc"]
    text = json.dumps(d["sections"], ensure_ascii=False)
    assert "Clean unused package (#10)" in text and "  " not in text and " (#" in text


@pytest.mark.parametrize("theme,platform", [
    ('name = "Ascend NPU"\nname_zh = "昇腾NPU"\nkeywords = ["npu", "ascend"]', "Ascend NPU"),  # the docs' example
    ('name = "Enflame GCU"\nkeywords = ["gcu"]\nplatform = true', "Enflame GCU"),  # a platform repobrief does not know
    ('name = "Ascend NPU"\nkeywords = ["npu", "ascend"]\nplatform = false', None),
    # a theme of the same PRs that is no platform leaves the discovered one in place
    ('name = "Rollout"\nkeywords = ["rollout"]', "Ascend NPU"),
])
def test_a_configured_platform_theme_asks_its_team_to_validate(tmp_path, theme, platform):
    """Configuring the documented "Ascend NPU" theme made it take the place of the
    discovered `npu` one, and the week's "Validate on Ascend NPU" was gone; so did a
    configured theme that held the same PRs."""
    b = GitRepoBuilder(tmp_path / "repo")
    b.commit("initial", "2026-01-05T10:00:00+00:00", {"src/app.py": b.lines(40)})
    _one_file_prs(b, [("[npu] fix: ascend rollout gcu hang", "src/npu/a.py"),
                      ("[npu] feat: ascend rollout gcu kernels", "src/npu/b.py"),
                      ("[npu] fix: ascend rollout gcu dtype", "src/npu/c.py")])
    (b.path / "repobrief.toml").write_text(f"[[themes]]\n{theme}\n", encoding="utf-8")
    d = _report(b.path, "2026-W03")
    recs = {i["name"]: i for i in d["sections"]["recommendations"]["items"]}
    validate = [name for name in recs if name.startswith("Validate on")]
    assert validate == ([f"Validate on {platform}"] if platform else []), recs.keys()
    assert ("Rollout" in {t["name"] for t in d["themes"]}) == ("Rollout" in theme)
    if platform:
        assert recs[validate[0]]["prs"] == [10, 11, 12]
        assert recs[validate[0]]["text"].startswith(f"The {platform} platform team should run its test suite")


def test_a_change_reverted_the_same_week_is_asked_nothing_and_shown_once(tmp_path):
    """verl 2026-W15: #5904 was reverted by #5942 and landed again as #5945; a
    recommendation still listed #5904, and a theme gave the same title twice."""
    b = GitRepoBuilder(tmp_path / "repo")
    b.commit("initial", "2026-01-05T10:00:00+00:00", {"acme/npu/attn.py": b.lines(40)})
    b.commit("[npu] fix: adjust the attention mask shape (#10)", "2026-01-12T09:00:00+00:00", {"acme/npu/attn.py": b.lines(50)})
    b.commit('Revert "[npu] fix: adjust the attention mask shape (#10)" (#11)\n\nReverts acme/repo#10',
             "2026-01-13T09:00:00+00:00", {"acme/npu/attn.py": b.lines(40)})
    b.commit("[npu] fix: adjust the attention mask shape (#12)", "2026-01-14T09:00:00+00:00", {"acme/npu/attn.py": b.lines(52)})
    for i in range(4):
        b.commit(f"[npu] fix: npu kernel issue {i} (#{20 + i})", f"2026-01-15T0{i}:00:00+00:00", {f"acme/npu/k{i}.py": b.lines(9)})
    d = _report(b.path, "2026-W03")
    recs = d["sections"]["recommendations"]["items"]
    assert recs and all(10 not in i["prs"] and "#10" not in i["text"] for i in recs), recs
    patch = next(i["text"] for i in recs if i["name"] == "Plan a patch release")
    assert patch.startswith("With 5 fixes merged this week")  # #12 and the four kernels, not #10
    shown = [i["text"] for i in d["sections"]["trends"]["items"] if "Adjust the attention mask shape" in i["text"]]
    assert shown and all(t.count("Adjust the attention mask shape") == 1 and "(#12)" in t for t in shown), shown


def test_a_typo_sweep_is_no_bug_fix_and_a_typo_in_a_name_still_is(tmp_path):
    """verl #1879 "fix: typos" (17 lines over 10 files) scored 5.3 with "bug fix +2"."""
    b = GitRepoBuilder(tmp_path / "repo")
    b.commit("initial", "2026-01-05T10:00:00+00:00", {f"src/m{i}.py": b.lines(40) for i in range(4)})
    b.commit("fix: typos (#10)", "2026-01-13T09:00:00+00:00", {f"src/m{i}.py": b.lines(42) for i in range(4)})
    b.commit("fix typo: clip_cvo_ratio to clip_cov_ratio (#11)", "2026-01-14T09:00:00+00:00", {"src/m0.py": b.lines(43)})
    prs = {p["number"]: p for p in _report(b.path, "2026-W03")["pull_requests"]}
    assert prs[10]["type"] == "style" and prs[10]["importance"] <= 2, prs[10]
    assert prs[11]["type"] == "fix"  # a renamed key users write
    b.commit("fix typo in quickstart (#12)", "2026-01-20T09:00:00+00:00", {"docs/quickstart.rst": b.lines(3)})
    (pr,) = _report(b.path, "2026-W04")["pull_requests"]
    assert pr["type"] == "docs"  # a typo in the docs, however the title words it


def test_a_breaking_section_in_the_body_is_a_breaking_change(tmp_path):
    """verl #3496 declared "⚠️ Breaking: we adopt a new format for Qwen2VL's position ids"
    in its body; the summary did not call it a breaking change."""
    b = GitRepoBuilder(tmp_path / "repo")
    b.commit("initial", "2026-01-05T10:00:00+00:00", {"acme/models/qwen.py": b.lines(40)})
    body = ("### What does this PR do?\n\nRefactors the qwen2vl patches.\n\n#### ⚠️ Breaking\n"
            "We adopt a new format for the position ids: (4, batch size, seq len).\n")
    b.commit(f"[model] fix: refactor qwen2vl patches (#10)\n\n{body}", "2026-01-13T09:00:00+00:00",
             {"acme/models/qwen.py": b.lines(60)})
    d = _report(b.path, "2026-W03")
    (risk,) = [r for r in d["risks"] if r["kind"] == "breaking_change"]
    assert risk["prs"] == [10] and "BREAKING CHANGE: We adopt a new format for the position ids" in risk["evidence"][0]
    assert "Breaking change" in d["sections"]["summary"]["text"] or "breaking change" in d["sections"]["summary"]["text"]
    (key,) = d["sections"]["key_changes"]["items"]
    assert 'Its migration notes ("⚠️ Breaking") say: We adopt a new format for the position ids' in key["text"]


def test_code_after_a_lead_in_is_not_quoted_as_its_description(tmp_path):
    """Seven verl fixes began "… crashes with:" and a traceback, which the key change
    quoted as prose ("crashes with: RuntimeError: max(): Expected reduction dim …")."""
    key = _key_change_of(tmp_path, "[trainer] fix: return NaN for empty tensors (#10)",
                         "### What does this PR do?\n\nWhen every sample is aborted, `compute_data_metrics` crashes "
                         "with:\n\n```\nRuntimeError: max(): Expected reduction dim to be specified\n```\n\n"
                         "This PR returns NaN for the metrics of an empty batch instead.\n")
    assert "RuntimeError" not in key and "crashes with" not in key, key


def _key_change_of(tmp_path, title: str, body: str) -> str:
    """The key change of a week whose one PR has this title and body."""
    b = GitRepoBuilder(tmp_path / "repo")
    b.commit("initial", "2026-01-05T10:00:00+00:00", {"acme/mod.py": b.lines(40)})
    b.commit(f"{title}\n\n{body}", "2026-01-13T09:00:00+00:00", {"acme/mod.py": b.lines(48)})
    (key,) = _report(b.path, "2026-W03")["sections"]["key_changes"]["items"]
    return key["text"]


def test_migration_notes_are_not_copied_into_a_revert_or_said_twice(tmp_path):
    b = GitRepoBuilder(tmp_path / "repo")
    b.commit("initial", "2026-01-05T10:00:00+00:00", {"acme/io.py": b.lines(40), "acme/x.py": b.lines(40)})
    notes = "\n\n## Migration notes\n\nUse `acme.io.load` instead of `acme.legacy.read` everywhere.\n"
    b.commit(f"feat: one loader (#10)\n\nAdds it.{notes}", "2026-01-06T09:00:00+00:00", {"acme/io.py": b.lines(60)})
    b.commit(f'Revert "feat: one loader (#10)" (#11)\n\nReverts acme/repo#10\n\nOriginal description:{notes}',
             "2026-01-13T09:00:00+00:00", {"acme/io.py": b.lines(40)})
    b.commit("refactor: the scheduler reads `scheduler` (#12)\n\n## Summary of breaking changes\n\n"
             "Rename `sched` to `scheduler` in your training config.\n", "2026-01-14T09:00:00+00:00", {"acme/x.py": b.lines(44)})
    d = _report(b.path, "2026-W03")
    keys = {i["prs"][0]: i["text"] for i in d["sections"]["key_changes"]["items"]}
    assert "migration notes" not in keys[11].lower()
    assert keys[12].count("Rename `sched` to `scheduler` in your training config") == 1, keys[12]
    assert "#11" not in json.dumps([i for i in d["sections"]["recommendations"]["items"] if "igration" in i["text"]])


def test_a_template_hint_wrapped_over_lines_is_neither_description_nor_test_evidence(tmp_path):
    """verl's template hints are quotes wrapped over several lines; the lines after the
    first have no `>` but belong to the quote (Markdown's lazy continuation). 173 key
    changes lost their description to "accomplish.", and a Test section holding only
    "…validate by experiment(s) and show results like training curve plots" counted as
    test evidence (verl #6777, #6796, #6862)."""
    b = GitRepoBuilder(tmp_path / "repo")
    b.commit("initial", "2026-01-05T10:00:00+00:00", {"acme/npu.py": b.lines(40)})
    body = ("### What does this PR do?\n\n> Add **concise** overview of what this PR aims to achieve or\n"
            "accomplish. Reference related GitHub issues and PRs that help with\nthe review.\n\n"
            "Isolates the per-model NPU patches so that one failing model does not break the others.\n\n"
            "### Test\n\n> For changes that can not be tested by CI (e.g., algorithm\n"
            "implementation, new model support), validate by experiment(s) and show\n"
            "results like training curve plots, evaluation results, etc.\n")
    b.commit(f"[npu] feat: per-model NPU patches with fault isolation (#10)\n\n{body}", "2026-01-13T09:00:00+00:00",
             {"acme/npu.py": b.lines(90)})
    d = _report(b.path, "2026-W03")
    (key,) = d["sections"]["key_changes"]["items"]
    assert key["text"].startswith("The description says: Isolates the per-model NPU patches so that one failing model "
                                  "does not break the others.")
    assert [r["prs"] for r in d["risks"] if r["kind"] == "missing_tests"] == [[10]]


def test_a_default_change_is_a_risk_and_checked_before_upgrading(tmp_path):
    """flask #5054 "No cookie domain by default" was called a default change in its key
    change, but no risk or recommendation said so; the report format lists default
    changes among the risks."""
    b = GitRepoBuilder(tmp_path / "repo")
    b.commit("initial", "2026-01-05T10:00:00+00:00", {"src/sessions.py": b.lines(40), "tests/test_s.py": b.lines(5)})
    b.commit("feat: no cookie domain by default (#10)\n\nThe session cookie no longer sets a domain by default.",
             "2026-01-13T09:00:00+00:00", {"src/sessions.py": b.lines(44), "tests/test_s.py": b.lines(9)})
    for lang, title, says in (("en", "Default changes", "#10: defaults changed (No cookie domain by default)."),
                              ("zh", "默认行为变更", "#10改变了默认行为（No cookie domain by default）。")):
        d = _report(b.path, "2026-W03", lang)
        (risk,) = [r for r in d["risks"] if r["kind"] == "default_change"]
        assert risk["severity"] == "medium" and risk["prs"] == [10]
        item = next(i for i in d["sections"]["risks"]["items"] if i["name"] == title)
        assert item["text"].startswith(says), item["text"]
        assert [10] == next(i["prs"] for i in d["sections"]["recommendations"]["items"] if i["prs"] and i["prs"][0] == 10)
    # a default of CI, docs or tests is nobody's configuration
    b.commit("ci: run pre-commit on all files by default (#11)", "2026-01-14T09:00:00+00:00",
             {".github/workflows/lint.yml": "on: push\n"})
    assert [r["prs"] for r in _report(b.path, "2026-W03")["risks"] if r["kind"] == "default_change"] == [[10]]


def test_a_description_written_into_the_templates_quote_is_the_description(tmp_path):
    """118 verl authors typed their description after the template's "> " marker; every
    quoted line was dropped, so #6522's key change read "weights." and #4611's "context
    parallel"."""
    key = _key_change_of(tmp_path, "[vllm] fix: reset all caches after weight updates (#10)",
                         "### What does this PR do?\n\n> This PR resets all available vLLM rollout caches after "
                         "updating model\nweights.\n\n### Test\n\n> For changes that can not be tested by CI (e.g., "
                         "algorithm\nimplementation, new model support), validate by experiment(s) and show\nresults.\n")
    assert key.startswith("The description says: This PR resets all available vLLM rollout caches after updating model "
                          "weights."), key


def test_a_migration_heading_and_its_quote_stay_inert_in_every_format(tmp_path):
    """The heading and the sentence of a PR's migration notes are third-party text:
    escaped in Markdown and HTML, with terminal control characters removed."""
    b = GitRepoBuilder(tmp_path / "repo")
    b.commit("initial", "2026-01-05T10:00:00+00:00", {"acme/io.py": b.lines(40)})
    body = ("Moves the loader.\n\n## Breaking \x1b[2J<script>alert(1)</script> changes\n\n"
            "Rename `sched` to <img src=x onerror=alert(1)> in your **config** files.\n")
    b.commit(f"feat: one loader (#10)\n\n{body}", "2026-01-13T09:00:00+00:00", {"acme/io.py": b.lines(60)})
    out = tmp_path / "out"
    code, _, err = run_cli("report", str(b.path), "--name", "acme/young", "--week", "2026-W03", "--lang", "en",
                           "--format", "md,html", "--out", str(out), "-q")
    assert code == 0, err
    md = (out / "acme__young-2026-W03.en.md").read_text(encoding="utf-8")
    html = (out / "acme__young-2026-W03.en.html").read_text(encoding="utf-8")
    assert "Its migration notes (" in md and "Rename `sched`" in md
    for text in (md, html):
        assert "\x1b" not in text and "<script>alert" not in text and "<img src=x" not in text


def test_a_table_row_of_a_title_only_pr_says_what_kind_of_change_it_is_not_its_title_again(tmp_path):
    """A PR whose description states no change of its own had its gist repeated as its key
    contribution (597 of 868 verl rows in English). The row now says the kind of change,
    where and how large it is, and why it ranks; a PR whose description says more keeps it."""
    b = GitRepoBuilder(tmp_path / "repo")
    core = "pkg/engine"
    b.commit("initial", "2026-01-05T10:00:00+00:00", {f"{core}/main.py": b.lines(400), "pkg/app.py": b.lines(40)})
    b.commit("[engine] fix: step the engine once (#10)", "2026-01-13T09:00:00+00:00", {f"{core}/main.py": b.lines(460)})
    b.commit("[engine] feat: add a scheduler (#11)\n\nThis PR adds a cosine scheduler that warms the rate up over the "
             "first steps.", "2026-01-14T09:00:00+00:00", {f"{core}/sched.py": b.lines(300)})
    (b.path / "repobrief.toml").write_text(f'core_paths = ["{core}"]\nthreshold = 0\n', encoding="utf-8")
    rows = {}
    for lang in ("en", "zh"):
        code, out, err = run_cli("report", str(b.path), "--config", str(b.path / "repobrief.toml"), "--name", "acme/pkg",
                                 "--week", "2026-W03", "--lang", lang, "--format", "json", "-q")
        assert code == 0, err
        d = json.loads(out)
        rows[lang] = {r["number"]: r for r in d["sections"]["table"]["rows"]}
        lines = next(p["lines_added"] + p["lines_deleted"] for p in d["pull_requests"] if p["number"] == 10)
    assert rows["en"][10]["key_contribution"] == f"Fix in engine, {lines} lines; touches the core path {core}"
    assert rows["zh"][10]["key_contribution"] == f"问题修复（engine），{lines}行；涉及核心路径{core}"
    assert rows["en"][10]["gist"] == "Step the engine once"
    # the description's own statement stays, in the table as in the PR's analysis
    assert rows["en"][11]["key_contribution"].startswith("This PR adds a cosine scheduler")
    assert rows["zh"][11]["key_contribution"].startswith("新功能：This PR adds a cosine scheduler")
