"""The week's themes: modules, configured topics, and topics discovered because
they are unusually frequent this week against the repository's earlier weeks
(a hardware platform, a subsystem, a bug-fix wave). Every theme carries the
counts behind it: this week, the previous week, the baseline mean, and its rank
among the baseline weeks ("the most of any week in the last 12")."""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

from ..config import Settings
from ..models import PullRequest, Theme
from . import files as fk
from .classify import NAME_PARTS, TERM_SYNONYMS, Classified

# Topics worth a theme whenever they are frequent, even in a week that is not unusual for them.
PLATFORM_TERMS = frozenset({"npu", "rocm", "cuda", "tpu", "xpu", "hpu", "mlu", "musa", "metal", "mps"})
KNOWN_TOPICS = set(TERM_SYNONYMS.values()) | PLATFORM_TERMS | {"ci", "docs"}

# Terms too generic to be a theme on their own.
_NOT_THEMES = {"tests", "test", "root", "config", "trainer", "model", "models", "utils", "scripts", "examples", "recipe",
               "data", "misc", "worker", "workers", "src"}
# Title tags that name no area: a "[misc]" module is no theme.
_CATCH_ALL = {"misc", "other", "others", "minor", "general", "wip", "chore", "hotfix"}
# A wave of one change type is a theme when the week has this many and clearly more than usual.
_TYPE_WAVES = {"fix": 5, "docs": 4, "ci": 4, "test": 4, "perf": 3, "deps": 3}


@dataclass
class WeekSample:
    """One week of PRs with their cheap classification (for baselines), and counts
    of modules, terms and types computed once (a backfill asks each week ~95 times)."""

    label: str
    prs: list[PullRequest]
    classified: dict[int, Classified]
    _counts: dict[str, Counter] | None = None

    def count(self, kind: str, key: str) -> int:
        """PRs of the week with module/term/type `key`."""
        return self.counts(kind)[key]

    def counts(self, kind: str) -> Counter:
        """PRs of the week per module, term or type."""
        if self._counts is None:
            c: dict[str, Counter] = {"module": Counter(), "term": Counter(), "type": Counter()}
            for cl in self.classified.values():
                c["module"].update(set(cl.modules))
                c["term"].update(cl.terms)
                c["type"][cl.type] += 1
            self._counts = c
        return self._counts[kind]


def _counts(history: list[WeekSample], member: Callable[[PullRequest, Classified], bool]) -> list[int]:
    return [sum(1 for pr in w.prs if member(pr, w.classified[pr.number])) for w in history]


def rank_in(count: int, hist: list[int]) -> int | None:
    """`count`'s rank among the baseline weeks' counts: 1 only when it is more than every
    one of them, so a week that ties the busiest is not called "the most of any week";
    a tie ranks just below the weeks it ties (however many), not below all of them."""
    return 1 + sum(1 for h in hist if h > count) + (count in hist) if hist else None


def _theme(key: str, name: str, kind: str, prs: list[int], hist: list[int]) -> Theme:
    count = len(prs)
    return Theme(
        key=key,
        name=name,
        prs=sorted(prs),
        kind=kind,
        baseline_mean=round(sum(hist) / len(hist), 2) if hist else 0.0,
        previous=hist[-1] if hist else 0,
        rank_in_history=rank_in(count, hist),
        history_weeks=len(hist),
    )


def _surprise(count: int, hist: list[int]) -> float:
    mean = sum(hist) / len(hist) if hist else 0.0
    return (count - mean) / math.sqrt(mean + 1.0)


def _configured_member(rule) -> Callable[[PullRequest, Classified], bool]:
    keywords = [k.lower() for k in rule.keywords]

    def member(pr: PullRequest, c: Classified) -> bool:
        title = pr.title.lower()
        return (
            any(k in title for k in keywords)
            or bool(rule.paths and any(fk.path_matches(f.path, rule.paths) for f in pr.files))
            or any(lbl in pr.labels for lbl in rule.labels)
        )

    return member


def build_themes(
    week: WeekSample,
    history: list[WeekSample],
    settings: Settings,
    name_of: Callable[[str], str],
    lang: str = "en",
) -> list[Theme]:
    """All themes of the week, strongest first (callers pick the 3–5 to write about)."""
    themes: list[tuple[float, Theme]] = []
    cls = week.classified

    # Modules.
    modules: dict[str, list[int]] = {}
    for pr in week.prs:
        for m in cls[pr.number].modules:
            modules.setdefault(m, []).append(pr.number)
    by_module = [w.counts("module") for w in history]
    for m, nums in modules.items():
        if m in _CATCH_ALL:  # "[misc]" says what a PR is not, not an area of the code
            continue
        hist = [c.get(m, 0) for c in by_module]  # `get`: a Counter's missing key costs a Python call
        score = len(nums) + 0.5 * max(0.0, _surprise(len(nums), hist))
        themes.append((score, _theme(f"module:{m}", name_of(m), "module", nums, hist)))

    # Configured themes.
    for rule in settings.themes:
        member = _configured_member(rule)
        nums = [pr.number for pr in week.prs if member(pr, cls[pr.number])]
        if nums:
            hist = _counts(history, member)
            t = _theme(f"theme:{rule.name}", rule.name_zh if (rule.name_zh and lang == "zh") else rule.name, "configured", nums, hist)
            themes.append((len(nums) + 2.0 + max(0.0, _surprise(len(nums), hist)), t))

    # Discovered terms: frequent this week, rare before.
    term_prs: dict[str, list[int]] = {}
    for pr in week.prs:
        for term in cls[pr.number].terms:
            term_prs.setdefault(term, []).append(pr.number)
    module_sets = {frozenset(v) for v in modules.values()}
    by_term = [w.counts("term") for w in history]
    for term, nums in term_prs.items():
        if len(nums) < 3 or term in _NOT_THEMES or frozenset(nums) in module_sets:
            continue
        hist = [c.get(term, 0) for c in by_term]
        z = _surprise(len(nums), hist)
        if z < 1.0 and term not in KNOWN_TOPICS:
            continue
        themes.append((len(nums) + max(z, 0.0) + 1.0, _theme(f"term:{term}", name_of(term), "discovered", nums, hist)))

    # Waves of one change type.
    for ty, minimum in _TYPE_WAVES.items():
        nums = [pr.number for pr in week.prs if cls[pr.number].type == ty]
        if len(nums) < minimum:
            continue
        hist = [w.count("type", ty) for w in history]
        z = _surprise(len(nums), hist)
        if z >= 1.0:
            themes.append((len(nums) + z, _theme(f"type:{ty}", name_of(f"type:{ty}"), "type", nums, hist)))

    themes = _without_subtopics(themes)
    themes.sort(key=lambda st: (-st[0], st[1].key))
    # Drop near-duplicates (same PRs under another name), keeping the stronger one.
    kept: list[Theme] = []
    kept_prs: list[tuple[str, set[int], bool]] = []  # each kept theme's name, PRs (as a set once), and whether a platform
    for _score, t in themes:
        s = set(t.prs)
        # A hardware platform is no duplicate of another kind of theme: its team is asked
        # to validate its PRs ("Validate on Ascend NPU") whatever else they are.
        platform = is_platform(t.key, settings)
        for name, prs, was_platform in kept_prs:
            if name == t.name:
                break
            shared = len(s & prs)  # the union's size follows from it, without building the union
            if shared / (len(s) + len(prs) - shared) >= 0.8 and (was_platform or not platform):
                break
        else:
            kept.append(t)
            kept_prs.append((t.name, s, platform))
    return kept


def is_platform(key: str, settings: Settings) -> bool:
    """Whether the theme `key` is a hardware platform. A module or discovered term is one
    by its name (`npu`, `rocm`); a configured theme by its `platform` option, else by a
    platform named in its name or keywords ("Ascend NPU": configured, it had taken the
    place of the discovered `npu`, and the week's "Validate on Ascend NPU" was gone)."""
    kind, _, name = key.partition(":")
    if kind != "theme":
        return name in PLATFORM_TERMS
    rule = next((r for r in settings.themes if r.name == name), None)
    if rule is None or rule.platform is not None:
        return bool(rule and rule.platform)
    words = {w for text in (rule.name, *rule.keywords) for w in _NON_WORD.split(text.lower())}
    return any(TERM_SYNONYMS.get(w, w) in PLATFORM_TERMS for w in words)


_NON_WORD = re.compile(r"[^a-z0-9]+")


def _without_subtopics(themes: list[tuple[float, Theme]]) -> list[tuple[float, Theme]]:
    """Without a folder's term that names a known topic which is a theme too, when most of
    its PRs are that theme's: `docs/ascend_tutorial` is Ascend NPU work, and a week of
    Ascend docs read as two themes, "ascend_tutorial" first (verl 2025-W38: five PRs
    each, four of them shared). The topic's name is the one a reader knows."""
    terms = {t.key.removeprefix("term:"): set(t.prs) for _, t in themes if t.key.startswith("term:")}

    def subtopic(t: Theme) -> bool:
        term = t.key.removeprefix("term:")
        if term == t.key:  # a module, a configured theme, a type wave
            return False
        mine = terms[term]
        topics = {TERM_SYNONYMS[w] for w in NAME_PARTS.split(term) if w in TERM_SYNONYMS} & terms.keys() - {term}
        return any(len(mine & terms[topic]) >= 0.5 * min(len(mine), len(terms[topic])) for topic in topics)

    return [(score, t) for score, t in themes if not subtopic(t)]


def pick_report_themes(themes: list[Theme], limit: int = 5) -> list[Theme]:
    """The 3–5 themes a report writes about: the strongest with at least 2 PRs, less any
    whose PRs all belong to a stronger one already picked (mcore within megatron)."""
    picked: list[Theme] = []
    for t in themes:
        if t.count >= 2 and len(picked) < limit and not any(set(t.prs) <= set(p.prs) for p in picked):
            picked.append(t)
    if len(picked) < 3:  # up to three with smaller themes, those of PRs not written about yet first
        rest = [t for t in themes if t not in picked]
        rest.sort(key=lambda t: any(set(t.prs) <= set(p.prs) for p in picked))  # stable: strongest first in each
        picked += rest[: 3 - len(picked)]
    return picked
