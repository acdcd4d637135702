"""Renderers: pure `(report) -> str` functions, one module per format, looked up
in `repobrief.registry.RENDERERS`. Templates are package data in
`repobrief/templates/` and can be overridden with `REPOBRIEF_TEMPLATES` (a
folder searched first)."""

from __future__ import annotations

import os
from functools import cache


@cache
def _environment(autoescape: bool, override: str | None):
    import jinja2

    loaders: list = []
    if override:
        loaders.append(jinja2.FileSystemLoader(override))
    loaders.append(jinja2.PackageLoader("repobrief", "templates"))
    return jinja2.Environment(
        loader=jinja2.ChoiceLoader(loaders),
        autoescape=autoescape,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        undefined=jinja2.StrictUndefined,
    )


def template_environment(autoescape: bool = False):
    """The Jinja2 environment for templates (override folder first, then package data)."""
    return _environment(autoescape, os.environ.get("REPOBRIEF_TEMPLATES") or None)
