"""Writing report files: every file of a run or none."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from .errors import RepobriefError


def write_atomically(files: dict[Path, str]) -> None:
    """Write every file or none. Each goes to a temporary file first; then existing
    files are moved aside and the new ones renamed into place; on any failure the
    old files come back and the new ones are removed."""
    staged: list[tuple[Path, Path]] = []
    placed: list[tuple[Path, Path | None]] = []
    try:
        for path, text in files.items():
            path.parent.mkdir(parents=True, exist_ok=True)
            if path.is_dir():
                raise IsADirectoryError(21, "is a folder", str(path))
            fd, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
            staged.append((Path(name), path))  # before writing: a failed write removes it too
            # mkstemp makes the file private (0600); reports are served and shared, so give
            # it the mode a plainly created file would have.
            umask = os.umask(0)
            os.umask(umask)
            with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
                os.fchmod(fh.fileno(), 0o666 & ~umask)
                fh.write(text)
        for tmp, path in staged:
            backup = None
            if path.exists():
                backup = path.with_name(f".{path.name}.old")
                os.replace(path, backup)
            placed.append((path, backup))
            os.replace(tmp, path)
    except OSError as e:
        for path, backup in reversed(placed):
            if backup is not None:
                os.replace(backup, path)
            else:
                path.unlink(missing_ok=True)
        for tmp, _ in staged:
            tmp.unlink(missing_ok=True)
        raise RepobriefError(f"cannot write {e.filename or 'output'}: {e.strerror}", "check that --out is a writable folder") from None
    for _, backup in placed:
        if backup is not None:
            backup.unlink(missing_ok=True)
