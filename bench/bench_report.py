"""Benchmark: one week's report on the replayed verl history, end to end.

Prints the wall time of `repobrief report … --week 2026-W26` (a fresh
interpreter each run, so start-up and imports count) against a bare
`git log --numstat` over the same commits (the report week plus the baseline
weeks the trends need), and their ratio. Target: under 1 second.

The report is timed with nothing kept from earlier reports (the first report
of a clone), with what the report of the week before kept (a weekly job: see
`repobrief/sources/gitfacts.py`), and with this week's (a re-run); the cache
folder is a temporary one, never the user's. Last, as a weekly job meets it: a
clone (`git clone --shared`) whose branch stood at the end of the week before
when that week was reported, and was then pulled to the end of this week.

    .venv/bin/python bench/bench_report.py [--runs 7] [--repo PATH] [--week 2026-W26]

(`--repo` with `--week 2025-W32` times the synthetic history that
`bench_backfill.py --commits 100000 --keep DIR` builds.)
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from benchenv import kept_facts, monday, pulled_clone, user_env, week_label  # noqa: E402
from gitrepo import replay_history  # noqa: E402


def week_args(week: str) -> list[str]:
    return ["--name", "verl-project/verl", "--week", week, "--tz", "Asia/Shanghai", "--lang", "zh"]


def timed(cmd: list[str], runs: int, env: dict[str, str], prepare=lambda: None) -> tuple[float, float]:
    times = []
    for _ in range(runs):
        prepare()
        t = time.perf_counter()
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
        times.append(time.perf_counter() - t)
    return statistics.median(times), min(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--repo", type=Path, help="an existing replay of verl (default: replay into a temp dir)")
    ap.add_argument("--week", default="2026-W26", help="the week reported (verl merged 22 PRs in 2026-W26)")
    args = ap.parse_args()
    start = monday(args.week)
    # The span the report reads: its 12 baseline weeks and the week.
    since, until = (start - timedelta(weeks=13)).isoformat(), (start + timedelta(weeks=1)).isoformat()
    before = week_label(start - timedelta(weeks=1))
    with tempfile.TemporaryDirectory() as tmp:
        repo = args.repo
        if repo is None:
            t = time.perf_counter()
            repo = replay_history("verl-project__verl", Path(tmp) / "verl")
            print(f"replayed verl history in {time.perf_counter() - t:.2f} s")
        exe = Path(sys.executable).with_name("repobrief")
        report = [str(exe), "report", str(repo), *week_args(args.week), "--format", "md", "-q"]
        report_json = [str(exe), "report", str(repo), *week_args(args.week), "--format", "json", "-q"]
        bare = ["git", "-C", str(repo), "log", "--numstat", f"--since={since}", f"--until={until}", "HEAD"]
        noop = [sys.executable, "-c", "pass"]
        env = user_env(XDG_CACHE_HOME=str(Path(tmp) / "cache"))
        timed([str(exe), "report", str(repo), *week_args(before), "-q"], 1, env)  # also warms the page cache
        nothing, kept_last_week = kept_facts(Path(tmp) / "cache", Path(tmp) / "last-week")
        r_med, r_min = timed(report, args.runs, env, nothing)
        j_med, _ = timed(report_json, args.runs, env, nothing)
        w_med, w_min = timed(report, args.runs, env, kept_last_week)
        t_med, t_min = timed(report, args.runs, env)
        g_med, g_min = timed(bare, args.runs, env)
        p_med, _ = timed(noop, args.runs, env)
        commits = subprocess.run(["git", "-C", str(repo), "rev-list", "--count", f"--since={since}", "HEAD"],
                                 capture_output=True, text=True, check=True).stdout.strip()
        m_med, m_min = _pulled_a_week_later(Path(repo), Path(tmp), exe, args, start, before)
    print(f"commits read (week + 12 baseline weeks): {commits}")
    print(f"python start-up (no-op):          median {p_med * 1000:7.1f} ms")
    print(f"bare git log --numstat:           median {g_med * 1000:7.1f} ms   min {g_min * 1000:7.1f} ms")
    print(f"repobrief report (md, zh):        median {r_med * 1000:7.1f} ms   min {r_min * 1000:7.1f} ms   (nothing kept)")
    print(f"repobrief report (json):          median {j_med * 1000:7.1f} ms   (nothing kept)")
    print(f"  with last week's git facts:     median {w_med * 1000:7.1f} ms   min {w_min * 1000:7.1f} ms")
    print(f"  with this week's (a re-run):    median {t_med * 1000:7.1f} ms   min {t_min * 1000:7.1f} ms")
    print(f"  a week later, clone pulled:     median {m_med * 1000:7.1f} ms   min {m_min * 1000:7.1f} ms")
    print(f"ratio report / bare git log:      {r_med / g_med:.2f}x")
    print(f"target < 1000 ms:                 {'met' if r_med < 1.0 else 'NOT met'}")


def _pulled_a_week_later(repo: Path, tmp: Path, exe: Path, args, start: datetime, before: str) -> tuple[float, float]:
    """The weekly job: the week before reported from a clone that stood at its end, then
    this week from the same clone pulled to this week's end (the authors' walk then
    covers the week's new commits), each timed run starting from what the first kept."""
    clone = tmp / "pulled.git"
    stand_at = pulled_clone(repo, clone)

    env = user_env(XDG_CACHE_HOME=str(tmp / "pulled-cache"))
    stand_at(start)
    timed([str(exe), "report", str(clone), *week_args(before), "-q"], 1, env)
    _, kept = kept_facts(tmp / "pulled-cache", tmp / "pulled-last-week")
    stand_at(start + timedelta(weeks=1))
    return timed([str(exe), "report", str(clone), *week_args(args.week), "--format", "md", "-q"], args.runs, env, kept)


if __name__ == "__main__":
    main()
