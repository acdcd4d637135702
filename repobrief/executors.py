"""Executors: where `repobrief run` runs its repository jobs.

An executor has one method, `run(jobs, on_result)`, which runs
`repobrief.team.run_job` for every job and returns the results in job order,
calling `on_result` as each finishes (for progress). Executors are looked up by
name in `repobrief.registry.EXECUTORS`, so a cluster executor (Ray: one remote
task per job, the output folder on shared storage, the store on PostgreSQL)
plugs in beside the local ones without touching the runner.

- `local` (the default): worker processes on this machine, forked
  (`repobrief.forkpool`). The report pipeline is Python (the GIL) around
  `git log` subprocesses, so processes are what use a second core; one per
  CPU; bench/bench_run.py measures it. A worker that dies takes only its own
  job with it. Interrupted (Ctrl-C, or SIGTERM, which the CLI turns into one),
  the run stops its workers instead of waiting for their jobs; a worker also
  stops when its parent dies.
- `threads`: worker threads in this process, for callers that must not fork
  (and for comparison in the benchmark).
- `serial`: one job after another in this process (debugging, profiling).
"""

from __future__ import annotations

import os
import signal
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, ClassVar

from .stopping import die_with_parent
from .team import JobResult, RepoJob, run_job

if TYPE_CHECKING:
    from concurrent import futures

OnResult = Callable[[JobResult], None]


class Executor(ABC):
    """Runs repository jobs. Subclasses implement `run`."""

    name: ClassVar[str]

    def __init__(self, workers: int | None = None) -> None:
        self.workers = workers

    def worker_count(self, jobs: int) -> int:
        # One worker per CPU: a job keeps about a core busy by itself, its Python and its
        # `git log` child together; more workers only thrash (bench/bench_run.py).
        return max(1, min(jobs, self.workers or os.cpu_count() or 1))

    @abstractmethod
    def run(self, jobs: Sequence[RepoJob], on_result: OnResult | None = None) -> list[JobResult]:
        """Run every job; return one `JobResult` per job, in the jobs' order."""


class SerialExecutor(Executor):
    name = "serial"

    def run(self, jobs: Sequence[RepoJob], on_result: OnResult | None = None) -> list[JobResult]:
        results = []
        for job in jobs:
            results.append(run_job(job))
            if on_result:
                on_result(results[-1])
        return results


class _PoolExecutor(Executor):
    def _pool(self, workers: int) -> futures.Executor:
        raise NotImplementedError

    def _stop(self, pool: futures.Executor) -> None:
        """Interrupted (Ctrl-C, SIGTERM): start no more jobs; stop the running ones if possible."""
        pool.shutdown(wait=False, cancel_futures=True)

    @contextmanager
    def _running(self, workers: int) -> Iterator[futures.Executor]:
        with self._pool(workers) as pool:
            try:
                yield pool
            except BaseException:
                # Leaving the block waits for the pool: without this, for every job it holds.
                self._stop(pool)
                raise

    def run(self, jobs: Sequence[RepoJob], on_result: OnResult | None = None) -> list[JobResult]:
        from concurrent import futures

        if not jobs:
            return []
        results: dict[int, JobResult] = {}
        orphans: list[RepoJob] = []

        def done(res: JobResult) -> None:
            results[res.index] = res
            if on_result:
                on_result(res)

        with self._running(self.worker_count(len(jobs))) as pool:
            pending = {pool.submit(run_job, job): job for job in jobs}
            for fut in futures.as_completed(pending):
                job = pending[fut]
                try:
                    done(fut.result())
                except futures.BrokenExecutor:
                    orphans.append(job)  # a worker died and took the pool's unfinished jobs with it
                except Exception as e:  # noqa: BLE001 - the job could not even be sent or returned
                    done(_worker_failed(job, e))
        # Which job killed its worker is unknown: run each orphan alone, so only that one fails.
        for job in sorted(orphans, key=lambda j: j.index):
            with self._running(1) as pool:
                try:
                    done(pool.submit(run_job, job).result())
                except Exception as e:  # noqa: BLE001 - it died again: this is the repository that kills workers
                    done(_worker_failed(job, e))
        return [results[job.index] for job in jobs]


def _worker_failed(job: RepoJob, e: BaseException) -> JobResult:
    from concurrent.futures import BrokenExecutor

    from .forkpool import WorkerDied

    what = "the worker process died" if isinstance(e, (BrokenExecutor, WorkerDied)) else f"the worker failed ({type(e).__name__}: {e})"
    return JobResult(job.index, job.label, False, error=what,
                     hint="run this repository alone with `repobrief report` to see why", exit_code=1, stage="worker")


class LocalExecutor(Executor):
    """Worker processes forked from this one (`repobrief.forkpool`): they inherit its
    imported modules, loaded catalogs and templates, and the jobs. Where there is no
    fork, a spawning process pool."""

    name = "local"

    def run(self, jobs: Sequence[RepoJob], on_result: OnResult | None = None) -> list[JobResult]:
        if not jobs:
            return []
        if not hasattr(os, "fork"):
            return _SpawnPool(self.workers).run(jobs, on_result)  # its workers import everything anew
        _warm_imports(jobs)
        from .forkpool import ForkPool

        pool = ForkPool(jobs, run_job, _worker_failed, on_result, worker_started=worker_started)
        return pool.run(self.worker_count(len(jobs)))


class _SpawnPool(_PoolExecutor):
    def _pool(self, workers: int) -> futures.Executor:
        import multiprocessing
        from concurrent import futures

        return futures.ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn"),
                                           initializer=worker_started, initargs=(os.getpid(),))

    def _stop(self, pool: futures.Executor) -> None:
        # The pool has no public way to stop its workers before Python 3.14 (terminate_workers),
        # and shutdown forgets them. Terminated, a worker's report is written whole or not at
        # all (output.write_atomically).
        procs = list((getattr(pool, "_processes", None) or {}).values())
        super()._stop(pool)
        for proc in procs:
            proc.terminate()


class ThreadExecutor(_PoolExecutor):
    name = "threads"

    def _pool(self, workers: int) -> futures.Executor:
        from concurrent import futures

        return futures.ThreadPoolExecutor(workers, thread_name_prefix="repobrief-job")


def worker_started(parent: int) -> None:
    """A worker stops on SIGTERM (it may have inherited the CLI's handler, which would
    make it a job's error) and when the parent dies, so none writes on as an orphan."""
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    die_with_parent(parent)


def _warm_imports(jobs: Sequence[RepoJob]) -> None:
    """Import and load what every job needs once, before forking, so each worker does not
    (≈ 50 ms for an offline md + json job: the pipeline's modules, a catalog, a template)."""
    import ctypes  # noqa: F401 - die_with_parent, in every worker

    from .pipeline import warm_up
    from .targets import resolve_target

    # Resolved as the jobs will resolve them: a clone's path is no source name to look up.
    warm_up({resolve_target(job.target)[0] for job in jobs},
            {job.settings.engine for job in jobs}, {f for job in jobs for f in job.formats},
            {lang for job in jobs for lang in (*job.languages, *job.extra_languages)})


__all__ = ["Executor", "LocalExecutor", "SerialExecutor", "ThreadExecutor"]
