"""The offline composer: the six sections and the card, written from the
computed facts with the language's message catalog.

It leads with the fact, then the consequence, and states only counts from the
aggregate and PRs of the week. Risk titles and texts written here are copied
onto the report's risks so JSON readers get the same wording.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import partial

from ..aggregate import WeekFacts
from ..analysis import files as fk
from ..analysis.context import core_matches
from ..analysis.risks import SEVERITY_ORDER
from ..analysis.themes import is_platform
from ..conventions import (
    clean_body,
    clip,
    first_sentence,
    may_match,
    migration_notes,
    plain_markdown,
    release_version,
    removal_kind,
    reverted_title,
)
from ..engines.offline import compat_signals, says_kept_compatible
from ..i18n import Catalog
from ..models import Card, Item, PRAnalysis, PullRequest, Risk, Sections, TableRow, Theme, inert_text

RISKS_SHOWN = 6  # the risk section's items (3–6 in the report format)


def compose_offline(facts: WeekFacts) -> tuple[Sections, Card]:
    cat = facts.catalog
    for r in facts.risks:
        r.title, r.text = risk_title(cat, r), plain_foreign_refs(facts, risk_text(cat, r, facts))
    sections = Sections(
        summary=summary(facts),
        key_changes=key_changes(facts),
        trends=trends(facts),
        risks=[Item(r.title, r.text, list(r.prs)) for r in facts.risks[:RISKS_SHOWN]],
        table=table(facts),
        recommendations=recommendations(facts),
        closing=period_t(facts, "closing" if facts.prs else "closing_quiet"),  # no PR to look up
        sources={k: "offline" for k in ("summary", "key_changes", "trends", "risks", "table", "recommendations", "card")},
    )
    return _without_foreign_refs(facts, sections, card(facts, sections))


# PR titles and bodies cite other PRs and issues ("Split from #6118", a title's
# "(#6068)" kept from a cherry-pick); the report cites only PRs of the week.
# A word naming the kind in front ("PR #3055", "Issue #3226: …") keeps it, without the
# `#` ("PR 3055", "Issue 3226: …"); a bare `#N` becomes "issue/PR N". (The word may
# follow CJK text, which `\b` takes for letters: "和Issue #3226" read "Issue issue/PR 3226".)
_HASH_REF = re.compile(r"(?<![&#])(?P<kind>(?<![A-Za-z0-9_])(?i:pull request|PR|issue)\s?)?(?P<glued>\w?)#(?P<number>\d+)(?!\d)")


# A match starts at most this many characters before its `#` ("pull request" + \s + \w).
_HASH_REF_REACH = 14


def plain_foreign_refs(facts: WeekFacts, text: str, week: set[int] | None = None) -> str:
    """`text` with every `#N` that is not a PR of the week (`week`: their numbers) written as plain text."""
    if "#" not in text:
        return text
    if week is None:
        week = {p.number for p in facts.prs}
    # What `_HASH_REF.sub` would do, but the regex (which has no literal to skip ahead
    # to) is started just before each `#` instead of at every character of the text:
    # a match starting earlier would need a `#` within its reach. Lookbehind and `\b`
    # still see the text before the start.
    out, pos = [], 0
    while (h := text.find("#", pos)) >= 0:
        m = _HASH_REF.search(text, max(pos, h - _HASH_REF_REACH))
        if m is None:
            break
        out.append(text[pos:m.start()])
        out.append(m[0] if int(m["number"]) in week else plain_ref(facts.catalog, m))
        pos = m.end()
    out.append(text[pos:])
    return "".join(out)


def plain_ref(cat: Catalog, m: re.Match) -> str:
    """A `_HASH_REF` match outside the week, as plain text: "PR 3055", "issue/PR 12"."""
    if m["kind"] and not m["glued"]:
        return f"{m['kind'].rstrip()} {m['number']}"
    glued = m["glued"]
    return glued + (" " if glued else "") + cat.t("cite.outside", number=m["number"])


def _without_foreign_refs(facts: WeekFacts, sections: Sections, card: Card) -> tuple[Sections, Card]:
    week = {p.number for p in facts.prs}

    def plain(text: str) -> str:
        return plain_foreign_refs(facts, text, week)

    sections.summary = plain(sections.summary)
    for item in (*sections.key_changes, *sections.trends, *sections.risks, *sections.recommendations):
        item.name, item.text = plain(item.name), plain(item.text)
    for row in sections.table:
        row.gist, row.key_contribution = plain(row.gist), plain(row.key_contribution)
    card.highlights = [plain(h) for h in card.highlights]
    card.risks = [plain(r) for r in card.risks]
    return sections, card


# --------------------------------------------------------------------------- pieces


def why_clause(
    cat: Catalog, pr: PullRequest, a: PRAnalysis, limit: int = 2, size_max: float = 2.0, used: set[str] | None = None,
    skip: frozenset[str] = frozenset(), fallback: bool = True,
) -> str:
    """Why a PR matters, from its strongest importance terms (size only when it is
    near the top of the repository's recent PRs). Codes in `used` (said already for
    an earlier PR) come last, so a list of changes does not repeat one reason. With no
    term to say, what its type does ("fixes a defect"), or "" without `fallback`."""
    parts: list[str] = []
    used = used if used is not None else set()
    terms = sorted(a.importance_reasons, key=lambda r: (r.code.split(":", 1)[0] in used, -r.points))
    for r in terms:
        code = r.code.split(":", 1)[0]
        if code == "type":
            continue
        if code == "size" and (r.points < 0.8 * size_max or pr.lines < LARGE_LINES):
            continue
        if code == "files" or code == "minor_only" or code in skip:
            continue
        text = _why(cat, code, pr, a, r.text)
        if text and text not in parts:
            parts.append(text)
            used.add(code)
        if len(parts) >= limit:
            break
    if len(parts) == 2 and cat.lang == "en":  # "touches the core path X and touches a public API": one "touches"
        verb, _, rest = parts[1].partition(" ")
        if rest and parts[0].split(" ", 1)[0] == verb:
            parts[1] = rest
    if not parts:
        if not fallback:
            return ""
        key = f"type_{a.type}"
        parts.append(cat.get("why", key) or cat.t("why.fallback", modules=cat.join(a.modules[:2]) or pr.title[:40]))
    return cat.t("why.join").join(parts)


# A change is called "one of the largest of recent weeks" only from this size on: in a quiet
# repository the largest recent change may be a 14-line fix.
LARGE_LINES = 100


def _why(cat: Catalog, code: str, pr: PullRequest, a: PRAnalysis, reason_text: str) -> str:
    if code == "core_path":
        return cat.t("why.core_path", path=reason_text.removeprefix("touches core path ").split(",")[0])
    if code == "size":  # the share of recent PRs it is larger than, from the reason ("larger than 82% of …")
        m = _LARGER_THAN.search(reason_text)
        return cat.t("why.size", lines=cat.num(pr.lines), pct=int(m.group(1)) if m else 80)
    if code == "modules":
        return cat.t("why.modules", count=len(a.modules))
    if code == "release":
        return cat.t("why.release", version=reason_text.removeprefix("releases "))
    if code == "linked_issue" and not reason_text.startswith("closes"):
        return cat.t("why.refers_issue")
    if code == "new_module":  # "adds package verl/foo" or "adds 6 source files", worded by the catalog
        m = re.match(r"adds (\d+) source files", reason_text)
        if m:
            return cat.t("why.new_files", count=int(m.group(1)))
        return cat.t("why.new_module", detail=reason_text.removeprefix("adds package "))
    return cat.get("why", code) or ""


_LARGER_THAN = re.compile(r"larger than (\d+)%")


# A security advisory a change names: GitHub's (a fix merged from its temporary private
# fork reads "Merge pull request from GHSA-xxxx-xxxx-xxxx") or a CVE.
_ADVISORY = re.compile(r"\b(?:GHSA(?:-[0-9a-z]{4}){3}|CVE-\d{4}-\d{4,7})\b", re.I)


def _advisories(facts: WeekFacts) -> list[str]:
    """The security advisories the period's changes fix, each with the change that names
    it: direct commits (an advisory's fix lands without a public PR) and PR titles."""
    cat = facts.catalog
    return list(dict.fromkeys(
        cat.t("summary.advisory_pr", advisory=a, number=n) if n is not None else
        cat.t("summary.advisory_commit", advisory=a, sha=sha) for a, n, sha in _advisory_fixes(facts)))


def _advisory_fixes(facts: WeekFacts) -> list[tuple[str, int | None, str]]:
    """(advisory id, PR number, "") of each fix by a PR, (id, None, commit) of each direct one."""
    out = [(_advisory_id(a), None, c.sha[:7]) for c in facts.direct_commits for a in _advisory_matches(c.subject)]
    return out + [(_advisory_id(a), p.number, "") for p in facts.prs if p.number not in facts.reverted_by
                  for a in _advisory_matches(p.title)]


def _advisory_matches(text: str) -> list[str]:
    return _ADVISORY.findall(text) if may_match(text, ("ghsa", "cve-")) else []


def advisory_ids(facts: WeekFacts) -> list[str]:
    """The security advisories the period fixes, as the databases write them."""
    return list(dict.fromkeys(a for a, _, _ in _advisory_fixes(facts)))


def release_notes(facts: WeekFacts) -> list[str]:
    """What the summary says of the period's releases and of its security fixes, in its language."""
    fixes = _advisories(facts)
    return _releases(facts) + ([_security(facts.catalog, fixes)] if fixes else [])


def _security(cat: Catalog, fixes: list[str]) -> str:
    return cat.t("summary.security_one" if len(fixes) == 1 else "summary.security", fixes=cat.join(fixes))


def _advisory_id(text: str) -> str:
    """As the databases write them: GHSA-m2qf-hxjv-5gpq, CVE-2023-30861."""
    return "GHSA" + text[4:].lower() if text[:4].upper() == "GHSA" else text.upper()


def _releases(facts: WeekFacts) -> list[str]:
    """The versions the period's live PRs released or set ("released 3.1.0 (#5640)"):
    what a downstream team pins to, however little the release PR itself changes."""
    cat = facts.catalog
    released: list[str] = []
    dev = ""  # where the branch ended: the last development version set
    for p in facts.prs:
        found = release_version(p.title)
        if found and p.number not in facts.reverted_by:
            if found[1]:
                dev = cat.t("summary.dev_item", version=found[0], number=p.number)
            else:
                released.append(cat.t("summary.version", version=found[0], number=p.number))
    out = []
    if released:
        out.append(period_t(facts, "summary.released", repository=facts.repository, versions=cat.join(released)))
    if dev:
        out.append(cat.t("summary.dev_version", versions=dev))
    return out


RISK_PRS_SHOWN = 5  # the PRs a risk's text lists before "and N more"


def _pr_ref(cat: Catalog, numbers: list[int], limit: int = 5, counted: bool = False) -> str:
    """The first `limit` PRs and how many more; `counted`: the sentence states the count
    already (zh then ends the list with "等", not "等5个PR" again)."""
    shown = cat.prs(numbers[:limit])
    if len(numbers) > limit:
        shown += cat.t("risk_text.more_counted" if counted else "risk_text.more", count=len(numbers) - limit,
                       total=len(numbers))
    return shown


def period_t(facts: WeekFacts, key: str, /, **kw) -> str:
    """The message `key` worded for the report's period (`Catalog.period`): a custom date
    range's counts are compared with earlier periods of the same length, not weeks."""
    return facts.catalog.period(key, facts.window.range_days, **kw)


def period_get(facts: WeekFacts, section: str, key: str) -> str | None:
    """The raw template `section.key` worded for the report's period (None if absent)."""
    return facts.catalog.period_template(f"{section}.{key}", facts.window.range_days)


def _delta(facts: WeekFacts) -> str:
    st = facts.stats
    wow = st["week_over_week"]["merged_prs"]
    base = st["baseline"]
    n = st["merged_prs"]
    if wow["previous"] is None:
        return period_t(facts, "summary.delta_none")
    if base["max_merged_prs"] == 0 and n:  # a first PR after quiet weeks is no record: say they were quiet
        return period_t(facts, "summary.delta_none_before" + "_one" * (base["weeks"] == 1), weeks=base["weeks"])
    if base["weeks"] >= 4 and base["max_merged_prs"] is not None and n > base["max_merged_prs"]:
        return period_t(facts, "summary.delta_record", weeks=base["weeks"] + 1)
    if wow["previous"] == 0 and n:  # not "1 more than the previous week's 0"
        return period_t(facts, "summary.delta_none_before_one")
    d = wow["delta"]
    if d > 0:
        return period_t(facts, "summary.delta_up", diff=d, previous=wow["previous"])
    if d < 0:
        return period_t(facts, "summary.delta_down", diff=-d, previous=wow["previous"])
    return period_t(facts, "summary.delta_same")


def summary(facts: WeekFacts) -> str:
    cat = facts.catalog
    st = facts.stats
    w = facts.window
    rng = cat.date_range(w.first_day, w.last_day)
    if not facts.prs:
        if st["direct_commits"]:  # merged all the same: not "nothing to review"
            fixes = _advisories(facts)
            return period_t(facts, "summary.only_direct", repository=facts.repository, range=rng, count=st["direct_commits"]) + (
                (" " if cat.lang == "en" else "") + _security(cat, fixes) if fixes else "")
        return period_t(facts, "summary.empty", repository=facts.repository, range=rng)
    direct = cat.t("summary.direct", count=st["direct_commits"]) if st["direct_commits"] else ""
    ft = st["first_time_contributors"]
    first_time = cat.t("summary.first_time", count=ft) if ft else ""
    parts = [
        period_t(
            facts,
            "summary.lead",
            range=rng,
            repository=facts.repository,
            count=st["merged_prs"],
            delta=_delta(facts),
            contributors=st["contributors"],
            first_time=first_time,
            added=cat.num(st["lines_added"]),
            deleted=cat.num(st["lines_deleted"]),
            direct=direct,
        )
    ]
    parts += release_notes(facts)
    # The week "concentrated on" areas of two PRs or more, the largest first, counting no PR
    # the week reverted, nor its revert (a pin and its revert changed nothing); one PR is no
    # concentration. The trends section may still write about more.
    undone = set(facts.reverted_by) | set(facts.reverted_by.values())
    counts = {t.key: sum(n not in undone for n in t.prs) for t in facts.report_themes}
    focus = sorted((t for t in facts.report_themes if counts[t.key] >= 2), key=lambda t: -t.count)[:3]
    areas = [cat.t("summary.focus_area", name=t.name, count=t.count) for t in focus]  # the count the trends give
    if areas:
        parts.append(period_t(facts, "summary.focus", areas=cat.join(areas)))
    ranked = facts.ranked_live()
    # A release PR is said above; a breaking one below. Docs, tests or CI alone (a routine
    # bump of a CI action) are notable only above the threshold, or when nothing else is.
    candidates = [p for p in ranked if not facts.analyses[p.number].breaking and not release_version(p.title)]
    notable = ([p for p in candidates if not _minor_only(facts.analyses[p.number])
                or facts.analyses[p.number].importance >= facts.settings.threshold] or candidates)[:3]
    breaking = [p for p in ranked if facts.analyses[p.number].breaking]
    used: set[str] = set()
    changes = [
        cat.t("summary.change", gist=facts.analyses[p.number].gist, number=p.number,
              why=why_clause(cat, p, facts.analyses[p.number], size_max=facts.settings.importance.size_max, used=used))
        for p in notable
    ]
    if changes:
        sep = "；" if cat.lang == "zh" else "; "
        parts.append(cat.t("summary.notable_one" if len(changes) == 1 else "summary.notable", changes=sep.join(changes)))
    if len(breaking) == 1:
        p = breaking[0]
        sig = compat_signals(p)
        consequence = cat.t("summary.breaking_default") if sig["default_change"] else cat.t("summary.breaking_consequence")
        end = "。" if cat.lang == "zh" else "."
        parts.append(cat.t("summary.breaking_one", number=p.number, gist=facts.analyses[p.number].gist, consequence=consequence) + end)
    elif breaking:  # each named with its gist, and whether it changes a default
        named = [cat.t("summary.breaking_item_default" if compat_signals(p)["default_change"] else "summary.breaking_item",
                       number=p.number, gist=facts.analyses[p.number].gist) for p in breaking[:4]]
        if len(breaking) > 4:
            named[-1] += cat.t("risk_text.more", count=len(breaking) - 4, total=len(breaking))
        parts.append(cat.t("summary.breaking_many", prs=cat.join(named)))
    top = next((r for r in facts.risks if r.kind != "breaking_change"), None)
    if top is not None:
        parts.append(cat.t("summary.top_risk", risk=f"{top.title}（{cat.prs(top.prs[:3])}）" if cat.lang == "zh" else f"{_in_sentence(top.title)} ({cat.prs(top.prs[:3])})"))
    return ("" if cat.lang == "zh" else " ").join(parts)


def _minor_only(a) -> bool:
    """Every file of the PR is docs, tests, CI or examples (or its type is docs/style)."""
    return any(r.code == "minor_only" for r in a.importance_reasons)


def _in_sentence(title: str) -> str:
    """A risk's English title inside a sentence: "very large PRs"; "CI churn" as it is."""
    return title[:1].lower() + title[1:] if title[1:2].islower() else title


def key_changes(facts: WeekFacts) -> list[Item]:
    cat = facts.catalog
    items = []
    ranked = facts.ranked_live()
    # 4–6 PRs: the top four always, then more while they stay above the threshold.
    chosen = ranked[:4] + [p for p in ranked[4:6] if facts.analyses[p.number].importance >= facts.settings.threshold]
    for p in chosen:
        a = facts.analyses[p.number]
        body = clean_body(p.body)
        sentences = []
        what = first_sentence(body.what, 240)
        # A sentence that leads into a list or code ("… such as:", "… crashes with:") says
        # nothing without it, and a word or two is a template's remnant ("accomplish."), not
        # a description. (What follows either is a list item or a template's hint as often
        # as a description.)
        if what and (what.rstrip().endswith((":", "：")) or len(what.split()) < 4 and len(what) < 20
                     or p.reverts and what.startswith(("Reverts ", "This reverts"))):  # said by the revert sentence
            what = ""
        if what and what.lower().rstrip(".") != a.gist.lower():
            sentences.append(_end(cat, cat.t("key_change.what", text=what.rstrip(". "))))
        sig = compat_signals(p)
        # What the compatibility sentence below says is not said twice.
        said = frozenset({"breaking"} if a.breaking else {"default_change"} if sig["default_change"] else ())
        released = release_version(p.title)
        if released:  # said by the release sentence below
            said |= {"release"}
        # a release is no "routine maintenance", whatever its type
        why = why_clause(cat, p, a, size_max=facts.settings.importance.size_max, skip=said, fallback=not released)
        if why:
            sentences.append(_end(cat, cat.t("key_change.why", why=why)))
        notes = migration_notes(p)
        if a.breaking:
            sentences.append(cat.t("key_change.breaking"))
        elif sig["default_change"]:
            sentences.append(cat.t("key_change.default_change"))
        elif sig["opt_in"]:
            sentences.append(cat.t("key_change.opt_in"))
        elif removed := _removals(cat, a.risks):  # configuration, modules, or both (#6162)
            sentences += removed
        elif release := release_version(p.title):
            sentences.append(cat.t("key_change.release", version=release[0]))
        elif removal := removal_kind(p.title):
            sentences.append(cat.t(f"key_change.{removal}"))
        elif says_kept_compatible(p):
            sentences.append(cat.t("key_change.compatible"))
        elif a.type == "fix" and not any(fk.is_config(f.path) for f in p.files):
            sentences.append(cat.t("key_change.compat_fix"))
        elif not notes and not p.reverts and not _minor_only(a):  # docs, tests, CI, a revert
            sentences.append(cat.t("key_change.no_compat"))
        if notes and (on_notes := _migration(cat, *notes, what)):
            sentences.append(on_notes)
        if p.reverts:
            sentences.append(_reverts(facts, p))
        if a.discussion_summary:
            sentences.append(_end(cat, cat.t("key_change.discussion", summary=a.discussion_summary)))
        items.append(Item(a.gist, ("" if cat.lang == "zh" else " ").join(sentences), [p.number]))
    return items


def _migration(cat: Catalog, title: str, notes: str, what: str) -> str:
    """The key change's sentence on the migration notes a PR's description gives: their
    first sentence, or where they are when that sentence leads into code or a list; ""
    when the key change quotes that sentence already (a "Summary of breaking changes")."""
    title = clip(inert_text(plain_markdown(title)).rstrip(":： "), 60, at_word=True)
    said = first_sentence(notes, 240).rstrip()
    if said and said == what:
        return ""
    if said and not said.endswith((":", "：")) and (len(said.split()) >= 4 or len(said) >= 12):
        return _end(cat, cat.t("key_change.migration_quote", title=title, text=said.rstrip(". ")))
    return cat.t("key_change.migration", title=title)


def _removals(cat: Catalog, risks: list[Risk]) -> list[str]:
    """The key change's sentences for what a PR's risks say it removes: configuration
    keys or files, and the modules the detector names."""
    out = []
    if any(r.kind == "config_change" and any("removed" in e or "renamed" in e for e in r.evidence) for r in risks):
        out.append(cat.t("key_change.config_removed"))
    modules, count, how = _old_modules(cat, risks)
    if count:
        key = "modules_removed" + ("_many" if count > 1 else "") if how == "removed" else "modules_moved"
        out.append(cat.t(f"key_change.{key}", modules=modules))
    return out


def _reverts(facts: WeekFacts, p: PullRequest) -> str:
    """What a revert undoes: a PR of the week is cited, an earlier one named by its title."""
    cat = facts.catalog
    if p.reverts in facts.analyses:  # a PR of the week, whether or not this revert was undone in turn
        return period_t(facts, "key_change.reverts", number=p.reverts, gist=facts.analyses[p.reverts].gist)
    quoted = reverted_title(p.title)  # up to the last quote: a revert of a revert quotes one
    title = p.reverts_title or (re.sub(r"\s*\(#\d+\)$", "", quoted) if quoted else "")
    if title:
        return cat.t("key_change.reverts_earlier", title=title)
    return cat.t("key_change.reverts_unnamed")


def _end(cat: Catalog, s: str) -> str:
    s = s.rstrip().rstrip(",;，；")  # a list item quoted alone ("… to the dedicated repo `verl-recipe`,")
    if s and s[-1] not in ".!?。！？…":  # a cut sentence ends in its ellipsis
        s += "。" if cat.lang == "zh" else "."
    return s


def trends(facts: WeekFacts) -> list[Item]:
    cat = facts.catalog
    items = []
    # Each PR's title in lower case, read once for all themes (the first PR of a number, as `facts.pr`).
    titles = {p.number: p.title.lower() for p in reversed(facts.prs)}
    for t in facts.report_themes:
        if t.history_weeks == 0:
            comparison = period_t(facts, "trends.compare_short")
        elif not t.baseline_mean:  # none in any earlier week: a count of 1 is no record
            comparison = period_t(facts, "trends.none_before" + "_one" * (t.history_weeks == 1), weeks=t.history_weeks)
        elif _is_record(t):
            comparison = period_t(facts, "trends.record", weeks=t.history_weeks + 1)
        else:
            comparison = period_t(facts, "trends.compare", previous=t.previous, weeks=t.history_weeks,
                                  mean=_mean(t.baseline_mean))
        examples: dict[str, str] = {}  # by gist: a change reverted and landed again is one example
        for n in sorted(t.prs, key=lambda n: (not _named_by(facts, t, n, titles), n in facts.reverted_by,
                                              -facts.analyses[n].importance)):
            gist = facts.analyses[n].gist
            if len(examples) < 3 and gist.lower() not in examples:
                examples[gist.lower()] = f"{gist}（#{n}）" if cat.lang == "zh" else f"{gist} (#{n})"
        head = period_t(facts, "trends.counts", count=t.count, comparison=comparison)
        sep = "，" if cat.lang == "zh" else ", "
        first = _end(cat, head + sep + cat.t("trends.examples", examples=cat.join(list(examples.values()))))
        items.append(Item(t.name, first + (" " if cat.lang == "en" else "") + _trend_outlook(facts, t), sorted(t.prs)))
    return items


def _named_by(facts: WeekFacts, t: Theme, number: int, titles: dict[int, str]) -> bool:
    """Whether the PR's title or tags name the theme (better examples than a PR that
    only touches a file in its folder). `titles`: the week's titles in lower case."""
    a = facts.analyses[number]
    kind, _, key = t.key.partition(":")
    if kind == "type":
        return a.type == key
    words = titles.get(number, "")
    return key in a.modules or _has_word(words, key) or _has_word(words, t.name.lower())


def _has_word(text: str, word: str) -> bool:
    """`word` in `text` as a word of its own: the CI theme is not named by "[recipe]"."""
    i = text.find(word)
    while i >= 0:
        end = i + len(word)
        if (i == 0 or not text[i - 1].isalnum()) and (end == len(text) or not text[end].isalnum()):
            return True
        i = text.find(word, i + 1)
    return False


def _mean(x: float) -> str:
    return f"{x:.1f}".rstrip("0").rstrip(".") if x else "0"


def _is_record(t: Theme) -> bool:
    """A theme's week written as "the most of any week in the last N" (a record of two
    PRs is no trend either)."""
    return (t.rank_in_history == 1 and t.history_weeks >= 4 and t.count >= 3 and t.count > max(t.previous, 0)
            and t.count > t.baseline_mean * 1.5)


_TYPE_OF_AREA = {"docs": "docs", "ci": "ci", "tests": "test", "test": "test"}


def _trend_outlook(facts: WeekFacts, t: Theme) -> str:
    cat = facts.catalog
    kind, _, key = t.key.partition(":")
    high = _is_record(t) or (t.history_weeks and t.count >= 1.5 * t.baseline_mean + 1)  # a record is no "steady stream"
    low = t.history_weeks and t.count < t.baseline_mean * 0.75
    if kind == "type":
        return period_get(facts, "trends", f"type_{key}") or cat.t("trends.steady")
    if t.count < 3 and t.baseline_mean < 1:  # a PR or two where there are usually none: no trend either way
        return cat.t("trends.occasional")
    if high:
        # Docs and CI are no feature to test together: their own outlook (as for a wave of that type).
        own = period_get(facts, "trends", f"type_{_TYPE_OF_AREA[key]}") if key in _TYPE_OF_AREA else None
        return own or (period_t(facts, "trends.discovered") if kind == "term" else cat.t("trends.up"))
    if low:
        return cat.t("trends.down")
    return cat.t("trends.steady")


def risk_title(cat: Catalog, r: Risk) -> str:
    return cat.get("risk_titles", r.kind) or r.kind.replace("_", " ")


_RENAMED = re.compile(r"^config key renamed (\S+) -> (\S+) in (\S+)$")
_REMOVED = re.compile(r"^config key removed: (\S+) \((\S+)\)$")
_REMOVED_FILE = re.compile(r"^removed config file (\S+)$")
_MOVED_FILE = re.compile(r"^config file renamed (\S+) -> (\S+)$")
_REMOVED_NAMED = re.compile(r"^config key removed \(title\): (\S+)$")
_DEFAULT_VALUE = re.compile(r"^config default changed: (\S+) in (\S+): (.*?) -> (.*)$")
_MODULE = re.compile(r"^module (?:removed: (\S+)|moved: (\S+) -> (\S+))$")
_MODULES_MORE = re.compile(r"^(\d+) more modules? removed or moved$")


def _modules_gone(risks: list[Risk]) -> tuple[list[re.Match], int]:
    """What `module_removed` risks name: each module's evidence, and how many more they count."""
    found, hidden = [], 0
    for r in risks:
        for e in r.evidence if r.kind == "module_removed" else ():
            if m := _MODULE.match(e):
                found.append(m)
            elif m := _MODULES_MORE.match(e):
                hidden += int(m[1])
    return found, hidden


def _old_modules(cat: Catalog, risks: list[Risk], limit: int = 3) -> tuple[str, int, str]:
    """The import paths `module_removed` risks say are gone, as a list; how many; and
    whether they were "moved", "removed" or "both"."""
    found, hidden = _modules_gone(risks)
    names = [m[1] or m[2] for m in found]
    count, more = len(names) + hidden, hidden + max(0, len(names) - limit)
    shown = (cat.t("list.sep").join(names[:limit]) + cat.t("risk_text.more_modules", count=more, total=count)
             if more else cat.join(names))
    moved, removed = any(m[2] for m in found), any(m[1] for m in found) or hidden > 0
    return shown, count, "both" if moved and removed else "moved" if moved else "removed"


def _per_pr(cat: Catalog, r: Risk, facts: WeekFacts, detail_of: Callable[[int], str]) -> str:
    """A risk's detail told per PR ("#6200: …; #6162: …") for its first three PRs, with
    how many more it has; its PRs' gists when none has a detail (a model's own evidence)."""
    sep = "；" if cat.lang == "zh" else "; "
    parts = []
    for n in r.prs[:3]:
        if text := detail_of(n):
            parts.append(cat.t("detail.of_pr", number=n, text=text) if len(r.prs) > 1 else text)
    if not parts:
        return _gists(cat, facts, r.prs)
    return sep.join(parts) + _more_prs(cat, r.prs)


def _more_prs(cat: Catalog, prs: list) -> str:
    """"; and 2 more PRs" after the details of a risk's first three PRs; only "; …" when
    the risk's PR list has counted the rest already (see `_counted_before`)."""
    if len(prs) <= 3:
        return ""
    if _counted_before(prs):
        return cat.t("risk_text.more_prs_again")
    return cat.t("risk_text.more_prs", count=len(prs) - 3, total=len(prs))


def _counted_before(prs: list) -> bool:
    """Whether a risk's text has said "and N more" of its PRs before its detail: a second
    count of the same PRs from another point ("#1 … #5 and 4 more: … (A, B, C and 6
    more)") reads as another set of PRs."""
    return len(prs) > RISK_PRS_SHOWN


def _config_detail(cat: Catalog, evidence: str) -> str:
    """A config key renamed or removed, or a config file deleted, as the reader is told."""
    if m := _RENAMED.match(evidence):
        return cat.t("detail.renamed", old=m[1], new=m[2], file=m[3])
    if m := _REMOVED.match(evidence):
        return cat.t("detail.removed_key", key=m[1], file=m[2])
    if m := _REMOVED_FILE.match(evidence):
        return cat.t("detail.removed_file", file=m[1])
    if m := _MOVED_FILE.match(evidence):
        return cat.t("detail.moved_file", old=m[1], new=m[2])
    if m := _REMOVED_NAMED.match(evidence):
        return cat.t("detail.removed_named", key=m[1])
    return ""


def _gists(cat: Catalog, facts: WeekFacts, numbers: list[int], limit: int = 3) -> str:
    """The gists of a risk's first PRs, and how many more it names ("A, B, C and 3
    more"): three gists alone read as all the PRs the list before them counts."""
    gists: list[str] = []
    told = 0  # the PRs the gists shown stand for (two PRs may share one: a cherry-pick)
    for n in numbers:
        gist = facts.analyses[n].gist if n in facts.analyses else None
        if gist is None:
            continue
        if gist not in gists:
            if len(gists) == limit:
                continue
            gists.append(gist)
        told += 1
    if told == len(numbers):
        return cat.join(gists)
    more = cat.t("risk_text.more_again") if _counted_before(numbers) else cat.t(
        "risk_text.more", count=len(numbers) - told, total=len(numbers))
    return cat.t("list.sep").join(gists) + more


def _first_changes(cat: Catalog, changes: list[str], limit: int) -> str:
    """The first `limit` of a PR's changes, and how many more it has."""
    more = len(changes) - limit
    return cat.t("list.sep").join(changes[:limit]) + (
        cat.t("risk_text.more_changes", count=more, total=len(changes)) if more > 0 else "")


def _own_evidence(facts: WeekFacts, n: int, r: Risk) -> list[str]:
    """The evidence PR `n` gave for a risk of `r`'s kind (the risk's own when it names
    that PR alone: a model's risk has no PR analysis behind it)."""
    own = facts.analyses[n].risks if n in facts.analyses else []
    return next((x.evidence for x in own if x.kind == r.kind), r.evidence if len(r.prs) == 1 else [])


def risk_detail(cat: Catalog, r: Risk, facts: WeekFacts) -> str:
    """The evidence of a risk, in the report's language, from the PRs it names."""
    prs = [p for p in map(facts.pr, r.prs) if p is not None]
    sep = "；" if cat.lang == "zh" else "; "
    if r.kind == "config_change":  # per PR: what it renamed or removed, the first few and how many more
        limit = 4 if len(r.prs) == 1 else 2

        def config_of(n: int) -> str:
            return _first_changes(cat, [d for d in map(partial(_config_detail, cat), _own_evidence(facts, n, r)) if d], limit)

        return _per_pr(cat, r, facts, config_of)
    if r.kind == "default_change":  # per PR: the values its configuration changes, else what it does
        values = {n: [m for e in _own_evidence(facts, n, r) if (m := _DEFAULT_VALUE.match(e))] for n in r.prs[:3]}
        if not any(values.values()):
            return _gists(cat, facts, r.prs)

        def defaults_of(n: int) -> str:
            if not values[n]:
                return facts.analyses[n].gist if n in facts.analyses else ""
            return _first_changes(cat, [cat.t("detail.default_value", key=m[1], file=m[2], old=m[3], new=m[4])
                                        for m in values[n]], 2)

        return _per_pr(cat, r, facts, defaults_of)
    if r.kind == "module_removed":  # per PR: its modules, or how many and two of them

        def modules_of(n: int) -> str:
            found, hidden = _modules_gone(facts.analyses[n].risks) if n in facts.analyses else ([], 0)
            if len(found) + hidden > 3:
                return cat.t("detail.modules_many", count=len(found) + hidden, modules=cat.join([m[1] or m[2] for m in found[:2]]))
            removed = [m[1] for m in found if m[1]]
            return cat.join([cat.t("detail.module_removed", module=cat.join(removed)) if removed else ""]
                            + [cat.t("detail.module_moved", old=m[2], new=m[3]) for m in found if m[2]])

        return _per_pr(cat, r, facts, modules_of)
    if r.kind == "core_path":
        core = tuple(facts.stats.get("core_paths", []))
        parts = []
        for p in prs[:3]:
            # The same matching as the detector (core paths may be globs), and its cache:
            # the core paths each file lies under.
            hits = [(f, core_matches(f.path, core)) for f in p.files]
            lines = sum(f.lines for f, under in hits if under)
            paths = sorted({c for _, under in hits for c in under})
            parts.append(cat.t("detail.core", number=p.number, lines=cat.num(lines), paths=cat.join(paths)))
        return sep.join(parts) + _more_prs(cat, prs)
    if r.kind == "large_change":
        return sep.join(cat.t("detail.large", number=p.number, lines=cat.num(p.lines), files=cat.num(len(p.files)))
                        for p in prs[:3]) + _more_prs(cat, prs)
    if r.kind == "dependency_change":
        files = sorted({f.path for p in prs for f in p.files if fk.is_dependency(f.path)})
        if files:
            more = len(files) - 3
            shown = cat.t("list.pr_sep").join(files[:3])
            return cat.t("detail.files", files=shown) + (cat.t("risk_text.more_files", count=more, total=len(files)) if more > 0 else "")
        return _gists(cat, facts, r.prs)
    if r.kind in ("version_mismatch", "unresolved_threads", "no_review"):
        return sep.join(e.rstrip(".") for e in r.evidence[:3])
    return _gists(cat, facts, r.prs)


def risk_text(cat: Catalog, r: Risk, facts: WeekFacts) -> str:
    template = period_get(facts, "risk_text", r.kind) or cat.t("risk_text.generic")
    prs = _pr_ref(cat, r.prs, RISK_PRS_SHOWN, counted="{count}" in template)
    are = "are" if len(r.prs) > 1 else "is"
    return template.format(prs=prs, detail=risk_detail(cat, r, facts), count=len(r.prs), are=are)


def table(facts: WeekFacts) -> list[TableRow]:
    rows = []
    for p in facts.ranked():
        a = facts.analyses[p.number]
        if a.importance >= facts.settings.threshold:
            gist = a.gist
            if p.number in facts.reverted_by:
                gist = facts.catalog.t("table.reverted", gist=gist, number=facts.reverted_by[p.number])
            rows.append(TableRow(p.number, gist, a.importance, table_contribution(facts, p, a), p.url))
    return rows


def table_contribution(facts: WeekFacts, p: PullRequest, a: PRAnalysis) -> str:
    """A table row's key contribution: the analysis's, unless it only repeats the gist in
    the cell beside it (a PR whose description states no change of its own), then what
    kind of change it is, where, how large, and why it ranks: "Fix in megatron, 56 lines;
    touches the core path verl/workers"."""
    cat = facts.catalog
    kind = cat.type_name(a.type)
    if a.key_contribution != cat.t("contribution.default", type=kind, text=a.gist):
        return a.key_contribution
    kind = cat.t("contribution.change") if a.type == "other" else kind[:1].upper() + kind[1:]
    lead = cat.t("contribution.lead_in", type=kind, modules=cat.join(a.modules[:2])) if a.modules else kind
    if p.lines_known and p.files:
        lead = cat.t("contribution.lead_lines", lead=lead, lines=cat.num(p.lines))
    said = frozenset({"size", "modules"} if len(a.modules) <= 2 else {"size"})  # the lead says them
    # (without a term of its own, no clause: the type's would say the lead again)
    why = why_clause(cat, p, a, size_max=facts.settings.importance.size_max, skip=said, fallback=False)
    return cat.t("contribution.facts", lead=lead, why=why) if why else lead


def recommendations(facts: WeekFacts) -> list[Item]:
    cat = facts.catalog
    fixes = _advisories(facts)
    security = [Item(cat.t("rec.security_name"), cat.t("rec.security", fixes=cat.join(fixes)))] if fixes else []
    if not facts.prs:
        if facts.stats["direct_commits"]:
            return security + [Item(cat.t("rec.direct_name"), period_t(facts, "rec.direct", count=facts.stats["direct_commits"]))]
        return [Item(period_t(facts, "rec.quiet_name"), period_t(facts, "rec.quiet"))]
    recs: list[tuple[int, Item]] = []
    kinds = {r.kind: r for r in facts.risks[:RISKS_SHOWN]}  # advice about a risk the reader is shown

    def add(priority: int, key: str, prs: list[int], title: str | None = None, then: str = "", counted: bool = False,
            **kw) -> None:
        """The advice `rec.KEY` (and the sentence `then`), named by `rec.TITLE_name`
        (default: the key's own); `counted`: it says how many PRs (`{count}`)."""
        prs = [n for n in prs if n not in facts.reverted_by]  # undone by the week's end: nothing to act on
        if counted:
            kw["count"] = len(prs)
        name = period_t(facts, f"rec.{title or key}_name", **kw)
        if not prs or any(i.name == name for _, i in recs):
            return
        text = period_t(facts, f"rec.{key}", prs=_pr_ref(cat, prs, 4, counted=counted), **kw)
        recs.append((priority, Item(name, text + then, prs[:6])))

    released = [(p.number, v[0]) for p in facts.ranked_live() if (v := release_version(p.title)) and not v[1]]
    if released:  # what downstream users pin to: read what changed, then move to it
        add(0, "upgrade", [n for n, _ in released], versions=cat.join([v for _, v in released]))
    breaking, config, default = kinds.get("breaking_change"), kinds.get("config_change"), kinds.get("default_change")
    # PRs whose description tells users what to change ("Migration Guide"), breaking or not.
    noted = [p.number for p in facts.ranked_live() if migration_notes(p)]
    if breaking or config or default or noted:
        prs = sorted({n for r in (breaking, config, default) if r for n in r.prs} | set(noted))
        add(0, "check_config", prs,
            then=cat.t("rec.follow_notes" + "_many" * (len(noted) > 1), prs=_pr_ref(cat, noted, 4)) if noted else "")
        # Renamed keys get the old-and-new list; otherwise what changes and how to keep the old.
        # Notes a PR gives already are to be carried over, not written anew.
        evidence = config.evidence if config else []
        renamed = any(e.startswith("config key renamed") or (e.startswith("title:") and "renam" in e.lower())
                      for e in evidence)
        moved = any(e.startswith("config file renamed") for e in evidence)  # files, not keys: their paths
        unnoted = [n for n in prs if n not in noted]
        if unnoted:
            add(1, "migration" if renamed else "migration_files" if moved else "migration_behaviour", unnoted,
                title="migration")
        else:
            add(1, "migration_link", noted, title="migration")
    if "module_removed" in kinds:
        modules, count, how = _old_modules(cat, [r for n in kinds["module_removed"].prs if n in facts.analyses
                                                 for r in facts.analyses[n].risks])
        if count:
            add(1, f"imports_{how}", kinds["module_removed"].prs, title="imports", modules=modules)
    for kind, key, prio in (("core_path", "regression", 2), ("large_change", "regression", 2), ("missing_tests", "tests", 3),
                            ("dependency_change", "deps", 3), ("version_mismatch", "versions", 3),
                            ("unresolved_threads", "unresolved", 4)):
        if kind in kinds:
            add(prio, key, kinds[kind].prs)
    if "ci_churn" in kinds:
        add(4, "ci", kinds["ci_churn"].prs, counted=True)
    if "config_churn" in kinds:
        add(4, "config_churn", kinds["config_churn"].prs, counted=True)
    for t in facts.themes:
        if t.count >= 2 and is_platform(t.key, facts.settings):
            add(2, "platform", t.prs, platform=t.name)
            break
    fixed = [p.number for p in facts.prs if facts.analyses[p.number].type == "fix" and p.number not in facts.reverted_by]
    if len(fixed) >= 5:
        add(5, "patch", fixed, counted=True)
    feats = [p for p in facts.ranked_live() if facts.analyses[p.number].type in ("feat", "perf")]
    if feats:
        a = facts.analyses[feats[0].number]
        add(5, "try", [feats[0].number], gist=a.gist, number=feats[0].number)
    if len(recs) < 4:
        add(6, "review", [p.number for p in facts.ranked_live()[:3]])
    recs.sort(key=lambda pi: pi[0])
    return (security + [i for _, i in recs])[:6]


CARD_LINE_MAX = 160  # characters of a card's highlight before its PR number


def card(facts: WeekFacts, sections: Sections) -> Card:
    cat = facts.catalog
    highlights = []
    for p in facts.ranked_live()[:3]:
        a = facts.analyses[p.number]
        # One line each, its PR number kept whatever the platform's limits cut
        line = clip(a.key_contribution, CARD_LINE_MAX, at_word=True)
        highlights.append(f"{line}（#{p.number}）" if cat.lang == "zh" else f"{line} (#{p.number})")
    if not highlights:
        highlights = [period_t(facts, "card.no_changes")]
    # The top risks, one line each; risks of the same PRs share a line ("Large changes in
    # core paths and very large PRs: #6710"), so three lines are three concerns.
    # (the PRs past the third are counted, not dropped: "… and 1 more" / "等4个PR")
    lines: dict[str, list[str]] = {}  # by the PRs it names
    for r in sorted(facts.risks, key=lambda r: SEVERITY_ORDER[r.severity]):
        key = _pr_ref(cat, r.prs, 3)
        if key not in lines and len(lines) == 3:
            continue
        titles = lines.setdefault(key, [])
        titles.append(_in_sentence(r.title) if titles and cat.lang == "en" else r.title)
    risks = [f"{cat.join(titles)}：{named}" if cat.lang == "zh" else f"{cat.join(titles)}: {named}"
             for named, titles in lines.items()]
    if not risks:
        risks = [period_t(facts, "card.no_risks")]
    w = facts.window
    title = cat.card_title(facts.repository, w.label, w.first_day, w.last_day)
    return Card(title=title, highlights=highlights, risks=risks, button=period_t(facts, "card.button"))
