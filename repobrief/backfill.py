"""Backfill: write the report of every week of a span, on all cores.

The weeks are cut into contiguous runs, one per worker process; each worker
reads its run with `generate_reports` (one pass over that part of the history,
in parts of `PART_WEEKS` weeks) and renders and writes its own files, so only
progress crosses between processes. One worker runs in-process.
"""

from __future__ import annotations

import multiprocessing
import os
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
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


def default_workers(settings: Settings, target: str, weeks: int, source_name: str | None = None) -> int:
    """All cores for offline reports from a clone; one process otherwise (a model
    endpoint or an API has limits of its own, shared by the whole run)."""
    from .pipeline import resolve_target

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
        for w, p in _write_weeks(job, windows):
            done, written, prs = done + 1, written + w, prs + p
            if progress:
                progress(done, len(windows))
        return BackfillResult(len(windows), written, prs, time.perf_counter() - started, 1)
    source = _indexed_source(target, settings, source_name, offline)
    try:
        return _parallel((*job[:-1], source), windows, workers, progress, started)
    finally:
        if source is not None:
            source.close()


def _indexed_source(target: str, settings: Settings, source_name: str | None, offline: bool):
    """A source that needs no store (a clone), opened and indexed here once: the forked
    workers inherit what it read about the whole history instead of each reading it."""
    from .pipeline import open_source, resolve_target
    from .registry import SOURCES

    if getattr(SOURCES.get(resolve_target(target, source_name)[0]), "needs_store", True):
        return None
    source = open_source(target, settings, source_name=source_name, offline=offline)
    source.index()
    return source


def _write_weeks(job: tuple, windows: list[Window]):
    """Yield (files written: 0/1, PRs) per week, oldest first."""
    from .output import write_atomically
    from .pipeline import generate_reports, output_name, render_report

    target, settings, out, formats, skip_empty, source_name, offline, now, source = job
    for rep in generate_reports(target, settings, windows, source_name=source_name, offline=offline, now=now,
                                source=source):
        if skip_empty and not rep.pull_requests:
            yield 0, rep.stats["merged_prs"]
            continue
        write_atomically({out / output_name(rep, f): render_report(rep, f) for f in formats})
        yield 1, rep.stats["merged_prs"]


def _split(windows: list[Window], n: int) -> list[list[Window]]:
    size, extra = divmod(len(windows), n)
    runs, i = [], 0
    for k in range(n):
        j = i + size + (1 if k < extra else 0)
        runs.append(windows[i:j])
        i = j
    return runs


def _worker(job: tuple, windows: list[Window], queue) -> None:
    try:
        for w, p in _write_weeks(job, windows):
            queue.put(("week", w, p))
        queue.put(("done",))
    except RepobriefError as e:
        queue.put(("error", type(e).__name__, e.message, e.hint, e.exit_code))
    except BaseException as e:  # noqa: BLE001 - reported by the parent, which exits non-zero
        queue.put(("crash", f"{type(e).__name__}: {e}", traceback.format_exc()))


def _parallel(job: tuple, windows: list[Window], workers: int, progress, started: float) -> BackfillResult:
    ctx = multiprocessing.get_context("fork")
    queue = ctx.Queue()
    procs = [ctx.Process(target=_worker, args=(job, run, queue), daemon=True) for run in _split(windows, workers)]
    for p in procs:
        p.start()
    if progress:  # only now: a progress display may start threads, which a fork must not copy
        progress(0, len(windows))
    done = written = prs = finished = 0
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
                if progress:
                    progress(done, len(windows))
            elif msg[0] == "done":
                finished += 1
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
    return BackfillResult(len(windows), written, prs, time.perf_counter() - started, workers)
