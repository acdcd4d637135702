"""A guard against a call that hangs on hostile text (a regex that backtracks), not a
timing: each guarded call takes milliseconds.

The call runs in a forked process, which is killed when it has not returned in time:
a regex runs in C without letting other threads run, so a thread could not stop it,
nor could the test's thread notice the time pass until the regex ended (minutes)."""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable
from typing import Any


def finishes(fn: Callable[[Any], Any], arg: Any, *, within: float = 60) -> Any:
    """`fn(arg)`, or a failure if it has not returned after `within` seconds. The result
    (or the exception) comes back pickled from the forked process."""
    ctx = multiprocessing.get_context("fork")
    recv, send = ctx.Pipe(duplex=False)

    def run() -> None:
        try:
            send.send((True, fn(arg)))
        except BaseException as e:  # noqa: BLE001 - raised again in the test's process
            send.send((False, e))

    proc = ctx.Process(target=run, daemon=True)
    proc.start()
    send.close()
    try:
        if not recv.poll(within):
            raise AssertionError(f"{getattr(fn, '__name__', 'the call')} did not return within {within:g} s "
                                 f"on {str(arg)[:40]!r}…")
        ok, value = recv.recv()
    finally:
        proc.kill()
        proc.join()
        recv.close()
    if not ok:
        raise value
    return value
