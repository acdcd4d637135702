"""The shapes the model must answer in, as pydantic models.

Their JSON Schemas go to the endpoint (`json_schema` / tool parameters) or into
the prompt (`json_object`), and every answer is validated against them before
grounding. Only what the model judges is asked for; what is computed (PR
numbers of the week, counts, the PR table) is never left to it.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

ChangeType = Literal["feat", "fix", "perf", "refactor", "docs", "test", "ci", "build", "deps", "chore", "style", "revert", "other"]
Severity = Literal["high", "medium", "low"]


class _Strict(BaseModel):
    # Unknown keys are ignored rather than failing: models add commentary fields.
    model_config = ConfigDict(extra="ignore")


class ReasonOut(_Strict):
    text: str = Field(description="Why the score moves, e.g. 'new public API'.")
    points: float = Field(description="Signed contribution to the importance score.")


class RiskOut(_Strict):
    kind: str = Field(description="Short snake_case kind, e.g. breaking_change, core_path, missing_tests, config_rename.")
    severity: Severity
    title: str = Field(description="A short risk name in the report language.")
    text: str = Field(description="What could go wrong and for whom, in the report language.")
    evidence: list[str] = Field(description="Concrete evidence from the PR data: files, config keys, quotes.")


class DismissedHint(_Strict):
    kind: str = Field(description="The kind of a hinted risk you disagree with.")
    reason: str = Field(description="Why the hint does not apply, citing the PR data.")


class Disagreement(_Strict):
    about: str = Field(description="Which hint: type, breaking, importance, modules or themes.")
    reason: str = Field(description="Why the PR data supports your answer instead, in the report language.")


class PRAnalysisOut(_Strict):
    """One PR, judged by the model."""

    modules: list[str] = Field(description="Code areas touched, lower-case, e.g. trainer, rollout, workers.")
    type: ChangeType
    themes: list[str] = Field(description="Cross-cutting topics, e.g. 'npu support', 'fp8', may be empty.")
    breaking: bool = Field(description="True only if existing users must change config, code or behaviour.")
    importance: float = Field(description="0.0 to 10.0: how much a maintainer or downstream user should care.")
    importance_reasons: list[ReasonOut] = Field(description="Terms whose points add up to the importance.")
    key_contribution: str = Field(description="One sentence in the report language: what it does and why it matters.")
    risks: list[RiskOut] = Field(description="Risks with evidence; empty if none.")
    dismissed_hints: list[DismissedHint] = Field(
        default_factory=list, description="Hinted risks you consider wrong, each with a reason."
    )
    disagreements: list[Disagreement] = Field(
        default_factory=list, description="Where your answer departs from the hints, each with a reason."
    )
    discussion_summary: str | None = Field(
        default=None, description="What the review discussion surfaced, in the report language; null if there was none."
    )


class ItemOut(_Strict):
    name: str = Field(description="A short name, without PR numbers (the report shows them from prs).")
    text: str = Field(description="The entry's text in the report language; cite other PRs as #NUMBER.")
    prs: list[int] = Field(description="PR numbers of this week that the entry is about.")


class SectionsOut(_Strict):
    """The written parts of the weekly report (the PR table is computed, not written)."""

    summary: str = Field(description="Section 1: one paragraph executive summary.")
    key_changes: list[ItemOut] = Field(description="Section 2: the 4-6 most important PRs.")
    trends: list[ItemOut] = Field(description="Section 3: 3-5 module/theme trends backed by the given counts.")
    risks: list[ItemOut] = Field(description="Section 4: 3-6 risks naming the PRs involved.")
    recommendations: list[ItemOut] = Field(description="Section 6: 4-6 actions: imperative name, reason, who acts.")
    closing: str = Field(default="", description="An optional closing line.")
    card_highlights: list[str] = Field(description="Chat card: the top 3 changes, one line each, with PR numbers.")
    card_risks: list[str] = Field(description="Chat card: the top 2-3 risks, one line each.")


@lru_cache(maxsize=8)
def json_schema(model: type[BaseModel]) -> dict:
    """The model's JSON Schema, inlined (some servers do not resolve `$ref`)."""
    schema = model.model_json_schema()
    defs = schema.pop("$defs", {})

    def inline(node):
        if isinstance(node, dict):
            if "$ref" in node:
                return inline(dict(defs[node["$ref"].rsplit("/", 1)[-1]]))
            return {k: inline(v) for k, v in node.items()}
        if isinstance(node, list):
            return [inline(v) for v in node]
        return node

    return inline(schema)
