"""How real projects write PR titles and bodies, and how to read them.

Titles: `[BREAKING][mod1, mod2] type: description` (verl), conventional commits
`type(scope)!: description` with `BREAKING CHANGE:` footers, bracket tags
`[Bugfix][Kernel] description` (vLLM), and plain titles (`fix typo in docs`).
Bodies: PR templates are mostly boilerplate; we drop HTML comments, checklists,
empty template headings and quoted instructions, and keep the "what / why"
and the test evidence.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import accumulate
from typing import TypeVar

from .models import PullRequest, inert_text

# Canonical change types and the words that mean them.
TYPE_ALIASES = {
    "feat": "feat", "feature": "feat", "features": "feat", "add": "feat", "new": "feat", "enhancement": "feat",
    "fix": "fix", "bugfix": "fix", "bug": "fix", "hotfix": "fix", "fixes": "fix", "fixed": "fix",
    "perf": "perf", "performance": "perf", "optim": "perf", "optimize": "perf", "speedup": "perf",
    "refactor": "refactor", "refactoring": "refactor", "cleanup": "refactor",
    "docs": "docs", "doc": "docs", "documentation": "docs",
    "test": "test", "tests": "test", "testing": "test",
    "ci": "ci", "build": "build", "deps": "deps", "dependencies": "deps",
    "chore": "chore", "misc": "chore", "style": "style", "lint": "style", "revert": "revert",
}
TYPES = ("feat", "fix", "perf", "refactor", "docs", "test", "ci", "build", "deps", "chore", "style", "revert", "other")

# A first title tag that is a type, not a module (`[misc]` is a module in verl).
_TAG_TYPE = {p: t for p, t in TYPE_ALIASES.items()
             if t in ("fix", "feat", "perf", "docs", "ci", "test", "refactor", "style") or p == "chore"}
_LEADING_TAGS = re.compile(r"^\s*((?:\[[^\]]{1,80}\]\s*)+)")
_TAG = re.compile(r"\[([^\]]+)\]")
_CONVENTIONAL = re.compile(r"^(?P<type>[A-Za-z]+)(?:\((?P<scope>[^)]{1,60})\))?(?P<bang>!)?\s*:\s*(?P<desc>.+)$")
# A PR or issue number: GitHub's are far below 10**9; longer digit runs are not references
# (and would not fit the store's or the JSON encoder's 64-bit integers).
NUMBER = r"(\d{1,9})(?!\d)"
# Matched at the title's last "(#": searched for, the pattern was tried at every character.
_PR_SUFFIX = re.compile(r"\(#" + NUMBER + r"\)\s*$")
_TAG_SEP = re.compile(r"[,/|]")  # between the modules of one tag or scope
# A title tag or a label that says "breaking": `[BREAKING]`, `breaking-change`, `breaking changes`.
BREAKING_TAG = re.compile(r"^breaking(?:[ _-]?changes?)?$", re.IGNORECASE)
# Words at the start of a plain title that tell its type.
_PLAIN_TYPE_WORDS = [
    # the project's own linters and formatters ("Add pre-commit config for flake8", "Fix style
    # issues on master using Black"): no feature or fix a user gets
    (re.compile(r"^(?!.*\b(?:compatib\w*|plugin|support\s+for|crash\w*)\b)"
                r"(?:add|adds|added|use|apply|run|enable|configure|set ?up|update|fix|fixes|format|reformat)\b.{0,40}?"
                r"\b(?:pre-commit|flake8|(?:using\s+|with\s+|by\s+)black|black\s+(?:config\w*|formatting|hook)|isort|pylint|ruff"
                r"|codespell|pyupgrade|prettier|linters?|linting|lint\s+(?:errors|issues|warnings)"
                r"|style\s+(?:issues|checks?|errors))\b", re.I), "style"),
    (re.compile(r"^(?:fix|fixes|fixed|fixing|correct|resolve|repair|handle)\b", re.I), "fix"),
    (re.compile(r"^(?:add|adds|added|support|introduce|implement|enable|allow|new)\b", re.I), "feat"),
    (re.compile(r"^(?:update|bump|upgrade|pin)\b.*\b(?:dependenc|requirement|version|deps)\b", re.I), "deps"),
    (re.compile(r"^(?:refactor|clean ?up|simplify|restructure|move|rename|remove|drop|deprecate)\b", re.I), "refactor"),
    (re.compile(r"^(?:speed ?up|optimi[sz]e|faster|reduce (?:memory|latency|time))\b", re.I), "perf"),
    (re.compile(r"^(?:docs?|document|typo)\b", re.I), "docs"),
    (re.compile(r"^(?:test|tests|add tests?)\b", re.I), "test"),
    (re.compile(r"^revert\b", re.I), "revert"),
    (re.compile(r"^(?:release|start version|bump version)\b", re.I), "chore"),
]


@dataclass(slots=True, frozen=True)  # shared by `parse_title`'s cache: read only
class ParsedTitle:
    description: str
    tags: tuple[str, ...] = ()  # module-like tags, lower-case
    type: str | None = None  # canonical type when the title says it
    breaking: bool = False
    scope: str | None = None
    pr_number: int | None = None


@lru_cache(maxsize=1 << 12)  # a title is read by the classifier, removal_kind and release_version
def parse_title(title: str) -> ParsedTitle:
    """The parts of a PR title (tags, type, breaking mark, description). Cached: the
    result is shared, and frozen."""
    t = title.strip()
    pr_number = None
    i = t.rfind("(#")
    m = _PR_SUFFIX.match(t, i) if i >= 0 else None
    if m:
        pr_number = int(m.group(1))
        t = t[:i].rstrip()
    tags: list[str] = []
    breaking = False
    ptype: str | None = None
    m = _LEADING_TAGS.match(t)
    if m:
        for raw in _TAG.findall(m.group(1)):
            for part in _TAG_SEP.split(raw):
                p = part.strip().lower()
                if not p:
                    continue
                if BREAKING_TAG.match(p):
                    breaking = True
                elif p in _TAG_TYPE and ptype is None and not tags:
                    ptype = _TAG_TYPE[p]  # vLLM style `[Bugfix][Kernel]`, verl's `[chore] Break the loop …`
                else:
                    tags.append(p)
        t = t[m.end():].strip()
    scope = None
    m = _CONVENTIONAL.match(t)
    if m and m.group("type").lower() in TYPE_ALIASES:
        ptype = TYPE_ALIASES[m.group("type").lower()]
        scope = m.group("scope")
        if m.group("bang"):
            breaking = True
        if scope:
            for part in _TAG_SEP.split(scope):
                if part.strip() and part.strip().lower() not in tags:
                    tags.append(part.strip().lower())
        t = m.group("desc").strip()
    elif ptype is None:
        for rx, ty in _PLAIN_TYPE_WORDS:
            if rx.search(t):
                ptype = ty
                break
    if t.lower().startswith("[breaking]"):
        breaking = True
        t = t[10:].strip()
    return ParsedTitle(description=t or title.strip(), tags=tuple(tags), type=ptype, breaking=breaking, scope=scope,
                       pr_number=pr_number)


# A release PR's title, after its tags and type: "release version 3.1.0", "Release 2.0.0rc1",
# "bump version to v0.5.0", "Bump version number to 1.1.dev", "version bumped to v0.4.1.dev".
_RELEASE = re.compile(
    r"^(?:release:\s*)?(?:release|(?:bump(?:ed)?(?: up)?|update)(?: the)? version(?: number)?(?: to)?|version bumped to)\s+"
    r"(?:version\s+)?v?(\d+(?:\.\d+){0,3}(?:[.-]?(?:post|dev|rc|a|b)\d*)*)(?=\s*$|\s+and\s)",
    re.I,
)


_REMOVAL = re.compile(r"^(?:(remov|drop|delet)|(deprecat))\w*\b(?!.{0,40}\b(?:unused|dead|redundant|duplicat\w*|debug|stale|"
                      r"useless|unnecessary|typos?|prints?|logs?|comments?|whitespace|imports?)\b)", re.I)


# A title that takes away what users run with, whatever its type or tags: "Remove
# `--eager-loader/--lazy-loader` options", "drop support for Python 3.8", "Drop end of life
# python versions", "bump the minimum Python to 3.9" (flask marks none of these breaking;
# verl's `!` and [BREAKING] are read from the title itself).
_TAKES_AWAY = re.compile(
    r"^(?:remov|drop|delet)\w*\b(?:(?!\b(?:unused|dead|redundant|duplicat\w*|debug|stale|useless|unnecessary|internal"
    r"|private|tests?|temp\w*|tmp|print\w*|statements?|logs?|logging|warnings?|comments?|flake8|pylint|ruff|mypy|lint\w*"
    r"|pre-commit|black|isort|tox)\b).){0,60}?\b(?:options?|flags?|(?:cli\s+)?arguments|parameters?"
    r"|config(?:uration)?\s+(?:keys?|options?)|settings?|commands?|python\s*(?:\d+(?:\.\d+)*(?![\d.])|versions?|support)"
    r"|support\s+for\s+python)\b"
    r"(?!\s+(?:in|from|of|for)\s+(?:the\s+)?(?:tests?|testing|ci|examples?|docs?|scripts?|makefile|e2e\w*)\b)"
    r"|^(?:bump|raise|increase|require|set)\w*\b.{0,30}?\b(?:minimum|min|required)\s+(?:supported\s+)?python\b",
    re.I,
)


@lru_cache(maxsize=1 << 11)
def takes_away(title: str) -> bool:
    """Whether a PR's title says it removes options, commands or supported Python versions
    users rely on (a breaking change however it is labelled)."""
    return _TAKES_AWAY.match(parse_title(title).description) is not None


@lru_cache(maxsize=1 << 11)  # asked by the composer and the risks for the same titles
def removal_kind(title: str) -> str | None:
    """"removal" for a PR whose title removes or drops something ("remove mindspeedllm
    backend support"), "deprecation" for one that deprecates it; None otherwise, and
    for clean-ups nobody relies on ("remove unused imports")."""
    m = _REMOVAL.match(parse_title(title).description)
    if m is None:
        return None
    return "removal" if m.group(1) else "deprecation"


@lru_cache(maxsize=1 << 11)
def release_version(title: str) -> tuple[str, bool] | None:
    """(version, whether it is a development version) of a PR that releases or sets the
    project's version, from its title; None for any other PR."""
    m = _RELEASE.match(parse_title(title).description)
    if m is None:
        return None
    version = m.group(1)
    return version, "dev" in version.lower()


# A revert, as git and GitHub's Revert button write it: the title quotes the reverted one
# (`Revert "feat: x (#5)"`, a squash adding its own "(#N)"), the body names the PR
# ("Reverts owner/repo#5") or, from `git revert`, the commit.
# Matched on the title without its trailing spaces: two runs of `\s*` side by side
# backtracked over each other, quadratic in a title padded with spaces.
_REVERT_TITLE = re.compile(r'^Revert "(.*)"(?:\s*\(#\d+\))?$')
_REVERTS_PR = re.compile(r"^Reverts ([\w.-]+)/([\w.-]+)#" + NUMBER + r"\b", re.M)
REVERTS_SHA = re.compile(r"This reverts commit ([0-9a-f]{7,40})")


def reverted_title(title: str) -> str | None:
    """The title a revert quotes (`Revert "feat: x (#5)"` -> `feat: x (#5)`); None when
    `title` is not a revert's."""
    m = _REVERT_TITLE.match(title.rstrip())
    return m.group(1) if m else None


def reverts_named(body: str, repository: str | None) -> int | None:
    """The PR a revert's body names ("Reverts owner/repo#N", GitHub's Revert button) in
    this repository. A repository is recognised by its name, not its owner: verl's
    reverts name both `volcengine/verl` and, after the move, `verl-project/verl`. A PR of
    another repository (`Reverts sgl-project/sglang#12`) is not one of ours: None."""
    ours = (repository or "").rpartition("/")[2].lower()
    for m in _REVERTS_PR.finditer(body):
        if not ours or m.group(2).lower() == ours:
            return int(m.group(3))
    return None


# --------------------------------------------------------------------------- bodies

_HTML_COMMENT = re.compile(r"<!--.*?(?:-->|$)", re.S)
# A heading's hashes are followed by a space (CommonMark): "#7144, which this PR is stacked
# on" at the start of a wrapped line is text, not a heading.
_HEADING_OPEN = re.compile(r"\s{0,3}(#{1,6})[^\S\n]")


def heading(line: str) -> tuple[int, str] | None:
    r"""(level, text) of a heading line, without its closing hashes and spaces; None for
    any other line. Read without a regex for the text: one with a lazy text group before
    the trailing `#*\s*` backtracked for minutes on a heading line of a few thousand
    spaces, and bodies are anyone's text."""
    m = _HEADING_OPEN.match(line)
    if m is None or len(line) == m.end():  # hashes and one space are no heading yet
        return None
    return len(m.group(1)), line[m.end():].strip().rstrip("#").rstrip()


T = TypeVar("T")


def _cached_when_short(fn: Callable[[str], T], limit: int = 200) -> Callable[[str], T]:
    """`fn`, cached for texts of at most `limit` characters: a template's headings and
    section names recur in PR after PR; a long text (anyone's) would stay in the cache."""
    cached = lru_cache(maxsize=1 << 11)(fn)
    return lambda text: cached(text) if len(text) <= limit else fn(text)


_heading_cached = _cached_when_short(heading)

_HEADING_START = re.compile(r"#{1,6}(?:\s|$)")
# A `BREAKING CHANGE:` footer line, searched in "\n" + body (see _SHAPING_LINE).
_BREAKING_FOOTER = re.compile(r"\nBREAKING[ -]CHANGES?\s*:\s*(.+)")

WHAT_HEADINGS = ("what does this pr do", "what this pr does", "summary", "description", "what", "changes", "overview", "purpose", "what changed", "motivation", "why", "background", "design & code changes", "design and code changes", "api and usage example")
# A section of test evidence: "Test plan", "How was this tested?", and headings that name
# tests, checks or measured results anywhere ("Accuracy test", "Unit tests (no GPU)",
# "Experimental validation", "GSM8K eval acc", "Bench results"), not a path or an identifier
# (`cpu_unit_tests`, `verl/experimental/…`).
_TEST_HEADING = re.compile(r"(?<![\w/.`-])(?:tests?|testing|tested|validat\w*|verif\w*|benchmarks?|bench|experiments?|"
                           r"results?|eval|evaluation|accuracy|reproducer)(?![\w/.`-])")
DROP_HEADINGS = ("checklist before starting", "checklist before submitting", "checklist", "pr checklist", "before submitting", "related issues")
# A section telling users what to change: "Migration Guide", "Breaking / migration notes",
# "Upgrade notes", "Migration from legacy TIS", "⚠️ Breaking", "API Changes (Breaking)";
# not a plan or a story that mentions one ("Phase 2: migration", "Upgrade vLLM to 0.9",
# "Migration of the CI to hosted runners", "Non-breaking change", "Fix breaking test").
_BREAKING_HEADING = re.compile(r"^[\W_]*breaking\b|(?<!non-)(?<!non )\bbreaking (?:changes?|api|notes?)\b|\(breaking\)"
                               r"|不兼容|破坏性")
_MIGRATION_HEADING = re.compile(r"^[\W_]*(?:migrations?|upgrad(?:e|es|ing))[\W_]*$|^[\W_]*(?:migrat|upgrad)\w* (?:from|to)\b"
                                r"|\b(?:migration|upgrade|upgrading) (?:guide|notes?|steps|required|path|instructions)\b"
                                r"|how to (?:migrate|upgrade)|迁移|升级说明|升级指南|" + _BREAKING_HEADING.pattern)
# What such a section says when there is nothing to change: a short first sentence ("None",
# "No, this only adds an option.", "N/A", "This PR does not break anything", "Fully
# backward compatible", "无"), with no instruction in it ("Does not read `sched` any more:
# rename it …") and none after it ("No API change. The `sched` key is renamed …").
_NOTHING = re.compile(r"[\W_]*(?:(?:no(?:ne|pe|thing)?|n/?a)(?![^\W_])(?!\s+longer)|not (?:applicable|needed|required|that)\b"
                      r"|non-breaking|(?:this (?:pr|change) )?(?:does not|doesn't|has no|introduces no|is not|is fully)\b"
                      r"|(?:fully )?backwards? compatible|there (?:are|is) no\b(?!\s+longer)|无|没有|不涉及|否)", re.I)
_INSTRUCTION = re.compile(r"\b(?:but|except|however|unless|must|rename\w*|instead|replace\w*|re-?export|convert"
                          r"|run|use|set|pass|update)\b", re.I)
_STRONG_INSTRUCTION = re.compile(r"\b(?:must|rename[sd]?|instead|replaced?|re-?export|no longer|migrate)\b", re.I)
# A question's bare answer ("Does this PR introduce a breaking change?" "Yes").
_BARE_ANSWER = re.compile(r"[\W_]*(?:yes|no|y|n|是|否)[\W_]*", re.I)
# A "Compatibility" or "Backward compatibility" section is as often a reassurance ("The
# default remains `zigzag`, so existing models see no difference") as a notice: it is
# taken as migration notes only when it says what breaks or what to do ("No backward
# compatibility with legacy TIS: configs with `tis_imp_ratio_cap` will raise", "import
# from `verl.workers.rollout` instead"), not when that is denied ("no breaking changes").
_COMPATIBILITY_HEADING = re.compile(r"^[\W_]*(?:backwards?[- ])?compatibility\b|^[\W_]*兼容性")  # not "4. MTP compatibility updates"
_BREAKAGE = re.compile(r"\b(?:breaking|breaks|no longer|no backwards?[- ]compatib\w*|not (?:backwards?[- ])?compatible"
                       r"|incompatib\w*|will (?:now )?(?:raise|fail|error)|must|instead|renamed?|replaced?|removed|migrate)\b"
                       r"|不兼容|需要修改|必须", re.I)
# A negation right before a match ("not fully compatible", "does not change the default",
# "no breaking changes"): the match is denied, not said.
_NEGATED = re.compile(r"(?:n't|\bnot|\bno longer|\bnever|\bno|\bbreaks?|\bbroke|\bwithout)\s+(?:\w+\s+)?$", re.I)


def may_match(text: str, words: tuple[str, ...]) -> bool:
    """Whether a case-blind regex, every match of which holds one of `words` (in lower
    case), may match `text`: False when the text holds none of them. A case-blind
    regex is tried at every character of a text, a substring test is a fast scan; but
    such a regex also finds "s" in "ſ" and "k" in the Kelvin sign, which `lower()`
    leaves as they are, so a text that is not ASCII is always a maybe."""
    if not text.isascii():
        return True
    low = text.lower()
    return any(map(low.__contains__, words))


def affirmed(rx: re.Pattern[str], text: str, start: int = 0) -> bool:
    """Whether `rx` matches `text` from `start` other than right after a negation."""
    return any(not _NEGATED.search(text, max(0, m.start() - 20), m.start()) for m in rx.finditer(text, start))


@dataclass(slots=True, eq=False)  # hashed by identity: clean_body() caches instances
class CleanBody:
    text: str  # the whole body without boilerplate
    what: str  # the "what / why" part
    tests: str  # test evidence, if any
    breaking_note: str | None = None
    checked: list[str] = field(default_factory=list)
    issue_refs: list[int] = field(default_factory=list)
    closes: list[int] = field(default_factory=list)  # those of `issue_refs` a closing keyword names ("Fixes #12")
    headings: list[str] = field(default_factory=list)
    # The section telling users what to change: (its heading as written, its text with
    # the subsections under it), when the body has one that says more than "None".
    migration: tuple[str, str] | None = None
    breaking_section: str | None = None  # what a "Breaking changes" section with notes says first

    @property
    def declared_breaking(self) -> str | None:
        """What the body says breaks: its `BREAKING CHANGE:` footer, else its breaking section."""
        return self.breaking_note or self.breaking_section

    @property
    def has_test_evidence(self) -> bool:
        # Test sections hold whole logs; a head with enough text says yes (collapsing the
        # rest cannot make the whole shorter).
        return _collapsed_len(self.tests[:100]) >= 15 or (len(self.tests) > 100 and _collapsed_len(self.tests) >= 15)


_SPACES = re.compile(r"\s+")


def _collapsed_len(text: str) -> int:
    return len(_SPACES.sub(" ", text).strip())


# An issue reference is a `#123` (or an issues URL) preceded by a linking word; looking
# back from each `#` is much cheaper than scanning long bodies with the alternation.
# Searched one at a time: each starts with a literal the regex engine skips to fast,
# where their alternation was tried at every character.
_HASH_NUMBER = re.compile("#" + NUMBER)
_ISSUE_URL = re.compile("/issues/" + NUMBER)
_REF_BEFORE = re.compile(r"(?:close[sd]?|fix(?:e[sd])?|resolve[sd]?|related(?: to)?|refs?|see|issues?|rfc)\W{0,3}(?:[\w.-]+/[\w.-]+)?$", re.I)
_CLOSING = re.compile(r"(?<!\w)(?:close[sd]?|fix(?:e[sd])?|resolve[sd]?)\b", re.I)  # GitHub's closing keywords


def issue_refs(body: str) -> tuple[list[int], list[int]]:
    """The issues `body` refers to, and those of them a closing keyword names ("Fixes #12")."""
    refs = {int(n) for n in _ISSUE_URL.findall(body)} if "/issues/" in body else set()
    closes: set[int] = set()
    for m in _HASH_NUMBER.finditer(body) if "#" in body else ():
        before = _REF_BEFORE.search(body, max(0, m.start() - 60), m.start())
        if before:
            refs.add(int(m.group(1)))
            if _CLOSING.match(body, before.start()):
                closes.add(int(m.group(1)))
    return sorted(refs), sorted(closes)


# The lines that shape a body: code fences, headings and checklist items. Only these
# are looked at one by one; the text between them is handled a section at a time by
# regexes (bodies run to thousands of lines, and a Python loop per line costs more
# than everything else done with a PR). Each pattern starts at a line's "\n" (the
# text gets one in front), which the regex engine finds fast; `^` in MULTILINE mode
# would be tried at every character.
# A match says which kind of line it is; a checklist item's parts come with it, and
# only a heading is read again (`heading`: headings are few, and reading a heading's
# text at every line was what made one combined pattern slow).
_SHAPING_LINE = re.compile(
    r"\n(?P<line>(?P<indent>[^\S\n]*)(?:(?P<fence>```)|(?P<hash>#)"
    r"|[-*+][^\S\n]*\[(?P<mark>[ xX])\][^\S\n]*(?P<item>[^\n]*))[^\n]*)"
)
# A list item's marker where a line starts (after its indent).
_LIST_ITEM_START = r"[-*+][^\S\n]|\d+[.)][^\S\n]"
# The lines a checklist item wraps onto: up to a blank line or a line that starts a block
# (a list item, a heading, a fence, a quote, a table row).
_ITEM_CONTINUATION = re.compile(r"(?:[^\S\n]*(?!" + _LIST_ITEM_START + r"|#|```|>|\|)\S[^\n]*(?:\n|\Z))*")
# Lines `_substantive` drops: template placeholders (`...`, `N/A`, quoted instructions), and
# the trailers a squash merge appends (`Co-authored-by: …`), which are no description.
_PLACEHOLDER_LINE = re.compile(
    r"\n[^\S\n]*(?:(?i:>[^\n]*|\.\.\.|n/?a|none|todo|tbd|-+|#[^\S\n]*add code snippet[^\n]*"
    r"|(?:co-authored|signed-off|reviewed|acked|tested|reported|suggested)-by:[^\n]*)[^\S\n]*"
    r"|- If this PR[^\n]*|- `\{[^\n]*)(?=\n|\Z)"
)
# A template's hint quoted and wrapped over lines that continue its paragraph without a
# `>` (a "lazy continuation" in Markdown: "> Add a concise overview of what this PR aims
# to achieve or\naccomplish." is one quote, not a quote and the sentence "accomplish.").
# A hint tells the author what to write; a quote an author writes into the template's
# marker ("> Fix the position_id shape mismatch:\n`process_position_ids` expects …")
# is text (`_AUTHOR_QUOTE`).
_HINT_WORDS = (r"(?i:add|demonstrate|for changes|please|provide|describe|explain|reference|include|paste|make sure"
               r"|summari[sz]e|briefly|link|mention|fill|list|give|write|state|tell|what|why|how|if)\b")
_HINT_PARAGRAPH = re.compile(
    r"\n[^\S\n]*>[^\S\n]*" + _HINT_WORDS + r"[^\n]*"
    r"(?:\n(?![^\S\n]*(?:>|```|" + _HEADING_START.pattern + "|" + _LIST_ITEM_START + r"))[^\S\n]*\S[^\n]*)+")
# The marker of any other quoted line: the text is the author's (verl authors write their
# description into the template's "> " line), kept without it. Hints, GitHub's alert
# markers ("> [!IMPORTANT]") and empty quote lines keep theirs, and go as placeholders.
_AUTHOR_QUOTE = re.compile(r"\n[^\S\n]*>(?![^\S\n]*(?:" + _HINT_WORDS + r"|\[!|\n|$))[^\S\n]?")
# A code fence pair with nothing left inside (a template's "# Add code snippet" block).
# Other fences stay: the code they hold is no prose to quote (`iter_paragraphs` skips it).
_EMPTY_FENCE_PAIR = re.compile(r"\n[^\S\n]*```[^\n`]*(?:\n[^\S\n]*)*\n[^\S\n]*```[^\S\n]*(?=\n|\Z)")
_BLANK_LINES = re.compile(r"\n\n\n+")
_EMPTY_FENCES = re.compile(r"(```\w*\s*)*")


@lru_cache(maxsize=1024)
def clean_body(body: str, max_chars: int = 200_000) -> CleanBody:
    """Strip template boilerplate from a PR body and find the parts that matter.
    Cached: the engine, the detectors and the composer all read the same bodies, all
    while one week is built; a week rarely holds a thousand PRs, and every entry keeps
    a body's text (2,048 entries held ≈ 25 MB of a long backfill's workers)."""
    body = (body or "")[:max_chars]
    body = _HTML_COMMENT.sub("", body).replace("\r\n", "\n")
    # Each section is (heading, pieces of its text); a piece is a run of whole lines.
    sections: list[tuple[str, list[str]]] = [("", [])]
    marks: list[tuple[int, str]] = [(0, "")]  # each section's heading level and text as written
    checked: list[str] = []
    in_code = test_plan = False  # test_plan: the section is headed as tests (its checklist stays)
    pos = 0
    for m in _SHAPING_LINE.finditer("\n" + body):  # positions are one past the body's
        if m["fence"] is not None:
            in_code = not in_code
            continue  # a fence is text of its section
        if in_code:
            continue
        title = None
        if m["hash"] is not None:
            line = m["line"]
            h = _heading_cached(line) if len(m["indent"]) <= 3 else None
            if h is None:
                continue
            title = h[1]
            marks.append(h)
        elif "[" not in m["line"][:12] or test_plan:
            continue  # no item; or one of a test plan ("- [x] Verified on 8 GPUs: …"): its evidence
        start = m.start()  # the line's first character in `body`
        if start > pos:
            sections[-1][1].append(body[pos:start - 1])
        pos = m.end()  # past the line's newline in `body`
        if title is not None:
            name = title.strip("*_:?！？ ").lower()
            sections.append((name, []))
            test_plan = _section_kind(name)[0]
            continue
        # a checklist item's wrapped lines go with it ("- [x] Add … when new\ncommit is pushed")
        if pos < len(body) and (wrapped := _ITEM_CONTINUATION.match(body, pos)):
            pos = wrapped.end()
        if m["mark"] in "xX":
            checked.append(m["item"].strip())
    if pos <= len(body):
        sections[-1][1].append(body[pos:])
    # Checklists are dropped before the line-by-line pass: they are long.
    contents = [(name, _substantive_cached("\n".join(pieces)) if name not in DROP_HEADINGS else "")
                for name, pieces in sections]
    text, what, tests, headings = sort_sections(contents, [level for level, _ in marks])
    footer = _BREAKING_FOOTER.search("\n" + body) if "BREAKING" in body else None
    refs, closes = issue_refs(body)
    notes = (_migration_notes(sections, contents, marks) if len(contents) > 1 else None) or _labelled_notes(contents)
    # A "Breaking changes" section that says what breaks declares it as a footer does.
    section = (inert_text(_opening(notes[1]))[:200] or notes[0]
               if notes is not None and _BREAKING_HEADING.search(notes[0].lower()) else None)
    return CleanBody(
        text=text,
        what=what,
        tests=tests,
        breaking_note=inert_text(footer.group(1).strip()) if footer else None,
        checked=checked,
        issue_refs=refs,
        closes=closes,
        headings=headings,
        migration=notes,
        breaking_section=section,
    )


def migration_notes(pr: PullRequest) -> tuple[str, str] | None:
    """The migration notes a PR's description gives (`CleanBody.migration`); none for a
    revert, which copies the description of what it undoes."""
    return None if pr.reverts else clean_body(pr.body or "").migration


def _name_kind(name: str) -> tuple[bool, bool, bool]:
    """Whether a section's name or a label (lowered) heads tests (`_TEST_HEADING`), a
    migration (`_MIGRATION_HEADING`) or compatibility (`_COMPATIBILITY_HEADING`)."""
    return (_TEST_HEADING.search(name) is not None, _MIGRATION_HEADING.search(name) is not None,
            _COMPATIBILITY_HEADING.search(name) is not None)


_section_kind = _cached_when_short(_name_kind)


def _migration_notes(sections: list[tuple[str, list[str]]], contents: list[tuple[str, str]],
                     marks: list[tuple[int, str]]) -> tuple[str, str] | None:
    """The first section whose heading names a migration, an upgrade or a breaking change
    and that says more than "None" (or names compatibility and says what breaks, see
    `_COMPATIBILITY_HEADING`): its heading as written and its text, with the
    subsections under it (a "Migration Guide" made of `### Example` sections); a
    "nothing changes" sentence before real instructions is left out."""
    for i, (name, content) in enumerate(contents):
        if not name:
            continue
        _, migration, compatibility = _section_kind(name)
        if not (migration or compatibility):
            continue
        if not content and "\n".join(sections[i][1]).strip():
            continue  # answered with a placeholder ("None", "> N/A"): the sections under it are not its text
        level, parts = marks[i][0], [content] if content else []
        for j in range(i + 1, len(contents)):
            if marks[j][0] <= level:
                break
            if contents[j][1]:
                parts += [f"{'#' * marks[j][0]} {marks[j][1]}", contents[j][1]]
        notes = _telling("\n\n".join(parts), marks[i][1], compat=not migration)
        if notes is not None:
            return marks[i][1], notes
    return None


def _telling(notes: str, title: str, *, compat: bool) -> str | None:
    """`notes`, under a heading or label `title` that names a migration (`compat`: names
    compatibility), when they tell users something: a compatibility section must say what
    breaks; a migration section must say more than "None" or "No" to its question ("Any
    breaking change?"), and a "nothing changes" sentence before real instructions goes."""
    if compat:
        return notes if affirmed(_BREAKAGE, notes) else None
    first = _opening(notes)
    if not notes or title.rstrip("*_ ").endswith(("?", "？")) and _BARE_ANSWER.fullmatch(first):
        return None
    if _NOTHING.match(first) and len(first.split()) <= 10 and not _INSTRUCTION.search(first):
        rest = notes[notes.find(first) + len(first):] if first in notes else ""
        if not _STRONG_INSTRUCTION.search(rest):
            return None
        notes = rest.lstrip(" .;:\n")
    return notes


# A bold label that heads what follows in place of a heading: alone on its line
# ("**Migration Guide:**", then its lines up to the next such label), or before the text it
# heads on the same line ("**Migration required**: all callers must …", then the lines of its
# paragraph). A sentence in bold ("**No breaking API changes.** The generator …") is no label.
_LABEL_LINE = re.compile(r"[^\S\n]*(\*\*|__)([^*_\n]{3,60}?)(?:[:：]\1|\1[^\S\n]*[:：])[^\S\n]*(\S[^\n]*)")
# A line that may be such a label (the words a migration or compatibility label holds):
# only these are read one by one. Searched in "\n" + text, as `_SHAPING_LINE`.
_LABEL_CANDIDATE = re.compile(r"\n([^\S\n]*(?:\*\*|__)[^\n]*?(?i:migrat|breaking|upgrad|compatib|迁移|升级|兼容|破坏)[^\n]*)")


def _labelled_notes(contents: list[tuple[str, str]]) -> tuple[str, str] | None:
    """Migration notes under a bold label (`_LABEL_LINE`, `_BOLD_LABEL`), in a description
    whose headings name none: its label as written and its text, accepted as a heading's
    (`_telling`). Each candidate's text is read from its own lines on (a description full
    of labels that say nothing is still read once)."""
    for _, content in contents:
        if "**" not in content and "__" not in content:
            continue
        found = [m.start() for m in _LABEL_CANDIDATE.finditer("\n" + content)]  # each at its line's start
        if not found:
            continue
        lines = content.split("\n")
        starts = list(accumulate((len(line) + 1 for line in lines[:-1]), initial=0))
        fenced, open_fence = set(), False  # the lines inside code blocks
        for k, line in enumerate(lines):
            if line.lstrip().startswith("```"):
                open_fence = not open_fence
            elif open_fence:
                fenced.add(k)
        at = [bisect_left(starts, pos) for pos in found]  # the candidates' line numbers
        for c, k in enumerate(at):
            stop = at[c + 1] if c + 1 < len(at) else len(lines)  # a label's text ends at the next candidate
            if k in fenced:
                continue
            line = lines[k].strip()
            alone = _BOLD_LABEL.match(line) is not None
            inline = None if alone else _LABEL_LINE.fullmatch(lines[k])
            if not alone and inline is None:
                continue
            label = (inline[2] if inline else line).strip("*_:： ")
            _, migration, compatibility = _section_kind(label.lower())
            if not ((migration and affirmed(_MIGRATION_HEADING, label.lower())) or compatibility):
                continue
            end = k + 1
            if inline is None:  # alone on its line: its lines, up to the next label alone on its line
                while end < stop and not _BOLD_LABEL.match(lines[end].strip()):
                    end += 1
                notes = "\n".join(lines[k + 1:end]).strip()
            else:  # its line and the rest of its paragraph
                while end < stop and lines[end].strip():
                    end += 1
                notes = "\n".join([inline[3], *lines[k + 1:end]]).strip()
            told = _telling(notes, label, compat=not migration)
            if told is not None:
                return label, told
    return None


def _opening(text: str) -> str:
    """The first sentence of `text`'s first paragraph, as written (a bold answer alone,
    "__No__", is no paragraph for `iter_paragraphs`: its line then)."""
    return _SENTENCE_END.split(next(iter_paragraphs(text), "") or text.split("\n", 1)[0], 1)[0]


def sort_sections(sections: Iterable[tuple[str, str]], levels: Sequence[int]) -> tuple[str, str, str, list[str]]:
    """(text, what, tests, headings) of a body from its (heading, content) sections,
    in order, with their heading levels (0 for the text before the first heading);
    empty contents are left out. A section
    under a test heading is test evidence too ("### Test" then "#### sync", "#### async")."""
    kept: list[str] = []
    what: list[str] = []
    tests: list[str] = []
    headings: list[str] = []
    tested: list[tuple[int, bool]] = []  # the enclosing sections: level, and whether a test heading is among them
    for i, (heading, content) in enumerate(sections):
        level = levels[i]
        while tested and tested[-1][0] >= level:
            tested.pop()
        test = _section_kind(heading)[0] or bool(tested and tested[-1][1])
        tested.append((level, test))
        if not content:
            continue
        if heading:
            headings.append(heading)
            kept.append(f"## {heading}")
        kept.append(content)
        if test:  # "What this PR does and how it was tested": both
            tests.append(content)
        if not heading or heading.startswith(WHAT_HEADINGS):
            what.append(content)
    return "\n\n".join(kept).strip(), "\n\n".join(what).strip(), "\n\n".join(tests).strip(), headings


def _substantive(text: str) -> str:
    """A section's text without placeholder lines, trailing spaces and runs of blank lines."""
    if not text.strip():
        return ""
    text = "\n" + text
    if ">" in text:
        text = _AUTHOR_QUOTE.sub("\n", _HINT_PARAGRAPH.sub("", text))
    text = _PLACEHOLDER_LINE.sub("", text)
    if "```" in text:
        text = _EMPTY_FENCE_PAIR.sub("", text)
    text = "\n".join([line.rstrip() for line in text.split("\n")])
    if "\n\n\n" in text:
        text = _BLANK_LINES.sub("\n\n", text)
    text = text.strip()
    # A lone empty code fence pair or a template placeholder is not content.
    return "" if not text or text.startswith("```") and _EMPTY_FENCES.fullmatch(text) else text


# A template's sections left as they were ("> Demonstrate how the API changes if any, …")
# recur in PR after PR: in verl, 3,000 of the 8,800 sections read.
_substantive_cached = _cached_when_short(_substantive, 400)


_LIST_ITEM = re.compile(r"^(?:[-*+]|\d+[.)])\s")
_LIST_MARK = re.compile(r"^(?:[-*+]|\d+[.)])\s+")


# A bold line that names what follows ("**Summary**", "__Key changes:__", "**What it fixes:**"),
# not a sentence ("**Fix the deadlock in FSDP with many nodes**").
_BOLD_LABEL = re.compile(r"(?=.{3,66}$)(\*\*|__)(?:[^*_\s]+(?: [^*_\s]+){0,3}(?<![.!?。])|[^*_\n]{1,60}:)\1:?$")  # ≤ 4 words


def iter_paragraphs(text: str) -> Iterator[str]:
    """Paragraphs with hard-wrapped lines joined (list items and headings stay apart),
    one at a time: `first_sentence` stops at the first good one."""
    cur: list[str] = []
    in_code = False
    for raw in text.split("\n"):
        s = raw.strip()
        if s.startswith("```"):
            in_code = not in_code
            if cur:
                yield " ".join(cur)
                cur = []
            continue
        if in_code:
            continue
        label = s[:2] in ("**", "__") and _BOLD_LABEL.match(s)  # "**Summary**" on its own line: a heading
        apart = s.startswith(("|", ">")) or (s[:1] == "#" and _HEADING_START.match(s) is not None)
        if not s or label or apart or (s[0] in "-*+0123456789" and _LIST_ITEM.match(s)):
            if cur:
                yield " ".join(cur)
                cur = []
            if s and not label and not apart:
                cur = [_LIST_MARK.sub("", s)]
            continue
        cur.append(s)
    if cur:
        yield " ".join(cur)


_LINKISH = re.compile(r"https?://\S+|\b(?:RFC|issue|fixes|closes|resolves|related)\b\s*:?\s*#?\d*", re.I)
_LINKISH_WORDS = ("http", "rfc", "issue", "fixes", "closes", "resolves", "related")  # one is in every match
_NON_WORD = re.compile(r"\W+")


# A code span opens with at most 32 backticks (spans use one to three): a run of
# thousands, in a title of anyone's writing, was tried as an opener of every length down
# to the one that closed, quadratic (240,000 took 4.5 s).
_CODE_SPAN = re.compile(r"(`{1,32})[^`]*?\1")
# A link's text holds at most one level of brackets ("[[Bug] Fix the loader](…)", an issue's
# title) and its URL none (a URL writes %5B): "[[[[…" or "[a]([a]([a](…" without a `]` or
# `)` made every `[` scan to the end of the text, quadratic in a long title or paragraph.
# A URL may hold balanced
# parentheses, as CommonMark allows ("[the guide](https://en.wikipedia.org/wiki/Foo_(bar))"
# had left "the guide)"); one that opens a parenthesis it does not close is no link.
_MD_IMAGE_OR_LINK = re.compile(r"!?\[((?:[^\[\]]|\[[^\[\]]*\])*)\](?:\((?:[^()\s\[]|\([^()\s\[]*\))*(?:\s+\"[^\"]*\")?\)|\[[^\[\]]*\])")
_MD_AUTOLINK = re.compile(r"<(https?://[^>\s]+)>")
# Emphasis opens after a space or an opening bracket or quote (as CommonMark's
# left-flanking rule), so `a*b` and `src/**/*.py` are not emphasis; underscores close
# it only before a space or punctuation that ends a phrase, so identifiers written
# without backticks (`__init__.py`, `snake_case`) stay as they are. A span is at most
# 400 characters: each opener of "**upgrade (**upgrade (…" (a title of anyone's writing)
# scanned to the end of the text for a closer, quadratic (44,000 characters took 3.6 s).
_MD_EMPHASIS = re.compile(
    r"(?<![^\s(\[\"'“])(\*\*\*|\*\*|~~|\*)(?=[^\s*])(.{1,400}?)(?<=[^\s\\])\1(?![\w*])"
    r"|(?<![^\s(\[\"'“])(__|_)(?=[^\s_])([^_]+?)(?<=[^\s\\])\3(?=[\s,;:!?)\]\"'”]|$)"
)
_HTML_TAG = re.compile(
    r"</?(a|abbr|b|br|center|code|del|details|div|em|font|h[1-6]|hr|i|img|ins|kbd|li|mark|ol|p|pre|s|small|span|"
    r"strike|strong|sub|summary|sup|table|td|th|tr|u|ul|script|style|iframe|noscript)\b[^<>]*>",
    re.I,
)
# GitHub shows neither these elements nor their content (a review comment's `<script>…</script>`).
_HIDDEN_ELEMENT = re.compile(r"<(script|style)\b[^<>]*>.*?</\1\s*>", re.I | re.S)
_SPACING_TAGS = {"br", "div", "h1", "h2", "h3", "h4", "h5", "h6", "hr", "li", "p", "td", "th", "tr"}  # read as a space
_MD_ESCAPE = re.compile(r"\\([\\`*_{}\[\]()#+\-.!<>~|])")
_SPACE_RUN = re.compile(r"[ \t]{2,}")


# Emphasis around a code span alone (**`delta_sharded`**), and a link whose text holds one
# ([`verl-recipe`](https://…)): the spans are cut out before emphasis and links are looked
# for, which would leave their markers.
_EMPHASIZED_CODE = re.compile(r"(?<![\w*])(\*{1,3}|_{1,2})(`+)([^`]+?)\2\1(?![\w*])")
_LINKED_CODE = re.compile(r"!?\[([^\[\]\n`]*`[^\[\]\n]*)\]\([^)\s]*(?:\s+\"[^\"]*\")?\)")  # linear: no `[` or ` before the first `


def plain_markdown(text: str) -> str:
    """`text` as a reader of the rendered Markdown sees it: links and images reduced to
    their text, emphasis markers and inline HTML tags removed, escapes resolved. Code
    spans stay as written (the report shows them as code)."""
    if "`" in text:
        if "*`" in text or "_`" in text:
            text = _EMPHASIZED_CODE.sub(r"\2\3\2", text)
        if "`](" in text:
            text = _LINKED_CODE.sub(r"\1", text)
    parts = []
    pos = 0
    for m in _CODE_SPAN.finditer(text):
        parts.append(_plain_prose(text[pos:m.start()]))
        parts.append(m.group(0))
        pos = m.end()
    parts.append(_plain_prose(text[pos:]))
    out = "".join(parts)
    return (_SPACE_RUN.sub(" ", out) if "  " in out or "\t" in out else out).strip()


# Each pattern is tried only on text holding the character it starts with: most
# sentences have no HTML, links or escapes, and a regex without a literal first
# character is tried at every position.
def _plain_prose(text: str) -> str:
    if "<" in text:
        text = _HIDDEN_ELEMENT.sub("", text)
        text = _HTML_TAG.sub(lambda m: " " if m.group(1).lower() in _SPACING_TAGS else "", text)
        text = _MD_AUTOLINK.sub(r"\1", text)
    if "[" in text:
        text = _MD_IMAGE_OR_LINK.sub(r"\1", text)
    if "*" in text or "_" in text or "~" in text:
        for _ in range(3):  # nested emphasis: **_x_**
            text, changed = _MD_EMPHASIS.subn(lambda m: m.group(2) if m.group(1) else m.group(4), text)
            if not changed:
                break
    return _MD_ESCAPE.sub(r"\1", text) if "\\" in text else text


def _too_short(para: str) -> bool:
    """Fewer than 12 word characters once links and issue references are left out."""
    # Most paragraphs have 12 word characters in their first words: counting a head cut
    # at a space is enough then (no link or reference ends differently in the head than
    # in the whole, so the head never counts more than the whole would).
    cut = para.find(" ", 40)
    if cut > 0 and _word_chars(para[:cut]) >= 12:
        return False
    return _word_chars(para) < 12


def _word_chars(text: str) -> int:
    if may_match(text, _LINKISH_WORDS):
        text = _LINKISH.sub("", text)
    return len(_NON_WORD.sub("", text))


_SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s")


def sentences(text: str, limit: int = 220) -> Iterator[str]:
    """The sentences of `text`'s real paragraphs (not a bare link, issue reference,
    image or badge), in order, as plain text (`plain_markdown`, `inert_text`), one at a
    time. Of each paragraph only the first `limit * 4` characters are read: the
    Markdown patterns backtrack on long runs of unclosed markers, and a caller keeps
    a sentence or a few of at most `limit` characters anyway."""
    for para in iter_paragraphs(text):
        if _too_short(para):
            continue
        plain = plain_markdown(para[: limit * 4])
        # an image, a badge or HTML alone: the next paragraph says more (text that had no
        # Markdown to take out has been counted already)
        if plain != para and _too_short(plain):
            continue
        para = plain
        start = 0
        while True:  # searched one at a time: most callers stop at the first
            m = _SENTENCE_END.search(para, start)
            if s := inert_text(para[start:m.start() if m else len(para)].strip()):
                yield s
            if m is None:
                break
            start = m.end()


_CJK = re.compile(r"[\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff00-\uffef]")


def clip(text: str, limit: int, *, at_word: bool = False) -> str:
    """`text`, or its first `limit - 1` characters and "…" (`at_word`: cut at the last
    space before them — at the limit in Chinese text that has no space near it —
    without a dangling comma or colon, and before a parenthesis or code span the cut
    would leave open when that keeps half of it)."""
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    if at_word:
        space = cut.rfind(" ")
        if space >= limit // 2 or (space > 0 and not _CJK.search(cut, space)):  # Chinese has few spaces: cut at the limit
            cut = cut[:space]
        opened = max(cut.rfind("(") if cut.count("(") > cut.count(")") else -1,
                     cut.rfind("`") if cut.count("`") % 2 else -1)
        if opened >= limit // 2:
            cut = cut[:opened]
        return cut.rstrip(",;: (") + "…"
    return cut.rstrip() + "…"


def first_sentence(text: str, limit: int = 220) -> str:
    """The first real sentence of `text` (`sentences`), at most `limit` characters (cut
    between words, not inside a parenthesis it opens)."""
    return clip(next(sentences(text, limit), ""), limit, at_word=True)
