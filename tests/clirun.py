"""Run the `repobrief` CLI (in-process, or as a real process to signal) and capture what a user would see."""

from __future__ import annotations

import contextlib
import io
import subprocess
import sys
import time
from pathlib import Path

from repobrief.cli import main


def run_cli(*argv: str) -> tuple[int, str, str]:
    """(exit code, stdout, stderr) of `repobrief ARGV…`."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main(list(argv))
            code = 0
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    return code, out.getvalue(), err.getvalue()


def start_cli(*argv: str, cwd) -> subprocess.Popen:
    """`repobrief ARGV…` as a real process in a process group of its own (its pid), as a
    shell starts a command that `timeout` or CI may stop with SIGTERM."""
    return subprocess.Popen([sys.executable, "-c", "from repobrief.cli import main; main()", *argv], cwd=cwd,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)


def live_processes(group: int) -> list[int]:
    """The processes of a process group that still run (not zombies), orphans included."""
    pids = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == group and fields[0] != "Z":
            pids.append(int(stat.parent.name))
    return pids


def wait_until(condition, timeout: float = 60.0) -> bool:
    """Poll `condition` until it holds or `timeout` seconds have passed; its last value."""
    deadline = time.monotonic() + timeout
    while not (ok := condition()) and time.monotonic() < deadline:
        time.sleep(0.05)
    return bool(ok)
