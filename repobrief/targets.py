"""What a target names (`github:OWNER/REPO`, a clone's path) and opening its source.

Kept apart from the pipeline, which imports every analysis module: a command reads
its target and starts git on it before those imports (a backfill indexes the clone
while they run).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

from .errors import UsageError
from .registry import SOURCES

if TYPE_CHECKING:
    from .config import Settings

# a clone URL on any server (GitHub Enterprise, GitLab, …), which no local path looks like
_CLONE_URL = re.compile(r"(?:https?://[^/\s]+/|git@[^:\s]+:|ssh://git@[^/\s]+/)[^/\s]+/[^/\s]+$")


def resolve_target(target: str, source: str | None = None) -> tuple[str, str]:
    """`github:OWNER/REPO` → ("github", "OWNER/REPO"); a path → ("git", path).

    `source` (`--source`) forces a source for a target without a prefix; one that
    contradicts the target's prefix is a usage error, not silently overruled. An empty
    target (an unset shell variable) is one too: read as a path, it was the current folder."""
    if not target.strip():
        raise UsageError("the repository to read is empty (an unset shell variable?)",
                         "give a clone's path ('.' for the current folder) or github:OWNER/REPO")
    if source is not None and source not in SOURCES:
        SOURCES.get(source)  # raises: unknown source, with the valid ones
    if source in (None, "github") and _CLONE_URL.match(target) and not Path(target).exists():
        return "github", target  # a clone URL names the repository on its server, as for `sync` (another host is refused there)
    if ":" in target and not Path(target).exists():
        scheme, _, rest = target.partition(":")
        if scheme in SOURCES and not (len(scheme) == 1 and rest.startswith(("\\", "/"))):
            if source is not None and source != scheme:
                raise UsageError(
                    f"--source {source} contradicts the target {target!r}, which names the {scheme} source",
                    f"drop --source {source} to read it with the {scheme} source"
                    + (", or give the path of a local clone instead" if source == "git" else ""),
                )
            return scheme, rest
    if source is not None:
        SOURCES.get(source).check_location(target)  # e.g. a clone's folder given to --source github
    return (source or "git"), target


def needs_store(backend) -> bool:
    """Whether a source or engine class reads or writes the store (`needs_store`; a
    backend that does not say needs none)."""
    return bool(getattr(backend, "needs_store", False))


def source_needs_store(target: str, source: str | None = None) -> bool:
    """Whether reading `target` needs the store: a GitHub source's synced PRs, not a clone."""
    return needs_store(SOURCES.get(resolve_target(target, source)[0]))


def open_source(target: str, settings: Settings, *, source_name: str | None = None, offline: bool = False, store=None):
    """The source `target` names, opened (also for callers that share one between runs)."""
    name, location = resolve_target(target, source_name)
    return SOURCES.get(name)(location, settings, store=store, offline=offline)
