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
import sys
import tempfile
import time
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


# `repobrief …` printing the moment it forks its first worker (a `run`'s forkpool, a
# backfill's multiprocessing workers) to stderr. Git is started without `os.fork`.
_FIRST_WORKER = """\
import os, sys, time
fork = os.fork
def first():
    if not getattr(first, "seen", False):
        first.seen = True
        print(f"first-worker {time.monotonic()}", file=sys.stderr, flush=True)
    return fork()
os.fork = first
from repobrief.cli import entry
sys.argv = ["repobrief", *sys.argv[1:]]
entry()
"""


def first_fork_seconds(cmd: list[str], env: dict[str, str], prepare: Callable[[], None] | None = None) -> float:
    """Seconds from launching `cmd` (`repobrief …`, the executable first) to its first
    worker's fork: the serial start, which one core does alone. `prepare` runs first."""
    if prepare is not None:
        prepare()
    t = time.monotonic()  # system-wide on Linux: comparable with the child's
    proc = subprocess.run([sys.executable, "-c", _FIRST_WORKER, *cmd[1:]], stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, env=env, check=True, text=True)
    at = [float(line.split()[1]) for line in proc.stderr.splitlines() if line.startswith("first-worker ")]
    if not at:
        sys.exit(f"no worker started: {' '.join(cmd)}\n{proc.stderr[-2000:]}")
    return at[0] - t


# A `git` that runs the real one and appends its CPU time (user + system) and arguments
# to a log. `-S`: no site packages, so the shim itself starts in a few milliseconds.
_GIT_SHIM = """\
#!{python} -S
import os, sys
pid = os.posix_spawn({git!r}, [{git!r}, *sys.argv[1:]], os.environ)
_, status, use = os.wait4(pid, 0)
with open({log!r}, "a", encoding="utf-8", errors="surrogateescape") as f:
    f.write(f"{{use.ru_utime + use.ru_stime}}\\t" + "\\x1f".join(sys.argv[1:]).replace("\\n", " ") + "\\n")
sys.exit(os.waitstatus_to_exitcode(status))
"""


def git_cpu(cmd: list[str], env: dict[str, str], kind: Callable[[list[str]], str]) -> dict[str, tuple[float, int]]:
    """Run `cmd` once with a shim first on PATH that times every `git` process it starts;
    return {kind: (CPU seconds, processes)}, each process named by `kind(its arguments)`."""
    git = shutil.which("git")
    if git is None:
        sys.exit("git is not installed")
    with tempfile.TemporaryDirectory(prefix="rb-git-shim-") as tmp:
        log = Path(tmp) / "git-cpu.log"
        shim = Path(tmp) / "bin" / "git"
        shim.parent.mkdir()
        shim.write_text(_GIT_SHIM.format(python=sys.executable, git=os.path.realpath(git), log=str(log)), encoding="utf-8")
        shim.chmod(0o755)
        path = f"{shim.parent}{os.pathsep}{env.get('PATH', os.defpath)}"
        subprocess.run(cmd, env={**env, "PATH": path}, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        totals: dict[str, tuple[float, int]] = {}
        for line in log.read_text(encoding="utf-8", errors="surrogateescape").splitlines():
            seconds, _, args = line.partition("\t")
            name = kind(args.split("\x1f"))
            cpu, calls = totals.get(name, (0.0, 0))
            totals[name] = (cpu + float(seconds), calls + 1)
    return totals
