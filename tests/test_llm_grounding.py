"""The grounding check on the week's prose: a count tied to the week's total must be that
total (not any PR count in the data), first-time contributors are counted in every word
order, the risk section and the summary cannot drop the week's risks — and the offline
composer's own sentences, for real weeks of verl and flask, always pass."""

from __future__ import annotations

import json

import pytest
from gitrepo import GitRepoBuilder
from llmserver import Reply, ScriptedLLM, default_pr_answer, default_week_answer, verl_llm_settings

from repobrief.config import load_settings
from repobrief.engines.llm import facts_view, ground_sections
from repobrief.engines.offline import OfflineEngine
from repobrief.pipeline import generate_report, render_report
from repobrief.serialize import report_to_dict
from repobrief.window import date_range_window, parse_timezone, parse_week

pytestmark = pytest.mark.slow

WEEK = "2026-W26"
TZ = "Asia/Shanghai"


class GroundingOfflineEngine(OfflineEngine):
    """The offline engine, checking what its composer wrote with the llm engine's grounding."""

    def __init__(self, *args, **kw) -> None:
        super().__init__(*args, **kw)
        self.problems: dict[str, dict] = {}

    def compose(self, facts):
        sections, card = super().compose(facts)
        self.problems[str(facts.window.label)] = ground_sections(facts_view(facts), sections, card)
        return sections, card


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_offline_composers_own_sections_pass_grounding(verl_repo, flask_repo, lang):
    """False rejections would throw away true prose: every sentence the offline engine
    writes (summary, key changes, trends, risks, recommendations, closing line, card) for
    real weeks — more and fewer PRs than the week before, a record week, a quiet week,
    merge-commit histories, date ranges — passes the check unchanged."""
    tz = parse_timezone(TZ)
    cases = [
        (verl_repo, "verl-project/verl", [parse_week(w, tz) for w in ("2026-W26", "2026-W25", "2026-W28", "2025-W23", "2025-W21")]
         + [date_range_window("2026-06-19", "2026-06-28", tz), date_range_window("2026-06-23", "2026-06-23", tz)]),
        (flask_repo, "pallets/flask", [parse_week(w, tz) for w in ("2019-W22", "2021-W05", "2021-W17", "2026-W04")]),
    ]
    checked = 0
    for repo, name, windows in cases:
        settings = load_settings(repo, env={}, overrides={"name": name, "timezone": TZ, "language": lang, "engine": "offline"})
        engine = GroundingOfflineEngine(settings)
        for window in windows:
            rep = generate_report(str(repo), settings, window, engine=engine)
            if rep.pull_requests:
                checked += 1
            assert engine.problems[str(window.label)] == {}, (name, window.label, engine.problems[str(window.label)])
    assert checked == 11


def _settings(repo, db, server, lang="en", **llm):
    return verl_llm_settings(repo, db, server, lang, TZ, **llm)


def _report_with_summary(verl_repo, tmp_path, lang: str, summary: str, **answer):
    def script(call):
        if call.kind == "week":
            return Reply(content=json.dumps({**default_week_answer(call), "summary": summary, **answer}, ensure_ascii=False))
        return None

    with ScriptedLLM() as server:
        server.rules.append(script)
        db = tmp_path / f"{abs(hash((summary, lang, json.dumps(answer))))}.db"
        return generate_report(str(verl_repo), _settings(verl_repo, db, server, lang), parse_week(WEEK, parse_timezone(TZ)))


SUMMARIES = [
    # (lang, summary, published) — verl 2026-W26: 22 PRs (21 the week before), 19 contributors,
    # 8 of them first-time; CI 9 PRs (3 the week before), the baseline's busiest week 43
    ("en", "This week verl-project/verl merged 27 PRs, led by #6779.", False),
    ("en", "Twenty-seven PRs were merged this week; the most notable is #6779.", False),
    ("en", "22 PRs were merged, 6 more than the previous week; the most notable is #6779.", False),
    ("en", "22 PRs were merged this week, down from 43 the week before; see #6779.", False),
    ("zh", "本周共合并36个PR，重点见 #6779。", False),
    ("en", "From 19 contributors, including 3 first-time contributors, the week brought #6779.", False),
    ("en", "The week's PRs came from 19 contributors, by 3 first-time contributors among them; see #6779.", False),
    ("zh", "本周共合并22个PR，新贡献者3位，重点见 #6779。", False),
    ("zh", "本周共合并22个PR，其中3位为首次贡献，重点见 #6779。", False),
    # true sentences about the week, its themes and the week before are published
    ("en", "This week verl-project/verl merged 22 PRs, 1 more than the previous week's 21; see #6779.", True),
    ("en", "22 PRs were merged this week (21 the week before), 8 of 19 contributors first-time; CI: 9 PRs, 6 more than "
           "the previous week; see #6779.", True),
    ("en", "Twenty-two PRs were merged this week, including 8 first-time contributors' work; see #6779.", True),
    ("zh", "本周共合并22个PR（比上周的21个多1个），来自19位贡献者，新贡献者8位；CI方向合并了9个PR，比上周多6个，重点见 #6779。", True),
]


@pytest.mark.parametrize(("lang", "summary", "published"), SUMMARIES)
def test_counts_tied_to_the_weeks_total_must_be_that_total(verl_repo, tmp_path, lang, summary, published):
    rep = _report_with_summary(verl_repo, tmp_path, lang, summary)
    assert rep.stats["merged_prs"] == 22 and rep.stats["week_over_week"]["merged_prs"]["previous"] == 21
    assert rep.stats["first_time_contributors"] == 8
    written = report_to_dict(rep)["sections"]["written_by"]["summary"]
    assert written == ("llm:scripted-model" if published else "offline"), (summary, rep.engine["fallbacks"])
    assert (summary in render_report(rep, "md")) == published
    if not published:
        reason = {f["unit"]: f["reason"] for f in rep.engine["fallbacks"]}["section:summary"]
        assert "computed number" in reason or "computed difference" in reason, reason


def test_the_risk_section_and_the_summary_cannot_leave_out_the_weeks_risks(verl_repo, tmp_path):
    """The week has 9 detected risks, #6823 a breaking change: a risk section without it,
    or a summary saying there are none, is not published."""
    def script(call):
        if call.kind == "week":
            answer = default_week_answer(call)
            answer["summary"] = "本周共合并22个PR，本周无风险，重点见 #6779。" if call.attempt == 0 else "本周无明显风险。#6779 最值得关注。"
            answer["risks"] = [i for i in answer["risks"] if 6823 not in i["prs"]]
            return Reply(content=json.dumps(answer, ensure_ascii=False))
        return None

    with ScriptedLLM() as server:
        server.rules.append(script)
        rep = generate_report(str(verl_repo), _settings(verl_repo, tmp_path / "rb.db", server, "zh"), parse_week(WEEK, parse_timezone(TZ)))
        asked = [c for c in server.calls if c.kind == "week"]
    assert rep.stats["breaking_prs"] == [6823] and len(rep.risks) == 9
    written = report_to_dict(rep)["sections"]["written_by"]
    assert written["risks"] == "offline" and written["summary"] == "offline"
    fallbacks = {f["unit"]: f["reason"] for f in rep.engine["fallbacks"]}
    assert "leaves out the breaking change in #6823" in fallbacks["section:risks"]
    assert "says there are no risks" in fallbacks["section:summary"]
    # the model was told what it left out, once
    assert len(asked) == 2 and "#6823" in asked[1].body["messages"][-1]["content"]
    # the reader sees the offline risk section, breaking change first, and a summary that names it
    md = render_report(rep, "md")
    section4 = md.split("## 4. 风险观察", 1)[1].split("## 5.", 1)[0]
    assert "#6823" in section4.split("\n\n")[1] and "无风险" not in md
    # and is told so in Chinese, the sections by their headings
    assert "llm：以下部分改由离线方式撰写：执行摘要和风险观察（模型的回答未通过校验）" in rep.warnings, rep.warnings
    assert written["key_changes"] == "llm:scripted-model"  # the rest of the model's report stands


def test_the_model_names_the_weeks_security_fix_first_or_is_not_published(tmp_path):
    """The model is told which advisories the week fixes: a summary or a first
    recommendation that leaves one out is asked again, then written offline, which
    names it ("Upgrade for the security fix")."""
    b = GitRepoBuilder(tmp_path / "repo")
    b.commit("initial", "2026-06-01T10:00:00+00:00", {"src/sessions.py": b.lines(30)})
    b.commit("fix: CVE-2026-12345 in the cookie parser (#10)", "2026-06-23T09:00:00+00:00", {"src/sessions.py": b.lines(3)})
    b.commit("feat: a new reader (#11)", "2026-06-24T09:00:00+00:00", {"src/reader.py": b.lines(40)})

    def script(call):
        if call.kind == "week":
            answer = default_week_answer(call)
            if call.attempt:  # told what it left out, the model adds it to the summary only
                answer["summary"] += " It fixes CVE-2026-12345 (#10)."
            return Reply(content=json.dumps(answer))
        return None

    with ScriptedLLM() as server:
        server.rules.append(script)
        rep = generate_report(str(b.path), _settings(b.path, tmp_path / "rb.db", server), parse_week(WEEK, parse_timezone(TZ)))
        asked = [c for c in server.calls if c.kind == "week"]
    assert "Security advisories fixed in this week: CVE-2026-12345" in asked[0].user
    retry = asked[1].body["messages"][-1]["content"]
    assert "summary leaves out the security fix for CVE-2026-12345" in retry
    assert "recommendations[0] leaves out the security fix for CVE-2026-12345" in retry
    d = report_to_dict(rep)["sections"]
    assert d["written_by"]["summary"] == "llm:scripted-model" and "It fixes CVE-2026-12345 (#10)." in d["summary"]["text"]
    assert d["written_by"]["recommendations"] == "offline"
    assert d["recommendations"]["items"][0]["name"] == "Upgrade for the security fix"


def test_an_answer_that_failed_the_checks_is_not_replayed_from_the_cache(verl_repo, tmp_path):
    """A re-run once replayed the same failing answers from the cache (29 fallbacks, 0
    requests). An answer is cached only when its unit passed; one that failed is asked
    again in the next run, and a good one then replaces the fallback."""
    db = tmp_path / "rb.db"
    bad = {"on": True}

    def script(call):
        if call.kind == "week" and bad["on"]:
            return Reply(content=json.dumps({**default_week_answer(call), "summary": "本周共合并99个PR。"}, ensure_ascii=False))
        return None

    week = parse_week(WEEK, parse_timezone(TZ))
    with ScriptedLLM() as server:
        server.rules.append(script)
        settings = _settings(verl_repo, db, server, "zh")
        first = generate_report(str(verl_repo), settings, week)
        assert report_to_dict(first)["sections"]["written_by"]["summary"] == "offline"
        assert server.count("week") == 2  # the answer and the re-ask, both failing
        again = generate_report(str(verl_repo), settings, week)
        # the PR analyses passed and are replayed; the failing composition is asked again
        assert again.engine["cache_hits"] == 22 and server.count("week") == 4 and again.engine["requests"] == 2
        bad["on"] = False
        fixed = generate_report(str(verl_repo), settings, week)
        assert report_to_dict(fixed)["sections"]["written_by"]["summary"] == "llm:scripted-model"
        assert "本周共合并22个PR" in fixed.sections.summary
        sent = server.count()
        replay = generate_report(str(verl_repo), settings, week)
        assert server.count() == sent and replay.engine["requests"] == 0 and replay.engine["fallbacks"] == []
        assert replay.sections.summary == fixed.sections.summary


def test_failing_answers_a_cache_already_holds_are_asked_again_live(verl_repo, tmp_path, monkeypatch):
    """A cache written by an earlier version held every answer, checked or not: a re-run
    replayed the failing answer and its failing re-ask, and fell back without a request.
    Now a re-ask the cache answered that fails is asked again live, and its good answer
    is cached, so the run after that replays it."""
    from repobrief.llm.client import ChatClient

    db = tmp_path / "rb.db"
    week = parse_week(WEEK, parse_timezone(TZ))
    bad = {"on": True}

    def script(call):
        if call.kind == "week" and bad["on"]:
            return Reply(content=json.dumps({**default_week_answer(call), "summary": "27 PRs were merged this week; see #6779."}))
        return None

    complete = ChatClient.complete

    async def cache_everything(self, *args, keep=None, **kw):  # the earlier version's cache writes
        return await complete(self, *args, **kw)

    with ScriptedLLM() as server:
        server.rules.append(script)
        settings = _settings(verl_repo, db, server, "en")
        with monkeypatch.context() as m:
            m.setattr(ChatClient, "complete", cache_everything)
            old = generate_report(str(verl_repo), settings, week)
        assert report_to_dict(old)["sections"]["written_by"]["summary"] == "offline"
        bad["on"] = False
        before = len(server.calls)
        rep = generate_report(str(verl_repo), settings, week)
        asked = [c.attempt for c in server.calls[before:]]
        sent = server.count()
        replay = generate_report(str(verl_repo), settings, week)
        assert server.count() == sent
    # the stale answer and its stale re-ask came from the cache; the re-ask was sent again
    assert asked == [1] and rep.engine["requests"] == 1 and rep.engine["cache_hits"] == 22 + 2
    assert report_to_dict(rep)["sections"]["written_by"]["summary"] == "llm:scripted-model"
    assert "27 PRs" not in rep.sections.summary and rep.sections.summary.startswith("22 PRs were merged this week")
    assert rep.engine["fallbacks"] == [] and replay.engine["requests"] == 0 and replay.sections.summary == rep.sections.summary


def _scripted_week(verl_repo, tmp_path, script, lang: str = "en"):
    """verl's week, its answers from the scripted model (`script` may change them)."""
    with ScriptedLLM() as server:
        server.rules.append(script)
        return generate_report(str(verl_repo), _settings(verl_repo, tmp_path / "rb.db", server, lang),
                               parse_week(WEEK, parse_timezone(TZ)))


@pytest.mark.parametrize("unit", ["risks", "recommendations", "key_changes"])
def test_an_item_of_a_section_cannot_deny_the_weeks_breaking_change(verl_repo, tmp_path, unit):
    """The summary and the closing line were checked for "no breaking changes", the
    sections' items were not: a risk reading "Involves #6526. There are no breaking changes
    this week." went out over #6823's breaking change."""
    def script(call):
        if call.kind == "week":
            answer = default_week_answer(call)
            answer[unit][0]["text"] += " There are no breaking changes this week."
            return Reply(content=json.dumps(answer))
        return None

    rep = _scripted_week(verl_repo, tmp_path, script)
    assert rep.stats["breaking_prs"] == [6823]
    assert report_to_dict(rep)["sections"]["written_by"][unit] == "offline"
    reason = {f["unit"]: f["reason"] for f in rep.engine["fallbacks"]}[f"section:{unit}"]
    assert f"{unit}[0] says there is no breaking change, but #6823 is breaking" in reason
    assert "There are no breaking changes this week." not in render_report(rep, "md")


def test_an_answer_padded_with_pages_is_not_published(verl_repo, tmp_path):
    """Each PR's key contribution padded with 560 KB of text was taken: a 36 MB JSON and a
    104 MB store. A field longer than a report's reader would read is asked again, then
    falls back."""
    pad = " Lorem ipsum dolor sit amet." * 200

    def script(call):
        if call.kind == "pr" and call.pr == 6779:
            return Reply(content=json.dumps({**default_pr_answer(call), "key_contribution": "Adds tokens." + pad}))
        if call.kind == "week":
            answer = default_week_answer(call)
            answer["summary"] += pad * 2
            return Reply(content=json.dumps(answer))
        return None

    rep = _scripted_week(verl_repo, tmp_path, script)
    reasons = {f["unit"]: f["reason"] for f in rep.engine["fallbacks"]}
    assert rep.analyses[6779].engine == "offline" and "key_contribution is 5,612 characters long" in reasons["pr:6779"]
    assert report_to_dict(rep)["sections"]["written_by"]["summary"] == "offline"
    assert "more than the 3,000 it may have" in reasons["section:summary"]
    assert "Lorem ipsum" not in render_report(rep, "md")
