"""A pool of forked worker processes for `repobrief run`'s local executor.

Each worker is a fork of the run's process: it inherits the imported modules,
loaded catalogs, compiled templates and the jobs themselves, so nothing is
imported or pickled on the way in. The parent hands one job number at a time
to a free worker down a pipe of its own, and reads pickled results back from
another; so it always knows which job each worker holds, and

- a worker that dies (killed by the kernel for memory, say) takes only its own
  job with it: the jobs beside it finish, a new worker takes over the jobs
  left, and the dead worker's job runs once more alone, after the others (it
  may have died of their memory too); dying again, it fails with a message;
- interrupted (Ctrl-C, or SIGTERM, which the CLI turns into `KeyboardInterrupt`),
  or when `on_result` raises, the parent stops every worker (SIGTERM) and waits
  for them before the exception goes on; a worker also stops when its parent
  dies (`die_with_parent`). A worker ignores Ctrl-C itself: it is the parent's
  to decide, and a report being written is finished or not started
  (`output.write_atomically` holds SIGTERM back for its few renames).

A worker closes its pipes before it exits, so the parent does not wait while
the kernel takes its memory apart; it is collected later (at the next pool's
start, or when this process exits), never left a zombie.

Linux and macOS (`os.fork`); elsewhere the executor uses a spawning pool.
"""

from __future__ import annotations

import atexit
import gc
import os
import pickle
import selectors
import signal
import sys
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from typing import Any

_LENGTH = 8  # bytes of the length before each pickled result


class WorkerDied(Exception):
    """A worker process ended while it held a job, twice (with the others, then alone)."""


class _Worker:
    def __init__(self, pid: int, jobs_w: int, results_r: int) -> None:
        self.pid, self.jobs_w, self.results_r = pid, jobs_w, results_r
        self.job: int | None = None  # the job number it holds
        self.buf = bytearray()

    def fds(self) -> list[int]:
        return [fd for fd in (self.jobs_w, self.results_r) if fd >= 0]


class ForkPool:
    """Runs `work(item)` for every item in `size` forked workers; `run` returns the
    results in the items' order. `failed(item, error)` makes the result of an item
    whose `work` raised, whose result would not pickle, or whose worker died twice
    (`WorkerDied`); `on_result` sees each result as it arrives, in the parent. The
    items stay in the parent: a worker is sent only an item's number."""

    def __init__(self, items: Sequence[Any], work: Callable[[Any], Any], failed: Callable[[Any, BaseException], Any],
                 on_result: Callable[[Any], None] | None = None, *, worker_started: Callable[[int], None] | None = None):
        self.items, self.work, self.failed, self.on_result = items, work, failed, on_result
        self.worker_started = worker_started
        self.todo: deque[int] = deque()
        self.workers: dict[int, _Worker] = {}  # by the fd its results come on
        self.results: dict[int, Any] = {}
        self.died: list[int] = []
        self.sel = selectors.DefaultSelector()

    def run(self, size: int) -> list[Any]:
        _collect_exited()
        try:
            self._drain(range(len(self.items)), size)
            for i in sorted(self.died):
                self.died = []
                self._drain([i], 1)
                if self.died:
                    self._finish(i, self.failed(self.items[i], WorkerDied()))
        except BaseException:
            self._stop()
            raise
        finally:
            self.sel.close()
        return [self.results[i] for i in range(len(self.items))]

    def _drain(self, numbers: Iterable[int], size: int) -> None:
        self.todo.extend(numbers)
        for _ in range(min(size, len(self.todo))):
            self._fork()
        while self.workers:
            for key, _ in self.sel.select():
                self._read(key.data)

    def _fork(self) -> None:
        jobs_r, jobs_w = os.pipe()
        results_r, results_w = os.pipe()
        for stream in (sys.stdout, sys.stderr):  # else what they buffer would be written again by the child
            stream.flush()
        parent = os.getpid()
        gc.freeze()  # the worker's collector must not walk (and so copy) the pages it shares
        try:
            pid = os.fork()
        except BaseException:
            gc.unfreeze()
            for fd in (jobs_r, jobs_w, results_r, results_w):
                os.close(fd)
            raise
        if pid == 0:  # the worker: it must never return into the parent's code
            code = 0
            try:
                os.close(jobs_w)
                os.close(results_r)
                for w in self.workers.values():
                    for fd in w.fds():
                        os.close(fd)
                self._serve(jobs_r, results_w, parent)
            except BaseException:  # noqa: BLE001 - ends the worker; the parent sees its job lost
                code = 1
            finally:
                for stream in (sys.stdout, sys.stderr):
                    try:
                        stream.flush()
                    except Exception:  # noqa: BLE001, S110 - exiting anyway
                        pass
                # Closed before the exit, which first unmaps the worker's memory (a few ms)
                # and only then closes its files: the parent sees the end of the results
                # now, and a caller reading our output through a pipe is not held either.
                for fd in (results_w, jobs_r, 0, 1, 2):
                    try:
                        os.close(fd)
                    except OSError:
                        pass
                os._exit(code)
        gc.unfreeze()  # the parent's own objects stay collectable (a library caller lives on)
        os.close(jobs_r)
        os.close(results_w)
        w = _Worker(pid, jobs_w, results_r)
        self.workers[results_r] = w
        self.sel.register(results_r, selectors.EVENT_READ, w)
        self._hand_out(w)

    def _serve(self, jobs_r: int, results_w: int, parent: int) -> None:
        # A no-op handler, not SIG_IGN: that would be inherited by the worker's git processes.
        signal.signal(signal.SIGINT, lambda signum, frame: None)
        if self.worker_started:
            self.worker_started(parent)
        while len(head := os.read(jobs_r, 4)) == 4:
            item = self.items[int.from_bytes(head, "little")]
            try:
                result = self.work(item)
            except Exception as e:  # noqa: BLE001 - one item's bug is its own failure, not its worker's
                result = self.failed(item, e)
            try:
                data = pickle.dumps(result, pickle.HIGHEST_PROTOCOL)
            except Exception as e:  # noqa: BLE001 - a result that cannot be sent back is a failure of its own
                data = pickle.dumps(self.failed(item, e), pickle.HIGHEST_PROTOCOL)
            view = memoryview(len(data).to_bytes(_LENGTH, "little") + data)
            while view:
                view = view[os.write(results_w, view):]

    def _hand_out(self, w: _Worker) -> None:
        """The next job to `w`, or the end of its jobs (it exits)."""
        if self.todo:
            w.job = self.todo.popleft()
            try:
                os.write(w.jobs_w, w.job.to_bytes(4, "little"))
                return
            except BrokenPipeError:  # it has died: its results pipe says so next
                self.todo.appendleft(w.job)
                w.job = None
        os.close(w.jobs_w)
        w.jobs_w = -1

    def _read(self, w: _Worker) -> None:
        chunk = os.read(w.results_r, 1 << 16)
        if not chunk:
            self._reap(w)
            return
        w.buf += chunk
        while len(w.buf) >= _LENGTH:
            size = int.from_bytes(w.buf[:_LENGTH], "little")
            if len(w.buf) < _LENGTH + size:
                break
            result = pickle.loads(w.buf[_LENGTH:_LENGTH + size])
            del w.buf[:_LENGTH + size]
            done, w.job = w.job, None
            self._finish(done, result)
            self._hand_out(w)

    def _finish(self, i: int | None, result: Any) -> None:
        assert i is not None
        self.results[i] = result
        if self.on_result:
            self.on_result(result)

    def _reap(self, w: _Worker) -> None:
        """`w` has ended (its results pipe closed): collect it; a job it held was lost."""
        self.sel.unregister(w.results_r)
        for fd in w.fds():
            os.close(fd)
        del self.workers[w.results_r]
        _exiting.add(w.pid)
        _collect_exited()
        if w.job is not None:
            self.died.append(w.job)
        if self.todo:  # it died (a worker ends by itself only when no job is left): one in its place
            self._fork()

    def _stop(self) -> None:
        """Stop every worker now and wait for each (a report mid-commit is finished)."""
        for w in self.workers.values():
            try:
                os.kill(w.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
        for w in self.workers.values():
            for fd in w.fds():
                os.close(fd)
            try:
                os.waitpid(w.pid, 0)
            except ChildProcessError:
                pass
        self.workers.clear()


# Workers that closed their pipes and are still exiting (unmapping their memory): the
# parent goes on without waiting for them, and collects them later — at the next pool's
# start, or when the process exits — so no worker is left a zombie.
_exiting: set[int] = set()


def _collect_exited(block: bool = False) -> None:
    for pid in list(_exiting):
        try:
            done = os.waitpid(pid, 0 if block else os.WNOHANG)[0] != 0
        except ChildProcessError:  # collected already (SIGCHLD ignored, or a caller's own waitpid(-1))
            done = True
        if done:
            _exiting.discard(pid)


atexit.register(_collect_exited, block=True)


__all__ = ["ForkPool", "WorkerDied"]
