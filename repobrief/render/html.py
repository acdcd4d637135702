"""The standalone HTML report: one file, opens offline, charts inline.

`render(report)` fills `templates/report.html.j2` (Jinja2, autoescape on) with
the six sections, a sortable PR table, an appendix of every PR of the week and
inline SVG charts (`render/charts.py`): PRs by module and by theme, the
trend (the week and its baseline weeks) of the week's top themes, and the importance distribution. CSS
and the sorting script are inlined from `page.css` / `page.js`; a
Content-Security-Policy allows nothing to load and only that script (by hash)
to run, so escaped PR text stays inert even if a template override forgets to
escape. Templates (and page.css / page.js) can be overridden like every
template: files in the `REPOBRIEF_TEMPLATES` folder win over the package's.
"""

from __future__ import annotations

import base64
import hashlib
import re
from collections.abc import Sequence
from datetime import date, timedelta

from markupsafe import Markup, escape

from ..models import Report, inert_text
from . import charts, template_environment
from .links import pr_link

TOP_BARS = 12  # bars per "PRs by module/theme" chart
TOP_TREND_THEMES = 5

# `#123` in prose; the look-behind keeps character references such as `&#39;` intact.
_PR_REF = re.compile(r"(?<![&\w])#(\d+)\b")


_CODE_SPAN = re.compile(r"`([^`\n]{1,200})`")


def code_spans(text: str) -> Markup:
    """`text` escaped, its Markdown code spans (`verl/trainer/ppo/v1`) as <code>: PR titles
    and bodies write paths and settings that way, and a reader should not see backticks."""
    return Markup(_CODE_SPAN.sub(r"<code>\1</code>", str(escape(inert_text(text)))))


def environment():
    """The HTML environment: the package's, autoescaped, with `REPOBRIEF_TEMPLATES` searched
    first, and the `code` filter (`code_spans`) for text quoted from PRs."""
    env = template_environment(autoescape=True)
    env.filters["code"] = code_spans
    return env


def page_assets(env) -> dict:
    """The inlined CSS and script, and the CSP hash that lets exactly that script run."""
    css = env.loader.get_source(env, "page.css")[0]
    script = env.loader.get_source(env, "page.js")[0]
    digest = base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode("ascii")
    return {"css": Markup(css), "script": Markup(script), "script_hash": f"sha256-{digest}"}


def html_strings(lang: str, days: int | None = None) -> dict[str, str]:
    """The page's labels, worded for a report of `days` days (None: an ISO week; see
    `i18n.report_days`); fields other than `{days}` are left for the caller."""
    from ..i18n import catalog

    cat = catalog(lang)
    return {k: cat.period_template(f"html.{k}", days) or "" for k in cat.m["html"]}


def render(report: Report) -> str:
    return render_page(report)


def render_page(
    report: Report,
    *,
    nav: Sequence[tuple[str, str]] = (),
    backend: str | None = None,
) -> str:
    """The report page; `nav` adds (label, relative href) links on top (the archive site)."""
    from ..i18n import catalog, report_days

    cat = catalog(report.lang)
    days = report_days(report)
    t = html_strings(report.lang, days)
    env = environment()
    numbers = {pr.number for pr in report.pull_requests}

    def link(number: int, url: str | None = None) -> str | None:
        return pr_link(report, number, url)

    def prlinks(text: str) -> Markup:
        """Escape `text`, then link each `#N` that is a PR of the week."""

        def sub(m: re.Match) -> str:
            n = int(m.group(1))
            href = link(n) if n in numbers else None
            return f'<a href="{escape(href)}">#{n}</a>' if href else m.group(0)

        return Markup(_PR_REF.sub(sub, str(code_spans(text))))

    template = env.get_template("report.html.j2")
    return template.render(
        report=report,
        title=cat.title(report),
        headings=cat.headings(days),
        date_range=cat.date_range(report.start.date(), last_day(report)),
        sections=report.sections,
        engine=_engine_name(report),
        facts=_facts(report, cat),
        charts=_charts(report, t, backend),
        cols=cat.m["table"],
        table_note=cat.t("table.note", threshold=f"{report.threshold:g}"),
        table_empty=cat.period("table.empty", days, threshold=f"{report.threshold:g}"),
        empty=cat.empty_sections(days, bool(report.pull_requests)),
        all_prs=_all_prs(report, cat),
        link=link,
        prlinks=prlinks,
        cited=lambda numbers: prlinks(cat.cited(numbers)),
        nav=list(nav),
        t=t,
        html_lang="zh-CN" if report.lang == "zh" else "en",
        **page_assets(env),
    )


def last_day(report: Report) -> date:
    """The last calendar day of the report's window (its end is exclusive)."""
    return (report.end - timedelta(microseconds=1)).astimezone(report.start.tzinfo).date()


def _engine_name(report: Report) -> str:
    e = report.engine or {}
    return str(e.get("model") or e.get("name") or e.get("engine") or "offline")


def _facts(report: Report, cat) -> dict:
    """The header tiles: the same figures as the summary and the JSON stats (direct commits included)."""
    st, prs = report.stats, report.pull_requests
    return {
        "prs": cat.num(st.get("merged_prs", len(prs))),
        "contributors": cat.num(st.get("contributors", len({p.author for p in prs if p.author}))),
        "added": cat.num(st.get("lines_added", sum(p.lines_added for p in prs))),
        "deleted": cat.num(st.get("lines_deleted", sum(p.lines_deleted for p in prs))),
        "breaking": cat.num(sum(1 for a in report.analyses.values() if a.breaking)),
    }


def _all_prs(report: Report, cat) -> list[dict]:
    rows: list[dict] = []
    for pr in report.pull_requests:
        a = report.analyses.get(pr.number)
        rows.append(
            {
                "number": pr.number,
                "url": pr_link(report, pr.number, pr.url),
                "title": pr.title,
                "author": pr.author,
                "type": cat.type_name(a.type) if a else "",
                "modules": ", ".join(a.modules) if a else "",
                "importance": a.importance if a else 0.0,
                "breaking": bool(a and a.breaking),
                "added": pr.lines_added,
                "deleted": pr.lines_deleted,
                "lines": pr.lines,
            }
        )
    rows.sort(key=lambda r: (-r["importance"], r["number"]))
    return rows


def _top(counts: dict | None, n: int) -> list[tuple[str, int]]:
    items = [(inert_text(str(k)), int(v)) for k, v in (counts or {}).items() if int(v) > 0]
    items.sort(key=lambda kv: (-kv[1], kv[0]))
    return items[:n]


def _charts(report: Report, t: dict[str, str], backend: str | None) -> dict[str, Markup | None]:
    stats = report.stats or {}
    # Module and theme names can be folders' names: the labels are made inert as the page's text is.
    names = {k: inert_text(str(v)) for k, v in {**(stats.get("theme_names") or {}),
                                               **{th.key: th.name for th in report.themes}}.items()}
    out: dict[str, Markup | None] = {"modules": None, "themes": None, "trend": None, "importance": None}
    modules = _top(stats.get("by_module"), TOP_BARS)
    if modules:
        out["modules"] = Markup(charts.bar_chart(modules, t["chart_modules"], "chart-modules", xlabel=t["axis_prs"], backend=backend))
    themes = [(names.get(k, k), v) for k, v in _top(stats.get("by_theme"), TOP_BARS)]
    if themes:
        out["themes"] = Markup(charts.bar_chart(themes, t["chart_themes"], "chart-themes", xlabel=t["axis_prs"], backend=backend))
    trend = stats.get("trend") or {}
    weeks = trend.get("weeks") or []
    # A series that does not cover every week (a hand-edited or foreign JSON) cannot be plotted.
    series = {k: v for k, v in (trend.get("themes") or {}).items() if len(v) == len(weeks)}
    if weeks:
        keys = [th.key for th in report.themes if th.key in series][:TOP_TREND_THEMES]
        if not keys:  # themes of the week unknown to the trend: show the busiest series
            keys = sorted(series, key=lambda k: -sum(series[k]))[:TOP_TREND_THEMES]
        lines = [(names.get(k, inert_text(k)), series[k]) for k in keys]
        merged = trend.get("merged_prs") or []
        total = (t["legend_all_prs"], merged) if len(merged) == len(weeks) else None
        out["trend"] = Markup(
            charts.line_chart(weeks, lines, t["chart_trend"].format(weeks=len(weeks)), "chart-trend", total=total, backend=backend)
        )
    scores = [a.importance for a in report.analyses.values()]
    if scores:
        out["importance"] = Markup(
            charts.histogram(
                scores, t["chart_importance"], "chart-importance", threshold=report.threshold,
                xlabel=t["axis_importance"], ylabel=t["axis_prs"], backend=backend,
            )
        )
    return out


__all__ = ["environment", "last_day", "page_assets", "render", "render_page"]
