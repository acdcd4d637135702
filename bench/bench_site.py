"""Benchmark: `repobrief site` drawing its weekly pages in one process against every core.

    .venv/bin/python bench/bench_site.py                 # 10 weeks of the replayed verl history
    .venv/bin/python bench/bench_site.py --weeks 26 --runs 5 --repo PATH

A week's page costs ≈ 0.7 s when matplotlib (the `charts` extra) draws its charts, most
of a site's time; `site` draws the pages in forked workers (`--workers`, default every
core). Each command runs in a fresh process, into a new folder; the two are alternated
`--runs` times and the medians printed, with the CPU time (user + system) of each and
the ratio of the two walls. Without matplotlib the pages take milliseconds and are
drawn in one process: the benchmark says so and measures nothing.
"""

from __future__ import annotations

import argparse
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from benchenv import user_env  # noqa: E402
from gitrepo import replay_history  # noqa: E402

from repobrief.render import charts  # noqa: E402

_ENV = user_env()


def measure(cmd: list[str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the command and every process it started)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(cmd, check=True, env=_ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repo", type=Path, help="an existing clone (default: the verl history, replayed)")
    ap.add_argument("--until-week", default="2026-W30", help="the newest week (default 2026-W30)")
    ap.add_argument("--weeks", type=int, default=10, help="weeks in the site (default 10)")
    ap.add_argument("--runs", type=int, default=3, help="alternated runs of each command; medians are printed")
    args = ap.parse_args()
    if not charts.matplotlib_available():
        print("matplotlib (the charts extra) is not installed: pages take milliseconds and are drawn in one process")
        return
    with tempfile.TemporaryDirectory() as tmp:
        repo = args.repo or replay_history("verl-project__verl", Path(tmp) / "verl")
        exe = str(Path(sys.executable).with_name("repobrief"))
        out = Path(tmp) / "site"
        site = [exe, "site", str(repo), "--name", "verl-project/verl", "--tz", "Asia/Shanghai", "--until-week",
                args.until_week, "--weeks", str(args.weeks), "--out", str(out), "-q"]
        runs: dict[str, list[tuple[float, float]]] = {"1": [], "0": []}
        for _ in range(args.runs):
            for workers in runs:
                shutil.rmtree(out, ignore_errors=True)
                runs[workers].append(measure([*site, "--workers", workers]))
    one, every = ([statistics.median(r[i] for r in runs[w]) for i in (0, 1)] for w in ("1", "0"))
    print(f"site of {args.weeks} weeks ending {args.until_week}, medians of {args.runs} alternated runs:")
    print(f"  one process (--workers 1):   {one[0]:6.2f} s   CPU {one[1]:6.2f} s   {one[0] / args.weeks:.2f} s per week")
    print(f"  every core (default):        {every[0]:6.2f} s   CPU {every[1]:6.2f} s")
    print(f"  speed-up on this machine's cores: {one[0] / every[0]:.2f}x")


if __name__ == "__main__":
    main()
