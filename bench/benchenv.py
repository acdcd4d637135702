"""The environment benchmarks time `repobrief` commands in.

pip compiles a package's `.pyc` files when it installs it, so a user's start-up
reads bytecode. An editable install compiles on first import instead, and not
at all where PYTHONDONTWRITEBYTECODE is set (some CI images and sandboxes set
it): every timed run would then compile repobrief's sources again, ~0.05 s of
start-up that no user pays.
"""

from __future__ import annotations

import compileall
import importlib.util
import os
from pathlib import Path


def user_env(**extra: str) -> dict[str, str]:
    """os.environ without repobrief's own settings and without PYTHONDONTWRITEBYTECODE,
    plus `extra`; repobrief's bytecode is compiled first (as pip would have)."""
    spec = importlib.util.find_spec("repobrief")
    for folder in spec.submodule_search_locations if spec else ():
        compileall.compile_dir(Path(folder), quiet=1)
    env = {k: v for k, v in os.environ.items() if not k.startswith("REPOBRIEF_") and k != "PYTHONDONTWRITEBYTECODE"}
    env.update(extra)
    return env
