"""Risk detectors. Each finding has a kind (snake_case), a severity, the PRs
involved and the evidence, so a reader can check it. Per-PR detectors run in the
engine; week-level detectors (churn, version mismatches) run over all PRs.

Titles and text are written later by the composer in the report's language;
evidence strings quote paths, keys and versions as they are.
"""

from __future__ import annotations

import os
import re
from collections import defaultdict
from collections.abc import Iterator
from functools import lru_cache

from ..conventions import CleanBody, may_match, release_version
from ..models import PullRequest, Risk
from . import files as fk
from .classify import Classified
from .context import AnalysisContext, percentile
from .scoring import is_default_change

SEVERITY_ORDER = {"high": 0, "medium": 1, "low": 2}
_CHURN = frozenset({"ci_churn", "config_churn"})  # risks of the week as a whole

# The diff lines detectors read: `key: value` / `name = …` shapes and anything with a version.
DIFF_LINES = r"[^\n]*(?:[:=]|\d\.\d)"

_VERSION_DOCS = re.compile(r"readme|install|quickstart|getting.?started|docker|release|changelog|faq|upgrad", re.I)


def files_to_read(pr: PullRequest) -> list[str]:
    """The files of a PR whose diff a detector needs: changed config files (renamed
    or removed keys), and dependency manifests, version files and install/release
    docs (version strings). Reading only these keeps
    the diff pass small; the rest of a PR's content is never needed offline."""
    return [f.path for f in pr.files if worth_reading(f.path, f.status)]


@lru_cache(maxsize=1 << 11)
def worth_reading(path: str, status: str) -> bool:
    """Whether `files_to_read` names a file of this status. Decided from the status, not
    the line counts, so the choice is the same whether diffs are read before, during or
    after the line-count pass (which keeps these files' diffs: `GitSource.preload`).
    Cached: the same files change in week after week."""
    if status == "R":  # moved unchanged: no key or version in it changed
        return False
    if status != "A" and fk.is_config(path):
        return True
    return status != "D" and (
        fk.is_dependency(path) or fk.base(path).lower().startswith("version")
        or (fk.is_doc(path) and _VERSION_DOCS.search(path) is not None))

_CONFIG_WORDS = re.compile(r"\b(?:rename[sd]?|renaming|deprecat\w*|remov\w*|drop\w*)\b.{0,60}\b(?:config\w*|option\w*|arg\w*|flag\w*|keys?|param\w*|setting\w*|field\w*)\b", re.I)
_DEP_WORDS = re.compile(r"\b(?:bump\w*|upgrad\w*|pin\w*|downgrad\w*|requir\w*)\b.{0,40}\b(?:version|==|>=|\d+\.\d+)", re.I)
_YAML_KEY = re.compile(r"^([-+])(\s*)([A-Za-z_][A-Za-z0-9_.-]*)\s*:(?!:)")
_PY_FIELD = re.compile(r"^([-+])(\s+)([A-Za-z_][A-Za-z0-9_]*)\s*:\s*[A-Za-z_][\w\[\], .|]*=")
_ASSIGN_KEY = re.compile(r"^([-+])(\s*)[\"']?([A-Za-z_][A-Za-z0-9_.-]*)[\"']?\s*=(?!=)")  # TOML, INI: key = value
_JSON_KEY = re.compile(r"^([-+])(\s*)\"([^\"\\\n]{1,100})\"\s*:")
_VERSION_PIN = re.compile(
    # `\s*+ … (?<=\s)v` is `\s+v`, without retrying each split of a long run of spaces
    r"\b([A-Za-z][A-Za-z0-9_.-]{1,40})\s*+(?:==|>=|~=|@|:\s*+v?|(?<=\s)v)(\d+\.\d+(?:\.\d+)?(?:\.?(?:post|dev|rc|a|b)\d*)?)\b"
)
_IMAGE_TAG = re.compile(r"\b([a-z][a-z0-9_-]{1,40})(\d+\.\d+(?:\.\d+)?)\b")


def pr_risks(pr: PullRequest, c: Classified, body: CleanBody, ctx: AnalysisContext) -> list[Risk]:
    out: list[Risk] = []
    n = pr.number
    diff = ctx.diffs.get(n, "")
    if c.breaking or body.declared_breaking:
        ev = []
        if c.breaking:
            ev.append(f"title marks it breaking: {pr.title[:120]}")
        if body.declared_breaking:
            ev.append(f"BREAKING CHANGE: {body.declared_breaking[:200]}")
        out.append(Risk("breaking_change", "high", [n], ev))
    elif not c.minor_only:  # users get new behaviour without changing a setting
        # (a breaking change says more; a default of CI, docs or tests is no user's),
        # whether the PR says so or only its configuration's diff shows it
        said = [f"changes a default: {pr.title[:120]}"] if is_default_change(pr, body) else []
        if ev := said + changed_defaults(diff):
            out.append(Risk("default_change", "medium", [n], ev))
    packages = _packages(ctx.project, tuple(ctx.core_paths))
    cfg = _config_changes(pr, diff, packages)
    if cfg:  # what the diff shows removed or renamed is high; what only the title says, medium
        high = any(("removed" in e or "renamed" in e) and "(title)" not in e for e in cfg)
        out.append(Risk("config_change", "high" if high else "medium", [n], cfg))
    # Each fact below is gathered only when the ones before it leave it a say: these run
    # for every PR, over all of its files.
    core_lines = sum(f.lines for f in ctx.core_files(pr)) if ctx.core_paths and pr.lines_known else 0
    if core_lines >= 200 and percentile(ctx.calibration_lines, core_lines) >= 0.75:
        paths = ctx.core_hits(pr)
        out.append(Risk("core_path", "medium", [n], [f"{core_lines:,} changed lines in {', '.join(paths)}"]))
    if c.type in ("feat", "fix", "refactor", "perf") and not (may_match(pr.title, _NO_TEST_WORDS)
                                                             and _NO_TEST_NEEDED.search(pr.title)):
        touches_source = [f.path for f in pr.files if f.status != "R" and fk.is_source(f.path) and not fk.is_example(f.path)]
        if touches_source and not any(fk.is_test(f.path) for f in pr.files) and not body.has_test_evidence:
            out.append(Risk("missing_tests", "medium", [n], [f"{c.type} touching {len(touches_source)} source file(s), e.g. {touches_source[0]}, with no test files and no test evidence in the description"]))
    modules = module_changes(pr, packages)
    if modules:
        out.append(Risk("module_removed", "high", [n], modules))  # imports of it fail, as a removed key does
    manifests = [f.path for f in pr.files if fk.is_dependency(f.path)]
    # the pins of the project's own tests, docs and linters (requirements/dev.txt) are nobody's install
    users = [p for p in manifests if not fk.is_dev_manifest(p)]
    deps = [p for p in users if _changes_requirements(p, ctx.diffs.get(n))]
    ci_only = bool(pr.files) and all(fk.is_ci(f.path) for f in pr.files)  # a CI action's version is no user's dependency
    dev_only = bool(manifests) and not users
    if deps or (not ci_only and not dev_only and c.type in ("deps", "build", "chore", "ci") and _DEP_WORDS.search(pr.title)
                and not release_version(pr.title)):  # "bump version to 0.10.0.dev" is the project's own
        ev = [f"changes {', '.join(deps[:3])}"] if deps else [f"title: {pr.title[:120]}"]
        out.append(Risk("dependency_change", "medium", [n], ev))
    big = max(1000, _p95(ctx.calibration_lines))
    if pr.lines_known and pr.lines >= big:
        out.append(Risk("large_change", "medium", [n], [f"{pr.lines:,} changed lines in {len(pr.files):,} file{'s' * (len(pr.files) != 1)}"]))
    if pr.discussion_known:
        from .discussion import discussion_risks

        out.extend(discussion_risks(pr, ctx.lang))
    return out


@lru_cache(maxsize=64)
def _packages(project: str, core_paths: tuple[str, ...]) -> frozenset[str]:
    """The top-level Python packages other code imports: the one named after the
    repository, and those holding its core paths."""
    tops = {project.replace("-", "_")} | {cp.removeprefix("src/").split("/", 1)[0] for cp in core_paths}
    return frozenset(t for t in tops if t.isidentifier())


@lru_cache(maxsize=1 << 12)
def _module_name(path: str, packages: frozenset[str]) -> str | None:
    """`verl/utils/tokenizer.py` → `verl.utils.tokenizer` (a package's `__init__.py` → the
    package), for a module of `packages` that code elsewhere may import: not a test,
    example or script, and no part of it private (`_impl.py`, `__main__.py`)."""
    if not path.endswith(".py") or fk.is_minor(path):
        return None
    parts = path.removeprefix("src/")[:-3].split("/")
    if parts[-1] == "__init__":
        parts.pop()
    if len(parts) < 2 or parts[0] not in packages or not all(p.isidentifier() and p[0] != "_" for p in parts):
        return None
    return ".".join(parts)


def module_changes(pr: PullRequest, packages: frozenset[str]) -> list[str]:
    """Evidence of the project's Python modules a PR removes or moves: imports of the old
    path fail after it. A module deleted beside one of the same name added elsewhere is
    read as moved (`--no-renames` shows a move with edits as both); a removed package
    stands for the modules under it. At most six, then how many more."""
    if not packages or not any(f.status == "D" or f.previous for f in pr.files):  # most PRs
        return []
    gone: dict[str, str] = {}  # module -> path, removed or moved away
    moved: dict[str, str] = {}  # module -> its new module, when known
    added: dict[str, list[str]] = defaultdict(list)  # last name -> modules added
    for f in pr.files:
        if f.previous:  # moved: unchanged ("R", a clone) or a rename GitHub lists ("M")
            old, new = _module_name(f.previous, packages), _module_name(f.path, packages)
            if old and old != new:
                gone[old] = f.previous
                if new:
                    moved[old] = new
        elif f.status in ("A", "D") and (name := _module_name(f.path, packages)):
            if f.status == "D":
                gone[name] = f.path
            else:
                added[name.rsplit(".", 1)[-1]].append(name)
    # `tokenizer.py` turned into `tokenizer/__init__.py` imports as before.
    gone = {m: path for m, path in gone.items() if m not in added.get(m.rsplit(".", 1)[-1], ())}
    if not gone:
        return []
    for old in gone:
        if old not in moved and (same := added.get(old.rsplit(".", 1)[-1])):
            # Of the modules of that name, the one nearest the old place.
            moved[old] = max(same, key=lambda new: len(os.path.commonprefix([old.split("."), new.split(".")])))
    packages_gone = [m for m, path in gone.items() if path.endswith("__init__.py")]
    shown = sorted(m for m in gone if not any(m.startswith(p + ".") for p in packages_gone))
    ev = [f"module moved: {m} -> {moved[m]}" if m in moved else f"module removed: {m}" for m in shown[:6]]
    if len(shown) > 6:
        ev.append(f"{len(shown) - 6} more module{'s' * (len(shown) > 7)} removed or moved")
    return ev


# A manifest line that only sets the project's own version (a release bumps it).
# Possessive runs (`*+`): a line of a diff is anyone's text, and `\s*,?\s*$` retried every
# split of a long run of spaces (32,000 took 18 s).
_OWN_VERSION = re.compile(r"""^[-+]\s*+(?:__version__|version)\s*+[=:]\s*+["']?[\w.+-]*+["']?\s*+,?\s*+$""")


def _changes_requirements(path: str, diff: str | None) -> bool:
    """Whether a dependency manifest's change touches requirements, not only the project's
    own version (`version = "3.1.0"` in pyproject.toml). Without its diff: assumed so."""
    if not diff:
        return True
    lines, current = [], ""
    for line in diff.splitlines():
        if line.startswith("diff --git"):
            current = fk.diff_header_path(line)
        elif current == path and line[:1] in "+-" and not line.startswith(("+++", "---")) and line[1:].strip():
            lines.append(line)
    return not lines or not all(_OWN_VERSION.match(line) for line in lines)


# A routine version bump (Dependabot's "Bump X from 1 to 2", "Bump the actions group …"): maintenance, not a CI fix.
# Read in a title's first 256 characters (GitHub's limit; a commit subject has none): the
# two `.+` retry every "from" for each "to", quadratic on a long title.
_BUMP = re.compile(r"\bbump(?:s|ed)?\b.+\bfrom\b.+\bto\b|\bbump(?:s|ed)? the \S+ group\b", re.I)


def _p95(values: list[int]) -> int:
    return values[int(0.95 * (len(values) - 1))] if values else 0


def _config_changes(pr: PullRequest, diff: str, packages: frozenset[str] = frozenset()) -> list[str]:
    """Evidence of renamed or removed configuration: keys, fields, files, or the title."""
    ev: list[str] = []
    deleted = {f.path for f in pr.files if f.status == "D" and fk.is_config(f.path)}
    ev += [f"removed config file {path}" for path in sorted(deleted)]
    # Moved: scripts and other configs that name the old path no longer find it.
    ev += sorted(f"config file renamed {f.previous} -> {f.path}" for f in pr.files
                 if f.previous and f.previous != f.path and fk.is_config(f.previous))
    removed: dict[str, list[str]] = defaultdict(list)
    added: dict[str, list[str]] = defaultdict(list)
    for path, _, m in _key_lines(diff):
        if m and path not in deleted:  # the keys of a deleted file go with it: said once, as the file
            (removed if m.group(1) == "-" else added)[m.group(3)].append(path)
    gone = [k for k in removed if k not in added]
    new = [k for k in added if k not in removed]
    for k in gone[:6]:
        files = removed[k]
        # A removed key next to a new one in the same file reads as a rename.
        partner = next((nk for nk in new if added[nk][0] == files[0]), None)
        if partner:
            new.remove(partner)
            ev.append(f"config key renamed {k} -> {partner} in {files[0]}")
        else:
            ev.append(f"config key removed: {k} ({files[0]})")
    # A setting the title says is removed, by its dotted name ("remove
    # actor.dump_memory_snapshot": read in code, it is in no config file's diff).
    low_title = pr.title.lower()
    if not ev and ("remov" in low_title or "drop" in low_title) and (named := _REMOVED_KEY_IN_TITLE.search(pr.title)):
        root = named[1].split(".", 1)[0].lower()
        if root not in packages and root not in _IMPORT_ROOTS:  # `verl.utils.x`, `torch.cuda.y`: code, not settings
            ev.append(f"config key removed (title): {named[1]}")
    # The title alone: "drop tied keys before save_pretrained" names no setting; a title
    # says configuration when it says so, or when the PR touches configuration files.
    if not ev and _has_config_verb(pr.title) and (
            _CONFIG_OBJECT.search(pr.title) or any(fk.is_config(f.path) for f in pr.files)):
        ev.append(f"title: {pr.title[:120]}")
    return ev


# "remove actor.dump_memory_snapshot": a dotted name whose last part is a snake_case word,
# as settings are named (not `torch.quantile`, not a file such as `main_ppo.py`).
_REMOVED_KEY_IN_TITLE = re.compile(  # the verb in any case; the name as settings are written (`DataProto.x_y` is code)
    r"\b(?i:remov|drop)\w*\s+(?i:the\s+)?`?([a-z][a-z0-9]*(?:\.[a-z][a-z0-9_]*)*\.[a-z][a-z0-9]*_[a-z0-9_]+)`?(?![\w.])")
# Names a title gives that are code, not settings: the standard library's and the ML stack's.
_IMPORT_ROOTS = frozenset({"self", "cls", "os", "sys", "re", "json", "math", "time", "logging", "torch", "np", "numpy", "jax", "tf",
                           "ray", "vllm", "sglang", "megatron", "transformers", "peft", "deepspeed", "accelerate",
                           "datasets", "hydra", "omegaconf", "flask", "werkzeug", "jinja2", "click"})
_CONFIG_OBJECT = re.compile(r"\b(?:config\w*|option\w*|flag\w*|arg\w*|param\w*|setting\w*)\b", re.I)
# A fix of spelling or of the linters' complaints needs no test of its own.
_NO_TEST_NEEDED = re.compile(r"\b(?:typos?|spelling|misspell\w*|lint\w*|pre-commit|formatting)\b", re.I)
_NO_TEST_WORDS = ("typo", "spelling", "misspell", "lint", "pre-commit", "formatting")  # one is in every match


# The verbs _CONFIG_WORDS starts with, lower-case: only a title holding one of them is
# searched (`may_match`), as the regex is tried at every position.
_CONFIG_VERBS = ("renam", "deprecat", "remov", "drop")


def _has_config_verb(title: str) -> bool:
    return may_match(title, _CONFIG_VERBS) and _CONFIG_WORDS.search(title) is not None


_NO_KEYS: tuple[re.Pattern[str], ...] = ()
# How many changed values a PR's evidence lists (a reformatted config changes dozens).
DEFAULTS_LISTED = 6
# A value as the evidence quotes it: at most this many characters; values are compared
# on their first VALUE_READ characters.
VALUE_MAX = 40
VALUE_READ = 1000


def changed_defaults(diff: str) -> list[str]:
    """Keys whose value a configuration file changes in place: `-key: old` then
    `+key: new` at the same indent, in one run of removed lines and the run of added
    lines after it (git writes a changed line so), each key once in both runs, the
    values told apart (a comment, quotes or a trailing comma changed is no new value).
    A key under a block the run also shows is paired only under a block of the same
    name (`-a:` `-  lr: 1` `+b:` `+  lr: 2` moves a setting, it changes no default).
    Only in configuration files, and not in examples' and recipes', whose values no user
    inherits (nor in a manifest such as `environment.yml`: no setting). Each as
    `config default changed: KEY in PATH: OLD -> NEW`, at most `DEFAULTS_LISTED`."""
    out: list[str] = []
    old: dict[tuple[str, str, str], list[str]] = defaultdict(list)  # (indent, key, enclosing key) -> values
    new: dict[tuple[str, str, str], list[str]] = defaultdict(list)
    # Per side, the keys of the run that enclose the line being read: (indent's width, key).
    enclosing: dict[str, list[tuple[int, str]]] = {"-": [], "+": []}
    current = ""

    def pair() -> None:
        for key, before in old.items():
            after = new.get(key, ())
            if len(before) == 1 and len(after) == 1 and before[0] != after[0]:
                out.append(f"config default changed: {key[1]} in {current}: {before[0]} -> {after[0]}")
        old.clear()
        new.clear()
        enclosing["-"].clear()
        enclosing["+"].clear()

    for path, line, m in _key_lines(diff):
        sign = line[:1]
        if sign not in ("-", "+") or (sign == "-" and new):  # a file's start, a hunk's or a context line,
            pair()  # or removed after added: the next change
            current = path
        if m is not None and fk.is_config(path) and not fk.is_example(path):
            indent, key, above = m.group(2), m.group(3), enclosing[m.group(1)]
            while above and above[-1][0] >= len(indent):
                above.pop()
            parent = above[-1][1] if above else ""
            above.append((len(indent), key))
            if value := _config_value(line[m.end():]):
                (old if m.group(1) == "-" else new)[indent, key, parent].append(value)
    pair()
    return out[:DEFAULTS_LISTED]


def _key_lines(diff: str) -> Iterator[tuple[str, str, re.Match[str] | None]]:
    """(path, line, the match of its key's pattern or None) for each line of the sections
    of `diff` (as `read_diffs` writes them) whose file may hold keys (`_key_patterns`),
    but the `---`/`+++` lines; each such section starts with (path, "", None)."""
    keys, path = _NO_KEYS, ""
    for line in diff.splitlines():
        if line.startswith("diff --git"):
            path = fk.diff_header_path(line)
            keys = _key_patterns(path)
            if keys:
                yield path, "", None
        elif keys and not line.startswith(("+++", "---")):
            yield path, line, next((m for rx in keys if (m := rx.match(line))), None)


def _config_value(rest: str) -> str:
    """The value after a key's `:` or `=`, without a trailing comment or comma and
    the quotes around it; '' for none (a YAML key that opens a block)."""
    value = rest[:VALUE_READ].strip()
    if value[:1] == "#":
        return ""
    # A comment starts at the first ` #` outside quotes; the quotes before each ` #` are
    # counted from the one before it (a diff's line is anyone's text: no rescans).
    seen = doubles = singles = 0
    cut = value.find(" #")
    while cut >= 0:
        doubles += value.count('"', seen, cut)
        singles += value.count("'", seen, cut)
        if doubles % 2 == 0 and singles % 2 == 0:
            value = value[:cut].rstrip()
            break
        seen, cut = cut, value.find(" #", cut + 2)
    value = value.removesuffix(",").strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        value = value[1:-1]
    if len(value) > VALUE_MAX:
        value = value[:VALUE_MAX - 1] + "…"
    return value


@lru_cache(maxsize=1 << 10)
def _key_patterns(path: str) -> tuple[re.Pattern[str], ...]:
    """How a config file's lines name their keys: `key: value` (YAML, and INI's other
    form), `key = value` (TOML, INI), `"key": value` (JSON), dataclass fields (Python).
    Nothing for a file that is not configuration."""
    low = path.lower()
    if not (fk.is_config(path) or low.endswith((".yaml", ".yml"))):
        return _NO_KEYS
    if low.endswith(".json"):
        return (_JSON_KEY,)
    if low.endswith(".jsonnet"):
        return (_JSON_KEY, _YAML_KEY)
    if low.endswith(".toml"):
        return (_ASSIGN_KEY,)
    if low.endswith((".ini", ".cfg", ".conf")):
        return (_ASSIGN_KEY, _YAML_KEY)
    # a dataclass field first: its `name: type = value` is YAML's `key:` too, and its value follows the `=`
    return (_PY_FIELD, _YAML_KEY) if low.endswith(".py") else (_YAML_KEY,)


def week_risks(prs: list[PullRequest], classified: dict[int, Classified], ctx: AnalysisContext) -> list[Risk]:
    out: list[Risk] = []
    days = ctx.window.range_days
    span = "this week" if days is None else "on this day" if days == 1 else "in this period"  # evidence is English
    ci = [pr.number for pr in prs if (classified[pr.number].type == "ci" or (
          classified[pr.number].type == "fix" and pr.files and all(fk.is_ci(f.path) for f in pr.files)))
          and not _BUMP.search(pr.title[:256])]
    ci += [pr.number for pr in prs if pr.number not in ci and "ci" in classified[pr.number].modules and classified[pr.number].type == "fix"]
    if len(ci) >= 3:
        out.append(Risk("ci_churn", "medium" if len(ci) >= 5 else "low", sorted(ci), [f"{len(ci)} CI changes or fixes {span}"]))
    cfg = [pr.number for pr in prs if any(fk.is_config(f.path) for f in pr.files)]
    if len(cfg) >= 4:
        out.append(Risk("config_churn", "medium", sorted(cfg), [f"{len(cfg)} PRs changed configuration files {span}"]))
    out.extend(_version_mismatch(prs, ctx.diffs))
    out.extend(_stale_versions(prs, ctx))
    return out


def _version_key(v: str) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", v)[:3])


def _stale_versions(prs: list[PullRequest], ctx: AnalysisContext) -> list[Risk]:
    """The project's own version written older than its latest release (as of the week's
    end) in this week's additions (docs, images, pins that were not updated)."""
    project = ctx.project
    rx = re.compile(rf"\b{re.escape(project)}(?:==|@|:|\s+v?|\s*v)(\d+\.\d+(?:\.\d+)?)\b", re.I)
    written: dict[str, set[int]] = defaultdict(set)
    for pr in prs:
        for line in ctx.diffs.get(pr.number, "").splitlines():
            if line.startswith("+") and not line.startswith("+++"):
                for ver in rx.findall(line):
                    written[ver].add(pr.number)
    # The release is asked for only when a version was written: a git describe per week otherwise.
    release = ctx.source.latest_release(ctx.window.end) if written and ctx.source is not None else None
    if not release:
        return []
    latest = _version_key(release)
    found = {v: s for v, s in written.items() if _version_key(v) < latest}
    if not found:
        return []
    nums = sorted({n for s in found.values() for n in s})
    ev = [f"{project} {v} written in #{', #'.join(map(str, sorted(s)))}; latest release {release}" for v, s in sorted(found.items())]
    return [Risk("version_mismatch", "medium", nums, ev[:4])]


def _version_mismatch(prs: list[PullRequest], diffs: dict[int, str]) -> list[Risk]:
    """The same package pinned or documented at different versions in this week's additions."""
    seen: dict[str, dict[str, set[int]]] = defaultdict(lambda: defaultdict(set))
    where: dict[tuple[str, str], str] = {}
    for pr in prs:
        current = ""
        for line in diffs.get(pr.number, "").splitlines():
            if line.startswith("diff --git"):
                current = fk.diff_header_path(line)
                continue
            if not line.startswith("+") or line.startswith("+++"):
                continue
            for name, ver in _VERSION_PIN.findall(line[1:]):
                key = name.lower()
                if key in ("python", "version", "v", "cuda_version") or len(key) < 3:
                    continue
                seen[key][ver].add(pr.number)
                where.setdefault((key, ver), current)
    out = []
    for name, versions in sorted(seen.items()):
        if len(versions) < 2:
            continue
        prs_involved = sorted({n for s in versions.values() for n in s})
        ev = [f"{name} {v} in {where[(name, v)]} (#{', #'.join(map(str, sorted(nums)))})" for v, nums in sorted(versions.items())]
        out.append(Risk("version_mismatch", "medium", prs_involved, ev[:4]))
    return out[:3]


def merge_risks(per_pr: list[Risk], week: list[Risk], importance: dict[int, float]) -> list[Risk]:
    """One risk per kind for the report, strongest first (by severity, then the PRs' importance)."""
    by_kind: dict[str, Risk] = {}
    for r in [*per_pr, *week]:
        k = by_kind.get(r.kind)
        if k is None:
            by_kind[r.kind] = Risk(r.kind, r.severity, list(r.prs), list(r.evidence))
            continue
        k.prs = list(set(k.prs) | set(r.prs))
        k.evidence.extend(e for e in r.evidence if e not in k.evidence)
        if SEVERITY_ORDER[r.severity] < SEVERITY_ORDER[k.severity]:
            k.severity = r.severity
    merged = list(by_kind.values())
    for r in merged:
        r.prs = sorted(set(r.prs), key=lambda n: (-importance.get(n, 0), n))
    # A week's churn (many CI or config changes) holds its largest PRs too: among risks of
    # one severity, those about particular PRs come first, so the churn is not "the main risk";
    # a change its authors call breaking comes before any other of its severity.
    # Then what users must act on (a renamed key, a moved module, a new default, a dependency)
    # before what reviewers should (core changes, size, tests), so that a recommendation to
    # check configuration is never about a risk pushed past the ones shown.
    merged.sort(key=lambda r: (SEVERITY_ORDER[r.severity], r.kind != "breaking_change", r.kind in _CHURN,
                               r.kind not in _ACT_ON, -max((importance.get(n, 0) for n in r.prs), default=0), r.kind))
    return merged


# Risks users upgrading must act on themselves.
_ACT_ON = frozenset({"breaking_change", "config_change", "module_removed", "default_change", "dependency_change",
                     "version_mismatch"})
