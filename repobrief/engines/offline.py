"""The offline engine: rules and statistics, deterministic, no network.

It must write a complete, useful report on its own; the LLM engine uses its
results as hints and as the fallback for every unit it cannot ground.
"""

from __future__ import annotations

import re

from ..analysis.classify import classify
from ..analysis.context import AnalysisContext
from ..analysis.risks import pr_risks
from ..analysis.scoring import is_default_change, is_opt_in, says_compatible, score
from ..conventions import clean_body, clip, first_sentence, may_match, removal_kind
from ..i18n import catalog
from ..models import PRAnalysis, PullRequest
from . import Engine

# The longest gist: a title is repeated in several sections, the table and the card,
# and a pasted log in a title would flood them all (real titles stay under ~190).
GIST_MAX = 200


def gist_of(description: str, fix: bool = False) -> str:
    """The PR's change in a few words, from its title's description. A fix titled by its
    problem ("fix: stuck issue with mixed data") reads as that problem once the type is
    gone ("Stuck issue with mixed data"), so it gets its verb back: "Fix stuck issue …"."""
    # Spaces as one (a title's "add `engine_kwargs`  in …"), and none left before a
    # dropped full stop ("clean unused package ." read "Clean unused package  (#239)").
    d = clip(" ".join(description.split()), GIST_MAX, at_word=True).rstrip(".").rstrip()
    names_problem = fix and may_match(d, _PROBLEM_WORDS) and _NAMES_PROBLEM.search(d)
    if names_problem and not (_VERB_FIRST.match(d) or _SAYS_FIX.search(d) or _CLAUSE.search(_HEAD_END.split(d, 1)[0])):
        first = d.split(" ", 1)[0]
        d = "Fix " + (d[:1].lower() + d[1:] if first.lower() in _PLAIN_FIRST and first[1:] == first[1:].lower() else d)
    return d[:1].upper() + d[1:] if d and d[0].islower() and not re.match(r"^[a-z]+[A-Z_]", d) else d


# A fix's description that names what was wrong, and one that starts with what the PR does.
_NAMES_PROBLEM = re.compile(
    r"\b(?:issues?|bugs?|errors?|mismatch(?:es)?|crash(?:es)?|failures?|fails?|failed|failing|problems?|typos?|leaks?|"
    r"hangs?|deadlocks?|missing|broken|incorrect|wrong|invalid|can'?t|cannot|doesn'?t|does not|unable|regressions?)\b",
    re.I,
)
# One is in every match of _NAMES_PROBLEM ("fail": fails, failed, failing, failures; "can": can't, cannot).
_PROBLEM_WORDS = ("issue", "bug", "error", "mismatch", "crash", "fail", "problem", "typo", "leak", "hang", "deadlock",
                  "missing", "broken", "incorrect", "wrong", "invalid", "can", "does", "unable", "regression")
# A description that is a clause ("checkpoint conversion fails with TP>1"), looked for in
# its head, before "when …", "with …" (the issue "when world_size is 1" is still a noun
# phrase): "Fix" would not fit before it.
_HEAD_END = re.compile(r"\s(?:when|if|after|due|with|while|because|since|for|in|on|under|during|where)\s", re.I)
_CLAUSE = re.compile(r"\b(?:fails|hangs|crashes|breaks|is|are|was|were|does|doesn'?t|don'?t|can'?t|cannot|won'?t|"
                     r"not|has|have|had|occurs|happens)\b", re.I)
# First words that are plain words, lower-cased after "Fix" ("Fix a major issue", "Fix
# incorrect loss scaling"); any other capital is kept (a name: "Fix Megatron MTP loss").
_PLAIN_FIRST = frozenset(
    "a an the some several many multiple various two three typo typos bug bugs error errors issue issues incorrect "
    "wrong missing broken potential possible using unexpected invalid inconsistent duplicate duplicated stale empty "
    "random occasional rare intermittent flaky unused bad".split())
_SAYS_FIX = re.compile(r"\b(?:bug)?fix(?:es|ed|ing)?\b", re.I)
_VERB_FIRST = re.compile(
    r"(?:fix|add|support|remove|avoid|prevent|handle|correct|resolve|restore|keep|guard|skip|set|pass|respect|honou?r|"
    r"allow|return|raise|check|catch|clean|ensure|make|use|update|align|move|replace|rename|revert|disable|enable|drop|"
    r"limit|apply|unify|import|initiali[sz]e|load|save|convert|compute|calculate|reset|sync|wait|bump|patch|improve|"
    r"refactor|change|call|register|treat|read|write|release|free|close|clear|specify|validate|normali[sz]e|cast|pin|"
    r"relax|clamp|filter|propagate|forward|expose|include|exclude|retry|recompute|reorder|sort|adjust|tolerate|accept|"
    r"reject|let|get|infer|strip|trim|delay|defer|log|warn|print|silence|suppress|rework|repair|address|mitigate|"
    r"stabili[sz]e|reduce|increase|lower|emit|delete|stop|create|wire|preserve|install|separate|modify|optimi[sz]e|"
    r"backfill|carry|do|don'?t|bugfix|hotfix|properly|correctly|only|always|never|no|not)"
    r"(?:e?s|e?d|ing)?\b",
    re.I,
)


_STATES_CHANGE = re.compile(
    r"^(?:this (?:pr|change|patch) |we )?(?:adds?|introduces?|implements?|supports?|enables?|fix(?:es)?|makes?|uses?|"
    r"removes?|refactors?|replaces?|moves?|allows?|improves?|updates?|switch(?:es)?|aligns?|migrates?|"
    r"reduces?|speeds? up|avoids?|prevents?|exposes?|extends?|renames?|deprecates?|drops?)\b",
    re.I,
)


def _short(sentence: str, limit: int = 110) -> str:
    """A table-cell version of a sentence: its first clause when it is long."""
    s = sentence.rstrip(". ")
    if len(s) <= limit:
        return s
    for sep in (" — ", "; ", ", ", " ("):
        i = s.find(sep, 40)
        while 0 < i <= limit:
            if s.count("(", 0, i) == s.count(")", 0, i):  # not inside parentheses
                return s[:i]
            i = s.find(sep, i + 1)
    return clip(s, limit, at_word=True)  # between words, and not inside a code span ("in the `use_r…")


class OfflineEngine(Engine):
    name = "offline"

    def __init__(self, settings=None, *, store=None, refresh: bool = False, progress=None) -> None:
        self.settings = settings
        self.progress = progress

    def analyze(self, pr: PullRequest, ctx: AnalysisContext) -> PRAnalysis:
        c = ctx.classified.get(pr.number) or classify(pr, ctx.settings, ctx.project)
        body = clean_body(pr.body)
        importance, reasons = score(pr, c, body, ctx)
        breaking = c.breaking or bool(body.declared_breaking)
        gist = gist_of(c.parsed.description, fix=c.type == "fix")
        cat = catalog(ctx.lang)
        what = _short(first_sentence(body.what, 400))
        # The body's first sentence says more than the title when it states the change
        # itself ("Adds …", "This PR introduces …"); background ("In bf16 training, …")
        # or a restatement of the title does not.
        text = what if what and len(gist) + 10 < len(what) and _STATES_CHANGE.match(what) else gist
        removal = removal_kind(pr.title)
        if breaking:
            kc = cat.t("contribution.breaking", text=text)
        elif removal:  # a removal's type says "feat" as often as not: not a new feature
            kc = cat.t(f"contribution.{removal}", text=text)
        else:
            kc = cat.t("contribution.default", type=cat.type_name(c.type), text=text)
        risks = pr_risks(pr, c, body, ctx)
        summary = None
        if pr.discussion_known:
            from ..analysis.discussion import summarize_discussion

            summary = summarize_discussion(pr, ctx.lang)
        themes = [t.key for t in ctx.themes if pr.number in t.prs]
        return PRAnalysis(
            number=pr.number,
            modules=c.modules,
            type=c.type,
            themes=themes,
            breaking=breaking,
            importance=importance,
            importance_reasons=reasons,
            key_contribution=kc,
            risks=risks,
            discussion_summary=summary,
            gist=gist,
            engine=self.name,
        )

    def analyze_all(self, prs, ctx):
        out = {}
        for i, pr in enumerate(prs):
            out[pr.number] = self.analyze(pr, ctx)
            if self.progress:
                self.progress("analyze", i + 1, len(prs))
        return out


def compat_signals(pr: PullRequest) -> dict[str, bool]:
    """What the PR says about defaults (for the composer)."""
    body = clean_body(pr.body)
    return {"default_change": is_default_change(pr, body), "opt_in": is_opt_in(pr, body)}


def says_kept_compatible(pr: PullRequest) -> bool:
    """Whether the PR's description says existing behaviour is kept (`says_compatible`):
    asked by the composer only when nothing before it settled what to say (its regex
    reads the whole description)."""
    return says_compatible(clean_body(pr.body))
