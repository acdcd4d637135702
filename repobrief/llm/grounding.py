"""Grounding: what the model writes may cite only PRs of the week and state only
figures the data supports.

- Every `#N`, in a code span or not, must be a PR of the week or in
  `Grounds.extra_refs`: what the week's PRs revert or quote in their titles,
  and in a PR's own analysis the issues it links.
- A count (a number followed by "PRs", "个", "contributors", …) must equal a
  computed statistic; a count that names what it counts — PRs, contributors,
  first-time contributors, lines (added, deleted) — must equal a statistic of
  that kind ("4 PRs" is not files_changed = 4). Counts spelled out in words
  ("twenty-two PRs", "二十二个PR") are read whole; words it cannot read are
  refused.
- Any other figure must be a computed statistic, an importance score, or a
  number present in the PR data the model was given (a body's "40% faster").
  Dates, times, versions, week labels and numbers inside identifiers
  (`fp8`, `H100`, `use_v1`) are not figures.
- Importance stays within 0–10.

A check returns the violations as sentences that are fed back to the model in
the one retry, and recorded when the unit falls back.
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

_PR_REF = re.compile(r"#\s?(\d{1,7})(?!\d)")
_CODE = re.compile(r"`[^`\n]*`")
_URL = re.compile(r"https?://\S+")
_DATE = re.compile(
    r"(?<!\d)\d{4}[-/.]\d{1,2}[-/.]\d{1,2}(?!\d)|(?<![\d.])\d{1,2}[-/]\d{1,2}(?![\d.])|\d{4}\s*年(?:\s*\d{1,2}\s*月)?(?:\s*\d{1,2}\s*[日号])?"
    r"|\d{1,2}\s*月\s*\d{1,2}\s*[日号]?|(?<!\d)\d{1,2}:\d{2}(?::\d{2})?(?!\d)"
)
_VERSION = re.compile(
    r"(?<![A-Za-z0-9_.])[vV]?\d+(?:\.\d+){2,}[A-Za-z0-9_.+-]*|(?<![A-Za-z0-9_])[vV]\d+(?:\.\d+)*(?![A-Za-z0-9_])"
    r"|(?<![A-Za-z0-9_.])\d+(?:\.\d+)+(?:rc|a|b|post|dev)\d*(?![A-Za-z0-9_])"
)
_WEEK = re.compile(r"(?<![A-Za-z0-9])(?:\d{4}-?)?W\d{1,2}(?![0-9])|第\s*\d{1,2}\s*周|\bweek\s+\d{1,2}(?!\d|\s+(?:new\s+)?(?:PRs?|pull requests?|contributors?|authors?|commits?|lines?)\b)", re.I)
# a number not glued to ASCII letters or underscores (those are identifiers: fp8, H100,
# qwen2_5); CJK characters around a number do not make it an identifier ("共22个PR")
_NUMBER = re.compile(
    r"(?<![A-Za-z0-9_.\-/])(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?(\s*%|\s*[kK](?![A-Za-z])|\s*[x×倍](?![A-Za-z]))?(?![A-Za-z0-9_]|\.\d)"
)
_COUNT_NOUN = re.compile(
    r"^\s*(?:个|位|名|项|次|条|笔|处|行)|^\s*(?:new\s+)?(?:PRs?\b|pull requests?\b|contributors?\b|authors?\b|commits?\b|merged\b|changes\b|lines?\b)",
    re.I,
)
# What a count counts, when it says so: the text right after the number names the
# statistic it must equal (`Grounds.kinds`).
_COUNT_KIND = re.compile(
    r"\s*(?:"
    r"(?P<first_time>(?:new|first[- ]time)\s+(?:contributors?|authors?)\b|(?:位|名)\s*(?:新|首次)(?:贡献者|作者|开发者))"
    r"|(?P<prs>(?:new\s+|merged\s+)?(?:PRs?|pull\s+requests?)\b|个\s*(?:PR|拉取请求|合并请求))"
    r"|(?P<contributors>(?:contributors?|authors?)\b|(?:位|名)\s*(?:贡献者|作者|开发者))"
    r"|(?P<lines>lines?\b|行)"
    r")",
    re.I,
)
_ADDED = re.compile(r"add(?:ed|ing|itions?|s)?\b|insert(?:ed|ing|ions?|s)?\b|新增|增加|添加", re.I)
_DELETED = re.compile(r"delet(?:ed|ing|ions?|es?)\b|remov(?:ed|ing|es?)\b|删除|删减|移除|减少", re.I)
_CLAUSE_START = re.compile(r".*(?:[,;:，；：。、(（]|\d|\band\b|和|及)", re.I | re.S)
_WORD_UNITS = {
    "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10,
    "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15, "sixteen": 16,
    "seventeen": 17, "eighteen": 18, "nineteen": 19,
}
_WORD_TENS = {"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90}
_WORD = "(?:" + "|".join((*_WORD_UNITS, *_WORD_TENS, "zero", "hundreds?", "thousands?", "millions?", "dozens?")) + ")"
# a run of number words right before a count noun ("twenty-two PRs", "one hundred and five PRs")
_WORD_NUMBER = re.compile(
    rf"(?<![\w-])({_WORD}(?:[\s-]+(?:and[\s-]+)?{_WORD})*)(?=\s+(?:new\s+|first[- ]time\s+)?"
    r"(?:PRs?|pull requests?|contributors?|authors?|commits?|lines?)\b)",
    re.I,
)
_NOUN_AFTER = re.compile(r"\s*(?:new\s+|first[- ]time\s+)?[^\s,.;:，。；：]+")
_ZH_DIGITS = {"零": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9}
_ZH_COUNT = re.compile(r"([零一二两三四五六七八九十百千]{1,5})(?=\s*(?:个|位|名)\s*(?:新|首次)?\s*(?:PR|拉取请求|合并请求|贡献者|作者|开发者|提交))")


def _word_number(s: str) -> float:
    """"twenty-two" -> 22; NaN for words it cannot read (never equal to a statistic)."""
    words = [w for w in re.split(r"[\s-]+", s.lower()) if w]
    if len(words) == 1 and words[0] in _WORD_UNITS:
        return float(_WORD_UNITS[words[0]])
    if len(words) == 1 and words[0] in _WORD_TENS:
        return float(_WORD_TENS[words[0]])
    if len(words) == 2 and words[0] in _WORD_TENS and words[1] in _WORD_UNITS and _WORD_UNITS[words[1]] < 10:
        return float(_WORD_TENS[words[0]] + _WORD_UNITS[words[1]])
    return float("nan")


def _zh_number(s: str) -> float:
    """"二十二" -> 22; NaN for numerals it cannot read (never equal to a statistic)."""
    if "百" in s or "千" in s:
        return float("nan")
    if "十" in s:
        head, _, tail = s.partition("十")
        tens = _ZH_DIGITS.get(head, None) if head else 1
        ones = _ZH_DIGITS.get(tail, None) if tail else 0
        return float("nan") if tens is None or ones is None or "十" in tail else float(tens * 10 + ones)
    if len(s) == 1:
        return float(_ZH_DIGITS[s])
    return float("nan")


def _count_kind(text: str, start: int, end: int) -> str | None:
    """What the count at text[start:end] counts, when the words after it say so:
    prs, contributors, first_time, lines_added, lines_deleted or lines."""
    m = _COUNT_KIND.match(text, end)
    if not m:
        return None
    kind = m.lastgroup
    if kind != "lines":
        return kind
    # "lines added", "行新增" after it, or "adding", "新增" earlier in the same clause
    after = text[m.end() : m.end() + 16]
    before = text[max(0, start - 40) : start]
    clause = _CLAUSE_START.sub("", before, count=1) if _CLAUSE_START.match(before) else before
    for part in (re.match(r"\s*(?:(?:were|was|of code|代码)\s*)*([A-Za-z]+|[\u4e00-\u9fff]{1,2})", after), None):
        said = part.group(1) if part else clause
        added, deleted = bool(_ADDED.search(said)), bool(_DELETED.search(said))
        if added != deleted:
            return "lines_added" if added else "lines_deleted"
    return "lines"


@dataclass(slots=True)
class Figure:
    value: float
    decimals: int
    percent: bool
    count: bool
    text: str
    kind: str | None = None  # what a count says it counts (see `_count_kind`)


def _strip_non_figures(text: str) -> str:
    for rx in (_CODE, _URL, _WEEK, _DATE, _VERSION):
        text = rx.sub(" ", text)
    return _PR_REF.sub(" ", text)


def figures_in(text: str) -> list[Figure]:
    """The figures `text` states (see the module docstring for what is not one)."""
    out: list[Figure] = []
    cleaned = _strip_non_figures(text or "")
    for m in _NUMBER.finditer(cleaned):
        whole, frac, suffix = m.group(1), m.group(2) or "", (m.group(3) or "").strip()
        value = float(whole.replace(",", "") + frac)
        if suffix.lower() == "k":
            value *= 1000
        count = bool(_COUNT_NOUN.match(cleaned[m.end():])) and not frac and not suffix
        kind = _count_kind(cleaned, m.start(), m.end()) if count else None
        out.append(Figure(value, len(frac) - 1 if frac else 0, suffix == "%", count, m.group(0).strip(), kind))
    for rx, read in ((_WORD_NUMBER, _word_number), (_ZH_COUNT, _zh_number)):
        for m in rx.finditer(cleaned):
            kind = _count_kind(cleaned, m.start(), m.end())
            noun = _NOUN_AFTER.match(cleaned, m.end())
            out.append(Figure(read(m.group(1)), 0, False, True, cleaned[m.start() : noun.end() if noun else m.end()], kind))
    return out


def pr_refs(text: str) -> list[int]:
    """PR numbers cited as `#N`, code spans included (a reader sees them as citations); not those inside URLs."""
    return [int(n) for n in _PR_REF.findall(_URL.sub(" ", text or ""))]


def numbers_in_data(texts: Iterable[str]) -> set[float]:
    """Every number that appears in PR data (titles, bodies, diffs, discussion)."""
    found: set[float] = set()
    for t in texts:
        for m in re.finditer(r"\d+(?:,\d{3})*(?:\.\d+)?", t or ""):
            try:
                found.add(float(m.group(0).replace(",", "")))
            except ValueError:
                continue
    return found


def collect_numbers(obj, depth: int = 0, out: set[float] | None = None) -> set[float]:
    """All numbers inside a structure of dicts, lists and dataclasses (computed statistics)."""
    out = set() if out is None else out
    if depth > 8:
        return out
    if isinstance(obj, bool):
        return out
    if isinstance(obj, int | float):
        out.add(float(obj))
    elif isinstance(obj, dict):
        for v in obj.values():
            collect_numbers(v, depth + 1, out)
    elif isinstance(obj, list | tuple | set | frozenset):
        for v in obj:
            collect_numbers(v, depth + 1, out)
    elif dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        for f in dataclasses.fields(obj):
            collect_numbers(getattr(obj, f.name, None), depth + 1, out)
    return out


_KIND_NAMES = {
    "prs": "pull requests",
    "contributors": "contributors",
    "first_time": "first-time contributors",
    "lines_added": "lines added",
    "lines_deleted": "lines deleted",
    "lines": "lines changed",
}


@dataclass
class Grounds:
    """What a unit's text may cite and state."""

    week_prs: set[int]
    counts: set[float] = field(default_factory=set)  # computed statistics
    figures: set[float] = field(default_factory=set)  # plus scores and numbers from the PR data
    extra_refs: set[int] = field(default_factory=set)  # linked issues, reverted PRs
    # per kind of count (prs, contributors, first_time, lines_added, lines_deleted, lines):
    # the statistics a count of that kind may equal; a kind not listed is checked against `counts`
    kinds: dict[str, set[float]] = field(default_factory=dict)
    span: str = "this week"  # how the retry messages name the report's span (`prompts.period_span`)

    def _matches(self, fig: Figure, pool: set[float]) -> bool:
        if math.isnan(fig.value):  # number words that could not be read
            return False
        candidates = [fig.value]
        if fig.percent:
            candidates.append(fig.value / 100)  # "40%" for a ratio of 0.4
        for v in candidates:
            for p in pool:
                if abs(p - v) < 1e-9:
                    return True
                if fig.decimals or v != int(v) or fig.percent:
                    # "8.9" for 8.94, "40%" for 0.4012: the stated precision decides
                    places = fig.decimals + (2 if fig.percent and v is not fig.value else 0)
                    if round(p, places) == round(v, places):
                        return True
        return False

    def check_text(self, where: str, text: str) -> list[str]:
        problems: list[str] = []
        for n in pr_refs(text):
            if n not in self.week_prs and n not in self.extra_refs:
                problems.append(f"{where} cites #{n}, which is not a pull request of this week")
        for fig in figures_in(text):
            if fig.count and fig.kind in self.kinds:
                if not self._matches(fig, self.kinds[fig.kind]):
                    noun = _KIND_NAMES[fig.kind]
                    problems.append(f"{where} states the count {fig.text!r}, which is not the computed number of {noun}")
            elif fig.count:
                if not self._matches(fig, self.counts):
                    problems.append(f"{where} states the count {fig.text!r}, which is not a computed statistic")
            elif not (self._matches(fig, self.counts) or self._matches(fig, self.figures) or fig.value in self.week_prs):
                problems.append(f"{where} states the figure {fig.text!r}, which is not in the data or the statistics")
        return problems

    def check_prs(self, where: str, prs: Iterable[int]) -> list[str]:
        return [f"{where} lists PR {n}, which is not a pull request of {self.span}" for n in prs if n not in self.week_prs]
