"""Writing report files: every file of a run or none."""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path

from .errors import RepobriefError, UsageError
from .stopping import signals_deferred


def user_cache_folder() -> str:
    """repobrief's folder under the user cache folder (`$XDG_CACHE_HOME/repobrief`): what
    it keeps only to be faster (compiled templates, git facts), safe to delete."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "repobrief")


def replace_cache_file(path: Path, text: str) -> None:
    """Replace a cache file whole (a reader sees the old file or the new one, however
    many write at once); a cache that cannot be written is no error."""
    tmp = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")  # one per writer
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except OSError:
        if tmp is not None:
            Path(tmp).unlink(missing_ok=True)


def read_json(path: Path, hint: str):
    """A JSON file's content; a file that is not JSON is a `UsageError` with `hint`
    (a missing one raises `OSError` as ever)."""
    import json

    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as e:
        raise UsageError(f"{str(path)!r} is not valid JSON ({e})", hint) from None


def check_out_folder(out: Path | None) -> None:
    """`--out` names a folder to write into: an existing file there is a bad flag, and a
    folder that cannot be written (a read-only file system, no permission) an error,
    both said before any work, not a write that fails at the end of it."""
    if out is None:
        return
    if out.exists() and not out.is_dir():
        raise UsageError(f"--out {str(out)!r} is a file; give a folder")
    if out.is_symlink() and not out.exists():
        raise UsageError(f"--out {str(out)!r} is a symbolic link to {os.readlink(out)!r}, which does not exist",
                         "make the folder it points to, or give another --out")
    # The folder, or the nearest one above it that exists (the rest is made when writing).
    here = next(p for p in (out, *out.absolute().parents) if p.exists())  # the root exists
    if not here.is_dir():
        raise UsageError(f"--out {str(out)!r} cannot be made: {str(here)!r} is a file, not a folder",
                         "give a folder whose parents are folders")
    try:
        fd, probe = tempfile.mkstemp(dir=here, prefix=".repobrief-probe-")
    except OSError as e:
        raise RepobriefError(f"cannot write into --out {str(out)!r}: {e.strerror} ({here})",
                             "check that --out is a writable folder") from None
    os.close(fd)
    os.unlink(probe)


def write_atomically(files: dict[Path, str], hint: str = "check that --out is a writable folder") -> None:
    """Write every file or none. Each goes to a temporary file first; then existing
    files are moved aside and the new ones renamed into place; on any failure the
    old files come back and the new ones are removed. Ctrl-C and SIGTERM wait for
    the write to end; what a harder stop (SIGKILL, power loss) left half done is
    repaired by the next write of the same files. A file that is a symbolic link is
    replaced, not followed: a link planted in a folder repobrief writes (a site's
    gh-pages checkout) must not send its pages elsewhere (`write_file` follows the
    one file a user names)."""
    staged: list[tuple[Path, Path]] = []
    shown: dict[str, Path] = {}  # a temporary file's name -> the file it becomes
    current: Path | None = None
    # mkstemp makes a file private (0600); reports are served and shared, so they get
    # the mode a plainly created file would have.
    umask = os.umask(0)
    os.umask(umask)
    mode = 0o666 & ~umask
    # Signals wait for the whole write, temporary files included: a worker stopped by
    # SIGTERM's default action (or os._exit) would run no clean-up of its own.
    with signals_deferred():
        try:
            for path, text in files.items():
                current = path
                leftovers = _leftovers(path.parent)
                if path.is_dir():
                    raise IsADirectoryError(21, "is a folder", str(path))
                _recover(path, leftovers)
                try:
                    fd, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
                except FileNotFoundError:  # the folder was removed since this process listed it
                    _LEFTOVERS.pop(path.parent, None)
                    _leftovers(path.parent)  # makes it again (empty: nothing to recover)
                    fd, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
                staged.append((Path(name), path))  # before writing: a failed write removes it too
                shown[name] = path
                with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
                    os.fchmod(fh.fileno(), mode)
                    fh.write(text)
            current = None
            _commit(staged)
        except BaseException as e:
            for tmp, _ in staged:
                tmp.unlink(missing_ok=True)
            if isinstance(e, OSError):
                what = shown.get(str(e.filename)) or current or e.filename or "output"
                raise RepobriefError(f"cannot write {what}: {e.strerror}", hint) from None
            raise


def write_file(path: Path, text: str, hint: str) -> None:
    """Write the one file a user named (`batch export -o FILE`) as a shell redirect would:
    a symbolic link is written through (the file it points to is replaced, the link
    stays), a device or FIFO (`-o /dev/stdout`, `-o /dev/full`) is written into, never
    replaced by a file; anything else is replaced whole (`write_atomically`)."""
    try:
        mode = os.stat(path).st_mode  # through a link: /dev/stdout is the pipe it names
    except OSError:
        mode = None
    if mode is not None and not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
        try:  # no signals held back: a FIFO nobody reads blocks here, and Ctrl-C must end that
            with open(path, "w", encoding="utf-8", newline="\n") as fh:
                fh.write(text)
        except OSError as e:
            raise RepobriefError(f"cannot write {path}: {e.strerror}", hint) from None
        return
    write_atomically({Path(os.path.realpath(path)) if path.is_symlink() else path: text}, hint)


def _commit(staged: list[tuple[Path, Path]]) -> None:
    placed: list[tuple[Path, Path | None]] = []
    try:
        for tmp, path in staged:
            backup = None
            if path.exists():
                backup = _backup(path)
                os.replace(path, backup)
            placed.append((path, backup))
            os.replace(tmp, path)
    except OSError:
        for path, backup in reversed(placed):
            if backup is not None:
                os.replace(backup, path)
            else:
                path.unlink(missing_ok=True)
        raise
    for _, backup in placed:
        if backup is not None:
            backup.unlink(missing_ok=True)


def _backup(path: Path) -> Path:
    return path.with_name(f".{path.name}.old")


# Per folder written by this process: the temporary files an earlier write stopped
# half way left there (names), found by one listing. A folder of a long backfill holds
# thousands of reports: listing it again for every file written made writing quadratic.
# A temporary file of this process never outlives its write, so the list stays true
# unless another process is killed writing into the same folder meanwhile; that one's
# leftovers are found by the next process that writes there.
_LEFTOVERS: dict[Path, set[str]] = {}


def _leftovers(folder: Path) -> set[str]:
    """The folder's leftovers; the folder is made when this process has not listed it
    yet (a folder listed once is not checked again for each file written)."""
    found = _LEFTOVERS.get(folder)
    if found is None:
        if folder.exists() and not folder.is_dir():
            raise NotADirectoryError(20, "Not a directory", str(folder))
        folder.mkdir(parents=True, exist_ok=True)
        with os.scandir(folder) as entries:
            found = {e.name for e in entries if e.name.startswith(".") and e.name.endswith(".tmp")}
        _LEFTOVERS[folder] = found
    return found


def _recover(path: Path, leftovers: set[str]) -> None:
    """Undo what a write of `path` stopped half way left: its old file moved aside and
    not put back (it is the last whole version), temporary files never renamed."""
    backup = _backup(path)
    if backup.exists():
        if path.exists():
            backup.unlink()
        else:
            os.replace(backup, path)
    if leftovers:
        prefix = f".{path.name}."
        for name in [n for n in leftovers if n.startswith(prefix)]:
            (path.parent / name).unlink(missing_ok=True)
            leftovers.discard(name)
