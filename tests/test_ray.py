"""`repobrief run --executor ray` on a real local Ray cluster (2 CPUs, loopback only):
the reports equal the local executor's for 4 replayed and synthetic repositories
while a broken one fails alone; the llm engine's requests from every worker go
through a pool of two scripted endpoints (both used, no request sent twice),
also when a worker is killed mid-run and its repository is retried; the shared
store holds each report once; clear errors without Ray or without a cluster.

The cluster is started once for the module. Runs only where Ray can be imported;
in CI (CI=true) Ray is part of the test extra and a missing Ray is a failure."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from gitrepo import squash_repo
from llmserver import ScriptedLLM
from pgdb import fresh_database
from test_run import WEEK, _strip_volatile, cli, write_team

# One Ray cluster at a time: under pytest-xdist these tests share a worker.
pytestmark = pytest.mark.xdist_group("ray")

if os.environ.get("CI", "").lower() == "true":
    import ray  # CI installs the test extra, which includes Ray: its absence must fail loudly
else:
    ray = pytest.importorskip("ray")

ROOT = Path(__file__).resolve().parents[1]
PG_URL = os.environ.get("REPOBRIEF_TEST_PG_URL")  # read at import: the autouse fixture clears REPOBRIEF_*
TASK_TITLE = "ray::_run_repository"  # the process title of a Ray worker running a repository's task


@pytest.fixture(scope="module")
def ray_cluster(tmp_path_factory):
    """A local Ray cluster for the module, its workers started with an isolated environment."""
    home = tmp_path_factory.mktemp("ray-home")
    with pytest.MonkeyPatch.context() as mp:
        for var in list(os.environ):
            if var.startswith("REPOBRIEF_") or var in ("GITHUB_TOKEN", "GH_TOKEN", "OPENAI_API_KEY", "OPENAI_BASE_URL"):
                mp.delenv(var)
        # Workers inherit the environment the cluster starts with, not each test's.
        mp.setenv("REPOBRIEF_DATA_DIR", str(home / "data"))
        mp.setenv("XDG_DATA_HOME", str(home / "xdg-data"))
        mp.setenv("RAY_USAGE_STATS_ENABLED", "0")
        temp = Path("/tmp") / f"ray-rb-{os.getpid()}"  # short: Ray's socket paths must stay under 108 bytes
        ray.init(num_cpus=2, include_dashboard=False, object_store_memory=100 * 1024 * 1024,
                 log_to_driver=False, logging_level="ERROR", _temp_dir=str(temp))
    yield
    ray.shutdown()
    shutil.rmtree(temp, ignore_errors=True)


def week_repo(path: Path, prs: list[tuple[str, dict]], author: str = "dev") -> Path:
    """A small repository whose squash-merged PRs land in WEEK (2026-01-19 .. 01-25)."""
    return squash_repo(path, prs, "2026-01-20", author)


@pytest.fixture(scope="module")
def four(verl_repo, flask_repo, tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("four")
    (root / "plain").mkdir()  # not a git repository: a broken source
    return {
        "verl": verl_repo,
        "flask": flask_repo,
        "alpha": week_repo(root / "alpha", [("feat: add streaming API", {"src/stream.py": 80, "tests/test_stream.py": 20}),
                                            ("fix: handle empty input", {"src/app.py": 5})]),
        "beta": week_repo(root / "beta", [("Bump torch from 2.5 to 2.6", {"requirements.txt": "torch==2.6\n"})], author="b"),
        "plain": root / "plain",
    }


def team_config(folder: Path, repos: dict[str, Path], head: str = "", each: str = "", db: str = "") -> Path:
    body = f'out = "out"\nformats = ["md", "json"]\ndb = "{db or folder / "store.db"}"\n' + head
    names = {"verl": "verl-project/verl", "flask": "pallets/flask"}
    zones = {"verl": "Asia/Shanghai", "flask": "America/Los_Angeles"}
    for key, path in repos.items():
        body += f'\n[[repositories]]\nsource = "{path}"\nname = "{names.get(key, "acme/" + key)}"\n' + each
        if key in zones:
            body += f'timezone = "{zones[key]}"\n'
        if key == "verl":
            body += 'languages = ["zh", "en"]\n'
    return write_team(folder, body)


def _rows(db: Path | str, query: str) -> list[tuple]:
    from sqlalchemy import create_engine, text

    engine = create_engine(db if isinstance(db, str) and "://" in db else f"sqlite:///{db}")
    try:
        with engine.connect() as conn:
            return [tuple(r) for r in conn.execute(text(query))]
    finally:
        engine.dispose()


def stored_reports(db: Path | str) -> list[tuple]:
    return _rows(db, "SELECT r.name, p.week, p.lang, p.format FROM reports p JOIN repositories r ON r.id = p.repository_id")


@pytest.fixture
def shared_store(tmp_path):
    """The run's shared store: a new PostgreSQL database where a test server is configured
    (CI, REPOBRIEF_TEST_PG_URL), else a SQLite file."""
    if not PG_URL:
        yield str(tmp_path / "store.db")
        return
    with fresh_database(PG_URL, "rb_ray") as url:
        yield url


def report_files(out: Path) -> dict[str, str]:
    return {str(p.relative_to(out)): p.read_text() for p in sorted(out.rglob("*")) if p.is_file()}


# ------------------------------------------------------------------ equal to the local executor


@pytest.fixture(scope="module")
def both_runs(ray_cluster, four, tmp_path_factory):
    runs = {}
    for executor in ("local", "ray"):
        folder = tmp_path_factory.mktemp(executor)
        cfg = team_config(folder, four)
        code, _, err = cli(["run", "--config", str(cfg), "--week", WEEK, "--executor", executor])
        runs[executor] = {"code": code, "err": err, "out": folder / "out", "db": folder / "store.db"}
    return runs


def test_ray_reports_equal_the_local_executors(both_runs):
    local, on_ray = both_runs["local"], both_runs["ray"]
    assert on_ray["code"] == local["code"] == 8, on_ray["err"]  # the broken repository only
    ray_files, local_files = report_files(on_ray["out"]), report_files(local["out"])
    assert sorted(ray_files) == sorted(local_files)
    assert len(ray_files) == 10  # verl zh+en, flask, alpha, beta; md+json each
    for name, text in ray_files.items():
        if name.endswith(".json"):
            assert _strip_volatile(json.loads(text)) == _strip_volatile(json.loads(local_files[name])), name
        else:
            assert text == local_files[name], name
    verl = json.loads(ray_files[f"verl-project__verl/verl-project__verl-{WEEK}.en.json"])
    assert verl["stats"]["merged_prs"] == 22
    alpha = json.loads(ray_files[f"acme__alpha/acme__alpha-{WEEK}.zh.json"])
    assert [p["number"] for p in alpha["pull_requests"]] == [10, 11]


def test_a_broken_source_fails_alone(both_runs):
    err = both_runs["ray"]["err"]
    assert "error: acme/plain:" in err and "git" in err.split("error: acme/plain:")[1].splitlines()[0]
    assert "4 of 5 repositories reported, 1 failed" in err
    assert ", 1 failed]" in err  # progress counts the failure as it happens
    assert "ray: 4 done, 1 failed" in err


def test_the_shared_store_holds_each_report_once(both_runs):
    rows = stored_reports(both_runs["ray"]["db"])
    assert len(rows) == len(set(rows)) == 10
    assert {r[0] for r in rows} == {"verl-project/verl", "pallets/flask", "acme/alpha", "acme/beta"}
    assert sorted(rows) == sorted(stored_reports(both_runs["local"]["db"]))


# ------------------------------------------------------------------ the LLM pool and a killed worker


def _kill_a_running_task(llms: list[ScriptedLLM], killed: list[int], stop: threading.Event) -> None:
    """Once the endpoints have answered a few requests (reports are mid-run), SIGKILL a
    worker that is running a repository's task — as the OOM killer or a lost node would."""
    while not stop.is_set():
        if sum(llm.count() for llm in llms) >= 4:
            for pid in os.listdir("/proc"):
                if not pid.isdigit():
                    continue
                try:
                    cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
                except OSError:
                    continue
                if cmdline.startswith(TASK_TITLE.encode()):
                    os.kill(int(pid), signal.SIGKILL)
                    killed.append(int(pid))
                    return
        time.sleep(0.05)


def test_llm_pool_sends_each_request_once_across_workers_and_survives_a_killed_worker(ray_cluster, four, tmp_path,
                                                                                      shared_store):
    repos = {k: four[k] for k in ("verl", "flask", "alpha", "beta")}
    with ScriptedLLM(latency=0.1) as a, ScriptedLLM(latency=0.1) as b:
        head = (
            'engine = "llm"\n'
            '[ray]\nmax_retries = 2\n'
            f'[[ray.endpoints]]\nbase_url = "{a.base_url}"\nconcurrency = 2\n'
            f'[[ray.endpoints]]\nbase_url = "{b.base_url}"\nconcurrency = 2\n'
        )
        # each repository's own endpoint answers nothing: every request must go through the pool
        cfg = team_config(tmp_path, repos, head, each='llm = { model = "scripted", base_url = "http://127.0.0.1:9/v1" }\n',
                          db=shared_store)
        killed: list[int] = []
        stop = threading.Event()
        killer = threading.Thread(target=_kill_a_running_task, args=([a, b], killed, stop), daemon=True)
        killer.start()
        try:
            code, _, err = cli(["run", "--config", str(cfg), "--week", WEEK, "--executor", "ray"])
        finally:
            stop.set()
            killer.join()
        calls = a.calls + b.calls
    assert code == 0, err
    assert killed, "no repository task was running while the endpoints answered"
    assert "5 of 5" not in err and "4 of 4 repositories reported" in err
    # both endpoints were used, and no request reached an endpoint twice — not even the
    # requests of the repository whose worker was killed and whose task ran again
    assert a.calls and b.calls
    bodies = [json.dumps(c.body, sort_keys=True) for c in calls]
    assert len(bodies) == len(set(bodies))
    out = tmp_path / "out"
    reports = [json.loads(p.read_text()) for p in out.rglob("*.json")]
    assert len(reports) == 5  # verl in zh and en, flask, alpha, beta
    # each PR of each report asked for once (a re-ask naming problems aside), each report composed once
    assert sorted(c.pr for c in calls if c.kind == "pr" and c.attempt == 0) == sorted(
        p["number"] for r in reports for p in r["pull_requests"])
    assert all(r["pull_requests"] for r in reports)
    assert sum(1 for c in calls if c.kind == "week" and c.attempt == 0) == len(reports)
    assert f"{len(a.calls)} sent" in err and f"{len(b.calls)} sent" in err
    verl = json.loads((out / "verl-project__verl" / f"verl-project__verl-{WEEK}.en.json").read_text())
    assert verl["engine"]["name"] == "llm"
    # no unit fell back for want of an answer (the pool answered every request)
    reasons = [f["reason"] for r in reports for f in r["engine"]["fallbacks"]]
    assert not [x for x in reasons if "request failed" in x or "unreachable" in x], reasons
    assert sum(p["analysis_engine"] == "llm" for p in verl["pull_requests"]) >= 11, reasons
    assert "tokens" in err
    rows = stored_reports(shared_store)
    assert len(rows) == len(set(rows)) == 10
    keys = [k for (k,) in _rows(shared_store, "SELECT key FROM llm_cache")]
    # cached once each, and only answers whose unit passed the checks (the workers cache them)
    assert keys and len(keys) == len(set(keys)) <= len(calls)


# ------------------------------------------------------------------ errors a user sees


def _fresh_cli(args: list[str], prelude: str = "", timeout: float = 120) -> subprocess.CompletedProcess:
    code = f"{prelude}\nfrom repobrief.cli import main\nmain({args!r})"
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_ADDRESS")}
    env["RAY_USAGE_STATS_ENABLED"] = "0"
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout, env=env)


def test_without_ray_installed_the_error_says_how_to_install_it(tmp_path):
    cfg = team_config(tmp_path, {"alpha": week_repo(tmp_path / "alpha", [("fix: a typo", {"src/app.py": 2})])})
    proc = _fresh_cli(["run", "--config", str(cfg), "--week", WEEK, "--executor", "ray"],
                      prelude="import sys; sys.modules['ray'] = None  # as if Ray were not installed")
    assert proc.returncode == 2, proc.stderr
    assert "--executor ray needs Ray" in proc.stderr and "pip install 'ray[data]>=2.30'" in proc.stderr
    assert not (tmp_path / "out").exists()


def test_an_unreachable_ray_address_is_a_clear_error(tmp_path):
    cfg = team_config(tmp_path, {"alpha": week_repo(tmp_path / "alpha", [("fix: a typo", {"src/app.py": 2})])})
    proc = _fresh_cli(["run", "--config", str(cfg), "--week", WEEK, "--executor", "ray", "--ray-address", "127.0.0.1:9"])
    assert proc.returncode == 2, proc.stderr
    assert "cannot reach the Ray cluster at 127.0.0.1:9" in proc.stderr
    assert "--ray-address" in proc.stderr and "Traceback" not in proc.stderr


def test_llm_pool_routes_around_an_endpoint_that_is_down(ray_cluster, four, tmp_path):
    """One of the two endpoints refuses connections: every request is answered by the
    other, once, and no unit falls back to the offline engine."""
    import socket

    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{s.getsockname()[1]}/v1"
    repos = {k: four[k] for k in ("alpha", "beta")}
    with ScriptedLLM() as live:
        head = (
            'engine = "llm"\n'
            f'[[ray.endpoints]]\nbase_url = "{dead}"\nconcurrency = 4\n'
            f'[[ray.endpoints]]\nbase_url = "{live.base_url}"\nconcurrency = 1\n'
        )
        cfg = team_config(tmp_path, repos, head, each=f'llm = {{ model = "scripted", base_url = "{dead}" }}\n')
        code, _, err = cli(["run", "--config", str(cfg), "--week", WEEK, "--executor", "ray"])
        calls = live.calls
    assert code == 0, err
    reports = [json.loads(p.read_text()) for p in (tmp_path / "out").rglob("*.json")]
    assert [f for r in reports for f in r["engine"]["fallbacks"]] == []
    assert all(p["analysis_engine"] == "llm" for r in reports for p in r["pull_requests"])
    bodies = [json.dumps(c.body, sort_keys=True) for c in calls]
    assert len(bodies) == len(set(bodies)) == 3 + 2  # 3 PRs and 2 weeks composed, each sent once
    assert f"{dead} 0 sent" not in err and f"{live.base_url} {len(calls)} sent" in err
    assert "failed)" in err.split(dead)[1].split(";")[0]  # the dead endpoint's failures are counted


def test_ray_settings_errors_name_the_option(tmp_path):
    repo = week_repo(tmp_path / "alpha", [("fix: a typo", {"src/app.py": 2})])
    cfg = team_config(tmp_path / "a", {"alpha": repo}, '[ray]\nadress = "auto"\n')
    code, _, err = cli(["run", "--config", str(cfg), "--week", WEEK, "--executor", "ray"])
    assert code == 3 and "unknown option 'ray.adress'" in err and "ray.address" in err
    cfg = team_config(tmp_path / "b", {"alpha": repo}, 'engine = "llm"\n[[ray.endpoints]]\nbase_url = "vllm-0:8000"\n')
    code, _, err = cli(["run", "--config", str(cfg), "--week", WEEK, "--executor", "ray"])
    assert code == 2 and "option 'ray.endpoints[0].base_url' is 'vllm-0:8000', not an http(s) URL" in err
    assert not (tmp_path / "b" / "out").exists()
