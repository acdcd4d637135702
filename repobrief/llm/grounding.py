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
  refused. The noun may come first ("新贡献者3位").
- A number the words around it tie to the span's total ("merged 27 PRs",
  "本周共合并36个PR"), to the previous span's ("down from 43 the week before") or
  to their difference ("6 more than the previous week") must be that number
  (`Grounds.ties`), unless its sentence names a theme, module or type whose figure
  it is (`Grounds.topics`), or counts a subgroup (first-time contributors, lines).
- Any other figure must be a computed statistic, an importance score, or a
  number present in the PR data the model was given (a body's "40% faster").
  Dates, times, versions, week labels and numbers inside identifiers
  (`fp8`, `H100`, `use_v1`) are not figures.
- A link must be one the PR data holds.
- Importance stays within 0–10.
- Text is checked as a reader reads it: "#\u200b12" and "＃１２" are "#12".

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
_CODE_MARK = re.compile(r"`")
_URL = re.compile(r"(?:https?://|www\.)\S+", re.I)
_URL_TAIL = ".,;:!?)]}>\"'，。；：！？）】」》"
# Characters a reader does not see, and the full-width and small forms of digits, letters
# and the signs `#`, `<`, `>`, `/` a reader (or a model) reads as ASCII: "#\u200b12" and
# "＃１２" read as "#12", "＜/ｕｎｔｒｕｓｔｅｄ＞" as "</untrusted>" (`as_read`).
_INVISIBLE = re.compile("[\u00ad\u180e\u200b-\u200f\u2060-\u2064\ufeff]")
_AS_ASCII = str.maketrans({
    **{chr(c): chr(c - 0xFEE0) for c in (*range(0xFF10, 0xFF1A), *range(0xFF21, 0xFF3B), *range(0xFF41, 0xFF5B))},
    "\uff03": "#", "\ufe5f": "#", "\uff1c": "<", "\ufe64": "<", "\uff1e": ">", "\ufe65": ">", "\uff0f": "/",
})
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
    r"^\s*(?:个|位|名|人|项|次|条|笔|处|行)|^\s*(?:(?:new|first[- ]time)\s+)?"
    r"(?:PRs?\b|pull requests?\b|contributors?\b|authors?\b|newcomers?\b|commits?\b|merged\b|merges\b|patches\b|changes\b|lines?\b"
    r"|(?:people|developers)\s+contributed\b)",
    re.I,
)
# What a count counts, when it says so: the text right after the number names the
# statistic it must equal (`Grounds.kinds`).
_COUNT_KIND = re.compile(
    r"\s*(?:"
    r"(?P<first_time>(?:new|first[- ]time)\s+(?:contributors?|authors?)\b|newcomers?\b"
    r"|(?:位|名|人)\s*(?:为|是)?\s*(?:新|首次)(?:贡献者|作者|开发者|贡献|参与))"
    r"|(?P<prs>(?:new\s+|merged\s+)?(?:PRs?|pull\s+requests?|merges|patches)\b|个\s*(?:PR|拉取请求|合并请求)"
    r"|changes\s+(?:were\s+|have\s+been\s+|got\s+)?(?:merged|landed)\b)"  # "60 changes were merged"
    r"|(?P<contributors>(?:contributors?|authors?)\b|(?:位|名|人)\s*(?:贡献者|作者|开发者)"
    r"|(?:people|developers)\s+contributed\b)"  # "99 people contributed"
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
# ... and after the noun it counts ("新贡献者三位", "贡献者共十九人")
_ZH_COUNT_AFTER_NOUN = re.compile(
    r"(?<=贡献者|开发者)(?:共|有|为|是|达|共有|共计)?\s*([零一二两三四五六七八九十百千]{1,5})(?=\s*(?:个|位|名|人))"
)
# A count whose noun comes first: "新贡献者3位", "首次贡献者有8人", "贡献者19位", "PR总数22",
# "first-time contributors: 8". Read when the words after the number do not say what it counts.
_KIND_BEFORE = re.compile(
    r"(?:"
    r"(?P<first_time>(?:新|首次)(?:贡献者|作者|开发者)|(?:first[- ]time|new)\s+(?:contributors?|authors?)\s*[:：])"
    r"|(?P<contributors>(?:贡献者|作者|开发者)|(?:contributors?|authors?)\s*[:：])"
    r"|(?P<prs>(?:PR|拉取请求|合并请求)(?:数量?|总数)|(?:PR|拉取请求|合并请求)(?=共|有|为|是|达)|(?:PRs|pull\s+requests)\s*[:：]"
    r"|(?:PR|pull\s+request)\s+(?:count|total)\s*[:：]|number\s+of\s+(?:PRs|pull\s+requests|merges)\s*(?:[:：]|is|was|were))"
    r")\s*(?:共有|共计|合计|共|有|为|是|达)?\s*[:：]?\s*$",
    re.I,
)


# ---- counts tied to the span's total: "merged 22 PRs", "本周共合并22个PR", "1 more than the
# previous week's 21", "比上周的21个多1个". Such a number must be the span's own total, the
# previous span's, or their difference — not any number of PRs (a theme's, an earlier week's) —
# unless its sentence names a theme, module or type whose figure it is ("CI: 9 PRs were merged"),
# or counts something else (contributors, lines, a subgroup such as first-time contributors).
_PRS_EN = r"(?:PRs?|pull\s+requests?)"
_PREV_EN = (
    r"(?:the\s+week\s+before|the\s+day\s+before|last\s+week|a\s+week\s+(?:earlier|before)|the\s+week\s+prior"
    r"|(?:the\s+)?(?:previous|prior|preceding)\s+(?:week|day|period|\d+-day\s+period))\b"
)
_PREV_ZH = r"(?:上周|上一周|前一周|前一天|前\d+天|上一时段|前一时段)"
_SPAN_ZH = r"(?:本周|这周|本期|这\d+天|当天|期间)"
_ZH_PR = r"个\s*(?:PR|拉取请求|合并请求)"
# where the sentence goes on after "N PRs were merged" when N is the span's total
_TOTAL_END = (
    r"(?=\s*(?:$|[,;:()（），。、—–]|this\s+(?:week|period|day)\b|in\s+total\b|altogether\b|overall\b"
    r"|(?:over|during|in)\s+the\s+(?:week|period)\b|in\s+this\b|on\s+this\b|into\s+(?:the\s+)?(?:main|master|default)\b"
    r"|from\s+to\b|between\s+and\b|so\s+far\b))"
)
# (what the number is, the sentence before it, the text after it); None: anything
_TIE_RULES: list[tuple[str, re.Pattern | None, re.Pattern | None]] = [
    (kind, re.compile(before, re.I) if before else None, re.compile(after, re.I) if after else None)
    for kind, before, after in (
        ("total", r"\b(?:merged|landed)\s+(?:(?:a\s+total\s+of|in\s+total|only|just|exactly|altogether)\s+)?$", rf"^\s*{_PRS_EN}\b"),
        ("total", r"\b(?:a\s+total\s+of|in\s+total,?|altogether,?|overall,?)\s*$", rf"^\s*(?:merged\s+)?{_PRS_EN}\b"),
        ("total", rf"\bmerged\s+{_PRS_EN}\s*[:：]\s*$", None),
        ("total", None, rf"^\s*{_PRS_EN}\s+(?:(?:were|was|have\s+been|had\s+been|got|been)\s+)?(?:merged|landed)\b{_TOTAL_END}"),
        ("total", None, rf"^\s*merged\s+{_PRS_EN}\b{_TOTAL_END}"),
        ("total", r"(?:共|一共|总共|累计|合计)(?:计)?(?:合并|合入)了?\s*$", rf"^\s*{_ZH_PR}"),
        ("total", rf"{_SPAN_ZH}[^，。；：,;:\n]{{0,40}}?(?:合并|合入)了?\s*$", rf"^\s*{_ZH_PR}"),
        # each `\s*` after a word of its own: runs of `\s*` with only optional words between
        # them backtracked over each other (11 s for "," and 400 spaces in a model's answer)
        ("total", rf"(?:^|[，,；;：:（(])\s*(?:{_SPAN_ZH}\s*)?(?:内\s*)?(?:(?:共|一共|总共)\s*)?(?:有\s*)?$",
                  rf"^\s*{_ZH_PR}\s*(?:已经?|已被|被)?(?:合并|合入)"),
        ("total", r"(?:合并|合入)的?\s*(?:PR|拉取请求|合并请求)(?:数量?|总数)?\s*(?:共计|共|为|是|达)?\s*[:：]?\s*$", None),
        ("delta", None, rf"^\s*(?:{_PRS_EN}\s+)?(?:more|fewer|less)\s+than\s+(?:in\s+|during\s+)?(?:the\s+)?"
                        rf"(?:[\d,]+\s+(?:{_PRS_EN}\s+)?(?:of|in)\s+the\s+)?(?:previous|last|prior|preceding|week\s+before|day\s+before)\b"),
        ("delta", r"\b(?:up|down|increased|decreased|rose|fell|dropped|grew|declined)\s+(?:by\s+)?$",
                  rf"^\s*(?:{_PRS_EN}\s+)?(?:from|over|on|versus|vs\.?|compared\s+(?:with|to))\s+{_PREV_EN}"),
        ("delta", rf"(?:比|较|相比|与)\s*{_PREV_ZH}(?:相比)?(?:的?\s*[\d,]+\s*个(?:PR)?)?\s*(?:多出?|少|增加|减少|增长|下降|上升)了?\s*$", None),
        ("delta", r"环比(?:增加|减少|增长|下降|上升|多|少)了?\s*$", None),
        ("previous", r"\b(?:the\s+)?(?:previous|prior|preceding|last)\s+(?:week|day|period|\d+-day\s+period)'s\s*$", None),
        ("previous", None, rf"^\s*(?:{_PRS_EN}\s+)?(?:(?:were\s+)?merged\s+)?(?:(?:in|during|over|of)\s+)?{_PREV_EN}"),
        ("previous", rf"{_PREV_ZH}(?:的|为|是|有|共|共有|合并了?|仅|只有)?\s*$", None),
    )
]
_SENTENCE_END = re.compile(r"[.!?](?=\s|$)|[。！？;；\n]")
# a subgroup named before a total-like count: its number is not the span's total
_SUBGROUP = re.compile(
    r"\b(?:contributors?|authors?|first[- ]time|newcomers?|maintainers?|reviewers?|bots?|dependabot|themes?|modules?|areas?"
    r"|teams?|platforms?|of\s+(?:them|these|those|which|whom)|including|among)\b|其中|贡献者|作者|新人|维护者|机器人|主题|模块|方向|领域|平台|相关",
    re.I,
)
_SUBGROUP_AFTER = re.compile(
    r"^[^,;，；。]*?(?:\b(?:by|from)\s+(?:the\s+)?(?:first[- ]time|new|external|core|outside)\b|\bby\s+(?:bots?|dependabot|maintainers?)\b"
    r"|\b(?:all|each|mostly)\s+(?:by|from|in)\b|由(?:新|首次)|来自(?:新|首次))",
    re.I,
)
# the nouns a comparison may refer back to: the nearest one before it says what it compares
_COUNTED = re.compile(
    r"(?P<prs>\bPRs?\b|\bpull\s+requests?\b|PR)|(?P<other>\bcontributors?\b|\bauthors?\b|\bnewcomers?\b|\blines?\b|\bfiles?\b"
    r"|\bcommits?\b|\bfix(?:es)?\b|位|名|人|行|贡献者|作者|文件|提交|修复)",
    re.I,
)


def _sentence(text: str, start: int, end: int) -> tuple[str, str]:
    """The sentence around text[start:end]: what comes before it, and after it."""
    head = 0
    for m in _SENTENCE_END.finditer(text, 0, start):
        head = m.end()
    tail = _SENTENCE_END.search(text, end)
    return text[head:start], text[end : tail.start() if tail else len(text)]


def _tie(fig: Figure, before: str, after: str) -> str | None:
    """Whether the number at `fig` is stated as the span's total ("total"), the previous
    span's ("previous") or the difference between them ("delta"), by the words around it
    in its sentence (`before`, `after`)."""
    if fig.percent or fig.decimals or fig.value != int(fig.value) or fig.kind not in (None, "prs"):
        return None
    for kind, rb, ra in _TIE_RULES:
        if (rb is None or rb.search(before)) and (ra is None or ra.search(after)):
            if kind == "total":
                if _SUBGROUP.search(before) or _SUBGROUP_AFTER.search(after):
                    return None
            else:  # a comparison refers to the nearest counted noun before it
                nouns = list(_COUNTED.finditer(before))
                if nouns and nouns[-1].lastgroup == "other":
                    return None
            return kind
    return None


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
    start: int = 0  # where it stands in the text `figures_in` read (its non-figures blanked out)
    end: int = 0


def as_read(text: str) -> str:
    """`text` as a reader reads it: without invisible characters, the full-width and small
    forms `_AS_ASCII` names as ASCII (CJK punctuation stays as it is)."""
    return text if text.isascii() else _INVISIBLE.sub("", text).translate(_AS_ASCII)


def _strip_non_figures(text: str) -> str:
    # A code span's figures are figures ("`12 PRs merged`"); an identifier's digits are not
    # (`use_v1`, `fp8`: `_NUMBER` skips digits glued to letters).
    for rx in (_CODE_MARK, _URL, _WEEK, _DATE, _VERSION):
        text = rx.sub(" ", text)
    return _PR_REF.sub(" ", text)


def _kind_before(text: str, start: int) -> str | None:
    """What a number counts when its noun comes first ("新贡献者3位")."""
    m = _KIND_BEFORE.search(text[max(0, start - 40) : start])
    return m.lastgroup if m else None


def figures_in(text: str) -> list[Figure]:
    """The figures `text` states (see the module docstring for what is not one)."""
    return _figures(_strip_non_figures(text or ""))


def _figures(cleaned: str) -> list[Figure]:
    out: list[Figure] = []
    for m in _NUMBER.finditer(cleaned):
        whole, frac, suffix = m.group(1), m.group(2) or "", (m.group(3) or "").strip()
        value = float(whole.replace(",", "") + frac)
        if suffix.lower() == "k":
            value *= 1000
        plain = not frac and not suffix
        count = bool(_COUNT_NOUN.match(cleaned[m.end():])) and plain
        kind = _count_kind(cleaned, m.start(), m.end()) if count else None
        if kind is None and plain:
            kind = _kind_before(cleaned, m.start())
            count = count or kind is not None
        out.append(Figure(value, len(frac) - 1 if frac else 0, suffix == "%", count, m.group(0).strip(), kind, m.start(1), m.end()))
    for rx, read in ((_WORD_NUMBER, _word_number), (_ZH_COUNT, _zh_number), (_ZH_COUNT_AFTER_NOUN, _zh_number)):
        for m in rx.finditer(cleaned):
            kind = _count_kind(cleaned, m.start(1), m.end(1)) or _kind_before(cleaned, m.start(1))
            noun = _NOUN_AFTER.match(cleaned, m.end())
            text = cleaned[m.start(1) : noun.end() if noun else m.end()]
            out.append(Figure(read(m.group(1)), 0, False, True, text, kind, m.start(1), m.end(1)))
    return out


# "No risks this week", "无明显风险": a flat denial (not "no other risks", a judgement on the rest)
_NO_RISKS = re.compile(
    r"\b(?:no|zero|not\s+any|without\s+(?:any\s+)?)\s+(?:(?:notable|significant|major|known|particular|obvious|new|real|serious"
    r"|apparent|identified|detected|relevant|specific|immediate|clear)\s+){0,2}risks\b|\brisk[- ]free\b|\bnothing\s+risky\b"
    r"|\bno\s+risk\s*(?:[.;!]|$)"
    r"|(?:无|没有|暂无|未发现|未见|不存在|并无|尚无)(?:任何|明显|显著|重大|值得关注|需要关注|需关注|特别|突出|新增|已知)?的?(?:风险|隐患)",
    re.I,
)
_NO_BREAKING = re.compile(
    r"\b(?:no|zero|not\s+any|without\s+(?:any\s+)?)\s+(?:(?:notable|significant|major|known|new)\s+)?"
    r"(?:breaking(?:\s+changes?)?|backward[- ]incompatible\s+changes?|compatibility\s+breaks?)\b"
    # "nothing in this week breaks users", "none of the changes breaks existing setups"
    r"|\b(?:nothing|none\s+of\s+(?:the|these|this\s+week's)\s+(?:changes|PRs|pull\s+requests))\s+(?:[\w']+\s+){0,4}?"
    r"(?:breaks?|is\s+breaking|are\s+breaking)\b"
    # "all changes are backward compatible", "upgrading is safe", "no user-facing API changed"
    r"|\b(?:all|every)\s+(?:of\s+)?(?:the\s+|this\s+week's\s+)?(?:changes?|PRs?|pull\s+requests?)\s+(?:[\w']+\s+){0,3}?"
    r"(?:backwards?[- ]compatible|non[- ]breaking)\b"
    r"|\bupgrad(?:e|es|ing)\s+(?:is|are|remains?)\s+(?:completely\s+|entirely\s+|perfectly\s+)?safe\b|\bsafe\s+to\s+upgrade\b"
    r"|\bno\s+user[- ]facing\s+(?:[\w-]+\s+){0,2}?(?:changes?|changed)\b"
    r"|(?:无|没有|暂无|未发现|不存在|并无|尚无)(?:任何)?的?(?:破坏性变更|破坏性改动|不兼容变更|不兼容改动|breaking\s*change)"
    r"|(?:全部|均|都|完全)(?:保持)?(?:向后|向下)兼容|可(?:以)?放心升级|升级(?:是|均|都)?安全的",
    re.I,
)


_THE_SPAN = re.compile(rf"\b(?:this|the)\s+(?:week|period|day)\b|{_SPAN_ZH}", re.I)


# Words that make a match no claim: negated ("not all changes are backward compatible",
# "并非所有变更都向后兼容"), put as a thing to check ("confirm that it is safe to upgrade",
# "请先确认升级是安全的"), or made conditional ("upgrading is safe only after migrating").
_HEDGED_BEFORE = re.compile(r"(?:\b(?:not|never|confirm|check|verify|ensure|whether|if|unless)\b(?:\W+\w+){0,4}\W*"
                            r"|(?:并非|不是|未必|确认|检查|是否|如果|假如)[^，。,；;]{0,8})$", re.I)
_HEDGED_AFTER = re.compile(r"^\W*(?:only|once|after|when|if|unless|provided|as\s+long\s+as)\b|^[^。，,]{0,4}(?:之后|以后|前提)", re.I)


def _denies(rx: re.Pattern, text: str) -> bool:
    """Whether a sentence of `text` denies what `rx` finds, of the week: a sentence that
    cites a PR speaks of that PR ("#12 adds X with no breaking changes"), unless the
    clause says it speaks of the week ("本周无风险，重点见 #12"); a hedged match
    (`_HEDGED_BEFORE`, `_HEDGED_AFTER`) claims nothing."""
    for sentence in _SENTENCE_END.split(text or ""):
        for m in rx.finditer(sentence):
            if _HEDGED_BEFORE.search(sentence, 0, m.start()) or _HEDGED_AFTER.search(sentence[m.end():]):
                continue
            if not _PR_REF.search(sentence):
                return True
            head = max(sentence.rfind(c, 0, m.start()) for c in ",，:：、(（")
            tail = min([i for i in (sentence.find(c, m.end()) for c in ",，:：、)）") if i >= 0] or [len(sentence)])
            if _THE_SPAN.search(sentence[head + 1 : tail]):
                return True
    return False


def denies_risks(text: str) -> bool:
    """Whether `text` says flatly that the week has no risks."""
    return _denies(_NO_RISKS, text)


def denies_breaking(text: str) -> bool:
    """Whether `text` says that the week has no breaking change."""
    return _denies(_NO_BREAKING, text)


def urls_in(texts: Iterable[str]) -> set[str]:
    """The links in `texts` (as `_URL` finds them, trailing punctuation left out)."""
    return {m.group().rstrip(_URL_TAIL).lower() for t in texts for m in _URL.finditer(t or "")}


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


def period_span(days: int | None) -> str:
    """The span a report covers (`days`: a date range's length; None: an ISO week), as the
    prompts and retry messages name it."""
    return "this week" if days is None else "this day" if days == 1 else "this period"


def previous_span(days: int | None) -> str:
    """The span before it, as the retry messages name it."""
    return "the previous week" if days is None else "the day before" if days == 1 else "the previous period"


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
    days: int | None = None  # the report's span (a date range's length; None: an ISO week), for the messages
    # what a number stated as the span's total ("total"), the previous span's ("previous")
    # or their difference ("delta") must be (`_tie`); a tie not listed is not checked
    ties: dict[str, set[float]] = field(default_factory=dict)
    # themes, modules and types by the names a sentence may call them, with their figures
    # (count, previous week's, difference, average): "CI: 9 PRs were merged" is true of CI
    topics: dict[str, set[float]] = field(default_factory=dict)
    # the links the data holds: the only ones the text may write (None: not checked)
    urls: set[str] | None = None

    @property
    def span(self) -> str:
        return period_span(self.days)

    @property
    def previous_span(self) -> str:
        return previous_span(self.days)

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

    def _topic_figures(self, sentence: str) -> set[float]:
        """The figures of the themes, modules and types `sentence` names."""
        found: set[float] = set()
        low = sentence.lower()
        for name, values in self.topics.items():
            n = name.lower()
            if n.isascii():
                if re.search(rf"(?<![A-Za-z0-9_]){re.escape(n)}(?![A-Za-z0-9_])", low):
                    found |= values
            elif n in low:
                found |= values
        return found

    def _tie_problem(self, where: str, cleaned: str, fig: Figure, context: str) -> str | None:
        """A problem when `fig` is stated as the span's total, the previous span's or their
        difference, and is not that number nor a figure of a topic its sentence names."""
        before, after = _sentence(cleaned, fig.start, fig.end)
        tie = _tie(fig, before, after)
        if tie is None or tie not in self.ties or self._matches(fig, self.ties[tie]):
            return None
        if self._matches(fig, self._topic_figures(f"{context}\n{before}{fig.text}{after}")):
            return None
        want = sorted(self.ties[tie])
        real = f"the computed number is {want[0]:g}" if want else "there is no computed number for it"
        if tie == "total":
            return f"{where} states {fig.text!r} as the number of pull requests merged {self.span}, but {real}"
        if tie == "previous":
            return f"{where} states {fig.text!r} as the number of pull requests merged {self.previous_span}, but {real}"
        real = f"the computed difference is {want[0]:g}" if want else f"there is no computed number for {self.previous_span}"
        return f"{where} states {fig.text!r} as the difference from {self.previous_span}, but {real}"

    def check_text(self, where: str, text: str, context: str = "") -> list[str]:
        """The problems of `text`; `context` is what the text is about when it does not
        say so itself (a trend item's name: its counts are that theme's)."""
        problems: list[str] = []
        text = as_read(text or "")
        if self.urls is not None:
            for m in _URL.finditer(text):
                if m.group().rstrip(_URL_TAIL).lower() not in self.urls:
                    problems.append(f"{where} writes the link {m.group()!r}, which is not in the data; cite pull requests as #NUMBER")
        for n in pr_refs(text):
            if n not in self.week_prs and n not in self.extra_refs:
                problems.append(f"{where} cites #{n}, which is not a pull request of {self.span}")
        cleaned = _strip_non_figures(text or "")
        for fig in _figures(cleaned):
            tied = self._tie_problem(where, cleaned, fig, context) if self.ties else None
            if tied:
                problems.append(tied)
            elif fig.count and fig.kind in self.kinds:
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
