"""The test command is the project's one check command: lint runs with the tests."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_ruff_is_clean():
    ruff = shutil.which("ruff") or str(Path(sys.executable).with_name("ruff"))
    out = subprocess.run([ruff, "check", "repobrief", "tests", "bench"], cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr


def test_mypy_is_clean():
    """Type errors are bugs waiting for an input: mypy once found a message whose `{key}`
    field collided with the catalog's own argument, which crashed every report of a
    week that removed a config key. Settings in pyproject.toml ([tool.mypy])."""
    out = subprocess.run([sys.executable, "-m", "mypy"], cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr
