"""Modules, change type and theme terms of one PR (cheap enough for every PR of
the baseline weeks too)."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from functools import lru_cache

from ..config import Settings
from ..conventions import ParsedTitle, parse_title, takes_away
from ..models import PullRequest
from . import files as fk

# Tags that name the same module in different words.
TAG_ALIASES = {"doc": "docs", "documentation": "docs", "tests": "test", "cfg": "config", "configs": "config"}
_GENERIC_DIRS = {"src", "lib", "libs", "python", "pkg", "internal", "source", "app", "apps", "main", "core", "utils",
                 "util", "common", "misc", "tools", "scripts"}
_STOPWORDS = set(
    """a an the and or for to of in on at by with from into onto via as is are be been was were it its this that these
    those not no yes when while if then than so do does did done can could should would will may might must also only
    add adds added adding support supports supported update updates updated updating use uses using used make makes
    fix fixes fixed fixing remove removes removed removing allow allows change changes changed new more less some all
    any each other via per after before during over under about up down out off same different default defaults
    set sets get gets run runs running issue issues bug bugs pr prs feat feature features chore refactor refactoring
    test tests docs doc minor small typo typos misc improve improves improved improvement improvements enable enables
    enabled disable disabled handle handles proper properly correct correctly instead missing unused wrong error
    errors case cases code file files function functions method methods class classes value values type types
    version versions option options param params parameter parameters arg args argument arguments script scripts
    example examples readme logic flag flags check checks call calls path paths name names list init main
    """.split()
)
# Terms that name one platform or topic in several words; discovered themes are named by these.
TERM_SYNONYMS = {
    "ascend": "npu", "huawei": "npu", "hccl": "npu", "mindspeed": "npu", "cann": "npu", "torch_npu": "npu",
    "amd": "rocm", "hip": "rocm", "mi300": "rocm", "aiter": "rocm",
    "nvidia": "cuda", "documentation": "docs", "doc": "docs", "workflow": "ci", "workflows": "ci", "github": "ci",
    "lora": "lora", "peft": "lora", "vlm": "multimodal", "vl": "multimodal", "vision": "multimodal",
    "multimodal": "multimodal", "fp8": "fp8", "quantization": "quantization", "quant": "quantization",
}
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_.+-]{1,40}")
NAME_PARTS = re.compile(r"[_\-.]")


@dataclass(slots=True)
class Classified:
    parsed: ParsedTitle
    modules: list[str]
    type: str
    breaking: bool
    terms: set[str] = field(default_factory=set)
    minor_only: bool = False  # only docs / tests / CI / examples
    title_terms: set[str] = field(default_factory=set)  # terms the title itself names


@lru_cache(maxsize=1 << 11)
def _folder_terms(folder: str, project: str) -> frozenset[str]:
    """Theme terms of a folder path (the same folders recur in every week)."""
    out = set()
    for part in folder.split("/"):
        p = part.lower()
        if p not in _GENERIC_DIRS and p != project and len(p) > 1 and not p.startswith("."):
            out.add(TERM_SYNONYMS.get(p, p))
            # a platform or topic named within the folder's name: `ascend_tutorial` is Ascend NPU work
            out.update(TERM_SYNONYMS[w] for w in NAME_PARTS.split(p) if w in TERM_SYNONYMS)
    return frozenset(out)


def _canon_tag(tag: str) -> str:
    tag = tag.strip().lower().replace(" ", "_")
    return TAG_ALIASES.get(tag, tag)


def infer_modules(pr: PullRequest, project: str = "") -> list[str]:
    """Modules from paths when the title has no tags: the directories holding most of
    the changed files (files, not lines, so the answer is the same whether or not
    line counts were read — baseline weeks are read without them)."""
    # The changelog entry a code PR adds makes it no documentation PR (flask: every PR).
    paths = [f.path for f in pr.files if not fk.is_ledger(f.path)] or [f.path for f in pr.files]
    weights = Counter([_module_of(path, project) for path in paths])
    total = sum(weights.values()) or 1
    mods = [m for m, w in weights.most_common(3) if w / total >= 0.2]
    return mods or ([weights.most_common(1)[0][0]] if weights else [])


@lru_cache(maxsize=1 << 11)
def _module_of(path: str, project: str) -> str:
    """The module a changed file counts for, lower-case (cached: the same paths recur)."""
    if fk.is_ci(path):
        return "ci"
    if fk.is_test(path):
        return "tests"
    if fk.is_doc(path):
        return "docs"
    parts = [x for x in path.split("/")[:-1] if x.lower() not in _GENERIC_DIRS and x.lower() != project]
    if parts:
        return parts[0].lower()
    stem = fk.base(path).rsplit(".", 1)[0]
    return (stem if stem and stem != "__init__" else (project or "root")).lower()


def _type_from_files(pr: PullRequest) -> str | None:
    paths = [f.path for f in pr.files]
    if not paths:
        return None
    if all(fk.is_doc(p) for p in paths):
        return "docs"
    if all(fk.is_ci(p) for p in paths):
        return "ci"
    if all(fk.is_test(p) for p in paths):
        return "test"
    if all(fk.is_dependency(p) for p in paths):
        return "deps"
    return None


_VERSION_WORD = re.compile(r"v?\d[\d.]*")


def title_terms(text: str) -> set[str]:
    out = set()
    for w in _WORD.findall(text):
        w = w.lower().strip("._+-")
        # A word starts with a letter (`_WORD`): a version only with a "v" ("v0.4.1").
        if len(w) < 2 or w in _STOPWORDS or w[0] == "v" and _VERSION_WORD.fullmatch(w):
            continue
        out.add(TERM_SYNONYMS.get(w, w))
    return out


# A title that fixes typos and nothing else ("fix: typos", "fix typos across codebase", "Fix
# a typo in the docs"): a style change, whatever its type prefix says. Not a typo fixed in a
# name ("fix typo: clip_cvo_ratio to clip_cov_ratio", "fix typo in function name"): that
# renames something users call.
# Tried on descriptions of at most 200 characters (a typo sweep's title is short): its
# optional tails backtrack over each other on a long run of spaces.
_TYPOS_ONLY = re.compile(
    r"(?:fix(?:e[sd]|ing)?\s+)?(?:(?:some|a|the|minor|several|more|small|few|multiple|two|\d+)\s+)*"
    r"(?:typos?|spelling(?:\s+(?:errors?|mistakes?))?|misspellings?)(?:\s+fix(?:es)?)?"
    r"(?:\s+(?:in|across)\s+(?:the\s+)?(?:code\s*base|[\w ./-]*\b(?:docs?|documentation|docstrings?|comments?|readme)"
    r"|[\w./-]+\.(?:md|rst|txt)))?", re.I)


_TYPO_WORD = re.compile(r"\b(?:typos?|spelling|misspell\w*|grammar)\b")  # in a docs-only PR: a docs change


def classify(pr: PullRequest, settings: Settings, project: str = "") -> Classified:
    parsed = parse_title(pr.title)
    modules: list[str] = []
    for t in parsed.tags:
        c = _canon_tag(t)
        if c and c not in modules:
            modules.append(c)
    low_title = pr.title.lower()
    for rule in settings.modules:
        hit = any(_canon_tag(t) in modules for t in rule.tags) or (rule.paths and any(fk.path_matches(f.path, rule.paths) for f in pr.files))
        hit = hit or any(lbl in pr.labels for lbl in rule.labels)
        if hit and rule.name not in modules:
            modules.append(rule.name)
    ptype = parsed.type
    breaking = parsed.breaking
    if pr.labels:
        from .labels import label_breaking, label_modules, label_type

        for m in label_modules(pr, settings):
            if m not in modules:
                modules.append(m)
        ptype = ptype or label_type(pr, settings)
        breaking = breaking or label_breaking(pr, settings)
    if not modules:
        modules = infer_modules(pr, project)
    if pr.reverts is not None or low_title.startswith("revert"):
        ptype = "revert"
    from_files = _type_from_files(pr)
    described = parsed.description.strip().rstrip(".")
    if ptype in (None, "fix", "chore") and (len(described) <= 200 and _TYPOS_ONLY.fullmatch(described)
                                            or ptype == "fix" and from_files == "docs" and _TYPO_WORD.search(low_title)):
        ptype = "docs" if from_files == "docs" else "style"
    elif ptype is None:
        ptype = from_files or ("docs" if "typo" in low_title else "other")
    elif ptype in ("chore", "other") and from_files in ("docs", "ci", "test", "deps"):
        ptype = from_files
    minor_only = bool(pr.files) and all(fk.is_minor(f.path) for f in pr.files)
    # options, commands or Python versions taken away break their users, unless only tests,
    # CI, docs or examples changed (a CI job's proxy settings)
    breaking = breaking or (not minor_only and ptype not in ("ci", "test", "docs") and takes_away(pr.title))
    named = title_terms(parsed.description) | set(modules)
    terms = set(named)
    for d in {f.path.rpartition("/")[0] for f in pr.files[:200]}:
        terms.update(_folder_terms(d, project))
    return Classified(parsed=parsed, modules=modules, type=ptype, breaking=breaking, terms=terms, minor_only=minor_only,
                      title_terms=named)
