"""The Markdown report (the format of `report-format.md`)."""

from __future__ import annotations

import re

from ..i18n import catalog, report_days
from ..models import Report, inert_text
from . import template_environment

_MD_SPECIAL = re.compile(r"([\\*\[\]|~])")
# `_` makes emphasis only at a word boundary; inside identifiers (use_v1) it is inert.
_MD_UNDERSCORE = re.compile(r"(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])")


_CODE_SPAN = re.compile(r"(`[^`]+`)")
# `&` only where it would start an entity: "&nbsp;" written in a title stays those six characters.
_MD_ENTITY = re.compile(r"&(?=#[0-9]{1,7};|#[xX][0-9a-fA-F]{1,6};|[A-Za-z][A-Za-z0-9]{1,31};)")


# What GitHub-flavoured Markdown links by itself (its autolink extension), and the
# punctuation it leaves out of the link at the end, as this does.
_BARE_URL = re.compile(r"((?:https?://|www\.)[^\s`<>]+)", re.I)
_URL_TAIL = ".,;:!?*_~'\")"


def _escaped(part: str) -> str:
    part = _MD_SPECIAL.sub(r"\\\1", part)
    part = _MD_UNDERSCORE.sub(r"\\_", part)
    part = _MD_ENTITY.sub(r"\\&", part)
    # `<` starts raw HTML and autolinks; `>` only quotes at a line's start (`md_line`),
    # so "werkzeug>=2.3.3" stays as written.
    return part.replace("<", "&lt;").replace("`", "\\`")


def md_text(text: str, *, cell: bool = False) -> str:
    """Untrusted text as inert Markdown on one line: no links, raw HTML, entities,
    emphasis, headings or table breaks, while identifiers stay readable. Code spans
    (paired backticks) are inert already and stay as they are, so their text shows
    without escapes; an unpaired backtick is escaped, or it could swallow the text
    after it. A bare URL, which GitHub would link, is put in a code span: it shows
    whole and links nowhere. In a table `cell`, a pipe inside a code span is escaped
    too (GFM)."""
    # One line: each line's surrounding spaces and the blank lines go (a regex for the
    # spaces around a newline retried every start in a long run of spaces without one).
    # Control characters go first (`inert_text`): a carriage return ends a line in CommonMark.
    text = " ".join(s for s in (line.strip() for line in inert_text(text or "").split("\n")) if s)
    parts = _CODE_SPAN.split(text)
    for i, part in enumerate(parts):
        if i % 2:
            parts[i] = part.replace("|", "\\|") if cell else part
            continue
        low = part.lower()
        if "http" not in low and "www." not in low:
            parts[i] = _escaped(part)
            continue
        pieces = _BARE_URL.split(part)
        for j, piece in enumerate(pieces):
            if j % 2:
                url = piece.rstrip(_URL_TAIL)
                pieces[j] = "`" + (url.replace("|", "\\|") if cell else url) + "`" + _escaped(piece[len(url):])
            else:
                pieces[j] = _escaped(piece)
        parts[i] = "".join(pieces)
    return "".join(parts)


def md_line(text: str) -> str:
    """`md_text` for text that starts a line, where `#`, `-`, `>` or `1.` would start a block."""
    text = md_text(text)
    return "\\" + text if text[:1] in ("#", "-", "+", "=", ">") or re.match(r"\d+[.)]\s", text) else text


def md_cell(text: str) -> str:
    """A table cell: one line, `|` escaped (in code spans too)."""
    return md_text(text, cell=True)


def render(report: Report) -> str:
    cat = catalog(report.lang)
    days = report_days(report)
    env = template_environment()
    tmpl = env.get_template("report.md.j2")
    threshold = f"{report.threshold:g}"
    return tmpl.render(
        r=report,
        cat=cat,
        period=lambda key, **kw: cat.period(key, days, **kw),
        title=cat.title(report),
        h={k: cat.numbered_heading(k, days) for k in cat.headings()},
        s=report.sections,
        note=cat.t("table.note", threshold=threshold),
        empty_table=cat.period("table.empty", days, threshold=threshold),
        empty=cat.empty_sections(days, bool(report.pull_requests)),
        esc=md_text,
        line=md_line,
        cell=md_cell,
        colon="：" if report.lang == "zh" else ": ",
        prs=cat.cited,
    )
