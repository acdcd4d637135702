"""End to end on the real histories: the report a user gets from `repobrief report`."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import pytest
from clirun import run_cli

from repobrief.cli import main

GOLDEN = Path(__file__).parent / "golden"
VERL = ["--name", "verl-project/verl", "--week", "2026-W26", "--tz", "Asia/Shanghai"]
HEADINGS = {
    "zh": ["1. 执行摘要", "2. 本周重点变化", "3. 模块与主题趋势", "4. 风险观察", "5. 重点PR速览", "6. 后续建议"],
    "en": ["1. Executive summary", "2. Key changes", "3. Module and theme trends", "4. Risk observations",
           "5. PR quick view", "6. Recommendations"],
}




@pytest.fixture(scope="module")
def verl_json(verl_repo, tmp_path_factory):
    out = tmp_path_factory.mktemp("out")
    main_args = ["report", str(verl_repo), *VERL, "--lang", "en", "--format", "json,md", "--out", str(out), "-q"]
    try:
        main(main_args)
    except SystemExit as e:
        assert e.code in (0, None)
    return json.loads((out / "verl-project__verl-2026-W26.en.json").read_text(encoding="utf-8"))


def test_verl_week_json_contract(verl_json):
    d = verl_json
    for key in ("schema_version", "repository", "week", "timezone", "range", "stats", "pull_requests", "themes",
                "risks", "sections", "engine"):
        assert key in d, key
    assert d["repository"] == "verl-project/verl" and d["week"] == "2026-W26" and d["timezone"] == "Asia/Shanghai"
    assert d["range"]["first_day"] == "2026-06-22" and d["range"]["last_day"] == "2026-06-28"
    assert d["stats"]["merged_prs"] == 22 and len(d["pull_requests"]) == 22
    for key in ("merged_prs", "direct_commits", "contributors", "first_time_contributors", "lines_added",
                "lines_deleted", "by_type", "by_module", "by_theme", "week_over_week"):
        assert key in d["stats"], key
    numbers = {p["number"] for p in d["pull_requests"]}
    for p in d["pull_requests"]:
        for key in ("number", "title", "url", "author", "merged_at", "modules", "type", "themes", "breaking",
                    "importance", "importance_reasons", "key_contribution", "risks"):
            assert key in p, key
        assert 0.0 <= p["importance"] <= 10.0 and round(p["importance"], 1) == p["importance"]
        assert p["importance_reasons"] and p["url"] == f"https://github.com/verl-project/verl/pull/{p['number']}"
    # The line counts are exactly git's numstat of the squash commits.
    assert d["stats"]["lines_added"] + d["stats"]["lines_deleted"] == 7565
    breaking = [r for r in d["risks"] if r["kind"] == "breaking_change"]
    assert breaking and 6823 in breaking[0]["prs"] and breaking[0]["severity"] == "high"
    assert next(p for p in d["pull_requests"] if p["number"] == 6823)["breaking"] is True
    for r in d["risks"]:
        assert set(r["prs"]) <= numbers and r["title"] and r["text"] and r["evidence"]
    for t in d["themes"]:
        assert t["count"] == len(t["prs"]) and set(t["prs"]) <= numbers
    assert d["engine"]["name"] == "offline"
    card = d["card"]
    # Sections, table rows and the card carry every field of their models (they are written out by hand).
    from dataclasses import fields

    from repobrief.models import Card, Item, Risk, TableRow, Theme

    assert set(card) == {f.name for f in fields(Card)}
    assert all(set(r) == {f.name for f in fields(TableRow)} for r in d["sections"]["table"]["rows"])
    assert d["sections"]["key_changes"]["items"]
    assert all(set(i) == {f.name for f in fields(Item)} for i in d["sections"]["key_changes"]["items"])
    assert d["risks"] and all(set(r) == {f.name for f in fields(Risk)} for r in d["risks"])
    assert d["themes"] and all(set(t) == {f.name for f in fields(Theme)} | {"count"} for t in d["themes"])
    assert card["title"] == "verl-project/verl week 26, 2026 (06-22 to 06-28)"
    assert len(card["highlights"]) == 3 and all(re.search(r"\(#\d+\)$", h) for h in card["highlights"])
    assert card["risks"][0].startswith("Breaking changes: #6823") and card["button"] == "Full report"


def _cited_outside_the_week(report: dict) -> set[int]:
    numbers = {p["number"] for p in report["pull_requests"]}
    text = json.dumps(report["sections"], ensure_ascii=False) + json.dumps(report["card"], ensure_ascii=False)
    cited = {int(n) for n in re.findall(r"#(\d+)", text)}
    assert cited
    return cited - numbers


def test_every_cited_pr_belongs_to_the_week(verl_json):
    assert _cited_outside_the_week(verl_json) == set()


@pytest.mark.parametrize("week", ["2026-W20", "2026-W28", "2026-W30", "2026-W31"])
def test_other_prs_named_in_titles_and_bodies_are_not_cited(verl_repo, week):
    """Bodies and titles refer to PRs of other weeks ("Split from #6118", a title's
    "(#6068)"): the report keeps what they say without citing those PRs."""
    code, out, _ = run_cli("report", str(verl_repo), *VERL[:2], "--week", week, "--tz", "Asia/Shanghai",
                           "--lang", "zh", "--format", "json", "-q")
    assert code == 0
    assert _cited_outside_the_week(json.loads(out)) == set()


def test_a_revert_of_an_earlier_week_names_the_reverted_pr_in_words(tmp_path):
    from gitrepo import GitRepoBuilder

    b = GitRepoBuilder(tmp_path / "repo")
    b.commit("init", "2026-06-01T10:00:00+00:00", {"src/a.py": b.lines(40)})
    b.commit("feat: old thing (#5)", "2026-06-10T10:00:00+00:00", {"src/b.py": b.lines(10)}, author="old")
    b.commit("feat: add cache (#20)", "2026-06-22T10:00:00+00:00", {"src/c.py": b.lines(50)}, author="bob")
    b.commit('Revert "feat: old thing (#5)" (#22)', "2026-06-24T10:00:00+00:00", {"src/b.py": None}, author="carol")
    code, out, _ = run_cli("report", str(b.path), "--name", "acme/proj", "--week", "2026-W26", "--lang", "en",
                           "--format", "json", "-q")
    assert code == 0
    d = json.loads(out)
    assert _cited_outside_the_week(d) == set()
    change = next(i["text"] for i in d["sections"]["key_changes"]["items"] if i["prs"] == [22])
    assert "It reverts an earlier PR, “feat: old thing”." in change


def test_importance_spreads_and_table_follows_threshold(verl_json):
    scores = sorted((p["importance"] for p in verl_json["pull_requests"]), reverse=True)
    assert scores[0] >= 7.0 and scores[-1] <= 2.0  # a few high, typo fixes low
    typo = next(p for p in verl_json["pull_requests"] if p["number"] == 6855)  # "fix typo: clip_cvo_ratio …"
    assert typo["importance"] < 5.0
    rows = verl_json["sections"]["table"]["rows"]
    assert [r["importance"] for r in rows] == sorted((r["importance"] for r in rows), reverse=True)
    assert all(r["importance"] >= 5.0 for r in rows)
    assert len(rows) == sum(1 for s in scores if s >= 5.0)


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_markdown_report_and_golden(verl_repo, lang, update_golden):
    code, out, _ = run_cli("report", str(verl_repo), *VERL, "--lang", lang, "--format", "md", "-q")
    assert code == 0
    positions = [out.index(h) for h in HEADINGS[lang]]
    assert positions == sorted(positions)
    if lang == "zh":
        assert out.startswith("# verl-project/verl 2026 第26周周报")
        assert "2026-06-22至2026-06-28" in out and "22个PR" in out
        assert "（注：按重要性降序排列，仅列出重要性≥5的PR）" in out
        assert "| PR编号 | 标题要点 | 重要性 | 关键贡献 |" in out
    else:
        assert out.startswith("# verl-project/verl weekly report, 2026 week 26")
        assert "2026-06-22 to 2026-06-28" in out and "merged 22 PRs" in out
        assert "(Sorted by importance, descending; only PRs with importance ≥ 5 are listed.)" in out
    assert "#6823" in out.split(HEADINGS[lang][1])[0]  # the summary calls out the breaking change
    golden = GOLDEN / f"verl-2026-W26.{lang}.md"
    if update_golden:
        golden.parent.mkdir(exist_ok=True)
        golden.write_text(out, encoding="utf-8")
    assert golden.exists(), "run `pytest --update-golden` to create the golden files"
    assert out == golden.read_text(encoding="utf-8"), "report changed; if intended, run `pytest --update-golden`"


def test_threshold_flag_changes_the_table(verl_repo):
    code, out, _ = run_cli("report", str(verl_repo), *VERL, "--lang", "en", "--threshold", "7.5", "-q")
    assert code == 0 and "importance ≥ 7.5 are listed" in out
    table = out.split("## 5. PR quick view")[1].split("## 6.")[0]
    scores = [float(x) for x in re.findall(r"\| (\d+\.\d) \|", table)]
    assert scores and all(s >= 7.5 for s in scores)


def test_empty_week_gives_a_short_valid_report(verl_repo):
    code, out, _ = run_cli("report", str(verl_repo), "--name", "verl-project/verl", "--week", "2024-W02",
                       "--tz", "Asia/Shanghai", "--lang", "en", "-q")
    assert code == 0
    assert "No pull requests were merged" in out and "## 6. Recommendations" in out
    # nor does the zh closing line send the reader to PRs there are none of
    code, out, _ = run_cli("report", str(verl_repo), "--name", "verl-project/verl", "--week", "2024-W02",
                           "--tz", "Asia/Shanghai", "-q")
    assert code == 0 and out.rstrip().endswith("以上为本周周报。") and "查阅对应PR" not in out


def _sections(page: str) -> dict[str, str]:
    """Each `<section id=…>` of a report page as its text, tags and charts left out."""
    out = {}
    for sid, inner in re.findall(r'<section id="([\w-]+)">(.*?)</section>', page, re.S):
        inner = re.sub(r"<svg.*?</svg>|<figure>.*?</figure>", "", inner, flags=re.S)
        out[sid] = " ".join(html.unescape(re.sub(r"<[^>]+>", " ", inner)).split())
    return out


@pytest.mark.parametrize("lang, said", [
    ("en", {"no_theme": "No module or theme stands out in this week's PRs.", "no_prs": "No PRs were merged this week.",
            "no_risks": "No notable risks this week.", "no_table": "No PR reached the importance threshold of 5 this week."}),
    ("zh", {"no_theme": "本周的PR未形成值得关注的模块或主题。", "no_prs": "本周没有合并的PR。",
            "no_risks": "本周无明显风险。", "no_table": "本周没有重要性达到5的PR。"}),
])
def test_an_empty_section_says_why_in_markdown_and_on_the_page(verl_repo, tmp_path, lang, said):
    """verl 2024-W46 merged one PR, tagged [misc]: no theme. Its trends section once said "No
    PRs were merged this week" under a summary of one merged PR, and the page left the
    trends and risks sections of any such week as bare headings, with an empty table and its
    sort note below the "no PR reached the threshold" line. 2024-W45 merged none."""
    for week in ("2024-W45", "2024-W46"):
        code, _, err = run_cli("report", str(verl_repo), "--name", "verl-project/verl", "--week", week, "--tz", "Asia/Shanghai",
                               "--lang", lang, "--format", "md,html", "--out", str(tmp_path), "-q")
        assert code == 0, err
    one_pr = (tmp_path / f"verl-project__verl-2024-W46.{lang}.md").read_text(encoding="utf-8")
    trends = one_pr.split("\n## 3.")[1].split("\n## 4.")[0]
    assert trends.strip().splitlines()[-1] == said["no_theme"] and said["no_prs"] not in one_pr
    raw = (tmp_path / f"verl-project__verl-2024-W46.{lang}.html").read_text(encoding="utf-8")
    page = _sections(raw)
    assert page["trends"].endswith(said["no_theme"]) and page["risks"].endswith(said["no_risks"])
    assert page["table"].endswith(said["no_table"]) and 'id="pr-table"' not in raw
    empty = _sections((tmp_path / f"verl-project__verl-2024-W45.{lang}.html").read_text(encoding="utf-8"))
    for sid in ("key-changes", "trends"):
        assert empty[sid].endswith(said["no_prs"]), sid
    assert empty["risks"].endswith(said["no_risks"])

def test_flask_dropping_python_versions_is_called_a_breaking_change(flask_repo):
    """flask marks no breaking change in its titles, and no flask week said one, though
    #5731 "drop end of life python versions" leaves users of those versions behind."""
    code, out, _ = run_cli("report", str(flask_repo), "--name", "pallets/flask", "--week", "2025-W20", "--lang", "en",
                           "--format", "json")
    assert code == 0
    rep = json.loads(out)
    assert [p["number"] for p in rep["pull_requests"] if p["breaking"]] == [5731]
    assert "#5731 (Drop end of life python versions) is a breaking change" in rep["sections"]["summary"]["text"]


def test_a_release_week_tells_users_to_plan_the_upgrade(flask_repo):
    """flask 2024-W46 released 3.1.0: the release PR scored 0.8 and read "It is routine
    maintenance.", and no recommendation said to upgrade."""
    code, out, _ = run_cli("report", str(flask_repo), "--name", "pallets/flask", "--week", "2024-W46", "--lang", "en",
                           "--format", "json")
    assert code == 0
    rep = json.loads(out)
    release = next(p for p in rep["pull_requests"] if p["number"] == 5640)
    assert "releases 3.1.0 +3.0" in release["importance_reasons"]
    change = next(i["text"] for i in rep["sections"]["key_changes"]["items"] if i["prs"] == [5640])
    assert change.startswith("It releases version 3.1.0") and "routine maintenance" not in change
    first = rep["sections"]["recommendations"]["items"][0]
    assert first["name"] == "Plan the upgrade to 3.1.0" and first["prs"] == [5640]


def test_a_quiet_week_is_not_called_a_spike_or_a_large_change(flask_repo):
    """flask 2026-W04 (two small PRs) once read "well above its usual level; expect follow-up
    fixes" for a module with one PR, and "one of the largest changes of recent weeks (14 lines)"."""
    code, out, _ = run_cli("report", str(flask_repo), "--name", "pallets/flask", "--week", "2026-W04",
                           "--tz", "Asia/Shanghai", "--lang", "en", "--format", "json")
    assert code == 0
    rep = json.loads(out)
    trends = {item["name"]: item["text"] for item in rep["sections"]["trends"]["items"]}
    assert trends and all("well above its usual level" not in text and "steady stream" not in text for text in trends.values())
    assert "Work here is occasional: too little to call a trend." in trends["app"]
    small = [p for p in rep["pull_requests"] if p["lines_added"] + p["lines_deleted"] < 100]
    texts = json.dumps(rep["sections"], ensure_ascii=False)
    assert small and "of the repository's recent PRs" not in texts


def test_flask_merge_commits_and_first_time_contributors(flask_repo):
    code, out, _ = run_cli("report", str(flask_repo), "--name", "pallets/flask", "--week", "2019-W22",
                       "--lang", "en", "--format", "json", "-q")
    assert code == 0
    d = json.loads(out)
    assert d["stats"]["merged_prs"] == 17
    prs = {p["number"]: p for p in d["pull_requests"]}
    assert prs[3245]["via"] == "merge" and prs[3245]["title"] == "move to src directory"
    assert prs[3234]["author"] == "tomowind"
    assert d["stats"]["first_time_contributors"] >= 5  # a PyCon sprint week
    assert d["stats"]["baseline"]["rank_merged_prs"] == 1


def test_custom_date_range(verl_repo):
    code, out, _ = run_cli("report", str(verl_repo), "--name", "verl-project/verl", "--since", "2026-06-22",
                       "--until", "2026-06-24", "--tz", "Asia/Shanghai", "--format", "json", "-q")
    assert code == 0
    d = json.loads(out)
    assert d["week"] == "2026-06-22..2026-06-24"
    assert all("2026-06-22" <= p["merged_at"][:10] <= "2026-06-24" for p in d["pull_requests"])
    assert 0 < d["stats"]["merged_prs"] < 22


def test_direct_commits_count_in_the_page_tiles_and_in_last_weeks_lines(tmp_path):
    """Commits pushed without a PR are part of the week's figures everywhere: the HTML
    header tiles show what the summary and the JSON say, and the change in lines from
    last week compares both weeks with their direct commits."""
    from gitrepo import GitRepoBuilder

    b = GitRepoBuilder(tmp_path / "repo")
    b.commit("initial", "2026-06-01T10:00:00+00:00", {"src/app.py": b.lines(30)})
    b.commit("feat: earlier (#11)", "2026-06-16T10:00:00+00:00", {"src/w.py": b.lines(20)}, author="carol")
    b.commit("hotfix pushed directly", "2026-06-17T10:00:00+00:00", {"src/v.py": b.lines(300)}, author="dave")
    b.commit("feat: add x (#12)", "2026-06-22T10:00:00+00:00", {"src/x.py": b.lines(10)}, author="alice")
    b.commit("tweak directly", "2026-06-23T10:00:00+00:00", {"src/y.py": b.lines(500)}, author="bob")
    out = tmp_path / "out"
    code, _, err = run_cli("report", str(b.path), "--name", "acme/d", "--week", "2026-W26", "--lang", "en",
                           "--format", "json,html", "--out", str(out), "-q")
    assert code == 0, err
    stats = json.loads((out / "acme__d-2026-W26.en.json").read_text(encoding="utf-8"))["stats"]
    assert (stats["contributors"], stats["lines_added"]) == (2, 510)
    assert stats["week_over_week"]["lines_added"]["previous"] == 320
    page = (out / "acme__d-2026-W26.en.html").read_text(encoding="utf-8")
    tiles = dict((label, value) for value, label in re.findall(r"<li><b>([^<]*)</b><span>([^<]*)</span></li>", page))
    assert tiles["contributors"] == "2" and tiles["lines added / deleted"] == "+510 / −0"


def test_control_characters_in_pr_text_reach_no_output(tmp_path):
    """A right-to-left override left open in a PR title would display the rest of the
    summary (other PRs' numbers and titles) reversed, in every format; an escape sequence
    would clear the terminal a Markdown report is printed to and retitle it."""
    from gitrepo import GitRepoBuilder

    b = GitRepoBuilder(tmp_path / "repo")
    b.commit("initial", "2026-06-01T10:00:00+00:00", {"src/app.py": b.lines(30)})
    b.commit("feat: faster loader \u202e and \u2066more\x1b]0;pwned\x07\x1b[2J (#12)\n\nThis makes the loader \u202dmuch"
             " faster \x1b[31mfor everyone.\x9b"
             "\n\nBREAKING CHANGE: the \u202eold loader flag is gone", "2026-06-22T10:00:00+00:00",
             {"src/core/x.py": b.lines(400)}, author="eve\u202e")
    b.commit("feat: add y (#13)", "2026-06-23T10:00:00+00:00", {"src/core/y.py": b.lines(200)}, author="bob")
    out = tmp_path / "out"
    code, _, err = run_cli("report", str(b.path), "--name", "acme/b", "--week", "2026-W26", "--lang", "en",
                           "--format", "md,html,json,slack,feishu,dingtalk,wecom", "--out", str(out), "-q")
    assert code == 0, err
    written = {p.name: p.read_text(encoding="utf-8") for p in out.iterdir()}
    assert len(written) == 7
    for name, text in written.items():
        assert not re.search("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]", text), name
    report = json.loads(written["acme__b-2026-W26.en.json"])
    assert report["pull_requests"][0]["title"] == "feat: faster loader  and more]0;pwned[2J (#12)"
    assert "This makes the loader much faster \\[31mfor everyone." in written["acme__b-2026-W26.en.md"]
    assert any("the old loader flag is gone" in e for r in report["risks"] for e in r["evidence"])


@pytest.mark.parametrize("folder", ["pkg\r\r# PWNED HEADING\r| a | b |\r", "\x1b]0;PWNED\x07\x1b[2Jcore\u202egnp.exe"])
def test_a_folders_name_moves_no_line_and_reaches_no_output_as_a_control(tmp_path, folder):
    """Module, theme and core-path names come from folders, which PRs name. A carriage
    return in one started a heading of its own in the Markdown (CommonMark ends a line
    there), and an escape sequence or a right-to-left override reached the terminal the
    report is printed to, the page, the cards and the JSON as it was. The JSON keeps the
    path whole, its bidirectional control written as an escape."""
    from gitrepo import GitRepoBuilder

    b = GitRepoBuilder(tmp_path / "repo")
    b.commit("initial", "2026-10-01T10:00:00+00:00", {"src/app.py": b.lines(30)})
    for i in range(4):
        b.commit(f"Improve stuff {i} (#{201 + i})", f"2026-11-0{2 + i}T09:00:00+00:00", {f"{folder}/m{i}.py": b.lines(400)})
    out = tmp_path / "out"
    args = ["report", str(b.path), "--name", "acme/b", "--week", "2026-W45", "--lang", "en"]
    code, _, err = run_cli(*args, "--format", "md,html,json,slack,feishu,dingtalk,wecom", "--out", str(out), "-q")
    assert code == 0, err
    code, printed, _ = run_cli(*args, "-q")
    assert code == 0
    # read_text would turn a carriage return into a newline
    written = {p.name: p.read_bytes().decode("utf-8") for p in out.iterdir()} | {"stdout": printed}
    for name, text in written.items():
        assert not re.search("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]", text), name
    assert "pwned" in printed.split("## 3.")[1]  # the folder's theme (lower case), written
    assert [line for line in printed.splitlines() if line.startswith("#")] == [
        "# acme/b weekly report, 2026 week 45", *(f"## {n}. {h}" for n, h in enumerate(
            ["Executive summary", "Key changes", "Module and theme trends", "Risk observations", "PR quick view",
             "Recommendations"], 1))]
    report = json.loads(written["acme__b-2026-W45.en.json"])
    assert report["pull_requests"][0]["files"][0]["path"] == f"{folder}/m0.py"
    if "\u202e" in folder:
        assert "\\u202e" in written["acme__b-2026-W45.en.json"]


def test_a_models_answer_loses_its_bidirectional_controls():
    from repobrief.llm.extract import extract_json

    assert extract_json('{"summary": "ok \\u202e (#13)", "items": [{"t": "x\u2067y"}]}') == \
        {"summary": "ok  (#13)", "items": [{"t": "xy"}]}


def test_a_pr_reverted_in_the_same_week_is_not_presented_as_live(tmp_path):
    """A feature merged and reverted a day later is gone by the week's end: the table
    marks it reverted, and neither the summary, the key changes, the risks nor the
    recommendations present it as a change to try or to watch."""
    from gitrepo import GitRepoBuilder

    b = GitRepoBuilder(tmp_path / "repo")
    b.commit("init", "2026-06-01T10:00:00+00:00", {"src/a.py": b.lines(40)})
    b.commit("feat: add cache (#20)", "2026-06-22T10:00:00+00:00", {"src/c.py": b.lines(50)}, author="bob")
    b.commit('Revert "feat: add cache (#20)" (#21)\n\nThis reverts commit abc.', "2026-06-23T10:00:00+00:00",
             {"src/c.py": None}, author="carol")
    code, out, _ = run_cli("report", str(b.path), "--name", "acme/proj", "--week", "2026-W26", "--lang", "en",
                           "--format", "json", "-q")
    assert code == 0
    d = json.loads(out)
    s = d["sections"]
    assert [(r["number"], r["gist"]) for r in s["table"]["rows"]] == [(20, "Add cache (reverted by #21)")]
    assert all(20 not in i["prs"] for i in s["key_changes"]["items"] + s["recommendations"]["items"])
    assert not any(20 in r["prs"] for r in d["risks"])
    assert "#20" not in json.dumps(s["recommendations"]) and "main risk" not in s["summary"]["text"]
    assert "It reverts Add cache (#20), merged earlier this week." in s["key_changes"]["items"][0]["text"]
    assert all(not h.endswith("(#20)") for h in d["card"]["highlights"])


@pytest.mark.parametrize("week", ["2026-W20", "2026-W30", "2026-W33"])
def test_the_most_of_any_week_is_never_a_tie(verl_repo, week):
    """"The most of any week in the last 13" only when no earlier week had as many: on
    verl 2026-W20 the engine theme's 7 PRs tie an earlier week's 7."""
    code, out, _ = run_cli("report", str(verl_repo), *VERL[:2], "--week", week, "--tz", "Asia/Shanghai",
                           "--lang", "en", "--format", "json", "-q")
    assert code == 0
    d = json.loads(out)
    s = d["stats"]
    records = [i for i in d["sections"]["trends"]["items"] if "the most of any week" in i["text"]]
    for item in records:
        assert "steady stream" not in item["text"]  # a record is no steady stream (2026-W33's docs)
        key = next(k for k, v in s["theme_names"].items() if v == item["name"])
        *earlier, this = s["trend"]["themes"][key]
        assert this > max(earlier), item["name"]
    for t in d["themes"]:
        series = s["trend"]["themes"].get(t["key"])
        if series and t["rank_in_history"] == 1:
            assert series[-1] > max(series[:-1]), t["name"]
    if "the most of any week" in d["sections"]["summary"]["text"]:
        assert s["merged_prs"] > s["baseline"]["max_merged_prs"]


@pytest.mark.parametrize("lang, said, unsaid", [
    ("en", "26 fewer than the 69 of the previous 14-day period", ("this week", "previous week", "week before", "per week", "the week", "one week", "week's")),
    ("zh", "比前14天的69个少26个", ("本周", "上周", "每周", "周报", "一周")),
])
def test_a_custom_range_compares_with_periods_of_the_same_length(verl_repo, lang, said, unsaid):
    """Two weeks given by --since/--until are compared with the 14 days before and with
    14-day periods on average, and read as such, not as "this week" and "per week"."""
    code, out, _ = run_cli("report", str(verl_repo), *VERL[:2], "--since", "2026-06-15", "--until", "2026-06-28",
                           "--tz", "Asia/Shanghai", "--lang", lang, "--format", "json", "-q")
    assert code == 0
    d = json.loads(out)
    assert d["stats"]["week_over_week"]["merged_prs"] == {"previous": 69, "delta": -26, "pct": -37.7}
    sections = d["sections"]
    summary = sections["summary"]["text"]
    trends = sections["trends"]["items"]
    assert said in summary
    assert trends and all("14" in t["text"] for t in trends)
    # Every text of every section and of the card reads as a period, not a week.
    texts = {"summary": summary}
    for name in ("key_changes", "trends", "risks", "recommendations"):
        for i, item in enumerate(sections[name]["items"]):
            texts[f"{name}[{i}].name"] = item["name"]
            texts[f"{name}[{i}].text"] = item["text"]
    if sections.get("closing"):
        texts["closing"] = sections["closing"]
    card = d["card"]
    texts["card.title"] = card["title"]
    texts["card.button"] = card["button"]
    for name in ("highlights", "risks"):
        for i, text in enumerate(card[name]):
            texts[f"card.{name}[{i}]"] = text
    # The risks' evidence (English, machine-written) too: "12 PRs changed configuration files in this period".
    evidence = {f"risks[{i}].evidence[{j}]": e for i, r in enumerate(d["risks"]) for j, e in enumerate(r["evidence"])}
    assert any(e.endswith(" in this period") for e in evidence.values())
    texts.update(evidence)
    assert sections["risks"]["items"] and sections["recommendations"]["items"]
    for word in unsaid:
        assert not [k for k, text in texts.items() if word in text], word


@pytest.mark.parametrize("lang, week_word", [("en", re.compile("week", re.IGNORECASE)), ("zh", re.compile("周"))])
def test_a_custom_range_reads_as_a_period_in_every_format(verl_repo, tmp_path, lang, week_word):
    """The headings, labels and empty-section lines that the Markdown, the HTML page and
    the chat cards add to the sections read as the period too ("2. 这14天的重点变化", a
    card's "这14天的亮点", the page's "All PRs of this 14-day period"). Nothing merged
    on 2026-06-06..07 reached the table or raised a risk, so those say so for the period."""
    formats = "md,html,json,feishu,slack,dingtalk,wecom"
    for since, until in (("2026-06-15", "2026-06-28"), ("2026-06-06", "2026-06-07")):
        code, _, err = run_cli("report", str(verl_repo), *VERL[:2], "--since", since, "--until", until,
                               "--tz", "Asia/Shanghai", "--lang", lang, "--format", formats, "--out", str(tmp_path), "-q")
        assert code == 0, err
    written = {p.name: p.read_text(encoding="utf-8") for p in tmp_path.iterdir()}
    assert len(written) == 14
    for name, text in written.items():
        if name.endswith(f".{lang}.json"):  # the report's own keys ("week", "history_weeks") are not wording
            d = json.loads(text)
            text = json.dumps([d["title"], d["sections"], d["card"]], ensure_ascii=False)
        said = [text[max(0, m.start() - 30):m.end() + 30] for m in week_word.finditer(text)]
        assert not said, (name, said)
    two_weeks = written[f"verl-project__verl-2026-06-15..2026-06-28.{lang}.md"]
    assert {"en": "\n## 2. Key changes\n", "zh": "\n## 2. 这14天的重点变化\n"}[lang] in two_weeks
    two_days = written[f"verl-project__verl-2026-06-06..2026-06-07.{lang}.md"]
    for line in {"en": ["No notable risks in this 2-day period.", "No PR reached the importance threshold of 5 in this 2-day period."],
                 "zh": ["这2天无明显风险。", "这2天没有重要性达到5的PR。"]}[lang]:
        assert f"\n{line}\n" in two_days
    page = written[f"verl-project__verl-2026-06-15..2026-06-28.{lang}.html"]
    assert {"en": "<summary>All PRs of this 14-day period (43)</summary>", "zh": "<summary>这14天的全部PR (43)</summary>"}[lang] in page
    card = json.loads(written[f"verl-project__verl-2026-06-15..2026-06-28.{lang}.feishu.json"])["card"]
    assert card["elements"][0]["text"]["content"] == {"en": "**Highlights**", "zh": "**这14天的亮点**"}[lang]


@pytest.mark.parametrize("lang, said", [
    ("en", {"title": "verl-project/verl report, 2026-07-08", "card": "verl-project/verl (07-08)",
            "lead": "On 2026-07-08, verl-project/verl merged 5 PRs (", "meta": '<p class="meta">2026-07-08 · ',
            "empty": "No pull requests were merged into verl-project/verl on 2026-06-28. There is nothing to review for that day."}),
    ("zh", {"title": "verl-project/verl 报告（2026-07-08）", "card": "verl-project/verl (07-08)",
            "lead": "2026-07-08当天，verl-project/verl共合并5个PR（", "meta": '<p class="meta">2026-07-08 · ',
            "empty": "2026-06-28当天，verl-project/verl没有合并任何PR。当天没有需要评审的变更。"}),
])
def test_a_one_day_range_reads_as_that_day(verl_repo, tmp_path, lang, said):
    """`--since D --until D` is one day: "On 2026-07-08, …" / "2026-07-08当天，…", not
    "From 2026-07-08 to 2026-07-08" in the title, the summary, the page and the card."""
    for day in ("2026-07-08", "2026-06-28"):  # five PRs merged; none
        code, _, err = run_cli("report", str(verl_repo), *VERL[:2], "--since", day, "--until", day, "--tz", "Asia/Shanghai",
                               "--lang", lang, "--format", "md,html,json,feishu", "--out", str(tmp_path), "-q")
        assert code == 0, err
    written = {p.name: p.read_text(encoding="utf-8") for p in tmp_path.iterdir()}
    for name, text in written.items():
        assert not re.search(r"(\d\d-\d\d)(?: to |至| 至 )(?:\d{4}-)?\1", text), name
        assert not re.search(r"1-day|这1天|前1天|1天时段", text), name
    d = json.loads(written[f"verl-project__verl-2026-07-08..2026-07-08.{lang}.json"])
    assert (d["title"], d["card"]["title"]) == (said["title"], said["card"])
    assert d["sections"]["summary"]["text"].startswith(said["lead"])
    md = written[f"verl-project__verl-2026-07-08..2026-07-08.{lang}.md"]
    assert md.startswith(f"# {said['title']}\n") and f"\n{said['lead']}" in md
    assert said["meta"] in written[f"verl-project__verl-2026-07-08..2026-07-08.{lang}.html"]
    card = json.loads(written[f"verl-project__verl-2026-07-08..2026-07-08.{lang}.feishu.json"])["card"]
    assert card["header"]["title"]["content"] == said["card"]
    quiet = json.loads(written[f"verl-project__verl-2026-06-28..2026-06-28.{lang}.json"])
    assert quiet["stats"]["merged_prs"] == 0 and quiet["sections"]["summary"]["text"] == said["empty"]


def test_markdown_quoted_from_a_body_reads_as_text(verl_repo):
    """verl 2026-W28's #6243 opens its body with a bold link; the key change quotes its text."""
    code, out, _ = run_cli("report", str(verl_repo), *VERL[:2], "--week", "2026-W28", "--tz", "Asia/Shanghai",
                           "--lang", "en", "--format", "md", "-q")
    assert code == 0
    line = next(line for line in out.splitlines() if "(#6243)**:" in line)
    assert "vLLM counterpart to verl issue/PR 6117 (SGLang PD)." in line
    assert "\\*" not in line and "](" not in line


def test_a_week_of_direct_commits_only_is_not_nothing_to_review(flask_repo, tmp_path):
    """flask 2010-W14: 31 commits and no PR once read "There is nothing to review this week …
    no action is needed", and `backfill --skip-empty` dropped the week."""
    code, out, _ = run_cli("report", str(flask_repo), "--name", "pallets/flask", "--week", "2010-W14", "--lang", "en")
    assert code == 0
    assert "but 31 commits landed directly on the default branch, without a PR and so without a review record." in out
    assert "**Look over the direct commits**: 31 commits landed on the default branch without a PR this week" in out
    assert "nothing to review" not in out and "no action is needed" not in out
    code, _, err = run_cli("backfill", str(flask_repo), "--name", "pallets/flask", "--from", "2010-W14", "--to", "2010-W14",
                           "--skip-empty", "--out", str(tmp_path / "bf"), "--workers", "1")
    assert code == 0, err
    assert [p.name for p in (tmp_path / "bf").iterdir()] == ["pallets__flask-2010-W14.zh.json"]


def test_every_score_is_the_sum_of_its_reasons_over_the_whole_history(verl_repo, tmp_path):
    """The JSON's `importance_terms` explain each score: 315 of verl's PRs once had terms
    0.1 off their score (a docs-only PR: `+3.0 +0.2 +0.3 x0.5 -1.8` for 1.8), the factor's
    term rounded apart from the score."""
    code, _, err = run_cli("backfill", str(verl_repo), "--name", "verl-project/verl", "--tz", "Asia/Shanghai",
                           "--from", "2024-W44", "--to", "2026-W34", "--format", "json", "--out", str(tmp_path), "-q")
    assert code == 0, err
    scored = minor = 0
    for path in tmp_path.glob("*.json"):
        for pr in json.loads(path.read_text(encoding="utf-8"))["pull_requests"]:
            terms = pr["importance_terms"]
            assert round(sum(t["points"] for t in terms), 1) == pr["importance"], (path.name, pr["number"], terms)
            scored += 1
            minor += any(t["code"] == "minor_only" for t in terms)
    assert scored > 2800 and minor > 300


def test_an_issue_is_said_to_be_resolved_only_when_the_pr_closes_it(verl_repo):
    """From a clone, the JSON's `linked_issues` (the source's links, GitHub's) is empty,
    and the importance term said "linked to #N" of any issue a body named ("see #12"),
    which the summary then said the PR "resolves". Now a term says "closes #N" for a
    closing keyword (#6572: "Closes #6570"), else "refers to #N", and the text follows it."""
    from repobrief.conventions import clean_body

    code, out, _ = run_cli("report", str(verl_repo), *VERL, "--lang", "en", "--format", "json", "-q")
    assert code == 0
    report = json.loads(out)
    pr = next(p for p in report["pull_requests"] if p["number"] == 6572)
    assert pr["linked_issues"] == []
    assert {"code": "linked_issue", "points": 0.4, "text": "closes #6570"} in pr["importance_terms"]
    assert "(#6572), which touches configuration files and resolves a tracked issue" in report["sections"]["summary"]["text"]
    assert clean_body("Fixes: #12 and see #13").closes == [12] and clean_body("resolves owner/repo#12").closes == [12]
    assert clean_body("Related to #12").closes == [] and clean_body("Related to #12").issue_refs == [12]
    assert clean_body("prefixes #12").closes == []  # a keyword is a word of its own
