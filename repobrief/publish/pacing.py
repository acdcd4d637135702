"""Posting to one robot no faster than its platform takes.

DingTalk and WeCom take 20 messages a minute per robot (DingTalk then blocks the
robot for ten minutes), Feishu 5 a second and 100 a minute, Slack about one a
second. A `repobrief run` over many repositories posts their cards from several
processes at once, and a cron job may run `publish` once per report: so the
times of the last posts to each webhook are kept in a small file under the user
cache folder (named by a hash of the webhook URL, which is a secret: the file
holds only times), and a post waits, under an exclusive lock on that file, until
the platform's windows have room for it. Posts from other machines, or from
other programs to the same robot, are not seen.
"""

from __future__ import annotations

import hashlib
import logging
import os
from collections.abc import Callable, Iterator
from pathlib import Path

log = logging.getLogger("repobrief.publish")

# A window: at most `count` posts within `seconds`.
Window = tuple[int, float]


def pace_folder() -> Path:
    from platformdirs import user_cache_path

    return user_cache_path("repobrief", appauthor=False) / "pace"


def take_slot(key: str, windows: tuple[Window, ...], *, clock: Callable[[], float], sleep: Callable[[float], None],
              why: str, folder: Path | None = None) -> None:
    """Wait until each of `windows` has room for one more post to the robot `key` (its
    webhook URL), and note the post's time. Other processes' posts to the same robot wait
    for the lock meanwhile, then for a slot after this one; the post itself holds nothing,
    so a slow answer does not hold the others. `why` says what is waited for, in the
    notice a wait of a second or more prints. Without a writable cache folder (a
    read-only home) nothing is paced."""
    if not windows:
        return
    folder = folder or pace_folder()
    try:
        import fcntl

        folder.mkdir(parents=True, exist_ok=True)
        fd = os.open(folder / hashlib.sha256(key.encode()).hexdigest()[:32], os.O_RDWR | os.O_CREAT, 0o600)
    except (ImportError, OSError) as e:  # no fcntl (Windows), or nowhere to keep the times
        log.debug("posting unpaced: %s", e)
        return
    with os.fdopen(fd, "r+", encoding="ascii", errors="replace") as fh:  # a damaged byte loses its line only
        try:
            fcntl.flock(fh, fcntl.LOCK_EX)  # released when the file is closed
            _wait_and_note(fh, windows, clock, sleep, why)
        except OSError as e:  # a file system without locks, a full disk: the post goes out unpaced
            log.debug("posting unpaced: %s", e)


def _wait_and_note(fh, windows: tuple[Window, ...], clock: Callable[[], float], sleep: Callable[[float], None],
                   why: str) -> None:
    """Under the lock: wait for room in every window, then write the times back with this post's."""
    longest = max(seconds for _, seconds in windows)
    now = clock()
    times = sorted(t for t in _times(fh.read()) if now - longest < t <= now)
    wait = max((recent[-count] + seconds - now for count, seconds in windows
                if len(recent := [t for t in times if t > now - seconds]) >= count), default=0.0)
    if wait > 0:
        if wait >= 1:
            log.warning("waiting %.0f s before posting: %s", wait, why)
        sleep(wait)
        now = max(clock(), now + wait)
    times = [t for t in times if t > now - longest] + [now]
    fh.seek(0)
    fh.truncate()
    fh.write("".join(f"{t:.3f}\n" for t in times))
    fh.flush()  # here, where a full disk is caught, not when the file is closed


def _times(text: str) -> Iterator[float]:
    for line in text.split():
        try:
            yield float(line)
        except ValueError:  # a damaged file: its times are lost, not the post
            continue
