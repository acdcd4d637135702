"""A guard against a call that hangs on hostile text (a regex that backtracks), not a
timing: each guarded call takes milliseconds."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any


def finishes(fn: Callable[[Any], Any], arg: Any, *, within: float = 60) -> Any:
    """`fn(arg)`, or a failure if it has not returned after `within` seconds."""
    done: list = []
    worker = threading.Thread(target=lambda: done.append(fn(arg)), daemon=True)
    worker.start()
    worker.join(within)
    assert done, f"{getattr(fn, '__name__', 'the call')} hung on {str(arg)[:40]!r}…"
    return done[0]
