"""How long each repository's job took last time, so that a run starts the longest first.

A run of many repositories on a few workers ends when its last job does. Started in
the config's order, a long repository listed late runs alone at the end while the
other workers wait. Started longest first (by the time each took in the last run),
the short ones fill in beside the long ones: the classic longest-processing-time
order (with the times known, its end is never more than a third past the best
possible; last run's times are a forecast).

The times are kept in the user cache folder (`$XDG_CACHE_HOME/repobrief/durations.json`),
by source (a clone's path, `github:OWNER/REPO`), with the day each was taken; a time
not renewed for `FORGET_DAYS` is dropped. A repository with no time kept (new to the
config, or a first run) starts before all the others: it may well be the longest,
since a first report keeps nothing yet (see `sources/gitfacts.py`). A missing,
damaged or unwritable file means the config's order, never an error: this is only
an order.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from .output import replace_cache_file, user_cache_folder
from .redact import mask_url

if TYPE_CHECKING:
    from .team import JobResult, RepoJob

VERSION = 1
FORGET_DAYS = 90


def _file() -> Path:
    return Path(user_cache_folder()) / "durations.json"


def _key(job: RepoJob) -> str:
    return mask_url(job.target)  # should a source ever carry a password, it stays out of the cache


def kept() -> dict[str, tuple[float, int]]:
    """Seconds and day (days since the epoch) by source, as the last runs left them."""
    try:
        data = json.loads(_file().read_bytes())
    except (OSError, ValueError):
        return {}
    jobs = data.get("jobs") if isinstance(data, dict) and data.get("version") == VERSION else None
    if not isinstance(jobs, dict):
        return {}
    return {k: (float(v[0]), int(v[1])) for k, v in jobs.items()
            if isinstance(v, list) and len(v) == 2 and all(isinstance(x, (int, float)) and not isinstance(x, bool)
                                                             and math.isfinite(x) and x >= 0 for x in v)}


def longest_first(jobs: Sequence[RepoJob]) -> list[RepoJob]:
    """`jobs` in the order to start them: those with no time kept first, then the
    longest last time first; equal ones in the config's order."""
    times = kept()
    return sorted(jobs, key=lambda j: -times.get(_key(j), (math.inf, 0))[0])


def remember(jobs: Sequence[RepoJob], results: Sequence[JobResult]) -> None:
    """Keep the time of each job that succeeded (a failure's time says nothing of the
    next run's), beside those of repositories this run did not include."""
    by_index = {job.index: job for job in jobs}
    today = int(time.time() // 86400)
    # Read again, not reused from the start: a run beside this one may have written since.
    times = {k: v for k, v in kept().items() if today - v[1] <= FORGET_DAYS}
    new = {_key(by_index[r.index]): (round(r.seconds, 3), today) for r in results if r.ok and r.index in by_index}
    if not new:
        return
    times.update(new)
    replace_cache_file(_file(), json.dumps({"version": VERSION, "jobs": {k: list(v) for k, v in times.items()}}))
