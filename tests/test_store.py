"""The store on real SQLite files: migrations, round trips, upserts, errors."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest
from pgdb import fresh_database

from repobrief.errors import StoreError
from repobrief.models import Comment, FileChange, PRAnalysis, PullRequest, Reason, ReviewThread, Risk
from repobrief.store import cache_key, default_db_path, mask_url, open_store
from repobrief.store.schema import SCHEMA_REVISION

SHANGHAI = timezone(timedelta(hours=8))
# read at import: the autouse fixture clears REPOBRIEF_* variables before each test
PG_URL = os.environ.get("REPOBRIEF_TEST_PG_URL")


@pytest.fixture(params=["sqlite", "postgresql"])
def target(request, tmp_path):
    """A fresh store location: a SQLite file, or a new PostgreSQL database when
    REPOBRIEF_TEST_PG_URL points at a server (`.ci/start-postgres` starts one)."""
    if request.param == "sqlite":
        yield str(tmp_path / "rb.db")
        return
    base = PG_URL
    if not base:
        pytest.skip("REPOBRIEF_TEST_PG_URL is not set (see .ci/start-postgres)")
    with fresh_database(base, "rb_test") as url:
        yield url


def _pr(number: int, merged: datetime, **kw) -> PullRequest:
    base = dict(
        number=number,
        title=f"[trainer] feat: change {number}",
        body=f"Body of {number}\n\nwith ünïcode 中文",
        author="alice",
        merged_at=merged,
        files=[FileChange("verl/trainer/a.py", 10, 2, "M"), FileChange("img.png", None, None, "A")],
        sha="abc" * 13 + "d",
        url=f"https://github.com/o/r/pull/{number}",
        labels=["enhancement"],
    )
    base.update(kw)
    return PullRequest(**base)


def test_creates_file_with_wal_and_head_revision(tmp_path):
    db = tmp_path / "sub" / "dir" / "rb.db"
    with open_store(db) as store:
        assert store.repositories() == []
    assert db.is_file()
    con = sqlite3.connect(db)
    assert con.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert con.execute("SELECT version_num FROM alembic_version").fetchone()[0] == SCHEMA_REVISION
    tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert {"repositories", "pull_requests", "analyses", "llm_cache", "reports", "sync_state"} <= tables


def test_schema_revision_is_the_migrations_head():
    from alembic.config import Config
    from alembic.script import ScriptDirectory

    import repobrief.migrations as mig

    cfg = Config()
    cfg.set_main_option("script_location", str(Path(mig.__file__).parent))
    assert ScriptDirectory.from_config(cfg).get_current_head() == SCHEMA_REVISION


def test_migrated_tables_match_the_schema_module(tmp_path):
    """The migration and `schema.py` describe the same columns."""
    from repobrief.store import schema

    db = tmp_path / "rb.db"
    open_store(db).close()
    con = sqlite3.connect(db)
    for table in schema.metadata.sorted_tables:
        cols = {r[1] for r in con.execute(f"PRAGMA table_info({table.name})")}
        assert cols == {c.name for c in table.columns}, table.name


def test_reopening_a_migrated_store_does_not_import_alembic(tmp_path):
    db = tmp_path / "rb.db"
    open_store(db).close()
    code = (
        "import sys; from repobrief.store import open_store; "
        f"s = open_store({str(db)!r}); s.repositories(); s.close(); "
        "print('alembic' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_pull_requests_round_trip_and_window(target):
    monday = datetime(2026, 6, 22, tzinfo=SHANGHAI)
    prs = [
        _pr(1, monday - timedelta(minutes=1)),  # the Sunday before, in Shanghai
        _pr(
            2,
            monday + timedelta(hours=1),
            reviews=[Comment("bob", "LGTM", kind="review", state="APPROVED", created_at=monday)],
            comments=[Comment("carol", "why not X?")],
            threads=[ReviewThread("a.py", [Comment("dave", "nit", kind="review_comment")], resolved=False, diff_hunk="@@")],
            discussion_known=True,
            linked_issues=[7],
            reverts=1,
            reverts_title="old",
        ),
        _pr(3, monday + timedelta(days=7)),  # next Monday: outside
    ]
    with open_store(target) as store:
        assert store.save_pull_requests("o/r", prs, source="git") == 3
        got = store.load_pull_requests("o/r", monday, monday + timedelta(days=7))
    assert [p.number for p in got] == [2]
    p = got[0]
    assert p.merged_at == prs[1].merged_at and p.merged_at.tzinfo is not None
    assert p.body == prs[1].body
    assert p.files == prs[1].files
    assert p.reviews[0].state == "APPROVED" and p.reviews[0].created_at == monday
    assert p.comments[0].body == "why not X?"
    assert p.threads[0].comments[0].author == "dave" and p.threads[0].resolved is False
    assert (p.discussion_known, p.linked_issues, p.reverts, p.labels) == (True, [7], 1, ["enhancement"])


def test_pull_requests_upsert_replaces_and_keeps_repositories_apart(target):
    t = datetime(2026, 6, 23, tzinfo=UTC)
    with open_store(target) as store:
        store.save_pull_requests("o/r", [_pr(5, t)], source="github", updated_at={5: t})
        store.save_pull_requests("o/r", [_pr(5, t, title="retitled")], source="github", updated_at={5: t + timedelta(hours=1)})
        store.save_pull_requests("other/r", [_pr(5, t, title="another repo")], source="git")
        assert [p.title for p in store.load_pull_requests("o/r")] == ["retitled"]
        assert [p.title for p in store.load_pull_requests("other/r")] == ["another repo"]
        assert store.pull_request_updated_at("o/r") == {5: t + timedelta(hours=1)}
        assert store.get_pull_request("o/r", 5).title == "retitled"
        assert store.get_pull_request("o/r", 6) is None
        assert store.load_pull_requests("nobody/none") == []
        assert store.repositories() == ["o/r", "other/r"]


def test_cache_reports_analyses_and_sync_state(target):
    db = target
    key = cache_key("gpt-x", "v1", {"messages": [{"role": "user", "content": "hi"}]})
    assert key == cache_key("gpt-x", "v1", {"messages": [{"content": "hi", "role": "user"}]})
    assert key != cache_key("gpt-y", "v1", {"messages": [{"role": "user", "content": "hi"}]})
    with open_store(db) as store:
        assert store.cache_get(key) is None
        store.cache_put(key, model="gpt-x", prompt_version="v1", response='{"a": 1}', prompt_tokens=12, completion_tokens=3)
        store.save_report("o/r", "2026-W26", "zh", "md", "# first")
        store.save_report("o/r", "2026-W26", "zh", "md", "# second")
        store.save_report("o/r", "2026-W26", "en", "md", "# english")
        a = PRAnalysis(
            number=4,
            modules=["trainer"],
            type="feat",
            themes=["rollout"],
            breaking=False,
            importance=6.5,
            importance_reasons=[Reason("feat", 3.0, "new feature")],
            key_contribution="adds X",
            risks=[Risk("core_path", "medium", [4], ["touches verl/trainer"])],
            engine="llm",
        )
        store.save_analysis("o/r", a, model="gpt-x", prompt_version="v1", input_hash="h")
        store.set_sync_state("o/r", "github", cursor="Y3Vyc29y", last_updated=datetime(2026, 6, 28, tzinfo=UTC), extra={"etag": "W/1"})
        store.set_sync_state("o/r", "github", cursor="next", last_updated=datetime(2026, 6, 29, tzinfo=UTC))
    with open_store(db) as store:  # a new process would see the same
        hit = store.cache_get(key)
        assert (hit.response, hit.prompt_tokens, hit.completion_tokens) == ('{"a": 1}', 12, 3)
        assert store.load_report("o/r", "2026-W26", "zh", "md") == "# second"
        assert store.load_report("o/r", "2026-W26", "en", "md") == "# english"
        assert store.load_report("o/r", "2026-W27", "zh", "md") is None
        got = store.load_analyses("o/r", [4], engine="llm")[4]
        assert got == a
        s = store.get_sync_state("o/r", "github")
        assert (s.cursor, s.last_updated, s.extra) == ("next", datetime(2026, 6, 29, tzinfo=UTC), None)
        assert store.get_sync_state("o/r", "git") is None
    with open_store(db) as store:
        from sqlalchemy import func, select

        from repobrief.store.schema import reports

        with store._tx("count") as conn:
            assert conn.execute(select(func.count()).select_from(reports)).scalar() == 2


def test_not_a_database_is_a_store_error_and_file_kept(tmp_path):
    db = tmp_path / "notes.db"
    db.write_text("these are my notes, not a database\n" * 100)
    with pytest.raises(StoreError) as e:
        open_store(db)
    assert str(db) in str(e.value) and "not a" in str(e.value)
    assert db.read_text().startswith("these are my notes")


def test_another_applications_database_is_refused_and_left_as_it_is(tmp_path):
    app = tmp_path / "app.sqlite"
    con = sqlite3.connect(app)
    con.execute("CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT)")
    con.execute("INSERT INTO users (name) VALUES ('alice')")
    con.commit()
    con.close()
    with pytest.raises(StoreError) as e:
        open_store(app).repositories()
    assert "holds other tables (users)" in e.value.message and "not a repobrief database" in e.value.hint
    con = sqlite3.connect(app)
    assert [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")] == ["users"]
    assert con.execute("SELECT name FROM users").fetchall() == [("alice",)]
    con.close()


def _engine_for(target: str):
    """A plain SQLAlchemy engine on a test store location (to play another application)."""
    from sqlalchemy import create_engine
    from sqlalchemy.engine import make_url

    if "://" not in target:
        return create_engine(f"sqlite:///{target}")
    return create_engine(make_url(target).set(drivername="postgresql+psycopg"))


@pytest.mark.parametrize("alembic", [None, "4f2a9c1e0b7d"], ids=["no alembic", "its own alembic"])
def test_another_applications_database_is_refused_on_either_backend(target, alembic):
    """SQLite and PostgreSQL alike: another application's tables, without a schema revision
    or with one from its own Alembic (not repobrief's), are left as they were."""
    from sqlalchemy import inspect, text

    engine = _engine_for(target)
    with engine.begin() as conn:
        conn.execute(text("CREATE TABLE invoices (id INTEGER PRIMARY KEY, total INTEGER)"))
        conn.execute(text("INSERT INTO invoices (id, total) VALUES (1, 42)"))
        if alembic:
            conn.execute(text("CREATE TABLE alembic_version (version_num VARCHAR(32) NOT NULL PRIMARY KEY)"))
            conn.execute(text(f"INSERT INTO alembic_version VALUES ('{alembic}')"))
    with pytest.raises(StoreError) as e:
        open_store(target).repositories()
    what = f"a schema revision ('{alembic}') that is not repobrief's" if alembic else "no repobrief schema"
    assert f"holds other tables (invoices) and {what}; nothing was added to it" in e.value.message
    assert "not a repobrief database" in e.value.hint and "newer" not in e.value.message
    if target.startswith("postgresql"):
        password = target.split(":")[2].split("@")[0]
        assert password not in str(e.value) and "***" in e.value.message
        assert "CREATE DATABASE" in e.value.hint
    with engine.connect() as conn:
        assert sorted(inspect(conn).get_table_names()) == sorted(["invoices"] + (["alembic_version"] if alembic else []))
        assert conn.execute(text("SELECT total FROM invoices")).scalar() == 42
    engine.dispose()


def test_a_damaged_store_says_what_to_do(tmp_path):
    db = tmp_path / "rb.db"
    with open_store(db) as store:
        store.save_pull_requests("o/r", [_pr(1, datetime(2026, 6, 1, tzinfo=UTC))], source="git")
    db.write_bytes(db.read_bytes()[:100])  # a half-copied file
    with pytest.raises(StoreError) as e:
        open_store(db).repositories()
    assert "malformed" in e.value.message and "restore it from a backup" in e.value.hint
    assert "left as it is" not in e.value.hint  # writes to its sound pages may have been made first


def test_directory_and_unwritable_locations(tmp_path):
    with pytest.raises(StoreError, match="is a directory"):
        open_store(tmp_path)
    if os.geteuid() == 0:
        # root writes anywhere; a file under a regular file's path still cannot be created
        blocker = tmp_path / "file"
        blocker.write_text("x")
        with pytest.raises(StoreError, match=r"file is a file, not a folder"):
            open_store(blocker / "rb.db")
    else:
        ro = tmp_path / "ro"
        ro.mkdir()
        ro.chmod(0o500)
        with pytest.raises(StoreError):
            open_store(ro / "rb.db")


def test_a_clones_report_from_a_read_only_store_is_written_and_not_kept(verl_repo, tmp_path):
    """docs/store.md: a store opened read-only serves a report, with a warning that it was
    not kept. From a clone, the report failed (exit 6) on saving the week's PRs."""
    from clirun import run_cli

    db = tmp_path / "rb.db"
    open_store(db).close()
    before = db.read_bytes()
    code, out, err = run_cli("report", str(verl_repo), "--name", "verl-project/verl", "--week", "2026-W26",
                             "--tz", "Asia/Shanghai", "--db", f"sqlite:///file:{db}?mode=ro&uri=true")
    assert code == 0, err
    assert out.startswith("# verl-project/verl") and "is read-only: the report was not kept in it" in err
    assert db.read_bytes() == before


def test_read_only_database_file_fails_on_write_naming_the_path(tmp_path):
    db = tmp_path / "rb.db"
    open_store(db).close()
    # open the file read-only through SQLite's URI so the test holds for root too
    url = f"sqlite:///file:{db}?mode=ro&uri=true"
    with open_store(url, migrate=False) as store:
        assert store.repositories() == []
        with pytest.raises(StoreError) as e:
            store.save_report("o/r", "2026-W26", "zh", "md", "x")
    assert "readonly" in str(e.value) or "read-only" in str(e.value)


def test_bad_urls_are_store_errors_with_password_masked():
    with pytest.raises(StoreError) as e:
        open_store("mysql://user:hunter2@db.example/x")
    assert "hunter2" not in str(e.value) and "***" in str(e.value) and "mysql" in str(e.value)
    with pytest.raises(StoreError) as e:
        open_store("not a url://user:hunter2@x")
    assert "hunter2" not in str(e.value)
    # no PostgreSQL server here: the error names the (masked) URL whatever is missing
    with pytest.raises(StoreError) as e:
        open_store("postgresql://rb:hunter2@127.0.0.1:1/rb")
    assert "hunter2" not in str(e.value) and "127.0.0.1" in str(e.value)
    assert mask_url("postgresql://u:p%40ss@h/db") == "postgresql://u:***@h/db"
    # a driver's message can quote the password apart from its URL: one masked once stays masked
    from repobrief.redact import mask_text

    assert mask_url("postgresql://u:open sesame@h/db") == "postgresql://u:***@h/db"
    assert mask_text("FATAL: password 'open sesame' was refused") == "FATAL: password '***' was refused"


@pytest.mark.parametrize("url", [
    "postgresql://rb@127.0.0.1:1/rb?password=hunter2xyz",   # libpq's query-string password
    "postgresql://rb:hunter2@xyz@127.0.0.1:1/rb",           # an unencoded @ in the password
    "postgresql://rb:hunter2xyz@127.0.0.1:notaport/rb",     # a port that is not a number
    "postgresql://rb:hunter/2xyz@127.0.0.1:1/rb",           # an unencoded / in the password
    "postgresql://rb:hunter/2@xyz@127.0.0.1:notaport/rb",   # both, and a bad port
    "postgresql://rb:hunter 2 xyz@127.0.0.1:1/rb",          # spaces in the password (the server takes them)
    "postgresql://rb@127.0.0.1:1/rb?password=hunter 2 xyz",  # in the query string too
])
def test_no_part_of_a_password_is_shown_and_every_bad_url_is_a_store_error(url):
    with pytest.raises(StoreError) as e:
        open_store(url)
    text = f"{e.value.message} {e.value.hint}"
    assert "hunter" not in text and "xyz" not in text and "127.0.0.1" in text
    assert e.value.exit_code == 6


@pytest.mark.parametrize("url", ["sqlite://", "sqlite:///:memory:", "sqlite:///file:x?mode=memory&uri=true",
                                 "sqlite:///file::memory:?uri=true"])
def test_an_in_memory_store_is_refused_with_what_to_give_instead(url, tmp_path, monkeypatch):
    """Each thread of a store (the one that opens it, the one that migrates it) got an
    empty database of its own: `report` failed with "no such table" and a traceback, and
    `sync` said it stored 73 PRs and lost them all."""
    monkeypatch.chdir(tmp_path)
    with pytest.raises(StoreError) as e:
        open_store(url)
    assert "is in memory" in e.value.message and "--db PATH" in e.value.hint and e.value.exit_code == 6
    assert list(tmp_path.iterdir()) == []


def test_default_path_is_under_the_user_data_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("REPOBRIEF_DATA_DIR", str(tmp_path / "rb-data"))
    assert default_db_path() == tmp_path / "rb-data" / "repobrief.db"
    monkeypatch.delenv("REPOBRIEF_DATA_DIR")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    assert default_db_path() == tmp_path / "data" / "repobrief" / "repobrief.db"
    with open_store() as store:
        store.save_report("o/r", "2026-W26", "en", "json", "{}")
    assert (tmp_path / "data" / "repobrief" / "repobrief.db").is_file()


def test_concurrent_writers_from_threads(target):
    from concurrent.futures import ThreadPoolExecutor

    with open_store(target) as store:
        def put(i: int) -> None:
            store.cache_put(f"k{i}", model="m", prompt_version="v", response=str(i))

        with ThreadPoolExecutor(8) as pool:
            list(pool.map(put, range(40)))
        assert all(store.cache_get(f"k{i}").response == str(i) for i in range(40))


def test_newer_schema_revision_is_refused_and_data_kept(tmp_path):
    db = tmp_path / "rb.db"
    with open_store(db) as store:
        store.save_report("o/r", "2026-W26", "zh", "md", "# kept")
    con = sqlite3.connect(db)
    con.execute("UPDATE alembic_version SET version_num = '9999_future'")
    con.commit()
    con.close()
    with pytest.raises(StoreError, match="newer than this repobrief knows"):
        open_store(db)
    con = sqlite3.connect(db)
    assert con.execute("SELECT content FROM reports").fetchone()[0] == "# kept"


def test_a_store_path_under_a_file_names_the_file(tmp_path):
    (tmp_path / "afile").write_text("keep me")
    for lazy in (False, True):
        with pytest.raises(StoreError, match=f"{tmp_path / 'afile'} is a file, not a folder"):
            open_store(tmp_path / "afile" / "deeper" / "x.db", lazy=lazy).repositories()
    assert (tmp_path / "afile").read_text() == "keep me"


def test_lazy_open_defers_errors_to_first_use_and_works(tmp_path):
    db = tmp_path / "rb.db"
    with open_store(db, lazy=True) as store:
        store.save_report("o/r", "2026-W26", "zh", "md", "# lazy")
        assert store.load_report("o/r", "2026-W26", "zh", "md") == "# lazy"
    bad = tmp_path / "notes.db"
    bad.write_text("not a database\n" * 100)
    store = open_store(bad, lazy=True)  # returns at once
    with pytest.raises(StoreError, match="not a"):
        store.repositories()
    # every later use fails the same way (a second use once met no engine: AttributeError)
    with pytest.raises(StoreError, match="not a"):
        store.cache_get("k")
    with pytest.raises(StoreError, match="is a directory"):
        open_store(tmp_path, lazy=True)


def test_postgresql_reopen_is_one_query_and_password_never_shown(target):
    if not target.startswith("postgresql"):
        pytest.skip("PostgreSQL only")
    open_store(target).close()
    with open_store(target) as store:
        assert store.dialect == "postgresql"
        assert "***" in store.display and store.display.count(":") >= 2
        password = target.split(":")[2].split("@")[0]
        assert password not in store.display
    wrong = target.replace(password, "not-the-password")
    with pytest.raises(StoreError) as e:
        open_store(wrong)
    assert "not-the-password" not in str(e.value) and password not in str(e.value)


def test_store_exists_and_a_new_store_says_so(tmp_path):
    """A run can tell before opening whether anything can be cached yet (the llm engine
    starts importing its SDK early only then)."""
    from repobrief.store import store_exists

    db = tmp_path / "rb.db"
    assert not store_exists(db) and not store_exists(f"sqlite:///{db}?mode=rwc")
    first = open_store(db, lazy=True)
    assert first.new
    first.repositories()
    first.close()
    assert store_exists(db) and store_exists(f"sqlite:///{db}")
    again = open_store(db, lazy=True)
    assert not again.new
    again.close()
    assert store_exists("postgresql://u@127.0.0.1:1/db")  # a server is taken to hold a store


def test_a_write_that_waits_for_another_process_says_so(tmp_path, monkeypatch, capsys):
    """A store another process was writing to was waited on for up to 30 s in silence:
    a command that seemed to hang. After a few seconds the wait is said on stderr, and
    the write goes through once the lock is released."""
    import sqlite3
    import threading

    import repobrief.store as store_module

    monkeypatch.setattr(store_module, "WAIT_NOTE_AFTER", 0.2)
    db = tmp_path / "rb.db"
    open_store(db).close()
    locked, release = threading.Event(), threading.Event()

    def other_process() -> None:  # a writer holding the lock (its own connection, in its own thread)
        conn = sqlite3.connect(db, isolation_level=None)
        conn.execute("BEGIN IMMEDIATE")
        locked.set()
        release.wait(10)
        conn.execute("COMMIT")
        conn.close()

    holder = threading.Thread(target=other_process)
    holder.start()
    locked.wait(5)
    threading.Timer(1.0, release.set).start()
    with open_store(db) as store:
        store.save_report("o/r", "2026-W26", "en", "md", "kept")
        assert store.load_report("o/r", "2026-W26", "en", "md") == "kept"
    holder.join()
    err = capsys.readouterr().err
    assert err.count("store: still waiting to save a report in ") == 1 and "another process" in err, err
    with open_store(db) as store:  # a write that does not wait says nothing
        store.save_report("o/r", "2026-W27", "en", "md", "x")
    assert capsys.readouterr().err == ""
