"""The local executor's pool of forked workers (`repobrief.forkpool`), on its own:
results in order and as they come, failures that stay with their item, a worker
killed mid-job, and a parent that stops its workers when it is interrupted."""

from __future__ import annotations

import os
import time

import pytest

from repobrief.forkpool import ForkPool, WorkerDied

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="fork only")


def _failed(item, error):
    return (item, "failed", type(error).__name__)


def test_results_come_in_the_items_order_from_the_workers_and_each_is_seen_once():
    seen = []
    out = ForkPool(list(range(12)), lambda i: (i, os.getpid()), _failed, seen.append).run(3)
    assert [i for i, _ in out] == list(range(12))
    pids = {pid for _, pid in out}
    assert os.getpid() not in pids and 1 <= len(pids) <= 3
    assert sorted(seen) == sorted(out)


def test_an_item_that_raises_or_will_not_pickle_fails_alone_and_its_worker_goes_on():
    def work(item):
        if item == "raises":
            raise ValueError("bad item")
        if item == "unpicklable":
            return lambda: None
        return (item, os.getpid())

    out = ForkPool(["a", "raises", "unpicklable", "b"], work, _failed).run(1)
    assert out[1] == ("raises", "failed", "ValueError")
    assert out[2][:2] == ("unpicklable", "failed")
    assert out[0][1] == out[3][1]  # one worker did all four: none of it ended the worker


def test_a_killed_worker_loses_only_its_item_which_runs_again_alone(tmp_path):
    """The item whose worker dies is tried once more, alone, after the others; the items
    beside it are not run again; a new worker takes the items left."""
    runs = tmp_path / "runs"
    runs.mkdir()

    def work(item):
        (runs / f"{item}-{os.getpid()}").touch()
        if item == "killer":
            os._exit(9)
        return item

    items = ["a", "killer", "b", "c", "d"]
    out = ForkPool(items, work, _failed).run(2)
    assert out == ["a", ("killer", "failed", WorkerDied.__name__), "b", "c", "d"]
    names = [p.name.split("-")[0] for p in runs.iterdir()]
    assert sorted(names) == ["a", "b", "c", "d", "killer", "killer"]


def test_an_interrupted_parent_stops_its_workers_before_the_error_goes_on(tmp_path):
    """`on_result` raising (as Ctrl-C would, in the parent) stops the workers still busy
    with long items: none of them is left running."""
    pids = tmp_path / "pids"
    pids.mkdir()

    def work(item):
        (pids / str(os.getpid())).touch()
        if item != "quick":
            time.sleep(120)
        return item

    def on_result(result):
        deadline = time.monotonic() + 30  # both slow items have started
        while len(list(pids.iterdir())) < 3 and time.monotonic() < deadline:
            time.sleep(0.02)
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        ForkPool(["quick", "slow", "slower"], work, _failed, on_result).run(3)
    workers = [int(p.name) for p in pids.iterdir()]
    assert len(workers) == 3
    for pid in workers:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)  # stopped and collected: not even a zombie is left


def test_the_run_returns_without_waiting_for_its_workers_to_exit_and_none_is_left_a_zombie(monkeypatch):
    """A worker ends its results before its exit (which unmaps its memory, a few ms), so
    the parent goes on at once; the worker is collected at the next pool's start or, at
    the latest, when this process exits — here by an explicit collection."""
    from repobrief import forkpool

    real_exit = os._exit

    def slow_exit(code):  # runs in the worker only: the parent never calls os._exit
        time.sleep(2)
        real_exit(code)

    monkeypatch.setattr(os, "_exit", slow_exit)
    out = ForkPool(["a", "b"], lambda item: (item, os.getpid()), _failed).run(1)
    monkeypatch.setattr(os, "_exit", real_exit)
    assert [item for item, _ in out] == ["a", "b"]
    (pid,) = {pid for _, pid in out}
    os.kill(pid, 0)  # still exiting: the run did not wait for it
    assert pid in forkpool._exiting

    ForkPool(["c"], lambda item: item, _failed).run(1)  # a later pool collects what has exited by then
    forkpool._collect_exited(block=True)  # as at this process's exit
    assert not forkpool._exiting
    with pytest.raises(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)  # collected: not even a zombie is left


def test_a_caller_that_ignores_sigchld_still_gets_every_result():
    """With SIGCHLD ignored the kernel collects the workers itself; the pool must not
    trip over a worker that is already gone."""
    import signal

    previous = signal.signal(signal.SIGCHLD, signal.SIG_IGN)
    try:
        out = ForkPool(list(range(6)), lambda i: i * i, _failed).run(2)
    finally:
        signal.signal(signal.SIGCHLD, previous)
    assert out == [i * i for i in range(6)]
