"""Chat cards: the card contract per platform, size limits, and inert PR text."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt
from sample_report import HOSTILE, sample_report

from repobrief.registry import RENDERERS
from repobrief.render import cards

PLATFORMS = ["feishu", "lark", "slack", "dingtalk", "wecom"]
LINK = "https://reports.example.com/verl/2026-W26.html"


def payload(platform: str, report) -> dict:
    return json.loads(RENDERERS.get(platform)(report))


def md_to_html(text: str) -> str:
    # The most permissive reading: CommonMark with raw HTML allowed.
    return MarkdownIt("commonmark", {"html": True}).render(text)


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_feishu_card_follows_the_contract(lang):
    report = sample_report(lang)
    p = payload("feishu", report)
    assert p["msg_type"] == "interactive"
    card = p["card"]
    assert card["header"]["title"] == {"tag": "plain_text", "content": report.card.title}
    texts = [e["text"]["content"] for e in card["elements"] if e["tag"] == "div"]
    heading = {"zh": ("**本周亮点**", "**风险观察**"), "en": ("**Highlights**", "**Risks**")}[lang]
    assert texts[0] == heading[0] and texts[2] == heading[1]
    assert texts[1].splitlines() == [f"• {h}" for h in report.card.highlights]
    assert texts[3].splitlines() == [f"• {r}" for r in report.card.risks]
    (action,) = [e for e in card["elements"] if e["tag"] == "action"]
    button = action["actions"][0]
    assert button["url"] == LINK and button["text"]["content"] == ("完整周报" if lang == "zh" else "Full report")
    assert payload("lark", report) == p


def test_slack_blocks_follow_the_contract():
    report = sample_report("en")
    p = payload("slack", report)
    kinds = [b["type"] for b in p["blocks"]]
    assert kinds == ["header", "section", "section", "divider", "section", "section", "actions"]
    assert p["blocks"][0]["text"]["text"] == report.card.title
    assert p["blocks"][1]["text"] == {"type": "mrkdwn", "text": "*Highlights*"}
    assert p["blocks"][2]["text"]["type"] == "plain_text" and p["blocks"][2]["text"]["text"].startswith("• ")
    assert p["blocks"][6]["elements"][0]["url"] == LINK
    assert p["text"] == report.card.title  # the notification fallback


def test_dingtalk_action_card_and_markdown_without_link():
    report = sample_report("zh")
    p = payload("dingtalk", report)
    assert p["msgtype"] == "actionCard"
    assert p["actionCard"]["singleURL"] == LINK and p["actionCard"]["singleTitle"] == "完整周报"
    assert "**本周亮点**" in p["actionCard"]["text"] and "**风险观察**" in p["actionCard"]["text"]
    report.card.link = None
    p = payload("dingtalk", report)
    assert p["msgtype"] == "markdown" and p["markdown"]["title"] == report.card.title


def test_wecom_markdown_links_the_full_report():
    report = sample_report("zh")
    content = payload("wecom", report)["markdown"]["content"]
    html = md_to_html(content)
    assert re.findall(r'<a href="([^"]+)">完整周报</a>', html) == [LINK]


def test_no_link_means_no_button():
    report = sample_report("en")
    report.card.link = "javascript:alert(1)"
    for platform in PLATFORMS:
        text = RENDERERS.get(platform)(report)
        assert "javascript:" not in text, platform
    assert not [e for e in payload("feishu", report)["card"]["elements"] if e["tag"] == "action"]
    assert [b["type"] for b in payload("slack", report)["blocks"]][-1] != "actions"


def test_empty_week_says_so():
    report = sample_report("en", n_prs=0)
    report.card.highlights, report.card.risks = [], []
    p = payload("feishu", report)
    texts = [e["text"]["content"] for e in p["card"]["elements"] if e["tag"] == "div"]
    assert texts[1] == "No PRs were merged this week." and texts[3] == "No notable risks this week."


# --------------------------------------------------------------------------- injection


def test_hostile_text_is_inert_in_every_card():
    report = sample_report("en", hostile=True)
    report.card.highlights = [f"{h} (#6700)" for h in HOSTILE]
    report.card.risks = list(HOSTILE)
    # Feishu/Lark: PR text only ever in plain_text elements; lark_md holds only our headings.
    for platform in ("feishu", "lark"):
        card = payload(platform, report)["card"]
        for e in card["elements"]:
            if e["tag"] == "div" and e["text"]["tag"] == "lark_md":
                assert e["text"]["content"] in ("**Highlights**", "**Risks**")
    # Slack: PR text only in plain_text, shown as written (no links, mentions, <!channel>
    # pings or *bold*); mrkdwn holds only our labels.
    sections = [b["text"] for b in payload("slack", report)["blocks"] if b["type"] == "section"]
    assert [t["text"] for t in sections if t["type"] == "mrkdwn"] == ["*Highlights*", "*Risks*"]
    texts = [t["text"] for t in sections if t["type"] == "plain_text"]
    assert len(texts) == 2 and all("<!channel>" in t or "<script>" in t for t in texts)
    # DingTalk / WeCom Markdown: rendered permissively, no tag, image or link but ours.
    ding = payload("dingtalk", report)["actionCard"]["text"]
    wecom = payload("wecom", report)["markdown"]["content"]
    for text in (ding, wecom):
        html = md_to_html(text)
        assert not re.search(r"<(script|img|a href=\"(?!https://reports\.example\.com))", html), html
        assert "<em>" not in html and "<del>" not in html  # *bold*, _it_, ~strike~ stay literal
        assert "javascript:alert(2)" in html  # still readable as text
        assert html.count("<a ") == (1 if text is wecom else 0)


def test_hostile_text_is_inert_in_the_markdown_report():
    report = sample_report("en", hostile=True)
    md = RENDERERS.get("md")(report)
    html = md_to_html(md)
    assert not re.search(r"<(script|img)\b", html)
    assert not re.search(r'href="(?!https://)', html)
    assert "javascript:" not in "".join(re.findall(r'href="([^"]*)"', html))


# --------------------------------------------------------------------------- size limits

LIMITS = {
    "feishu": lambda p, raw: len(raw.encode()) <= cards.FEISHU_MAX_BODY_BYTES - cards.FEISHU_SIGN_RESERVE,
    "slack": lambda p, raw: all(len(b["text"]["text"]) <= 3000 for b in p["blocks"] if b["type"] == "section")
    and len(p["blocks"][0]["text"]["text"]) <= 150,
    "dingtalk": lambda p, raw: len(p["actionCard"]["text"].encode()) <= cards.DINGTALK_MAX_BYTES,
    "wecom": lambda p, raw: len(p["markdown"]["content"].encode()) <= cards.WECOM_MAX_BYTES,
}


@pytest.mark.parametrize("platform", sorted(LIMITS))
def test_long_lines_are_shortened_to_the_platform_limit(platform):
    report = sample_report("zh")
    # 3-byte CJK characters, emoji with a ZWJ and combining accents: cuts must fall between characters.
    long = "训练器重构" * 400 + "👩‍💻" * 50 + "é" * 50
    report.card.title = "verl 周报 " + "标题" * 200
    report.card.highlights = [long + f" (#{6700 + i})" for i in range(3)]
    report.card.risks = [long for _ in range(3)]
    p = cards.PAYLOADS[platform](report)
    raw = json.dumps(p, ensure_ascii=False)
    assert LIMITS[platform](p, raw)
    assert "…" in raw
    for line in re.findall(r"训练器重构[^\n\"]*…", raw):
        body = line[:-1].rstrip()
        # no half of a ZWJ sequence and no accent separated from its letter
        assert not body.endswith("\u200d")
        assert "\ufffd" not in body
    if platform == "feishu":
        assert p["card"]["elements"][-1]["actions"][0]["url"] == LINK  # the button survives


@given(st.text(min_size=0, max_size=80), st.integers(min_value=1, max_value=60))
@settings(max_examples=200, deadline=None)
def test_shorten_never_splits_a_character(text, limit):
    out = cards.shorten(text, limit)
    assert len(out) <= max(limit, 1)
    if len(text) <= limit:
        assert out == text
    else:
        kept = out[:-1].rstrip() if out.endswith("…") else out
        assert text.startswith(kept)
        if kept:
            # the cut is never before a combining mark, a variation selector or after a ZWJ
            assert kept[-1] != "\u200d"
            assert not cards._is_joiner(text[len(kept)])


@pytest.mark.parametrize(
    ("text", "limit", "expected"),
    [
        ("abcdé", 5, "abcdé"),
        ("abcde\u0301fgh", 6, "abcd…"),  # e + combining acute stays whole
        ("ab👩\u200d💻cd", 4, "ab…"),  # no half of a ZWJ sequence
        ("ab👍🏽cd", 4, "ab…"),  # no thumb without its skin tone
        ("a🇨🇳🇺🇸b", 5, "a🇨🇳…"),  # flags are pairs of regional indicators
        ("a🇨🇳🇺🇸b", 4, "a🇨🇳…"),
        ("训练器重构完成", 5, "训练器重…"),
    ],
)
def test_shorten_examples(text, limit, expected):
    assert cards.shorten(text, limit) == expected


def test_registered_renderers_return_json_text():
    report = sample_report("en")
    for platform in PLATFORMS:
        text = RENDERERS.get(platform)(report)
        assert isinstance(text, str) and json.loads(text)


@pytest.mark.parametrize(
    ("url", "ok"),
    [
        ("https://github.com/verl-project/verl/pull/1", True),
        ("http://reports.example.com/w26.html", True),
        ("javascript:alert(1)", False),
        ("JaVaScRiPt:alert(1)", False),
        ("  javascript:alert(1)", False),
        ("java\tscript:alert(1)", False),
        ("data:text/html,<script>alert(1)</script>", False),
        ("vbscript:msgbox(1)", False),
        ("//evil.example/x", False),
        ('https://ok.example/"onmouseover="alert(1)', False),
        ("https://ok.example/<script>", False),
        ("", False),
        (None, False),
    ],
)
def test_only_http_links_are_kept(url, ok):
    from repobrief.render.links import safe_link

    assert (safe_link(url) is not None) is ok


def test_a_pasted_log_as_a_title_keeps_cards_and_reports_short_and_the_pr_numbered(tmp_path):
    """A 3,000-character title once filled the Feishu card whole, lost its (#2) in the
    Slack card, and was repeated in full in six places of the Markdown."""
    from clirun import run_cli
    from gitrepo import GitRepoBuilder

    b = GitRepoBuilder(tmp_path / "proj")
    b.commit("init", "2026-03-02T10:00:00+00:00", {"src/app.py": b.lines(10)})
    title = "fix: " + " ".join(f"frame{i} at worker.py:{i}" for i in range(150)) + " (#2)"
    assert len(title) > 3000
    b.commit(title, "2026-03-03T10:00:00+00:00", {"src/app.py": b.lines(400)})
    out = tmp_path / "out"
    code, _, err = run_cli("report", str(b.path), "--name", "acme/proj", "--week", "2026-W10", "--lang", "en",
                           "--format", "md,json,slack,feishu", "--out", str(out))
    assert code == 0, err
    rep = json.loads((out / "acme__proj-2026-W10.en.json").read_text(encoding="utf-8"))
    assert len(rep["pull_requests"][0]["gist"]) <= 200 and rep["pull_requests"][0]["gist"].endswith("…")
    assert all(len(line) <= 170 and line.endswith("(#2)") for line in rep["card"]["highlights"])
    slack = (out / "acme__proj-2026-W10.en.slack.json").read_text(encoding="utf-8")
    feishu = (out / "acme__proj-2026-W10.en.feishu.json").read_text(encoding="utf-8")
    assert "(#2)" in slack and "(#2)" in feishu and len(feishu) < 3000
    md = (out / "acme__proj-2026-W10.en.md").read_text(encoding="utf-8")
    assert "frame149" not in md and len(md) < 8000
