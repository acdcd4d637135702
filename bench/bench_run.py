"""Benchmark: `repobrief run` over 4 replayed repositories against the slowest single one.

Replays verl and flask from ../shared/data, plus two shifted and renamed copies
(verl one week later, flask moved so its busiest week lands on the report
week), so the four repositories have different content for the same week. Then
times, each in a fresh interpreter (start-up counts, as for a user):

- `repobrief report` of each repository alone (md + json to a folder), and
- `repobrief run --config team.toml` over all four (the same outputs),
  with each executor (worker processes, threads, serial),

and prints the wall times, the ratio run / slowest single repository (target
<= 1.2 on 2 cores) and the CPU count it ran on.

    .venv/bin/python bench/bench_run.py [--runs 5] [--week 2026-W04] [--keep DIR]
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from datetime import datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from gitrepo import load_history, replay_history  # noqa: E402


def shifted(rows: list[dict], weeks: int) -> list[dict]:
    """The history with every author and committer date moved by `weeks` weeks."""
    delta = timedelta(weeks=weeks)
    out = []
    for row in rows:
        row = dict(row)
        for who in ("author", "committer"):
            person = dict(row[who])
            person["date"] = (datetime.fromisoformat(person["date"]) + delta).isoformat()
            row[who] = person
        out.append(row)
    return out


def busiest_week(rows: list[dict]) -> tuple[int, int]:
    """The ISO week with the most PR commits (squash `(#N)` or `Merge pull request #N`)."""
    prs = [r for r in rows if re.search(r"\(#\d+\)\s*$|^Merge pull request #\d+", r["subject"])]
    weeks = Counter(datetime.fromisoformat(r["committer"]["date"]).isocalendar()[:2] for r in prs)
    return weeks.most_common(1)[0][0]


def weeks_between(a: tuple[int, int], b: tuple[int, int]) -> int:
    da = datetime.fromisocalendar(a[0], a[1], 1)
    db = datetime.fromisocalendar(b[0], b[1], 1)
    return (db - da).days // 7


def timed(cmd: list[str], runs: int, env: dict) -> list[float]:
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        proc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
        times.append(time.perf_counter() - t)
        if proc.returncode != 0:
            sys.exit(f"failed ({proc.returncode}): {' '.join(cmd)}\n{proc.stderr.decode()[-2000:]}")
    return times


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--week", default="2026-W04", help="the report week (verl merged 22 PRs in 2026-W04)")
    ap.add_argument("--keep", type=Path, help="replay into DIR and keep it (reused when it exists)")
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="rb-bench-run-")
    base = args.keep or Path(tmp)
    try:
        _bench(args, base, Path(tmp))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _bench(args, base: Path, scratch: Path) -> None:
    year, week = (int(x) for x in args.week.split("-W"))
    verl = load_history("verl-project__verl")
    flask = load_history("pallets__flask")
    flask_shift = weeks_between(busiest_week(flask), (year, week))
    repos = {
        "verl-project/verl": ("verl", verl),
        "pallets/flask": ("flask", flask),
        "verl-copy/verl-next-week": ("verl-shifted", shifted(verl, 1)),
        "flask-copy/flask-busiest": ("flask-shifted", shifted(flask, flask_shift)),
    }
    t = time.perf_counter()
    paths = {}
    for name, (folder, rows) in repos.items():
        dest = base / folder
        if not (dest / ".git").exists():
            replay_history(name, dest, rows=rows)
        paths[name] = dest
    print(f"replayed 4 repositories in {time.perf_counter() - t:.1f} s into {base}")

    env = {k: v for k, v in os.environ.items() if not k.startswith("REPOBRIEF_")}
    env["XDG_DATA_HOME"] = str(scratch / "data")  # a fresh default store, never the user's
    exe = str(Path(sys.executable).with_name("repobrief"))
    team = scratch / "team.toml"
    body = 'out = "out"\nformats = ["md", "json"]\nlanguages = ["en"]\n'
    for name, path in paths.items():
        body += f'\n[[repositories]]\nsource = "{path}"\nname = "{name}"\ntimezone = "Asia/Shanghai"\n'
    team.write_text(body, encoding="utf-8")

    common = ["--week", args.week, "--tz", "Asia/Shanghai", "--lang", "en", "--format", "md,json", "-q"]
    timed([exe, "report", str(paths["verl-project/verl"]), "--name", "verl-project/verl", *common,
           "--out", str(scratch / "warm")], 1, env)  # page cache and .pyc files

    singles = {}
    for name, path in paths.items():
        singles[name] = statistics.median(timed([exe, "report", str(path), "--name", name, *common,
                                                 "--out", str(scratch / "single")], args.runs, env))
    cpus = os.cpu_count() or 1
    slowest_name = max(singles, key=singles.get)
    slowest = singles[slowest_name]
    total_single = sum(singles.values())

    load = ", load average {:.1f} {:.1f} {:.1f}".format(*os.getloadavg()) if hasattr(os, "getloadavg") else ""
    print(f"\nweek {args.week}, {cpus} CPUs{load}, median of {args.runs} runs, md + json, offline engine")
    for name, secs in singles.items():
        merged = _merged(scratch / "single", name, args.week)
        print(f"  repobrief report {name:<26} {secs * 1000:7.0f} ms   ({merged} PRs)")
    print(f"  sum of the 4 single reports              {total_single * 1000:7.0f} ms")

    results = {}
    for executor, workers in (("local", None), ("local", cpus), ("threads", None), ("serial", None)):
        cmd = [exe, "run", "--config", str(team), "--week", args.week, "--executor", executor, "-q",
               "--out", str(scratch / f"run-{executor}")]
        if workers:
            cmd += ["--workers", str(workers)]
        label = f"{executor} ({workers or 'default'} workers)" if executor != "serial" else "serial"
        results[label] = statistics.median(timed(cmd, args.runs, env))
    print()
    for label, secs in results.items():
        print(f"  repobrief run, 4 repos, {label:<24} {secs * 1000:7.0f} ms   "
              f"ratio to slowest single {secs / slowest:4.2f}x   to sum of singles {secs / total_single:4.2f}x")
    best = results["local (default workers)"]
    user = _cpu_seconds([exe, "run", "--config", str(team), "--week", args.week, "-q", "--executor", "serial",
                         "--out", str(scratch / "cpu")], env)
    print(f"  CPU time of one serial run: {user:.2f} s for 4 repositories ({user / 4:.2f} s per repository, start-up included)")
    print(f"\nratio run (local, default workers) / slowest single ({slowest_name}): {best / slowest:.2f}x "
          f"(target <= 1.2: {'met' if best / slowest <= 1.2 else 'NOT met'})")


def _cpu_seconds(cmd: list[str], env: dict) -> float:
    """User + system CPU seconds of `cmd` and its children (git included)."""
    before = os.times()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    after = os.times()
    return (after.children_user - before.children_user) + (after.children_system - before.children_system)


def _merged(folder: Path, name: str, week: str) -> int:
    import json

    path = folder / f"{name.replace('/', '__')}-{week}.en.json"
    return json.loads(path.read_text())["stats"]["merged_prs"]


if __name__ == "__main__":
    main()
