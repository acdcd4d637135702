"""End to end on the real verl history, week 2026-W26: HTML report, card, publish, site."""

from __future__ import annotations

import json
import os
import re
import signal
import threading
from urllib.parse import urlsplit

import httpx
import pytest
from browser import browser_fixture
from clirun import run_cli, start_cli, wait_until
from receivers import Receiver, loopback_server_fixture
from werkzeug.wrappers import Response

browser = browser_fixture()

SECRET = "feishu-signing-secret-0123456789"
TOKEN = "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0"
LINK = "https://reports.example.com/verl/2026-W26.html"
WEEK_ARGS = ["--name", "verl-project/verl", "--week", "2026-W26", "--tz", "Asia/Shanghai"]


def run(argv: list[str]) -> tuple[int, str, str]:
    return run_cli(*argv)


server = loopback_server_fixture()


@pytest.fixture(scope="module")
def week26(verl_repo, tmp_path_factory):
    """The W26 report as HTML, JSON and a Feishu card, written by the CLI."""
    out = tmp_path_factory.mktemp("w26")
    old_umask = os.umask(0o022)
    try:
        code, _, err = run(["report", str(verl_repo), *WEEK_ARGS, "--lang", "zh", "--format", "html,json,feishu", "--out", str(out), "--link", LINK, "-q"])
    finally:
        os.umask(old_umask)
    assert code == 0, err
    files = {p.suffixes[-1] if not p.name.endswith(".feishu.json") else ".feishu": p for p in out.iterdir()}
    return files


def test_html_report_of_verl_week_26_in_the_browser(week26, browser):
    html = week26[".html"]
    page = browser.open(html)
    got = page.collect()
    assert got.errors == [] and got.requests == [got.url]
    assert page.evaluate("document.querySelectorAll('main section h2').length") == 6
    assert page.evaluate("document.querySelector('h1').textContent") == "verl-project/verl 2026 第26周周报"
    report = json.loads(week26[".json"].read_text())
    rows = page.evaluate("[...document.querySelectorAll('#pr-table tbody tr')].map(r => r.cells[0].textContent.trim())")
    assert rows == [f"#{r['number']}" for r in report["sections"]["table"]["rows"]] and rows
    links = page.evaluate("[...document.querySelectorAll('#pr-table tbody a')].map(a => a.href)")
    assert all(re.fullmatch(r"https://github\.com/verl-project/verl/pull/\d+", u) for u in links) and len(links) == len(rows)
    charts = page.evaluate("[...document.querySelectorAll('svg.chart')].map(s => [s.dataset.chart, s.getBoundingClientRect().width])")
    assert [c for c, _ in charts] == ["chart-modules", "chart-themes", "chart-trend", "chart-importance"]
    assert all(w > 200 for _, w in charts)
    all_prs = page.evaluate("document.querySelectorAll('#all-pr-table tbody tr').length")
    assert all_prs == report["stats"]["merged_prs"] == 22
    page.close()


def test_report_files_are_readable_by_a_web_server(week26):
    # written under the usual umask 022: readable by group and others, like any new file
    for path in week26.values():
        assert path.stat().st_mode & 0o044 == 0o044, path


def test_feishu_card_of_verl_week_26(week26):
    card = json.loads(week26[".feishu"].read_text())
    assert card["msg_type"] == "interactive"
    assert card["card"]["header"]["title"]["content"] == "verl-project/verl 2026 第26周周报 (06-22 至 06-28)"
    highlights = card["card"]["elements"][1]["text"]["content"].splitlines()
    assert len(highlights) == 3 and all(re.search(r"#\d+", h) for h in highlights)
    assert card["card"]["elements"][-1]["actions"][0]["url"] == LINK


def test_publish_cli_posts_a_signed_feishu_card(week26, server):
    server.clear()
    receiver = Receiver("feishu", SECRET)
    server.expect_request(f"/open-apis/bot/v2/hook/{TOKEN}", method="POST").respond_with_handler(receiver)
    url = server.url_for(f"/open-apis/bot/v2/hook/{TOKEN}")
    code, out, err = run(["publish", str(week26[".json"]), "--target", "feishu", "--webhook", url, "--secret", SECRET, "--link", LINK])
    assert code == 0, err
    assert receiver.refusals == [] and len(receiver.received) == 1
    body = receiver.received[0].body
    assert body["card"]["header"]["title"]["content"].startswith("verl-project/verl 2026 第26周周报")
    assert body["card"]["elements"][-1]["actions"][0]["url"] == LINK
    assert "posted verl-project/verl 2026-W26 to feishu at http://127.0.0.1:" in err
    assert TOKEN not in out + err and SECRET not in out + err


@pytest.mark.parametrize("platform", ["slack", "dingtalk", "wecom"])
def test_publish_cli_reads_target_from_environment(week26, server, monkeypatch, platform):
    server.clear()
    secret = SECRET if platform == "dingtalk" else ""
    receiver = Receiver(platform, secret)
    path, query = {"slack": (f"/services/T/B/{TOKEN}", ""), "dingtalk": ("/robot/send", f"?access_token={TOKEN}"),
                   "wecom": ("/cgi-bin/webhook/send", f"?key={TOKEN}")}[platform]
    server.expect_request(path, method="POST").respond_with_handler(receiver)
    monkeypatch.setenv("REPOBRIEF_PUBLISH_TARGET", platform)
    monkeypatch.setenv("REPOBRIEF_PUBLISH_WEBHOOK", server.url_for(path) + query)
    monkeypatch.setenv("REPOBRIEF_PUBLISH_LINK", LINK)
    if secret:
        monkeypatch.setenv("REPOBRIEF_PUBLISH_SECRET", secret)
    code, out, err = run(["publish", str(week26[".json"])])
    assert code == 0, err
    assert receiver.refusals == [] and len(receiver.received) == 1
    assert LINK in receiver.received[0].raw.decode()


def test_publish_cli_uses_config_targets(week26, server, tmp_path, monkeypatch):
    server.clear()
    feishu, wecom = Receiver("feishu", SECRET), Receiver("wecom")
    server.expect_request("/feishu", method="POST").respond_with_handler(feishu)
    server.expect_request("/wecom", method="POST").respond_with_handler(wecom)
    (tmp_path / "repobrief.toml").write_text(
        f'[[publish]]\ntarget = "feishu"\nwebhook = "{server.url_for("/feishu")}"\nsecret = "{SECRET}"\nlink = "{LINK}"\n\n'
        f'[[publish]]\ntarget = "wecom"\nwebhook = "{server.url_for("/wecom")}?key={TOKEN}"\n'
    )
    monkeypatch.chdir(tmp_path)
    code, out, err = run(["publish", str(week26[".json"])])
    assert code == 0, err
    assert len(feishu.received) == 1 and len(wecom.received) == 1 and not feishu.refusals + wecom.refusals


def test_publish_cli_environment_secret_signs_only_the_targets_that_sign(week26, server, tmp_path, monkeypatch):
    server.clear()
    slack, feishu = Receiver("slack"), Receiver("feishu", SECRET)
    server.expect_request(f"/services/T/B/{TOKEN}", method="POST").respond_with_handler(slack)
    server.expect_request("/feishu", method="POST").respond_with_handler(feishu)
    (tmp_path / "repobrief.toml").write_text(
        f'[[publish]]\ntarget = "slack"\nwebhook = "{server.url_for(f"/services/T/B/{TOKEN}")}"\n\n'
        f'[[publish]]\ntarget = "feishu"\nwebhook = "{server.url_for("/feishu")}"\n'
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("REPOBRIEF_PUBLISH_SECRET", SECRET)
    code, out, err = run(["publish", str(week26[".json"])])
    assert code == 0, err
    assert len(slack.received) == 1 and len(feishu.received) == 1 and not slack.refusals + feishu.refusals
    assert "sign" not in slack.received[0].body and feishu.received[0].body["sign"]
    # Named alone, Slack posts too; a --secret flag for it stays an error.
    code, _, err = run(["publish", str(week26[".json"]), "-t", "slack", "-q"])
    assert code == 0, err
    code, _, err = run(["publish", str(week26[".json"]), "-t", "slack", "--secret", SECRET])
    assert code == 2 and "no signing secret" in err


def test_publish_cli_one_failing_target_does_not_stop_the_others(week26, server, tmp_path, monkeypatch):
    server.clear()
    feishu = Receiver("feishu")
    server.expect_request("/feishu", method="POST").respond_with_handler(feishu)
    (tmp_path / "repobrief.toml").write_text(
        '[[publish]]\ntarget = "wecom"\n\n'  # no webhook
        f'[[publish]]\ntarget = "slack"\nwebhook = "{server.url_for("/gone")}"\n\n'
        f'[[publish]]\ntarget = "feishu"\nwebhook = "{server.url_for("/feishu")}"\n'
    )
    monkeypatch.chdir(tmp_path)
    code, out, err = run(["publish", str(week26[".json"]), "--retries", "0"])
    assert code == 7
    assert len(feishu.received) == 1 and "posted verl-project/verl 2026-W26 to feishu" in err
    assert "no webhook URL for target 'wecom'" in err and "slack webhook at http://127.0.0.1:" in err
    assert "error: 2 of 3 targets failed (wecom, slack)" in err and "post to each again with --target NAME" in err


def test_publish_cli_failure_exit_code_and_message(week26, server):
    server.clear()
    receiver = Receiver("feishu", SECRET)
    server.expect_request("/hook", method="POST").respond_with_handler(receiver)
    code, out, err = run(["publish", str(week26[".json"]), "-t", "feishu", "--webhook", server.url_for("/hook"), "--secret", "wrong-secret"])
    assert code == 7
    assert "error: feishu webhook at http://127.0.0.1:" in err and "code 19021" in err
    assert "hint: the signature was refused" in err
    assert "wrong-secret" not in err


def test_publish_cli_webhook_with_an_invalid_host_is_a_clear_error(week26, server, tmp_path, monkeypatch):
    bad = f"https://qyapi..weixin.qq.com/cgi-bin/webhook/send?key={TOKEN}"
    code, out, err = run(["publish", str(week26[".json"]), "-t", "wecom", "--webhook", bad, "--retries", "0"])
    assert code == 2 and "Traceback" not in err
    assert "error: the webhook URL for target 'wecom' has an invalid host name 'qyapi..weixin.qq.com'" in err
    assert TOKEN not in out + err
    # From the config file: refused when the config is read, before posting to any target.
    server.clear()
    feishu = Receiver("feishu")
    server.expect_request("/feishu", method="POST").respond_with_handler(feishu)
    (tmp_path / "repobrief.toml").write_text(
        f'[[publish]]\ntarget = "feishu"\nwebhook = "{server.url_for("/feishu")}"\n\n'
        f'[[publish]]\ntarget = "wecom"\nwebhook = "{bad}"\n'
    )
    monkeypatch.chdir(tmp_path)
    code, out, err = run(["publish", str(week26[".json"])])
    assert code == 3 and "error: option 'publish[1].webhook' has an invalid host name 'qyapi..weixin.qq.com'" in err
    assert TOKEN not in out + err and feishu.received == []


@pytest.mark.parametrize(
    ("entry", "option", "got"),
    [
        ('[[publish]]\ntarget = "feishu"\nwebhook = "https://open.feishu.cn/x"\nsecret = 8472910365519284\n',
         "publish[0].secret", "an integer"),
        (f'[[publish]]\ntarget = "feishu"\nwebhook = ["https://open.feishu.cn/open-apis/bot/v2/hook/{TOKEN}"]\n',
         "publish[0].webhook", "an array"),
        ('[github]\ntoken = 8472910365519284\n', "github.token", "an integer"),
        ('[llm]\napi_key = ["sk-8472910365519284"]\n', "llm.api_key", "an array"),
        ('db = ["postgresql://me:8472910365519284@db.example.com/rb"]\n', "db", "an array"),
    ],
)
def test_config_type_errors_never_show_a_secret(week26, tmp_path, monkeypatch, entry, option, got):
    (tmp_path / "repobrief.toml").write_text(entry)
    monkeypatch.chdir(tmp_path)
    code, out, err = run(["publish", str(week26[".json"])])
    assert code == 3
    assert f"error: option {option!r} must be a string, got {got}" in err
    assert "8472910365519284" not in out + err and TOKEN not in out + err


def test_config_type_errors_show_harmless_values(week26, tmp_path, monkeypatch):
    (tmp_path / "repobrief.toml").write_text('threshold = "high"\n')
    monkeypatch.chdir(tmp_path)
    code, _, err = run(["publish", str(week26[".json"])])
    assert code == 3 and "option 'threshold' must be a number, got 'high'" in err


@pytest.mark.parametrize(
    ("content", "needle"),
    [(None, "does not exist"), ("{not json", "is not valid JSON"), ('{"a": 1}', "is not a repobrief report"),
     ('{"schema_version": 99, "card": {}}', "has schema_version 99; this repobrief reads 1.x")],
)
def test_publish_cli_bad_report_file(tmp_path, content, needle):
    path = tmp_path / "REPORT.json"
    if content is not None:
        path.write_text(content)
    code, _, err = run(["publish", str(path), "--target", "slack", "--webhook", "https://hooks.slack.com/services/x"])
    assert code == 2 and needle in err and "hint:" in err


@pytest.mark.parametrize(
    ("damage", "needle"),
    [(lambda d: d.update(card=None), "`card` is null, not an object"),
     (lambda d: d["card"].pop("title"), "`card.title` is missing"),
     (lambda d: d.pop("repository"), "`repository` is missing"),
     (lambda d: d.update(week=12), "`week` is 12, not a string"),
     (lambda d: d["pull_requests"][3].update(merged_at=None), "`pull_requests[3].merged_at` is null, not a string"),
     (lambda d: d.update(timezone="Mars/Base"), '`timezone` is "Mars/Base", not a time zone'),
     (lambda d: d.update(timezone="Asia"), '`timezone` is "Asia", not a time zone'),
     (lambda d: d["sections"]["key_changes"].update(items=[7]), "a field holds a value of another kind")],
)
def test_publish_cli_damaged_report_names_the_field(week26, tmp_path, damage, needle):
    """A hand-damaged report said "(TypeError: repobrief.models.Card() argument after **
    must be a mapping, not NoneType)" or "(KeyError: 'repository')"."""
    data = json.loads(week26[".json"].read_text(encoding="utf-8"))
    damage(data)
    path = tmp_path / "REPORT.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    code, _, err = run(["publish", str(path), "--target", "slack", "--webhook", "https://hooks.slack.com/services/x"])
    assert code == 2 and f"{str(path)!r} is an incomplete repobrief report: {needle}" in err, err
    assert "hint: regenerate it with `repobrief report --format json`" in err and "repobrief.models" not in err


def test_publish_cli_without_any_target(week26, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, _, err = run(["publish", str(week26[".json"])])
    assert code == 2 and "no publish target" in err and "REPOBRIEF_PUBLISH_WEBHOOK" in err


@pytest.fixture
def report_json(tmp_path):
    """A small REPORT.json (the sample report), for publish tests that need no real history."""
    from sample_report import sample_report

    from repobrief.serialize import report_to_dict

    path = tmp_path / "R.json"
    path.write_text(json.dumps(report_to_dict(sample_report("en"))), encoding="utf-8")
    return path


def drain(server) -> None:
    """Wait until the (one-threaded) receiver has handled every request sent before this one."""
    server.expect_request("/drained").respond_with_data("drained")
    assert httpx.get(server.url_for("/drained"), timeout=10).text == "drained"


def held_answers(receiver: Receiver):
    """A handler that takes the card at once and answers only when the returned event is set."""
    answer = threading.Event()

    def handler(request):
        response = receiver(request)
        answer.wait(30)
        return response

    return handler, answer


def test_publish_cli_a_late_answer_does_not_post_the_card_twice(report_json, server):
    """`--timeout 0.5 --retries 1` against a receiver that answers late: one card, and an
    error saying it may have been posted (not a retry that posts it again)."""
    server.clear()
    receiver = Receiver("feishu")
    handler, answer = held_answers(receiver)
    server.expect_request(f"/slow/{TOKEN}", method="POST").respond_with_handler(handler)
    try:
        code, out, err = run(["publish", str(report_json), "--target", "feishu", "--webhook", server.url_for(f"/slow/{TOKEN}"),
                              "--timeout", "0.5", "--retries", "1"])
    finally:
        answer.set()
    drain(server)
    assert code == 7 and len(receiver.received) == 1
    assert "error: feishu webhook at http://127.0.0.1:" in err
    assert "no answer within 0.5 s after the card was sent; the card may or may not have been posted" in err
    assert "hint: check the chat before running publish again" in err
    assert TOKEN not in out + err


def test_publish_cli_names_the_environment_variable_a_webhook_without_a_target_came_from(report_json, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("REPOBRIEF_PUBLISH_WEBHOOK", f"https://open.feishu.cn/open-apis/bot/v2/hook/{TOKEN}")
    code, out, err = run(["publish", str(report_json)])
    assert code == 2
    assert "error: the webhook URL in the environment variable REPOBRIEF_PUBLISH_WEBHOOK needs a target" in err
    assert "hint: set REPOBRIEF_PUBLISH_TARGET=" in err and "or pass --target" in err
    assert "--webhook needs" not in err and TOKEN not in out + err
    # From the flag, the flag is named.
    code, _, err = run(["publish", str(report_json), "--webhook", f"https://open.feishu.cn/open-apis/bot/v2/hook/{TOKEN}"])
    assert code == 2 and "error: --webhook needs a target" in err


def stop_with_sigterm(proc, ready) -> str:
    """SIGTERM `proc` once `ready(stderr so far)` holds; its whole stderr."""
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(proc.stderr), daemon=True)
    reader.start()
    try:
        assert wait_until(lambda: ready("".join(lines)) or proc.poll() is not None), "".join(lines)
        assert proc.poll() is None, "publish ended before it could be stopped: " + "".join(lines)
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    reader.join(10)
    return "".join(lines)


def test_publish_cli_stopped_after_sending_says_the_card_may_have_been_posted(report_json, server, tmp_path):
    server.clear()
    receiver = Receiver("feishu")
    handler, answer = held_answers(receiver)
    server.expect_request(f"/held/{TOKEN}", method="POST").respond_with_handler(handler)
    proc = start_cli("publish", str(report_json), "-t", "feishu", "--webhook", server.url_for(f"/held/{TOKEN}"), cwd=tmp_path)
    try:
        err = stop_with_sigterm(proc, lambda _: receiver.received)
    finally:
        answer.set()
    assert proc.returncode == 130, err
    assert re.search(r"^interrupted while posting to feishu at http://127\.0\.0\.1:\d+/…: the card was sent and may or "
                     r"may not have been posted; check the chat before running publish again$", err, re.M), err
    assert TOKEN not in err


def test_publish_cli_stopped_before_sending_says_the_card_was_not_posted(report_json, server, tmp_path):
    server.clear()
    slack, feishu = Receiver("slack"), Receiver("feishu")
    feishu.script = [Response("busy", 503, headers={"Retry-After": "20"})]  # publish waits 20 s, then retries
    server.expect_request(f"/services/T/B/{TOKEN}", method="POST").respond_with_handler(slack)
    server.expect_request(f"/feishu/{TOKEN}", method="POST").respond_with_handler(feishu)
    (tmp_path / "repobrief.toml").write_text(
        f'[[publish]]\ntarget = "slack"\nwebhook = "{server.url_for(f"/services/T/B/{TOKEN}")}"\n\n'
        f'[[publish]]\ntarget = "feishu"\nwebhook = "{server.url_for(f"/feishu/{TOKEN}")}"\n'
    )
    proc = start_cli("publish", str(report_json), cwd=tmp_path)
    err = stop_with_sigterm(proc, lambda err: "retrying in 20.0 s" in err)
    assert proc.returncode == 130, err
    assert len(slack.received) == 1 and len(feishu.received) == 1
    assert re.search(r"^interrupted while posting to feishu at http://127\.0\.0\.1:\d+/…: the card was not posted; "
                     r"posted to slack$", err, re.M), err
    assert TOKEN not in err


# --------------------------------------------------------------------------- site


@pytest.fixture(scope="module")
def site(verl_repo, tmp_path_factory):
    out = tmp_path_factory.mktemp("site") / "public"
    code, _, err = run(["site", str(verl_repo), "--name", "verl-project/verl", "--tz", "Asia/Shanghai", "--lang", "en",
                        "--until-week", "2026-W26", "--weeks", "3", "--out", str(out), "-q"])
    assert code == 0, err
    return out


def test_site_layout(site):
    repo = site / "verl-project" / "verl"
    assert sorted(p.name for p in repo.iterdir()) == [
        "2026-W24.html", "2026-W24.json", "2026-W25.html", "2026-W25.json", "2026-W26.html", "2026-W26.json",
        "index.html", "trends.html",
    ]
    manifest = json.loads((site / "site.json").read_text())
    assert sorted(manifest["repositories"]["verl-project/verl"]["weeks"]) == ["2026-W24", "2026-W25", "2026-W26"]
    assert manifest["repositories"]["verl-project/verl"]["weeks"]["2026-W26"]["merged_prs"] == 22


def test_site_links_are_relative_and_resolve(site):
    for page in site.rglob("*.html"):
        for href in re.findall(r'<a [^>]*href="([^"]+)"', page.read_text()):
            if href.startswith("https://github.com/"):
                continue  # PR links
            assert not urlsplit(href).scheme and not href.startswith("/"), (page, href)
            assert (page.parent / href).resolve().is_file(), (page, href)


@pytest.mark.parametrize("page", ["index.html", "verl-project/verl/index.html", "verl-project/verl/trends.html", "verl-project/verl/2026-W25.html"])
def test_site_pages_in_the_browser(site, browser, page):
    p = browser.open(site / page)
    got = p.collect()
    assert got.errors == [] and got.requests == [got.url]
    if page.endswith("trends.html"):
        charts = p.evaluate("[...document.querySelectorAll('svg.chart')].map(s => s.getBoundingClientRect().width)")
        assert len(charts) == 2 and all(w > 200 for w in charts)
        weeks = p.evaluate("[...document.querySelectorAll('#weeks-table tbody tr td:first-child')].map(td => td.textContent)")
        assert weeks == ["2026-W26", "2026-W25", "2026-W24"]
        p.evaluate("document.querySelector('#weeks-table th:nth-child(3) button').click()")
        counts = p.evaluate("[...document.querySelectorAll('#weeks-table tbody tr')].map(r => +r.cells[2].textContent)")
        assert counts == sorted(counts, reverse=True)
    if page == "index.html":
        assert p.evaluate("[...document.querySelectorAll('.repo h3 a')].map(a => a.textContent)") == ["verl-project/verl"]
    if page.endswith("2026-W25.html"):
        nav = p.evaluate("[...document.querySelectorAll('nav.site a')].map(a => a.getAttribute('href'))")
        assert nav == ["../../index.html", "index.html", "trends.html", "2026-W24.html", "2026-W26.html"]
        assert p.evaluate("document.querySelectorAll('main section h2').length") == 6
    p.close()


def test_site_is_extended_by_a_later_run(site, verl_repo):
    code, _, err = run(["site", str(verl_repo), "--name", "verl-project/verl", "--tz", "Asia/Shanghai", "--lang", "en",
                        "--until-week", "2026-W27", "--weeks", "1", "--out", str(site), "-q"])
    assert code == 0, err
    weeks = json.loads((site / "site.json").read_text())["repositories"]["verl-project/verl"]["weeks"]
    assert sorted(weeks) == ["2026-W24", "2026-W25", "2026-W26", "2026-W27"]
    # the week before the new one now links forward to it
    assert 'href="2026-W27.html"' in (site / "verl-project/verl/2026-W26.html").read_text()
    assert 'href="2026-W27.html"' not in (site / "verl-project/verl/2026-W25.html").read_text()
    assert "2026-W27" in (site / "index.html").read_text()


def test_site_refuses_a_folder_that_is_not_a_site(verl_repo, tmp_path):
    (tmp_path / "notes.txt").write_text("mine")
    code, _, err = run(["site", str(verl_repo), "--name", "verl-project/verl", "--weeks", "1", "--out", str(tmp_path)])
    assert code == 2 and "not a repobrief site" in err
    assert (tmp_path / "notes.txt").read_text() == "mine" and not (tmp_path / "index.html").exists()


def test_site_bad_weeks(verl_repo, tmp_path):
    code, _, err = run(["site", str(verl_repo), "--weeks", "0", "--out", str(tmp_path / "s")])
    assert code == 2 and "--weeks 0" in err
    # weeks before 1970-W01 are refused by `report`; a site reaching back to one is too
    code, _, err = run(["site", str(verl_repo), "--until-week", "1970-W02", "--weeks", "3", "--out", str(tmp_path / "s")])
    assert code == 2 and "reaches back to 1969-W52, before the years repobrief reports on" in err
    assert "give --weeks 2 or fewer" in err and not (tmp_path / "s").exists()


def test_site_builds_into_a_fresh_gh_pages_checkout(verl_repo, tmp_path):
    (tmp_path / ".git").mkdir()  # what `actions/checkout` of an empty gh-pages branch leaves
    code, _, err = run(["site", str(verl_repo), "--name", "verl-project/verl", "--tz", "Asia/Shanghai",
                        "--until-week", "2026-W26", "--weeks", "1", "--out", str(tmp_path), "-q"])
    assert code == 0, err
    assert (tmp_path / "verl-project/verl/2026-W26.html").is_file() and (tmp_path / "index.html").is_file()


def test_site_from_the_github_api(tmp_path, monkeypatch):
    from datetime import datetime

    from github_support import SHANGHAI, TOKEN, serve, verl
    from githubserver import FakeGitHub

    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
    prs = verl(datetime(2026, 6, 15, tzinfo=SHANGHAI), datetime(2026, 7, 6, tzinfo=SHANGHAI))
    with serve(FakeGitHub(tokens={TOKEN: "repo"}), prs) as gh:
        code, _, err = run(["site", "github:verl-project/verl", "--github-url", gh.url, "--db", str(tmp_path / "store.db"),
                            "--tz", "Asia/Shanghai", "--until-week", "2026-W26", "--weeks", "1", "--out", str(tmp_path / "site"), "-q"])
    assert code == 0, err
    weeks = json.loads((tmp_path / "site/site.json").read_text())["repositories"]["verl-project/verl"]["weeks"]
    assert sorted(weeks) == ["2026-W26"] and weeks["2026-W26"]["merged_prs"] == 22
    assert (tmp_path / "site/verl-project/verl/2026-W26.html").is_file()
    assert TOKEN not in err


@pytest.mark.parametrize("kind", ["no scheme", "too long", "too long in bytes"])
@pytest.mark.parametrize("where", ["flag", "environment", "config"])
def test_publish_cli_refuses_a_link_the_card_could_not_use(week26, server, tmp_path, monkeypatch, where, kind):
    """A link without its scheme would be dropped from the card: the card would go out
    without its "Full report" button. One of 3,000 characters or more was dropped from
    Slack's card too, and made WeCom's cut every line to a few characters and still go
    over its 4,096 bytes. Either is an error naming where the link came from."""
    server.clear()
    receiver = Receiver("slack")
    server.expect_request(f"/services/T/B/{TOKEN}", method="POST").respond_with_handler(receiver)
    url = server.url_for(f"/services/T/B/{TOKEN}")
    bad = {"no scheme": "reports.example.com/verl/2026-W26.html",
           "too long": f"https://reports.example.com/{'a' * 2000}.html",
           # 700 characters, but 2,133 bytes: WeCom's card went over its 4,096 bytes
           "too long in bytes": f"https://reports.example.com/{'周' * 700}.html"}[kind]
    monkeypatch.chdir(tmp_path)
    args = ["publish", str(week26[".json"])]
    if where == "config":
        (tmp_path / "repobrief.toml").write_text(f'[[publish]]\ntarget = "slack"\nwebhook = "{url}"\nlink = "{bad}"\n')
    else:
        args += ["--target", "slack", "--webhook", url]
        if where == "flag":
            args += ["--link", bad]
        else:
            monkeypatch.setenv("REPOBRIEF_PUBLISH_LINK", bad)
    code, out, err = run(args)
    named = {"flag": "--link", "environment": "REPOBRIEF_PUBLISH_LINK", "config": "option 'publish[0].link'"}[where]
    assert (code, receiver.received) == (3 if where == "config" else 2, [])
    assert named in err and TOKEN not in out + err
    said = {"no scheme": bad, "too long": "2,033 bytes long as sent", "too long in bytes": "2,133 bytes long as sent"}[kind]
    assert said in err and (kind == "no scheme" or "at most 2,000" in err)


def test_help_shows_config_table_names():
    """Rich reads [name] in help text as markup: '[[publish]]' once showed as '[]', '[digest]' as ''."""
    import subprocess
    import sys

    def help_of(command: str) -> str:
        return subprocess.run([sys.executable, "-m", "repobrief", command, "--help"], capture_output=True, text=True,
                              env={**os.environ, "COLUMNS": "200"}).stdout

    assert "Config file with [[publish]] targets" in help_of("publish")
    assert "in the [digest] languages" in help_of("run")


@pytest.mark.parametrize("command", ["publish", "report"])
def test_a_secret_for_a_target_that_does_not_sign_is_a_config_error(week26, tmp_path, monkeypatch, command):
    """Slack and WeCom messages are not signed: a `secret` in their [[publish]] entry is a
    mistake in the config, said as such (exit 3, naming the option) by every command."""
    (tmp_path / "repobrief.toml").write_text(
        f'[[publish]]\ntarget = "slack"\nwebhook = "https://hooks.slack.com/services/T/B/{TOKEN}"\nsecret = "{SECRET}"\n')
    monkeypatch.chdir(tmp_path)
    args = ["publish", str(week26[".json"])] if command == "publish" else \
        ["report", str(tmp_path), "--config", str(tmp_path / "repobrief.toml")]
    code, out, err = run(args)
    assert code == 3, err
    assert "option 'publish[0].secret' is set, but slack messages are not signed" in err
    assert SECRET not in out + err and TOKEN not in out + err
