"""Benchmark of the llm engine on the replayed verl week 2026-W26 (22 PRs).

A scripted OpenAI-compatible server on 127.0.0.1 adds a fixed latency (1 s by
default) to every answer. Measured through the real CLI, interpreter start
included:

- a cold `--engine llm --refresh` run at concurrency 8 (target: <= 5 s),
- the cached re-run against the offline report (target: <= 0.3 s more),
- prompt tokens per PR (target: average <= 3,000) and total tokens for the week.

    .venv/bin/python bench/bench_llm.py [--latency 1.0] [--runs 3]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from benchenv import user_env  # noqa: E402
from gitrepo import replay_history  # noqa: E402
from llmserver import ScriptedLLM  # noqa: E402

from repobrief.llm.client import estimate_tokens  # noqa: E402

WEEK, TZ, NAME = "2026-W26", "Asia/Shanghai", "verl-project/verl"


def _repo() -> Path:
    dest = ROOT / "bench" / ".cache" / "verl"
    if not (dest / ".git").exists():
        print("replaying verl history into bench/.cache/verl …", file=sys.stderr)
        replay_history("verl-project__verl", dest)
    return dest


def _cli(repo: Path, db: Path, env: dict, *extra: str) -> tuple[float, dict]:
    cmd = [
        str(Path(sys.executable).parent / "repobrief"), "report", str(repo), "--name", NAME, "--week", WEEK, "--tz", TZ,
        "--lang", "zh", "--format", "json", "--db", str(db), "--quiet", *extra,
    ]
    t0 = time.perf_counter()
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
    elapsed = time.perf_counter() - t0
    if out.returncode != 0:
        raise SystemExit(f"repobrief failed ({out.returncode}):\n{out.stderr}")
    return elapsed, json.loads(out.stdout)


def _in_process(repo: Path, db: Path, base_url: str, concurrency: int) -> float:
    """The same week in this process, with the `openai` SDK imported beforehand, as
    a long-running service (`repobrief run`, a scheduler) would have it."""
    import openai  # noqa: F401 - imported before the clock starts

    from repobrief.config import load_settings
    from repobrief.pipeline import generate_report
    from repobrief.window import parse_timezone, parse_week

    settings = load_settings(
        repo,
        env={},
        overrides={
            "name": NAME, "timezone": TZ, "language": "zh", "engine": "llm", "db": str(db),
            "llm": {"model": "bench-model", "base_url": base_url, "api_key": "sk-bench", "concurrency": concurrency},
        },
    )
    window = parse_week(WEEK, parse_timezone(TZ))
    generate_report(str(repo), settings, window, refresh=True)  # warms this process's other imports
    t0 = time.perf_counter()
    generate_report(str(repo), settings, window, refresh=True)
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--latency", type=float, default=1.0, help="seconds the server waits before each answer")
    ap.add_argument("--runs", type=int, default=3, help="repetitions of the fast (offline / cached) runs")
    ap.add_argument("--concurrency", type=int, default=8)
    args = ap.parse_args()

    repo = _repo()
    env = {k: v for k, v in user_env().items() if not k.startswith("OPENAI_")}
    with tempfile.TemporaryDirectory() as tmp, ScriptedLLM(latency=args.latency) as server:
        db = Path(tmp) / "bench.db"
        llm_env = {**env, "OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "sk-bench"}
        llm_flags = ("--engine", "llm", "--llm-model", "bench-model", "--llm-concurrency", str(args.concurrency))

        _cli(repo, db, env, "--engine", "offline")  # warm the OS file cache and create the store
        cold, report = _cli(repo, db, llm_env, *llm_flags, "--refresh")
        eng = report["engine"]
        pr_calls = [c for c in server.calls if c.kind == "pr" and c.attempt == 0]
        prompt_per_pr = [sum(estimate_tokens(m["content"]) for m in c.body["messages"]) for c in pr_calls]

        warm = _in_process(repo, Path(tmp) / "warm.db", server.base_url, args.concurrency)

        offline = [_cli(repo, db, env, "--engine", "offline")[0] for _ in range(args.runs)]
        before = server.count()
        cached_runs = [_cli(repo, db, llm_env, *llm_flags) for _ in range(args.runs)]
        cached = [t for t, _ in cached_runs]
        assert server.count() == before, "the cached re-run sent requests"

    n_prs = len(report["pull_requests"])
    off, cac = statistics.median(offline), statistics.median(cached)
    avg_prompt = statistics.mean(prompt_per_pr) if prompt_per_pr else 0.0
    print(f"week {WEEK} of {NAME}: {n_prs} PRs; server latency {args.latency:g} s per answer; concurrency {args.concurrency}")
    print(f"cold llm run (CLI, --refresh):   {cold:6.2f} s   target <= 5.00 s   ratio {cold / 5.0:.2f}")
    print(f"  requests {eng['requests']}, retries {eng['retries'] + eng['repair_retries']}, fallbacks {len(eng['fallbacks'])}")
    print(f"  serial lower bound: {eng['requests']} x {args.latency:g} s = {eng['requests'] * args.latency:.1f} s; "
          f"speed-up {eng['requests'] * args.latency / cold:.1f}x")
    print(f"warm llm run (in process, SDK already imported, --refresh): {warm:6.2f} s   target <= 5.00 s   "
          f"ratio {warm / 5.0:.2f}   (lower bound: 3 waves of 8 + 1 composition = {4 * args.latency:.1f} s)")
    print(f"offline report (median of {args.runs}): {off:6.2f} s")
    print(f"cached llm re-run (median of {args.runs}): {cac:6.2f} s   overhead {cac - off:+.2f} s   target <= +0.30 s   "
          f"ratio {(cac - off) / 0.3:.2f}")
    print(f"  cached re-run requests: {cached_runs[-1][1]['engine']['requests']}, cache hits {cached_runs[-1][1]['engine']['cache_hits']}")
    print(f"prompt tokens per PR (estimated): avg {avg_prompt:,.0f}, max {max(prompt_per_pr, default=0):,}   "
          f"target avg <= 3,000   ratio {avg_prompt / 3000:.2f}")
    print(f"tokens for the week (server-reported): prompt {eng['prompt_tokens']:,} + completion {eng['completion_tokens']:,} "
          f"= {eng['total_tokens']:,}; estimated prompt {eng['prompt_tokens_estimated']:,}")


if __name__ == "__main__":
    main()
