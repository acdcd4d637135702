"""Analysis engines: turn a PR (plus week context) into a `PRAnalysis`, and the
week's facts into written sections. One module per engine, looked up in
`repobrief.registry.ENGINES`; this module holds only the interface."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import TYPE_CHECKING

from ..models import PRAnalysis, PullRequest

if TYPE_CHECKING:
    from ..aggregate import WeekFacts
    from ..analysis.context import AnalysisContext
    from ..models import Card, Sections


class Engine(ABC):
    """One required method, `analyze`; `analyze_all` and `compose` have defaults
    that engines which batch or write prose override."""

    name = "engine"
    #: whether it reads or writes the store (the llm engine's cached answers)
    needs_store = False

    @abstractmethod
    def analyze(self, pr: PullRequest, ctx: AnalysisContext) -> PRAnalysis:
        """Analyse one PR of the week."""

    def analyze_all(self, prs: list[PullRequest], ctx: AnalysisContext) -> dict[int, PRAnalysis]:
        return {pr.number: self.analyze(pr, ctx) for pr in prs}

    def compose(self, facts: WeekFacts) -> tuple[Sections, Card]:
        """Write the six sections and the card. The default is the offline composer."""
        from ..compose import compose_offline

        return compose_offline(facts)

    def info(self) -> dict:
        """The report's `engine` block."""
        return {"name": self.name}
