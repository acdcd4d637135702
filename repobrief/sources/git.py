"""The git source: merged pull requests read from a local clone, offline.

PRs are recognised on the default branch's first-parent line from squash
commits (`… (#123)`), GitHub merge commits (`Merge pull request #123 from
user/branch`, title on the body's first line), and merges of long-lived
branches (`Merge branch 'stable'`): PRs merged into such a branch count in the
week their merge reached the default branch. Everything comes from one
streaming `git log` (NUL-separated, no rename detection, no process per
commit); diffs are read in one more call, only when a detector needs content.
"""

from __future__ import annotations

import codecs
import os
import re
import shlex
import subprocess
import sys
from array import array
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from functools import lru_cache
from pathlib import Path

from ..analysis import files as fk
from ..conventions import NUMBER, REVERTS_SHA, reverted_title, reverts_named
from ..errors import SourceError
from ..models import Commit, FileChange, Notice, PullRequest, inert_text
from ..window import Window
from . import Source
from .gitfacts import GitFacts

_PR_MERGE = re.compile(r"^Merge pull request #" + NUMBER + r" from ([^/\s]+)(?:/(\S+))?")
_PR_SQUASH = re.compile(r"\(#" + NUMBER + r"\)\s*$")
_BRANCH_MERGE = re.compile(r"^Merge (?:remote-tracking )?branch '([^']+)'")

# git processes reading line counts at once (each commit's diff is independent).
NUMSTAT_WORKERS = max(1, min(4, os.cpu_count() or 1))
# Commits per `git log` when reading diffs (see read_diffs).
DIFF_BATCH = 64
# A commit: \x1e, then the fields that cannot hold \x1f (sha, parents, date), then the
# author's name and e-mail, which cannot hold a newline, on lines of their own before the
# message. A message may hold \x1e (pasted terminal output): records are cut only where
# a sha follows (`_stream`'s `start`).
_FORMAT = "%x1e%H%x1f%P%x1f%cI%x1f%an%n%ae%n%B"
_COMMIT_START = re.compile(rb"[0-9a-f]{40,64}\x1f")
_NUMSTAT_START = re.compile(rb"H[0-9a-f]{40,64}[\0\n]")
_DIFF_START = re.compile(rb"[0-9a-f]{40,64}\n")
# The line-count pass's patch when it keeps the detectors' diffs (`preload`): prefixes and
# diff drivers fixed whatever the user's configuration, as `read_diffs` has them.
_PATCH_ARGS = ("-p", "-U0", "--src-prefix=a/", "--dst-prefix=b/", "--no-ext-diff")
# Remote URL forms: https://host/owner/repo(.git), git@host:owner/repo.git, ssh://git@host/owner/repo
_REMOTE = re.compile(r"^(?:[a-z+]+://)?(?:[^@/]+@)?(?P<host>[^/:]+)(?::\d+)?[:/](?P<path>.+?)(?:\.git)?/?$")


def _git_env() -> dict[str, str]:
    # A stable, machine-readable git: no pager, no localisation, no user colour config.
    env = dict(os.environ)
    env.update({"LC_ALL": "C", "GIT_PAGER": "cat", "GIT_TERMINAL_PROMPT": "0"})
    # Writing into a pipe, `git log` flushes after every commit: a write, and a wake-up of
    # the reader, per commit (476 writes for verl's structure pass, 64 without). Nothing
    # here reads git's output a record at a time, so it is written in whole buffers.
    env["GIT_FLUSH"] = "0"
    # glibc's allocator gives the top of the heap back to the kernel after git frees each
    # inflated blob, and faults it in again for the next: a quarter of a line-count pass
    # went to that (system time 0.3 s of 1.9 s on verl's history; bench/bench_backfill.py).
    # Keeping freed memory costs nothing in peak size. Other C libraries ignore it.
    env.setdefault("MALLOC_TRIM_THRESHOLD_", str(1 << 30))
    return env


@dataclass(slots=True)
class _RawCommit:
    sha: str
    parents: list[str]
    author: str
    email: str
    committed_at: datetime
    subject: str
    body: str  # the message after the subject line; shared with the PR (no copy)
    files: list[FileChange] = field(default_factory=list)
    moves_read: bool = False  # `_ensure_moves` has looked at it


def origin_remote(path: Path, gitdir: str | None = None, stats: dict[str, int] | None = None) -> tuple[str, str] | None:
    """(host, OWNER/REPO) of a clone's `origin` remote, when it names a hosted repository.
    With the clone's git folder known, a plain `url` line in its own config file is read
    without a git process (see `_origin_url_in_file`); git answers everything else (and
    is counted in `stats["git_calls"]`, when given)."""
    url = _origin_url_in_file(Path(gitdir)) if gitdir else None
    if url is None:
        if stats is not None:
            stats["git_calls"] += 1
        try:
            res = subprocess.run(["git", "-C", str(path), "config", "--get", "remote.origin.url"],
                                 capture_output=True, env=_git_env())
        except OSError:  # no git: opening the clone says so
            return None
        if res.returncode != 0:
            return None
        url = res.stdout.decode("utf-8", "replace")
    return parse_remote(url)


# `[section]`, `[section "subsection"]`, and the old `[section.subsection]` (lower-cased by git).
_CONFIG_SECTION = re.compile(r'\[([A-Za-z0-9.-]+)(?:\s+"([^"\\]*)")?\]')
# Environment that adds config scopes above the clone's own file (`git -c`, GIT_CONFIG_COUNT …).
_CONFIG_ENV = ("GIT_CONFIG", "GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT")


def _origin_url_in_file(gitdir: Path) -> str | None:
    """`remote.origin.url` as the clone's own config file (`GITDIR/config`) sets it, or None
    whenever `git config --get` could answer otherwise, so that git is asked: no url in
    that file (a global or system file may set one), a file that includes others, a
    linked worktree or per-worktree config, config given through the environment, or
    any line this reader does not take apart exactly as git would (quotes, escapes,
    comments on a line, continued lines). The file's own value comes after the global
    and system ones, so where it gives one, it is the one git gives (the last, if twice)."""
    if any(name in os.environ for name in _CONFIG_ENV) or (gitdir / "commondir").exists():
        return None
    try:
        text = (gitdir / "config").read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError):
        return None
    url, section, origin = None, "", False
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line[0] in "#;":
            continue
        if line.endswith("\\"):
            return None
        if line[0] == "[":
            m = _CONFIG_SECTION.fullmatch(line)
            if not m:
                return None
            section, sub = m.group(1).lower(), m.group(2)
            if section in ("include", "includeif"):
                return None
            origin = (section, sub) == ("remote", "origin") or (sub is None and section == "remote.origin")
            continue
        key, eq, value = line.partition("=")
        key = key.strip().lower()
        if section == "extensions" and key == "worktreeconfig":
            return None
        if origin and key == "url":
            if not eq or any(c in value for c in '"\\#;\t'):
                return None
            url = value.strip()
    return url


def folder_name(path: Path) -> str:
    """A clone's name from its folder (`verl.git` → `verl`)."""
    name = path.resolve().name
    return name.removesuffix(".git") or name


def parse_remote(url: str) -> tuple[str, str] | None:
    """`(host, owner/repo)` from a remote URL, for GitHub, GitLab, Gitee and the like
    (GitLab's `group/subgroup/repo` whole); None for a remote on this machine."""
    url = url.strip()
    if url.startswith(("file:", "/", ".", "~")):
        return None
    m = _REMOTE.match(url)
    if not m:
        return None
    parts = [p for p in m.group("path").split("/") if p]
    if len(parts) < 2:
        return None
    host = m.group("host").lower()
    return host, "/".join(parts if "gitlab" in host else parts[-2:])


def pr_url(host: str | None, name: str, number: int) -> str:
    host = host or "github.com"
    if "gitlab" in host:
        return f"https://{host}/{name}/-/merge_requests/{number}"
    if "gitee" in host:
        return f"https://{host}/{name}/pulls/{number}"
    return f"https://{host}/{name}/pull/{number}"


class GitSource(Source):
    """A local clone (working tree or bare)."""

    name = "git"

    def __init__(self, location: str, settings=None, *, store=None, offline: bool = False) -> None:
        super().__init__()
        self.path = Path(location).expanduser()
        self.settings = settings
        if not self.path.exists():
            hint = "give the path of a local git clone"
            if re.fullmatch(r"[A-Za-z0-9][\w.-]*/[\w.-]+", location):
                hint += f", or github:{location} to read the repository from GitHub"  # OWNER/REPO
            raise SourceError(f"path {str(self.path)!r} does not exist", hint)
        if not self.path.is_dir():
            raise SourceError(f"{str(self.path)!r} is a file, not a git repository", "give the folder of a local git clone")
        self.branch = (settings.branch if settings is not None and settings.branch else "") or "HEAD"
        # One call: what the folder is, and the commit the branch names (a fourth line, when it has one).
        out = self._git("rev-parse", "--is-bare-repository", "--is-shallow-repository", "--absolute-git-dir",
                        "--verify", "-q", f"{self.branch}^{{commit}}", check=False)
        lines = out.stdout.decode().split("\n")
        if len(lines) < 3 or lines[0] not in ("true", "false"):  # not a repository: git printed nothing
            if b"safe.directory" in out.stderr:  # a clone another user owns (CI, containers)
                raise SourceError(
                    f"git refuses to read {str(self.path)!r}: it is owned by another user (git's 'dubious ownership' check)",
                    f"if you trust it: git config --global --add safe.directory {shlex.quote(str(self.path.resolve()))}",
                )
            raise SourceError(
                f"{str(self.path)!r} is not a git repository",
                "point repobrief at a clone (git clone URL), or use github:OWNER/REPO",
            )
        bare, shallow, self._gitdir = lines[:3]
        self.bare = bare == "true"
        self.shallow = shallow == "true"
        if out.returncode != 0 or len(lines) < 4 or not lines[3].strip():
            if self.branch == "HEAD":
                raise self._no_commit_at_head()
            raise SourceError(f"branch {self.branch!r} does not exist in {str(self.path)!r}", "set `branch` to the default branch's name, or leave it empty to use HEAD")
        self.tip = self._head = lines[3].strip()  # a view (as_of) moves `tip`, never `_head`
        if self.shallow:
            self.warnings.append(Notice(
                "this clone is shallow: commits before its cut-off are missing, so trends and first-time "
                "contributors may be incomplete; run `git fetch --unshallow` to fix it", "shallow",
            ))
        self._loaded_since: datetime | None = None
        self._commits: dict[str, _RawCommit] = {}
        self._prs: list[PullRequest] = []
        self._direct: list[Commit] = []
        self._authors_before: tuple[datetime, set[str]] | None = None
        self._numstat_done: set[str] = set()
        # The detectors' diffs kept from a line-count pass that read patches (`preload`):
        # by commit, each wanted file's (path, lines kept); and what was asked to keep them.
        self._kept_diffs: dict[str, list[tuple[str, bytes]]] = {}
        self._keeping: _DiffsWanted | None = None
        self._authors_proc: subprocess.Popen | None = None  # the authors' walk, started early
        self._line: tuple[array, bytes] | None = None  # see index()
        self._first_seen: dict[str, datetime] | None = None
        self._releases: dict[str, str | None] = {}  # by commit; shared with views
        self._head_time: dict[str, datetime | None] = {}  # see newest_commit; shared with views
        self._merged_authors: dict[str, tuple[str, str | None]] = {}  # see _read_merged_authors
        self._facts: GitFacts | None = None  # see remember(); shared with views
        self.stats = {"commits_read": 0, "git_calls": 1}
        self._remote = origin_remote(self.path, self._gitdir, self.stats)

    # ------------------------------------------------------------------ git plumbing

    def _no_commit_at_head(self) -> SourceError:
        """Why HEAD has no commit: an empty repository, or HEAD on a branch with no commits
        yet (`git checkout --orphan gh-pages`) in a clone whose other branches have history."""
        here = str(self.path)
        head = self._git("symbolic-ref", "-q", "--short", "HEAD", check=False).stdout.decode().strip()
        refs = self._git("for-each-ref", "--format=%(refname:short)", "refs/heads", "refs/remotes", check=False)
        branches = [b for b in refs.stdout.decode().split() if b != head and not b.endswith("/HEAD")]
        if not head or not branches:
            return SourceError(f"repository {here!r} is empty (no commits yet)", "commit something or point at another clone")
        origin = self._git("symbolic-ref", "-q", "--short", "refs/remotes/origin/HEAD", check=False).stdout.decode().strip()
        default = next((b for b in (origin.removeprefix("origin/"), "main", "master") if b and b in branches),
                       origin or branches[0])
        return SourceError(
            f"HEAD of {here!r} is on branch {head!r}, which has no commits yet",
            f"check out the default branch (git -C {shlex.quote(here)} checkout {default}), "
            f'or set `branch = "{default}"` in the config to read it whatever is checked out',
        )

    def _git(self, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        try:
            res = subprocess.run(["git", "-C", str(self.path), *args], capture_output=True, env=_git_env())
        except FileNotFoundError:
            raise SourceError("the `git` command is not installed", "install git (e.g. apt-get install git)") from None
        if check and res.returncode != 0:
            raise SourceError(f"git {args[0]} failed in {str(self.path)!r}: {res.stderr.decode('utf-8', 'replace').strip()}")
        return res

    def repository_name(self) -> str | None:
        return self._remote[1] if self._remote else folder_name(self._clone_folder())

    def _clone_folder(self) -> Path:
        """The clone's own folder, when the path given is inside it (`verl/docs`, `verl/.git`)."""
        if self.bare:
            return Path(self._gitdir)
        here = self.path.resolve()
        return next((f for f in (here, *here.parents) if (f / ".git").exists()), here)

    def _name(self) -> str | None:
        """OWNER/REPO as configured, else as the origin remote names it."""
        return (self.settings.name if self.settings is not None and self.settings.name else None) or (self._remote[1] if self._remote else None)

    def _url(self, number: int) -> str | None:
        name = self._name()
        if not name or "/" not in name:
            return None
        return pr_url(self._remote[0] if self._remote else None, name, number)

    # ------------------------------------------------------------------ reading the log

    def _stream(self, args: list[str], stdin: bytes | None = None, sep: bytes = b"\x1e",
                start: re.Pattern[bytes] | None = None) -> Iterator[bytes]:
        """Run `git log …` and yield its `sep`-separated records as they arrive. With
        `start`, a piece that does not begin as a record belongs to the record
        before it (a `sep` inside a message or a file's content)."""
        try:
            proc = subprocess.Popen(
                ["git", "-C", str(self.path), *args],
                stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=_git_env(),
            )
        except FileNotFoundError:
            raise SourceError("the `git` command is not installed", "install git (e.g. apt-get install git)") from None
        self.stats["git_calls"] += 1
        stdout, stderr = proc.stdout, proc.stderr
        assert stdout is not None and stderr is not None
        if stdin is not None:
            assert proc.stdin is not None
            proc.stdin.write(stdin)
            proc.stdin.close()

        def pieces() -> Iterator[bytes]:
            # A record longer than a read (a patch) is joined once, not grown read by read;
            # records are cut where `find` (memchr) finds `sep`: `split` looks at every byte.
            tail: list[bytes] = []
            for chunk in iter(lambda: stdout.read(1 << 20), b""):
                at = chunk.find(sep)
                if at < 0:
                    tail.append(chunk)
                    continue
                tail.append(chunk[:at])
                yield b"".join(tail)
                start = at + 1
                while (at := chunk.find(sep, start)) >= 0:
                    yield chunk[start:at]
                    start = at + 1
                tail = [chunk[start:]]
            yield b"".join(tail)

        yield from pieces() if start is None else _joined(pieces(), sep, start)
        err = stderr.read()
        if proc.wait() != 0:
            raise SourceError(f"git {args[0]} failed in {str(self.path)!r}: {err.decode('utf-8', 'replace').strip()}")

    def _load(self, since: datetime) -> None:
        """Read the structure (parents, messages, paths) of everything since `since`.

        Only the tree diff (`--raw`) is asked for here: line counts need blob diffs, which
        cost ten times more, so `_ensure_numstat` reads them for just the PRs that need them.
        """
        if self._loaded_since is not None and self._loaded_since <= since:
            return
        commits: dict[str, _RawCommit] = {}
        self._read_log(commits, [f"--since={_slack(since)}"])
        self._numstat_done.clear()  # the new records carry no line counts yet
        self._loaded(commits, since)

    def _read_log(self, commits: dict[str, _RawCommit], args: list[str], *, lines: bool = False) -> None:
        """One structure pass (`--raw`) into `commits`, keeping records already there;
        `lines`: the first-parent line only, with line counts: `--numstat`, or, when
        `preload` was asked to keep the detectors' diffs, the `-U0` patch, which gives
        the same counts and holds those diffs too (`_parse_patch`)."""
        keeping = self._keeping if lines else None
        extra = ["--first-parent", *(_PATCH_ARGS if keeping is not None else ["--numstat"])] if lines else []
        for rec in self._stream(["log", "-z", "--no-renames", "--diff-merges=first-parent", "--raw", *extra,
                                 "--no-color", "--encoding=UTF-8", f"--format={_FORMAT}", *args, self.tip],
                                start=_COMMIT_START):
            c = _parse_record(rec, keeping, self._kept_diffs)
            if c is not None:
                commits.setdefault(c.sha, c)

    def _loaded(self, commits: dict[str, _RawCommit], since: datetime) -> None:
        self.stats["commits_read"] = len(commits)
        self._commits = commits
        self._loaded_since = since
        for merge in self._incomplete_branch_merges():
            self._read_side(merge)
        self._classify()

    def preload(self, since: datetime, lines_from: datetime, previous: GitSource | None = None, *,
                diff_files: Callable[[str, str], bool] | None = None, diff_lines: str | None = None) -> None:
        """Read everything since `since` with line counts from `lines_from` on, for a run
        of weeks (backfill). Nearly every commit of such a run needs its line counts, and
        one `git log --first-parent --raw --numstat` costs no more than the line counts
        alone, so the separate structure pass is left out unless the history has merges
        (whose side lines only a full walk reads); the baseline before `lines_from` is
        read without line counts, alongside. `previous`: the view of the part before
        (see `view`), whose last weeks are this part's baseline: see `_carried`.

        With `diff_files` and `diff_lines` (what `read_diffs` will be asked for: whether
        it may name a file, by path and status, and its `lines`), the line counts come
        from the `-U0` patch instead, and those files' diffs are kept from it: the
        detectors' diffs then cost no second diff of the same blobs. The separate pass
        redid a fifth of the line-count pass's git work on verl's replayed history, and
        three quarters of it with lines as long as real code's (docs/performance.md)."""
        from concurrent.futures import ThreadPoolExecutor

        if self._loaded_since is not None and self._loaded_since <= since:
            return
        if diff_files is not None and diff_lines is not None:
            self._keeping = _DiffsWanted(diff_files, diff_lines)
        lines_from = max(lines_from, since)
        commits = self._carried(previous, since, lines_from) if previous is not None else None
        if commits is None:
            commits = {}
            baseline: dict[str, _RawCommit] = {}
            with ThreadPoolExecutor(1) as pool:
                early = pool.submit(self._read_log, baseline,
                                    ["--first-parent", f"--since={_slack(since)}", f"--until={lines_from.isoformat()}"])
                self._read_log(commits, [f"--since={_slack(lines_from)}"], lines=True)
                early.result()
            self._numstat_done = set(commits)
            for sha, c in baseline.items():
                commits.setdefault(sha, c)
        # The full structure pass when the history has merges (their side lines), or when
        # the line does not hold together: a commit dated after `lines_from` but sitting
        # below where the line-count pass stopped is left out by both passes above.
        if any(len(c.parents) > 1 for c in commits.values()) or not self._line_holds(commits):
            self._read_log(commits, [f"--since={_slack(since)}"])
        self._loaded(commits, since)
        self._ensure_moves(self._numstat_done)  # the weeks' commits, in one call

    def _carried(self, previous: GitSource, since: datetime, lines_from: datetime) -> dict[str, _RawCommit] | None:
        """What `preload` reads, with only the commits above `previous`'s tip read from git
        and the rest taken from `previous` (a backfill's part before this one, on the same
        first-parent line): its last weeks are this part's baseline, which each part read
        again (a twelfth of all line counts, at 52 weeks a part). The same commits as
        reading afresh, found the way git walks: the line from the tip while commits are
        no older than `--since` (line counts: `_slack(lines_from)`; the baseline:
        `_slack(since)`, no newer than `lines_from`). None when `previous` lacks a commit
        of that line or its line counts: then the part is read afresh."""
        if previous._loaded_since is None or previous._loaded_since > since:
            return None
        new: dict[str, _RawCommit] = {}
        self._read_log(new, [f"--since={_slack(lines_from)}", f"^{previous.tip}"], lines=True)
        counted_from = (lines_from - timedelta(days=7)).timestamp()
        base_from, base_until = (since - timedelta(days=7)).timestamp(), lines_from.timestamp()
        old, old_counted = previous._commits, previous._numstat_done
        commits: dict[str, _RawCommit] = {}
        counted: set[str] = set()
        in_counted_walk = True  # git's walk with line counts stops at its first older commit
        sha: str | None = self.tip
        while sha:
            c = new.get(sha)
            mine = c is not None
            if c is None:
                c = old.get(sha)
                if c is None:  # a commit neither read: this part is read afresh
                    return None
            when = c.committed_at.timestamp()
            if when < base_from:
                break
            in_counted_walk = in_counted_walk and when >= counted_from
            if in_counted_walk:
                if not mine and sha not in old_counted:
                    return None
                commits[sha] = c
                counted.add(sha)
            elif when <= base_until:  # the baseline, read without line counts
                commits[sha] = c if sha not in old_counted else _without_counts(c)
            sha = c.parents[0] if c.parents else None
        self._numstat_done = counted
        return commits

    def _line_holds(self, commits: dict[str, _RawCommit]) -> bool:
        """Every commit read lies on the first-parent line from the tip without a gap."""
        sha, n = self.tip, 0
        while sha in commits:
            n += 1
            parents = commits[sha].parents
            sha = parents[0] if parents else None
        return n == len(commits)

    def began(self) -> datetime | None:
        """When the branch's history begins, when the first-parent line read reaches its
        first commit: the earliest commit time on that line (a commit's clock may run behind
        its parent's), so no PR or commit counted falls before it. None when the line read
        stops above its first commit, or the clone is shallow (its cut-off looks like one)."""
        if self.shallow:
            return None
        line = self._mainline()
        if not line or line[0].parents:
            return None
        return min(c.committed_at for c in line)

    def newest_commit(self) -> datetime | None:
        """The commit time of the branch head (of the clone, also for a view of a past week).
        Asked of every quiet week (`pipeline._stale`): git is asked once, and the views of
        a backfill's parts share the answer (flask's 834 weeks ran 408 `git log -1`)."""
        c = self._commits.get(self._head)
        if c is not None:
            return c.committed_at
        if self._head not in self._head_time:
            self.stats["git_calls"] += 1
            out = self._git("log", "-1", "--format=%cI", self._head, check=False).stdout.decode().strip()
            self._head_time[self._head] = datetime.fromisoformat(out) if out else None
        return self._head_time[self._head]

    def _mainline(self) -> list[_RawCommit]:
        """The default branch's first-parent line, oldest first, as far as it was read."""
        line: list[_RawCommit] = []
        sha: str | None = self.tip
        while sha and sha in self._commits:
            c = self._commits[sha]
            line.append(c)
            sha = c.parents[0] if c.parents else None
        line.reverse()
        return line

    def _incomplete_branch_merges(self) -> list[_RawCommit]:
        """Branch merges whose side line reaches past what the structure pass read:
        a PR merged into `stable` long before `stable` was merged into main."""
        out = []
        mainline = self._mainline()
        on_main = {c.sha for c in mainline}
        for c in mainline:
            if len(c.parents) < 2 or not _BRANCH_MERGE.match(c.subject):
                continue
            s: str | None = c.parents[1]
            while s and s in self._commits and s not in on_main:
                p = self._commits[s].parents
                s = p[0] if p else None
            if s and s not in self._commits:
                out.append(c)
        return out

    def _read_side(self, merge: _RawCommit) -> None:
        """Read the side line of one branch merge in full (`p2 ^p1`), rarely needed."""
        args = ["log", "-z", "--no-renames", "--diff-merges=first-parent", "--raw", "--no-color",
                "--encoding=UTF-8", f"--format={_FORMAT}", merge.parents[1], f"^{merge.parents[0]}"]
        for rec in self._stream(args, start=_COMMIT_START):
            c = _parse_record(rec)
            if c is not None:
                self._commits.setdefault(c.sha, c)

    def _ensure_numstat(self, changes: Sequence[PullRequest | Commit]) -> None:
        """Fill in added/deleted line counts with `git log --no-walk --stdin`.

        Blob diffs are the one expensive thing git does for us and each commit's is
        independent, so large batches are split over the machine's cores."""
        todo = {c.sha: c for c in changes if c.sha and c.sha not in self._numstat_done}
        if not todo:
            return
        shas = list(todo)
        if self._facts is not None:
            kept = self._facts.counts(shas)
            for sha, rows in kept.items():
                self._set_counts(sha, {path: (added, deleted) for path, added, deleted in rows})
            self.stats["numstat_kept"] = self.stats.get("numstat_kept", 0) + len(kept)
            shas = [sha for sha in shas if sha not in kept]
        self._read_counts(shas)
        for c in todo.values():
            if isinstance(c, PullRequest):
                c.lines_known = True

    def _read_counts(self, shas: list[str]) -> None:
        if not shas:
            return
        workers = min(NUMSTAT_WORKERS, max(1, len(shas) // 50))
        chunks = [shas[i::workers] for i in range(workers)]
        if workers == 1:
            results = [self._numstat(chunks[0])]
        else:
            from concurrent.futures import ThreadPoolExecutor

            with ThreadPoolExecutor(workers) as pool:
                results = list(pool.map(self._numstat, chunks))
        read = {sha: files for part in results for sha, files in part}
        for sha, files in read.items():
            self._set_counts(sha, {f.path: (f.added, f.deleted) for f in files})
        if self._facts is not None:
            self._facts.add_counts({sha: [[f.path, f.added, f.deleted] for f in files] for sha, files in read.items()})

    def _set_counts(self, sha: str, counts: dict[str, tuple[int | None, int | None]]) -> None:
        for f in self._commits[sha].files if sha in self._commits else []:
            if f.previous:  # moved (see _parse_files, _ensure_moves): git counts every line at its new path
                continue
            got = counts.get(f.path)
            if got is not None:
                f.added, f.deleted = got
        self._numstat_done.add(sha)

    def _ensure_moves(self, shas: Iterable[str | None]) -> None:
        """Python modules and configuration files moved with edits, found by git's rename
        detection: `--no-renames` lists such a move as a deletion and an addition (a
        module or config file "removed"), and pairing them by name or size would guess.
        Only commits that delete and add such files (`files.move_matters`) are asked
        about, in one `git log -M` limited to those files; each move found becomes one
        entry at the new path with the edit's line counts and the old path (as GitHub
        lists a rename). Line counts come first (`_ensure_numstat`). Tests, docs and
        examples are left out: nobody imports them, and they are half the files such
        commits delete and add."""
        todo: dict[str, list[FileChange]] = {}
        paths: set[str] = set()
        for sha in shas:
            c = self._commits.get(sha) if sha else None
            if c is None or c.moves_read:
                continue
            c.moves_read = True
            gone = [f.path for f in c.files if f.status == "D" and fk.move_matters(f.path)]
            new = [f.path for f in c.files if f.status == "A" and fk.move_matters(f.path)] if gone else []
            if new:
                todo[c.sha] = c.files
                paths.update(gone, new)
        if not todo:
            return
        args = ["log", "-z", "--no-walk=unsorted", "--stdin", "-M", "--diff-filter=R", "--diff-merges=first-parent",
                "--sparse", "--numstat", "--no-color", "--no-ext-diff", "--format=%x1eH%H"]
        stdin = "\n".join([*todo, "--", *(f":(literal){p}" for p in sorted(paths))]).encode("utf-8", "replace") + b"\n"
        for rec in self._stream(args, stdin=stdin, start=_NUMSTAT_START):
            head, _, rest = rec.partition(b"\0")
            files = todo.get(head[1:].strip().decode()) if head.startswith(b"H") else None
            if files is not None:
                _apply_moves(files, rest)

    def _numstat(self, shas: list[str]) -> list[tuple[str, list[FileChange]]]:
        args = ["log", "-z", "--no-walk=unsorted", "--stdin", "--no-renames", "--diff-merges=first-parent",
                "--numstat", "--no-color", "--no-ext-diff", "--format=%x1eH%H"]
        out = []
        for rec in self._stream(args, stdin="\n".join(shas).encode() + b"\n", start=_NUMSTAT_START):
            head, _, rest = rec.partition(b"\0")
            if head.startswith(b"H"):
                out.append((head[1:].strip().decode(), _parse_files(rest)))
        return out

    def _classify(self) -> None:
        """Walk the first-parent line oldest first and turn commits into PRs and direct commits."""
        mainline = self._mainline()
        claimed = {c.sha for c in mainline}
        self._read_merged_authors(mainline)
        seen_prs: set[int] = set()
        by_sha: dict[str, int] = {}
        by_title: dict[str, int] = {}  # the latest PR of each title, for reverts that quote it
        prs: list[PullRequest] = []
        direct: list[Commit] = []

        def emit(c: _RawCommit, when: datetime, via: str | None) -> None:
            pr = self._as_pr(c, when, via)
            if pr is None:
                # A branch merge brings its side's commits, emitted one by one; a commit that
                # only says "Merge branch …" but has one parent (squashed, rebased) is its own change.
                if len(c.parents) < 2 or not _BRANCH_MERGE.match(c.subject):
                    direct.append(Commit(c.sha, c.subject, c.author, when, c.files, self._reverted(c, by_sha, by_title),
                                         c.email))
                return
            by_sha[c.sha] = pr.number
            if pr.number in seen_prs:  # the same PR brought in twice (cherry-pick, re-merge)
                return
            seen_prs.add(pr.number)
            pr.reverts = self._reverted(c, by_sha, by_title)
            by_title[_PR_SQUASH.sub("", pr.title).strip().lower()] = pr.number  # a squash title ends with "(#N)"
            prs.append(pr)

        for c in mainline:
            m = _BRANCH_MERGE.match(c.subject)
            if m and len(c.parents) > 1:
                branch = m.group(1).removeprefix("origin/")
                side: list[_RawCommit] = []
                s: str | None = c.parents[1]
                while s and s in self._commits and s not in claimed:
                    claimed.add(s)
                    side.append(self._commits[s])
                    p = self._commits[s].parents
                    s = p[0] if p else None
                for sc in reversed(side):
                    emit(sc, c.committed_at, f"branch:{branch}")
                continue
            emit(c, c.committed_at, None)
        self._prs = prs
        self._direct = direct

    def _read_merged_authors(self, mainline: list[_RawCommit]) -> None:
        """A merged PR's author is its branch head's; when that commit is older than what
        was read, read the authors of those heads (one `git log --no-walk`), so the PR's
        author does not depend on how far back the log went."""
        heads = [c.parents[1] for c in mainline if len(c.parents) > 1 and c.parents[1] not in self._commits
                 and c.parents[1] not in self._merged_authors and _PR_MERGE.match(c.subject)]
        if not heads:
            return
        for rec in self._stream(["log", "--no-walk=unsorted", "--stdin", "--format=%H%x00%an%x00%ae%x1e"],
                                stdin="\n".join(heads).encode() + b"\n"):
            sha, _, rest = rec.strip(b"\n").decode("utf-8", "replace").partition("\0")
            name, _, email = rest.partition("\0")
            if sha:
                self._merged_authors[sha] = (name, email or None)

    def _as_pr(self, c: _RawCommit, when: datetime, via: str | None) -> PullRequest | None:
        subject = c.subject
        # A squash merge ends with its PR's number, whatever its title says: a PR titled
        # "Merge pull request #12 from upstream/main" lands as "… (#456)".
        m = _PR_MERGE.match(subject) if len(c.parents) > 1 or not _PR_SQUASH.search(subject) else None
        if m:
            number = int(m.group(1))
            lines = [ln.strip() for ln in c.body.split("\n")]
            body_lines = lines[:]
            while body_lines and not body_lines[0]:
                body_lines.pop(0)
            title = body_lines[0] if body_lines else (m.group(3) or subject)
            body = "\n".join(body_lines[1:]).strip()
            author = m.group(2)
            email = None
            if len(c.parents) > 1 and c.parents[1] in self._merged_authors:
                author, email = self._merged_authors[c.parents[1]]
                author = author or m.group(2)
            elif len(c.parents) > 1 and c.parents[1] in self._commits:
                feature = self._commits[c.parents[1]]
                author, email = feature.author or author, feature.email
            return PullRequest(
                number=number, title=title, body=body, author=author, author_email=email, merged_at=when,
                files=c.files, sha=c.sha, url=self._url(number), via=via or "merge",
                lines_known=c.sha in self._numstat_done,
            )
        m = _PR_SQUASH.search(subject)
        if m:
            number = int(m.group(1))
            body = c.body
            return PullRequest(
                number=number, title=subject, body=body, author=c.author, author_email=c.email, merged_at=when,
                files=c.files, sha=c.sha, url=self._url(number), lines_known=c.sha in self._numstat_done,
                via=via or ("merge" if len(c.parents) > 1 else "squash"),
            )
        return None

    def _reverted(self, c: _RawCommit, by_sha: dict[str, int], by_title: dict[str, int]) -> int | None:
        """The PR a revert undoes: the body's "Reverts owner/repo#N" (GitHub's Revert
        button) or "This reverts commit <sha>", else an earlier PR of the quoted title,
        else a "(#N)" the quoted title ends with (a title may hold an issue's "(#N)" of
        its own, so that is the last resort)."""
        quoted = reverted_title(c.subject)
        if quoted is None:
            return None
        named = reverts_named(c.body, self._name())
        if named is not None:
            return named
        s = REVERTS_SHA.search(c.body)
        if s:
            for sha, number in by_sha.items():
                if sha.startswith(s.group(1)):
                    return number
        titled = by_title.get(quoted.strip().lower())
        if titled is not None:
            return titled
        inner = _PR_SQUASH.search(quoted) or _PR_MERGE.match(quoted)
        return int(inner.group(1)) if inner else None

    # ------------------------------------------------------------------ Source API

    def iter_pull_requests(self, window: Window) -> Iterator[PullRequest]:
        self._load(window.start)
        start, end = window.start, window.end  # (`Window.contains`, inline: spans hold thousands of PRs)
        prs = [pr for pr in self._prs if start <= pr.merged_at < end]
        # Direct commits of the same window get their line counts in the same git call.
        changes: list[PullRequest | Commit] = [*prs, *(c for c in self._direct if start <= c.committed_at < end)]
        self._ensure_numstat(changes)
        self._ensure_moves(c.sha for c in changes)
        yield from prs

    def history(self, window: Window) -> Iterator[PullRequest]:
        self._load(window.start)
        start, end = window.start, window.end
        yield from [pr for pr in self._prs if start <= pr.merged_at < end]

    def direct_commits(self, window: Window) -> list[Commit]:
        self._load(window.start)
        start, end = window.start, window.end
        commits = [c for c in self._direct if start <= c.committed_at < end]
        self._ensure_numstat(commits)
        self._ensure_moves(c.sha for c in commits)
        return commits

    def remember(self, refresh: bool = False) -> None:
        """Keep the authors' first commits and the line counts read for the next run, and
        reuse what an earlier run kept (see `gitfacts`). Not for a shallow clone: its
        commits stay the same when it is deepened (`git fetch --unshallow`, as its warning
        says to), while the authors before them and its cut-off commits' diffs do not."""
        if not self.shallow:
            self._facts = GitFacts(self._gitdir, refresh=refresh)

    def prefetch_authors(self, before: datetime) -> None:
        """Start the authors' walk in the background (the pipeline knows the week before it
        reads anything; on two cores this overlaps the main log), unless authors kept by an
        earlier report leave only the commits above their tip to read (then read when asked)."""
        if self._authors_proc is None and self._authors_before is None and (
                self._facts is None or self._facts.first_seen() is None):
            self._authors_proc = self._popen_first_seen([self.tip])

    def earlier_authors(self, before: datetime) -> set[str] | None:
        """Names and e-mails of everyone with a commit before `before`: those whose first
        commit (`_first_seen_epochs`) came before it, as a backfill counts them too."""
        if self._authors_before and self._authors_before[0] == before:
            return self._authors_before[1]
        cut = before.timestamp()
        names = {key for key, when in self._first_seen_epochs().items() if when < cut}
        self._authors_before = (before, names)
        return names

    def latest_release(self, before: datetime) -> str | None:
        """The nearest version tag reachable from the newest mainline commit committed
        before `before` (`git describe --tags`): the release a past week knew, not one
        tagged since."""
        tip = self._tip_before(before)
        if not tip:
            return None
        if tip not in self._releases:
            res = self._git("describe", "--tags", "--abbrev=0", "--match", "*[0-9]*", tip, check=False)
            self.stats["git_calls"] += 1
            tag = res.stdout.decode("utf-8", "replace").strip() if res.returncode == 0 else ""
            self._releases[tip] = tag if re.search(r"\d+\.\d+", tag) else None
        return self._releases[tip]

    def _tip_before(self, end: datetime) -> str:
        """The newest first-parent commit committed before `end` ('' when none): one short
        `git rev-list` walk down the line from the tip."""
        res = self._git("rev-list", "--first-parent", "-1", f"--before={(end - timedelta(seconds=1)).isoformat()}",
                        self.tip)
        self.stats["git_calls"] += 1
        return res.stdout.decode().strip()

    def index(self) -> None:
        """The first-parent line with commit times and the authors' first commits, read
        at once (`git rev-list` and `git log`, without diffs): forked workers share both
        instead of each reading them. The thread has ended when this returns (so a fork
        may follow)."""
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(1) as pool:
            seen = pool.submit(self.author_first_seen)
            self._first_parent_line()
            seen.result()

    def _first_parent_line(self) -> tuple[array, bytes]:
        """Commit times and binary shas (20 bytes each) of the first-parent line from the
        tip, newest first; read once, kept compact (a backfill's workers share it)."""
        if self._line is None:
            times, shas = array("q"), bytearray()
            # Line by line: the whole output split at once was 10 MB of small objects for
            # 100,000 commits, which stayed in the heap the workers inherit.
            for rec in self._stream(["rev-list", "--first-parent", "--timestamp", self.tip], sep=b"\n"):
                ts, _, sha = rec.partition(b" ")
                if sha:
                    times.append(int(ts))
                    shas += bytes.fromhex(sha.decode("ascii"))
            self._line = (times, bytes(shas))
            if times and self.tip == self._head:  # the head's commit time: `newest_commit` needs no git
                self._head_time[self._head] = datetime.fromtimestamp(times[0], UTC)
        return self._line

    def commits_per_window(self, windows: list[Window]) -> list[int]:
        """Mainline commits (PRs and direct commits) per window, from the first-parent line."""
        from bisect import bisect_left

        times = sorted(self._first_parent_line()[0])
        return [bisect_left(times, w.end.timestamp()) - bisect_left(times, w.start.timestamp()) for w in windows]

    def mainline_tips(self, ends: list[datetime]) -> list[str | None]:
        """For each time in `ends`, the newest commit of the first-parent line committed
        before it (None: none), from the line `index` reads."""
        times, shas = self._first_parent_line()
        # For each end, the newest position on the line with an earlier time: every newer
        # position is merged at or after `end` (times on the line need not be monotonic).
        # A later end's position is never older than an earlier end's: one sweep serves all.
        tips: dict[datetime, str | None] = {}
        i = 0
        for end in sorted(set(ends), reverse=True):
            limit = end.timestamp()
            while i < len(times) and times[i] >= limit:
                i += 1
            tips[end] = shas[20 * i:20 * i + 20].hex() if i < len(times) else None
        return [tips[end] for end in ends]

    def as_of(self, end: datetime) -> GitSource:
        """A view whose tip is the newest first-parent commit committed before `end` (one
        short `git rev-list` walk down the line), as a backfill's part ends where its weeks
        do: a report of a week long past then reads that week and its baseline, not every
        commit merged since (the log is read from the tip down). Itself when that commit is
        the tip, or when nothing was merged before `end`."""
        tip = self._tip_before(end)
        if not tip and self.shallow:  # git has nothing older: "nothing merged" would be untrue
            raise SourceError(
                f"{str(self.path)!r} is a shallow clone with no commit before {end.date().isoformat()}"
                f"{self._shallow_start()}: the period asked for is outside its history",
                f"deepen it (git -C {shlex.quote(str(self.path))} fetch --unshallow, or --shallow-since=DATE) "
                "or report a later week",
            )
        if not tip or tip == self.tip:
            return self
        v = self.view(tip)
        v.stats["git_calls"] = self.stats["git_calls"]
        return v

    def _shallow_start(self) -> str:
        """` (its oldest commit is from DATE)` for a shallow clone, from its boundary commits."""
        try:
            cut = (Path(self._gitdir) / "shallow").read_text().split()
        except OSError:
            return ""
        res = self._git("log", "--no-walk", "--format=%cs", *cut, check=False)
        dates = sorted(res.stdout.decode().split())
        return f" (its oldest commit is from {dates[0]})" if res.returncode == 0 and dates else ""

    def view(self, tip: str) -> GitSource:
        """This clone read as if `tip` were the branch head: a long history is read in
        parts, each ending at a mainline commit (see `pipeline.generate_reports`)."""
        v = object.__new__(GitSource)
        v.__dict__.update(self.__dict__)
        v.tip = tip
        v.warnings = list(self.warnings)
        v._loaded_since = None
        v._commits, v._prs, v._direct = {}, [], []
        v._authors_before = v._authors_proc = None
        v._numstat_done = set()
        v._kept_diffs, v._keeping = {}, None
        v._line = None  # the clone's line starts at its own tip
        v.stats = {"commits_read": 0, "git_calls": 0}
        return v

    def author_first_seen(self) -> dict[str, datetime] | None:
        """One `git log` over the whole history (no diffs): first commit time per author; read once.
        Newest first, as git walks (`--reverse` would hold the output back until the walk
        ends), keeping each author's earliest time as an integer until the end."""
        if self._first_seen is None:
            self._first_seen = {key: datetime.fromtimestamp(t, UTC) for key, t in self._first_seen_epochs().items()}
        return self._first_seen

    def _popen_first_seen(self, revs: list[str]) -> subprocess.Popen:
        self.stats["git_calls"] += 1
        return subprocess.Popen(["git", "-C", str(self.path), "log", _FIRST_SEEN_FORMAT, *revs],
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=_git_env())

    def _is_ancestor(self, sha: str) -> bool:
        """`sha` is the tip or below it (False as well for a commit the clone lacks)."""
        self.stats["git_calls"] += 1
        return self._git("merge-base", "--is-ancestor", sha, self.tip, check=False).returncode == 0

    def _first_seen_epochs(self) -> dict[str, int]:
        """Each author's first commit time (epoch seconds) as of the tip: what an earlier
        report kept (`remember`), plus the commits above its tip when that tip is an
        ancestor of this one (a clone pulled since); else one walk of the whole history
        (a first report, history rewritten, or nothing kept), kept for the next report.
        The walk's output is read line by line: 100,000 commits split at once were 10 MB
        of small objects that stayed in the heap a backfill's workers inherit."""
        kept = self._facts.first_seen() if self._facts is not None else None
        if kept is not None and kept[0] == self.tip:
            return kept[1]
        # A kept tip among the commits this view read is below its tip (they were walked
        # from it): the weekly case, last week's tip, needs no `merge-base` to say so.
        if kept is not None and (kept[0] in self._commits or self._is_ancestor(kept[0])):
            seen, proc = kept[1], self._popen_first_seen([self.tip, f"^{kept[0]}"])
        else:
            seen, proc = {}, self._authors_proc or self._popen_first_seen([self.tip])
        self._authors_proc = None
        assert proc.stdout is not None
        _first_seen_into(seen, proc.stdout)
        if proc.wait() != 0:
            raise SourceError(f"git log failed in {str(self.path)!r} while reading the authors' first commits")
        if self._facts is not None:
            self._facts.keep_first_seen(self.tip, seen)
        return seen

    def close(self) -> None:
        if self._facts is not None:
            self._facts.flush()
        if self._authors_proc is not None:
            self._authors_proc.kill()
            self._authors_proc.communicate()
            self._authors_proc = None

    def read_diffs(
        self, prs: list[PullRequest], paths: dict[int, list[str]], max_bytes: int, *, lines: str | None = None
    ) -> dict[int, str]:
        """Diffs (-U0) of the PRs, each limited to its files in `paths`, each file's starting with a
        `diff --git a/PATH b/PATH` line that names the file as it is (see
        `files.diff_header_path`), whatever git's quoting and the user's prefixes.

        Commits go to `git log --stdin` in batches, each with only its own commits'
        paths as literal pathspecs: git matches every changed file against every
        pathspec, so one call with the paths of a whole history would be quadratic.
        A PR's diff keeps only its own files (a batch's pathspecs are the union of its
        commits'), so it is the same whichever PRs share its batch.
        With `lines` (only some lines wanted, as the detectors read them), a diff
        longer than `max_bytes` keeps whole files: a file cut between a hunk's removed
        and added lines would read as removed keys. Batches run on all cores."""
        out: dict[int, str] = {}
        keeping = self._keeping if self._keeping is not None and self._keeping.lines == lines else None
        jobs: list[tuple[dict[str, int], list[str]]] = []
        batch: dict[str, int] = {}
        batch_paths: set[str] = set()
        own: dict[str, set[str]] = {}
        for pr in prs:
            mine = paths.get(pr.number)
            if not pr.sha or not mine:
                continue
            kept = self._kept_diffs.get(pr.sha) if keeping is not None else None
            # Kept by the line-count pass: when every file asked for was (any other goes to git).
            wanted = set(mine)
            if kept is not None and wanted <= {path for path, _ in kept}:
                if diff := _whole_files([section for path, section in kept if path in wanted], max_bytes):
                    out[pr.number] = diff.decode("utf-8", "replace")
                continue
            batch[pr.sha] = pr.number
            own[pr.sha] = wanted
            batch_paths.update(mine)
            if len(batch) >= DIFF_BATCH:
                jobs.append((batch, sorted(batch_paths)))
                batch, batch_paths = {}, set()
        if batch:
            jobs.append((batch, sorted(batch_paths)))
        if not jobs:
            return out
        keep = _kept_lines(lines) if lines else None

        def run(job: tuple[dict[str, int], list[str]]) -> dict[int, str]:
            wanted, spec = job
            # --sparse: every commit given is shown as it is (each changed some of the paths),
            # without first diffing its tree against the pathspecs to decide whether to show
            # it (≈ a tenth of this pass's git CPU).
            args = ["log", "--no-walk=unsorted", "--stdin", "-p", "-U0", "--no-renames", "--diff-merges=first-parent",
                    "--sparse", "--no-color", "--no-ext-diff", "--src-prefix=a/", "--dst-prefix=b/", "--format=%x1e%H"]
            stdin = "\n".join([*wanted, "--", *(f":(literal){p}" for p in spec)]).encode("utf-8", "replace") + b"\n"
            got: dict[int, str] = {}
            # Records are cut as they arrive, with one C-level regex pass when only some
            # lines are wanted: filtering line by line in Python costs more than git's diff.
            for rec in self._stream(args, stdin=stdin, start=_DIFF_START):
                head, _, diff = rec.partition(b"\n")
                sha = head.strip().decode()
                number = wanted.get(sha)
                if number is None or not diff:
                    continue
                files = _own_files(diff, own[sha])
                if keep is not None:
                    files = [b"\n".join(keep.findall(f)) for f in files]
                    diff = _whole_files(files, max_bytes)
                else:
                    diff = b"\n".join(files)[:max_bytes]
                if diff:
                    got[number] = diff.decode("utf-8", "replace")
            return got

        if len(jobs) == 1:
            out.update(run(jobs[0]))
        else:
            from concurrent.futures import ThreadPoolExecutor

            with ThreadPoolExecutor(NUMSTAT_WORKERS) as pool:
                for got in pool.map(run, jobs):
                    out.update(got)
        return out


_DIFF_HEADER = b"diff --git "


def _header_path(header: bytes) -> bytes:
    """The path in git's `a/PATH b/PATH` (after "diff --git "): both halves name the
    same file without renames, which may itself hold " b/"; git writes a path with
    unusual bytes as a C string in both halves, `"a/conf/\\303\\251.yaml" "b/…"`."""
    if not header.startswith(b'"'):
        return header[2:2 + (len(header) - 5) // 2]
    quoted = header[3:3 + (len(header) - 9) // 2]  # between `"a/` and `" "b/…"`
    return codecs.escape_decode(quoted)[0]  # C escapes: \\t, \\", \\ooo …


@lru_cache(maxsize=8)
def _kept_lines(lines: str) -> re.Pattern[bytes]:
    """What `read_diffs(lines=…)` keeps of a file's `-U0` patch: its `diff --git` header
    and the added and removed lines `lines` matches (not the `---`/`+++` headers).
    Cached: the patch pass asks for it per kept file."""
    return re.compile(rb"^(?:diff --git [^\n]*|[-+](?![-+]{2} )(?:" + lines.encode() + rb")[^\n]*)$", re.M)


@dataclass(frozen=True, slots=True)
class _DiffsWanted:
    """The detectors' diffs a line-count pass keeps (`preload`)."""

    files: Callable[[str, str], bool]  # (path, status as `--raw` gives it): whether its diff is kept
    lines: str  # the `lines` of `read_diffs` they serve (kept as `_kept_lines(lines)` keeps them)


def _own_files(diff: bytes, paths: set[str]) -> list[bytes]:
    """The file sections of one commit's diff whose path is in `paths`, each headed
    `diff --git a/PATH b/PATH` with PATH as it is (a newline in it shown as `\\n`)."""
    out = []
    for section in diff.rstrip(b"\n").split(b"\n" + _DIFF_HEADER):  # no diff line is empty
        if section.startswith(_DIFF_HEADER):
            section = section[len(_DIFF_HEADER):]
        header, nl, rest = section.partition(b"\n")
        raw = _header_path(header)
        if raw.decode("utf-8", "replace") in paths:
            out.append(_shown_header(raw) + nl + rest)
    return out


def _shown_header(raw: bytes) -> bytes:
    """`diff --git a/PATH b/PATH` with PATH as it is (a newline in it shown as `\\n`)."""
    shown = raw.replace(b"\n", b"\\n")
    return _DIFF_HEADER + b"a/" + shown + b" b/" + shown


def _whole_files(files: list[bytes], max_bytes: int) -> bytes:
    """`files` joined, leaving out each that would take the total past `max_bytes`."""
    kept: list[bytes] = []
    size = -1  # the first file has no separator before it
    for f in files:
        if size + 1 + len(f) <= max_bytes:
            size += 1 + len(f)
            kept.append(f)
    return b"\n".join(kept)


def _parse_patch(data: bytes, at: int, files: dict[bytes, FileChange], keeping: _DiffsWanted,
                 kept: list[tuple[str, bytes]]) -> None:
    """Line counts of `files` (by path as `--raw` names them) from the `-U0` patch in `data`
    (its first `diff --git` is at `at + 1`), as `--numstat` gives them: the removed and
    added lines of each file (a type change's two halves add up; a binary file has none).
    The diffs of the files `keeping` names go to `kept` as `read_diffs` makes them.

    Searched and counted by C, not parsed line by line: after a file's header, each line
    of a `-U0` patch starts with "@@", "+", "-" or "\\", so the lines starting with "+"
    or "-" after its first "@@" are its added and removed lines (verl's history has 2.3
    million lines of patch: a regex stopping at each cost twice the instructions)."""
    s = at  # each file's patch from the newline (or NUL) before its header
    while s >= 0:
        e = data.find(b"\ndiff --git ", s + 1)
        stop = len(data) if e < 0 else e
        line_end = data.find(b"\n", s + 1, stop)
        if line_end < 0:
            line_end = stop
        raw = _header_path(data[s + 12:line_end])
        f = files.get(raw)
        if f is not None:
            h = data.find(b"\n@@ -", line_end, stop)
            if h >= 0:
                if f.added is not None and f.deleted is not None:
                    f.added += data.count(b"\n+", h, stop)
                    f.deleted += data.count(b"\n-", h, stop)
            elif data.find(b"\nBinary files ", line_end, stop) >= 0:
                f.added = f.deleted = None
            if keeping.files(f.path, f.status):
                kept.append((f.path, b"\n".join([_shown_header(raw), *_kept_lines(keeping.lines).findall(data[line_end:stop])])))
        s = e


def _joined(pieces: Iterator[bytes], sep: bytes, start: re.Pattern[bytes]) -> Iterator[bytes]:
    """`pieces` with each that does not `start` a record put back onto the one before."""
    record: bytes | None = None
    for piece in pieces:
        if record is not None and not start.match(piece):
            record += sep + piece
            continue
        if record is not None:
            yield record
        record = piece
    if record is not None:
        yield record


_FIRST_SEEN_FORMAT = "--format=%ct%x00%an%x00%ae"


def _first_seen_into(seen: dict[str, int], lines: Iterable[bytes]) -> None:
    """Fold `%ct NUL %an NUL %ae` lines into each author's earliest commit time."""
    for rec in lines:
        parts = rec.split(b"\0")
        if len(parts) != 3:
            continue
        when = int(parts[0])
        # Names as PRs hold them (inert_text): a control character in a name is not part of it.
        for key in (inert_text(parts[1].decode("utf-8", "replace")).strip().lower(),
                    parts[2].decode("utf-8", "replace").strip().lower()):
            if key and when < seen.get(key, when + 1):
                seen[key] = when


def _without_counts(c: _RawCommit) -> _RawCommit:
    """`c` as a pass without line counts reads it (`--raw`: every count 0)."""
    files = [FileChange(path=f.path, added=0, deleted=0, status=f.status, previous=f.previous) for f in c.files]
    return _RawCommit(c.sha, c.parents, c.author, c.email, c.committed_at, c.subject, c.body, files)


def _slack(since: datetime) -> str:
    # A week of slack: `--since` stops walking at the first old commit, and side-branch
    # commits are usually a little older than the merge that brings them in.
    return (since - timedelta(days=7)).isoformat()


def _apply_moves(files: list[FileChange], numstat: bytes) -> None:
    """Put each rename of `git log -z -M --numstat` (`ADDED TAB DELETED TAB NUL OLD NUL NEW`)
    in place of the deletion and addition `files` holds for it, in place: the list is
    shared by the commit and its PR."""
    tokens = numstat.split(b"\0")
    moves: dict[str, tuple[str, int | None, int | None]] = {}
    i = 0
    while i + 2 < len(tokens):
        cols = tokens[i].lstrip(b"\n").split(b"\t")
        if len(cols) != 3 or cols[2] or not all(c.isdigit() or c == b"-" for c in cols[:2]):
            i += 1  # not a rename's counts (whose two paths follow): nothing else is asked for
            continue
        a, d = cols[0], cols[1]
        old, new = (t.decode("utf-8", "replace") for t in tokens[i + 1:i + 3])
        moves[new] = (old, None if a == b"-" else int(a), None if d == b"-" else int(d))
        i += 3
    if not moves:
        return
    olds = {old for old, _, _ in moves.values()}
    kept = []
    for f in files:
        if f.status == "D" and f.path in olds:
            continue
        if f.status == "A" and f.path in moves:
            old, added, deleted = moves[f.path]
            f = FileChange(path=f.path, added=added, deleted=deleted, status="M", previous=old)
        kept.append(f)
    files[:] = kept


def _parse_record(rec: bytes, keeping: _DiffsWanted | None = None,
                  kept: dict[str, list[tuple[str, bytes]]] | None = None) -> _RawCommit | None:
    """A commit of `_read_log`; with `keeping`, its output holds the `-U0` patch, whose
    kept diffs go to `kept` by commit (an empty list: read, nothing kept)."""
    if len(rec) < 64 and not rec.strip(b"\0\n"):  # a record is longer than its sha
        return None
    cut = rec.find(b"\0")
    if cut < 0:
        cut = len(rec)
    parts = rec[:cut].split(b"\x1f", 3)
    if len(parts) < 4:
        return None
    sha, parents, cdate, ident = parts
    author, _, ident = ident.partition(b"\n")
    email, _, message = ident.partition(b"\n")
    subject, _, body = message.decode("utf-8", "replace").strip().partition("\n")
    sha_text = sha.decode()
    if keeping is None or kept is None:
        files = _parse_files(rec[cut + 1:])
    else:
        # `-z` ends the `--raw` part with an empty line (a NUL) before the patch: no path is empty.
        at = rec.find(b"\0\0diff --git ", cut)
        found = _raw_files(rec[cut + 1:at] if at >= 0 else rec[cut + 1:])
        mine = kept.setdefault(sha_text, [])  # read: what it lacks has no diff
        if at >= 0:
            _parse_patch(rec, at + 1, found[0], keeping, mine)
        files = _moves_merged(*found)
    return _RawCommit(
        sha=sha_text,
        parents=parents.decode().split(),
        author=author.decode("utf-8", "replace"),
        email=email.decode("utf-8", "replace"),
        committed_at=datetime.fromisoformat(cdate.decode()),
        subject=subject.strip(),
        body=body.strip(),
        files=files,
    )


def _parse_files(rest: bytes) -> list[FileChange]:
    """Files from `-z --raw` (status) and/or `-z --numstat` (line counts) output, moves
    merged (`_moves_merged`)."""
    return _moves_merged(*_raw_files(rest))


_Found = tuple[dict[bytes, FileChange], dict[bytes, list[bytes]], list[tuple[bytes, bytes]]]


def _raw_files(rest: bytes) -> _Found:
    """Files from `-z --raw` (status) and/or `-z --numstat` (line counts) output. Keyed by
    the path's bytes: a `--numstat` line finds its `--raw` entry without decoding the path
    again. With the paths deleted and added, by blob (`_moves_merged`)."""
    files: dict[bytes, FileChange] = {}
    deleted: dict[bytes, list[bytes]] = {}  # blob -> paths deleted with it
    added: list[tuple[bytes, bytes]] = []  # (blob, path)
    tokens = rest.split(b"\0")
    i, n = 0, len(tokens)
    while i < n:
        tok = tokens[i]
        i += 1
        if tok[:1] == b"\n":
            tok = tok.lstrip(b"\n")
        if not tok:
            continue
        if tok[:1] == b":":
            if i < n:
                raw = tokens[i]
                p = sys.intern(raw.decode("utf-8", "replace"))  # paths recur in many commits
                status = tok.rsplit(b" ", 1)[-1][:1]
                files[raw] = FileChange(path=p, added=0, deleted=0, status=status.decode())
                if status == b"D" or status == b"A":  # ":mode mode old-blob new-blob D"
                    fields = tok.split(b" ")
                    if len(fields) >= 4:
                        if status == b"D":
                            deleted.setdefault(fields[2], []).append(raw)
                        else:
                            added.append((fields[3], raw))
                i += 1
            continue
        cols = tok.split(b"\t", 2)
        if len(cols) == 3:
            a, d, raw = cols
            f = files.get(raw)
            if f is None:
                f = files[raw] = FileChange(path=sys.intern(raw.decode("utf-8", "replace")))
            f.added = None if a == b"-" else int(a)
            f.deleted = None if d == b"-" else int(d)
    return files, deleted, added


def _moves_merged(files: dict[bytes, FileChange], deleted: dict[bytes, list[bytes]],
                  added: list[tuple[bytes, bytes]]) -> list[FileChange]:
    """A file deleted and one added with the same content (blob) in one commit are a move:
    one entry, at the new path, status "R", no lines changed (as GitHub counts a rename),
    not a deletion and an addition of every line (`--no-renames` keeps paths exact)."""
    if deleted and added:
        for blob, raw in added:
            if deleted.get(blob):
                old = files.pop(deleted[blob].pop())
                moved = files[raw]
                moved.status, moved.added, moved.deleted, moved.previous = "R", 0, 0, old.path
    return list(files.values())
