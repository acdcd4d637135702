"""Shared fixtures. Every test runs isolated: a temporary user data/cache dir and
no REPOBRIEF_*, GitHub or OpenAI variables from the developer's environment, and no
backend another test registered.
Replays of the real histories are built once per session."""

from __future__ import annotations

import os
import socket
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

import netguard  # noqa: E402
from gitrepo import SHARED_DATA, replay_history  # noqa: E402

_FOREIGN = ("GITHUB_TOKEN", "GH_TOKEN", "OPENAI_API_KEY", "OPENAI_BASE_URL", "GIT_DIR", "GIT_WORK_TREE")


def pytest_addoption(parser):
    parser.addoption(
        "--update-golden",
        action="store_true",
        default=False,
        help="Rewrite the golden report files in tests/golden/ from the current output.",
    )


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_auto_num_workers(config) -> int:
    """`-n auto` (the README's test command): a worker per core, at most 4. Each worker
    replays the histories it uses and starts its own servers; many more would cost
    more memory than they save time (the suite takes ~5 minutes on 2 cores)."""
    return max(1, min(4, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1))


@pytest.fixture(autouse=True)
def isolated_env(tmp_path_factory, monkeypatch):
    for var in list(os.environ):
        if var.startswith("REPOBRIEF_") or var in _FOREIGN:
            monkeypatch.delenv(var, raising=False)
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("REPOBRIEF_DATA_DIR", str(home / "data"))
    monkeypatch.setenv("XDG_DATA_HOME", str(home / "xdg-data"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / "xdg-cache"))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", os.devnull)
    # A backend a test registers (a source that kills its worker, a recording executor)
    # is gone after it: later tests list the registries' names in their messages.
    from repobrief import registry

    for reg in (registry.SOURCES, registry.ENGINES, registry.RENDERERS, registry.PUBLISHERS, registry.EXECUTORS):
        monkeypatch.setattr(reg, "_loaded", dict(reg._loaded))
    monkeypatch.setattr(socket, "getaddrinfo", netguard.lookup)  # `.invalid` hosts: no DNS query
    yield


def _require_data(name: str) -> None:
    if not (SHARED_DATA / f"{name}.history.jsonl").exists():
        pytest.fail(f"missing {SHARED_DATA}/{name}.history.jsonl: the shared data must sit beside the checkout")


@pytest.fixture(scope="session")
def verl_repo(tmp_path_factory) -> Path:
    """The real verl history replayed into a git repository (no origin remote)."""
    _require_data("verl-project__verl")
    return replay_history("verl-project__verl", tmp_path_factory.mktemp("replay") / "verl")


@pytest.fixture(scope="session")
def flask_repo(tmp_path_factory) -> Path:
    """The real flask history replayed, PR merges as real two-parent merges."""
    _require_data("pallets__flask")
    return replay_history("pallets__flask", tmp_path_factory.mktemp("replay") / "flask")


@pytest.fixture
def update_golden(request) -> bool:
    return bool(request.config.getoption("--update-golden"))
