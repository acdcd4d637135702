"""The environment benchmarks time `repobrief` commands in.

pip compiles a package's `.pyc` files when it installs it, so a user's start-up
reads bytecode. An editable install compiles on first import instead, and not
at all where PYTHONDONTWRITEBYTECODE is set (some CI images and sandboxes set
it): every timed run would then compile repobrief's sources again, ~0.05 s of
start-up that no user pays. PYTHONUNBUFFERED, which a development shell may set
too, goes as well: a user's output is buffered.
"""

from __future__ import annotations

import compileall
import importlib.util
import os
import shutil
import subprocess
from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from pathlib import Path


def user_env(**extra: str) -> dict[str, str]:
    """os.environ without repobrief's own settings and without the interpreter settings a
    development shell adds (PYTHONDONTWRITEBYTECODE, PYTHONUNBUFFERED), plus `extra`;
    repobrief's bytecode is compiled first (as pip would have)."""
    spec = importlib.util.find_spec("repobrief")
    for folder in spec.submodule_search_locations if spec else ():
        compileall.compile_dir(Path(folder), quiet=1)
    dev_only = ("PYTHONDONTWRITEBYTECODE", "PYTHONUNBUFFERED")
    env = {k: v for k, v in os.environ.items() if not k.startswith("REPOBRIEF_") and k not in dev_only}
    env.update(extra)
    return env


def kept_facts(cache: Path, snapshot: Path) -> tuple[Callable[[], None], Callable[[], None]]:
    """For timing commands by what the runs before them kept when they start: the git
    facts (`repobrief/sources/gitfacts.py`) and the repositories' last job times
    (`repobrief/durations.py`, the order `run` starts them in). Saves both now under
    `cache` (an `XDG_CACHE_HOME`) to `snapshot`, and returns two preparations: `nothing`
    removes them (a clone's first report, a config's first run), `saved` puts the
    snapshot back (e.g. what the week before kept). Other cached things (compiled
    templates) stay."""
    facts = cache / "repobrief" / "git"
    times = cache / "repobrief" / "durations.json"
    shutil.copytree(facts, snapshot / "git")
    if times.exists():
        shutil.copy(times, snapshot / times.name)

    def nothing() -> None:
        shutil.rmtree(facts, ignore_errors=True)
        times.unlink(missing_ok=True)

    def saved() -> None:
        nothing()
        shutil.copytree(snapshot / "git", facts)
        if (snapshot / times.name).exists():
            shutil.copy(snapshot / times.name, times)

    return nothing, saved


def pulled_clone(repo: Path, clone: Path) -> Callable[[datetime], None]:
    """A clone of `repo` (`git clone --bare --shared`: no copy of its objects) and a
    function that moves the clone's branch to `repo`'s last mainline commit before a
    time, as if it had been pulled then: a weekly job's clone, week after week."""
    subprocess.run(["git", "clone", "-q", "--bare", "--shared", str(repo), str(clone)], check=True)
    branch = subprocess.run(["git", "-C", str(clone), "symbolic-ref", "--short", "HEAD"], capture_output=True,
                            text=True, check=True).stdout.strip()

    def stand_at(end: datetime) -> None:
        tip = subprocess.run(["git", "-C", str(repo), "rev-list", "--first-parent", "-1", f"--before={end.isoformat()}",
                              "HEAD"], capture_output=True, text=True, check=True).stdout.strip()
        subprocess.run(["git", "-C", str(clone), "update-ref", f"refs/heads/{branch}", tip], check=True)

    return stand_at


SHANGHAI = timezone(timedelta(hours=8))  # Asia/Shanghai, where the benchmarks read their weeks


def monday(week: str) -> datetime:
    """The start of ISO week `YYYY-Www` in Asia/Shanghai."""
    year, number = (int(x) for x in week.split("-W"))
    return datetime.fromisocalendar(year, number, 1).replace(tzinfo=SHANGHAI)


def week_label(day: datetime) -> str:
    """The ISO week `day` falls in, as `YYYY-Www`."""
    year, number, _ = day.isocalendar()
    return f"{year}-W{number:02d}"
