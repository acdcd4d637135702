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
# Each path regex is searched in "/" + path, so that every branch starts with a literal
# ("/", "_"): the regex engine then skips to those characters instead of trying each
# branch at every position (`(^|/)tests/` took 3-8 µs a path, 1 µs this way).
_TEST_RX = re.compile(r"/(?:tests?|testing|test_utils|e2e|unittests?)(?:/|$)|/test_[^/]*$|_test\.[a-z]+$|/conftest\.py$")
_CI_RX = re.compile(r"/(?:\.github/workflows|\.gitlab-ci\.yml|\.circleci|\.buildkite|\.jenkins|ci|\.ci|\.azure-pipelines)(?:/|$)"
                    r"|/\.pre-commit-config\.yaml$|/\.github/")
# A project's own records beside its code: each code PR adds a line to the changelog.
_LEDGER_RX = re.compile(r"/(?:CHANGELOG|CHANGES|NEWS|HISTORY|CONTRIBUTING|AUTHORS)[^/]*$", re.I)
_DOC_RX = re.compile(r"/(?:docs?|documentation)(?:/|$)|/(?:README|CHANGELOG|CHANGES|CONTRIBUTING|NEWS|HISTORY)[^/]*$", re.I)
_CONFIG_RX = re.compile(r"/(?:configs?|conf|settings)(?:/|$)|/[^/]*(?:config|settings)[^/]*\.(?:py|ya?ml|toml|json)$", re.I)
_API_NAMES = ("__init__.py", "api.py", "cli.py", "interface.py", "interfaces.py", "public.py")


def base(path: str) -> str:
    return path.rsplit("/", 1)[-1]


# Each kind as a bit of `kinds(path)`.
TEST, CI, DOC, DEPENDENCY, CONFIG, SOURCE, API, EXAMPLE, MINOR, LEDGER = (1 << i for i in range(10))
_EXAMPLE_RX = re.compile(r"/(?:examples?|recipes?|scripts?|benchmarks?)(?:/|$)")  # in "/" + path
# Shell scripts launch and install (verl keeps its run scripts beside the code, in
# `verl/experimental/*/shell/`): scripts wherever they live, not code that needs tests.
_SCRIPT_EXT = (".sh", ".bash")
# The manifests' globs as one regex: one match per new path instead of a fnmatch per glob.
_DEPENDENCY_RX = re.compile("|".join(f"(?:{translate(g)})" for g in DEPENDENCY_FILES))


@lru_cache(maxsize=1 << 13)
def kinds(path: str) -> int:
    """Every kind `path` is, as bits, decided together and cached once: a cache per
    predicate held each path nine times (≈ 10 MB per process in a long backfill,
    whose paths run to tens of thousands)."""
    slashed = "/" + path  # see _TEST_RX
    test = _TEST_RX.search(slashed) is not None
    ci = _CI_RX.search(slashed) is not None
    # pip-compiled sets in a requirements/ folder (flask: requirements/docs.txt, tests.in)
    # are manifests as much as a top-level requirements.txt.
    dependency = _DEPENDENCY_RX.match(base(path)) is not None or (
        f"/{path}".rsplit("/", 2)[-2:-1] == ["requirements"] and path.endswith((".txt", ".in")))
    low = path.lower()
    # A developer tool's own folder or file at the top (.devcontainer/, .gemini/config.yaml,
    # .vscode/settings.json): neither the project's configuration nor its source.
    tool = path[:1] == "."
    # requirements*.txt and constraints*.txt are manifests, not prose.
    doc = not (test or ci or dependency) and (_DOC_RX.search(slashed) is not None or low.endswith(_DOC_EXT[:5]))
    config = not (ci or test or doc or tool) and _CONFIG_RX.search("/" + low) is not None and (
        low.endswith(_CONFIG_EXT) or low.endswith(".py"))
    source = low.endswith(_SOURCE_EXT) and not (test or doc or ci or tool)
    api = source and base(path) in _API_NAMES and "/" in path
    example = _EXAMPLE_RX.search(slashed) is not None or low.endswith(_SCRIPT_EXT)
    # Docs, tests, CI, examples and tools' files: changes here rarely affect users of the code.
    minor = doc or test or ci or example or tool
    ledger = _LEDGER_RX.search(slashed) is not None
    return (TEST * test | CI * ci | DOC * doc | DEPENDENCY * dependency | CONFIG * config | SOURCE * source
            | API * api | EXAMPLE * example | MINOR * minor | LEDGER * ledger)


def is_test(path: str) -> bool:
    return kinds(path) & TEST != 0


def is_ledger(path: str) -> bool:
    """A changelog, contributing guide or authors list: docs, but no area of the project."""
    return kinds(path) & LEDGER != 0


def is_ci(path: str) -> bool:
    return kinds(path) & CI != 0


def is_doc(path: str) -> bool:
    return kinds(path) & DOC != 0


def is_dependency(path: str) -> bool:
    return kinds(path) & DEPENDENCY != 0


# A manifest of the project's own development tools: its tests', docs', linters' and CI's
# pins (flask's requirements/dev.txt, tests.in, docs.txt; requirements-dev.txt), which no
# user installs.
_DEV_MANIFEST = re.compile(r"(?:^|[/_.-])(?:dev|develop|docs?|tests?|testing|typing|lint|style|ci|pre-commit|mypy|tox)"
                           r"(?:[/_.-]|$)", re.I)


def is_dev_manifest(path: str) -> bool:
    """A dependency manifest only the project's developers install (see `_DEV_MANIFEST`)."""
    if not is_dependency(path):
        return False
    folder, _, name = path.rpartition("/")
    stem = name.rsplit(".", 1)[0].lower()
    if folder.rpartition("/")[2] == "requirements":  # requirements/dev.txt: the file's own name says it
        return _DEV_MANIFEST.search(stem) is not None
    rest = stem.removeprefix("requirements").removeprefix("constraints")  # requirements-dev.txt
    return rest != stem and _DEV_MANIFEST.search(rest) is not None


def is_config(path: str) -> bool:
    return kinds(path) & CONFIG != 0


def move_matters(path: str) -> bool:
    """Whether users may name the file by its path, so that moving it breaks them: a Python
    module of the code (imported by its path) or a configuration file (named in scripts
    and in other configs). Tests, docs, examples and tools' files are nobody's import."""
    k = kinds(path)
    return k & CONFIG != 0 or (k & MINOR == 0 and path.endswith(".py"))


def is_source(path: str) -> bool:
    return kinds(path) & SOURCE != 0


def is_api(path: str) -> bool:
    return kinds(path) & API != 0


def is_example(path: str) -> bool:
    return kinds(path) & EXAMPLE != 0


def is_minor(path: str) -> bool:
    """Docs, tests, CI and examples: changes here rarely affect users of the code."""
    return kinds(path) & MINOR != 0


def diff_header_path(line: str) -> str:
    """The path of a `diff --git a/PATH b/PATH` line as the git source writes them
    (`read_diffs`: no renames, so both halves name the same file, which may itself
    contain " b/")."""
    rest = line[len("diff --git "):]
    return rest[2:2 + (len(rest) - 5) // 2]


def path_matches(path: str, globs: list[str] | tuple[str, ...]) -> bool:
    """A path matches a glob (`verl/trainer/**`, `*.yaml`) or a plain directory prefix."""
    return in_matcher(matcher(tuple(globs)), path)


def in_matcher(m: tuple[frozenset[str], tuple[str, ...], re.Pattern | None], path: str) -> bool:
    """Whether `path` matches a `matcher` (for a caller that holds one: a week's core paths)."""
    exact, prefixes, rx = m
    return path in exact or path.startswith(prefixes) or (rx is not None and rx.match(path) is not None)


@lru_cache(maxsize=1024)
def matcher(globs: tuple[str, ...]) -> tuple[frozenset[str], tuple[str, ...], re.Pattern | None]:
    """`globs` as (exact paths, prefixes, one regex for the wildcards), built once per list:
    the same core paths and module rules are matched against every path of a history.
    A plain entry matches itself and what lies under it; a wildcard one matches as
    `fnmatch` does (`*` crosses `/`), and `dir/**` also matches what lies under `dir`."""
    plain = [g for g in globs if not any(ch in g for ch in "*?[")]
    wild = [g for g in globs if g not in plain]
    prefixes = [g.rstrip("/") + "/" for g in plain] + [g[:-3] + "/" for g in wild if g.endswith("/**")]
    rx = re.compile("|".join(f"(?:{translate(g)})" for g in wild)) if wild else None
    return frozenset(plain), tuple(prefixes), rx
