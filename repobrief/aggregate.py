"""Every number the report states: counts by type, module and theme,
contributors and first-time contributors, lines changed, and comparisons with
the repository's earlier weeks. Composers (offline or LLM) may only state
figures found here; `WeekFacts.allowed_numbers()` is what grounding checks."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from .analysis.themes import WeekSample, pick_report_themes, rank_in
from .config import Settings
from .i18n import Catalog
from .models import Commit, PRAnalysis, PullRequest, Risk, Theme
from .window import Window

# Addresses many people commit from (a machine's default, a placeholder): sharing one
# says nothing of being one person.
_SHARED_EMAIL = re.compile(r"^(?:root|admin|user|you|me|git|ubuntu|noreply|no-reply|none|unknown)@|@(?:localhost|example\.\w+)"
                           r"$|^noreply@github\.com$", re.I)


def people(items: Iterable[PullRequest | Commit]) -> list[list[str]]:
    """The authors of `items` as people, each the list of names it went by (most used
    first): names that share an e-mail address, or differ only in case, are one person
    ("Peter Sheng" and "shengguangming" committing from one address; "HL" and "Haibin
    Lin"), as telling first-time contributors already takes them."""
    items = list(items)
    owner: dict[str, str] = {}  # an address -> the first name (lower-cased) seen with it
    shared = False
    for it in items:
        if it.author_email and owner.setdefault(it.author_email.lower(), it.author.lower()) != it.author.lower():
            shared = not _SHARED_EMAIL.search(it.author_email)
            if shared:
                break
    names = list(dict.fromkeys(it.author for it in items))
    if not shared and len({n.lower() for n in names}) == len(names):  # most weeks: one name each
        return [[n] for n in names]
    parent: dict[str, str] = {}

    def root(k: str) -> str:
        while parent.setdefault(k, k) != k:
            parent[k] = parent[parent[k]]
            k = parent[k]
        return k

    uses: Counter[str] = Counter()
    for it in items:
        uses[it.author] += 1
        keys = [f"n:{it.author.lower()}"]
        if it.author_email and not _SHARED_EMAIL.search(it.author_email):
            keys.append(f"e:{it.author_email.lower()}")
        for k in keys[1:]:
            parent[root(k)] = root(keys[0])
        root(keys[0])
    groups: dict[str, list[str]] = {}
    for name in uses:
        groups.setdefault(root(f"n:{name.lower()}"), []).append(name)
    return [sorted(names, key=lambda n: -uses[n]) for names in groups.values()]


@dataclass
class WeekFacts:
    """The week as computed: what composers write from."""

    repository: str
    window: Window
    lang: str
    settings: Settings
    catalog: Catalog
    prs: list[PullRequest]
    analyses: dict[int, PRAnalysis]
    direct_commits: list[Commit]
    stats: dict
    themes: list[Theme]  # all, strongest first
    report_themes: list[Theme]  # the 3–5 the report writes about
    risks: list[Risk]  # one per kind, strongest first
    history: list[WeekSample] = field(default_factory=list)
    reverted_by: dict[int, int] = field(default_factory=dict)  # PR -> the PR of the week that reverted it

    def ranked(self) -> list[PullRequest]:
        """PRs by importance, highest first (ties: lower PR number first)."""
        return sorted(self.prs, key=lambda p: (-self.analyses[p.number].importance, p.number))

    def ranked_live(self) -> list[PullRequest]:
        """`ranked()` without the PRs reverted within the week: their change is gone
        by the week's end, so they are neither notable changes nor risks."""
        return [p for p in self.ranked() if p.number not in self.reverted_by]

    def pr(self, number: int) -> PullRequest | None:
        return next((p for p in self.prs if p.number == number), None)

    def allowed_numbers(self) -> set[float]:
        """Every figure a grounded text may state (besides dates, versions and PR numbers)."""
        nums: set[float] = set()

        def walk(v) -> None:
            if isinstance(v, bool):
                return
            if isinstance(v, (int, float)):
                nums.add(float(v))
            elif isinstance(v, dict):
                for x in v.values():
                    walk(x)
            elif isinstance(v, (list, tuple)):
                for x in v:
                    walk(x)

        walk(self.stats)
        for t in self.themes:
            nums.update({float(t.count), float(t.previous), float(t.baseline_mean), float(t.history_weeks)})
        for a in self.analyses.values():
            nums.add(float(a.importance))
            for reason in a.importance_reasons:  # "larger than 82% of recent PRs": the share a size is written with
                nums.update(float(x) for x in _PERCENT.findall(reason.text))
        for p in self.prs:
            nums.update({float(p.lines), float(p.lines_added), float(p.lines_deleted), float(len(p.files))})
        for r in self.risks:
            nums.add(float(len(r.prs)))
        nums.add(float(self.settings.threshold))
        return nums


_PERCENT = re.compile(r"(\d+(?:\.\d+)?)%")


def _wow(current: int, previous: int | None) -> dict:
    if previous is None:
        return {"previous": None, "delta": None, "pct": None}
    return {
        "previous": previous,
        "delta": current - previous,
        "pct": round(100.0 * (current - previous) / previous, 1) if previous else None,
    }


def _lines(prs: list[PullRequest], direct: list[Commit]) -> tuple[int, int]:
    """Lines added and deleted by a week's PRs and its direct commits."""
    added = sum(p.lines_added for p in prs) + sum(f.added or 0 for c in direct for f in c.files)
    deleted = sum(p.lines_deleted for p in prs) + sum(f.deleted or 0 for c in direct for f in c.files)
    return added, deleted


def compute_stats(
    window: Window,
    prs: list[PullRequest],
    analyses: dict[int, PRAnalysis],
    direct: list[Commit],
    history: list[WeekSample],
    themes: list[Theme],
    written: list[Theme],
    first_time: set[str] | None,
    previous_detail: tuple[list[PullRequest], list[Commit]] | None,
    threshold: float,
) -> dict:
    """The week's figures; `written`: the themes the report writes about (each gets a trend)."""
    authors = people([*prs, *direct])
    by_type = Counter(analyses[p.number].type for p in prs)
    by_module: Counter[str] = Counter()
    for p in prs:
        by_module.update(analyses[p.number].modules)
    added, deleted = _lines(prs, direct)
    hist_counts = [len(w.prs) for w in history]
    n = len(prs)
    prev = hist_counts[-1] if hist_counts else None
    stats: dict[str, Any] = {
        "merged_prs": n,
        "direct_commits": len(direct),
        "contributors": len(authors),
        "first_time_contributors": None if first_time is None else len(first_time),
        "first_time_contributor_names": sorted(first_time) if first_time else [],
        "lines_added": added,
        "lines_deleted": deleted,
        "files_changed": len({f.path for p in prs for f in p.files}),
        "by_type": dict(by_type.most_common()),
        "by_module": dict(by_module.most_common()),
        "by_theme": {t.key: t.count for t in themes},
        "theme_names": {t.key: t.name for t in themes},
        "breaking_prs": sorted(p.number for p in prs if analyses[p.number].breaking),
        "reverts": sorted(p.number for p in prs if p.reverts is not None),
        "above_threshold": sum(1 for p in prs if analyses[p.number].importance >= threshold),
        "week_over_week": {"merged_prs": _wow(n, prev)},
        "baseline": {
            "weeks": len(hist_counts),
            "mean_merged_prs": round(sum(hist_counts) / len(hist_counts), 1) if hist_counts else None,
            "max_merged_prs": max(hist_counts) if hist_counts else None,
            "rank_merged_prs": rank_in(n, hist_counts),
        },
    }
    if previous_detail is not None:
        prev_added, prev_deleted = _lines(*previous_detail)
        stats["week_over_week"]["lines_added"] = _wow(added, prev_added)
        stats["week_over_week"]["lines_deleted"] = _wow(deleted, prev_deleted)
    top = list({id(t): t for t in [*written, *themes[:6]]}.values())
    stats["trend"] = {
        "weeks": [w.label for w in history] + [window.label],
        "merged_prs": hist_counts + [n],
        "themes": {t.key: _theme_history(t, history) + [t.count] for t in top},
    }
    return stats


def _theme_history(t: Theme, history: list[WeekSample]) -> list[int]:
    """The theme's count in each of the earlier weeks (its key parsed once, not per week)."""
    kind, _, key = t.key.partition(":")
    if kind in ("module", "term", "type"):
        return [w.counts(kind).get(key, 0) for w in history]
    return [0] * len(history)  # configured themes: counted in the theme's own history only


def _in_effect(number: int, reverts: dict[int, int]) -> bool:
    """Whether PR `number` is in effect at the week's end, given who reverted whom."""
    undone, seen = False, set()
    while number in reverts and number not in seen:  # walk the chain of reverts of reverts
        seen.add(number)
        number, undone = reverts[number], not undone
    return not undone


def build_facts(
    *,
    repository: str,
    window: Window,
    settings: Settings,
    catalog: Catalog,
    prs: list[PullRequest],
    analyses: dict[int, PRAnalysis],
    direct: list[Commit],
    history: list[WeekSample],
    themes: list[Theme],
    week_risks: list[Risk],
    first_time: set[str] | None,
    previous_detail: tuple[list[PullRequest], list[Commit]] | None,
) -> WeekFacts:
    from .analysis.risks import merge_risks

    numbers = {p.number for p in prs}
    reverts = {p.reverts: p.number for p in prs if p.reverts in numbers}
    # A PR is undone when a revert that is itself in effect reverted it: a revert of the
    # revert (a re-land) leaves the change live, a revert of that undoes it again, …
    reverted_by = {n: r for n, r in reverts.items() if _in_effect(r, reverts)}
    importance = {n: a.importance for n, a in analyses.items()}
    undone = set(reverted_by) | set(reverted_by.values())  # a change and the revert that undid it: no risk left
    live_risks = [r for n, a in analyses.items() if n not in undone for r in a.risks]
    risks = merge_risks(live_risks, week_risks, importance)
    written = pick_report_themes(themes)
    stats = compute_stats(window, prs, analyses, direct, history, themes, written, first_time, previous_detail,
                          settings.threshold)
    return WeekFacts(
        repository=repository,
        window=window,
        lang=catalog.lang,
        settings=settings,
        catalog=catalog,
        prs=prs,
        analyses=analyses,
        direct_commits=direct,
        stats=stats,
        themes=themes,
        report_themes=written,
        risks=risks,
        history=history,
        reverted_by=reverted_by,
    )
