"""Benchmark: backfill a whole history against a bare `git log --numstat`.

    .venv/bin/python bench/bench_backfill.py                    # the replayed verl history (~95 weeks)
    .venv/bin/python bench/bench_backfill.py --commits 100000   # a synthetic history of 100,000 commits
    .venv/bin/python bench/bench_backfill.py --line-width 50    # verl with lines as long as code's

The synthetic history cycles the real verl history: the cycles follow one another
and the last one ends where verl does (a backfill reports no week still to come);
when that would start before 1971 (git keeps no earlier dates), every date is
brought closer to the end by the same factor (100,000 commits: 0.88, so weeks
hold 1/0.88 times verl's commits); each cycle renumbers the PRs and moves the files under a folder of
its own (so files keep verl's sizes instead of growing without end). Each
command runs in a fresh process. Times: the medians of `--runs` alternated runs
of the bare log and the backfill, and the ratio backfill / bare git log. Memory:
one more run of each, sampling the summed PSS of the command and every process it
starts (workers, git) every 50 ms (not during the timed runs: reading it costs
CPU). CPU: the median user + system time of each command and the processes it
started (git included); divided by the CPU count, it is the best wall time any
schedule could reach, printed as the best ratio this machine allows. Where the time
goes, from two more kinds of run: the serial start (launch to the first worker's
fork, which one core does alone; the floor counting it), and git's CPU per kind of
git process (a shim first on PATH times each one), the rest of the CPU being
repobrief's Python. Targets (issue 6): ratio ≤ 1.5 and, for 100,000 commits, peak
memory ≤ 300 MB.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from benchenv import first_fork_seconds, git_cpu, user_env  # noqa: E402
from gitrepo import GIT_ENV, _data, _ident, load_history, replay_history  # noqa: E402

_PR = re.compile(r"#(\d+)")


def _tree(pid: int) -> list[int]:
    """`pid` and all its descendants (from /proc/PID/task/TID/children)."""
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        try:
            for tid in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{tid}/children") as f:
                    todo.extend(int(c) for c in f.read().split())
        except OSError:
            pass
    return out


def _pss_mb(pids: list[int]) -> tuple[float, float]:
    """(repobrief's processes, git's processes): their proportional set sizes in MB.
    Shared pages (a forked worker's inherited heap, a pack file mapped by several
    gits) count once, split between the processes sharing them."""
    own = git = 0
    for p in pids:
        try:
            with open(f"/proc/{p}/comm") as f:
                is_git = f.read().strip() == "git"
            with open(f"/proc/{p}/smaps_rollup") as f:
                pss = next(int(line.split()[1]) for line in f if line.startswith("Pss:"))
        except (OSError, StopIteration, ValueError):
            continue
        if is_git:
            git += pss
        else:
            own += pss
    return own / 1024, git / 1024


# The settings repobrief's git source runs git with (see sources/git.py: _git_env): the
# allocator's, and output written in whole buffers.
TUNED_GIT = {"MALLOC_TRIM_THRESHOLD_": str(1 << 30), "GIT_FLUSH": "0"}


_ENV = user_env()


def measure(cmd: list[str], env: dict[str, str] | None = None, memory: bool = False) -> tuple[float, float, float, float]:
    """(wall seconds, peak MB of the command's own processes, peak MB of them and the
    git processes they start together, CPU seconds of all of them). With `memory`, the
    process tree's PSS is sampled every 50 ms (reading it costs CPU the command then
    lacks, so the times are taken in runs without sampling)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=_ENV | (env or {}))
    own_peak = all_peak = 0.0
    while memory and proc.poll() is None:
        own, git = _pss_mb(_tree(proc.pid))
        own_peak, all_peak = max(own_peak, own), max(all_peak, own + git)
        time.sleep(0.05)
    proc.wait()
    wall = time.perf_counter() - t
    if proc.returncode != 0:
        raise SystemExit(f"{cmd[0]} failed: {proc.stderr.read().decode()[-2000:]}")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)  # a process's own, and its reaped descendants'
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, own_peak, all_peak, cpu


def _median(runs: list[tuple[float, ...]], field: int = 0) -> float:
    """The median wall time (or another field of `measure`'s result)."""
    return sorted(r[field] for r in runs)[len(runs) // 2]


def synthetic(dest: Path, commits: int) -> Path:
    """Cycle the verl history into `commits` commits with git fast-import, streaming."""
    rows = list(reversed(load_history("verl-project__verl")))  # oldest first
    first = datetime.fromisoformat(rows[0]["committer"]["date"])
    last = datetime.fromisoformat(rows[-1]["committer"]["date"])
    period = (last - first) + timedelta(days=7)
    cycles = -(-commits // len(rows))
    # Cycle c of n lies (n - 1 - c) periods before the real history; scaled toward its end
    # when the whole would start before 1971 (git has no dates before 1970).
    earliest = datetime(1971, 1, 1, tzinfo=last.tzinfo)
    scale = min(1.0, (last - earliest) / (period * cycles))
    dest.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", "-b", "main", str(dest)], check=True, env={**os.environ, **GIT_ENV})
    fi = subprocess.Popen(["git", "-C", str(dest), "fast-import", "--quiet", "--done"], stdin=subprocess.PIPE,
                          env={**os.environ, **GIT_ENV})
    assert fi.stdin is not None
    mark = counter = 0
    cycle = 0
    while mark < commits:
        state: dict[str, list[bytes]] = {}  # per cycle: files live under c{cycle}/
        back = period * (cycles - 1 - cycle)
        for row in rows:
            if mark >= commits:
                break
            mark += 1

            def moved(person: dict, back: timedelta = back) -> dict:
                when = datetime.fromisoformat(person["date"])
                when = (last + (when - back - last) * scale).astimezone(when.tzinfo)  # the person's own offset
                return {**person, "date": when.isoformat()}

            subject = _PR.sub(lambda m, c=cycle: f"#{int(m.group(1)) + c * 100_000}", row["subject"])
            msg = subject + ("\n\n" + row["body"] if row.get("body") else "")
            out = [b"commit refs/heads/main\nmark :%d\n" % mark,
                   b"author " + _ident(moved(row["author"])) + b"\n",
                   b"committer " + _ident(moved(row["committer"])) + b"\n",
                   _data(msg.encode("utf-8", "replace"))]
            if mark > 1:
                out.append(b"from :%d\n" % (mark - 1))
            for f in row["files"]:
                path = f"c{cycle}/{f['path']}".encode()
                if f["added"] is None:
                    counter += 1
                    out.append(b"M 100644 inline " + path + b"\n" + _data(b"\x00bin%d" % counter))
                    continue
                lines = state.get(f["path"], [])[f["deleted"]:]
                for _ in range(f["added"]):
                    counter += 1
                    lines.append(b"L%d\n" % counter)
                if not lines:
                    state.pop(f["path"], None)
                    out.append(b"D " + path + b"\n")
                    continue
                state[f["path"]] = lines
                out.append(b"M 100644 inline " + path + b"\n" + _data(b"".join(lines)))
            fi.stdin.write(b"".join(out))
        cycle += 1
    fi.stdin.write(b"done\n")
    fi.stdin.close()
    if fi.wait() != 0:
        raise SystemExit("git fast-import failed")
    return dest


def weeks_of(repo: Path, tz: str) -> tuple[str, str]:
    from zoneinfo import ZoneInfo

    dates = subprocess.run(["git", "-C", str(repo), "log", "--format=%cI", "--first-parent", "HEAD"],
                           capture_output=True, text=True, check=True).stdout.split()
    z = ZoneInfo(tz)
    newest, oldest = (datetime.fromisoformat(d).astimezone(z) for d in (dates[0], dates[-1]))
    label = "{0}-W{1:02d}".format
    return label(*oldest.isocalendar()[:2]), label(*newest.isocalendar()[:2])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--commits", type=int, default=0, help="build a synthetic history of this many commits")
    ap.add_argument("--repo", type=Path, help="an existing repository to backfill")
    ap.add_argument("--keep", type=Path, help="build the repository here and keep it")
    ap.add_argument("--workers", type=int, default=0, help="backfill worker processes (default: repobrief's own)")
    ap.add_argument("--runs", type=int, default=3, help="alternated runs of each command; medians are printed")
    ap.add_argument("--line-width", type=int, default=0,
                    help="replay verl with each added line this long (real code: 30-50) instead of `L123`")
    args = ap.parse_args()
    if args.keep is not None and args.repo is None and args.keep.exists():
        ap.error(f"--keep {args.keep} exists: benchmark what it holds again with --repo {args.keep}, "
                 "or remove it to build it anew")
    tz = "Asia/Shanghai"
    with tempfile.TemporaryDirectory() as tmp:
        repo = args.repo
        if repo is None:
            dest = args.keep or Path(tmp) / "repo"
            t = time.perf_counter()
            repo = (synthetic(dest, args.commits) if args.commits
                    else replay_history("verl-project__verl", dest, line_width=args.line_width))
            print(f"built {dest} in {time.perf_counter() - t:.1f} s")
        count = subprocess.run(["git", "-C", str(repo), "rev-list", "--count", "HEAD"], capture_output=True,
                               text=True, check=True).stdout.strip()
        first, last = weeks_of(repo, tz)
        exe = str(Path(sys.executable).with_name("repobrief"))
        out = Path(tmp) / "out"
        backfill = [exe, "backfill", str(repo), "--name", "verl-project/verl", "--tz", tz, "--from", first, "--to", last,
                    "--format", "json", "--out", str(out), "-q"]
        if args.workers:
            backfill += ["--workers", str(args.workers)]
        bare = ["git", "-C", str(repo), "log", "--first-parent", "--numstat", "HEAD"]
        measure(bare)  # warm the page cache
        # Alternate the two commands and keep the medians: this machine's speed drifts by
        # tens of percent from one minute to the next.
        bares, tuned, fills = [], [], []
        for _ in range(args.runs):
            bares.append(measure(bare))
            tuned.append(measure(bare, TUNED_GIT))
            shutil.rmtree(out, ignore_errors=True)
            fills.append(measure(backfill))
        g_wall, t_wall, b_wall = (_median(runs) for runs in (bares, tuned, fills))
        g_mem = measure(bare, memory=True)[2]
        shutil.rmtree(out, ignore_errors=True)
        _, b_own, b_mem, _ = measure(backfill, memory=True)
        ratios = sorted(f[0] / g[0] for g, f in zip(bares, fills, strict=True))
        weeks = len(list(out.iterdir()))
        sample = json.loads(sorted(out.iterdir())[-1].read_text(encoding="utf-8"))

        def clear() -> None:
            shutil.rmtree(out, ignore_errors=True)

        start = min(first_fork_seconds(backfill, _ENV, clear) for _ in range(3))
        clear()
        gits = git_cpu(backfill, _ENV, _git_kind)
    print(f"commits: {count}, weeks {first} .. {last}: {weeks} reports written "
          f"(last week: {sample['stats']['merged_prs']} PRs)")
    print(f"bare git log --first-parent --numstat: {g_wall:8.2f} s   peak {g_mem:7.1f} MB (git)")
    print(f"  the same with repobrief's git settings (allocator, buffered output): {t_wall:.2f} s "
          f"(ratio against it: {b_wall / t_wall:.2f}x)")
    print(f"repobrief backfill (json):             {b_wall:8.2f} s   peak {b_own:7.1f} MB (repobrief's processes; "
          f"target ≤ 300), {b_mem:.1f} MB with the git processes it runs")
    print(f"ratio backfill / bare git log:         {b_wall / g_wall:8.2f}x  (target ≤ 1.5; medians of {args.runs} runs)")
    cpus, g_cpu, b_cpu = os.cpu_count() or 1, _median(bares, 3), _median(fills, 3)
    print(f"CPU time (user + system, git included): bare log {g_cpu:.2f} s, backfill {b_cpu:.2f} s. On {cpus} CPUs no "
          f"schedule beats {b_cpu / cpus:.2f} s: a ratio of {b_cpu / cpus / g_wall:.2f}x at best")
    if args.runs > 1:
        print("ratios of the alternated pairs:       " + ", ".join(f"{r:.2f}" for r in ratios))
    print(f"per week: {1000 * b_wall / max(weeks, 1):.1f} ms")
    floor = start + max(0.0, b_cpu - start) / cpus
    print(f"where the time goes:\n  serial start, launch to the first worker's fork: {start:.2f} s (min of 3); counting "
          f"it, no schedule beats {floor:.2f} s: {floor / g_wall:.2f}x at best")
    git_total = sum(cpu for cpu, _ in gits.values())
    print(f"  CPU of one more backfill's git processes (each timed by a shim on PATH): {git_total:.2f} s "
          f"(the bare log: {g_cpu:.2f} s)")
    for name in sorted(gits, key=lambda k: -gits[k][0]):
        cpu, calls = gits[name]
        print(f"    {name:<48} {cpu:6.2f} s  {calls:4d} process{'es' if calls != 1 else ''}")
    print(f"  repobrief's Python (the backfill's CPU above less its git's): {b_cpu - git_total:.2f} s, "
          f"{(b_cpu - git_total) / g_cpu:.2f}x the bare log's CPU")


def _git_kind(args: list[str]) -> str:
    """What a git process of a backfill is for, from its arguments (sources/git.py)."""
    if "--raw" in args and ("--numstat" in args or "-p" in args):  # -p: the patch gives the counts
        return "line-count passes (log --raw --numstat or -p)"
    if "-p" in args:
        return "the detectors' diffs (log -p -U0)"
    if "-M" in args:
        return "rename detection (log -M)"
    if "--numstat" in args:
        return "line counts of listed commits"
    if ("rev-list" in args and "--timestamp" in args) or any(a.startswith("--format=%ct%x00%an") for a in args):
        return "the index (first-parent line, authors' walk)"
    if "--raw" in args:
        return "structure passes (log --raw)"
    return "other (rev-parse, config, …)"


if __name__ == "__main__":
    main()
