"""Publishing cards to webhook receivers on 127.0.0.1 that verify each platform's signature."""

from __future__ import annotations

import email.utils
import logging
import re
import socket
import threading
import time

import httpx
import pytest
from receivers import HangUpServer, Receiver, json_response, loopback_server_fixture
from sample_report import sample_report
from werkzeug.wrappers import Response

from repobrief.config import PublishTarget
from repobrief.errors import PublishError, UsageError
from repobrief.publish import publish
from repobrief.publish.dingtalk import dingtalk_sign

SECRET = "SEC0123456789abcdef-very-secret"
TOKEN = "b7c1e2d3-4f5a-6b7c-8d9e-0f1a2b3c4d5e"

PATHS = {
    "feishu": f"/open-apis/bot/v2/hook/{TOKEN}",
    "lark": f"/open-apis/bot/v2/hook/{TOKEN}",
    "dingtalk": f"/robot/send?access_token={TOKEN}",
    "wecom": f"/cgi-bin/webhook/send?key={TOKEN}",
    "slack": f"/services/T000/B000/{TOKEN}",
    "webhook": f"/hooks/{TOKEN}",
}
SIGNED = {"feishu", "lark", "dingtalk", "webhook"}


server = loopback_server_fixture()


@pytest.fixture
def receiver(server):
    """A function that installs a verifying receiver for a platform and returns (receiver, url)."""
    server.clear()

    def install(platform: str, secret: str = "") -> tuple[Receiver, str]:
        r = Receiver(platform, secret)
        path = PATHS[platform].split("?")[0]
        server.expect_request(path, method="POST").respond_with_handler(r)
        return r, server.url_for(PATHS[platform])

    return install


def no_sleep(seconds: float) -> None:
    """Sleeps no time, but the publishers' clock (`slept_clock`) moves on by it."""
    no_sleep.calls.append(seconds)
    no_sleep.slept += seconds


no_sleep.calls = []
no_sleep.slept = 0.0


def slept_clock() -> float:
    return time.time() + no_sleep.slept


def post(platform, url, secret="", lang="en", **kw):
    kw.setdefault("sleep", no_sleep)
    kw.setdefault("clock", slept_clock)
    kw.setdefault("backoff", 0.01)
    return publish(sample_report(lang, hostile=True), PublishTarget(platform, url, secret), **kw)


@pytest.mark.parametrize("platform", sorted(PATHS))
def test_each_platform_accepts_the_signed_card(receiver, platform):
    secret = SECRET if platform in SIGNED else ""
    r, url = receiver(platform, secret)
    result = post(platform, url, secret, lang="zh")
    assert r.refusals == [] and len(r.received) == 1
    assert result.attempts == 1 and result.status == 200
    text = r.received[0].raw.decode()
    assert "verl-project/verl" in text and "6700" in text
    assert "reports.example.com/verl/2026-W26.html" in text  # the button / link to the full report
    if platform in ("feishu", "lark"):
        assert r.received[0].body["sign"] and r.received[0].body["timestamp"].isdigit()
    if platform == "dingtalk":
        assert r.received[0].query["access_token"] == TOKEN
        assert r.received[0].body["msgtype"] == "actionCard"


@pytest.mark.parametrize("platform", ["feishu", "dingtalk", "webhook"])
def test_wrong_secret_is_refused_with_a_clear_error_that_hides_the_secret(receiver, platform):
    r, url = receiver(platform, SECRET)
    with pytest.raises(PublishError) as e:
        post(platform, url, "not-the-right-secret")
    msg = str(e.value)
    assert r.refusals, "the receiver must have seen a bad signature"
    assert "refused" in msg and platform in msg
    assert "not-the-right-secret" not in msg and TOKEN not in msg and SECRET not in msg
    assert "127.0.0.1" in msg  # the host is named, so the user knows which hook


def test_feishu_non_zero_code_on_http_200_is_a_failure(receiver):
    r, url = receiver("feishu", SECRET)
    r.script = [json_response({"code": 19024, "msg": "Key Words Not Found", "data": {}})]
    with pytest.raises(PublishError) as e:
        post("feishu", url, SECRET)
    assert "code 19024" in str(e.value) and "Key Words Not Found" in str(e.value)
    assert "keyword" in e.value.hint
    assert len(r.received) == 1  # a refusal is not retried


@pytest.mark.parametrize(
    ("platform", "answer"),
    [
        ("feishu", Response(f"<html>sign in to continue {TOKEN}</html>", 200, content_type="text/html")),
        ("lark", json_response({"data": {}})),  # JSON, but no code
        ("dingtalk", Response("", 200)),
        ("wecom", json_response(["ok"])),
        ("slack", Response("<html>captive portal</html>", 200, content_type="text/html")),
    ],
)
def test_an_answer_that_is_not_the_platforms_success_is_a_failure(receiver, platform, answer):
    secret = SECRET if platform in SIGNED else ""
    r, url = receiver(platform, secret)
    r.script = [answer]
    with pytest.raises(PublishError) as e:
        post(platform, url, secret)
    msg = str(e.value)
    assert f"{platform} webhook at http://127.0.0.1:" in msg and "did not confirm the message: HTTP 200" in msg
    assert TOKEN not in msg and SECRET not in msg
    assert len(r.received) == 1  # not retried: the card may have arrived


def test_generic_webhook_takes_any_2xx_answer(receiver):
    r, url = receiver("webhook")
    r.script = [Response("<html>thanks</html>", 200, content_type="text/html"), Response("", 204)]
    assert post("webhook", url).status == 200
    assert post("webhook", url).status == 204


def test_feishu_rate_limit_code_is_retried(receiver):
    r, url = receiver("feishu", SECRET)
    r.script = [json_response({"code": 11232, "msg": "frequency limited"})]
    result = post("feishu", url, SECRET)
    assert result.attempts == 2 and len(r.received) == 2 and r.refusals == []


def test_429_waits_for_retry_after_then_succeeds(receiver):
    r, url = receiver("slack")
    r.script = [Response("rate_limited", 429, headers={"Retry-After": "7"})]
    no_sleep.calls.clear()
    result = post("slack", url)
    assert result.attempts == 2 and no_sleep.calls == [7.0]


def test_500_is_retried_with_backoff_and_then_given_up(receiver):
    r, url = receiver("wecom")
    r.script = [Response("upstream error", 500) for _ in range(3)]
    no_sleep.calls.clear()
    with pytest.raises(PublishError) as e:
        post("wecom", url, retries=2, backoff=0.5)
    assert "after 3 attempt(s)" in str(e.value) and "HTTP 500" in str(e.value)
    assert "rate-limiting" in e.value.hint
    assert no_sleep.calls == [0.5, 1.0]
    assert len(r.received) == 3


def test_500_then_success(receiver):
    r, url = receiver("dingtalk", SECRET)
    r.script = [Response("busy", 502)]
    result = post("dingtalk", url, SECRET)
    assert result.attempts == 2 and r.refusals == []


def test_unreachable_webhook_fails_clearly_without_the_url():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again when the block ends: nothing listens there
    url = f"http://127.0.0.1:{port}/open-apis/bot/v2/hook/{TOKEN}"
    no_sleep.calls.clear()
    with pytest.raises(PublishError) as e:
        post("feishu", url, SECRET, retries=1)
    assert "cannot connect (Connection refused)" in str(e.value) and "after 2 attempt(s)" in str(e.value)
    assert TOKEN not in str(e.value) and SECRET not in str(e.value)
    assert "network" in e.value.hint
    assert no_sleep.calls == [0.01]  # nothing was sent: retried


def test_logs_never_contain_the_secret_or_the_webhook_token(receiver, caplog):
    caplog.set_level(logging.DEBUG)
    r, url = receiver("dingtalk", SECRET)
    r.script = [Response("busy", 503)]
    post("dingtalk", url, SECRET)
    # Everything the client side logs (repobrief, httpx, httpcore); werkzeug is the receiver.
    logged = "\n".join(rec.getMessage() for rec in caplog.records if not rec.name.startswith("werkzeug"))
    assert "posting dingtalk card" in logged
    assert SECRET not in logged and TOKEN not in logged and "access_token" not in logged


def test_dingtalk_signature_survives_url_encoding(receiver):
    # base64 signatures contain '+', '/' and '='; the receiver decodes the query once.
    r, url = receiver("dingtalk", SECRET)
    clocks = [1_780_000_000.0 + i * 0.001 for i in range(40)]
    signs = [dingtalk_sign(str(int(c * 1000)), SECRET) for c in clocks]
    assert any("+" in s or "/" in s for s in signs)
    import time as _time

    for c in clocks:
        # A fixed clock in the past would fail the freshness check; shift it to now.
        now = _time.time() + (c - clocks[0])
        post("dingtalk", url, SECRET, clock=lambda now=now: now)
    assert r.refusals == [] and len(r.received) == 40


@pytest.mark.parametrize(
    ("target", "url", "secret", "needle"),
    [
        ("slack", "https://hooks.slack.com/services/T/B/x", "s3cret", "no signing secret"),
        ("feishu", "", "", "no webhook URL"),
        ("feishu", "ftp://example.com/hook", "", "not an http(s) URL"),
        ("dingtalk", "https://oapi.dingtalk.com:port/robot/send?access_token=s3cret", "", "has a port that is not a number"),
        ("feishu", "https://open.feishu.cn:99999/open-apis/bot/v2/hook/s3cret", "", "has a port out of range (99999; "),
        ("wecom", "qyapi.weixin.qq.com/cgi-bin/webhook/send?key=s3cret", "", "not an http(s) URL"),
        ("wecom", "https://qyapi..weixin.qq.com/cgi-bin/webhook/send?key=s3cret", "", "invalid host name 'qyapi..weixin.qq.com'"),
        ("feishu", "https://open feishu.cn/open-apis/bot/v2/hook/s3cret", "", "invalid host name 'open feishu.cn'"),
        ("slack", f"https://{'x' * 64}.slack.com/services/T/B/s3cret", "", "invalid host name"),
        ("webhook", "https:///hooks/s3cret", "", "not an http(s) URL"),
    ],
)
def test_bad_targets_are_usage_errors(target, url, secret, needle):
    with pytest.raises(UsageError) as e:
        post(target, url, secret)
    assert needle in str(e.value)
    assert "s3cret" not in str(e.value)


def test_unknown_target_suggests_the_nearest():
    with pytest.raises(UsageError) as e:
        post("feishuu", "https://open.feishu.cn/x")
    assert "feishu" in str(e.value.hint)


def test_target_link_goes_into_the_card_without_changing_the_report(receiver):
    r, url = receiver("slack")
    report = sample_report("en")
    publish(report, PublishTarget("slack", url, link="https://pages.example.org/w26.html"), sleep=no_sleep)
    assert r.received[0].body["blocks"][-1]["elements"][0]["url"] == "https://pages.example.org/w26.html"
    assert report.card.link == "https://reports.example.com/verl/2026-W26.html"


def test_generic_webhook_success_is_decided_by_http_status(receiver):
    r, url = receiver("webhook", SECRET)
    r.script = [json_response({"code": 201, "status": "queued"})]  # a receiver's own vocabulary
    result = post("webhook", url, SECRET)
    assert result.attempts == 1 and result.status == 200


# ------------------------------------------------------- never post twice; say what happened


def drain(server) -> None:
    """Wait until the (one-threaded) receiver has handled every request sent before this one."""
    server.expect_request("/drained").respond_with_data("drained")
    assert httpx.get(server.url_for("/drained"), timeout=10).text == "drained"


def test_a_late_answer_is_not_retried_the_card_may_have_been_posted(receiver, server):
    """The card arrived and was answered after --timeout: a retry would post it twice."""
    r, url = receiver("feishu", SECRET)
    answer = threading.Event()

    def slow(request):
        response = r(request)
        answer.wait(10)
        return response

    server.clear()
    server.expect_request(PATHS["feishu"], method="POST").respond_with_handler(slow)
    no_sleep.calls.clear()
    try:
        with pytest.raises(PublishError) as e:
            post("feishu", url, SECRET, timeout=0.3, retries=1)
    finally:
        answer.set()
    drain(server)
    assert len(r.received) == 1 and no_sleep.calls == []
    msg = str(e.value)
    assert "no answer within 0.3 s after the card was sent" in msg and "may or may not have been posted" in msg
    assert "check the chat before running publish again" in e.value.hint and "--timeout" in e.value.hint
    assert TOKEN not in msg and SECRET not in msg


def test_a_connection_closed_after_sending_is_not_retried_nor_called_cannot_connect():
    server = HangUpServer()
    try:
        with pytest.raises(PublishError) as e:
            post("slack", server.url_for(PATHS["slack"]), retries=2)
        assert len(server.requests) == 1
    finally:
        server.close()
    msg = str(e.value)
    assert msg.startswith(f"slack webhook at http://127.0.0.1:{server.port}/…: the connection was closed after the card was sent")
    assert "may or may not have been posted" in msg and "cannot connect" not in msg
    assert "check the chat before running publish again" in e.value.hint
    assert TOKEN not in msg


def test_a_retry_after_beyond_the_cap_gives_up_at_once(receiver):
    r, url = receiver("feishu", SECRET)
    r.script = [Response("rate limited", 429, headers={"Retry-After": "100"})]
    no_sleep.calls.clear()
    with pytest.raises(PublishError) as e:
        post("feishu", url, SECRET, retries=1)
    assert no_sleep.calls == [] and len(r.received) == 1  # neither waited 30 s nor retried into the limit
    assert "asks to wait 100 s before posting again (HTTP 429 rate limited); the card was not posted" in str(e.value)
    assert "run `repobrief publish` again later" in e.value.hint


def test_a_retry_after_date_is_honoured(receiver):
    r, url = receiver("slack")
    when = email.utils.formatdate(slept_clock() + 600, usegmt=True)  # ten minutes: beyond the cap
    r.script = [Response("rate_limited", 429, headers={"Retry-After": when})]
    no_sleep.calls.clear()
    with pytest.raises(PublishError) as e:
        post("slack", url, retries=1)
    assert no_sleep.calls == [] and len(r.received) == 1
    assert re.search(r"asks to wait (599|600) s before posting again", str(e.value)), str(e.value)


def test_a_host_that_does_not_resolve_is_said_and_not_retried():
    no_sleep.calls.clear()  # (tests/netguard.py answers for `.invalid` names)
    with pytest.raises(PublishError) as e:
        post("wecom", f"https://no-such-host.invalid/cgi-bin/webhook/send?key={TOKEN}")
    assert no_sleep.calls == []
    assert "the host name 'no-such-host.invalid' does not resolve" in str(e.value) and "after" not in str(e.value)
    assert "typo" in e.value.hint and TOKEN not in str(e.value)


def test_a_redirect_says_the_webhook_url_redirects(receiver, server):
    r, url = receiver("feishu", SECRET)
    secure = f"https://127.0.0.1:{server.port}{PATHS['feishu']}"
    r.script = [Response("", 302, headers={"Location": secure})]
    with pytest.raises(PublishError) as e:
        post("feishu", url, SECRET)
    msg = str(e.value)
    assert f"HTTP 302, a redirect to https://127.0.0.1:{server.port}/…" in msg and TOKEN not in msg
    assert "the webhook URL redirects" in e.value.hint and "https://" in e.value.hint
    assert "copy the URL from the bot's settings" in e.value.hint


def test_the_generic_target_is_named_webhook_once(receiver):
    r, url = receiver("webhook")
    r.script = [Response("nope", 403)]
    with pytest.raises(PublishError) as e:
        post("webhook", url)
    assert str(e.value).startswith("webhook at http://127.0.0.1:") and "webhook webhook" not in str(e.value)


def test_a_slack_404_hint_does_not_ask_for_a_secret_slack_has_none(receiver):
    r, url = receiver("slack")
    r.script = [Response("no_service", 404)]
    with pytest.raises(PublishError) as e:
        post("slack", url)
    assert "HTTP 404 no_service" in str(e.value)
    assert "webhook URL" in e.value.hint and "secret" not in e.value.hint


# ------------------------------------------------------------------ pacing


def test_the_21st_card_to_one_dingtalk_robot_in_a_minute_waits_for_a_slot(receiver, caplog):
    """DingTalk takes 20 messages a minute per robot and then blocks it for ten minutes:
    `run` over 25 repositories posted all their cards at once, and 5 failed. The 21st post
    now waits until the first is a minute old, and says why."""
    r, url = receiver("dingtalk", SECRET)
    no_sleep.calls.clear()
    with caplog.at_level(logging.WARNING, logger="repobrief.publish"):
        for _ in range(21):
            post("dingtalk", url, SECRET)
    assert len(r.received) == 21 and r.refusals == []
    assert len(no_sleep.calls) == 1 and 30 < no_sleep.calls[0] <= 60, no_sleep.calls  # until the first is 60 s old
    assert "DingTalk takes 20 messages a minute per robot" in caplog.text and TOKEN not in caplog.text


def test_a_robots_post_times_are_shared_by_every_process_and_hold_no_secret(tmp_path):
    """The times are kept in a file other processes read: a `publish` run after a `run`
    (or another worker of the same run) waits for the same robot's slots. The file is
    named by a hash of the webhook URL and holds nothing but times."""
    import subprocess
    import sys

    from repobrief.publish.pacing import take_slot

    hook = f"https://oapi.dingtalk.com/robot/send?access_token={TOKEN}"
    for at in (1000.0, 1000.1, 1000.2):  # three posts in this process, on a clock of the test's
        take_slot(hook, ((3, 2.0),), clock=lambda at=at: at, sleep=no_sleep, why="test", folder=tmp_path)
    # a fourth from another process, at 1000.5: it waits until the first is 2 s old
    code = ("import sys; from pathlib import Path; from repobrief.publish.pacing import take_slot; "
            "take_slot(sys.argv[1], ((3, 2.0),), clock=lambda: 1000.5, sleep=lambda s: print(f'{s:.3f}'), "
            "why='test', folder=Path(sys.argv[2]))")
    waited = subprocess.run([sys.executable, "-c", code, hook, str(tmp_path)], check=True, timeout=60,
                            capture_output=True, text=True).stdout.split()
    assert waited == ["1.500"]
    (kept,) = list(tmp_path.iterdir())
    assert TOKEN not in kept.name and "dingtalk" not in kept.read_text()


def test_a_damaged_file_of_post_times_loses_its_times_not_the_post(tmp_path):
    """A byte that is not ASCII in the file (a half-written line, a stray edit) raised
    UnicodeDecodeError on every later post to that robot, until the file was deleted."""
    import hashlib

    from repobrief.publish.pacing import take_slot

    hook = f"https://oapi.dingtalk.com/robot/send?access_token={TOKEN}"
    kept = tmp_path / hashlib.sha256(hook.encode()).hexdigest()[:32]
    kept.write_bytes(b"1000.000\n\xe2\x80\x8b\nnot a time\n")
    take_slot(hook, ((2, 60.0),), clock=lambda: 1001.0, sleep=no_sleep, why="test", folder=tmp_path)
    assert kept.read_text().split() == ["1000.000", "1001.000"]


def test_a_blocked_dingtalk_robot_is_said_and_not_retried(receiver):
    """130101 ("send too fast") blocks the robot for ten minutes: retrying after 1, 2 and 4
    seconds only added requests."""
    r, url = receiver("dingtalk", SECRET)
    r.script = [json_response({"errcode": 130101, "errmsg": "send too fast, exceed 20 times per minute"})]
    no_sleep.calls.clear()
    with pytest.raises(PublishError) as e:
        post("dingtalk", url, SECRET)
    assert len(r.received) == 1 and no_sleep.calls == []
    assert "code 130101" in str(e.value) and "10 minutes" in e.value.hint
