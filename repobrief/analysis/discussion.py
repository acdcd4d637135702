"""What a pull request's review discussion surfaced, without an LLM.

Called by the offline engine only when a source could see discussion
(`pr.discussion_known`):

- `discussion_activity(pr)`: an importance bonus 0..1 with its reason;
- `summarize_discussion(pr, lang)`: the few substantive points, each with its
  author, in zh or en;
- `discussion_risks(pr, lang)`: "merged with unresolved threads" and
  "merged without review".

A thread is substantive by its replies, its length, who wrote it (owners,
members and collaborators weigh more; bots less), whether its reviewer
requested changes, and whether it was still open at merge. The text of
comments is untrusted: it is reduced to plain text as PR bodies are
(`conventions.sentences`), the sentence that carries its point quoted, and
never interpreted as instructions; renderers escape it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from itertools import islice

from ..conventions import clip, iter_paragraphs, plain_markdown, sentences
from ..models import Comment, PullRequest, ReviewThread, Risk

MAINTAINER_ROLES = {"OWNER", "MEMBER", "COLLABORATOR"}
_TRIVIAL = re.compile(
    r"^\s*(lgtm|looks good( to me)?|thanks?( you)?|thx|ty|done|fixed|updated|\+1|ok(ay)?|nice|great|approved?|ping|/\w+.*)[\s.!:]*$",
    re.IGNORECASE,
)
_QUESTION = re.compile(
    r"\?|\b(why|shouldn'?t|should not|no need|not needed|unnecessary|redundant|already (set|done|handled)|explicitly set|instead of)\b",
    re.IGNORECASE,
)
_PROBLEM = re.compile(r"\b(bug|crash|incorrect|wrong|unsafe|race|leak|broken|fails?|error|regression|deadlock|oom)\b", re.IGNORECASE)
_SUGGEST = re.compile(r"```suggestion|\b(suggest|consider|could you|please|prefer|maybe|would be better)\b", re.IGNORECASE)
_BOLD_AUTHOR = re.compile(r"^\s*\*\*[^*\n]{1,80}\*\*:\s*")
_URL = re.compile(r"https?://\S+")
_URL_AT_END = re.compile(r"https?://\S+$")
_SPACES = re.compile(r"\s+")

MAX_POINTS = 3
QUOTE_CHARS = 160
PARAGRAPH_CHARS = 2000  # more than the 1,500 characters of a comment its score counts


def is_bot(author: str) -> bool:
    a = author.lower()
    return a.endswith("[bot]") or a.endswith("-bot") or a in {"github-actions", "dependabot", "codecov"}


@lru_cache(maxsize=4096)
def plain_text(body: str) -> str:
    """A comment as one line of the text its reader sees (`conventions.plain_markdown`),
    code blocks, headings, tables and quoted text left out. What it is measured and
    classified by: each paragraph is read up to `PARAGRAPH_CHARS` characters."""
    paragraphs = iter_paragraphs(_BOLD_AUTHOR.sub("", body or ""))
    return " ".join(p for p in (plain_markdown(p[:PARAGRAPH_CHARS]) for p in paragraphs) if p)


_GREETING = re.compile(r"^(hi|hello|hey|thanks|thank you|@\S+)\b", re.IGNORECASE)


def quote(body: str, limit: int = QUOTE_CHARS) -> str:
    """The sentence that carries the point, as plain text without its links (the shared
    `conventions.sentences`): among the first few, one that asks, objects or names a
    problem, else the first that is not a greeting; cut at a word to `limit` characters."""
    candidates = []  # (sentence without links, whether a link ended it)
    for s in islice(sentences(_BOLD_AUTHOR.sub("", body or ""), limit), 5):
        if text := _SPACES.sub(" ", _URL.sub("", s)).strip():
            candidates.append((text, _URL_AT_END.search(s) is not None))
    if not candidates:
        return ""

    def rank(item: tuple[int, tuple[str, bool]]) -> tuple[int, int]:
        i, (s, link_ended) = item
        score = 0
        if _QUESTION.search(s) or _PROBLEM.search(s):
            score += 2
        if _GREETING.match(s) or len(s) < 20 or link_ended:  # "You might be referring to <link>?"
            score -= 2
        return (-score, i)

    return clip(min(enumerate(candidates), key=rank)[1][0], limit, at_word=True)


def _weight(c: Comment) -> float:
    if is_bot(c.author):
        return 0.4
    return 1.5 if (c.author_association or "") in MAINTAINER_ROLES else 1.0


def _substantive(c: Comment) -> bool:
    text = re.sub(r"^(@\S+[\s,]*)+", "", plain_text(c.body))  # "@reviewer thanks" is still only thanks
    return len(text) >= 30 and not _TRIVIAL.match(text)


@dataclass(slots=True)
class Point:
    """One thing the discussion surfaced."""

    author: str
    text: str  # the quoted first sentence
    path: str | None
    verb: str  # "questioned" | "flagged" | "suggested" | "noted" | "requested" | "replied"
    score: float
    replies: int = 0
    resolved: bool | None = None


def _verb(body: str) -> str:
    text = plain_text(body)
    if _PROBLEM.search(text):
        return "flagged"
    if _QUESTION.search(text):
        return "questioned"
    if _SUGGEST.search(body or ""):
        return "suggested"
    return "noted"


def _changes_requested_by(pr: PullRequest) -> set[str]:
    return {r.author for r in pr.reviews if (r.state or "").upper() == "CHANGES_REQUESTED"}


def _thread_point(pr: PullRequest, t: ReviewThread, requesters: set[str]) -> Point | None:
    comments = [c for c in t.comments if _substantive(c)]
    if not comments:
        return None
    head = comments[0]
    replies = len(t.comments) - 1
    length = sum(len(plain_text(c.body)) for c in t.comments)
    score = _weight(head) * (1.0 + 0.5 * min(replies, 6) + min(length, 1500) / 500)
    if head.author in requesters:
        score += 1.5
    if t.resolved is False:
        score += 1.0
    if head.author == pr.author:
        score *= 0.5
    verb = "replied" if head.author == pr.author else _verb(head.body)
    return Point(head.author, quote(head.body), t.path or head.path, verb, score, replies, t.resolved)


def discussion_points(pr: PullRequest, limit: int = MAX_POINTS) -> list[Point]:
    """The most substantive points of the PR's discussion, strongest first."""
    requesters = _changes_requested_by(pr)
    points = [p for t in pr.threads if (p := _thread_point(pr, t, requesters))]
    for r in pr.reviews:
        if (r.state or "").upper() == "CHANGES_REQUESTED" and _substantive(r):
            points.append(Point(r.author, quote(r.body), None, "requested", _weight(r) * 2.5))
        elif _substantive(r) and not is_bot(r.author):
            points.append(Point(r.author, quote(r.body), None, _verb(r.body), _weight(r) * 1.2))
    for c in pr.comments:
        if not _substantive(c) or is_bot(c.author):
            continue
        score = _weight(c) * (0.8 + min(len(plain_text(c.body)), 1000) / 1000)
        if c.author == pr.author:
            score *= 0.5
        verb = "replied" if c.author == pr.author else _verb(c.body)
        points.append(Point(c.author, quote(c.body), None, verb, score))
    points = [p for p in points if p.text]
    points.sort(key=lambda p: -p.score)
    out: list[Point] = []
    seen: set[str] = set()
    for p in points:
        if p.text in seen:
            continue
        seen.add(p.text)
        out.append(p)
        if len(out) == limit:
            break
    return out


# ---------------------------------------------------------------- activity


def discussion_activity(pr: PullRequest) -> tuple[float, str] | None:
    """An importance bonus 0..1 for how much review the PR drew, with its reason."""
    if not pr.discussion_known:
        return None
    review_comments = [c for t in pr.threads for c in t.comments]
    human_rc = [c for c in review_comments if not is_bot(c.author)]
    bot_rc = len(review_comments) - len(human_rc)
    comments = [c for c in pr.comments if not is_bot(c.author) and _substantive(c)]
    reviewers = {r.author for r in pr.reviews if r.author != pr.author and not is_bot(r.author)}
    reviewers |= {c.author for c in human_rc if c.author != pr.author}
    changes = _changes_requested_by(pr)
    unresolved = sum(1 for t in pr.threads if t.resolved is False)
    score = (
        0.08 * len(human_rc)
        + 0.02 * bot_rc
        + 0.04 * len(comments)
        + 0.08 * max(0, len(reviewers) - 1)
        + (0.3 if changes else 0.0)
        + 0.1 * min(unresolved, 3)
    )
    if score < 0.05:
        return None
    parts = []
    if human_rc:
        parts.append(f"{len(human_rc)} review comment{'s' if len(human_rc) != 1 else ''}")
    if bot_rc:
        parts.append(f"{bot_rc} bot review comment{'s' if bot_rc != 1 else ''}")
    if comments:
        parts.append(f"{len(comments)} comment{'s' if len(comments) != 1 else ''}")
    if len(reviewers) > 1:
        parts.append(f"{len(reviewers)} reviewers")
    if changes:
        parts.append("changes requested")
    if unresolved:
        parts.append(f"{unresolved} unresolved")
    return min(1.0, score), "discussion: " + ", ".join(parts)


# ---------------------------------------------------------------- summary

_VERBS = {
    "en": {
        "questioned": "questioned",
        "flagged": "flagged a problem",
        "suggested": "suggested",
        "noted": "noted",
        "requested": "requested changes",
        "replied": "(the author) noted",
    },
    "zh": {
        "questioned": "提出质疑",
        "flagged": "指出问题",
        "suggested": "提出建议",
        "noted": "评论",
        "requested": "要求修改",
        "replied": "（作者）说明",
    },
}


def _format_point(p: Point, lang: str) -> str:
    verb = _VERBS.get(lang, _VERBS["en"])[p.verb]
    if lang == "zh":
        where = f"（{p.path}）" if p.path else ""
        tail = "，该讨论合并时仍未解决" if p.resolved is False else ""
        return f"{p.author}{where}{verb}：“{p.text}”{tail}"
    where = f" on {p.path}" if p.path else ""
    tail = " (still unresolved at merge)" if p.resolved is False else ""
    return f'{p.author} {verb}{where}: "{p.text}"{tail}'


def summarize_discussion(pr: PullRequest, lang: str) -> str | None:
    """A few sentences on what the review discussion surfaced, or None when nothing did."""
    if not pr.discussion_known:
        return None
    points = discussion_points(pr)
    if not points:
        return None
    sep = "；" if lang == "zh" else "; "
    end = "。" if lang == "zh" else "."
    text = sep.join(_format_point(p, lang) for p in points)
    return text if text.endswith((".", "。", "…")) else text + end


# ---------------------------------------------------------------- risks


def discussion_risks(pr: PullRequest, lang: str) -> list[Risk]:
    """`unresolved_threads` and `no_review` for a merged PR."""
    if not pr.discussion_known:
        return []
    out: list[Risk] = []
    open_threads = [t for t in pr.threads if t.resolved is False]
    if open_threads:
        human = [t for t in open_threads if t.comments and not is_bot(t.comments[0].author)]
        sample = (human or open_threads)[0]
        head = sample.comments[0] if sample.comments else None
        said = quote(head.body, 100) if head else ""
        if lang == "zh":
            ev = f"#{pr.number} 有 {len(open_threads)} 个评审讨论合并时未解决"
            if head:
                ev += f"，如 {head.author}（{sample.path or '—'}）：“{said}”"
        else:
            ev = f"#{pr.number}: {len(open_threads)} review thread{'s' if len(open_threads) != 1 else ''} unresolved at merge"
            if head:
                ev += f', e.g. {head.author} on {sample.path or "the diff"}: "{said}"'
        out.append(Risk("unresolved_threads", "medium" if human else "low", [pr.number], [ev]))
    reviewed = any(
        r.author != pr.author and not is_bot(r.author) and (r.state or "").upper() != "DISMISSED" for r in pr.reviews
    ) or any(c.author != pr.author and not is_bot(c.author) for t in pr.threads for c in t.comments)
    if not reviewed:
        lines = pr.lines
        if lang == "zh":
            ev = f"#{pr.number} 没有评审记录（{lines:,} 行改动）"
        else:
            ev = f"#{pr.number}: no review recorded ({lines:,} changed lines)"
        out.append(Risk("no_review", "medium" if lines >= 200 else "low", [pr.number], [ev]))
    return out
