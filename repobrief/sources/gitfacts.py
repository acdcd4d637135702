"""What git computes the same way every time, kept between runs of a weekly report.

Two facts about a clone cost most of a one-week report's git time and change little
from one week to the next:

- when each author first committed (every commit of the history is walked to tell
  first-time contributors), and
- the line counts of the calibration weeks' commits (blob diffs, the expensive part
  of `git log --numstat`), four of which were already read the week before.

Both depend on commits only, never on settings, so they are kept per clone under the
user cache folder (`$XDG_CACHE_HOME/repobrief/git/`), keyed by commit: the authors
as of a tip commit (a later tip adds only the commits above it, when the kept tip is
its ancestor), and each commit's counts by its sha. A missing, unreadable or foreign
file is a miss and git is asked; a folder that cannot be written keeps nothing. The
folder can be deleted at any time; `--refresh` ignores what is there. Line counts
also follow git's diff settings (`diff.algorithm`, `.gitattributes` marking files
binary): after changing those, `--refresh` once.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path
from typing import TypeGuard

from ..output import replace_cache_file, user_cache_folder

# Bump when what is kept changes meaning; a file of another version is ignored.
VERSION = 1

Counts = list[list]  # [[path, added, deleted], …]; None for a binary file's counts
_SHA = re.compile(r"[0-9a-f]{40,64}")


class GitFacts:
    """The kept facts of one clone (its git folder), read lazily, written once per change."""

    def __init__(self, gitdir: str, *, refresh: bool = False) -> None:
        key = hashlib.sha256(os.path.realpath(gitdir).encode("utf-8", "surrogateescape")).hexdigest()[:24]
        self.folder = Path(user_cache_folder()) / "git" / key
        self.refresh = refresh
        self._counts: dict[str, Counts] | None = None
        self._authors: tuple[str, dict[str, int]] | None = None
        self._authors_read = False
        self._used: dict[str, Counts] = {}
        self._dirty = False

    # ------------------------------------------------------------------ files

    def _read(self, name: str) -> dict | None:
        if self.refresh:
            return None
        try:
            data = json.loads((self.folder / name).read_bytes())
        except (OSError, ValueError):
            return None
        return data if isinstance(data, dict) and data.get("version") == VERSION else None

    def _write(self, name: str, data: dict) -> None:
        # The C encoder: json.dump encodes in Python, ten times slower.
        replace_cache_file(self.folder / name, json.dumps({"version": VERSION, **data}, separators=(",", ":")))

    # ------------------------------------------------------------------ authors

    def first_seen(self) -> tuple[str, dict[str, int]] | None:
        """The tip the authors were kept for and each author's first commit time (epoch
        seconds, names and e-mails lower-case), or None; read once."""
        if not self._authors_read:
            self._authors_read = True
            data = self._read("authors.json")
            tip, seen = (data.get("tip"), data.get("seen")) if data else (None, None)
            if (isinstance(tip, str) and _SHA.fullmatch(tip) and isinstance(seen, dict)
                    and all(isinstance(t, int) for t in seen.values())):
                self._authors = (tip, seen)
        return self._authors

    def keep_first_seen(self, tip: str, seen: dict[str, int]) -> None:
        self._authors, self._authors_read = (tip, seen), True
        self._write("authors.json", {"tip": tip, "seen": seen})

    # ------------------------------------------------------------------ line counts

    def counts(self, shas: list[str]) -> dict[str, Counts]:
        """The kept line counts of those of `shas` that have them."""
        if self._counts is None:
            data = self._read("numstat.json")
            commits = data.get("commits") if data else None
            self._counts = commits if isinstance(commits, dict) else {}
        found = {sha: rows for sha in shas if _valid(rows := self._counts.get(sha))}
        self._used.update(found)
        return found

    def add_counts(self, counts: dict[str, Counts]) -> None:
        self._used.update(counts)
        self._dirty = self._dirty or bool(counts)

    def flush(self) -> None:
        """Keep the counts this run used (those it read and those it was given): the
        calibration weeks of the week reported, which the next week's report shares
        but for its oldest. Only when something new was read."""
        if self._dirty:
            self._dirty = False
            self._write("numstat.json", {"commits": self._used})


def _valid(rows: object) -> TypeGuard[Counts]:
    """Kept counts of one commit, as `add_counts` was given them (a damaged file is a miss)."""
    return isinstance(rows, list) and all(
        isinstance(r, list) and len(r) == 3 and isinstance(r[0], str)
        and all(n is None or (isinstance(n, int) and not isinstance(n, bool)) for n in r[1:])
        for r in rows
    )
