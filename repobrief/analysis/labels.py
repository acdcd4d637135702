"""Label rules: a GitHub label names a module and/or a change type.

`Settings.labels` holds the rules (`[[labels]] label = "area/rollout"
module = "rollout"`); the classifier calls `label_modules` and `label_type`
alongside title tags and path globs, so one rule set covers all three.
Matching ignores case; a rule's label may end in `*` to match a prefix
(`area/*`), and a module of `*` takes the rest of the matched label as the
module's name (`area/*` with module `*`: `area/rollout` -> `rollout`).
"""

from __future__ import annotations

from ..config import LabelRule, Settings
from ..conventions import BREAKING_TAG
from ..models import PullRequest

# Labels many projects use for change types, when no rule says otherwise.
DEFAULT_TYPE_LABELS = {
    "bug": "fix",
    "bugfix": "fix",
    "fix": "fix",
    "enhancement": "feat",
    "feature": "feat",
    "new feature": "feat",
    "performance": "perf",
    "perf": "perf",
    "refactor": "refactor",
    "refactoring": "refactor",
    "documentation": "docs",
    "docs": "docs",
    "dependencies": "deps",
    "ci": "ci",
    "test": "test",
    "tests": "test",
    "chore": "chore",
}


# Labels that mark a breaking change, alone or as the last part of a scoped label
# (`kind/breaking`, `type: breaking change`), besides those `BREAKING_TAG` reads as a title tag.
OTHER_BREAKING_LABELS = frozenset({
    "bc-break", "bc break", "backwards-incompatible", "backward-incompatible", "api-break", "semver-major",
})


def _match(rule: LabelRule, label: str) -> str | None:
    """The part a `*` matched ('' for an exact match), or None when it does not match."""
    want, have = rule.label.lower(), label.lower()
    if want.endswith("*"):
        return have[len(want) - 1 :] if have.startswith(want[:-1]) else None
    return "" if want == have else None


def label_modules(pr: PullRequest, settings: Settings) -> list[str]:
    """Modules named by the PR's labels under `settings.labels`, in label order."""
    out: list[str] = []
    for label in pr.labels:
        for rule in settings.labels:
            if not rule.module:
                continue
            rest = _match(rule, label)
            if rest is None:
                continue
            module = rest if rule.module == "*" else rule.module
            if module and module not in out:
                out.append(module)
    return out


def label_type(pr: PullRequest, settings: Settings) -> str | None:
    """The change type the PR's labels name: a configured rule first, else a
    common label (`bug` -> fix, `enhancement` -> feat, …)."""
    for label in pr.labels:
        for rule in settings.labels:
            if rule.type and _match(rule, label) is not None:
                return rule.type
    for label in pr.labels:
        t = DEFAULT_TYPE_LABELS.get(label.lower())
        if t:
            return t
    return None


def label_breaking(pr: PullRequest, settings: Settings) -> bool:
    """Whether the PR's labels mark it a breaking change: a rule with `breaking = true`,
    or a common label (`breaking`, `breaking-change`, `kind/breaking`, `semver-major`, …)."""
    for label in pr.labels:
        if any(rule.breaking and _match(rule, label) is not None for rule in settings.labels):
            return True
        last = label.lower().rsplit("/", 1)[-1].rsplit(":", 1)[-1].strip()
        if BREAKING_TAG.match(last) or last in OTHER_BREAKING_LABELS:
            return True
    return False
