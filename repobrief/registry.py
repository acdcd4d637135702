"""Registries of pluggable backends: sources, engines, renderers, publishers.

The core looks backends up by name and never imports a concrete one. Built-ins
are listed as import paths so that a lookup imports only the backend it needs
(start-up time matters: a one-week report should take well under a second);
third parties add theirs through the entry-point groups `repobrief.sources`,
`repobrief.engines`, `repobrief.renderers`, `repobrief.publishers` and `repobrief.executors`, or by
calling `register` at import time.
"""

from __future__ import annotations

import difflib
import importlib
from typing import Any

from .errors import UsageError


class Registry:
    def __init__(self, kind: str, builtins: dict[str, str]) -> None:
        self.kind = kind
        self._builtins = tuple(builtins)
        self._paths = dict(builtins)
        self._loaded: dict[str, Any] = {}
        self._entry_points_read = False

    def register(self, name: str, obj: Any = None) -> Any:
        """Register `obj` under `name`; usable as a decorator."""

        def deco(o: Any) -> Any:
            self._loaded[name] = o
            return o

        return deco(obj) if obj is not None else deco

    def _read_entry_points(self) -> None:
        if self._entry_points_read:
            return
        self._entry_points_read = True
        from importlib.metadata import entry_points

        for ep in entry_points(group=f"repobrief.{self.kind}s"):
            self._paths.setdefault(ep.name, ep.value)

    def __contains__(self, name: str) -> bool:
        """Whether `name` is known; the installed packages' entry points (a scan costing
        ~50 ms of start-up) are read only for a name that is not built in."""
        if name in self._paths or name in self._loaded:
            return True
        self._read_entry_points()
        return name in self._paths

    def builtin_names(self) -> list[str]:
        """The names repobrief itself provides, in the order it lists them (no scan)."""
        return list(self._builtins)

    def names(self) -> list[str]:
        self._read_entry_points()
        return sorted(set(self._paths) | set(self._loaded))

    def get(self, name: str) -> Any:
        if name in self._loaded:
            return self._loaded[name]
        if name not in self._paths:
            self._read_entry_points()
        path = self._paths.get(name)
        if path is None:
            valid = self.names()
            near = difflib.get_close_matches(name, valid, n=1)
            hint = f"did you mean {near[0]!r}?" if near else None
            raise UsageError(f"unknown {self.kind} {name!r}; valid: {', '.join(valid)}", hint)
        module, _, attr = path.partition(":")
        obj = getattr(importlib.import_module(module), attr)
        self._loaded[name] = obj
        return obj


SOURCES = Registry(
    "source",
    {
        "git": "repobrief.sources.git:GitSource",
        "github": "repobrief.sources.github:GitHubSource",
    },
)

ENGINES = Registry(
    "engine",
    {
        "offline": "repobrief.engines.offline:OfflineEngine",
        "llm": "repobrief.engines.llm:LLMEngine",
    },
)

# Renderers are `(report) -> str` functions.
RENDERERS = Registry(
    "renderer",
    {
        "md": "repobrief.render.markdown:render",
        "json": "repobrief.render.json:render",
        "html": "repobrief.render.html:render",
        "feishu": "repobrief.render.cards:render_feishu",
        "lark": "repobrief.render.cards:render_lark",
        "slack": "repobrief.render.cards:render_slack",
        "dingtalk": "repobrief.render.cards:render_dingtalk",
        "wecom": "repobrief.render.cards:render_wecom",
    },
)

# Publishers are `repobrief.publish.base.Publisher` subclasses, one per webhook platform.
PUBLISHERS = Registry(
    "publisher",
    {
        "feishu": "repobrief.publish.feishu:FeishuPublisher",
        "lark": "repobrief.publish.feishu:LarkPublisher",
        "slack": "repobrief.publish.slack:SlackPublisher",
        "dingtalk": "repobrief.publish.dingtalk:DingTalkPublisher",
        "wecom": "repobrief.publish.wecom:WeComPublisher",
        "webhook": "repobrief.publish.webhook:WebhookPublisher",
    },
)

# Executors run `repobrief run`'s repository jobs (`repobrief.executors.Executor` subclasses).
EXECUTORS = Registry(
    "executor",
    {
        "local": "repobrief.executors:LocalExecutor",
        "threads": "repobrief.executors:ThreadExecutor",
        "serial": "repobrief.executors:SerialExecutor",
        "ray": "repobrief.executors_ray:RayExecutor",  # needs the `ray` extra
    },
)
