"""repobrief: a week of merged pull requests, turned into the weekly report a
busy team reads (zh/en; Markdown, HTML, JSON, chat cards).

    from repobrief import load_settings, parse_week, parse_timezone, generate_report, render_report
    settings = load_settings("path/to/clone", overrides={"language": "en"})
    window = parse_week("2026-W26", parse_timezone("Asia/Shanghai"))
    report = generate_report("path/to/clone", settings, window)
    print(render_report(report, "md"))

Names are imported lazily so that `import repobrief` stays cheap.
"""

from __future__ import annotations

__version__ = "0.1.0"

_API = {
    "generate_report": "repobrief.pipeline",
    "generate_reports": "repobrief.pipeline",
    "render_report": "repobrief.pipeline",
    "output_name": "repobrief.pipeline",
    "load_settings": "repobrief.config",
    "Settings": "repobrief.config",
    "parse_week": "repobrief.window",
    "parse_timezone": "repobrief.window",
    "resolve_window": "repobrief.window",
    "Window": "repobrief.window",
    "Report": "repobrief.models",
    "PullRequest": "repobrief.models",
    "PRAnalysis": "repobrief.models",
    "report_to_dict": "repobrief.serialize",
    "report_from_dict": "repobrief.serialize",
    "RepobriefError": "repobrief.errors",
    "load_team": "repobrief.team",
    "plan_jobs": "repobrief.team",
    "run_jobs": "repobrief.team",
    "build_digest": "repobrief.digest",
    "render_digest_md": "repobrief.digest",
    "export_requests": "repobrief.batch",
    "export_team": "repobrief.batch",
    "import_results": "repobrief.batch",
    "BatchExport": "repobrief.batch",
    "SOURCES": "repobrief.registry",
    "ENGINES": "repobrief.registry",
    "RENDERERS": "repobrief.registry",
}

__all__ = sorted(_API) + ["__version__"]


def __getattr__(name: str):
    module = _API.get(name)
    if module is None:
        raise AttributeError(f"module 'repobrief' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
