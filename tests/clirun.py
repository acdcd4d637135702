"""Run the `repobrief` CLI in-process and capture what a user would see."""

from __future__ import annotations

import contextlib
import io

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
