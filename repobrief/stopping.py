"""Stopping cleanly: SIGTERM handled like Ctrl-C, child processes that die with
their parent, and a short commit that no signal cuts in half.

`timeout`, systemd and CI cancellation stop a command with SIGTERM, sent to the
command alone (Ctrl-C reaches the whole process group). The CLI turns it into
`Terminated`, a `KeyboardInterrupt`, so the code that stops workers on Ctrl-C
stops them on SIGTERM too; a worker asks the kernel to stop it when its parent
dies, however the parent died (SIGKILL included).
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager


class Terminated(KeyboardInterrupt):
    """The process was sent SIGTERM: stop as on Ctrl-C."""


def _in_main_thread() -> bool:
    # Python runs signal handlers in the main thread and sets them only from there.
    return threading.current_thread() is threading.main_thread()


@contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
    """Within this block SIGTERM raises `Terminated` (in the main thread)."""
    if not _in_main_thread():
        yield
        return

    def terminated(signum, frame) -> None:
        raise Terminated()

    previous = signal.signal(signal.SIGTERM, terminated)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous if previous is not None else signal.SIG_DFL)


@contextmanager
def signals_deferred(signums: tuple[int, ...] = (signal.SIGINT, signal.SIGTERM)) -> Iterator[None]:
    """SIGINT and SIGTERM that arrive within this block take effect at its end: a few
    renames that must all happen, or none, are not stopped half way. (SIGKILL cannot
    be deferred; `output.write_atomically` repairs what it leaves on the next write.)"""
    if not _in_main_thread():
        yield  # the handlers run in the main thread anyway, not in this one
        return
    caught: list[int] = []
    previous = {s: signal.signal(s, lambda signum, frame: caught.append(signum)) for s in signums}
    try:
        yield
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler if handler is not None else signal.SIG_DFL)
        for s in dict.fromkeys(caught):
            signal.raise_signal(s)


def die_with_parent(parent: int, signum: int = signal.SIGTERM) -> None:
    """Have the kernel send `signum` to this (forked) process when `parent`, which forked
    it, exits, so no worker is left writing files for a command that has stopped.

    Linux only (prctl PR_SET_PDEATHSIG); the signal comes when the parent's *thread*
    that forked this process exits, so fork from a thread that outlives the child."""
    if sys.platform.startswith("linux"):
        import ctypes

        try:
            ctypes.CDLL(None, use_errno=True).prctl(1, int(signum), 0, 0, 0)  # PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            pass
    if os.getppid() != parent:  # the parent died before the request was made
        os.kill(os.getpid(), signum)


__all__ = ["Terminated", "die_with_parent", "signals_deferred", "sigterm_as_interrupt"]
