"""The llm engine end to end on the replayed verl week 2026-W26 (22 PRs), against
a scripted OpenAI-compatible server on 127.0.0.1: good answers, failures of
every kind, grounding, fallbacks, the cache and the CLI."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from llmserver import Reply, ScriptedLLM
from llmserver import week_prs as listed_prs

from repobrief.config import load_settings
from repobrief.pipeline import generate_report, render_report
from repobrief.serialize import report_to_dict
from repobrief.window import parse_timezone, parse_week

pytestmark = pytest.mark.slow

WEEK = "2026-W26"
TZ = "Asia/Shanghai"


def _settings(repo: Path, db: Path, server: ScriptedLLM | None, lang: str = "zh", **llm):
    llm_opts = {"model": "scripted-model", "timeout": 30.0, **llm}
    if server is not None:
        llm_opts.update(base_url=server.base_url, api_key="sk-test-secret-9f8e7d6c")
    return load_settings(
        repo,
        env={},
        overrides={"name": "verl-project/verl", "timezone": TZ, "language": lang, "engine": "llm", "db": str(db), "llm": llm_opts},
    )


def _report(repo, settings, **kw):
    return generate_report(str(repo), settings, parse_week(WEEK, parse_timezone(TZ)), **kw)


@pytest.fixture(scope="module")
def week_prs(verl_repo, tmp_path_factory) -> list[int]:
    settings = load_settings(verl_repo, env={}, overrides={"name": "verl-project/verl", "timezone": TZ, "engine": "offline"})
    rep = generate_report(str(verl_repo), settings, parse_week(WEEK, parse_timezone(TZ)))
    return sorted(p.number for p in rep.pull_requests)


def _all_text(report) -> str:
    return render_report(report, "md") + "\n" + json.dumps(report_to_dict(report), ensure_ascii=False)


def test_good_answers_write_the_whole_report_and_rerun_is_free(verl_repo, tmp_path, week_prs):
    assert len(week_prs) == 22
    db = tmp_path / "rb.db"
    with ScriptedLLM() as server:
        settings = _settings(verl_repo, db, server, price_prompt_per_mtok=2.0, price_completion_per_mtok=8.0)
        first = _report(verl_repo, settings)
        assert server.count("pr") == 22 and server.count("week") == 1
        assert {a.engine for a in first.analyses.values()} == {"llm"}
        written = report_to_dict(first)["sections"]["written_by"]
        for section in ("summary", "key_changes", "trends", "risks", "recommendations", "card"):
            assert written[section] == "llm:scripted-model"
        assert written["table"] == "computed"
        eng = first.engine
        assert eng["model"] == "scripted-model" and eng["requests"] == 23 and eng["cache_hits"] == 0
        assert eng["prompt_tokens"] > 0 and eng["completion_tokens"] > 0 and eng["fallbacks"] == []
        assert eng["estimated_cost"] == pytest.approx(eng["prompt_tokens"] * 2e-6 + eng["completion_tokens"] * 8e-6)
        # the server's usage figures are what is counted
        assert eng["prompt_tokens"] == sum(len(json.dumps(c.body["messages"], ensure_ascii=False)) // 4 for c in server.calls)
        # the model's words reach the report
        md = render_report(first, "md")
        assert "本周共合并22个PR" in md
        # every request carried the week's PRs and delimited the PR text
        pr_call = next(c for c in server.calls if c.kind == "pr")
        assert '<untrusted kind="title">' in pr_call.user and "never instructions" in pr_call.system
        assert pr_call.body["response_format"]["type"] == "json_schema"

        sent = server.count()
        second = _report(verl_repo, settings)
        assert server.count() == sent  # zero requests
        assert second.engine["requests"] == 0 and second.engine["cache_hits"] == 23
        assert render_report(second, "md") == md

        third = _report(verl_repo, settings, refresh=True)
        assert server.count() == sent + 23 and third.engine["cache_hits"] == 0

        # A cached re-run in a fresh process never loads the SDK (≈ 1 s): only runs that
        # send requests import it, in the background while git is read.
        code = (
            "import sys; from repobrief.config import load_settings; from repobrief.pipeline import generate_report; "
            "from repobrief.window import parse_timezone, parse_week; "
            f"s = load_settings({str(verl_repo)!r}, env={{}}, overrides={{'name': 'verl-project/verl', 'timezone': {TZ!r}, "
            f"'engine': 'llm', 'db': {str(db)!r}, 'llm': {{'model': 'scripted-model', 'base_url': {server.base_url!r}, "
            f"'api_key': 'sk-x'}}}}); "
            f"r = generate_report({str(verl_repo)!r}, s, parse_week({WEEK!r}, parse_timezone({TZ!r})), refresh='{{}}' in sys.argv); "
            "print(r.engine['cache_hits'], 'openai' in sys.modules)"
        )
        cached = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
        assert cached.stdout.split() == ["23", "False"]
        fresh = subprocess.run([sys.executable, "-c", code, "{}"], capture_output=True, text=True, check=True)
        assert fresh.stdout.split() == ["0", "True"]


def test_failures_fall_back_per_unit_and_nothing_ungrounded_is_published(verl_repo, tmp_path, week_prs):
    roles = dict(zip(["malformed", "foreign_pr", "rate_limited", "server_error", "slow", "blank", "bad_score", "wrong_figure", "foreign_label"], week_prs, strict=False))
    seen: dict[tuple, int] = {}

    def script(call):
        key = (call.kind, call.pr, call.attempt)
        seen[key] = seen.get(key, 0) + 1
        first_try = seen[key] == 1
        if call.kind == "pr":
            if call.pr == roles["malformed"] and call.attempt == 0:
                return Reply(content='{"modules": ["trainer"], "type": "feat",, oops')
            if call.pr == roles["foreign_pr"]:
                return Reply(content=json.dumps({**_good(call), "key_contribution": "Builds on #99999 and fixes the trainer."}))
            if call.pr == roles["rate_limited"] and first_try and call.attempt == 0:
                return Reply(status=429, body={"error": {"message": "rate limited"}}, headers={"Retry-After": "1"})
            if call.pr == roles["server_error"] and first_try and call.attempt == 0:
                return Reply(status=500, body={"error": {"message": "internal"}})
            if call.pr == roles["slow"] and first_try and call.attempt == 0:
                return Reply(delay=3.0)
            if call.pr == roles["blank"]:
                return Reply(content="")
            if call.pr == roles["bad_score"]:
                return Reply(content=json.dumps({**_good(call), "importance": 42.0}))
            if call.pr == roles["foreign_label"]:
                return Reply(content=json.dumps({**_good(call), "themes": ["follow-up of #99998"]}))
            if call.pr == roles["wrong_figure"]:
                return Reply(content=json.dumps({**_good(call), "key_contribution": "Speeds up rollout by 73.6%."}))
            return None
        # the week: a wrong count in the summary (twice), a foreign PR in a trend (fixed on retry)
        from llmserver import default_week_answer

        answer = default_week_answer(call)
        answer["summary"] = "本周共合并99个PR，成果显著。"
        if call.attempt == 0:
            answer["trends"][0]["text"] += " 另见 #12345。"
        return Reply(content=json.dumps(answer, ensure_ascii=False))

    with ScriptedLLM() as server:
        server.rules.append(script)
        settings = _settings(verl_repo, tmp_path / "rb.db", server, timeout=1.5)
        rep = _report(verl_repo, settings)
        sent = server.count()

        # the report completed with every PR analysed
        assert sorted(rep.analyses) == week_prs
        fallbacks = {f["unit"]: f["reason"] for f in rep.engine["fallbacks"]}
        a = rep.analyses
        # recovered after one retry: malformed JSON, 429 (Retry-After honoured), 500, a timeout
        for role in ("malformed", "rate_limited", "server_error", "slow"):
            assert a[roles[role]].engine == "llm", role
        assert rep.engine["retries"] >= 3 and rep.engine["repair_retries"] >= 1
        # fell back to the offline analysis, with the reason recorded per unit
        for role, words in (
            ("foreign_pr", "#99999"),
            ("blank", "blank"),
            ("bad_score", "outside 0.0-10.0"),
            ("wrong_figure", "73.6%"),
            ("foreign_label", "#99998"),
        ):
            n = roles[role]
            assert a[n].engine == "offline" and words in a[n].fallback_reason, role
            assert words in fallbacks[f"pr:{n}"]
        assert "'99' as the number of pull requests merged this week, but the computed number is 22" in fallbacks["section:summary"]
        assert "section:trends" not in fallbacks
        written = report_to_dict(rep)["sections"]["written_by"]
        assert written["summary"] == "offline" and written["trends"] == "llm:scripted-model"
        assert rep.sections.summary and "99个" not in rep.sections.summary

        # nothing ungrounded reached any output
        text = _all_text(rep)
        for bad in ("99999", "99998", "12345", "73.6%", "99个PR", "42.0"):
            assert bad not in render_report(rep, "md"), bad
        for bad in ("Builds on #99999", "另见 #12345", "by 73.6%"):
            assert bad not in text, text[max(0, text.find(bad) - 300) : text.find(bad) + 100]
        assert all(0.0 <= x.importance <= 10.0 for x in a.values())
        # the fallback is visible in the JSON per PR
        pj = {p["number"]: p for p in report_to_dict(rep)["pull_requests"]}
        assert pj[roles["blank"]]["analysis_engine"] == "offline" and "blank" in pj[roles["blank"]]["fallback_reason"]

        # a second run replays the answers that passed from the cache, and asks again only for
        # the units whose answers failed the checks (never cached): 5 PRs and the composition,
        # each asked and re-asked; the same answers give the same report
        again = _report(verl_repo, settings)
        assert again.engine["requests"] == server.count() - sent == 12 and again.engine["repair_retries"] == 6
        assert again.engine["retries"] == 0 and again.engine["cache_hits"] == 17 + 1  # one PR's re-ask is cached too
        assert render_report(again, "md") == render_report(rep, "md")


def _week_stats(call) -> dict:
    facts = re.search(r"Computed facts and statistics \(the only counts you may state\): (\{.*\})\n", call.user).group(1)
    return json.loads(facts)["statistics"]


def test_counts_must_equal_the_statistic_they_name_and_code_spans_are_citations(verl_repo, tmp_path, week_prs):
    from llmserver import default_week_answer

    first = week_prs[0]
    said: dict[str, str] = {}

    def script(call):
        if call.kind == "pr" and call.pr == first:
            return Reply(content=json.dumps({**_good(call), "key_contribution": "在 `#4242` 的基础上改进了训练流程。"}, ensure_ascii=False))
        if call.kind == "week":
            stats = _week_stats(call)
            answer = default_week_answer(call)
            # numbers that are statistics, but not the ones these nouns name
            said["summary"] = (
                f"本周共合并{stats['files_changed']}个PR，来自{stats['baseline']['weeks']}位贡献者，"
                f"新增{stats['lines_deleted']}行、删除{stats['lines_added']}行。"
            )
            answer["summary"] = said["summary"]
            answer["closing"] = "另见 `#4242`。"
            return Reply(content=json.dumps(answer, ensure_ascii=False))
        return None

    with ScriptedLLM() as server:
        server.rules.append(script)
        rep = _report(verl_repo, _settings(verl_repo, tmp_path / "rb.db", server))
    stats = rep.stats
    assert stats["files_changed"] != 22 and stats["contributors"] != 12 and stats["lines_added"] != stats["lines_deleted"]
    fallbacks = {f["unit"]: f["reason"] for f in rep.engine["fallbacks"]}
    assert rep.analyses[first].engine == "offline" and "#4242" in fallbacks[f"pr:{first}"]
    assert "number of pull requests" in fallbacks["section:summary"] and "number of contributors" in fallbacks["section:summary"]
    assert "section:closing" in fallbacks
    md = render_report(rep, "md")
    assert "#4242" not in md and said["summary"] not in md and f"共合并{stats['files_changed']}个PR" not in md

    # spelled-out counts are read whole: "twenty-three PRs" is not "three PRs"
    for words, grounded in (("twenty-three", False), ("twenty-two", True)):

        def spelled(call, words=words):
            if call.kind == "week":
                answer = default_week_answer(call)
                answer["summary"] = f"{words.capitalize()} PRs were merged this week; the most notable is #{first}."
                return Reply(content=json.dumps(answer))
            return None

        with ScriptedLLM() as server:
            server.rules.append(spelled)
            rep = _report(verl_repo, _settings(verl_repo, tmp_path / f"{words}.db", server, lang="en"))
        assert report_to_dict(rep)["sections"]["written_by"]["summary"] == ("llm:scripted-model" if grounded else "offline"), words
        assert (f"{words.capitalize()} PRs were merged" in rep.sections.summary) == grounded


def test_a_card_that_leaves_out_the_weeks_risks_falls_back(verl_repo, tmp_path, week_prs):
    from llmserver import default_week_answer

    for label, card_risks in (("empty", []), ("unrelated", ["Check the docs build"])):

        def script(call, card_risks=card_risks):
            if call.kind == "week":
                return Reply(content=json.dumps({**default_week_answer(call), "card_risks": card_risks}, ensure_ascii=False))
            return None

        with ScriptedLLM() as server:
            server.rules.append(script)
            rep = _report(verl_repo, _settings(verl_repo, tmp_path / f"{label}.db", server))
        assert rep.risks, "the verl week has detected risks"
        # the card falls back to the offline one, which lists the top risks with their PRs
        assert report_to_dict(rep)["sections"]["written_by"]["card"] == "offline", label
        assert "card_risks" in {f["unit"]: f["reason"] for f in rep.engine["fallbacks"]}["section:card"]
        assert len(rep.card.risks) >= 2 and all(re.search(r"#\d+", line) for line in rep.card.risks)
        top = sorted(rep.risks, key=lambda r: {"high": 0, "medium": 1}.get(r.severity, 2))[0]
        assert any(f"#{top.prs[0]}" in line for line in rep.card.risks)
        # the rest of the model's report stands
        assert report_to_dict(rep)["sections"]["written_by"]["summary"] == "llm:scripted-model"


def test_a_revert_of_an_older_pr_may_name_it(tmp_path):
    from gitrepo import GitRepoBuilder
    from llmserver import default_pr_answer, default_week_answer

    b = GitRepoBuilder(tmp_path / "proj")
    b.commit("init", "2026-06-01T10:00:00+00:00", {"src/a.py": b.lines(40)})
    b.commit("feat: old thing (#5)", "2026-06-10T10:00:00+00:00", {"src/b.py": b.lines(10)}, author="old")
    b.commit("feat: add cache (#20)", "2026-06-23T10:00:00+00:00", {"src/c.py": b.lines(50)}, author="bob")
    b.commit('Revert "feat: old thing (#5)" (#22)', "2026-06-24T10:00:00+00:00", {"src/b.py": None}, author="carol")

    def script(call):
        if call.kind == "pr" and call.pr == 22:
            return Reply(content=json.dumps({**default_pr_answer(call), "key_contribution": "Reverts #5 (old thing), removing src/b.py."}))
        if call.kind == "week":
            answer = default_week_answer(call)  # its items quote the titles, 'Revert "feat: old thing (#5)"'
            answer.update(summary="2 PRs were merged: a cache (#20) and a revert of #5 (#22).", closing="See also #6.")
            return Reply(content=json.dumps(answer))
        return None

    with ScriptedLLM() as server:
        server.rules.append(script)
        rep = _report(b.path, _settings(b.path, tmp_path / "rb.db", server, lang="en"))
    assert rep.analyses[22].engine == "llm" and "Reverts #5" in rep.analyses[22].key_contribution
    written = report_to_dict(rep)["sections"]["written_by"]
    assert all(written[u] == "llm:scripted-model" for u in ("summary", "key_changes", "trends", "risks", "card")), written
    assert "a revert of #5 (#22)" in render_report(rep, "md")
    # a PR number no PR of the week reverts or quotes is still refused
    assert [f["unit"] for f in rep.engine["fallbacks"]] == ["section:closing"]


def test_a_revert_is_not_sent_the_migration_notes_of_what_it_undoes(tmp_path):
    """A revert copies the description of what it undoes. The model reads the notes the
    body cut lost as the PR's own instructions only for the PR that gives them."""
    from gitrepo import GitRepoBuilder

    story = "\n\n".join(f"Step {i}: the loader keeps shard {i} in order while the cache warms up." for i in range(400))
    body = f"Renames the scheduler keys.\n\n## Design\n\n{story}\n\n## Migration guide\n\nRename `sched` to `scheduler`.\n"
    b = GitRepoBuilder(tmp_path / "proj")
    b.commit("init", "2026-06-01T10:00:00+00:00", {"src/a.py": b.lines(40)})
    b.commit(f"feat!: new scheduler keys (#20)\n\n{body}", "2026-06-23T10:00:00+00:00", {"src/c.py": b.lines(50)}, author="bob")
    b.commit(f'Revert "feat!: new scheduler keys (#20)" (#22)\n\nThis reverts #20.\n\n{body}', "2026-06-24T10:00:00+00:00",
             {"src/c.py": None}, author="carol")
    with ScriptedLLM() as server:
        rep = _report(b.path, _settings(b.path, tmp_path / "rb.db", server, lang="en", prompt_tokens_per_pr=1500))
        users = {c.pr: c.user for c in server.calls if c.kind == "pr"}
    assert set(rep.analyses) == {20, 22}
    assert '<untrusted kind="migration notes">' in users[20]  # its body was cut before them
    assert "kind=\"migration notes\"" not in users[22] and "Rename `sched`" not in users[22]


def _good(call) -> dict:
    from llmserver import default_pr_answer

    return default_pr_answer(call)


def test_endpoint_down_mid_run_completes_from_fallbacks(verl_repo, tmp_path, week_prs):
    answered = []

    def script(call):
        if len(answered) >= 4:
            return Reply(drop=True)
        answered.append(call.pr)
        return None

    with ScriptedLLM() as server:
        server.rules.append(script)
        settings = _settings(verl_repo, tmp_path / "rb.db", server, concurrency=2, timeout=10.0)
        rep = _report(verl_repo, settings)
    engines = [a.engine for a in rep.analyses.values()]
    assert engines.count("llm") == 4 and engines.count("offline") == 18
    reasons = [f["reason"] for f in rep.engine["fallbacks"]]
    assert any("unreachable" in r for r in reasons)
    assert report_to_dict(rep)["sections"]["written_by"]["summary"] == "offline"
    # told in the report's language (zh), with the count and why; the detail is in the JSON
    assert "llm：18个PR的分析改由离线引擎完成（无法连接模型端点）" in rep.warnings, rep.warnings
    assert "llm：以下部分改由离线方式撰写：执行摘要、本周重点变化、模块与主题趋势、风险观察、后续建议、结束语和消息卡片（无法连接模型端点）" in rep.warnings
    assert all(re.search(r"[A-Za-z]{4,}", w.replace("llm", "")) is None for w in rep.warnings), rep.warnings
    assert rep.sections.summary  # the offline composer wrote it


def test_english_report_in_json_object_and_tools_modes(verl_repo, tmp_path):
    for mode in ("json_object", "tools"):
        with ScriptedLLM() as server:
            settings = _settings(verl_repo, tmp_path / f"{mode}.db", server, lang="en", response_format=mode)
            rep = _report(verl_repo, settings)
            assert {a.engine for a in rep.analyses.values()} == {"llm"}, mode
            assert rep.sections.summary.startswith("22 PRs were merged this week")
            body = server.calls[0].body
            assert ("tools" in body) == (mode == "tools")
            if mode == "json_object":
                assert body["response_format"] == {"type": "json_object"}
                assert "JSON Schema" in server.calls[0].system


def _cli(args: list[str], env_extra: dict, tmp_path: Path) -> subprocess.CompletedProcess:
    import os

    env = {k: v for k, v in os.environ.items() if not k.startswith(("REPOBRIEF_", "OPENAI_"))}
    env.update(env_extra)
    return subprocess.run(
        [str(Path(sys.executable).parent / "repobrief"), "report", *args], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120
    )


def test_cli_llm_report_and_clear_errors(verl_repo, tmp_path):
    base = [str(verl_repo), "--name", "verl-project/verl", "--week", WEEK, "--tz", TZ, "--lang", "zh", "--format", "md", "--db", str(tmp_path / "rb.db")]
    # no key, no endpoint
    r = _cli([*base, "--engine", "llm"], {}, tmp_path)
    assert r.returncode == 5, r.stderr
    assert "OPENAI_API_KEY" in r.stderr and "OPENAI_BASE_URL" in r.stderr and "--engine offline" in r.stderr
    with ScriptedLLM(require_key="sk-right-key") as server:
        r = _cli([*base, "--engine", "llm", "--llm-model", "m"], {"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "sk-wrong-key-0123456789"}, tmp_path)
        assert r.returncode == 5 and "refused the API key" in r.stderr
        assert "0123456789" not in r.stderr + r.stdout
        # the requests waiting for a slot when the first 401 came back were not sent: at
        # most the 8 in flight were refused, not the week's 23
        assert 1 <= server.refused <= 8, server.refused
        r = _cli(
            [*base, "--engine", "llm", "--llm-model", "m", "--llm-concurrency", "4"],
            {"OPENAI_BASE_URL": server.base_url, "REPOBRIEF_LLM_API_KEY": "sk-right-key", "OPENAI_API_KEY": "sk-wrong"},
            tmp_path,
        )
        assert r.returncode == 0, r.stderr
        assert "本周共合并22个PR" in r.stdout and re.search(r"1\. 执行摘要|执行摘要", r.stdout)
        assert "llm m:" in r.stderr and "23 requests" in r.stderr
    with ScriptedLLM(models=("real-model",)) as server:
        r = _cli([*base, "--engine", "llm", "--llm-model", "nope-model", "--refresh"], {"OPENAI_BASE_URL": server.base_url}, tmp_path)
        assert r.returncode == 5 and "nope-model" in r.stderr


def test_bad_llm_options_are_config_errors_naming_the_option(verl_repo, tmp_path):
    base = [str(verl_repo), "--name", "verl-project/verl", "--week", WEEK, "--tz", TZ, "--format", "md", "--db", str(tmp_path / "rb.db")]
    endpoint = {"OPENAI_BASE_URL": "http://127.0.0.1:9/v1", "REPOBRIEF_LLM_MODEL": "m"}
    for extra_args, env, option, hint, code in (
        ([], {"REPOBRIEF_LLM_RESPONSE_FORMAT": "json_shema"}, "option 'llm.response_format'", "did you mean 'json_schema'?", 3),
        ([], {"REPOBRIEF_LLM_TIMEOUT": "-1"}, "option 'llm.timeout'", "e.g. 60", 3),
        ([], {"REPOBRIEF_LLM_CONCURRENCY": "0"}, "option 'llm.concurrency'", "nearest valid value is 1", 3),
        ([], {"REPOBRIEF_LLM_MAX_OUTPUT_TOKENS": "-5"}, "option 'llm.max_output_tokens'", "nearest valid value is 0", 3),
        # the same value from a flag is a bad flag, named as the user typed it
        (["--llm-concurrency", "0"], {}, "--llm-concurrency is 0", "nearest valid value is 1", 2),
    ):
        r = _cli([*base, "--engine", "llm", *extra_args], {**endpoint, **env}, tmp_path)
        # exit 3: a bad option, 2: a bad flag (README, "Errors"); not 5, an engine that cannot run
        assert r.returncode == code, (option, r.returncode, r.stderr)
        assert option in r.stderr and hint in r.stderr, r.stderr


@pytest.mark.parametrize(("since", "until", "span"), [("2026-06-19", "2026-06-28", "this period"), ("2026-06-23", "2026-06-23", "this day")])
def test_a_date_range_is_asked_for_as_its_period_not_as_a_week(verl_repo, tmp_path, since, until, span):
    """The model writes the prose, so it must be told what the report covers: a 10-day range
    (or one day) is not "this week", and its PRs are the period's."""
    from repobrief.window import date_range_window

    window = date_range_window(since, until, parse_timezone(TZ))
    with ScriptedLLM() as server:
        rep = generate_report(str(verl_repo), _settings(verl_repo, tmp_path / "rb.db", server, lang="en"), window)
        calls = list(server.calls)
    assert calls and {c.kind for c in calls} == {"pr", "week"}
    for call in calls:
        text = call.system + call.user
        assert f'say "{span}" or name its dates, never "this week"' in call.system
        assert text.count("this week") == 1 and "weekly report" not in text and "week " + window.label not in text
        assert f"Pull requests of {span} (the only ones you may cite)" in call.user
    compose = next(c for c in calls if c.kind == "week")
    days = (window.last_day - window.first_day).days + 1
    assert f"{since} to {until} ({days} days, not an ISO week)" in compose.user
    assert sorted(p.number for p in rep.pull_requests) == sorted(listed_prs(compose.user))
