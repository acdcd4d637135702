"""The LLM client against a real HTTP server on 127.0.0.1: response modes, the
cache, retries honouring Retry-After, timeouts, the budget and clear errors."""

from __future__ import annotations

import asyncio
import json
import time

import pytest
from llmserver import Reply, ScriptedLLM

from repobrief.config import LLMSettings
from repobrief.engines.llm import check_settings
from repobrief.errors import ConfigError, EngineError
from repobrief.llm.client import Accounting, ChatClient, UnitFailed, choose_mode, estimate_tokens, redact
from repobrief.llm.extract import ExtractionError, extract_json
from repobrief.store import open_store

MESSAGES = [
    {"role": "system", "content": "system"},
    {"role": "user", "content": "Analyse pull request #7.\nsomething"},
]
SCHEMA = {"type": "object", "properties": {"ok": {"type": "boolean"}}}


def _run(settings: LLMSettings, store=None, refresh=False, budget=None, messages=MESSAGES):
    acct = Accounting(model=settings.model)

    async def go():
        client = ChatClient(
            settings,
            store=store,
            refresh=refresh,
            prompt_version="t1",
            accounting=acct,
            deadline=time.monotonic() + (budget or settings.budget_seconds),
        )
        try:
            return await client.complete(messages, "answer", SCHEMA), client
        finally:
            await client.aclose()

    (text, client) = asyncio.run(go())
    return text, acct, client


@pytest.fixture
def llm():
    with ScriptedLLM() as server:
        yield server


def _settings(server, **kw) -> LLMSettings:
    base = dict(model="test-model", base_url=server.base_url, api_key="sk-secret-key-123456", timeout=5.0, budget_seconds=30.0)
    base.update(kw)
    return LLMSettings(**base)


def test_json_schema_mode_sends_the_schema_and_counts_tokens(llm):
    llm.rules.append(lambda c: Reply(content='{"ok": true}'))
    text, acct, _ = _run(_settings(llm))
    assert json.loads(text) == {"ok": True}
    body = llm.calls[0].body
    assert body["response_format"]["type"] == "json_schema"
    assert body["response_format"]["json_schema"]["schema"] == SCHEMA
    assert llm.calls[0].headers["authorization"] == "Bearer sk-secret-key-123456"
    assert acct.requests == 1 and acct.prompt_tokens > 0 and acct.completion_tokens > 0


def test_deepseek_gets_json_object_and_tools_mode_reads_tool_calls(llm):
    assert choose_mode(LLMSettings(base_url="https://api.deepseek.com/v1", model="deepseek-chat")) == "json_object"
    assert choose_mode(LLMSettings(base_url="https://dashscope.aliyuncs.com/compatible-mode/v1", model="qwen-plus")) == "json_schema"
    assert choose_mode(LLMSettings(model="deepseek-chat", response_format="tools")) == "tools"
    llm.rules.append(lambda c: Reply(content='{"ok": false}'))
    _run(_settings(llm, model="deepseek-chat"))
    assert llm.calls[-1].body["response_format"] == {"type": "json_object"}
    text, _, _ = _run(_settings(llm, response_format="tools"))
    assert json.loads(text) == {"ok": False}
    assert llm.calls[-1].body["tool_choice"]["function"]["name"] == "answer"


def test_provider_rejecting_json_schema_switches_to_json_object(llm):
    def rule(call):
        if call.body.get("response_format", {}).get("type") == "json_schema":
            return Reply(status=400, body={"error": {"message": "response_format type json_schema is unavailable"}})
        return Reply(content='{"ok": true}')

    llm.rules.append(rule)
    text, _, client = _run(_settings(llm))
    assert json.loads(text) == {"ok": True} and client.mode == "json_object"


def test_requests_in_flight_when_json_schema_is_rejected_are_asked_again_in_json_object(llm):
    def rule(call):
        if call.body.get("response_format", {}).get("type") == "json_schema":
            # slow enough that every request is sent before the first rejection returns
            return Reply(status=400, body={"error": {"message": "response_format json_schema is not supported"}}, delay=0.3)
        return Reply(content='{"ok": true}')

    llm.rules.append(rule)
    acct = Accounting(model="test-model")

    async def go():
        client = ChatClient(
            _settings(llm, concurrency=4), prompt_version="t1", accounting=acct, deadline=time.monotonic() + 30
        )
        try:
            asks = [[MESSAGES[0], {"role": "user", "content": f"Analyse pull request #{n}.\nsomething"}] for n in range(4)]
            return await asyncio.gather(*(client.complete(m, "answer", SCHEMA) for m in asks), return_exceptions=True)
        finally:
            await client.aclose()

    answers = asyncio.run(go())
    assert answers == ['{"ok": true}'] * 4, answers
    sent = [(c.pr, c.body.get("response_format", {}).get("type")) for c in llm.calls]
    assert sorted(sent) == sorted([(n, "json_schema") for n in range(4)] + [(n, "json_object") for n in range(4)])


def test_tokens_are_estimated_when_the_server_reports_no_usage(llm, tmp_path):
    answer = json.dumps({"ok": True, "note": "a fairly long answer " * 20})
    llm.rules.append(
        lambda c: Reply(body={"id": "x", "object": "chat.completion", "created": 0, "model": "m",
                              "choices": [{"index": 0, "message": {"role": "assistant", "content": answer}, "finish_reason": "stop"}]})
    )
    store = open_store(str(tmp_path / "c.db"))
    try:
        text, acct, _ = _run(_settings(llm), store=store)
        assert text == answer
        assert acct.prompt_tokens == acct.prompt_tokens_estimated > 0
        assert acct.completion_tokens == estimate_tokens(answer) > 100
        # a re-run served from the cache counts what the answer had cost
        _, again, _ = _run(_settings(llm), store=store)
        assert again.cached_completion_tokens == estimate_tokens(answer)
    finally:
        store.close()


def test_cache_second_call_sends_nothing_and_refresh_bypasses(llm, tmp_path):
    llm.rules.append(lambda c: Reply(content='{"ok": true}'))
    with open_store(tmp_path / "rb.db") as store:
        _run(_settings(llm), store=store)
        text, acct, _ = _run(_settings(llm), store=store)
        assert llm.count() == 1 and acct.cache_hits == 1 and acct.requests == 0
        assert json.loads(text) == {"ok": True}
        _run(_settings(llm), store=store, refresh=True)
        assert llm.count() == 2
        _run(_settings(llm, model="other-model"), store=store)  # another model: another key
        assert llm.count() == 3


def test_429_with_retry_after_is_honoured(llm):
    seen = []

    def rule(call):
        seen.append(time.monotonic())
        if len(seen) == 1:
            return Reply(status=429, body={"error": {"message": "slow down"}}, headers={"Retry-After": "1"})
        return Reply(content='{"ok": true}')

    llm.rules.append(rule)
    text, acct, _ = _run(_settings(llm))
    assert json.loads(text) == {"ok": True}
    assert acct.requests == 2 and acct.retries == 1
    assert seen[1] - seen[0] >= 0.9  # waited as the server asked, not the shorter default backoff


def test_500_then_success_and_persistent_500_fails_the_unit(llm):
    n = {"i": 0}

    def rule(call):
        n["i"] += 1
        return Reply(status=500, body={"error": {"message": "boom"}}) if n["i"] == 1 else Reply(content='{"ok": 1}')

    llm.rules.append(rule)
    _, acct, _ = _run(_settings(llm))
    assert acct.retries == 1
    llm.rules[:] = [lambda c: Reply(status=503, body={"error": {"message": "down"}}, headers={"retry-after-ms": "10"})]
    with pytest.raises(UnitFailed, match="HTTP 503 after 4 attempts"):
        _run(_settings(llm))


def test_slow_answer_times_out_then_retry_succeeds(llm):
    seen = []

    def rule(call):
        seen.append(time.monotonic())
        return Reply(content='{"ok": true}', delay=3.0 if len(seen) == 1 else 0.0)

    llm.rules.append(rule)
    text, acct, _ = _run(_settings(llm, timeout=0.5))
    assert json.loads(text) == {"ok": True}
    # the client gave up on the slow answer and asked again long before it came
    assert acct.retries == 1 and seen[1] - seen[0] < 2.5


def test_overall_budget_stops_retrying(llm):
    import openai  # noqa: F401 - imported before the budget's clock starts

    llm.rules.append(lambda c: Reply(content="{}", delay=3.0))
    with pytest.raises(UnitFailed, match="budget"):
        _run(_settings(llm, timeout=0.4), budget=1.0)
    # four attempts at 0.4 s each would not fit in the 1 s budget: it stopped early
    assert 1 <= llm.count() < 4


def test_bad_key_is_a_clear_error_without_the_key():
    with ScriptedLLM(require_key="sk-right") as server:
        with pytest.raises(EngineError) as e:
            _run(_settings(server, api_key="sk-wrong-secret-abcdef"))
    msg = str(e.value)
    assert "refused the API key" in msg and "OPENAI_API_KEY" in msg and "--engine offline" in msg
    assert "sk-wrong-secret-abcdef" not in msg and "abcdef" not in msg


def test_unknown_model_is_a_clear_error():
    with ScriptedLLM(models=("real-model",)) as server:
        with pytest.raises(EngineError) as e:
            _run(_settings(server, model="no-such-model"))
    assert "no-such-model" in str(e.value) and "--llm-model" in str(e.value)


def test_endpoint_down_fails_units_quickly():
    with ScriptedLLM() as server:
        url = server.base_url  # the port is free again once the server stops
    with pytest.raises(UnitFailed, match="unreachable"):
        _run(LLMSettings(model="m", base_url=url, api_key="k", timeout=2.0), budget=20)


def test_settings_errors_name_the_variables():
    with pytest.raises(EngineError) as e:
        check_settings(LLMSettings())
    for word in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "REPOBRIEF_LLM_API_KEY", "--engine offline"):
        assert word in str(e.value)
    with pytest.raises(EngineError, match="--llm-model"):
        check_settings(LLMSettings(base_url="http://127.0.0.1:11434/v1"))
    with pytest.raises(EngineError, match="not an http"):
        check_settings(LLMSettings(base_url="localhost:8000", model="m"))
    assert check_settings(LLMSettings(api_key="sk-x")).model == "gpt-4o-mini"
    with pytest.raises(ConfigError, match="response_format"):
        check_settings(LLMSettings(api_key="k", response_format="xml"))


def test_tolerant_extraction():
    assert extract_json('```json\n{"a": 1}\n```') == {"a": 1}
    assert extract_json('Sure! Here it is:\n{"a": {"b": [1, 2]}}\nHope that helps.') == {"a": {"b": [1, 2]}}
    assert extract_json('\ufeff{"a": 1}') == {"a": 1}
    with pytest.raises(ExtractionError, match="blank"):
        extract_json("   ")
    with pytest.raises(ExtractionError, match="not valid JSON"):
        extract_json('{"a": 1,, }')
    with pytest.raises(ExtractionError, match="no JSON object"):
        extract_json("I cannot help with that.")


@pytest.mark.parametrize("unit", ["{", '{"'])
def test_an_answer_stuck_repeating_braces_is_refused_at_once(unit):
    """A small model stuck in a loop answers "{{{{…" until its context ends: each brace was
    tried as an object's start, and each failure counted the lines before it, quadratic
    (200,000 characters took minutes). The first braces are tried; the answer is refused."""
    from hangguard import finishes

    def refused(text: str) -> str:
        try:
            extract_json(text)
        except ExtractionError as e:
            return str(e)
        return "accepted"

    assert finishes(refused, unit * 1_000_000, within=20).startswith("the answer is not valid JSON")
    assert extract_json("{" * 10 + ' prose, then {"a": 1}') == {"a": 1}  # braces before the object: still found


def test_helpers():
    from repobrief.llm.client import public_endpoint

    assert public_endpoint("https://u:secret@h.example/v1?api-key=abc") == "https://u:***@h.example/v1"
    assert public_endpoint("") == "https://api.openai.com/v1"
    assert estimate_tokens("abcd" * 10) == 10
    assert estimate_tokens("中文字符") == 4
    assert redact("key sk-abcdefghijkl leaked, and mine", "mine") == "key sk-ab*** leaked, and ***"


def test_retry_after_as_http_date(llm):
    import email.utils

    seen = []

    def rule(call):
        seen.append(time.monotonic())
        if len(seen) == 1:
            when = email.utils.formatdate(time.time() + 2, usegmt=True)  # whole seconds: waits 1-2 s
            return Reply(status=503, body={"error": {"message": "maintenance"}}, headers={"Retry-After": when})
        return Reply(content='{"ok": true}')

    llm.rules.append(rule)
    _, acct, _ = _run(_settings(llm))
    assert acct.retries == 1 and seen[1] - seen[0] >= 0.9


def test_a_read_only_cache_costs_requests_not_answers(llm, tmp_path):
    db = tmp_path / "rb.db"
    open_store(db).close()
    llm.rules.append(lambda c: Reply(content='{"ok": true}'))
    with open_store(f"sqlite:///file:{db}?mode=ro&uri=true", migrate=False) as store:
        text, acct, _ = _run(_settings(llm), store=store)
    assert json.loads(text) == {"ok": True} and acct.requests == 1
    assert [f["unit"] for f in acct.fallbacks] == ["cache"] and "readonly" in acct.fallbacks[0]["reason"]


def test_model_refusing_temperature_is_asked_without_it_and_cache_keys_stay(llm, tmp_path):
    def rule(call):
        if "temperature" in call.body:
            return Reply(status=400, body={"error": {"message": "Unsupported value: 'temperature' does not support 0 with this model."}})
        return Reply(content='{"ok": true}')

    llm.rules.append(rule)
    with open_store(tmp_path / "rb.db") as store:
        text, acct, client = _run(_settings(llm), store=store)
        assert json.loads(text) == {"ok": True} and acct.requests == 2 and acct.fallbacks == []
        _, again, _ = _run(_settings(llm), store=store)  # a new run starts with temperature again: same key
        assert again.requests == 0 and again.cache_hits == 1


def test_an_answer_cap_is_sent_under_the_field_the_endpoint_takes_and_cache_keys_stay(llm, tmp_path):
    """`llm.max_output_tokens` caps each answer. Servers speaking OpenAI's protocol take
    `max_tokens`; OpenAI's reasoning models reject it and want `max_completion_tokens`:
    the run switches once, and the cache key is the request as the settings ask for it."""
    def rule(call):
        if "max_tokens" in call.body:
            return Reply(status=400, body={"error": {"message": "Unsupported parameter: 'max_tokens' is not supported "
                                                                "with this model. Use 'max_completion_tokens' instead."}})
        return Reply(content='{"ok": true}')

    llm.rules.append(rule)
    with open_store(tmp_path / "rb.db") as store:
        text, acct, _ = _run(_settings(llm, max_output_tokens=800), store=store)
        assert json.loads(text) == {"ok": True} and acct.requests == 2
        first, second = llm.calls[0].body, llm.calls[1].body
        assert first["max_tokens"] == 800 and "max_completion_tokens" not in first
        assert second["max_completion_tokens"] == 800 and "max_tokens" not in second
        _, again, _ = _run(_settings(llm, max_output_tokens=800), store=store)
        assert again.requests == 0 and again.cache_hits == 1
    assert "max_tokens" not in _request_body(_settings(llm))  # no cap: the endpoint's own limit
    assert _request_body(LLMSettings(model="o3", max_output_tokens=500))["max_completion_tokens"] == 500  # OpenAI's API


def _request_body(settings: LLMSettings) -> dict:
    from repobrief.llm.client import chat_request

    return chat_request(settings, "json_schema", MESSAGES, "answer", SCHEMA)


def test_an_answer_cut_at_the_cap_fails_its_unit_saying_what_to_raise(llm):
    """A JSON answer cut short is no answer, and asking again would cut it again."""
    llm.rules.append(lambda c: Reply(content='{"ok": tr', finish_reason="length"))
    with pytest.raises(UnitFailed, match=r"cut at the llm.max_output_tokens limit of 50 tokens: raise it"):
        _run(_settings(llm, max_output_tokens=50))
    assert len(llm.calls) == 1
    with pytest.raises(UnitFailed, match=r"cut at the endpoint's token limit: set llm.max_output_tokens"):
        _run(_settings(llm))


def test_a_cap_out_of_the_endpoints_range_is_not_asked_under_the_other_field(llm):
    """"max_tokens must be at most 4096" is about the value: the unit fails with the
    endpoint's words, and the field is not switched."""
    llm.rules.append(lambda c: Reply(status=400, body={"error": {"message": "max_tokens must be at most 4096, got 100000"}}))
    with pytest.raises(UnitFailed, match="rejected the request .HTTP 400: .*max_tokens must be at most 4096"):
        _run(_settings(llm, max_output_tokens=100000))
    assert len(llm.calls) == 1 and "max_completion_tokens" not in llm.calls[0].body


def test_attempts_that_cannot_connect_are_not_counted_as_requests():
    """Connection-refused attempts were once counted as requests sent."""
    with ScriptedLLM() as server:
        url = server.base_url  # the port is free again once the server stops
    acct = Accounting(model="m")

    async def go():
        client = ChatClient(LLMSettings(model="m", base_url=url, api_key="k", timeout=2.0), prompt_version="t1",
                            accounting=acct, deadline=time.monotonic() + 20)
        try:
            await client.complete(MESSAGES, "answer", SCHEMA)
        finally:
            await client.aclose()

    with pytest.raises(UnitFailed, match="unreachable") as e:
        asyncio.run(go())
    assert e.value.kind == "unreachable"
    assert acct.requests == 0 and acct.retries == 0 and acct.connection_failures == 4


def test_json_that_is_not_a_chat_completion_is_a_clear_error(llm):
    llm.rules.append(lambda c: Reply(body={"status": "ok", "service": "gateway"}))
    with pytest.raises(EngineError) as e:
        _run(_settings(llm))
    assert "did not return a chat completion" in str(e.value) and "/v1" in e.value.hint
