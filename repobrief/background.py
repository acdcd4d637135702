"""A call run in a thread of its own while the caller goes on."""

from __future__ import annotations

import threading


class Background:
    """A call run in a thread of its own, joined for its result (a pool would keep
    idle threads alive between calls, which a delegate's fork must not copy)."""

    def __init__(self, fn, *args) -> None:
        self._out: tuple = ()
        self._thread = threading.Thread(target=self._run, args=(fn, args), daemon=True)
        self._thread.start()

    def _run(self, fn, args) -> None:
        try:
            self._out = (fn(*args), None)
        except BaseException as e:  # noqa: BLE001 - re-raised by result()
            self._out = (None, e)

    def result(self):
        self._thread.join()
        value, error = self._out
        if error is not None:
            raise error
        return value
