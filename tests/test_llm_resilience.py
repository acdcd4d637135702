"""The llm engine when the endpoint misbehaves, on the replayed verl week 2026-W26 (22 PRs)
against the scripted server: what the run does, what it says it did (warnings in the
report's language, the accounting in the JSON and on stderr), and what it does not waste."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from clirun import run_cli
from llmserver import Reply, ScriptedLLM, verl_llm_settings

from repobrief.pipeline import generate_report, render_report
from repobrief.serialize import report_to_dict
from repobrief.window import parse_timezone, parse_week

pytestmark = pytest.mark.slow

WEEK = "2026-W26"
TZ = "Asia/Shanghai"
HTML = "<!DOCTYPE html>\n<html><head><title>Welcome</title></head><body><h1>It works!</h1></body></html>"


def _settings(repo, db, server, lang="en", **llm):
    return verl_llm_settings(repo, db, server, lang, TZ, **llm)


def _report(repo, settings):
    return generate_report(str(repo), settings, parse_week(WEEK, parse_timezone(TZ)))


def _cli(command: str, args: list[str], env_extra: dict, cwd: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("REPOBRIEF_", "OPENAI_"))}
    env.update(env_extra)
    exe = str(Path(sys.executable).parent / "repobrief")
    return subprocess.run([exe, command, *args], capture_output=True, text=True, env=env, cwd=cwd, timeout=180)


def test_one_dropped_connection_per_request_is_retried_not_taken_as_an_endpoint_down(verl_repo, tmp_path):
    """A proxy that drops each request's first connection (every retry succeeds) once made
    the run declare the endpoint unreachable after 14 requests: all 22 PR analyses fell
    back, unretried, while the summary request then succeeded."""
    seen: set = set()

    def script(call):
        key = (call.kind, call.pr, call.attempt)
        if key not in seen:
            seen.add(key)
            return Reply(drop=True)
        return None

    with ScriptedLLM() as server:
        server.rules.append(script)
        rep = _report(verl_repo, _settings(verl_repo, tmp_path / "rb.db", server))
    assert {a.engine for a in rep.analyses.values()} == {"llm"}
    assert set(report_to_dict(rep)["sections"]["written_by"].values()) == {"llm:scripted-model", "computed"}
    assert rep.engine["fallbacks"] == [] and rep.warnings == []
    # each request was sent twice: the dropped first attempt and its retry
    assert rep.engine["requests"] == 46 and rep.engine["retries"] == 23 and rep.engine["connection_failures"] == 0


def test_an_endpoint_that_is_down_falls_back_at_once_and_sends_nothing(verl_repo, tmp_path):
    with ScriptedLLM() as server:
        settings = _settings(verl_repo, tmp_path / "rb.db", server, lang="zh")
    started = time.monotonic()
    rep = _report(verl_repo, settings)  # the server is gone: every connection is refused
    assert time.monotonic() - started < 15
    assert {a.engine for a in rep.analyses.values()} == {"offline"}
    eng = rep.engine
    # nothing reached an endpoint: no requests, no retries; the attempts are counted as what they were
    assert eng["requests"] == 0 and eng["retries"] == 0 and eng["connection_failures"] >= 4
    assert all("unreachable" in f["reason"] for f in eng["fallbacks"])
    assert "llm：22个PR的分析改由离线引擎完成（无法连接模型端点）" in rep.warnings, rep.warnings


def test_a_host_name_that_does_not_resolve_is_said_and_not_retried(verl_repo, tmp_path, monkeypatch):
    """A typo in the base URL's host (or a machine whose DNS knows no outside names) used
    to be retried with backoff like a dropped connection, and the user was told only
    "the endpoint was unreachable". (tests/netguard.py answers for `.invalid` names.)"""
    import socket

    asked: list[str] = []
    guarded = socket.getaddrinfo

    def lookup(host, *args, **kw):
        asked.append(host)
        return guarded(host, *args, **kw)

    monkeypatch.setattr(socket, "getaddrinfo", lookup)
    monkeypatch.setenv("OPENAI_BASE_URL", "http://llm.example.invalid:8000/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret-key")
    code, _, err = run_cli("report", str(verl_repo), "--name", "verl-project/verl", "--week", WEEK, "--tz", TZ,
                           "--lang", "en", "--engine", "llm", "--llm-model", "m", "--db", str(tmp_path / "rb.db"),
                           "--format", "json", "--out", str(tmp_path / "out"))
    assert code == 0, err
    rep = json.loads((tmp_path / "out" / "verl-project__verl-2026-W26.en.json").read_text())
    assert {p["analysis_engine"] for p in rep["pull_requests"]} == {"offline"}
    # no retries: each request that was already under way when the first failed asked once
    assert rep["engine"]["requests"] == 0 and len(asked) == rep["engine"]["connection_failures"] <= 8
    assert "(the endpoint was unreachable)" in err
    assert "22 PRs merged, 5 with importance ≥ 5, 9 risks; engine llm (nothing from the model: every part fell back" in err
    assert ("llm: request failed: endpoint http://llm.example.invalid:8000/v1 unreachable: its host name "
            "'llm.example.invalid' does not resolve (Name or service not known); check the base URL") in err
    assert "sk-secret-key" not in err


def test_a_retry_after_beyond_the_budget_says_so_and_retries_nothing(verl_repo, tmp_path):
    """A 429 with Retry-After: 3600 once made every unit fall back with "time budget of 600s
    used up (HTTP 429)" after 2.4 s, and counted 23 retries though none was sent."""
    with ScriptedLLM() as server:
        server.rules.append(lambda call: Reply(status=429, body={"error": {"message": "quota"}}, headers={"Retry-After": "3600"}))
        started = time.monotonic()
        rep = _report(verl_repo, _settings(verl_repo, tmp_path / "rb.db", server))
        sent = server.count()
    assert time.monotonic() - started < 30
    eng = rep.engine
    assert {a.engine for a in rep.analyses.values()} == {"offline"}
    reasons = {f["reason"] for f in eng["fallbacks"]}
    assert all("asked to wait 3600s before retrying (HTTP 429)" in r and "used up" not in r for r in reasons), reasons
    # the first requests in flight got the answer; none was retried, and the rest were not sent
    assert eng["retries"] == 0 and eng["requests"] == sent <= 8
    assert "llm: the analyses of 22 PRs fell back to the offline engine (the endpoint was rate-limiting requests)" in rep.warnings


def test_no_request_is_started_that_the_budget_cannot_wait_for(verl_repo, tmp_path):
    """With a 3 s budget and 1 s answers the run once sent 16 PR requests in its last
    0.75 s, gave each up after 0.1 s, counted them as retries and said "time budget of 3s
    used up (timed out after 60s)"."""
    with ScriptedLLM(latency=1.0) as server:
        rep = _report(verl_repo, _settings(verl_repo, tmp_path / "rb.db", server, budget_seconds=3))
        sent = server.count()
    eng = rep.engine
    llm = [n for n, a in rep.analyses.items() if a.engine == "llm"]
    composed = report_to_dict(rep)["sections"]["written_by"]["summary"] != "offline"
    assert llm and not composed  # 22 PRs at 8 a second, then the composition: more than 3 s
    # every request sent was answered and used: none given up, none retried
    assert eng["requests"] == sent == len(llm) and eng["retries"] == 0
    reasons = [f["reason"] for f in eng["fallbacks"]]
    assert reasons and all(r.startswith("request failed: time budget of 3s used up") for r in reasons), reasons
    assert not any("timed out" in r for r in reasons)
    assert any("the time budget of 3s ran out" in w for w in rep.warnings), rep.warnings


def test_an_html_page_at_the_base_url_is_a_clear_error_not_a_crash(verl_repo, tmp_path):
    """An endpoint answering HTTP 200 with a web page (a base URL without /v1, a proxy's
    login page) once crashed the run with an uncaught JSONDecodeError, exit 1."""
    base = [str(verl_repo), "--name", "verl-project/verl", "--week", WEEK, "--tz", TZ, "--format", "md",
            "--db", str(tmp_path / "rb.db"), "--engine", "llm", "--llm-model", "m"]
    for content_type in ("text/html", "application/json"):  # served as a page, or mislabelled
        with ScriptedLLM() as server:
            server.rules.append(lambda call, ct=content_type: Reply(body=HTML, content_type=ct))
            r = _cli("report", [*base, "--refresh"], {"OPENAI_BASE_URL": server.base_url}, tmp_path)
        assert r.returncode == 5, (content_type, r.returncode, r.stderr)
        assert "did not return JSON (an HTML page)" in r.stderr and "/v1" in r.stderr and "Traceback" not in r.stderr


def test_an_answer_whose_json_is_cut_short_is_asked_again_not_taken_for_a_web_page(verl_repo, tmp_path, monkeypatch):
    """A chat completion whose body ended mid-JSON (a proxy dropping the end of a body), as
    the first answer of the run, stopped the whole run with exit 5 and "is the base URL the
    API's?", though every other request was answered. It is asked again; a unit whose
    every answer is cut falls back alone."""
    cut = '{"id":"x","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"{\\"summ'
    seen: dict[int, int] = {}

    def script(call):
        if call.kind == "pr" and call.pr in (6779, 6823):
            seen[call.pr] = seen.get(call.pr, 0) + 1
            if call.pr == 6823 or seen[call.pr] == 1:  # 6779's first answer only; all of 6823's
                return Reply(body=cut)
        return Reply(delay=0.3)  # every good answer after the first cut one: the run's first answer is cut

    monkeypatch.setattr("repobrief.llm.client.BACKOFF_BASE", 0.01)  # retries in milliseconds
    with ScriptedLLM() as server:
        server.rules.append(script)
        rep = _report(verl_repo, _settings(verl_repo, tmp_path / "rb.db", server))
    engines = {n: a.engine for n, a in rep.analyses.items()}
    assert engines[6779] == "llm" and engines[6823] == "offline"
    assert [n for n, e in engines.items() if e == "offline"] == [6823]
    reason = {f["unit"]: f["reason"] for f in rep.engine["fallbacks"]}["pr:6823"]
    assert "the answer's JSON was cut short" in reason and "base URL" not in reason
    assert seen[6779] == 2


def test_a_non_json_answer_after_good_ones_fails_only_its_unit(verl_repo, tmp_path):
    def script(call):
        if call.kind == "week":  # the composition gets a page; the PR analyses were answered
            return Reply(body=HTML, content_type="application/json")
        return None

    with ScriptedLLM() as server:
        server.rules.append(script)
        rep = _report(verl_repo, _settings(verl_repo, tmp_path / "rb.db", server))
    assert {a.engine for a in rep.analyses.values()} == {"llm"}
    written = report_to_dict(rep)["sections"]["written_by"]
    assert written["summary"] == "offline" and rep.sections.summary
    reason = {f["unit"]: f["reason"] for f in rep.engine["fallbacks"]}["section:summary"]
    assert "the endpoint did not return JSON (an HTML page: is the base URL the API's, ending in /v1?)" in reason


def test_the_accounting_line_of_a_cached_rerun_counts_nothing_it_did_not_send(verl_repo, tmp_path):
    """A cached re-run once printed "0 requests, 0+0 tokens, 46 cached, 23 retries": the
    re-asks the cache answered were counted as retries."""
    base = [str(verl_repo), "--name", "verl-project/verl", "--week", WEEK, "--tz", TZ, "--lang", "en", "--format", "md",
            "--db", str(tmp_path / "rb.db"), "--engine", "llm", "--llm-model", "m"]
    with ScriptedLLM() as server:
        # one PR's first answer is malformed: it is re-asked, and the repaired answer passes
        server.rules.append(lambda call: Reply(content='{"oops",') if call.kind == "pr" and call.attempt == 0 and call.pr == 6779 else None)
        env = {"OPENAI_BASE_URL": server.base_url}
        first = _cli("report", base, env, tmp_path)
        again = _cli("report", base, env, tmp_path)
        assert server.count() == 24
    assert first.returncode == 0 and again.returncode == 0, first.stderr + again.stderr
    assert "llm m: 24 requests" in first.stderr and " 0 cached, 0 retries, 1 re-ask, 0 fallbacks" in first.stderr
    assert "nothing from the model" not in first.stderr + again.stderr  # answered, then answered from the cache
    line = next(x for x in again.stderr.splitlines() if x.startswith("llm m:"))
    assert re.match(r"llm m: 0 requests, 0\+0 tokens, 24 cached, 0 retries, 0 re-asks, 0 fallbacks$", line), line


def test_backfill_without_a_model_names_what_backfill_reads(verl_repo, tmp_path):
    """`backfill` once had no --llm-model flag while the hint told its users to pass one;
    it has the flag now, as `site` has, and the hint names every way to set the model."""
    r = _cli("backfill", [str(verl_repo), "--name", "verl-project/verl", "--from", WEEK, "--to", WEEK, "--tz", TZ,
                          "--out", str(tmp_path / "out"), "--engine", "llm", "--db", str(tmp_path / "rb.db")],
             {"OPENAI_BASE_URL": "http://admin:pa55word@127.0.0.1:9/v1?api-key=sk-inquery1234"}, tmp_path)
    assert r.returncode == 5, r.stderr
    assert "no model is set" in r.stderr and "[llm] model" in r.stderr and "REPOBRIEF_LLM_MODEL" in r.stderr
    assert "llm = {model = \"NAME\"} in the repository's table" in r.stderr and 'engine = "offline"' in r.stderr
    # the endpoint as it may be shown: a password in the URL or a key in its query never is
    assert "for the LLM endpoint http://admin:***@127.0.0.1:9/v1\n" in r.stderr
    assert "pa55word" not in r.stderr and "sk-inquery" not in r.stderr
    assert "`report`, `backfill`, `site` and `batch export` also take --llm-model NAME" in r.stderr
    model = _cli("backfill", [str(verl_repo), "--name", "verl-project/verl", "--from", WEEK, "--to", WEEK, "--tz", TZ,
                              "--out", str(tmp_path / "out"), "--engine", "llm", "--llm-model", "m", "--db",
                              str(tmp_path / "rb.db")], {"OPENAI_BASE_URL": "http://127.0.0.1:9/v1"}, tmp_path)
    assert model.returncode == 0 and "no model is set" not in model.stderr, model.stderr
    assert json.loads((tmp_path / "out" / "verl-project__verl-2026-W26.zh.json").read_text())["engine"]["model"] == "m"


def test_an_empty_week_of_an_llm_report_does_not_say_nothing_came_from_the_model(verl_repo, tmp_path):
    """A week with nothing merged asks the model nothing: no fallback, so the summary line
    must not say that every part fell back."""
    r = _cli("report", [str(verl_repo), "--name", "verl-project/verl", "--week", "2024-W02", "--tz", TZ, "--lang", "en",
                        "--engine", "llm", "--llm-model", "m", "--db", str(tmp_path / "rb.db"), "--out", str(tmp_path / "o")],
             {"OPENAI_BASE_URL": "http://127.0.0.1:9/v1"}, tmp_path)
    assert r.returncode == 0, r.stderr
    assert "0 PRs merged" in r.stderr and "engine llm\n" in r.stderr and "nothing from the model" not in r.stderr


def test_the_warning_says_why_answers_fell_back_when_they_were_cut_or_late(verl_repo, tmp_path, monkeypatch):
    """Answers cut at the token limit, or not given within llm.timeout, were told to the
    reader as "the requests failed" (请求失败): the cause and its setting were only in the
    JSON's engine.fallbacks."""
    monkeypatch.setattr("repobrief.llm.client.BACKOFF_BASE", 0.01)

    def script(call):
        if call.kind == "pr" and call.pr == 6779:
            return Reply(content='{"ok": tr', finish_reason="length")
        if call.kind == "pr" and call.pr == 6823:
            return Reply(delay=3.0)  # longer than the timeout, at every attempt
        return None

    with ScriptedLLM() as server:
        server.rules.append(script)
        rep = _report(verl_repo, _settings(verl_repo, tmp_path / "rb.db", server, "zh", timeout=1))
    kinds = {f["unit"]: f["kind"] for f in rep.engine["fallbacks"]}
    assert kinds["pr:6779"] == "cut" and kinds["pr:6823"] == "timeout"
    line = next(w for w in rep.warnings if "个PR的分析改由离线引擎完成" in w)
    assert "回答在令牌上限处被截断（请调高llm.max_output_tokens）" in line
    assert "模型端点未在llm.timeout内作答" in line and "请求失败" not in line
    assert line in render_report(rep, "md")
