"""The store on a real PostgreSQL server: the same schema as SQLite, concurrent
writers (processes and threads) against one database, and `repobrief run`
sharing one database from several processes.

The server comes from REPOBRIEF_TEST_PG_URL (`eval "$(.ci/start-postgres)"`
starts a throwaway one). Without it these tests skip locally; under CI they fail.
Each test gets a new database on that server, dropped afterwards.
"""

from __future__ import annotations

import multiprocessing
import os
import random
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from gitrepo import GitRepoBuilder
from pgdb import fresh_database

from repobrief.errors import StoreError
from repobrief.models import FileChange, PRAnalysis, PullRequest
from repobrief.store import open_store
from repobrief.store.schema import SCHEMA_REVISION

# Read at import: the autouse fixture clears REPOBRIEF_* variables before each test.
PG_URL = os.environ.get("REPOBRIEF_TEST_PG_URL")
EXE = Path(sys.executable).with_name("repobrief")


@pytest.fixture
def pg_url():
    """The URL of a new, empty database (not migrated) on the test server."""
    if not PG_URL:
        if os.environ.get("CI"):
            pytest.fail("REPOBRIEF_TEST_PG_URL is not set: CI must start PostgreSQL (see .ci/run, .ci/start-postgres)")
        pytest.skip("REPOBRIEF_TEST_PG_URL is not set; start a server with: eval \"$(.ci/start-postgres)\"")
    with fresh_database(PG_URL, "rb_pg") as url:
        yield url


def _password(url: str) -> str:
    from sqlalchemy.engine import make_url

    return make_url(url).password or ""


def _pr(number: int, writer: int) -> PullRequest:
    """A PR whose every field says which writer wrote it, so a torn row would show."""
    return PullRequest(
        number=number,
        title=f"feat: change {number} by writer {writer}",
        body=f"writer {writer}\n" * 20,
        author=f"writer{writer}",
        merged_at=datetime(2026, 6, 22, 3, tzinfo=UTC) + timedelta(minutes=number),
        files=[FileChange(f"src/w{writer}/m{number}.py", number, writer, "M")],
        sha=f"{writer:040d}",
    )


def _schema(url: str) -> dict:
    from sqlalchemy import create_engine, inspect
    from sqlalchemy.engine import make_url

    u = make_url(url)
    if u.drivername == "postgresql":
        u = u.set(drivername="postgresql+psycopg")
    engine = create_engine(u)
    try:
        insp = inspect(engine)
        out = {}
        for table in insp.get_table_names():
            out[table] = {
                "columns": {c["name"]: (c["nullable"], type(c["type"]).__name__ in ("JSON", "TEXT", "Text")) for c in insp.get_columns(table)},
                "unique": sorted(tuple(sorted(u["column_names"])) for u in insp.get_unique_constraints(table)),
                "pk": sorted(insp.get_pk_constraint(table)["constrained_columns"]),
            }
        return out
    finally:
        engine.dispose()


def test_postgresql_schema_matches_sqlite_and_is_at_the_migrations_head(pg_url, tmp_path):
    open_store(pg_url).close()
    open_store(tmp_path / "rb.db").close()
    pg, lite = _schema(pg_url), _schema(f"sqlite:///{tmp_path / 'rb.db'}")
    assert set(pg) == set(lite) == {"alembic_version", "repositories", "pull_requests", "analyses", "llm_cache",
                                    "reports", "sync_state"}
    for table in pg:
        assert set(pg[table]["columns"]) == set(lite[table]["columns"]), table
        assert {c: n for c, (n, _) in pg[table]["columns"].items()} == {c: n for c, (n, _) in lite[table]["columns"].items()}, table
        assert pg[table]["unique"] == lite[table]["unique"], table
        assert pg[table]["pk"] == lite[table]["pk"], table
    from sqlalchemy import create_engine, text
    from sqlalchemy.engine import make_url

    engine = create_engine(make_url(pg_url).set(drivername="postgresql+psycopg"))
    with engine.connect() as conn:
        assert conn.execute(text("SELECT version_num FROM alembic_version")).scalar() == SCHEMA_REVISION
        # JSON columns are real json on PostgreSQL (queryable), not text
        assert conn.execute(text("SELECT data_type FROM information_schema.columns WHERE table_name = 'pull_requests' "
                                 "AND column_name = 'files'")).scalar() == "json"
    engine.dispose()


SHARED = list(range(1, 41))  # every writer upserts these
WRITERS = 6


def _writer(url: str, writer: int, barrier) -> None:
    barrier.wait(timeout=60)  # all open the new database at once: concurrent first migration
    with open_store(url) as store:
        shared = [_pr(n, writer) for n in SHARED]
        own = [_pr(1000 * writer + n, writer) for n in range(25)]
        prs = shared + own
        random.Random(writer).shuffle(prs)  # different orders in every writer
        for _ in range(3):
            store.save_pull_requests("o/r", prs, source="git")
        store.save_report("o/r", "2026-W26", "en", "md", f"# report by writer {writer}\n" * 200)
        store.save_report("o/r", f"2026-W{writer:02d}", "en", "md", f"# own week of writer {writer}\n")
        store.cache_put("shared-key", model="m", prompt_version="v", response=f"writer {writer}", prompt_tokens=writer)
        store.save_analyses("o/r", [(PRAnalysis(n, [], "feat", [], False, float(writer), [], f"writer {writer}"), "h") for n in SHARED[:10]])
        store.set_sync_state("o/r", "github", cursor=f"cursor {writer}", extra={"writer": writer})


def test_concurrent_processes_write_the_same_prs_and_reports(pg_url):
    ctx = multiprocessing.get_context("fork")
    barrier = ctx.Barrier(WRITERS)
    procs = [ctx.Process(target=_writer, args=(pg_url, w, barrier)) for w in range(1, WRITERS + 1)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
    assert [p.exitcode for p in procs] == [0] * WRITERS

    from sqlalchemy import create_engine, text
    from sqlalchemy.engine import make_url

    engine = create_engine(make_url(pg_url).set(drivername="postgresql+psycopg"))
    with engine.connect() as conn:
        def q(sql: str):
            return conn.execute(text(sql)).all()

        assert q("SELECT name FROM repositories") == [("o/r",)]  # created once
        assert q("SELECT count(*) FROM alembic_version") == [(1,)]
        # no duplicates, and nobody's own PRs were lost
        assert q("SELECT count(*), count(DISTINCT number) FROM pull_requests") == [(40 + 25 * WRITERS,) * 2]
        for w in range(1, WRITERS + 1):
            assert q(f"SELECT count(*) FROM pull_requests WHERE number BETWEEN {1000 * w} AND {1000 * w + 24}") == [(25,)]
        # every shared row is one writer's whole version, never a mix of two
        for _number, title, body, author, files, sha in q(
            "SELECT number, title, body, author, files::text, sha FROM pull_requests WHERE number <= 40"
        ):
            w = int(title.rsplit(" ", 1)[1])
            assert body == f"writer {w}\n" * 20 and author == f"writer{w}" and f"src/w{w}/" in files and sha == f"{w:040d}"
        reports = q("SELECT week, content FROM reports ORDER BY week")
        assert len(reports) == 1 + WRITERS  # the shared week once, every writer's own week kept
        shared = dict(reports)["2026-W26"]
        assert shared in {f"# report by writer {w}\n" * 200 for w in range(1, WRITERS + 1)}
        assert q("SELECT count(*) FROM analyses") == [(10,)]
        (response, tokens), = q("SELECT response, prompt_tokens FROM llm_cache")
        assert response == f"writer {tokens}"
        (cursor, extra), = q("SELECT cursor, extra::text FROM sync_state")
        assert cursor.startswith("cursor ") and f'"writer": {cursor.split()[1]}' in extra
    engine.dispose()


def test_threads_share_one_store(pg_url):
    with open_store(pg_url) as store:
        def work(i: int) -> None:
            store.save_pull_requests("o/r", [_pr(n, i) for n in SHARED[:10]] + [_pr(500 + i, i)], source="git")
            store.save_report("o/r", "2026-W26", "zh", "md", f"thread {i}")
            store.cache_put(f"k{i}", model="m", prompt_version="v", response=str(i))

        with ThreadPoolExecutor(8) as pool:
            list(pool.map(work, range(24)))
        prs = store.load_pull_requests("o/r")
        assert sorted(p.number for p in prs) == SHARED[:10] + [500 + i for i in range(24)]
        assert store.load_report("o/r", "2026-W26", "zh", "md") in {f"thread {i}" for i in range(24)}
        assert all(store.cache_get(f"k{i}").response == str(i) for i in range(24))
        # datetimes come back in UTC, equal to what went in
        assert prs[0].merged_at == _pr(1, 0).merged_at


# ------------------------------------------------------------------ repobrief run on PostgreSQL


def _small_repo(path: Path, project: str) -> Path:
    b = GitRepoBuilder(path)
    b.commit("initial", "2026-06-01T10:00:00+00:00", {"src/app.py": b.lines(30), "requirements.txt": "torch==2.5\n"})
    for i, (title, files) in enumerate([
        ("feat: add streaming API", {"src/stream.py": b.lines(80), "tests/test_stream.py": b.lines(20)}),
        ("fix: handle empty input", {"src/app.py": b.lines(5)}),
        ("Bump torch from 2.5 to 2.6", {"requirements.txt": "torch==2.6\n"}),
    ]):
        b.commit(f"{title} (#{10 + i})", f"2026-06-2{3 + i}T09:00:00+00:00", files, author=f"{project}-dev{i}")
    return b.path


def _team(tmp_path: Path, repos: dict[str, Path], **top: str) -> Path:
    lines = [f'{k} = "{v}"' for k, v in top.items()] + ['formats = ["md", "json"]', 'languages = ["en"]']
    for name, path in repos.items():
        lines += ["[[repositories]]", f'source = "{path}"', f'name = "{name}"']
    cfg = tmp_path / "team.toml"
    cfg.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return cfg


def test_concurrent_runs_share_one_database(pg_url, tmp_path):
    repos = {f"acme/{p}": _small_repo(tmp_path / p, p) for p in ("alpha", "beta", "gamma")}
    cfg = _team(tmp_path, repos)
    env = {k: v for k, v in os.environ.items() if not k.startswith("REPOBRIEF_")}
    procs = [
        subprocess.Popen([str(EXE), "run", "--config", str(cfg), "--week", "2026-W26", "--db", pg_url,
                          "--out", str(tmp_path / f"out{i}"), "-q"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        for i in range(3)
    ]
    outs = [p.communicate(timeout=180) for p in procs]
    assert [p.returncode for p in procs] == [0, 0, 0], [e.decode() for _, e in outs]
    with open_store(pg_url) as store:
        assert store.repositories() == sorted(repos)
        for name in repos:
            assert [p.number for p in store.load_pull_requests(name)] == [10, 11, 12]
            for fmt, ext in (("md", "md"), ("json", "json")):
                stored = store.load_report(name, "2026-W26", "en", fmt)
                written = (tmp_path / "out0" / name.replace("/", "__") / f"{name.replace('/', '__')}-2026-W26.en.{ext}").read_text()
                if fmt == "md":
                    assert stored == written
                else:  # the JSON differs between the runs only by when it was generated
                    assert '"repository": "' + name in stored and stored.count('"number": 1') == written.count('"number": 1')
    from sqlalchemy import create_engine, text
    from sqlalchemy.engine import make_url

    engine = create_engine(make_url(pg_url).set(drivername="postgresql+psycopg"))
    with engine.connect() as conn:
        assert conn.execute(text("SELECT count(*) FROM reports")).scalar() == 3 * 2
        assert conn.execute(text("SELECT count(*) FROM pull_requests")).scalar() == 3 * 3
    engine.dispose()


@pytest.mark.parametrize("how", ["wrong password", "no server", "no database"])
def test_unreachable_database_stops_the_run_before_any_work(pg_url, tmp_path, how):
    from sqlalchemy.engine import make_url

    u = make_url(pg_url)
    secret = _password(pg_url)
    if how == "wrong password":
        secret = "Wr0ng-s3cret-value"
        u = u.set(password=secret)
    elif how == "no server":
        import socket

        with socket.socket() as s:  # a port nobody listens on
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        u = u.set(port=port)
    else:
        u = u.set(database="no_such_database_here")
    url = u.render_as_string(hide_password=False)
    cfg = _team(tmp_path, {"acme/alpha": _small_repo(tmp_path / "alpha", "alpha")})
    env = {k: v for k, v in os.environ.items() if not k.startswith("REPOBRIEF_")}
    proc = subprocess.run([str(EXE), "run", "--config", str(cfg), "--week", "2026-W26", "--db", url,
                           "--out", str(tmp_path / "out")], env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == StoreError.exit_code, proc.stderr
    assert secret not in proc.stderr + proc.stdout and "***" in proc.stderr
    assert "cannot open the store postgresql" in proc.stderr and "hint:" in proc.stderr
    assert not (tmp_path / "out").exists()  # nothing was started


def test_report_with_an_unreachable_database_fails_before_reading(pg_url, tmp_path):
    from sqlalchemy.engine import make_url

    url = make_url(pg_url).set(password="Not-the-Passw0rd").render_as_string(hide_password=False)
    repo = _small_repo(tmp_path / "alpha", "alpha")
    env = {k: v for k, v in os.environ.items() if not k.startswith("REPOBRIEF_")}
    # the llm engine needs the store (its response cache): the store is opened first, at once
    proc = subprocess.run([str(EXE), "report", str(repo), "--week", "2026-W26", "--engine", "llm", "--llm-model", "m",
                           "--db", url, "--out", str(tmp_path / "out")], env={**env, "OPENAI_BASE_URL": "http://127.0.0.1:9/v1"},
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == StoreError.exit_code, proc.stderr
    assert "Not-the-Passw0rd" not in proc.stderr and "password authentication failed" in proc.stderr
    assert not (tmp_path / "out").exists()


def test_a_database_of_another_application_is_refused_and_its_tables_left_alone(pg_url, tmp_path):
    """`--db` at another application's PostgreSQL database stops the command before it
    writes anything (as for a SQLite file); its tables in a schema of their own are no
    obstacle: repobrief's go beside them, in `public`."""
    from sqlalchemy import create_engine, inspect, text
    from sqlalchemy.engine import make_url

    engine = create_engine(make_url(pg_url).set(drivername="postgresql+psycopg"))
    with engine.begin() as conn:
        conn.execute(text("CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT)"))
        conn.execute(text("INSERT INTO customers VALUES (1, 'alice')"))
    repo = _small_repo(tmp_path / "alpha", "alpha")
    env = {k: v for k, v in os.environ.items() if not k.startswith("REPOBRIEF_")}
    report = [str(EXE), "report", str(repo), "--week", "2026-W26", "--name", "acme/alpha", "--lang", "en", "--db", pg_url,
              "--out", str(tmp_path / "out")]

    refused = subprocess.run(report, env=env, capture_output=True, text=True, timeout=60)
    assert refused.returncode == StoreError.exit_code, refused.stderr
    assert "holds other tables (customers) and no repobrief schema; nothing was added to it" in refused.stderr
    assert "hint: the database is not a repobrief database; create an empty one" in refused.stderr
    assert _password(pg_url) not in refused.stderr + refused.stdout and "***" in refused.stderr
    assert not (tmp_path / "out").exists()
    with engine.connect() as conn:
        assert inspect(conn).get_table_names() == ["customers"]

    with engine.begin() as conn:  # the application keeps its tables in a schema of its own
        conn.execute(text("CREATE SCHEMA crm"))
        conn.execute(text("ALTER TABLE customers SET SCHEMA crm"))
    done = subprocess.run(report, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    with engine.connect() as conn:
        assert conn.execute(text("SELECT name FROM crm.customers")).scalars().all() == ["alice"]
        assert conn.execute(text("SELECT version_num FROM alembic_version")).scalar() == SCHEMA_REVISION
        assert conn.execute(text("SELECT count(*) FROM pull_requests")).scalar() == 3
    engine.dispose()


def test_threads_creating_the_same_new_repositories(pg_url):
    """Threads sharing a store, each round creating three repositories at once: a
    repository id one thread has inserted but not yet committed must not be used
    by another (it used to be cached at insert time: foreign key violations)."""
    with open_store(pg_url) as store:
        for round_ in range(6):
            def work(i: int, round_: int = round_) -> None:
                store.save_pull_requests(f"o/round{round_}-r{i % 3}", [_pr(n, i) for n in range(1, 11)], source="git")

            with ThreadPoolExecutor(8) as pool:
                list(pool.map(work, range(24)))
        names = store.repositories()
        assert len(names) == 18
        assert all(len(store.load_pull_requests(n)) == 10 for n in names)
