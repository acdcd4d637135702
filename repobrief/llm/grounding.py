"""Grounding: what the model writes may cite only PRs of the week and state only
figures the data supports.

- Every `#N` must be a PR of the week (or, in a PR's own analysis, an issue the
  PR links).
- A count (a number followed by "PRs", "个", "contributors", …) must equal a
  computed statistic.
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
_WEEK = re.compile(r"(?<![A-Za-z0-9])(?:\d{4}-?)?W\d{1,2}(?![0-9])|第\s*\d{1,2}\s*周|\bweek\s+\d{1,2}(?!\d)", re.I)
# a number not glued to ASCII letters or underscores (those are identifiers: fp8, H100,
# qwen2_5); CJK characters around a number do not make it an identifier ("共22个PR")
_NUMBER = re.compile(
    r"(?<![A-Za-z0-9_.\-/])(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?(\s*%|\s*[kK](?![A-Za-z])|\s*[x×倍](?![A-Za-z]))?(?![A-Za-z0-9_]|\.\d)"
)
_COUNT_NOUN = re.compile(
    r"^\s*(?:个|位|名|项|次|条|笔|处)|^\s*(?:new\s+)?(?:PRs?\b|pull requests?\b|contributors?\b|authors?\b|commits?\b|merged\b|changes\b)",
    re.I,
)
_WORD_NUMBERS = {
    "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10,
    "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15, "sixteen": 16,
    "seventeen": 17, "eighteen": 18, "nineteen": 19, "twenty": 20,
}
_WORD_COUNT = re.compile(
    r"\b(" + "|".join(_WORD_NUMBERS) + r")\s+(?:new\s+)?(?:PRs|pull requests|contributors|authors|commits)\b", re.I
)
_ZH_DIGITS = {"零": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9}
_ZH_COUNT = re.compile(r"([零一二两三四五六七八九十]{1,3})\s*(?:个|位|名)\s*(?:PR|拉取请求|贡献者|提交|新贡献者)")


def _zh_number(s: str) -> int | None:
    if "十" in s:
        head, _, tail = s.partition("十")
        tens = _ZH_DIGITS.get(head, None) if head else 1
        ones = _ZH_DIGITS.get(tail, None) if tail else 0
        return None if tens is None or ones is None else tens * 10 + ones
    if len(s) == 1:
        return _ZH_DIGITS.get(s)
    return None


@dataclass(slots=True)
class Figure:
    value: float
    decimals: int
    percent: bool
    count: bool
    text: str


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
        out.append(Figure(value, len(frac) - 1 if frac else 0, suffix == "%", count, m.group(0).strip()))
    for m in _WORD_COUNT.finditer(cleaned):
        out.append(Figure(float(_WORD_NUMBERS[m.group(1).lower()]), 0, False, True, m.group(0)))
    for m in _ZH_COUNT.finditer(cleaned):
        n = _zh_number(m.group(1))
        if n is not None:
            out.append(Figure(float(n), 0, False, True, m.group(0)))
    return out


def pr_refs(text: str) -> list[int]:
    """PR numbers cited as `#N` (outside code spans and URLs)."""
    return [int(n) for n in _PR_REF.findall(_URL.sub(" ", _CODE.sub(" ", text or "")))]


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


@dataclass
class Grounds:
    """What a unit's text may cite and state."""

    week_prs: set[int]
    counts: set[float] = field(default_factory=set)  # computed statistics
    figures: set[float] = field(default_factory=set)  # plus scores and numbers from the PR data
    extra_refs: set[int] = field(default_factory=set)  # linked issues (PR analysis only)

    def _matches(self, fig: Figure, pool: set[float]) -> bool:
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
            if fig.count:
                if not self._matches(fig, self.counts):
                    problems.append(f"{where} states the count {fig.text!r}, which is not a computed statistic")
            elif not (self._matches(fig, self.counts) or self._matches(fig, self.figures) or fig.value in self.week_prs):
                problems.append(f"{where} states the figure {fig.text!r}, which is not in the data or the statistics")
        return problems

    def check_prs(self, where: str, prs: Iterable[int]) -> list[str]:
        return [f"{where} lists PR {n}, which is not a pull request of this week" for n in prs if n not in self.week_prs]
