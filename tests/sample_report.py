"""A small hand-built weekly report for renderer and publisher tests.

`sample_report(lang, hostile=True)` puts the usual injection payloads into the
places untrusted PR text reaches: titles, gists, key contributions, section
texts, theme names and the card's lines.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

from repobrief.models import (
    Card,
    Item,
    PRAnalysis,
    PullRequest,
    Reason,
    Report,
    Risk,
    Sections,
    TableRow,
    Theme,
)

HOSTILE = [
    "<script>alert('xss')</script>",
    '<img src=x onerror="alert(1)">',
    "[click me](javascript:alert(2))",
    "<a href=\"javascript:alert(3)\">link</a>",
    "![pic](http://evil.example/pixel.png)",
    "<https://evil.example/auto>",
    "<!channel> @all *bold* _it_ `code` ~strike~ | pipe",
]

SHANGHAI = ZoneInfo("Asia/Shanghai")


def sample_report(lang: str = "en", hostile: bool = False, n_prs: int = 12) -> Report:
    start = datetime(2026, 6, 22, tzinfo=SHANGHAI)
    end = start + timedelta(days=7)
    prs, analyses = [], {}
    modules = ["trainer", "rollout", "ci", "docs"]
    for i in range(n_prs):
        number = 6700 + i
        bad = HOSTILE[i % len(HOSTILE)] if hostile else ""
        title = f"[{modules[i % 4]}] feat: improvement number {i} {bad}".strip()
        prs.append(
            PullRequest(
                number=number,
                title=title,
                body=bad,
                author=f"dev{i % 5}",
                merged_at=start + timedelta(hours=6 + 11 * i),
                url=("javascript:alert(9)" if hostile and i == 0 else f"https://github.com/verl-project/verl/pull/{number}"),
            )
        )
        importance = round(9.6 - i * 0.7, 1)
        analyses[number] = PRAnalysis(
            number=number,
            modules=[modules[i % 4]],
            type="feat",
            themes=[modules[i % 4]],
            breaking=i == 1,
            importance=importance,
            importance_reasons=[Reason("feat", 3.0, "new feature")],
            key_contribution=f"contribution {i} {bad}".strip(),
            gist=f"improvement number {i} {bad}".strip(),
        )
    themes = [
        Theme(key=m, name=(m + (" " + HOSTILE[0] if hostile and m == "ci" else "")), prs=[p.number for p in prs if analyses[p.number].modules == [m]])
        for m in modules
    ]
    weeks = [f"2026-W{w:02d}" for w in range(15, 27)]
    stats = {
        "merged_prs": n_prs,
        "by_module": {m: len(t.prs) for m, t in zip(modules, themes, strict=True)},
        "by_theme": {t.name: len(t.prs) for t in themes},
        "by_type": {"feat": n_prs},
        "trend": {
            "weeks": weeks,
            "merged_prs": [20 + (w * 7) % 13 for w in range(12)],
            "themes": {m: [(w * (j + 2)) % 7 for w in range(12)] for j, m in enumerate(modules)},
        },
    }
    threshold = 5.0
    bad0 = HOSTILE[0] if hostile else ""
    bad2 = HOSTILE[2] if hostile else ""
    sections = Sections(
        summary=f"From 2026-06-22 to 2026-06-28, {n_prs} PRs were merged (#6700, #6701). {bad0} {bad2}",
        key_changes=[Item(name=f"Change {i} {HOSTILE[i % len(HOSTILE)] if hostile else ''}", text=f"Does thing {i} (#{6700 + i}).", prs=[6700 + i]) for i in range(4)],
        trends=[Item(name=t.name, text=f"{len(t.prs)} PRs this week.", prs=t.prs) for t in themes],
        risks=[Item(name="Breaking change", text=f"#6701 renames a key. {bad2}", prs=[6701])],
        table=[
            TableRow(number=p.number, gist=analyses[p.number].gist, importance=analyses[p.number].importance,
                     key_contribution=analyses[p.number].key_contribution, url=p.url)
            for p in prs if analyses[p.number].importance >= threshold
        ],
        recommendations=[Item(name="Upgrade carefully", text="Users upgrading should rename the key (#6701).", prs=[6701])],
        closing="",
    )
    zh = lang == "zh"
    card = Card(
        title=("verl-project/verl 2026 第26周周报 (06-22 至 06-28)" if zh else "verl-project/verl week 26, 2026 (06-22 to 06-28)"),
        highlights=[f"{analyses[p.number].gist} (#{p.number})" for p in prs[:3]],
        risks=[f"Breaking change: #6701 renames a key {bad0}".strip(), f"Core path changes (#6700) {bad2}".strip()],
        button="完整周报" if zh else "Full report",
        link="https://reports.example.com/verl/2026-W26.html",
    )
    return Report(
        repository="verl-project/verl",
        week="2026-W26",
        timezone="Asia/Shanghai",
        start=start,
        end=end,
        lang=lang,
        threshold=threshold,
        stats=stats,
        pull_requests=prs,
        analyses=analyses,
        themes=themes,
        risks=[Risk(kind="breaking", severity="high", prs=[6701], evidence=["title has [BREAKING]"], title="Breaking change")],
        sections=sections,
        card=card,
        engine={"name": "offline"},
    )
