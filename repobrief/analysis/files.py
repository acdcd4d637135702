"""What kind of file a path is: docs, tests, CI, config, dependency manifest, source.

The predicates are cached: the same paths recur in every week of a history."""

from __future__ import annotations

import re
from fnmatch import translate
from functools import lru_cache

_DOC_EXT = (".md", ".rst", ".txt", ".adoc", ".ipynb", ".png", ".jpg", ".jpeg", ".svg", ".gif")
_SOURCE_EXT = (".py", ".pyx", ".pyi", ".c", ".cc", ".cpp", ".h", ".hpp", ".cu", ".cuh", ".rs", ".go", ".java", ".kt",
               ".js", ".ts", ".tsx", ".jsx", ".rb", ".scala", ".swift", ".m", ".mm", ".jl", ".lua", ".sh", ".triton")
_CONFIG_EXT = (".yaml", ".yml", ".toml", ".json", ".ini", ".cfg", ".conf", ".jsonnet")
DEPENDENCY_FILES = ("requirements*.txt", "requirements*.in", "setup.py", "setup.cfg", "pyproject.toml", "environment*.yml",
                    "environment*.yaml", "Pipfile", "Pipfile.lock", "poetry.lock", "uv.lock", "package.json", "Cargo.toml",
                    "go.mod", "Dockerfile*", "*.dockerfile", "constraints*.txt")
_TEST_RX = re.compile(r"(^|/)(tests?|testing|test_utils|e2e|unittests?)(/|$)|(^|/)test_[^/]*$|_test\.[a-z]+$|(^|/)conftest\.py$")
_CI_RX = re.compile(r"(^|/)(\.github/workflows|\.gitlab-ci\.yml|\.circleci|\.buildkite|\.jenkins|ci|\.ci|\.azure-pipelines)(/|$)|(^|/)\.pre-commit-config\.yaml$|(^|/)\.github/")
_DOC_RX = re.compile(r"(^|/)(docs?|documentation)(/|$)|(^|/)(README|CHANGELOG|CHANGES|CONTRIBUTING|NEWS|HISTORY)[^/]*$", re.I)
_CONFIG_RX = re.compile(r"(^|/)(configs?|conf|settings)(/|$)|(^|/)[^/]*(config|settings)[^/]*\.(py|ya?ml|toml|json)$", re.I)
_API_NAMES = ("__init__.py", "api.py", "cli.py", "interface.py", "interfaces.py", "public.py")


def base(path: str) -> str:
    return path.rsplit("/", 1)[-1]


@lru_cache(maxsize=1 << 13)
def is_test(path: str) -> bool:
    return bool(_TEST_RX.search(path))


@lru_cache(maxsize=1 << 13)
def is_ci(path: str) -> bool:
    return bool(_CI_RX.search(path))


@lru_cache(maxsize=1 << 13)
def is_doc(path: str) -> bool:
    # requirements*.txt and constraints*.txt are manifests, not prose.
    if is_test(path) or is_ci(path) or is_dependency(path):
        return False
    return bool(_DOC_RX.search(path)) or path.lower().endswith(_DOC_EXT[:5])


# The manifests' globs as one regex: one match per new path instead of a fnmatch per glob.
_DEPENDENCY_RX = re.compile("|".join(f"(?:{translate(g)})" for g in DEPENDENCY_FILES))


@lru_cache(maxsize=1 << 13)
def is_dependency(path: str) -> bool:
    # pip-compiled sets in a requirements/ folder (flask: requirements/docs.txt, tests.in)
    # are manifests as much as a top-level requirements.txt.
    return _DEPENDENCY_RX.match(base(path)) is not None or (
        f"/{path}".rsplit("/", 2)[-2:-1] == ["requirements"] and path.endswith((".txt", ".in")))


@lru_cache(maxsize=1 << 13)
def is_config(path: str) -> bool:
    if is_ci(path) or is_test(path) or is_doc(path):
        return False
    low = path.lower()
    return bool(_CONFIG_RX.search(low)) and (low.endswith(_CONFIG_EXT) or low.endswith(".py"))


@lru_cache(maxsize=1 << 13)
def is_source(path: str) -> bool:
    return path.lower().endswith(_SOURCE_EXT) and not is_test(path) and not is_doc(path) and not is_ci(path)


@lru_cache(maxsize=1 << 13)
def is_api(path: str) -> bool:
    return is_source(path) and base(path) in _API_NAMES and "/" in path


@lru_cache(maxsize=1 << 13)
def is_example(path: str) -> bool:
    return bool(re.search(r"(^|/)(examples?|recipes?|scripts?|benchmarks?)(/|$)", path))


@lru_cache(maxsize=1 << 13)
def is_minor(path: str) -> bool:
    """Docs, tests, CI and examples: changes here rarely affect users of the code."""
    return is_doc(path) or is_test(path) or is_ci(path) or is_example(path)


def diff_header_path(line: str) -> str:
    """The path of a `diff --git a/PATH b/PATH` line as the git source writes them
    (`read_diffs`: no renames, so both halves name the same file, which may itself
    contain " b/")."""
    rest = line[len("diff --git "):]
    return rest[2:2 + (len(rest) - 5) // 2]


def path_matches(path: str, globs: list[str] | tuple[str, ...]) -> bool:
    """A path matches a glob (`verl/trainer/**`, `*.yaml`) or a plain directory prefix."""
    exact, prefixes, rx = _matcher(tuple(globs))
    return path in exact or path.startswith(prefixes) or (rx is not None and rx.match(path) is not None)


@lru_cache(maxsize=1024)
def _matcher(globs: tuple[str, ...]) -> tuple[frozenset[str], tuple[str, ...], re.Pattern | None]:
    """`globs` as (exact paths, prefixes, one regex for the wildcards), built once per list:
    the same core paths and module rules are matched against every path of a history.
    A plain entry matches itself and what lies under it; a wildcard one matches as
    `fnmatch` does (`*` crosses `/`), and `dir/**` also matches what lies under `dir`."""
    plain = [g for g in globs if not any(ch in g for ch in "*?[")]
    wild = [g for g in globs if g not in plain]
    prefixes = [g.rstrip("/") + "/" for g in plain] + [g[:-3] + "/" for g in wild if g.endswith("/**")]
    rx = re.compile("|".join(f"(?:{translate(g)})" for g in wild)) if wild else None
    return frozenset(plain), tuple(prefixes), rx
