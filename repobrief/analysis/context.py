"""The week's shared facts that per-PR analysis needs: how big PRs usually are
in this repository (calibration), where its core is, the diffs detectors read,
the week's themes and who is new."""

from __future__ import annotations

import heapq
from bisect import bisect_left, bisect_right
from collections import Counter
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from operator import itemgetter
from typing import Any

from ..config import Settings
from ..models import FileChange, PullRequest, Theme
from ..window import Window
from . import files as fk
from .classify import Classified


@dataclass
class AnalysisContext:
    settings: Settings
    window: Window
    lang: str
    repository: str
    classified: dict[int, Classified]
    calibration_lines: list[int] = field(default_factory=list)  # sorted
    calibration_files: list[int] = field(default_factory=list)  # sorted
    core_paths: list[str] = field(default_factory=list)
    diffs: dict[int, str] = field(default_factory=dict)
    themes: list[Theme] = field(default_factory=list)
    first_time_authors: set[str] = field(default_factory=set)
    source: Any = None  # the Source, for engines that read more of it (the llm engine's diff hunks)
    _core_files: dict[int, list[FileChange]] = field(default_factory=dict, init=False, repr=False)

    def core_files(self, pr: PullRequest) -> list[FileChange]:
        """The PR's files that are core code (`is_core`); found once per PR, as scoring
        and the risks both ask, over all of its files."""
        found = self._core_files.get(pr.number)
        if found is None:
            is_core = self.is_core
            found = self._core_files[pr.number] = [f for f in pr.files if is_core(f.path)]
        return found

    def core_hits(self, pr: PullRequest) -> list[str]:
        """The core paths a PR touches."""
        core = tuple(self.core_paths)
        hits: set[str] = set()
        for f in self.core_files(pr):  # most files are not under any: which ones is asked of those that are
            hits.update(core_matches(f.path, core))
        return sorted(hits)

    @cached_property
    def _core_matcher(self):
        return fk.matcher(tuple(self.core_paths))

    def is_core(self, path: str) -> bool:
        """Whether `path` is core code: under a core path (`files.path_matches`, with the
        core paths' matcher looked up once per week instead of once per file), and no
        docs, tests or scripts kept there (a run script beside the code is no core code)."""
        return fk.in_matcher(self._core_matcher, path) and not fk.is_minor(path)

    @property
    def project(self) -> str:
        return self.repository.rsplit("/", 1)[-1].lower()


@lru_cache(maxsize=1 << 11)
def core_matches(path: str, core_paths: tuple[str, ...]) -> tuple[str, ...]:
    """The core paths `path` lies under; cached across reports, since consecutive weeks
    mostly share both their core paths and their changed files."""
    return tuple(cp for cp in core_paths if fk.path_matches(path, (cp,)))  # a tuple: path_matches keeps it as it is


def percentile(sorted_values: list[int], x: int) -> float:
    """Share of values below `x` (ties count half): 0.0 … 1.0."""
    if not sorted_values:
        return 0.5
    lo, hi = bisect_left(sorted_values, x), bisect_right(sorted_values, x)
    return (lo + (hi - lo) / 2) / len(sorted_values)


def default_core_paths(prs: list[PullRequest], project: str, limit: int = 3,
                       cache: dict[int, tuple[tuple[str, int], ...]] | None = None) -> list[str]:
    """The most-changed source directories (two levels deep) of recent PRs. `cache`
    keeps each PR's share between calls (consecutive weeks share most of their PRs)."""
    # Summed in a plain dict: a Counter.update per PR cost four times as much. The dict
    # keeps first-seen order, so `nlargest` breaks ties as `Counter.most_common` would.
    lines: dict[str, int] = {}
    get = lines.get
    for pr in prs:
        mine = cache.get(pr.number) if cache is not None else None
        if mine is None:
            mine = tuple(_source_dirs(pr, project).items())
            if cache is not None:
                cache[pr.number] = mine
        for d, n in mine:
            lines[d] = get(d, 0) + n
    return [d for d, _ in heapq.nlargest(limit, lines.items(), key=itemgetter(1))]


def _source_dirs(pr: PullRequest, project: str) -> Counter[str]:
    lines: Counter[str] = Counter()
    for f in pr.files:
        d = _source_dir(f.path, project)
        if d is not None:
            lines[d] += f.lines or 1
    return lines


@lru_cache(maxsize=1 << 11)
def _source_dir(path: str, project: str) -> str | None:
    """The directory a source file counts for (None: not source, or at the top level);
    cached, since PRs keep changing the same files."""
    if not fk.is_source(path) or fk.is_example(path):
        return None
    parts = path.split("/")[:-1]
    if not parts or parts[0].startswith("."):  # .devcontainer, .github: tooling, no core of the project
        return None
    depth = 2 if parts[0].lower() in (project, "src") and len(parts) >= 2 else 1
    return "/".join(parts[:depth])
