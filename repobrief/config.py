"""One typed settings object and its loader.

Precedence, lowest first: defaults, `repobrief.toml` (or `[tool.repobrief]` in
`pyproject.toml`) found by walking up from the repository, `REPOBRIEF_*`
environment variables (plus `GITHUB_TOKEN`, `OPENAI_API_KEY`, `OPENAI_BASE_URL`),
then command-line flags. Every error names the failing option and, when it
looks like a typo, the nearest valid one.
"""

from __future__ import annotations

import dataclasses
import difflib
import functools
import ipaddress
import math
import os
import re
import tomllib
import types
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from .errors import ConfigError

LANGUAGES = ("zh", "en")


def normal_language(lang):
    """A language name as the report knows it: "EN" and " zh " as `en` and `zh`; anything
    else as given, for the check that names it."""
    low = lang.strip().lower() if isinstance(lang, str) else None
    return low if low in LANGUAGES else lang


@dataclass
class ModuleRule:
    """A module: matched by title tags, path globs and labels."""

    name: str
    paths: list[str] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    labels: list[str] = field(default_factory=list)


@dataclass
class ThemeRule:
    """A configured theme: matched by keywords (title/body), paths or labels."""

    name: str
    name_zh: str = ""
    keywords: list[str] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)
    labels: list[str] = field(default_factory=list)
    # A hardware platform (its PRs get a "Validate on NAME" recommendation); unset: when
    # its name or keywords name one (npu, ascend, rocm, amd, cuda, xpu, hpu, mlu, musa, …).
    platform: bool | None = None


@dataclass
class LabelRule:
    """Maps a GitHub label to a module and/or change type, and may mark its PRs breaking."""

    label: str
    module: str = ""
    type: str = ""
    breaking: bool = False


@dataclass
class ImportanceWeights:
    """Points of the importance score; see docs/scoring.md."""

    feat: float = 3.0
    perf: float = 2.5
    fix: float = 2.0
    refactor: float = 1.5
    revert: float = 1.5
    build: float = 1.0
    deps: float = 1.0
    chore: float = 0.6
    test: float = 0.5
    ci: float = 0.5
    docs: float = 0.5
    style: float = 0.2
    other: float = 1.0
    breaking: float = 1.5
    release: float = 3.0  # a version released (not a development version): what downstream users pin to
    size_max: float = 2.0
    files_max: float = 0.8
    modules_each: float = 0.3
    modules_max: float = 0.9
    core_path: float = 1.0
    config_surface: float = 0.8
    api_surface: float = 0.5
    new_module: float = 0.7
    linked_issue: float = 0.4
    discussion_max: float = 1.0
    minor_factor: float = 0.5  # docs/CI/tests-only changes are multiplied by this


# Where the LLM's model is set, for the hints that ask for it (`run` has no --llm-model
# flag: name what every command reads).
MODEL_SETTING = ("[llm] model in repobrief.toml (in a team config, llm = {model = \"NAME\"} in the repository's "
                 "table) or REPOBRIEF_LLM_MODEL; `report`, `backfill`, `site` and `batch export` also take --llm-model NAME")
# How to do without the model, for every command (`run` has no --engine flag)
OFFLINE_INSTEAD = 'or use the offline engine (--engine offline, or engine = "offline" in the config)'


@dataclass
class LLMSettings:
    model: str = ""
    base_url: str = ""
    api_key: str = ""
    concurrency: int = 8
    timeout: float = 60.0
    budget_seconds: float = 600.0
    response_format: str = "auto"  # auto | json_schema | json_object | tools
    prompt_tokens_per_pr: int = 3000
    max_output_tokens: int = 0  # per answer; 0: the endpoint's own limit
    price_prompt_per_mtok: float = 0.0
    price_completion_per_mtok: float = 0.0

    def validate(self) -> LLMSettings:
        """Bad values are config errors naming the option and the nearest valid value,
        before any work (whether or not the endpoint is reachable)."""
        if self.response_format.lower() not in RESPONSE_FORMATS:
            _bad("llm.response_format", self.response_format, f"one of {', '.join(RESPONSE_FORMATS)}", RESPONSE_FORMATS)
        for name, least in (("concurrency", 1), ("prompt_tokens_per_pr", 1)):
            if getattr(self, name) < least:
                _bad(f"llm.{name}", getattr(self, name), f"a whole number of at least {least}", hint=f"the nearest valid value is {least}")
        if self.max_output_tokens < 0:
            _bad("llm.max_output_tokens", self.max_output_tokens, "a whole number of tokens, or 0 for the endpoint's own limit",
                 hint="the nearest valid value is 0")
        for name in ("timeout", "budget_seconds"):
            if not getattr(self, name) > 0:  # NaN too
                default = getattr(LLMSettings, name)
                _bad(f"llm.{name}", getattr(self, name), "a positive number of seconds", hint=f"e.g. {default:g}, the default")
        for name in ("price_prompt_per_mtok", "price_completion_per_mtok"):
            if not getattr(self, name) >= 0:
                _bad(f"llm.{name}", getattr(self, name), "a price of 0 or more (USD per million tokens)", hint="the nearest valid value is 0")
        problem = self.base_url and http_url_problem(self.base_url.strip())
        if problem:  # not quoted: an endpoint's URL can carry a key
            raise ConfigError(f"option 'llm.base_url' {problem}", "give the endpoint's base URL, e.g. "
                              "https://api.openai.com/v1 or http://127.0.0.1:8000/v1", option="llm.base_url")
        return self


RESPONSE_FORMATS = ("auto", "json_schema", "json_object", "tools")


@dataclass
class GitHubSettings:
    url: str = "https://api.github.com"
    token: str = ""
    max_retries: int = 5  # per request: failures (5xx, dropped connections) and rate-limit waits, each counted apart
    backoff: float = 1.0  # seconds before the first retry of a 5xx; doubles each time
    max_wait: float = 3600.0  # longest rate-limit wait before giving up (seconds)


@dataclass
class PublishTarget:
    target: str  # feishu | lark | slack | dingtalk | wecom | webhook
    webhook: str = ""
    secret: str = ""
    link: str = ""


NOT_OPTIONS = frozenset({"source_file", "given"})  # fields of Settings that no config sets


@dataclass
class Settings:
    name: str = ""  # owner/repo
    branch: str = ""  # default branch; empty = the clone's HEAD
    timezone: str = ""  # IANA name; empty = UTC
    language: str = "zh"
    threshold: float = 5.0
    formats: list[str] = field(default_factory=lambda: ["md"])
    engine: str = "offline"
    baseline_weeks: int = 12
    db: str = ""  # SQLite path or database URL; empty = the user data directory
    modules: list[ModuleRule] = field(default_factory=list)
    themes: list[ThemeRule] = field(default_factory=list)
    labels: list[LabelRule] = field(default_factory=list)
    core_paths: list[str] = field(default_factory=list)  # empty = most-changed source directories
    diff_max_bytes: int = 200_000  # per PR, when a detector reads a diff
    importance: ImportanceWeights = field(default_factory=ImportanceWeights)
    llm: LLMSettings = field(default_factory=LLMSettings)
    github: GitHubSettings = field(default_factory=GitHubSettings)
    publish: list[PublishTarget] = field(default_factory=list)
    source_file: str = ""  # where the file settings came from (informational)
    # the options the file, the environment or flags set (the others are defaults): a site
    # keeps its own language unless one is asked for
    given: frozenset[str] = frozenset()

    def validate(self) -> Settings:
        self.language = normal_language(self.language)
        if self.language not in LANGUAGES:
            _bad("language", self.language, f"one of {', '.join(LANGUAGES)}", LANGUAGES)
        if not 0.0 <= self.threshold <= 10.0:
            _bad("threshold", self.threshold, "a number from 0.0 to 10.0")
        if self.diff_max_bytes < 1:
            _bad("diff_max_bytes", self.diff_max_bytes, "a positive number of bytes (the most diff text read per PR)",
                 hint=f"e.g. {Settings.diff_max_bytes}, the default")
        if self.baseline_weeks < 1 or self.baseline_weeks > 520:
            _bad("baseline_weeks", self.baseline_weeks, "a whole number from 1 to 520")
        if self.name and (self.name.count("/") != 1 or {"", ".", ".."} & set(self.name.split("/"))
                          or not self.name.isprintable()):
            _bad("name", self.name, "OWNER/REPO, e.g. verl-project/verl")
        if self.timezone:
            from .window import parse_timezone

            try:
                parse_timezone(self.timezone)
            except Exception as e:  # re-raised as a config error naming the option
                raise ConfigError(f"option 'timezone': {e}", option="timezone") from None
        from .registry import ENGINES, RENDERERS

        if self.engine not in ENGINES:
            _bad("engine", self.engine, f"one of {', '.join(ENGINES.names())}", ENGINES.names())
        for i, fmt in enumerate(self.formats):
            if fmt.strip().lower() not in RENDERERS:
                _bad(f"formats[{i}]", fmt, f"one of {', '.join(RENDERERS.names())}", RENDERERS.names())
        self.llm.validate()
        problem = self.github.url and http_url_problem(self.github.url.strip())
        if problem:
            raise ConfigError(f"option 'github.url' {problem}", "use https://api.github.com, or https://HOST/api/v3 for "
                              "GitHub Enterprise Server", option="github.url")
        for i, target in enumerate(self.publish):
            check_publish_target(f"publish[{i}]", target)
        return self


def check_publish_target(option: str, target: PublishTarget) -> None:
    """A ConfigError naming `option` for a target that could not post as configured: before
    any work, and never quoting the webhook's path or query (the token) or the secret."""
    from .registry import PUBLISHERS

    if target.target not in PUBLISHERS:
        _bad(f"{option}.target", target.target, f"one of {', '.join(PUBLISHERS.names())}", PUBLISHERS.names())
    problem = target.webhook and http_url_problem(target.webhook)
    if problem:
        raise ConfigError(f"option '{option}.webhook' {problem}",
                          "copy the whole URL from the bot's settings, starting with https://")
    if target.link:
        from .render.links import link_too_long, safe_link

        if safe_link(target.link) is None:  # the card would go out without its button
            _bad(f"{option}.link", target.link, "an absolute http(s) URL without spaces, "
                 "e.g. https://reports.example.com/2026-W26.html")
        too_long = link_too_long(target.link)
        if too_long:
            raise ConfigError(f"option '{option}.link' {too_long}", "link to a shorter address", option=f"{option}.link")
    if target.secret:
        if not PUBLISHERS.get(target.target).signs:
            raise ConfigError(f"option '{option}.secret' is set, but {target.target} messages are not signed: "
                              "its webhook URL is its secret", f"remove secret from {option}")


def http_url_problem(url: str) -> str | None:
    """What is wrong with an http(s) URL — a webhook's, an API's or an endpoint's — ("is not
    an http(s) URL", …), or None; never quotes its user part, path or query (a secret)."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "is not an http(s) URL"
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return "is not an http(s) URL"
    try:
        parts.port  # noqa: B018 -- raises ValueError for a port that is not a number from 0 to 65535
    except ValueError:
        # The port is what follows the host's last ':' (an IPv6 host is in brackets).
        port = parts.netloc.rpartition("@")[2].rpartition("]")[2].rpartition(":")[2]
        if port.isascii() and port.isdigit():
            return f"has a port out of range ({port if len(port) <= 6 else port[:6] + '…'}; ports go from 1 to 65535)"
        return "has a port that is not a number (after the host's ':')"
    if parts.port == 0:
        return "has a port out of range (0; ports go from 1 to 65535)"
    host = parts.hostname
    try:
        ipaddress.ip_address(host)
        return None
    except ValueError:
        pass
    try:
        # What the resolver will be asked: an empty label (`open..feishu.cn`), a label
        # longer than 63 characters or a space would otherwise fail deep in the send.
        # (an ASCII name is its own: the idna codec costs imports every load of the settings pays)
        ascii_host = host if host.isascii() else host.encode("idna").decode("ascii")
    except UnicodeError:
        ascii_host = ""
    if not _HOST_NAME.fullmatch(ascii_host) or any(len(label) > 63 for label in ascii_host.split(".")):
        return f"has an invalid host name {host!r}"
    return None


_HOST_NAME = re.compile(r"[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*\.?")


def _bad(
    option: str, value: Any, expected: str, choices: tuple[str, ...] | list[str] = (), *, hint: str | None = None
) -> typing.NoReturn:
    near = difflib.get_close_matches(str(value), list(choices), n=1) if choices else []
    raise ConfigError(
        f"option {option!r} is {value!r}; expected {expected}",
        f"did you mean {near[0]!r}?" if near else hint,
        option=option,
    )


# --------------------------------------------------------------------------- loading


# Options whose value is, or may carry, a credential: a bot's webhook URL (its path
# or query is the token), signing secrets, API tokens and keys, and URLs that can
# hold a password. Errors about them say the option and the type, never the value.
SECRET_OPTIONS = frozenset({"secret", "webhook", "token", "api_key", "db", "base_url", "url"})

_TOML_TYPES = {bool: "a boolean", int: "an integer", float: "a float", str: "a string", list: "an array", dict: "a table"}


def _shown(value: Any, where: str) -> str:
    """How an error shows the value of option `where`: the value, or only its type for a secret."""
    if where.rpartition(".")[2].partition("[")[0] in SECRET_OPTIONS:
        return f"{_TOML_TYPES.get(type(value), type(value).__name__)} (value not shown: this option holds a secret)"
    return repr(value)


def _coerce(value: Any, tp: Any, where: str) -> Any:
    """Check and convert a TOML value to the dataclass field type `tp`."""
    origin = typing.get_origin(tp)
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        if not isinstance(value, dict):
            raise ConfigError(f"option {where!r} must be a table, got {type(value).__name__}", option=where)
        return _build(tp, value, where)
    if origin is list:
        (item_tp,) = typing.get_args(tp)
        if isinstance(value, str) and item_tp is str:
            value = [v.strip() for v in value.split(",") if v.strip()]
        if not isinstance(value, list):
            raise ConfigError(f"option {where!r} must be a list, got {type(value).__name__}", option=where)
        return [_coerce(v, item_tp, f"{where}[{i}]") for i, v in enumerate(value)]
    if origin in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        return _coerce(value, args[0], where)
    if tp is bool:
        if isinstance(value, str) and value.lower() in ("1", "true", "yes", "on", "0", "false", "no", "off"):
            return value.lower() in ("1", "true", "yes", "on")
        if not isinstance(value, bool):
            raise ConfigError(f"option {where!r} must be true or false, got {_shown(value, where)}", option=where)
        return value
    if tp is float:
        try:
            if isinstance(value, bool):
                raise ValueError
            number = float(value)
            if not math.isfinite(number):
                raise ValueError
            return number + 0.0  # "-0" reads as 0.0 (and prints as 0)
        except (TypeError, ValueError):
            raise ConfigError(f"option {where!r} must be a number, got {_shown(value, where)}", option=where) from None
    if tp is int:
        try:
            if isinstance(value, bool) or (isinstance(value, float) and not value.is_integer()):
                raise ValueError
            return int(value)
        except (TypeError, ValueError):
            raise ConfigError(f"option {where!r} must be a whole number, got {_shown(value, where)}", option=where) from None
    if tp is str:
        if not isinstance(value, str):
            raise ConfigError(f"option {where!r} must be a string, got {_shown(value, where)}", "write it in quotes: \"…\"",
                              option=where)
        return value
    return value


@functools.cache
def _hints(cls: type) -> dict[str, Any]:
    # Evaluating the string annotations is the slow part of loading settings.
    return typing.get_type_hints(cls)


def _build(cls: type, data: dict, prefix: str = "") -> Any:
    hints = _hints(cls)
    names = [f.name for f in dataclasses.fields(cls) if f.name not in NOT_OPTIONS]
    kwargs = {}
    for key, value in data.items():
        where = f"{prefix}.{key}" if prefix else key
        if key not in names:
            near = difflib.get_close_matches(key, names, n=1)
            raise ConfigError(
                f"unknown option {where!r}",
                f"did you mean {(prefix + '.' if prefix else '') + near[0]!r}?"
                if near
                else f"valid options here: {', '.join(names)}",
                option=where,
            )
        kwargs[key] = _coerce(value, hints[key], where)
    try:
        return cls(**kwargs)
    except TypeError as e:  # a required field is missing, e.g. a module without a name
        missing = [f.name for f in dataclasses.fields(cls) if f.name not in kwargs and f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING]
        raise ConfigError(f"option {prefix or 'settings'!r} needs {', '.join(missing) or str(e)}",
                          option=prefix or None) from None


def find_config_file(start: Path) -> Path | None:
    """Walk up from `start` to find `repobrief.toml` or a pyproject with `[tool.repobrief]`."""
    start = start.resolve()
    for folder in [start, *start.parents]:
        cand = folder / "repobrief.toml"
        if cand.is_file():
            return cand
        py = folder / "pyproject.toml"
        if py.is_file():
            try:
                tool = tomllib.loads(py.read_text(encoding="utf-8")).get("tool")
            except (tomllib.TOMLDecodeError, UnicodeDecodeError):
                continue
            if isinstance(tool, dict) and "repobrief" in tool:
                return py
    return None


def read_config_file(path: Path) -> dict:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"config file {str(path)!r} does not exist") from None
    except IsADirectoryError:
        raise ConfigError(f"config file {str(path)!r} is a folder", "give the path of a repobrief.toml file") from None
    except OSError as e:
        raise ConfigError(f"cannot read config file {str(path)!r}: {e.strerror}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
        raise ConfigError(f"config file {str(path)!r} is not valid TOML: {e}") from None
    if path.name == "pyproject.toml":
        tool = data.get("tool", {})
        ours = tool.get("repobrief", {}) if isinstance(tool, dict) else tool
        if not isinstance(ours, dict):
            raise ConfigError(f"config file {str(path)!r}: tool.repobrief must be a table ([tool.repobrief]), "
                              f"not {type(ours).__name__}")
        return ours
    return data


# Read by `repobrief publish` for the one target it posts to (flags win, then these,
# then a `[[publish]]` entry of the config file); not settings of their own.
PUBLISH_ENV = ("REPOBRIEF_PUBLISH_TARGET", "REPOBRIEF_PUBLISH_WEBHOOK", "REPOBRIEF_PUBLISH_SECRET", "REPOBRIEF_PUBLISH_LINK")

# REPOBRIEF_* variables that are not settings: where data and templates live.
NON_SETTING_ENV = {"REPOBRIEF_DATA_DIR", "REPOBRIEF_TEMPLATES", "REPOBRIEF_SHARED_DATA",
                   "REPOBRIEF_TEST_PG_URL", "REPOBRIEF_TEST_PG_DIR"}  # the last two: the PostgreSQL tests' server

# Environment variables that have a meaning outside repobrief too.
_FOREIGN_ENV = {
    "GITHUB_TOKEN": ("github", "token"),
    "GH_TOKEN": ("github", "token"),
    "OPENAI_API_KEY": ("llm", "api_key"),
    "OPENAI_BASE_URL": ("llm", "base_url"),
}


def _env_overrides(env: dict[str, str], origins: dict[str, str] | None = None) -> dict:
    """`REPOBRIEF_LANGUAGE=en`, `REPOBRIEF_LLM_MODEL=…`, `REPOBRIEF_GITHUB_URL=…`; each
    option's variable goes into `origins` (`threshold`: `REPOBRIEF_THRESHOLD`)."""
    out: dict = {}
    origins = {} if origins is None else origins
    for var, (section, key) in _FOREIGN_ENV.items():
        if env.get(var) and key not in out.get(section, {}):
            out.setdefault(section, {})[key] = env[var]
            origins[f"{section}.{key}"] = var
    sections = {f.name for f in dataclasses.fields(Settings) if dataclasses.is_dataclass(f.default_factory() if f.default_factory is not dataclasses.MISSING else None)}
    scalar = {f.name for f in dataclasses.fields(Settings)} - sections - {"modules", "themes", "labels", "publish"} - NOT_OPTIONS
    aliases = {"lang": "language", "tz": "timezone"}
    for var, value in env.items():
        if not var.startswith("REPOBRIEF_") or value == "" or var in PUBLISH_ENV or var in NON_SETTING_ENV:
            continue
        key = var[len("REPOBRIEF_"):].lower()
        key = aliases.get(key, key)
        head, _, rest = key.partition("_")
        fields = _section_fields(head) if head in sections else set()
        if key in scalar:
            out[key] = value
            origins[key] = var
        elif rest in fields:
            out.setdefault(head, {})[rest] = value  # the REPOBRIEF_ form wins over OPENAI_*/GITHUB_*
            origins[f"{head}.{rest}"] = var
        else:
            valid = sorted(f"REPOBRIEF_{s.upper()}" for s in scalar) if not fields else \
                sorted(f"REPOBRIEF_{head.upper()}_{f.upper()}" for f in fields)
            near = difflib.get_close_matches(var, valid, n=1)
            raise ConfigError(
                f"unknown environment variable {var}",
                f"did you mean {near[0]}?" if near else "see docs/configuration.md for the REPOBRIEF_* variables",
            )
    return out


def _section_fields(section: str) -> set[str]:
    """The options of a settings section (`llm` → model, base_url, …)."""
    f = next(f for f in dataclasses.fields(Settings) if f.name == section)
    return {g.name for g in dataclasses.fields(f.default_factory())}  # type: ignore[operator]


def _merge(base: dict, over: dict) -> dict:
    out = dict(base)
    for k, v in over.items():
        out[k] = _merge(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


def _check_shadowed(data: dict, over: dict, cls: type = Settings, prefix: str = "") -> None:
    """Check the type of each value of the file's `data` that the environment or a flag
    replaces (`over`): the file is broken all the same (`api_key = 12345`), and would
    fail the first run without that variable."""
    hints = _hints(cls)
    for key, value in over.items():
        if key not in data or key not in hints:
            continue
        where = f"{prefix}.{key}" if prefix else key
        if not isinstance(value, dict):
            _coerce(data[key], hints[key], where)
        elif isinstance(data[key], dict) and isinstance(hints[key], type) and dataclasses.is_dataclass(hints[key]):
            _check_shadowed(data[key], value, hints[key], where)


def load_settings(
    repo_path: str | Path | None = None,
    config_file: str | Path | None = None,
    overrides: dict | None = None,
    env: dict[str, str] | None = None,
) -> Settings:
    """Load settings for a repository: file, then environment, then `overrides` (flags)."""
    data: dict = {}
    source = ""
    path = Path(config_file) if config_file else (find_config_file(Path(repo_path)) if repo_path and Path(repo_path).exists() else None)
    if path is not None:
        data = read_config_file(path)
        source = str(path)
    from_env: dict[str, str] = {}  # option -> the variable that set it
    env_data = _env_overrides(dict(os.environ) if env is None else env, from_env)
    flags = {k: v for k, v in (overrides or {}).items() if v is not None}
    if data:
        try:
            _check_shadowed(data, _merge(env_data, flags))
        except ConfigError as e:
            raise ConfigError(f"{e.message} (in {source})", e.hint, option=e.option) from None
    data = _merge(_merge(data, env_data), flags)
    try:
        settings = _build(Settings, data)
        settings.source_file, settings.given = source, frozenset(data)
        return settings.validate()
    except ConfigError as e:
        raise _located(e, source, from_env, flags) from None


def _team_keys() -> set[str]:
    """Top-level keys of a team config (`repobrief run --config`) that repobrief.toml has not."""
    from .team import TeamSettings

    return {f.name for f in dataclasses.fields(TeamSettings)} - {f.name for f in dataclasses.fields(Settings)}


def _located(e: ConfigError, source: str, from_env: dict[str, str], flags: dict) -> ConfigError:
    """`e`, saying where its value came from: the variable that set it, or the file."""
    if e.option is None:
        return e
    option = re.sub(r"\[\d+\]", "", e.option)
    head, _, key = option.partition(".")
    if head in flags and (not key or not isinstance(flags[head], dict) or key in flags[head]):
        return e  # a flag: the command line names it (cli.options)
    hint = e.hint
    if option in from_env or head in from_env:
        where = f"set by {from_env.get(option) or from_env[head]}"
    elif source:
        where = f"in {source}"
        if e.message.startswith("unknown option") and head in _team_keys():
            hint = f"{source} looks like a team config: run it with `repobrief run --config {source}`"
    else:
        return e
    return ConfigError(f"{e.message} ({where})", hint, option=e.option)
