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
        bytecode_cache=_bytecode_cache(jinja2, autoescape),
        autoescape=autoescape,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        undefined=jinja2.StrictUndefined,
        finalize=_inert,
    )


def _inert(value):
    """Each `{{ }}` value that is text, without control or bidirectional characters: PR
    text, and the paths and the module, theme and core-path names taken from folders,
    could otherwise move a line or reorder what a terminal or browser shows (`inert_text`).
    Markup is the renderer's own, built from text it cleaned."""
    if type(value) is str:
        from ..models import inert_text

        return inert_text(value)
    return value


# What the compiled code depends on besides a template's source, which is all jinja2's
# cache checks: autoescape and `finalize` are compiled in. Change it with the options.
_COMPILED_WITH = "inert1"


def _bytecode_cache(jinja2, autoescape: bool):
    """Compiled templates cached under the user cache dir: compiling costs more than
    rendering, and a one-week report has a one-second budget. Keyed by the options
    compiled in as well: code compiled without `_inert` would print what it removes."""
    from .. import __version__
    from ..output import user_cache_folder

    folder = os.path.join(user_cache_folder(), "templates")
    try:
        os.makedirs(folder, exist_ok=True)
    except OSError:
        return None  # read-only home: compile every time
    key = f"{__version__}_{_COMPILED_WITH}_{'html' if autoescape else 'text'}"  # no hashlib: it costs an import
    return jinja2.FileSystemBytecodeCache(folder, f"__jinja2_{key}_%s.cache")


def template_environment(autoescape: bool = False):
    """The Jinja2 environment for templates (override folder first, then package data)."""
    return _environment(autoescape, os.environ.get("REPOBRIEF_TEMPLATES") or None)
