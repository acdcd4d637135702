"""Backfill: write the report of every week of a span, on all cores.

The parent indexes the clone once (first-parent line, authors' first commits)
and cuts the weeks into contiguous runs of about equal commits, one per worker
process; each worker reads its run with `generate_reports` (one pass over that
part of the history, in parts of `PART_WEEKS` weeks) and renders and writes its
own files, so only progress crosses between processes. When a worker finishes
early, the others hand half of what they have left to the idle core (see
`_IdleCores`). One worker runs in-process.
"""

from __future__ import annotations

import gc
import multiprocessing
import os
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from .config import Settings
from .errors import RepobriefError
from .window import Window

# Fewer weeks than this per worker are not worth a process.
MIN_WEEKS_PER_WORKER = 8


@dataclass
class BackfillResult:
    weeks: int
    written: int
    prs: int
    seconds: float
    workers: int
    helpers: int = 0  # processes started for cores that became idle (see _IdleCores)
    warnings: list[str] = field(default_factory=list)  # the reports' warnings (a shallow clone, …), each once


def default_workers(settings: Settings, target: str, weeks: int, source_name: str | None = None) -> int:
    """All cores for offline reports from a clone; one process otherwise (a model
    endpoint or an API has limits of its own, shared by the whole run)."""
    from .targets import resolve_target

    if settings.engine != "offline" or resolve_target(target, source_name)[0] != "git":
        return 1
    return max(1, min(os.cpu_count() or 1, weeks // MIN_WEEKS_PER_WORKER))


def backfill(
    target: str,
    settings: Settings,
    windows: list[Window],
    out: Path,
    formats: list[str],
    *,
    workers: int | None = None,
    skip_empty: bool = False,
    progress: Callable[[int, int], None] | None = None,
    source_name: str | None = None,
    offline: bool = False,
    now: datetime | None = None,
) -> BackfillResult:
    """Write `{out}/{owner}__{repo}-{week}.{lang}.{ext}` for every week in `windows`."""
    started = time.perf_counter()
    windows = sorted(windows, key=lambda w: w.start)
    if workers is None:
        workers = default_workers(settings, target, len(windows), source_name)
    workers = max(1, min(workers, len(windows)))
    if workers > 1 and "fork" not in multiprocessing.get_all_start_methods():
        workers = 1  # the workers inherit the settings and windows by fork
    job = (target, settings, out, formats, skip_empty, source_name, offline, now, None)
    if workers == 1:
        if progress:
            progress(0, len(windows))
        done = written = prs = 0
        warnings: dict[str, None] = {}
        for w, p, warned in _write_weeks(job, windows):
            done, written, prs = done + 1, written + w, prs + p
            warnings.update(dict.fromkeys(warned))
            if progress:
                progress(done, len(windows))
        return BackfillResult(len(windows), written, prs, time.perf_counter() - started, 1,
                              warnings=_said_once(list(warnings), settings.language))
    from .background import Background
    from .registry import SOURCES
    from .targets import needs_store, open_source, resolve_target

    kind = resolve_target(target, source_name)[0]
    # A source that needs no store (a clone) is opened and indexed here once: the forked
    # workers inherit what it read about the whole history instead of each reading it.
    # The index's git processes run while the modules the workers need are imported: the
    # pipeline's, not imported before this point (on one core, the parent's start is the
    # part of a backfill nothing overlaps). The source's module is imported here first,
    # so that the two threads never import the same modules at once.
    def indexed():
        opened = open_source(target, settings, source_name=source_name, offline=offline)
        try:
            opened.index()
        except BaseException:
            opened.close()
            raise
        return opened

    indexing = Background(indexed) if not needs_store(SOURCES.get(kind)) else None
    from .pipeline import warm_up

    warm_up({kind}, {settings.engine}, set(formats), {settings.language})
    source = indexing.result() if indexing is not None else None  # its thread has ended: workers may fork
    try:
        return _parallel((*job[:-1], source), windows, workers, progress, started)
    finally:
        if source is not None:
            source.close()


def _write_weeks(job: tuple, windows: list[Window], delegate=None):
    """Yield (files written: 0/1, PRs, warnings) per week this process builds, oldest first."""
    from .pipeline import generate_reports

    target, settings, out, formats, skip_empty, source_name, offline, now, source = job
    for rep in generate_reports(target, settings, windows, source_name=source_name, offline=offline, now=now,
                                source=source, delegate=delegate):
        yield _write_report(job, rep)


def _write_report(job: tuple, rep) -> tuple[int, int, list[str]]:
    from .output import write_atomically
    from .pipeline import output_name, render_report

    out, formats, skip_empty = job[2], job[3], job[4]
    if skip_empty and not rep.pull_requests and not rep.direct_commits:
        return 0, rep.stats["merged_prs"], rep.warnings
    write_atomically({out / output_name(rep, f): render_report(rep, f) for f in formats})
    return 1, rep.stats["merged_prs"], rep.warnings


# Fewer weeks than this are not worth handing to a new process.
MIN_WEEKS_TO_HAND_OVER = 4


class _IdleCores:
    """The `Delegate` of a worker: when another worker has finished (a core is idle)
    and this one still has work, half of what is left goes to another process. Later
    parts go to a new worker that the parent forks from its own small heap (forked
    from here, it would keep a copy of this worker's history). The rest of the part in
    hand goes to a helper forked here, which builds it from the history already read.
    A history's weeks do not cost the same (later PRs are larger), so an even split of
    weeks alone leaves a core idle at the end."""

    def __init__(self, job: tuple, queue, idle) -> None:
        self.job, self.queue, self.idle = job, queue, idle
        self.helpers: list = []

    def _claim(self, weeks: int) -> bool:
        if weeks < MIN_WEEKS_TO_HAND_OVER or self.idle.value <= 0:
            return False
        if _other_threads():
            return False
        with self.idle.get_lock():
            if self.idle.value <= 0:
                return False
            self.idle.value -= 1
            return True

    def give_parts(self, parts: list[list[Window]]) -> int:
        weeks = sum(len(p) for p in parts)
        if len(parts) < 2 or not self._claim(weeks // 2):
            return 0
        n, given = 0, 0
        while given < weeks // 2 and n < len(parts) - 1:  # whole parts from the end, about half the weeks
            n += 1
            given += len(parts[-n])
        self.queue.put(("worker", [w for p in parts[-n:] for w in p]))  # the parent starts it
        return n

    def give_weeks(self, weeks: list[Window], build) -> int:
        n = len(weeks) // 2
        if not self._claim(n):
            return 0
        _trim_heap()  # the helper's allocations would otherwise copy pages of freed memory
        proc = multiprocessing.get_context("fork").Process(target=_helper, args=(self.job, weeks[-n:], build, self.queue,
                                                                                 self.idle, os.getpid()))
        proc.start()
        self.helpers.append(proc)
        self.queue.put(("helper",))
        return n

    def join(self) -> None:
        for proc in self.helpers:
            proc.join()
            if proc.exitcode != 0:
                raise RepobriefError(f"a backfill helper process died (exit code {proc.exitcode})",
                                     "run again with --workers 1 to see the error")


def _worker(job: tuple, windows: list[Window], queue, idle, parent: int) -> None:
    _stop_helpers_with_me(parent)
    _one_malloc_arena()
    delegate = _IdleCores(job, queue, idle)

    def run() -> None:
        for week in _write_weeks(job, windows, delegate):
            queue.put(("week", *week))
        _finish(idle)
        if delegate.helpers:  # the history is dropped: give its memory back while the helpers work
            _trim_heap()
        delegate.join()

    if _report_errors(queue, run):
        queue.put(("done",))


def _helper(job: tuple, windows: list[Window], build, queue, idle, parent: int) -> None:
    """Builds the weeks a worker handed over from the history it had read (a fork of it)."""
    gc.freeze()  # the collector must not walk (and so copy) the pages shared with the worker
    _stop_helpers_with_me(parent)

    def run() -> None:
        for w in windows:
            queue.put(("week", *_write_report(job, build(w))))
        _finish(idle)

    _report_errors(queue, run)


def _other_threads() -> list[threading.Thread]:
    """Threads a fork would copy mid-work (an engine's client, say), with their locks.
    The queue's feeder thread is not one: multiprocessing resets it in the child."""
    main = threading.main_thread()
    return [t for t in threading.enumerate() if t is not main and t.name != "QueueFeederThread"]


def _one_malloc_arena() -> None:
    """glibc gives each new thread a malloc arena of its own, and a worker reads each part
    in a new thread: freed memory spread over several arenas was not reused, and a
    worker grew by ~1 MB a part (100,000 commits: 150 MB instead of 110 MB). Python
    allocates under its GIL anyway, so one arena costs no speed. Elsewhere: nothing."""
    libc = _glibc()
    if libc is not None and hasattr(libc, "mallopt"):
        libc.mallopt(-8, 1)  # M_ARENA_MAX


def _trim_heap() -> None:
    """Give freed memory back to the kernel (glibc keeps it for reuse otherwise): a worker
    waiting for its helpers holds no history any more, but its pages stayed counted."""
    gc.collect()
    libc = _glibc()
    if libc is not None and hasattr(libc, "malloc_trim"):
        libc.malloc_trim(0)


def _glibc():
    """The C library, when it is glibc (whose allocator the two functions above tune)."""
    import ctypes
    import platform

    if platform.libc_ver()[0] != "glibc":
        return None
    try:
        return ctypes.CDLL(None)
    except OSError:
        return None


def _finish(idle) -> None:
    """This process's own weeks are done: its core is free (while it waits for its helpers)."""
    with idle.get_lock():
        idle.value += 1


def _stop_helpers_with_me(parent: int) -> None:
    """When the parent stops this process (another worker failed, the run was interrupted)
    or dies without stopping it (killed), this process stops, and its helpers with it."""
    import signal

    from .stopping import die_with_parent

    def stop(signum, frame) -> None:
        for child in multiprocessing.active_children():
            child.terminate()
        os._exit(128 + signum)

    signal.signal(signal.SIGTERM, stop)
    die_with_parent(parent)


def _report_errors(queue, fn, *args) -> bool:
    """Run `fn`; an error goes to the parent through `queue` (True: it ran through)."""
    try:
        fn(*args)
        return True
    except RepobriefError as e:
        queue.put(("error", type(e).__name__, e.message, e.hint, e.exit_code))
    except BaseException as e:  # noqa: BLE001 - reported by the parent, which exits non-zero
        queue.put(("crash", f"{type(e).__name__}: {e}", traceback.format_exc()))
    return False


# A week's cost in commits' worth of work, whatever it holds (its themes, composition, files).
WEEK_COST = 10


def _split(windows: list[Window], n: int, commits: list[int] | None = None) -> list[list[Window]]:
    """`n` contiguous runs of about equal work: each week weighs `WEEK_COST` plus its
    mainline commits when they are known (a history busy in some years and quiet in
    others would otherwise load one worker with the busy years)."""
    weights = [WEEK_COST + (c if commits else 0) for c in (commits or [0] * len(windows))]
    total = sum(weights)
    runs: list[list[Window]] = []
    start = acc = 0
    for i, w in enumerate(weights):
        acc += w
        left = n - len(runs) - 1  # runs still to cut after this one
        # Cut when this run has its share, keeping at least one week for every later run.
        if left and (acc >= total * (len(runs) + 1) / n or len(windows) - i - 1 == left):
            runs.append(windows[start:i + 1])
            start = i + 1
    runs.append(windows[start:])
    return runs


def _parallel(job: tuple, windows: list[Window], workers: int, progress, started: float) -> BackfillResult:
    ctx = multiprocessing.get_context("fork")
    queue = ctx.Queue()
    idle = ctx.Value("i", max(0, (os.cpu_count() or 1) - workers))  # cores no worker uses (now)
    source = job[-1]
    commits = source.commits_per_window(windows) if source is not None else None
    procs: list = []

    def start(run: list[Window]) -> None:
        # The parent's heap (modules, templates, the index) is shared with every worker;
        # frozen, the workers' collectors do not walk it, and so do not copy its pages.
        gc.freeze()
        # Not a daemon: a worker may fork helpers (see _IdleCores); it stops them if it is stopped.
        procs.append(ctx.Process(target=_worker, args=(job, run, queue, idle, os.getpid())))
        procs[-1].start()

    for run in _split(windows, workers, commits):
        start(run)
    if progress:  # workers are started later too: `progress` must not start threads (a fork would copy their locks)
        progress(0, len(windows))
    done = written = prs = finished = helpers = 0
    warnings: dict[str, None] = {}
    try:
        while finished < len(procs):
            try:
                msg = queue.get(timeout=1.0)
            except Exception:  # noqa: BLE001 - queue.Empty: check that no worker died silently
                dead = [p for p in procs if p.exitcode not in (None, 0)]
                if dead:
                    raise RepobriefError(
                        f"a backfill worker died (exit code {dead[0].exitcode}); the weeks it wrote are kept",
                        "run again with --workers 1 to see the error",
                    ) from None
                continue
            if msg[0] == "week":
                done, written, prs = done + 1, written + msg[1], prs + msg[2]
                warnings.update(dict.fromkeys(msg[3]))
                if progress:
                    progress(done, len(windows))
            elif msg[0] == "done":
                finished += 1
            elif msg[0] == "helper":
                helpers += 1
            elif msg[0] == "worker":  # a worker hands later parts over to a core that became idle
                start(msg[1])
                helpers += 1
            elif msg[0] == "error":  # the same error, raised here as if the run were in-process
                from . import errors

                cls = getattr(errors, msg[1], None)
                err = cls(msg[2], msg[3]) if isinstance(cls, type) and issubclass(cls, RepobriefError) else RepobriefError(msg[2], msg[3])
                err.exit_code = msg[4]
                raise err
            else:
                raise RuntimeError(f"a backfill worker failed: {msg[1]}\n{msg[2]}")
    finally:
        for p in procs:
            if p.is_alive():
                p.terminate()
            p.join()
    return BackfillResult(len(windows), written, prs, time.perf_counter() - started, workers, helpers,
                          _said_once(list(warnings), job[1].language))


def _said_once(warnings: list[str], language: str) -> list[str]:
    from .pipeline import said_once

    return said_once(warnings, language)
