"""Benchmark: the instructions repobrief's Python executes in a backfill, per revision.

    .venv/bin/python bench/bench_instructions.py --repo <replayed verl> HEAD~3 HEAD
    .venv/bin/python bench/bench_instructions.py --from 2025-W40 --to 2026-W08 BASE HEAD

On a shared machine CPU time drifts by tens of percent from one minute to the next
(docs/performance.md), so a change worth a few percent cannot be told apart by
timing it. Counting instructions can: each revision (a commit or a folder holding a
checkout) runs one backfill in one process (`--workers 1`, JSON) under valgrind's
cachegrind (no cache simulation), with hash randomisation off, and the count of
instructions the Python process executed is the same from one run to the next to
0.1 %. Git's processes are not counted (valgrind does not follow them): this is
repobrief's own work. Prints each count and its ratio to the first revision's.

A count is no time: an instruction of the regex engine and one of the interpreter's
dispatch do not cost the same, and memory stalls are not counted. It tells whether a
change does less work; `bench_backfill.py` says what the work costs in seconds.
Needs valgrind (`apt-get install valgrind`); about a minute per revision for verl's
95 weeks.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from benchenv import user_env  # noqa: E402
from gitrepo import replay_history  # noqa: E402

_IREFS = re.compile(r"I\s+refs:\s+([\d,]+)")


def checkout(rev: str, tmp: Path) -> Path:
    """A folder holding repobrief at `rev`: the folder itself, or a worktree of this repository."""
    if Path(rev, "repobrief", "__init__.py").is_file():
        return Path(rev).resolve()
    dest = tmp / re.sub(r"[^\w.-]", "_", rev)
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "-q", str(dest), rev], check=True)
    return dest


def instructions(tree: Path, repo: Path, first: str, last: str, out: Path, base_env: dict[str, str]) -> int:
    shutil.rmtree(out, ignore_errors=True)
    env = {**base_env, "PYTHONPATH": str(tree)}  # this revision's repobrief, with its bytecode compiled
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(tree / "repobrief")], env=env, check=True,
                   stdout=subprocess.DEVNULL)
    cmd = ["valgrind", "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null",
           sys.executable, "-m", "repobrief", "backfill", str(repo), "--name", "verl-project/verl", "--tz", "Asia/Shanghai",
           "--from", first, "--to", last, "--format", "json", "--out", str(out), "-q", "--workers", "1"]
    res = subprocess.run(cmd, cwd=tree, env=env, capture_output=True, text=True)
    found = _IREFS.search(res.stderr)
    if res.returncode != 0 or found is None:
        sys.exit(f"the backfill failed under valgrind at {tree}:\n{res.stderr[-2000:]}")
    return int(found.group(1).replace(",", ""))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("revs", nargs="+", help="commits of this repository, or folders holding a checkout")
    ap.add_argument("--repo", type=Path, help="the clone to backfill (default: verl's history, replayed)")
    ap.add_argument("--from", dest="first", default="2024-W44", help="first ISO week (default 2024-W44)")
    ap.add_argument("--to", dest="last", default="2026-W34", help="last ISO week (default 2026-W34)")
    args = ap.parse_args()
    if shutil.which("valgrind") is None:
        sys.exit("valgrind is not installed (apt-get install valgrind)")
    with tempfile.TemporaryDirectory(prefix="rb-instr-") as name:
        tmp = Path(name)
        repo = args.repo or replay_history("verl-project__verl", tmp / "verl")
        trees = [checkout(rev, tmp) for rev in args.revs]
        try:
            env = user_env(PYTHONHASHSEED="0")
            counts = [instructions(tree, repo, args.first, args.last, tmp / "out", env) for tree in trees]
        finally:
            for tree in trees:
                if tree.is_relative_to(tmp):
                    subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tree)], check=False)
    print(f"backfill {args.first} .. {args.last} of {repo if args.repo else 'verl (replayed)'}, one process, "
          f"instructions of repobrief's Python (valgrind; git not counted):")
    for rev, n in zip(args.revs, counts, strict=True):
        print(f"  {rev:24s} {n / 1e9:8.3f} G   {n / counts[0]:.3f}x the first")


if __name__ == "__main__":
    main()
