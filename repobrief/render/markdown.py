"""The Markdown report (the format of `report-format.md`)."""

from __future__ import annotations

import re

from ..i18n import catalog
from ..models import Report
from . import template_environment

_MD_SPECIAL = re.compile(r"([\\*\[\]|~])")
# `_` makes emphasis only at a word boundary; inside identifiers (use_v1) it is inert.
_MD_UNDERSCORE = re.compile(r"(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])")


def md_text(text: str) -> str:
    """Untrusted text as inert Markdown on one line: no links, raw HTML, emphasis,
    code spans, headings or table breaks, while identifiers stay readable."""
    text = re.sub(r"\s*\n\s*", " ", text or "").strip()
    text = _MD_SPECIAL.sub(r"\\\1", text)
    text = _MD_UNDERSCORE.sub(r"\\_", text)
    text = text.replace("<", "&lt;").replace(">", "&gt;")
    # Code spans are inert and keep identifiers readable; an unpaired backtick could
    # swallow the text after it, so backticks stay only when they pair up.
    if text.count("`") % 2:
        text = text.replace("`", "\\`")
    return text


def md_line(text: str) -> str:
    """`md_text` for text that starts a line, where `#`, `-` or `1.` would start a block."""
    text = md_text(text)
    return "\\" + text if text[:1] in ("#", "-", "+", "=") or re.match(r"\d+[.)]\s", text) else text


def md_cell(text: str) -> str:
    """A table cell: one line, `|` escaped."""
    return md_text(text)


def render(report: Report) -> str:
    cat = catalog(report.lang)
    env = template_environment()
    tmpl = env.get_template("report.md.j2")
    threshold = f"{report.threshold:g}"
    return tmpl.render(
        r=report,
        cat=cat,
        title=cat.title(report),
        h={k: cat.numbered_heading(k) for k in cat.headings()},
        s=report.sections,
        note=cat.t("table.note", threshold=threshold),
        empty_table=cat.t("table.empty", threshold=threshold),
        esc=md_text,
        line=md_line,
        cell=md_cell,
        colon="：" if report.lang == "zh" else ": ",
        prs=lambda nums: ("（" if report.lang == "zh" else " (") + ", ".join(f"#{n}" for n in nums) + ("）" if report.lang == "zh" else ")"),
    )
