"""Build real git repositories for tests and benchmarks.

`replay_history` turns one of the exported histories in `../shared/data` into a
repository with `git fast-import`: messages, authors, committers and dates are
kept exactly, and file contents are synthesized so that `git log --numstat`
reports the same counts (drop a file's first `deleted` lines, append `added`
new unique lines). `GitRepoBuilder` makes small synthetic repositories commit by
commit (merge commits and side branches included) for unit tests.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = Path(os.environ.get("REPOBRIEF_SHARED_DATA", ROOT.parent / "shared" / "data"))

GIT_ENV = {
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_AUTHOR_NAME": "test",
    "GIT_AUTHOR_EMAIL": "test@example.com",
    "GIT_COMMITTER_NAME": "test",
    "GIT_COMMITTER_EMAIL": "test@example.com",
}

_PR_MERGE = re.compile(r"^Merge pull request #\d+ from ([^/\s]+)/")
_PR_SQUASH = re.compile(r"\(#\d+\)\s*$")


def git(cwd: Path, *args: str, input: bytes | None = None) -> str:
    env = {**os.environ, **GIT_ENV}
    out = subprocess.run(["git", *args], cwd=cwd, input=input, capture_output=True, env=env, check=True)
    return out.stdout.decode("utf-8", "replace")


def _ident(person: dict) -> bytes:
    when = datetime.fromisoformat(person["date"])
    off = when.utcoffset()
    minutes = int(off.total_seconds() // 60) if off else 0
    sign = "+" if minutes >= 0 else "-"
    minutes = abs(minutes)
    tz = f"{sign}{minutes // 60:02d}{minutes % 60:02d}"
    name = person["name"].replace("<", "").replace(">", "").replace("\n", " ") or "unknown"
    email = person["email"].replace("<", "").replace(">", "").replace("\n", "")
    return f"{name} <{email}> {int(when.timestamp())} {tz}".encode()


def _data(b: bytes) -> bytes:
    return b"data %d\n" % len(b) + b + b"\n"


def history_path(name: str) -> Path:
    return SHARED_DATA / f"{name}.history.jsonl"


def load_history(name: str) -> list[dict]:
    with history_path(name).open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh]


def replay_history(
    name: str,
    dest: Path,
    *,
    side_branches: bool = True,
    limit: int | None = None,
    rows: list[dict] | None = None,
    line_width: int = 0,
) -> Path:
    """Replay `../shared/data/{name}.history.jsonl` into a new repository at `dest`.

    With `side_branches`, a commit that had two parents and whose subject names a
    PR becomes a real merge of an (empty) feature-branch commit, as on GitHub.
    Each added line is unique ("L123"); `line_width` pads it with code-like text to
    that many characters (real code's lines are 30-50 long: git's diffs cost more
    with them, the line counts are the same).
    """
    pad = b"    value = compute(%d, *args)  # " + b"x" * line_width
    rows = list(reversed(rows if rows is not None else load_history(name)))  # oldest first
    if limit:
        rows = rows[-limit:]
    dest.mkdir(parents=True, exist_ok=True)
    git(dest, "init", "-q", "-b", "main")
    state: dict[str, list[bytes]] = {}
    counter = 0
    out: list[bytes] = []
    mark = 0
    prev = 0
    for row in rows:
        side = 0
        subject = row["subject"]
        if side_branches and len(row.get("parents", [])) == 2 and (_PR_MERGE.match(subject) or _PR_SQUASH.search(subject)):
            mark += 1
            side = mark
            m = _PR_MERGE.match(subject)
            author = dict(row["author"])
            if m:  # the feature branch is the contributor's, not the merger's
                author["name"] = m.group(1)
                author["email"] = f"{m.group(1)}@users.noreply.github.com"
            out.append(b"commit refs/heads/pr-branch\nmark :%d\n" % side)
            out.append(b"author " + _ident(author) + b"\n")
            out.append(b"committer " + _ident(author) + b"\n")
            out.append(_data(f"work on {subject[:60]}".encode()))
            if prev:
                out.append(b"from :%d\n" % prev)
        mark += 1
        out.append(b"commit refs/heads/main\nmark :%d\n" % mark)
        out.append(b"author " + _ident(row["author"]) + b"\n")
        out.append(b"committer " + _ident(row["committer"]) + b"\n")
        msg = subject + ("\n\n" + row["body"] if row.get("body") else "")
        out.append(_data(msg.encode("utf-8", "surrogateescape")))
        if prev:
            out.append(b"from :%d\n" % prev)
        if side:
            out.append(b"merge :%d\n" % side)
        for f in row["files"]:
            path = f["path"]
            if f["added"] is None:  # binary: a NUL byte makes git call it binary
                counter += 1
                out.append(b"M 100644 inline " + path.encode() + b"\n" + _data(b"\x00bin%d" % counter))
                continue
            lines = state.get(path, [])[f["deleted"]:]
            for _ in range(f["added"]):
                counter += 1
                lines.append((b"L%d" % counter + pad % (counter % 97))[:max(line_width, 16)] + b"\n"
                             if line_width else b"L%d\n" % counter)
            if not lines:
                state.pop(path, None)
                out.append(b"D " + path.encode() + b"\n")
                continue
            state[path] = lines
            out.append(b"M 100644 inline " + path.encode() + b"\n" + _data(b"".join(lines)))
        prev = mark
    out.append(b"done\n")
    git(dest, "fast-import", "--quiet", "--done", input=b"".join(out))
    git(dest, "checkout", "-q", "-f", "main")
    return dest


@dataclass
class GitRepoBuilder:
    """Make a small repository commit by commit, with exact dates and authors."""

    path: Path
    branch: str = "main"
    _n: int = field(default=0, init=False)

    def __post_init__(self) -> None:
        self.path.mkdir(parents=True, exist_ok=True)
        git(self.path, "init", "-q", "-b", self.branch)

    def _env(self, when: str, author: str, email: str | None) -> dict:
        email = email or f"{author.lower().replace(' ', '.')}@example.com"
        return {
            **os.environ,
            **GIT_ENV,
            "GIT_AUTHOR_NAME": author,
            "GIT_AUTHOR_EMAIL": email,
            "GIT_COMMITTER_NAME": "GitHub",
            "GIT_COMMITTER_EMAIL": "noreply@github.com",
            "GIT_AUTHOR_DATE": when,
            "GIT_COMMITTER_DATE": when,
        }

    def write(self, files: dict[str, str | bytes | None]) -> None:
        for rel, content in files.items():
            p = self.path / rel
            if content is None:
                if p.exists():
                    p.unlink()
                continue
            p.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, bytes):
                p.write_bytes(content)
            else:
                p.write_text(content, encoding="utf-8")

    def lines(self, n: int, tag: str = "") -> str:
        """`n` unique lines of text."""
        start = self._n
        self._n += n
        return "".join(f"line {tag}{i}\n" for i in range(start, start + n))

    def commit(
        self,
        message: str | bytes,
        when: str,
        files: dict[str, str | bytes | None] | None = None,
        author: str = "alice",
        email: str | None = None,
    ) -> str:
        self.write(files or {})
        subprocess.run(["git", "add", "-A"], cwd=self.path, check=True, env=self._env(when, author, email))
        msg = message if isinstance(message, bytes) else message.encode()
        subprocess.run(
            ["git", "commit", "-q", "--allow-empty", "-F", "-"],
            cwd=self.path,
            input=msg,
            check=True,
            env=self._env(when, author, email),
        )
        return git(self.path, "rev-parse", "HEAD").strip()

    def checkout(self, branch: str, create_from: str | None = None) -> None:
        if create_from is not None:
            git(self.path, "checkout", "-q", "-b", branch, create_from)
        else:
            git(self.path, "checkout", "-q", branch)

    def merge(self, branch: str, message: str, when: str, author: str = "maintainer") -> str:
        subprocess.run(
            ["git", "merge", "-q", "--no-ff", "--no-edit", "-m", message, branch],
            cwd=self.path,
            check=True,
            capture_output=True,
            env=self._env(when, author, None),
        )
        return git(self.path, "rev-parse", "HEAD").strip()


def squash_repo(path: Path, prs: list[tuple[str, dict]], first_day: str, author: str = "dev",
                initial: str = "2026-01-05") -> Path:
    """A small repository: an initial commit, then one squash-merged PR a day from
    `first_day` (`YYYY-MM-DD`), numbered from #10. Files map to a line count or content."""
    from datetime import date, timedelta

    b = GitRepoBuilder(path)
    b.commit("initial", f"{initial}T10:00:00+00:00", {"src/app.py": b.lines(30), "requirements.txt": "torch==2.5\n"})
    day = date.fromisoformat(first_day)
    for i, (title, files) in enumerate(prs):
        resolved = {k: (b.lines(v) if isinstance(v, int) else v) for k, v in files.items()}
        when = (day + timedelta(days=i)).isoformat()
        b.commit(f"{title} (#{10 + i})", f"{when}T09:00:00+00:00", resolved, author=f"{author}{i}")
    return b.path


if __name__ == "__main__":  # python tests/gitrepo.py verl-project__verl /tmp/verl
    import sys

    if len(sys.argv) != 3:
        sys.exit("usage: python tests/gitrepo.py HISTORY_NAME DEST  (e.g. verl-project__verl /tmp/verl)")
    name, dest = sys.argv[1], Path(sys.argv[2])
    if not history_path(name).exists():
        sys.exit(f"no history {history_path(name)}; names: " + ", ".join(
            p.name.removesuffix(".history.jsonl") for p in sorted(SHARED_DATA.glob("*.history.jsonl"))))
    if dest.exists() and any(dest.iterdir()):
        print(f"{dest} exists already; using it as it is")
    else:
        replay_history(name, dest)
        print(f"replayed {name} into {dest}")
