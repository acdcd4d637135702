"""Chat cards: the short message of `report-format.md` ("Chat card") per platform.

One payload builder per platform — Feishu/Lark interactive card, Slack Block
Kit, DingTalk actionCard (markdown when there is no link), WeCom markdown —
and a `render_*` function for each that returns the payload as JSON text (the
renderer registry's `(report) -> str` shape). Publishers post the same dicts.

PR titles reach the card through its highlight and risk lines, so every line is
first rid of control and bidirectional characters (`inert_text`: a path or a name
taken from a folder can hold them), then made inert in the platform's own syntax:
Feishu gets `plain_text`, Slack gets `&`, `<`, `>` escaped (its only control
characters), the Markdown platforms get the Markdown report's escaping
(`render.markdown.md_text`: no links, images, raw HTML or emphasis; a bare URL in
a code span; identifiers like `use_v1` left readable). Each platform has a size limit; lines are shortened (at a character boundary, with "…") until the
payload fits, never cut in the middle of a character or an escape.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import unicodedata
from collections.abc import Callable

from ..models import Card, Report, inert_text
from .links import safe_link
from .markdown import md_text

# Size limits, from each platform's webhook documentation.
FEISHU_MAX_BODY_BYTES = 20 * 1024  # custom bot: request body at most 20 KB
FEISHU_SIGN_RESERVE = 128  # room for the `timestamp` and `sign` fields added when posting
SLACK_HEADER_MAX = 150  # header block plain_text
SLACK_SECTION_MAX = 3000  # section block text
SLACK_BUTTON_TEXT_MAX = 75
SLACK_URL_MAX = 3000
DINGTALK_MAX_BYTES = 20000  # markdown / actionCard text
WECOM_MAX_BYTES = 4096  # markdown content, UTF-8 bytes

ELLIPSIS = "…"

_EMPTY_KEYS = {"highlights": "card.no_changes", "risks": "card.no_risks"}


def _period(report: Report, key: str) -> str:
    """The catalog's message `key` worded for the report's period (a week or a date range)."""
    from ..i18n import catalog, report_days

    return catalog(report.lang).period(key, report_days(report))


def _label(report: Report, key: str) -> str:
    """`highlights`, `risks`, `button` from the catalog's [card] table."""
    return _period(report, f"card.{key}")


def _empty(report: Report, block: str) -> str:
    return _period(report, _EMPTY_KEYS[block])


# --------------------------------------------------------------------------- shortening


def _is_joiner(ch: str) -> bool:
    """True for characters that belong to the one before them: cutting before one splits it.

    Combining marks (accents, Indic vowel signs), the zero-width joiner,
    variation selectors, emoji skin-tone modifiers and emoji tag characters.
    """
    return (
        unicodedata.category(ch).startswith("M")
        or ch == "\u200d"
        or "\ufe00" <= ch <= "\ufe0f"
        or "\U0001f3fb" <= ch <= "\U0001f3ff"
        or "\U000e0020" <= ch <= "\U000e007f"
    )


def _is_regional_indicator(ch: str) -> bool:
    return "\U0001f1e6" <= ch <= "\U0001f1ff"  # two of them make one flag


def shorten(text: str, limit: int) -> str:
    """`text` cut to at most `limit` characters, ending in "…", at a character boundary."""
    if len(text) <= limit:
        return text
    if limit <= len(ELLIPSIS):
        return ELLIPSIS[:limit]
    cut = limit - len(ELLIPSIS)
    while cut > 0 and (_is_joiner(text[cut]) or text[cut - 1] == "\u200d"):
        cut -= 1
    if cut > 0 and _is_regional_indicator(text[cut]):
        run = 0
        while run < cut and _is_regional_indicator(text[cut - 1 - run]):
            run += 1
        cut -= run % 2  # an odd count before the cut would leave half a flag
    return text[:cut].rstrip() + ELLIPSIS


def _fit(build: Callable[[int | None], dict], fits: Callable[[dict], bool], longest: int) -> dict:
    """The payload with the longest line cap (None = no cap) for which `fits` holds."""
    payload = build(None)
    if fits(payload):
        return payload
    lo, hi, best = 8, max(8, longest), None
    while lo <= hi:
        mid = (lo + hi) // 2
        candidate = build(mid)
        if fits(candidate):
            best, lo = candidate, mid + 1
        else:
            hi = mid - 1
    if best is None:
        best = build(8)  # still too big only with absurd titles; the platform will say so
    return best


def _cap(text: str, cap: int | None) -> str:
    return text if cap is None else shorten(text, cap)


def _utf8_len(text: str) -> int:
    return len(text.encode("utf-8"))


def _json_len(payload: dict) -> int:
    return _utf8_len(json.dumps(payload, ensure_ascii=False))


def _longest(report: Report) -> int:
    return max([len(s) for s in (report.card.highlights + report.card.risks)] + [len(report.card.title)])


# --------------------------------------------------------------------------- escaping

def _inert_card(payload: Callable[[Report], dict]) -> Callable[[Report], dict]:
    """`payload` of the report with its card's text made inert (`inert_text`)."""

    @functools.wraps(payload)
    def build(report: Report) -> dict:
        c = report.card
        card = Card(inert_text(c.title), [inert_text(s) for s in c.highlights], [inert_text(s) for s in c.risks],
                    inert_text(c.button), c.link)
        return payload(dataclasses.replace(report, card=card))

    return build


def escape_slack(text: str) -> str:
    """Slack's mrkdwn escaping: `&`, `<`, `>` (links and mentions need `<`)."""
    return " ".join(text.split()).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


# --------------------------------------------------------------------------- Feishu / Lark


@_inert_card
def feishu_payload(report: Report) -> dict:
    """`msg_type: interactive` with a header, the two blocks and the button."""
    card = report.card
    link = safe_link(card.link)

    def block(key: str, lines: list[str], cap: int | None) -> list[dict]:
        heading = _label(report, key)
        body = "\n".join(f"• {_cap(' '.join(s.split()), cap)}" for s in lines) or _empty(report, key)
        return [
            # The heading is ours (a catalog string); the lines are PR text, so plain_text.
            {"tag": "div", "text": {"tag": "lark_md", "content": f"**{heading}**"}},
            {"tag": "div", "text": {"tag": "plain_text", "content": body}},
        ]

    def build(cap: int | None) -> dict:
        elements = block("highlights", card.highlights, cap)
        elements.append({"tag": "hr"})
        elements += block("risks", card.risks, cap)
        if link:
            elements.append(
                {
                    "tag": "action",
                    "actions": [
                        {
                            "tag": "button",
                            "text": {"tag": "plain_text", "content": card.button or _label(report, "button")},
                            "type": "primary",
                            "url": link,
                        }
                    ],
                }
            )
        return {
            "msg_type": "interactive",
            "card": {
                "config": {"wide_screen_mode": True},
                "header": {"title": {"tag": "plain_text", "content": _cap(card.title, cap)}, "template": "blue"},
                "elements": elements,
            },
        }

    return _fit(build, lambda p: _json_len(p) <= FEISHU_MAX_BODY_BYTES - FEISHU_SIGN_RESERVE, _longest(report))


# --------------------------------------------------------------------------- Slack


@_inert_card
def slack_payload(report: Report) -> dict:
    """Block Kit: header, a section per block, an actions block with the button."""
    card = report.card
    link = safe_link(card.link)
    if link and len(link) > SLACK_URL_MAX:
        link = None

    def section(key: str, lines: list[str], cap: int | None) -> list[dict]:
        # Our label in mrkdwn; PR text only in plain_text, which Slack shows as written:
        # `*bold*`, `_it_` or a `<!channel>` in a title stays text (as in Feishu cards).
        body = "\n".join(f"• {_cap(' '.join(s.split()), cap)}" for s in lines) or _empty(report, key)
        return [{"type": "section", "text": {"type": "mrkdwn", "text": f"*{escape_slack(_label(report, key))}*"}},
                {"type": "section", "text": {"type": "plain_text", "text": body, "emoji": False}}]

    def build(cap: int | None) -> dict:
        blocks = [
            {"type": "header", "text": {"type": "plain_text", "text": shorten(card.title, SLACK_HEADER_MAX), "emoji": False}},
            *section("highlights", card.highlights, cap),
            {"type": "divider"},
            *section("risks", card.risks, cap),
        ]
        if link:
            button = shorten(card.button or _label(report, "button"), SLACK_BUTTON_TEXT_MAX)
            blocks.append(
                {
                    "type": "actions",
                    "elements": [
                        {"type": "button", "text": {"type": "plain_text", "text": button}, "url": link, "style": "primary"}
                    ],
                }
            )
        # `text` is the notification fallback; plain, but Slack still parses `<…>` in it.
        return {"text": escape_slack(card.title), "blocks": blocks}

    def fits(p: dict) -> bool:
        return all(len(b["text"]["text"]) <= SLACK_SECTION_MAX for b in p["blocks"] if b["type"] == "section")

    return _fit(build, fits, _longest(report))


# --------------------------------------------------------------------------- Markdown platforms


def _markdown(report: Report, cap: int | None, with_link: bool, heading_prefix: str = "### ") -> str:
    card = report.card
    out = [f"{heading_prefix}{md_text(_cap(card.title, cap))}", ""]
    for key, lines in (("highlights", card.highlights), ("risks", card.risks)):
        out.append(f"**{_label(report, key)}**")
        out.append("")
        if lines:
            out += [f"- {md_text(_cap(s, cap))}" for s in lines]
        else:
            out.append(md_text(_empty(report, key)))
        out.append("")
    link = safe_link(card.link)
    if with_link and link:
        label = md_text(card.button or _label(report, "button"))
        out.append(f"[{label}]({link.replace(')', '%29').replace('(', '%28').replace(' ', '%20')})")
    return "\n".join(out).rstrip() + "\n"


@_inert_card
def dingtalk_payload(report: Report) -> dict:
    """actionCard with a single button when the report has a link, else markdown."""
    link = safe_link(report.card.link)
    title = " ".join(report.card.title.split())

    def build(cap: int | None) -> dict:
        text = _markdown(report, cap, with_link=False)
        if link:
            return {
                "msgtype": "actionCard",
                "actionCard": {
                    "title": _cap(title, cap),
                    "text": text,
                    "btnOrientation": "0",
                    "singleTitle": report.card.button or _label(report, "button"),
                    "singleURL": link,
                },
            }
        return {"msgtype": "markdown", "markdown": {"title": _cap(title, cap), "text": text}}

    def fits(p: dict) -> bool:
        body = p.get("actionCard") or p["markdown"]
        return _utf8_len(body["text"]) <= DINGTALK_MAX_BYTES

    return _fit(build, fits, _longest(report))


@_inert_card
def wecom_payload(report: Report) -> dict:
    """WeCom group robot markdown; the button becomes a link line."""

    def build(cap: int | None) -> dict:
        return {"msgtype": "markdown", "markdown": {"content": _markdown(report, cap, with_link=True, heading_prefix="# ")}}

    return _fit(build, lambda p: _utf8_len(p["markdown"]["content"]) <= WECOM_MAX_BYTES, _longest(report))


# --------------------------------------------------------------------------- renderers


def _dumps(payload: dict) -> str:
    return json.dumps(payload, ensure_ascii=False, indent=2) + "\n"


def render_feishu(report: Report) -> str:
    return _dumps(feishu_payload(report))


render_lark = render_feishu  # Lark is Feishu's international edition: same card format


def render_slack(report: Report) -> str:
    return _dumps(slack_payload(report))


def render_dingtalk(report: Report) -> str:
    return _dumps(dingtalk_payload(report))


def render_wecom(report: Report) -> str:
    return _dumps(wecom_payload(report))


PAYLOADS: dict[str, Callable[[Report], dict]] = {
    "feishu": feishu_payload,
    "lark": feishu_payload,
    "slack": slack_payload,
    "dingtalk": dingtalk_payload,
    "wecom": wecom_payload,
}
