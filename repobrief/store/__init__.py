"""The embedded store: pull requests, analyses, the LLM response cache, rendered
reports and sources' sync state, in SQLite (default, WAL) or PostgreSQL (by URL).

One code path for both: SQLAlchemy 2 Core with portable types, upserts through
the dialect's `INSERT … ON CONFLICT` (SQLite and PostgreSQL spell it alike), and
Alembic migrations shipped under `repobrief/migrations/`. Opening an
up-to-date database costs one query: Alembic is imported only when the stored
revision differs from `schema.SCHEMA_REVISION`.

    from repobrief.store import open_store
    with open_store("reports.db") as store:
        store.save_pull_requests("verl-project/verl", prs, source="git")
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sys
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, overload

from ..errors import StoreError
from ..models import PRAnalysis, PullRequest
from ..redact import PASSWORD, mask_text, mask_url

WAIT_NOTE_AFTER = 5.0  # seconds a write waits for another process's lock before it says so

__all__ = [
    "CacheEntry",
    "Store",
    "SyncState",
    "cache_key",
    "default_db_path",
    "mask_url",
    "open_store",
]


@dataclass(slots=True)
class CacheEntry:
    key: str
    model: str
    prompt_version: str
    response: str
    prompt_tokens: int
    completion_tokens: int
    created_at: datetime


@dataclass(slots=True)
class SyncState:
    repository: str
    source: str
    cursor: str | None
    last_updated: datetime | None
    last_synced_at: datetime | None
    extra: dict | None


def default_db_path() -> Path:
    """`repobrief.db` in `$REPOBRIEF_DATA_DIR` when set, else under the user data
    directory (`$XDG_DATA_HOME/repobrief` on Linux)."""
    override = os.environ.get("REPOBRIEF_DATA_DIR")
    if override:
        return Path(override).expanduser() / "repobrief.db"
    from platformdirs import user_data_path

    return user_data_path("repobrief", appauthor=False) / "repobrief.db"


def store_exists(target: str | os.PathLike | None = None) -> bool:
    """Whether `open_store(target)` would find a store already there. Only a SQLite
    file can be known not to exist; a database server is taken to hold one."""
    t = os.fspath(target) if target else os.fspath(default_db_path())
    if _is_url(t):
        if not t.startswith("sqlite:///"):
            return True
        t = t.removeprefix("sqlite:///").split("?", 1)[0]
    return Path(t).expanduser().exists()


def cache_key(model: str, prompt_version: str, request: Any) -> str:
    """The LLM cache key: sha256 of model, prompt version and the canonical request."""
    body = request if isinstance(request, str) else json.dumps(request, sort_keys=True, ensure_ascii=False)
    h = hashlib.sha256()
    for part in (model, "\x00", prompt_version, "\x00", body):
        h.update(part.encode("utf-8"))
    return h.hexdigest()


def _encode_password(url: str) -> str:
    """`USER:PA@SS@HOST` as the user meant it (the host follows the last `@`), with the
    password's `@` and `/` encoded: parsed as written, the rest of the password became the host
    name, which the server's error then showed."""
    m = re.search(PASSWORD, url)
    if m is None:
        return url
    password = url[m.end(1) : m.end(2) - 1]
    if "@" not in password and "/" not in password:
        return url
    from urllib.parse import quote

    return url[: m.end(1)] + quote(password, safe="") + url[m.end(2) - 1 :]


def _is_url(target: str) -> bool:
    return "://" in target


def _now() -> datetime:
    return datetime.now(UTC).replace(tzinfo=None)


class Store:
    """A database of repobrief's records. Use `open_store` to get one."""

    def __init__(self, engine, display: str, pending: threading.Thread | None = None, box: dict | None = None,
                 *, new: bool = False) -> None:
        self._engine_obj = engine
        self.display = display  # path or masked URL, for messages
        self._repo_ids: dict[str, int] = {}
        self._pending = pending  # a lazy open still under way (see open_store(lazy=True))
        self._box = box if box is not None else {}
        self._lock = threading.Lock()
        self._schema: Any = None  # the schema module, imported on first use
        self.new = new  # the file did not exist before this open: nothing is cached yet

    def wait_open(self) -> None:
        """Wait until a lazy open has finished (its errors are raised at first use)."""
        pending = self._pending
        if pending is not None:
            pending.join()

    @property
    def _engine(self):
        pending = self._pending
        if pending is not None:
            pending.join()
            with self._lock:
                if self._pending is not None:
                    self._pending = None
                    if "engine" in self._box:
                        self._engine_obj, self.display = self._box["engine"]
        if "error" in self._box:  # at every use: a store that failed to open stays failed
            raise self._box["error"]
        return self._engine_obj

    @property
    def _t(self):
        if self._schema is None:
            from . import schema

            self._schema = schema
        return self._schema

    # ----------------------------------------------------------------- plumbing

    @property
    def dialect(self) -> str:
        return self._engine.dialect.name

    @property
    def read_only(self) -> bool:
        """Opened read-only (`sqlite:///file:PATH?mode=ro&uri=true`): nothing can be saved."""
        return self._engine.url.query.get("mode") == "ro"

    @contextmanager
    def _tx(self, what: str) -> Iterator[Any]:
        from sqlalchemy.exc import SQLAlchemyError

        # A write waits up to 30 s for another process's lock, in silence: a command that
        # seems to hang says why after a few seconds.
        timer = threading.Timer(WAIT_NOTE_AFTER, self._say_waiting, args=(what,))
        timer.daemon = True
        timer.start()
        try:
            with self._engine.begin() as conn:
                yield conn
        except SQLAlchemyError as e:
            raise _store_error(f"cannot {what} in the store {self.display}", e) from None
        finally:
            timer.cancel()

    def _say_waiting(self, what: str) -> None:
        print(f"store: still waiting to {what} in {self.display} after {WAIT_NOTE_AFTER:g} s: another process "
              "may be writing to it (a store locked for 30 s is given up)", file=sys.stderr, flush=True)

    def _upsert(self, conn, table, rows: list[dict], keys: list[str], update: list[str] | None = None,
                where: Callable[[Any], Any] | None = None) -> None:
        """INSERT … ON CONFLICT (keys) DO UPDATE: the same statement shape on SQLite and PostgreSQL.
        `where(excluded)` is the condition under which a stored row is replaced."""
        if not rows:
            return
        if self.dialect == "postgresql":
            from sqlalchemy.dialects.postgresql import insert

            # One multi-row statement may not touch a key twice, and concurrent writers that
            # lock rows in the same (key) order cannot deadlock each other.
            rows = sorted({tuple(r[k] for k in keys): r for r in rows}.values(), key=lambda r: tuple(r[k] for k in keys))
        else:
            from sqlalchemy.dialects.sqlite import insert
        stmt = insert(table)
        cols = update if update is not None else [c for c in rows[0] if c not in keys]
        if cols:
            stmt = stmt.on_conflict_do_update(
                index_elements=keys,
                set_={c: stmt.excluded[c] for c in cols},
                where=where(stmt.excluded) if where is not None else None,
            )
        else:
            stmt = stmt.on_conflict_do_nothing(index_elements=keys)
        conn.execute(stmt, rows)

    @overload
    def _repo_id(self, conn, name: str) -> int: ...
    @overload
    def _repo_id(self, conn, name: str, *, create: bool) -> int | None: ...

    def _repo_id(self, conn, name: str, *, create: bool = True) -> int | None:
        if name in self._repo_ids:
            return self._repo_ids[name]
        from sqlalchemy import select

        t = self._t.repositories
        rid = conn.execute(select(t.c.id).where(t.c.name == name)).scalar()
        if rid is not None:
            self._repo_ids[name] = rid
        elif create:
            self._upsert(conn, t, [{"name": name, "created_at": _now()}], ["name"], update=[])
            rid = conn.execute(select(t.c.id).where(t.c.name == name)).scalar_one()
            # Not cached: until this transaction commits, other threads sharing the store
            # cannot see the row, and a rollback would leave the id pointing at nothing.
        return rid

    def close(self) -> None:
        try:
            engine = self._engine
        except StoreError:
            return
        if engine is not None:
            engine.dispose()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # ------------------------------------------------------------ repositories

    def repositories(self) -> list[str]:
        from sqlalchemy import select

        t = self._t.repositories
        with self._tx("list repositories") as conn:
            return list(conn.execute(select(t.c.name).order_by(t.c.name)).scalars())

    def save_repository(self, name: str, *, url: str | None = None, default_branch: str | None = None) -> None:
        t = self._t.repositories
        row = {"name": name, "url": url, "default_branch": default_branch, "created_at": _now()}
        with self._tx("save repository") as conn:
            self._upsert(conn, t, [row], ["name"], update=["url", "default_branch"])

    # ---------------------------------------------------------- pull requests

    def save_pull_requests(
        self,
        repository: str,
        prs: Iterable[PullRequest],
        source: str,
        *,
        updated_at: dict[int, datetime] | None = None,
    ) -> int:
        """Insert or replace PRs (unique on repository + number). `updated_at` maps a PR
        number to the source's last-modified time, for incremental sync. Returns the count.

        A PR without discussion (a clone's) never replaces one stored with it (GitHub's):
        the richer row is kept, and a later sync would not fetch it again."""
        from .codec import pr_to_row

        now = datetime.now(UTC)
        t = self._t.pull_requests

        def richer(new):
            return new.discussion_known.is_(True) | t.c.discussion_known.is_(False)

        with self._tx("save pull requests") as conn:
            rid = self._repo_id(conn, repository)
            rows = [
                pr_to_row(pr, repository_id=rid, source=source, updated_at=(updated_at or {}).get(pr.number), now=now)
                for pr in prs
            ]
            rows.sort(key=lambda r: r["number"])  # the same lock order in every writer, chunk after chunk
            # executemany in chunks keeps PostgreSQL's parameter limit out of reach
            for i in range(0, len(rows), 500):
                self._upsert(conn, t, rows[i : i + 500], ["repository_id", "number"], where=richer)
        return len(rows)

    def load_pull_requests(
        self,
        repository: str,
        start: datetime | None = None,
        end: datetime | None = None,
        *,
        source: str | None = None,
    ) -> list[PullRequest]:
        """PRs of `repository` merged in [start, end) (either bound optional), oldest first."""
        from sqlalchemy import select

        from .codec import pr_from_row, to_utc_naive

        t = self._t.pull_requests
        with self._tx("load pull requests") as conn:
            rid = self._repo_id(conn, repository, create=False)
            if rid is None:
                return []
            q = select(t).where(t.c.repository_id == rid)
            if start is not None or end is not None:
                q = q.where(t.c.merged_at.is_not(None))
            if start is not None:
                q = q.where(t.c.merged_at >= to_utc_naive(start))
            if end is not None:
                q = q.where(t.c.merged_at < to_utc_naive(end))
            if source is not None:
                q = q.where(t.c.source == source)
            rows = conn.execute(q.order_by(t.c.merged_at, t.c.number)).all()
        return [pr_from_row(r) for r in rows]

    def get_pull_request(self, repository: str, number: int) -> PullRequest | None:
        from sqlalchemy import select

        from .codec import pr_from_row

        t = self._t.pull_requests
        with self._tx("load a pull request") as conn:
            rid = self._repo_id(conn, repository, create=False)
            if rid is None:
                return None
            row = conn.execute(select(t).where(t.c.repository_id == rid, t.c.number == number)).first()
        return pr_from_row(row) if row is not None else None

    def pull_request_updated_at(self, repository: str) -> dict[int, datetime | None]:
        """number -> stored `updated_at`, for a source deciding what to refetch."""
        from sqlalchemy import select

        from .codec import from_utc_naive

        t = self._t.pull_requests
        with self._tx("load pull request times") as conn:
            rid = self._repo_id(conn, repository, create=False)
            if rid is None:
                return {}
            rows = conn.execute(select(t.c.number, t.c.updated_at).where(t.c.repository_id == rid)).all()
        return {n: from_utc_naive(u) for n, u in rows}

    # -------------------------------------------------------------- analyses

    def save_analysis(
        self, repository: str, analysis: PRAnalysis, *, model: str = "", prompt_version: str = "", input_hash: str = ""
    ) -> None:
        self.save_analyses(repository, [(analysis, input_hash)], model=model, prompt_version=prompt_version)

    def save_analyses(
        self, repository: str, items: Iterable[tuple[PRAnalysis, str]], *, model: str = "", prompt_version: str = ""
    ) -> None:
        """Store (analysis, input hash) pairs in one transaction."""
        from .codec import analysis_to_json

        now = _now()
        rows = [
            {
                "number": a.number,
                "engine": a.engine,
                "model": model,
                "prompt_version": prompt_version,
                "input_hash": input_hash,
                "json": analysis_to_json(a),
                "created_at": now,
            }
            for a, input_hash in items
        ]
        if not rows:
            return
        keys = ["repository_id", "number", "engine", "model", "prompt_version", "input_hash"]
        with self._tx("save analyses") as conn:
            rid = self._repo_id(conn, repository)
            for row in rows:
                row["repository_id"] = rid
            self._upsert(conn, self._t.analyses, rows, keys)

    def load_analyses(self, repository: str, numbers: Iterable[int] | None = None, *, engine: str | None = None) -> dict[int, PRAnalysis]:
        """The newest stored analysis per PR number (optionally of one engine)."""
        from sqlalchemy import select

        from .codec import analysis_from_json

        t = self._t.analyses
        with self._tx("load analyses") as conn:
            rid = self._repo_id(conn, repository, create=False)
            if rid is None:
                return {}
            q = select(t.c.number, t.c.json).where(t.c.repository_id == rid)
            if numbers is not None:
                q = q.where(t.c.number.in_(list(numbers)))
            if engine is not None:
                q = q.where(t.c.engine == engine)
            rows = conn.execute(q.order_by(t.c.created_at, t.c.id)).all()
        return {n: analysis_from_json(j) for n, j in rows}

    # ------------------------------------------------------------- LLM cache

    def cache_get(self, key: str) -> CacheEntry | None:
        from sqlalchemy import select

        t = self._t.llm_cache
        with self._tx("read the LLM cache") as conn:
            row = conn.execute(select(t).where(t.c.key == key)).first()
        if row is None:
            return None
        m = row._mapping
        return CacheEntry(
            key=m["key"],
            model=m["model"],
            prompt_version=m["prompt_version"],
            response=m["response"],
            prompt_tokens=m["prompt_tokens"],
            completion_tokens=m["completion_tokens"],
            created_at=m["created_at"].replace(tzinfo=UTC),
        )

    def cache_put(
        self, key: str, *, model: str, prompt_version: str, response: str, prompt_tokens: int = 0, completion_tokens: int = 0
    ) -> None:
        row = {
            "key": key,
            "model": model,
            "prompt_version": prompt_version,
            "response": response,
            "prompt_tokens": int(prompt_tokens or 0),
            "completion_tokens": int(completion_tokens or 0),
            "created_at": _now(),
        }
        with self._tx("write the LLM cache") as conn:
            self._upsert(conn, self._t.llm_cache, [row], ["key"])

    # --------------------------------------------------------------- reports

    def save_report(self, repository: str, week: str, lang: str, format: str, content: str) -> None:
        """Store a rendered report; a second save of the same week/lang/format replaces it."""
        row = {"week": week, "lang": lang, "format": format, "content": content, "created_at": _now()}
        with self._tx("save a report") as conn:
            row["repository_id"] = self._repo_id(conn, repository)
            self._upsert(conn, self._t.reports, [row], ["repository_id", "week", "lang", "format"])

    def load_report(self, repository: str, week: str, lang: str, format: str) -> str | None:
        from sqlalchemy import select

        t = self._t.reports
        with self._tx("load a report") as conn:
            rid = self._repo_id(conn, repository, create=False)
            if rid is None:
                return None
            return conn.execute(
                select(t.c.content).where(t.c.repository_id == rid, t.c.week == week, t.c.lang == lang, t.c.format == format)
            ).scalar()

    # ------------------------------------------------------------ sync state

    def get_sync_state(self, repository: str, source: str) -> SyncState | None:
        from sqlalchemy import select

        from .codec import from_utc_naive

        t = self._t.sync_state
        with self._tx("read sync state") as conn:
            rid = self._repo_id(conn, repository, create=False)
            if rid is None:
                return None
            row = conn.execute(select(t).where(t.c.repository_id == rid, t.c.source == source)).first()
        if row is None:
            return None
        m = row._mapping
        return SyncState(
            repository=repository,
            source=source,
            cursor=m["cursor"],
            last_updated=from_utc_naive(m["last_updated"]),
            last_synced_at=from_utc_naive(m["last_synced_at"]),
            extra=m["extra"],
        )

    def set_sync_state(
        self,
        repository: str,
        source: str,
        *,
        cursor: str | None = None,
        last_updated: datetime | None = None,
        last_synced_at: datetime | None = None,
        extra: dict | None = None,
    ) -> None:
        """Record how far a source has synced (replaces the previous state)."""
        from .codec import to_utc_naive

        row: dict[str, Any] = {
            "source": source,
            "cursor": cursor,
            "last_updated": to_utc_naive(last_updated),
            "last_synced_at": to_utc_naive(last_synced_at) or _now(),
            "extra": extra,
        }
        with self._tx("write sync state") as conn:
            row["repository_id"] = self._repo_id(conn, repository)
            self._upsert(conn, self._t.sync_state, [row], ["repository_id", "source"])


# ------------------------------------------------------------------- opening


def _store_error(message: str, exc: BaseException) -> StoreError:
    detail = str(getattr(exc, "orig", None) or exc).splitlines()[0] if str(exc) else type(exc).__name__
    detail = mask_text(detail)
    hint = None
    low = detail.lower()
    if "readonly" in low or "read-only" in low or "permission" in low:
        hint = "make the file and its folder writable, or choose another location with --db"
    elif "not a database" in low:
        hint = "the file is not a repobrief database; choose another path with --db"
    elif "malformed" in low or "corrupt" in low:
        # SQLite finds damage when it reads the damaged pages: writes to sound ones may have
        # been made before, so the file is not said to be untouched
        hint = ("the file is damaged: stop writing to it, and restore it from a backup (or salvage it with "
                "`sqlite3 FILE .recover`), or choose another path with --db")
    elif "locked" in low or "busy" in low:
        hint = "another process is writing to the store; run again when it has finished"
    elif "disk is full" in low or "no space" in low:
        hint = "free some disk space, or choose another location with --db"
    elif "unable to open" in low:
        hint = "check that the folder exists and is writable, or choose another location with --db"
    elif ("connection" in low or "password authentication" in low or "could not translate host" in low
          or "resolve host" in low or "timeout" in low):
        hint = "check the host, port, user, password and database name in --db (or REPOBRIEF_DB), and that the server is running"
    else:
        hint = "check the store named above, or choose another with --db"
    return StoreError(f"{message}: {detail}", hint)


def _sqlite_engine(path: Path, url=None):
    """SQLite at `path` (or at `url`, a sqlite URL with query options such as mode=ro)."""
    from sqlalchemy import create_engine, event

    if url is None:
        if path.exists() and path.is_dir():
            raise StoreError(f"cannot open the store {path}: it is a directory", "give a file path with --db")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            blocker = next((p for p in (path.parent, *path.parent.parents) if p.is_file()), None)
            if blocker is not None:  # mkdir says "File exists" or "Not a directory": name the file
                raise StoreError(f"cannot open the store {path}: {blocker} is a file, not a folder",
                                 "give a path whose folders are folders with --db") from None
            raise StoreError(
                f"cannot open the store {path}: cannot create folder {path.parent} ({e.strerror})",
                "choose a writable location with --db",
            ) from None
    # The default queue pool reuses connections (the pragmas run once per connection)
    # and hands each thread its own, so worker threads can share the store.
    engine = create_engine(url or f"sqlite:///{path}", connect_args={"timeout": 30, "check_same_thread": False})

    @event.listens_for(engine, "connect")
    def _pragmas(dbapi_conn, _record) -> None:
        cur = dbapi_conn.cursor()
        try:
            # WAL lets readers run while a writer writes; a read-only file keeps its mode.
            cur.execute("PRAGMA journal_mode=WAL")
        except Exception:  # noqa: BLE001 - read-only media: the journal mode cannot change
            pass
        cur.execute("PRAGMA synchronous=NORMAL")
        cur.execute("PRAGMA foreign_keys=ON")
        cur.close()

    return engine


def _url_engine(url: str):
    from sqlalchemy import create_engine
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError, NoSuchModuleError

    shown = mask_url(url)
    try:
        u = make_url(_encode_password(url))
    except (ArgumentError, ValueError):  # ValueError: a port that is not a number
        raise StoreError(
            f"invalid database URL {shown}",
            "use a file path, sqlite:///PATH or postgresql://USER:PASSWORD@HOST/DB",
        ) from None
    if u.drivername in ("postgresql", "postgres"):
        u = u.set(drivername="postgresql+psycopg")
    if u.drivername.startswith("sqlite"):
        if u.database in (None, "", ":memory:") or u.query.get("mode") == "memory" or (u.database or "").startswith("file::memory:"):
            # each connection (the opening thread's, a worker's) would get a database of its
            # own, empty: what was stored would be lost, or not be there when read
            raise StoreError(f"the store {shown} is in memory: nothing kept in it would outlast the run, "
                             "and its threads would not share it",
                             "give a file: --db PATH or sqlite:///PATH (leave --db out for the default store)")
        if u.query:
            return _sqlite_engine(Path(u.database), url=u), u.database
        return _sqlite_engine(Path(u.database).expanduser()), u.database
    if not u.drivername.startswith("postgresql"):
        raise StoreError(
            f"unsupported database URL {shown}: {u.drivername!r} is not supported",
            "use SQLite (a file path) or postgresql://USER:PASSWORD@HOST/DB",
        )
    # Fail within seconds, not the OS's minutes, when the host does not answer.
    connect_args = {} if "connect_timeout" in u.query else {"connect_timeout": 10}
    try:
        return create_engine(u, pool_pre_ping=True, connect_args=connect_args), shown  # as given, password masked
    except (NoSuchModuleError, ModuleNotFoundError, ImportError):
        raise StoreError(
            f"cannot open the store {shown}: the PostgreSQL driver is not installed",
            "pip install 'psycopg[binary]>=3.1' (repobrief's `postgres` extra)",
        ) from None


_MIGRATION_LOCK = threading.Lock()


def _migrate(engine, display: str) -> None:
    """Bring the database to `SCHEMA_REVISION`: one query when it is already there."""
    from sqlalchemy import text
    from sqlalchemy.exc import SQLAlchemyError

    from .schema import SCHEMA_REVISION

    try:
        with engine.connect() as conn:
            try:
                current = conn.execute(text("SELECT version_num FROM alembic_version")).scalar()
            except SQLAlchemyError as e:
                msg = str(getattr(e, "orig", e)).lower()
                if "no such table" not in msg and "does not exist" not in msg and "undefined" not in msg:
                    raise
                conn.rollback()
                current = None
                _refuse_foreign(conn, display)
        if current == SCHEMA_REVISION:
            return
        from alembic import command
        from alembic.config import Config
        from alembic.script import ScriptDirectory

        cfg = Config()
        cfg.set_main_option("script_location", str(Path(__file__).resolve().parent.parent / "migrations"))
        if current is not None and current not in {s.revision for s in ScriptDirectory.from_config(cfg).walk_revisions()}:
            with engine.connect() as conn:  # another application's Alembic, not a newer repobrief
                _refuse_foreign(conn, display, revision=current)
            raise StoreError(
                f"the store {display} has schema revision {current!r}, newer than this repobrief knows",
                "upgrade repobrief, or use another database with --db",
            )
        with engine.begin() as conn:
            if conn.dialect.name == "postgresql":
                # Several processes opening a new database at once: one migrates, the others
                # wait here and then find (inside the lock) that the schema is at head.
                conn.execute(text("SELECT pg_advisory_xact_lock(7206218623865341952)"))
            cfg.attributes["connection"] = conn
            # Alembic keeps its context in module globals: two stores migrating at once in
            # one process (lazy opens run in threads) would trample each other.
            with _MIGRATION_LOCK:
                command.upgrade(cfg, "head")
    except SQLAlchemyError as e:
        raise _store_error(f"cannot open the store {display}", e) from None


def _refuse_foreign(conn, display: str, revision: str | None = None) -> None:
    """A database with another application's tables and no repobrief schema (no schema
    revision, or `revision` from another application's Alembic) is not turned into a
    store: migrating would add repobrief's tables to someone else's data. On PostgreSQL
    the tables that count are those of the schema repobrief would create its own in
    (the connection's `search_path`, usually `public`); other schemas are left alone."""
    from sqlalchemy import inspect

    from .schema import metadata

    tables = set(inspect(conn).get_table_names())
    ours = set(metadata.tables)
    if revision is not None and tables & ours:
        return  # repobrief's tables at a revision this version does not know: a newer repobrief
    # alembic_version beside repobrief's tables: another process migrated this new database meanwhile
    foreign = sorted(tables - ours - {"alembic_version"})
    if not foreign:
        return
    shown = ", ".join(foreign[:5]) + (", …" if len(foreign) > 5 else "")
    what = f"a schema revision ({revision!r}) that is not repobrief's" if revision is not None else "no repobrief schema"
    if conn.dialect.name == "sqlite":
        hint = "the file is not a repobrief database; choose another path with --db"
    else:
        hint = ("the database is not a repobrief database; create an empty one for repobrief "
                "(e.g. CREATE DATABASE repobrief) and give its URL with --db")
    raise StoreError(
        f"cannot open the store {display}: it holds other tables ({shown}) and {what}; nothing was added to it", hint
    )


def _open(t: str, migrate: bool):
    if _is_url(t):
        engine, display = _url_engine(t)
        display = mask_url(str(display))
    else:
        path = Path(t).expanduser()
        engine, display = _sqlite_engine(path), str(path)
    if migrate:
        _migrate(engine, display)
    return engine, display


def open_store(target: str | os.PathLike | None = None, *, migrate: bool = True, lazy: bool = False) -> Store:
    """Open (creating and migrating as needed) the store at `target`: a file path,
    `sqlite:///PATH`, `postgresql://…`, or None for `default_db_path()`.

    Raises `StoreError` naming the path or the URL (password masked). With
    `lazy=True` the slow part (importing SQLAlchemy, connecting, checking the
    schema revision) runs in a background thread while the caller goes on, e.g.
    reading git history; errors other than a bad path are then raised by the
    store's first use. A database server (`postgresql://…`) is always opened at
    once, so a URL that cannot connect fails before any work."""
    if target is None or str(target) == "":
        target = default_db_path()
    t = os.fspath(target)
    new = not store_exists(t)
    if not lazy or (_is_url(t) and not t.startswith("sqlite")):
        # A database server is opened at once: a wrong URL, password or host is an
        # error before any work, not after the history has been read.
        return Store(*_open(t, migrate), new=new)
    if not _is_url(t):
        path = Path(t).expanduser()
        if path.exists() and path.is_dir():
            raise StoreError(f"cannot open the store {path}: it is a directory", "give a file path with --db")
    box: dict = {}

    def work() -> None:
        try:
            box["engine"] = _open(t, migrate)
        except BaseException as e:  # noqa: BLE001 - handed to the thread that uses the store
            box["error"] = e

    thread = threading.Thread(target=work, name="repobrief-store-open", daemon=True)
    thread.start()
    return Store(None, mask_url(t), pending=thread, box=box, new=new)
