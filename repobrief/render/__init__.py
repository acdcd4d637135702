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
        bytecode_cache=_bytecode_cache(jinja2),
        autoescape=autoescape,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        undefined=jinja2.StrictUndefined,
    )


def _bytecode_cache(jinja2):
    """Compiled templates cached under the user cache dir: compiling costs more than
    rendering, and a one-week report has a one-second budget."""
    from ..output import user_cache_folder

    folder = os.path.join(user_cache_folder(), "templates")
    try:
        os.makedirs(folder, exist_ok=True)
    except OSError:
        return None  # read-only home: compile every time
    return jinja2.FileSystemBytecodeCache(folder)


def template_environment(autoescape: bool = False):
    """The Jinja2 environment for templates (override folder first, then package data)."""
    return _environment(autoescape, os.environ.get("REPOBRIEF_TEMPLATES") or None)
