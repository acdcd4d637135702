"""Importance 0–10: how much a maintainer or a downstream user should care.

The score is a sum of named terms (`new feature +3.0`, `breaking +2.0`,
`touches core path verl/trainer +1.0`, …), multiplied down for changes that
only touch docs, tests, CI or examples, and clamped to 0–10. Size and spread
are measured against the repository's own recent PRs (percentiles), so the
scores spread the same way in a small library and a large framework. The
formula and its weights are documented in docs/scoring.md and configurable
under `[importance]`.
"""

from __future__ import annotations

import math
import re
from functools import lru_cache

from ..conventions import CleanBody, affirmed, release_version
from ..models import PullRequest, Reason
from . import files as fk
from .classify import Classified
from .context import AnalysisContext, percentile

TYPE_LABELS = {
    "feat": "new feature", "perf": "performance change", "fix": "bug fix", "refactor": "refactor",
    "revert": "revert", "build": "build change", "deps": "dependency change", "chore": "chore", "test": "tests",
    "ci": "CI change", "docs": "docs", "style": "style", "other": "change",
}
_DEFAULT_IN_TITLE = re.compile(
    r"\b(?:by default|as (?:the )?default|defaults? to|make\w* .{1,40} (?:the )?default|(?:change|switch|flip)\w* (?:the )?defaults?)\b",
    re.I,
)
# A title that sets, changes or reverts a default changes what users get, whatever the new
# value: "Set default value of ETP to 1", "revert default value of max_num_seqs", "set
# X default to False" (an option turned off by default is opt-in only when it is new).
_DEFAULT_SET_IN_TITLE = re.compile(
    r"\b(?:set|sets|setting|change[sd]?|changing|switch(?:es|ed|ing)?|flip(?:s|ped|ping)?|revert(?:s|ed|ing)?"
    r"|reset(?:s|ting)?|restore[sd]?|restoring|lower(?:s|ed|ing)?|raise[sd]?|raising|increase[sd]?|increasing"
    r"|decrease[sd]?|decreasing)\b[^.;:()]{0,60}?\bdefaults?\b(?! (?:for|in) (?:tests?|ci|docs?|examples?)\b)",
    re.I,
)
_DEFAULT_IN_BODY = re.compile(
    r"\b(?:(?:is|are) now (?:enabled|used|on) by default|now (?:enabled|used|on) by default|(?:is|are) (?:enabled|used) by default|"
    r"changes? the default|default (?:is|was) (?:now|changed)|becomes? the default|now defaults? to|(?:made|make) .{1,40} the default)\b",
    re.I,
)
# Said anywhere in the description (a "Backward compatibility" section, a table's "(new
# default)"): existing setups get another behaviour, and how to keep the old one (#6526).
_DEFAULT_ANYWHERE = re.compile(
    r"\((?:the )?new default\)|\b(?:is|as|becomes?) the new default\b|\bopt (?:back )?(?:in)?to the (?:old|previous)\b"
    r"|\b(?:existing|current) [\w-]+ (?:runs|users|setups|jobs|configs?|trainings?) will (?:now )?(?:see|get|use|behave|produce)\b",
    re.I,
)
OPT_IN = re.compile(r"\b(?:disabled by default|off by default|opt-in|not enabled by default|default(?:s)?\s*(?:=|:|to)\s*(?:false|off|none|disabled))\b", re.I)
# The description says existing setups keep working: "backward compatible", "defaults
# preserve existing behavior", "leaving existing behavior unchanged by default".
# Matched against the lowered text (written in lower case, without re.I: a case-blind
# pattern is tried at every character, a case-sensitive one skips ahead far faster).
_COMPATIBLE = re.compile(
    r"\b(?:backwards?[- ]compatib\w*|(?:preserv|keep|retain|leav)\w* (?:the )?(?:existing|current|previous|old) behaviou?r"
    r"|(?:existing|current|default) (?:behaviou?r|path) (?:is |remains |stays )?unchanged|unchanged by default"
    r"|no (?:behaviou?r|breaking|user-facing|(?:public[- ])?api|interface) changes?|(?:fully|remains?|stays?) compatible)\b"
)
_COMPATIBLE_WORDS = ("compatib", "behavio", "change")  # one is in every match ("unchanged" too)
_RFC = re.compile(r"\bRFC\b")


def says_compatible(body: CleanBody) -> bool:
    """Whether the description says existing behaviour is kept (see `_COMPATIBLE`), not
    that it is not ("not fully compatible", "no longer backward compatible")."""
    text = body.text[:5000]
    low = text.lower()
    if not any(word in low for word in _COMPATIBLE_WORDS):
        return False
    if len(low) != len(text):  # lowering moved the positions the negation check reads
        return affirmed(re.compile(_COMPATIBLE.pattern, re.I), text)
    return affirmed(_COMPATIBLE, low)


def is_opt_in(pr: PullRequest, body: CleanBody) -> bool:
    return _signals(pr.title, body)[0]


def is_default_change(pr: PullRequest, body: CleanBody) -> bool:
    """The PR changes what users get without touching their configuration."""
    return _signals(pr.title, body)[1]


@lru_cache(maxsize=1024)
def _signals(title: str, body: CleanBody) -> tuple[bool, bool]:
    """(opt-in, default change), once per PR; the regexes only run on text that
    mentions a default at all. No larger than `clean_body`'s cache: each entry keeps
    its body alive."""
    text, what = body.text[:5000], body.what[:3000]
    low_title = title.lower()
    if "default" in low_title and _DEFAULT_SET_IN_TITLE.search(title):
        return False, True
    opt_in = ("default" in low_title or "opt-in" in low_title) and bool(OPT_IN.search(title))
    low = text.lower()
    opt_in = opt_in or (("default" in low or "opt-in" in low) and _search_near(OPT_IN, text, low, ("default", "opt-"), 15))
    if opt_in:
        return True, False
    default = "default" in low_title and bool(_DEFAULT_IN_TITLE.search(title))
    if not default and ("new default" in low or "opt " in low or (" will " in low and ("existing " in low or "current " in low))):
        default = bool(_DEFAULT_ANYWHERE.search(text))  # only a body that has its words: it is slow on long ones
    if not default:
        low = what.lower()
        # "does not change the default behavior" is no default change
        default = "default" in low and _search_near(_DEFAULT_IN_BODY, what, low, ("default",), 50, negatable=True)
    return False, default


def _search_near(rx: re.Pattern[str], text: str, low: str, anchors: tuple[str, ...], reach: int,
                 negatable: bool = False) -> bool:
    """Whether `rx` matches `text`, searched from `reach` characters before the first
    of `anchors` in `low` (`text.lower()`): each match of these case-insensitive regexes
    holds one of its anchors and begins at most `reach` characters before it, and they
    are tried at every character, so skipping the text before one saves most of their
    time. (The anchors have no i or s, the letters such a regex also finds in other
    characters; positions in `low` are those in `text` when lowering kept its length.)"""
    found = [i for i in map(low.find, anchors) if i >= 0]
    start = max(0, min(found) - reach) if found and len(low) == len(text) else 0
    if negatable:  # `negatable`: a match right after a negation ("does not", "no longer") does not count
        return affirmed(rx, text, start)
    return rx.search(text, start) is not None


def score(pr: PullRequest, c: Classified, body: CleanBody, ctx: AnalysisContext) -> tuple[float, list[Reason]]:
    w = ctx.settings.importance
    reasons: list[Reason] = []

    def add(code: str, points: float, text: str) -> None:
        if abs(points) >= 0.05:
            reasons.append(Reason(code, round(points, 1), text))

    add(f"type:{c.type}", getattr(w, c.type, w.other), TYPE_LABELS.get(c.type, c.type))
    breaking = c.breaking or bool(body.declared_breaking)
    if breaking:
        add("breaking", w.breaking, "breaking")
    if is_default_change(pr, body):
        add("default_change", w.breaking * 0.5, "changes a default")
    released = release_version(pr.title)
    if released and not released[1]:
        add("release", w.release, f"releases {released[0]}")
    if pr.lines_known and pr.files:
        lines = pr.lines
        p = percentile(ctx.calibration_lines, lines)
        # never "larger than 100%": the PR is among them (the points keep the whole share)
        add("size", w.size_max * p, f"size {lines:,} lines (larger than {min(p, 0.99):.0%} of recent PRs)")
        pf = percentile(ctx.calibration_files, len(pr.files))
        add("files", w.files_max * pf, f"spread over {len(pr.files):,} file{'s' * (len(pr.files) != 1)}")
    if len(c.modules) > 1:
        add("modules", min(w.modules_max, w.modules_each * (len(c.modules) - 1)), f"spans {len(c.modules)} modules")
    core_hits = ctx.core_hits(pr)
    if core_hits:
        add("core_path", w.core_path, f"touches core path {', '.join(core_hits[:2])}")
    config = api = False
    new_pkgs: set[str] = set()
    new_src = 0
    for f in pr.files:  # one pass: large PRs have thousands of files
        path = f.path
        config = config or fk.is_config(path)
        api = api or fk.is_api(path)
        if f.status == "A":
            if fk.base(path) == "__init__.py":
                new_pkgs.add(path.rsplit("/", 1)[0])
            new_src += fk.is_source(path)
    if config:
        add("config_surface", w.config_surface, "touches configuration")
    if api:
        add("api_surface", w.api_surface, "touches a public API module")
    if new_pkgs:
        add("new_module", w.new_module, f"adds package {min(new_pkgs)}")
    elif new_src >= 3:
        add("new_module", w.new_module * 0.6, f"adds {new_src} source files")
    if body.issue_refs or pr.linked_issues or ("RFC" in pr.title and _RFC.search(pr.title)) or (
            "RFC" in body.what[:2000] and _RFC.search(body.what[:2000])):
        # "closes": as the source links it (GitHub's linked issues, the JSON's `linked_issues`)
        # or with a closing keyword; a body's other references ("see #12") only refer to it
        refs = sorted(pr.linked_issues) or body.issue_refs
        said = "closes" if pr.linked_issues or (refs and refs[0] in body.closes) else "refers to"
        add("linked_issue", w.linked_issue, f"{said} {'#' + str(refs[0]) if refs else 'an RFC'}")
    if pr.discussion_known:
        from .discussion import discussion_activity

        act = discussion_activity(pr)
        if act:
            add("discussion", w.discussion_max * max(0.0, min(1.0, act[0])), act[1])
    # The reasons add up to the score: the factor's and the clamp's terms are what they take
    # off the sum of the others, after the score's own rounding.
    total = round(sum(r.points for r in reasons), 1)
    scored = total
    if c.minor_only or c.type in ("docs", "style"):
        factor = w.minor_factor
        scored = math.floor(total * factor * 10 + 0.5) / 10
        reasons.append(Reason("minor_only", round(scored - total, 1), f"docs/tests/CI/examples only x{factor:g}"))
    clamped = max(0.0, min(10.0, scored))
    if clamped != scored:
        reasons.append(Reason("clamp", round(clamped - scored, 1), "capped at 10" if clamped else "raised to 0"))
    return clamped, reasons
